"""Converge, then extrapolate: the held-out check that stops a run (chapter 13, take four).

A model that has not learned its task at its training length says nothing about how it
extrapolates; one that is still learning shows how fast it learns, not what it cannot do. So
every ``check_every`` steps the trainer asks a :class:`Checker`: how many answers of
``check_sequences`` held-out sequences of the config's ``check_task`` (the positional task,
or the rebinding one in the ``rebinding`` preset), laid out **as in training** (pairs in the
first half, queries in the second, :func:`posenc.retrieval.training_batch`), does the model
get right? The run stops at the first check at or above ``stop_accuracy``; that check's step
is the run's **steps to learn**. Each check also records the heads' previous-token and
induction scores on repeated random tokens, and the same two steps on the check sequences
themselves (value to its key, query to its answer's value; :mod:`posenc.heads`), so the
curves show when the binding's two steps form.

The check sequences come from the held-out text with a fixed seed (:data:`CHECK_SEED`): the
same for every method, seed and check.
"""

from __future__ import annotations

import numpy as np
import torch

from ... import heads, retrieval
from .config import ExtrapolationConfig
from .evaluation import rows_per_pass

__all__ = ["CHECK_SEED", "HEAD_SCORES", "Checker", "answers_right"]

#: The seed of the check sequences (and of the head-score sequences): never a training seed's
#: stream (those are ``[seed, 1 + task index]``, :func:`.training._train_steps`).
CHECK_SEED = 20_240_613

#: The head scores each check records, per layer and head (:mod:`posenc.heads`): on repeated
#: random tokens (:func:`~posenc.heads.head_scores`), then on the check sequences themselves
#: (:func:`~posenc.heads.task_head_scores`).
HEAD_SCORES = ("previous_token", "induction", "value_to_key", "query_to_value")


@torch.no_grad()
def answers_right(model, batch: retrieval.RetrievalBatch, batch_size: int = 64
                  ) -> tuple[int, int]:
    """``(right, scored)``: how many scored answers of ``batch`` the model's most likely
    next byte gets right, and how many there are (every query of every sequence)."""
    right, scored = 0, 0
    for i in range(0, batch.inputs.shape[0], batch_size):
        logits = model(batch.inputs[i:i + batch_size])  # [b, length, 256]
        targets = batch.targets[i:i + batch_size]
        answered = targets != retrieval.IGNORE
        right += int((logits.argmax(-1) == targets)[answered].sum())
        scored += int(answered.sum())
    return right, scored


class Checker:
    """The held-out check of one training run, on the config's ``check_task`` (``check(model,
    step)`` → stop?). :meth:`record` gives its curves for the run's history: ``check_step``,
    ``check_right`` (answers right of ``check_scored``), ``previous_token``, ``induction``,
    ``value_to_key`` and ``query_to_value`` (per check, per layer, per head; ``None`` for a
    recurrent layer) and ``steps_to_learn`` (the first check at ``stop_accuracy``, ``None``
    if none)."""

    def __init__(self, config: ExtrapolationConfig, heldout: np.ndarray):
        self.config = config
        self.batch = retrieval.training_batch(
            heldout, config.check_sequences, config.train_length,
            np.random.default_rng(CHECK_SEED), num_pairs=config.retrieval_pairs,
            num_queries=config.retrieval_queries, task=config.check_task)
        self.period = config.train_length // 2  # two copies fill one training window
        self.steps, self.right = [], []
        self.heads = {key: [] for key in HEAD_SCORES}  # [check][layer][head] each
        self.scored = int((self.batch.targets != retrieval.IGNORE).sum())
        self.steps_to_learn = None

    def __call__(self, model, step: int) -> bool:
        right, _ = answers_right(model, self.batch, rows_per_pass(
            self.config.train_length, self.config.eval_batch_size * 4))
        scores = {**heads.head_scores(model, self.period, seed=CHECK_SEED),
                  **heads.task_head_scores(model, self.batch)}
        self.steps.append(step)
        self.right.append(right)
        for key in HEAD_SCORES:
            self.heads[key].append(scores[key])
        stop = self.config.stop_accuracy
        if stop and right >= stop * self.scored:
            self.steps_to_learn = step
            return True
        return False

    def record(self) -> dict:
        return {"check_step": list(self.steps), "check_right": list(self.right),
                "check_scored": self.scored, **self.heads, "steps_to_learn": self.steps_to_learn}
