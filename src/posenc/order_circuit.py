"""Order without position: a hand-built two-layer causal attention that solves the
positional retrieval task with no position signal at all (numpy only).

Chapter 13's positional task (:mod:`posenc.retrieval`, ``task="positional"``) binds a value
to a key only by where it sits, right after its key. That needs ORDER, and a causal
attention stack has order without any position encoding: each position sees only its
prefix. Keys within a sequence are distinct, so every value can be labelled by the set of
keys at or before it, with no offset or distance involved:

* **layer 1** (:func:`prefix_key_average`): every position averages the one-hot identity
  of the key bytes in its causal prefix (a head whose scores favour key bytes by
  ``margin`` and are otherwise uniform). The value of the ``j``-th pair, in order of
  position, gets ``(e_{k1} + ... + e_{kj}) / j``.
* **layer 2** (:func:`query_attention`, :func:`circuit_answer`): the query, a key ``k*``,
  scores every value byte by ``beta`` times its layer-1 weight on ``k*``. That weight is
  0 before ``k*``'s pair and ``1 / j`` after it, largest at ``k*``'s own value, where
  ``k*`` first appears; the head copies the value it attends to.

Nothing here reads a position, an offset or a distance: only the causal prefix (a cumulative
sum) carries order. It scores 100 % at 1x..8x on chapter 13's evaluation batches, and
chance once the context before the query is shuffled (:func:`shuffled_context`; tested).
It is the expert review of 2026-11-29, finding 13.2 and appendix A; that a causal model
without position encoding (NoPE) recovers order from the mask is Haviv et al. (2022) and
Kazemnejad et al. (2023).

What the circuit reads is each key's *share* of a value's prefix, not which of two bindings
came later. On ``task="rebinding"`` (a key bound twice, the query asking for the later
binding) the query's key has share ``1 / n1`` at its stale value and ``2 / n2`` at its
latest, where ``n1`` and ``n2`` count the key bytes up to each of the two: the circuit
answers the latest binding only when ``n2 < 2 n1``, whatever the distance.

Shapes: ``row`` is one sequence of byte ids, int ``[n]`` (numpy or torch); layer 1 gives
float64 ``[n, 8]`` (one column per key byte); layer 2 at query ``t`` gives float64
``[t + 1]``. :func:`circuit_answer` has the signature of the oracles of
:mod:`posenc.retrieval`, so ``retrieval.oracle_accuracy(batch, circuit_answer)`` scores it.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_float, check_int, to_numpy

__all__ = [
    "KEY_BYTES",
    "FIRST_VALUE",
    "key_one_hots",
    "prefix_key_average",
    "query_attention",
    "circuit_answer",
    "shuffled_context",
]

#: The 8 key bytes, as :data:`posenc.retrieval.KEY_BYTES` (repeated here so that this module
#: stays numpy-only: :mod:`posenc.retrieval` builds torch batches; a test checks they agree).
KEY_BYTES = np.arange(128, 136, dtype=np.int64)
#: The first value byte: values are 136..255, as :data:`posenc.retrieval.VALUE_BYTES`.
FIRST_VALUE = 136


def _check_row(row) -> np.ndarray:
    row = np.asarray(to_numpy(row))
    if row.ndim != 1 or row.size == 0 or not np.issubdtype(row.dtype, np.integer):
        raise TypeError(f"row must be a non-empty 1-D integer array of byte ids, got "
                        f"{row.dtype} {row.shape}")
    if row.min() < 0 or row.max() > 255:
        raise ValueError(f"row must hold byte ids 0..255, got {int(row.min())}.."
                         f"{int(row.max())}")
    return row.astype(np.int64)


def _check_t(t, row: np.ndarray) -> int:
    t = check_int("t", t, minimum=0)
    if t >= len(row):
        raise ValueError(f"t must be a position of row, 0..{len(row) - 1}, got {t}")
    if row[t] not in KEY_BYTES:
        raise ValueError(f"t must be a query position: row[t] = {int(row[t])} is not a key "
                         f"byte ({KEY_BYTES[0]}..{KEY_BYTES[-1]})")
    return t


def _softmax(scores: np.ndarray) -> np.ndarray:
    weights = np.exp(scores - scores.max())
    return weights / weights.sum()


def key_one_hots(row) -> np.ndarray:
    """What layer 1's head reads at each position: the one-hot identity of a key byte, 0
    for every other byte. ``row`` int ``[n]``; returns float64 ``[n, 8]``."""
    row = _check_row(row)
    is_key = np.isin(row, KEY_BYTES)
    onehot = np.zeros((len(row), len(KEY_BYTES)))
    onehot[np.nonzero(is_key)[0], row[is_key] - KEY_BYTES[0]] = 1.0
    return onehot


def prefix_key_average(row, margin: float = 12.0) -> np.ndarray:
    """Layer 1: at every position ``i``, causal attention over ``0..i`` whose score is
    ``margin`` at a key byte and 0 elsewhere (no position, offset or distance enters),
    averaging :func:`key_one_hots`.

    Row ``i`` is ``sum_j w_j onehot_j / sum_j w_j`` over ``j <= i`` with ``w_j =
    exp(margin)`` at a key byte and 1 elsewhere: for a large ``margin``, the share of each
    key among the key bytes of the prefix (0 before the first key). ``row`` int ``[n]``;
    returns float64 ``[n, 8]``; ``margin >= 0`` (0: every byte weighs the same).
    """
    row = _check_row(row)
    margin = check_float("margin", margin, at_least=0.0)
    onehot = key_one_hots(row)
    is_key = onehot.any(1)
    # exp(margin * is_key) / exp(margin): the same softmax weights, without overflow
    weights = np.exp(-margin * ~is_key)
    return np.cumsum(onehot * weights[:, None], 0) / np.cumsum(weights)[:, None]


def query_attention(row, t: int, margin: float = 12.0, beta: float = 200.0) -> np.ndarray:
    """Layer 2 at the query ``t``: its causal attention weights over positions ``0..t``.

    The query's key ``k* = row[t]`` scores a value byte (136..255) at ``j`` by ``beta``
    times layer 1's weight on ``k*`` there (:func:`prefix_key_average`, same ``margin``),
    and every other byte by ``-margin`` (the head favours value bytes as layer 1's favours
    keys). Returns float64 ``[t + 1]``, summing to 1. ``beta >= 0`` (0: every value byte
    weighs the same, an order-blind head).
    """
    row = _check_row(row)
    t = _check_t(t, row)
    margin = check_float("margin", margin, at_least=0.0)
    beta = check_float("beta", beta, at_least=0.0)
    share = prefix_key_average(row[:t + 1], margin)[:, row[t] - KEY_BYTES[0]]  # [t + 1]
    scores = np.where(row[:t + 1] >= FIRST_VALUE, beta * share, -margin)
    return _softmax(scores)


def circuit_answer(row, t: int, margin: float = 12.0, beta: float = 200.0) -> int:
    """The circuit's answer at the query ``t``: the value byte that layer 2's attention
    (:func:`query_attention`) puts the most weight on, summed over the positions where it
    occurs (the head copies what it attends to; only value bytes are read out).

    Same call as :func:`posenc.retrieval.order_aware_answer`, so
    ``oracle_accuracy(batch, circuit_answer)`` works; ``-1`` when no value byte comes
    before ``t``.
    """
    row = _check_row(row)
    weights = query_attention(row, t, margin, beta)
    copied = np.zeros(256)
    np.add.at(copied, row[:t + 1], weights)
    copied[:FIRST_VALUE] = 0.0  # read out value bytes only
    return int(copied.argmax()) if copied.any() else -1


def shuffled_context(row, t: int, rng: np.random.Generator) -> np.ndarray:
    """The control: a copy of ``row`` with the bytes before the query ``t`` in a random
    order (the query and everything after it kept). The multiset is unchanged, the order
    gone; on the positional task the circuit then falls to chance, ``1 / num_pairs``.
    ``row`` int ``[n]``; returns int64 ``[n]``."""
    row = _check_row(row)
    t = _check_t(t, row)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    out = row.copy()
    out[:t] = rng.permutation(row[:t])
    return out
