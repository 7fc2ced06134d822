"""Position ids and masks for a batch that is not one plain sequence: left padding and packing.

A model sees position only through the ids it is given. Two common batches break the
default ``0 .. seq-1``:

* **Left padding** (batched generation): a prompt of 5 tokens in a row of 8 starts at
  column 3. Its ids must still be ``0 .. 4``: Hugging Face's ``generate`` computes them from
  the attention mask, ``position_ids = attention_mask.cumsum(-1) - 1`` with padding set to 0
  (transformers 5.x, ``GenerationMixin._prepare_position_ids_for_generation``; 4.x's
  ``prepare_inputs_for_generation`` set it to 1), and the mask also hides the padding keys.
  Each decoding step then continues from the row's *last* id, ``+ 1``
  (``_update_model_kwargs_for_generation``; :meth:`KVCache.next_positions`).
  :func:`position_ids_from_mask`, :func:`padded_mask`.
* **Packing** (training or prefill of several documents in one row): ids restart at 0 for
  each document (:func:`packed_position_ids`), **and** the mask must keep each document from
  attending to the ones before it (:func:`packed_mask`; flash-attention's varlen kernels do
  this with ``cu_seqlens``). Resetting the ids alone leaves the documents reading each other.

Masks are bool, True = may attend, built from :func:`posenc.masks.visible` (the one causal
rule). Everything here is torch, for the model's inputs.
"""

from __future__ import annotations

import torch

from .._validation import check_int
from ..masks import visible

__all__ = ["position_ids_from_mask", "padded_mask", "packed_position_ids", "packed_document_ids",
           "packed_mask"]


def _check_attention_mask(attention_mask) -> torch.Tensor:
    if not isinstance(attention_mask, torch.Tensor) or attention_mask.ndim != 2:
        shape = tuple(attention_mask.shape) if isinstance(attention_mask, torch.Tensor) else None
        raise ValueError(f"attention_mask must be a tensor [batch, seq] of 0 and 1, got "
                         f"{type(attention_mask).__name__} {shape}")
    mask = attention_mask.long()
    if not torch.all((mask == 0) | (mask == 1)):
        raise ValueError("attention_mask must hold only 0 (padding) and 1 (a real token)")
    return mask


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Each token's position from the attention mask: ``cumsum - 1``, padding at 0.

    ``attention_mask`` ``[batch, seq]``, 1 for a token and 0 for padding (left or right);
    returns int64 ``[batch, seq]``: the first real token of each row is 0, the next 1, ...
    Padding gets 0, exactly as transformers 5.x's
    ``GenerationMixin._prepare_position_ids_for_generation``
    (``masked_fill(attention_mask == 0, 0)``; tested against it). Padding keys are masked and
    what padding queries compute is never read, so the value matters only to what continues
    from the ids: a row's next position is its *last* id + 1 (:meth:`KVCache.next_positions`).
    """
    mask = _check_attention_mask(attention_mask)
    return (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)


def padded_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """bool ``[batch, seq, seq]``: query ``i`` may attend to key ``j`` if ``j <= i`` and key
    ``j`` is a real token (not padding). A padding query sees itself, so its row is never
    empty (no NaN from a softmax over nothing)."""
    mask = _check_attention_mask(attention_mask).bool()
    seq = mask.shape[1]
    idx = torch.arange(seq, device=mask.device)
    causal = visible(idx[:, None], idx[None, :])  # [seq, seq]
    allowed = causal[None] & mask[:, None, :]  # keys that are tokens
    return allowed | torch.eye(seq, dtype=torch.bool, device=mask.device)[None]


def _check_lengths(lengths) -> list[int]:
    if isinstance(lengths, str) or not hasattr(lengths, "__iter__"):
        raise TypeError(f"lengths must be a list of document lengths (integers >= 1), "
                        f"got {lengths!r}")
    lengths = [check_int(f"lengths[{k}]", n) for k, n in enumerate(lengths)]
    if not lengths:
        raise ValueError("lengths must hold at least one document")
    return lengths


def packed_document_ids(lengths) -> torch.Tensor:
    """Which document each token of a packed row belongs to: int64 ``[sum(lengths)]``
    (``[3, 2]`` gives ``0 0 0 1 1``)."""
    lengths = _check_lengths(lengths)
    return torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))


def packed_position_ids(lengths) -> torch.Tensor:
    """Position ids that restart at 0 for each packed document: int64 ``[sum(lengths)]``
    (``[3, 2]`` gives ``0 1 2 0 1``)."""
    doc = packed_document_ids(lengths)
    starts = torch.cumsum(torch.tensor([0, *_check_lengths(lengths)[:-1]]), 0)
    return torch.arange(len(doc)) - starts[doc]


def packed_mask(lengths) -> torch.Tensor:
    """bool ``[n, n]`` (``n = sum(lengths)``): causal *and* within one document, the
    block-diagonal mask that keeps packed documents apart."""
    doc = packed_document_ids(lengths)
    idx = torch.arange(len(doc))
    return visible(idx[:, None], idx[None, :]) & (doc[:, None] == doc[None, :])
