"""A learned position table, trained for a few seconds, and what it learned.

Chapter 3 trains a tiny byte-level :class:`~posenc.model.TinyLM` with a learned table
(``position="learned"``) on the course's own corpus and looks at the table:
:func:`train_learned_table` does the training, :func:`cosine_similarity_matrix` and
:func:`principal_components` the two views of the result.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ._validation import check_float, check_int
from .data import random_windows
from .model import TinyLM, TinyLMConfig


def train_learned_table(train_data: np.ndarray, *, steps: int = 600, length: int = 64,
                        d_model: int = 32, batch_size: int = 16, learning_rate: float = 3e-3,
                        seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """Train a 2-layer :class:`TinyLM` with a ``length``-row learned table.

    ``train_data`` is a uint8 array of bytes (e.g. ``load_stdlib_corpus().train``).
    Batches are random windows of ``length`` bytes drawn from a generator seeded with
    ``seed``; AdamW at a constant ``learning_rate``. Runs on however many threads torch
    is set to (one thread makes it deterministic on a given machine).

    Returns ``(initial, trained, losses)``: the table before and after training, both
    float64 ``[length, d_model]``, and the training loss of every step.
    """
    steps = check_int("steps", steps)
    length, d_model = check_int("length", length, minimum=2), check_int("d_model", d_model)
    learning_rate = check_float("learning_rate", learning_rate, greater_than=0.0)
    torch.manual_seed(check_int("seed", seed, minimum=0))
    config = TinyLMConfig(position="learned", options={"max_positions": length},
                          d_model=d_model, num_heads=2, num_layers=2, d_ff=4 * d_model)
    model = TinyLM(config)
    initial = model.position_embedding.weight.detach().double().numpy().copy()
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, betas=(0.9, 0.95),
                                  weight_decay=0.0)
    batches = torch.Generator().manual_seed(seed)
    losses = []
    model.train()
    for _ in range(steps):
        inputs, targets = random_windows(train_data, batch_size, length, batches)
        logits = model(inputs)  # [batch, length, 256]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    trained = model.position_embedding.weight.detach().double().numpy().copy()
    return initial, trained, losses


def _as_table(table) -> np.ndarray:
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or min(table.shape) < 2:
        raise ValueError(f"table must be a 2-D array [positions, d_model] with at least 2 rows "
                         f"and 2 columns, got shape {table.shape}")
    return table


def cosine_similarity_matrix(table) -> np.ndarray:
    """``S[p, q]``: the cosine of the angle between rows ``p`` and ``q``, ``[L, L]``."""
    table = _as_table(table)
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("table has an all-zero row; its cosine similarity is undefined")
    unit = table / norms
    return unit @ unit.T


def principal_components(table, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """The first ``k`` principal components of the rows of ``table``.

    Returns ``(scores, explained)``: ``scores[p, c]`` is row ``p`` (centred) projected on
    component ``c``, ``[L, k]``, and ``explained[c]`` the share of the total variance that
    component ``c`` carries. The sign of each component is fixed so that its score rises
    from the first row to the last (a principal component's sign is arbitrary).
    """
    table = _as_table(table)
    k = check_int("k", k)
    if k > min(table.shape):
        raise ValueError(f"k must be at most min(table.shape) = {min(table.shape)}, got {k}")
    centred = table - table.mean(axis=0)
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    scores = centred @ vt[:k].T
    scores *= np.where(scores[-1] >= scores[0], 1.0, -1.0)
    explained = singular[:k] ** 2 / np.sum(singular**2)
    return scores, explained
