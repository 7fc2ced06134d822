"""Reading a trained model's heads: the previous-token head and the induction head.

Olsson et al. (2022), "In-context learning and induction heads", found a two-step circuit in
2-layer attention-only models: a **previous-token head** copies into each position the token
one position back, and an **induction head** in a later layer, at a query token ``A``,
attends to the token right *after* ``A``'s earlier occurrence (``... A B ... A`` → look at
``B``) and copies it. The course's positional retrieval task (:mod:`posenc.retrieval`) needs
exactly that binding: a value belongs to the key one byte before it.

Both are measured from the weights a layer really uses
(:meth:`posenc.nn.MultiHeadSelfAttention.attention_weights`), as in Olsson et al.:

* previous-token score of a head: its mean weight on key ``i - 1`` from query ``i``;
* induction score: on a random sequence of ``period`` tokens repeated twice, the mean
  weight of the second copy's query ``i`` on key ``i - period + 1``, the token after the
  query's earlier occurrence.

A uniform causal head scores about ``1/i`` on both: near 0 for long sequences. A head
that does the step scores near 1.

The same two steps read on the positional task's own sequences (:func:`task_head_scores`),
where the binding is what the task needs:

* value-to-key score of a head: its mean weight from each value byte on the key byte
  right before it (the previous-token step where it matters: it marks a value with its
  key);
* query-to-value score: its mean weight from each query key on the value its answer must
  copy, the byte after that key's earlier occurrence (the induction step).
"""

from __future__ import annotations

import numpy as np
import torch

from ._validation import check_int, to_numpy
from .retrieval import VALUE_BYTES

__all__ = ["attention_maps", "previous_token_scores", "induction_scores",
           "repeated_random_tokens", "head_scores", "value_to_key_scores",
           "query_to_value_scores", "task_head_scores"]


@torch.no_grad()
def attention_maps(model, tokens: torch.Tensor) -> list[torch.Tensor | None]:
    """The attention weights of every layer of a :class:`~posenc.model.TinyLM` for
    ``tokens`` int64 ``[batch, seq]``: one ``[batch, heads, seq, seq]`` (query, key) tensor
    per block, bottom first, ``None`` for a recurrent block (it has no weights to show).

    Each block's attention input is caught on the way through the model's own forward
    (a forward pre-hook), then its weights are computed from that input."""
    inputs: dict[int, torch.Tensor] = {}
    handles = [block.attn.register_forward_pre_hook(
        lambda module, args, i=i: inputs.__setitem__(i, args[0]))
        for i, block in enumerate(model.blocks) if block.attn is not None]
    try:
        model(tokens)
    finally:
        for handle in handles:
            handle.remove()
    return [None if block.attn is None else block.attn.attention_weights(inputs[i])
            for i, block in enumerate(model.blocks)]


def _check_weights(weights) -> torch.Tensor:
    if not isinstance(weights, torch.Tensor) or weights.ndim != 4 \
            or weights.shape[-1] != weights.shape[-2]:
        shape = tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights)
        raise ValueError(f"weights must be a tensor [batch, heads, seq, seq], got {shape}")
    return weights


def previous_token_scores(weights: torch.Tensor) -> np.ndarray:
    """Each head's mean weight from query ``i`` on key ``i - 1`` (queries ``1 .. seq-1``).

    ``weights``: ``[batch, heads, seq, seq]``; returns float64 ``[heads]``."""
    weights = _check_weights(weights)
    if weights.shape[-1] < 2:
        raise ValueError("weights need seq >= 2 for a previous token")
    diagonal = torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1)  # [b, h, seq-1]
    return to_numpy(diagonal.double().mean(dim=(0, 2)))


def induction_scores(weights: torch.Tensor, period: int) -> np.ndarray:
    """Each head's mean weight from query ``i`` of the second copy on key ``i - period + 1``,
    the token after the earlier occurrence of the query's token, for sequences that repeat
    a random block of ``period`` tokens (:func:`repeated_random_tokens`).

    ``weights``: ``[batch, heads, seq, seq]`` with ``seq >= period + 1``; returns float64
    ``[heads]``."""
    weights = _check_weights(weights)
    seq = weights.shape[-1]
    period = check_int("period", period, minimum=2)
    if seq < period + 1:
        raise ValueError(f"period must be at most seq - 1 = {seq - 1}, got {period}")
    # query i in period .. seq-1 looks at key i - period + 1
    diagonal = torch.diagonal(weights, offset=-(period - 1), dim1=-2, dim2=-1)
    return to_numpy(diagonal[..., 1:].double().mean(dim=(0, 2)))  # from query `period` on


def repeated_random_tokens(batch: int, period: int, seed: int, *,
                           alphabet: int = 128) -> torch.Tensor:
    """``batch`` sequences of ``2 * period`` tokens: ``period`` random tokens (no token
    twice in a block, so each query's earlier occurrence is unique) then the same again.

    Tokens are drawn from ``0 .. alphabet-1`` (128: the bytes of the course's text, below
    the retrieval task's keys and values). Returns int64 ``[batch, 2 * period]``."""
    batch, period = check_int("batch", batch), check_int("period", period, minimum=2)
    alphabet = check_int("alphabet", alphabet, minimum=2)
    check_int("seed", seed, minimum=0)
    if period > alphabet:
        raise ValueError(f"period must be at most alphabet = {alphabet}, got {period}")
    rng = np.random.default_rng(seed)
    block = np.stack([rng.permutation(alphabet)[:period] for _ in range(batch)])
    return torch.from_numpy(np.concatenate([block, block], axis=1).astype(np.int64))


def head_scores(model, period: int, *, batch: int = 16, seed: int = 0) -> dict:
    """Both scores for every attention layer of ``model`` on :func:`repeated_random_tokens`:
    ``{"previous_token": [[per head] per layer], "induction": [...]}``, ``None`` for a
    recurrent layer. The same sequences for every model (``seed``)."""
    tokens = repeated_random_tokens(batch, period, seed)
    previous, induction = [], []
    for weights in attention_maps(model, tokens):
        previous.append(None if weights is None else previous_token_scores(weights).tolist())
        induction.append(None if weights is None
                         else induction_scores(weights, period).tolist())
    return {"previous_token": previous, "induction": induction}


def _check_task_weights(weights, batch) -> torch.Tensor:
    weights = _check_weights(weights)
    if (weights.shape[0], weights.shape[-1]) != tuple(batch.inputs.shape):
        raise ValueError(f"weights {tuple(weights.shape)} do not belong to inputs "
                         f"{tuple(batch.inputs.shape)} ([batch, heads, seq, seq])")
    return weights


def _mean_at(weights: torch.Tensor, where: torch.Tensor, offset: torch.Tensor) -> np.ndarray:
    """Each head's mean weight from query ``i`` on key ``i - offset[b, i]`` over the
    ``[batch, seq]`` positions ``where``: float64 ``[heads]``."""
    b, i = torch.nonzero(where, as_tuple=True)
    if b.numel() == 0:
        raise ValueError("no position to score: the batch has none of the bytes asked for")
    j = i - offset[b, i]
    if torch.any(j < 0):
        raise ValueError("an offset reaches before the start of its sequence")
    picked = weights[b, :, i, j]  # [positions, heads]
    return to_numpy(picked.double().mean(dim=0))


def value_to_key_scores(weights: torch.Tensor, batch) -> np.ndarray:
    """Each head's mean weight from every value byte of a retrieval ``batch``
    (:class:`posenc.retrieval.RetrievalBatch`, values 136..255) on the byte before it, its
    key. ``weights``: ``[batch, heads, seq, seq]`` for ``batch.inputs``; float64 ``[heads]``."""
    weights = _check_task_weights(weights, batch)
    where = batch.inputs >= int(VALUE_BYTES.min())
    where[:, 0] = False  # a value at 0 has no key before it (never written there)
    return _mean_at(weights, where, torch.ones_like(batch.inputs))


def query_to_value_scores(weights: torch.Tensor, batch) -> np.ndarray:
    """Each head's mean weight from every query key of a retrieval ``batch`` on the value it
    must copy (``batch.distances`` back). ``weights``: ``[batch, heads, seq, seq]`` for
    ``batch.inputs``; float64 ``[heads]``."""
    weights = _check_task_weights(weights, batch)
    return _mean_at(weights, batch.mask, batch.distances)


def task_head_scores(model, batch) -> dict:
    """Both task scores for every attention layer of ``model`` on a retrieval ``batch``:
    ``{"value_to_key": [[per head] per layer], "query_to_value": [...]}``, ``None`` for a
    recurrent layer."""
    to_key, to_value = [], []
    for weights in attention_maps(model, batch.inputs):
        to_key.append(None if weights is None
                      else value_to_key_scores(weights, batch).tolist())
        to_value.append(None if weights is None
                        else query_to_value_scores(weights, batch).tolist())
    return {"value_to_key": to_key, "query_to_value": to_value}
