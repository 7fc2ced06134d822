"""KERPLE (Chi et al., NeurIPS 2022): a learned kernel of the distance as the score bias.

Two registered methods, both the ``score_bias`` hook, with two positive parameters per
head: ``kerple_power`` (``-r1 |i-j|^r2``; ALiBi is ``r2 = 1``) and ``kerple_log``
(``-r1 log(1 + r2 |i-j|)``). The formulas are :func:`posenc.learned_bias.kerple_power`
and :func:`posenc.learned_bias.kerple_log`.
"""

from __future__ import annotations

import torch
from torch import nn

from .._validation import check_bool, check_choice, check_float, check_int
from ..learned_bias import KERPLE_EPS, causal_distances, kerple_log, kerple_power
from .alibi import bias_cost
from .positions import AttentionSpec, PositionEncoding, register_position

__all__ = ["KerpleBias", "KERPLE_KERNELS"]

#: kernel -> (formula, upper bound of r2 or None). The power kernel needs r2 <= 2.
KERPLE_KERNELS = {"power": (kerple_power, 2.0), "log": (kerple_log, None)}


class KerpleBias(PositionEncoding):
    """KERPLE's bias: ``[num_heads, q, k]``, from two learned parameters per head.

    Initialised as the official code does (``torch.rand``): for ``"log"``,
    ``r1 ~ U(0, 2)`` and ``r2 ~ U(0, 1)``; for ``"power"``, ``r1 ~ U(0, 1)`` and
    ``r2 ~ U(0, 2)``. In use each is clamped at ``eps`` (0.01) from below (and the power's
    ``r2`` at 2 from above), functionally: the stored parameters are never rewritten.
    Causal: distances ``i - j`` (keys ahead are masked by attention); otherwise
    ``|i - j|``. The distances of the longest sequence seen are cached in a
    non-persistent float32 buffer; the bias is computed in at least float32 and cast to the
    queries' dtype.

    ALiBi is the power kernel with ``r2 = 1`` and ``r1`` its slopes, but only for slopes
    at or above ``eps``: with the official 0.01, the smallest ALiBi slopes (1/128 and
    1/256 for 8 heads) are out of reach.
    """

    def __init__(self, num_heads: int, *, kernel: str = "log", causal: bool = True,
                 eps: float = KERPLE_EPS):
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads)
        self.kernel = check_choice("kernel", kernel, tuple(KERPLE_KERNELS))
        check_bool("causal", causal)
        self.causal = causal
        self.eps = check_float("eps", eps, greater_than=0.0)
        r1_scale, r2_scale = (2.0, 1.0) if kernel == "log" else (1.0, 2.0)
        self.r1 = nn.Parameter(torch.rand(self.num_heads) * r1_scale)
        self.r2 = nn.Parameter(torch.rand(self.num_heads) * r2_scale)
        self.register_buffer("_distance", torch.empty(0, 0), persistent=False)

    def parameters_in_use(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(r1, r2)`` as the bias uses them (clamped), at least float32, ``[num_heads]``."""
        upper = KERPLE_KERNELS[self.kernel][1]
        dtype = torch.promote_types(self.r1.dtype, torch.float32)
        return (self.r1.to(dtype).clamp(min=self.eps),
                self.r2.to(dtype).clamp(min=self.eps, max=upper))

    def distances(self, query_length: int, key_length: int | None = None) -> torch.Tensor:
        """``i - j`` (causal, clipped at 0) or ``|i - j|``: float32 ``[q, k]``."""
        if key_length is None or key_length == query_length:
            if query_length > self._distance.shape[0]:
                d = causal_distances(query_length, causal=self.causal)
                self._distance = torch.from_numpy(d).to(self._distance.device, torch.float32)
            return self._distance[:query_length, :query_length]
        d = causal_distances(query_length, key_length, causal=self.causal)
        return torch.from_numpy(d).to(self._distance.device, torch.float32)

    def forward(self, query_length: int, key_length: int | None = None) -> torch.Tensor:
        distance = self.distances(query_length, key_length)
        r1, r2 = (p[:, None, None].to(distance.device) for p in self.parameters_in_use())
        return KERPLE_KERNELS[self.kernel][0](distance, r1, r2)  # [h, q, k]

    def score_bias(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return self(q.shape[-2], k.shape[-2]).to(q.device, q.dtype)


def _kerple_cost(b: int, h: int, n: int, d: int) -> dict[str, int]:
    """The bias costs what ALiBi's does to add (``b h L^2``), plus ``3 h L^2`` to build it
    (a power or log, a multiply, a negate) each forward, as it is learned."""
    cost = bias_cost(b, h, n, d)
    return {**cost, "elementwise_flops": cost["elementwise_flops"] + 3 * h * n * n}


def _build_power(spec: AttentionSpec):
    return KerpleBias(spec.num_heads, kernel="power", causal=spec.causal)


def _build_log(spec: AttentionSpec):
    return KerpleBias(spec.num_heads, kernel="log", causal=spec.causal)


register_position("kerple_power", KerpleBias, build=_build_power)
register_position("kerple_log", KerpleBias, build=_build_log)
