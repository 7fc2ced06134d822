"""Evaluation: the held-out loss at every position and length, and the retrieval task's
accuracy, of a trained model (or an evaluation-time variant of it).
"""

from __future__ import annotations

import time

import numpy as np
import torch
import torch.nn.functional as F

from ... import retrieval
from ..._validation import check_int, to_numpy
from ...data import contiguous_windows
from ...model import TinyLM
from .config import (
    ExtrapolationConfig,
    task_key,
)

__all__ = ["SCORES_PER_PASS", "retrieval_accuracy", "evaluation_sequences", "reader_accuracy",
           "per_position_loss", "rows_per_pass"]

#: The most ``rows x length^2`` attention scores per head one evaluation pass computes. The
#: runner evaluates on the CPU, where a method that builds several ``[rows, heads, L, L]``
#: tensors per layer (CoPE's gates, positions and interpolation; stick-breaking's log-space
#: stick; an explicit bias) runs 1.5-3.5x faster at 8x the training length when they stay
#: in cache: CoPE at 512 tokens costs 203 ms per sequence in passes of 16 and 78 ms in
#: passes of 2 (``benchmarks/bench_eval_rows.py``). Each sequence's logits do not depend on
#: the pass it is in (tested), so the numbers do not change, only the time.
SCORES_PER_PASS = 2 ** 16


def rows_per_pass(length: int, batch_size: int) -> int:
    """Sequences per evaluation pass at ``length``: ``batch_size``, fewer where ``rows x
    length^2`` would pass :data:`SCORES_PER_PASS`, and never fewer than 2 (a method whose
    position tensor is the same for every row, Shaw's ``[L, L, head_dim]`` table, builds it
    once per pass)."""
    length = check_int("length", length)
    batch_size = check_int("batch_size", batch_size)
    return min(batch_size, max(2, SCORES_PER_PASS // length ** 2))


def evaluation_sequences(config: ExtrapolationConfig, text: np.ndarray, length: int,
                         task: str = "content", distances=None):
    """``(distances, batch)``: the evaluation sequences of ``task`` at ``length`` that
    :func:`retrieval_accuracy` scores (``config.retrieval_distances`` distances spread over
    the length unless ``distances`` are given, ``retrieval_per_distance`` sequences each,
    seed ``length``), so a reader that is not a model is scored on the same ones."""
    if distances is None:
        distances = retrieval.evaluation_distances(length, config.retrieval_distances)
    return distances, retrieval.evaluation_batch(
        text, length, distances, config.retrieval_per_distance, seed=length,
        num_pairs=config.retrieval_pairs, task=task)


def reader_accuracy(reader, config: ExtrapolationConfig, text: np.ndarray, task: str
                    ) -> list[float]:
    """The share of answers ``reader`` (``reader(row, t) -> byte``: an oracle of
    :mod:`posenc.retrieval` or :func:`posenc.order_circuit.circuit_answer`) gets right on
    the sequences :func:`retrieval_accuracy` scores, at each of ``config.eval_lengths``."""
    return [retrieval.oracle_accuracy(evaluation_sequences(config, text, length, task)[1],
                                      reader) for length in config.eval_lengths]


@torch.no_grad()
def retrieval_accuracy(model: TinyLM, config: ExtrapolationConfig, text: np.ndarray,
                       length: int, task: str = "content", distances=None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy of a retrieval task (:data:`posenc.retrieval.TASKS`) at ``length``, per
    answer distance.

    ``config.retrieval_distances`` distances spread over the length
    (:func:`posenc.retrieval.evaluation_distances`), ``retrieval_per_distance`` sequences
    each, drawn from ``text`` with the seed ``length`` (the same sequences for every
    method and seed), or the given ``distances`` (the position-by-distance grid: a fixed
    distance, the query at the end of each length). A sequence counts as right when the
    most likely next byte after the query is the value. Returns ``(distances,
    accuracy)``, both ``[distances]``.
    """
    distances, batch = evaluation_sequences(config, text, length, task, distances)
    right, rows = [], rows_per_pass(length, config.eval_batch_size)
    for i in range(0, batch.inputs.shape[0], rows):
        logits = model(batch.inputs[i:i + rows])[:, -1]  # [rows, 256]
        right.append(logits.argmax(-1) == batch.targets[i:i + rows, -1])
    accuracy = torch.cat(right).double().view(len(distances), -1).mean(1)  # [distances]
    return distances, to_numpy(accuracy)


@torch.no_grad()
def per_position_loss(model: TinyLM, inputs: torch.Tensor, targets: torch.Tensor,
                      batch_size: int = 16) -> np.ndarray:
    """Cross-entropy (nats) at each position, averaged over windows, in passes of
    :func:`rows_per_pass` windows (at most ``batch_size``).

    Shape: ``inputs``/``targets`` int64 ``[windows, length]``; returns float64 ``[length]``.
    """
    total = torch.zeros(inputs.shape[1], dtype=torch.float64)
    batch_size = rows_per_pass(inputs.shape[1], batch_size)
    for i in range(0, inputs.shape[0], batch_size):
        logits = model(inputs[i:i + batch_size])  # [b, length, vocab]
        loss = F.cross_entropy(logits.transpose(1, 2), targets[i:i + batch_size],
                               reduction="none")  # [b, length]
        total += loss.double().sum(0)
    return to_numpy(total / inputs.shape[0])


def _evaluate(model: TinyLM, config: ExtrapolationConfig, heldout: np.ndarray, *,
              adapt=None, may_be_undefined: bool = False) -> dict:
    """Loss at every evaluation length, the per-position curve at the longest defined
    length and, when the config has the retrieval task, its accuracy per length and
    distance. Entries are ``None`` where a method whose experiment entry has an
    ``undefined_note`` (:mod:`.methods`) cannot run (its model raises ``ValueError``, as a
    learned table does past its last row). ``adapt(model, train_length, eval_length)``
    (a registered evaluation-time variant, :class:`.methods.Variant`) gives the model
    evaluated at each length."""
    start = time.perf_counter()
    tasks = config.retrieval_tasks if config.retrieval else ()
    losses, curve = [], None
    accuracy = {task: [] for task in tasks}
    distances = {task: [] for task in tasks}
    grid = []  # [length][grid distance]: the positional task, query at the end
    for length in config.eval_lengths:
        evaluated = model if adapt is None else adapt(model, config.train_length, length)
        inputs, targets = contiguous_windows(heldout, length, config.eval_tokens)
        try:
            values = per_position_loss(evaluated, inputs, targets, config.eval_batch_size)
        except ValueError:
            if not may_be_undefined:
                raise
            losses.append(None)  # not defined at this length
            for task in tasks:
                accuracy[task].append(None)
                distances[task].append(None)
            grid.append(None)
            continue
        curve = values
        losses.append(float(curve.mean()))
        for task in tasks:
            at, right = retrieval_accuracy(evaluated, config, heldout, length, task)
            distances[task].append(at.tolist())
            accuracy[task].append(right)
        if config.grid_distances:
            grid.append(retrieval_accuracy(evaluated, config, heldout, length, "positional",
                                           distances=config.grid_distances)[1])
    result = {"loss": losses, "per_position_loss": curve}
    if config.grid_distances:
        result[task_key("positional", "grid")] = grid
    for task in tasks:
        result[task_key(task, "distances")] = distances[task]
        result[task_key(task, "by_distance")] = accuracy[task]
        result[task_key(task, "accuracy")] = [None if a is None else float(np.mean(a))
                                              for a in accuracy[task]]
    result["eval_time_s"] = time.perf_counter() - start
    return result
