"""Stick-breaking attention (Tan et al., ICLR 2025): no softmax, and no position either.

The ``normalise`` hook: going back from the query, key ``j`` takes the share
``sigmoid(z_ij)`` of the stick the nearer keys left, so its weight is
``sigmoid(z_ij) prod_{j<k<=i} (1 - sigmoid(z_ik))``
(:func:`posenc.data_dependent.stick_breaking_weights`). Order comes from the order the
stick is broken in; the scores themselves carry no position.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..data_dependent import stick_breaking_order
from .positions import AttentionSpec, PositionEncoding, register_position

__all__ = ["StickBreakingAttention"]


class StickBreakingAttention(PositionEncoding):
    """Stick-breaking weights ``[batch, heads, q, k]`` from the masked scores, in place of
    the softmax.

    The query's own key breaks the stick first (the authors' ``attend_current=True``), and
    what is left of the stick after every visible key goes to the query's own key too, so
    each row sums to 1: the authors' reference adds the remainder times the query's own
    value (``o + rem[..., None] * v``, shawntan/stickbreaking-attention,
    ``tests/test_attn.py``). Computed in log space in at least float32, as the reference
    (``sb_ref.py``) does, and returned in the scores' dtype. A masked key (``-inf``: the
    causal mask, a window) gets weight 0 and breaks nothing. In a causal layer (the keys after
    the query masked too, whatever the scores say) the stick runs back from the query, so
    what key ``j`` finds left is ``exp(c_ii - c_ij)`` with ``c`` the cumulative sum of
    ``log (1 - sigmoid(z))`` along the keys, as FoX's bias (no gather). In a bidirectional
    layer the stick is broken nearest key first, the earlier of two at one distance first
    (:func:`posenc.data_dependent.stick_breaking_order`, the course's extension), read
    through two gathers. No parameters; the visiting order for the last length seen is
    cached in non-persistent buffers.
    """

    def __init__(self, spec: AttentionSpec | None = None):
        super().__init__()
        self.causal = True if spec is None else spec.causal
        self.register_buffer("_order", torch.empty(0, 0, dtype=torch.long), persistent=False)
        self.register_buffer("_rank", torch.empty(0, 0, dtype=torch.long), persistent=False)

    def _visiting_order(self, n: int, device) -> tuple[torch.Tensor, torch.Tensor]:
        """``(order, rank)`` ``[n, n]``: which key is visited r-th, and when key j is."""
        if self._order.shape[-1] != n or self._order.device != torch.device(device):
            order, rank = stick_breaking_order(n)
            self._order = torch.from_numpy(order).to(device)
            self._rank = torch.from_numpy(rank).to(device)
        return self._order, self._rank

    def normalise(self, scores: torch.Tensor) -> torch.Tensor:
        n = scores.shape[-1]
        if scores.shape[-2] != n:
            raise ValueError(f"stick-breaking needs as many queries as keys (the remainder "
                             f"goes to the query's own key), got {scores.shape[-2]} and {n}")
        dtype = torch.promote_types(scores.dtype, torch.float32)
        z = scores.to(dtype)
        if self.causal:
            later = ~torch.ones(n, n, dtype=torch.bool, device=z.device).tril()
            z = z.masked_fill(later, float("-inf"))
        log_leave = F.logsigmoid(-z)  # log (1 - sigmoid(z)): 0 for a masked key
        # the share key j takes, log sigmoid(z) = z + log (1 - sigmoid(z)): -inf if masked
        # (one addition instead of a second log-sigmoid, the slowest step)
        log_take = z + log_leave
        if self.causal:  # what the keys j < k <= i left: c_ii - c_ij
            c = log_leave.cumsum(dim=-1)
            before = c.diagonal(dim1=-2, dim2=-1)[..., :, None] - c
        else:
            order, rank = self._visiting_order(n, scores.device)
            visited = log_leave.gather(-1, order.expand(z.shape))
            before = (visited.cumsum(dim=-1) - visited).gather(-1, rank.expand(z.shape))
        weights = torch.exp(log_take + before)
        remainder = 1 - weights.sum(dim=-1)  # [b, h, q]: the stick no key took
        return (weights + torch.diag_embed(remainder)).to(scores.dtype)


def _stick_breaking_cost(b: int, h: int, n: int, d: int) -> dict[str, int]:
    """A causal layer, in place of the softmax's exponential, sum and division (3 per
    score): the mask, two log-sigmoids, a cumulative sum, a subtraction, an addition, an
    exponential and a sum (8 per score), so 5 more per score, ``5 b h L^2``; no matrix
    product. Memory: the log-weights and their cumulative sums, ``2 b h L^2``."""
    return {"matmul_flops": 0, "elementwise_flops": 5 * b * h * n * n,
            "memory": 2 * b * h * n * n}


register_position("stick_breaking", StickBreakingAttention)
