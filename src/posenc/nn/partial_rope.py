"""RoPE on part of each head: partial RoPE (GPT-NeoX, Phi) and p-RoPE (Barbero et al., 2025).

Both leave some features of every query and key without position, so those features
can match on content alone at any distance. They differ in *which* features:

* ``partial_rope`` rotates the first ``rotary_dim = int(head_dim * partial_rotary_factor)``
  features as a whole small head (frequencies ``base ** (-2i / rotary_dim)``) and passes
  the rest through (:func:`posenc.rope_variants.apply_partial_rope`).
* ``p_rope`` keeps RoPE's frequencies ``base ** (-2i / head_dim)`` of the whole head for
  its fastest ``int(p * head_dim // 2)`` pairs and sets the slowest pairs' frequency to 0
  (:func:`posenc.scaling.rope_scaling_frequencies` ``"proportional"``; Gemma).
"""

from __future__ import annotations

import torch

from .._validation import check_base, check_float
from ..scaling import rope_scaling_frequencies
from .positions import AttentionSpec, PositionEncoding, register_position
from .rotary import RotaryEmbedding

__all__ = ["PartialRotaryEmbedding", "ProportionalRotaryEmbedding"]


def _fraction(value) -> float:
    value = check_float("partial_rotary_factor", value, greater_than=0.0)
    if value > 1.0:
        raise ValueError(f"partial_rotary_factor must be in (0, 1], got {value}")
    return value


class PartialRotaryEmbedding(PositionEncoding):
    """Rotate the first ``rotary_dim`` features of queries and keys, pass the rest.

    Shape: ``forward(x)`` with ``x`` ``[..., seq, head_dim]`` returns the same shape and
    dtype. ``rotary_dim`` is ``int(head_dim * partial_rotary_factor)`` (Hugging Face's
    rule; GPT-NeoX's ``rotary_pct`` is the same number) and must come out even and >= 2.
    The rotated block is a :class:`RotaryEmbedding` of size ``rotary_dim``.
    """

    def __init__(self, head_dim: int, base: float = 10000.0, *,
                 partial_rotary_factor: float = 0.25, layout: str = "interleaved"):
        super().__init__()
        fraction = _fraction(partial_rotary_factor)
        self.head_dim = head_dim
        self.rotary_dim = int(head_dim * fraction)
        if self.rotary_dim < 2 or self.rotary_dim % 2:
            raise ValueError(f"int(head_dim * partial_rotary_factor) = int({head_dim} * "
                             f"{fraction}) = {self.rotary_dim} must be even and >= 2")
        self.rotary = RotaryEmbedding(self.rotary_dim, base, layout=layout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.head_dim:
            raise ValueError(f"x.shape[-1] must be head_dim={self.head_dim}, got {x.shape[-1]}")
        r = self.rotary_dim
        return torch.cat([self.rotary(x[..., :r]), x[..., r:]], dim=-1)

    def rotate(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self(q), self(k)


class ProportionalRotaryEmbedding(PositionEncoding):
    """p-RoPE: RoPE whose slowest pairs do not turn (frequency 0).

    Shape: ``forward(x)`` ``[..., seq, head_dim]`` to the same. The frequencies are
    ``rope_scaling_frequencies("proportional", head_dim, base=base,
    partial_rotary_factor=p)``: the first ``int(p * head_dim // 2)`` pairs keep
    ``base ** (-2i / head_dim)``, the others are 0, so ``p = 1`` is plain RoPE.
    """

    def __init__(self, head_dim: int, base: float = 10000.0, *,
                 partial_rotary_factor: float = 0.25, layout: str = "interleaved"):
        super().__init__()
        fraction = _fraction(partial_rotary_factor)
        inv_freq, _ = rope_scaling_frequencies("proportional", head_dim, base=check_base(base),
                                               partial_rotary_factor=fraction)
        self.rotary = RotaryEmbedding(head_dim, base, layout=layout, frequencies=inv_freq)

    @property
    def frequencies(self):
        """The per-pair frequencies, float64 ``[head_dim // 2]`` (zeros at the slow end)."""
        return self.rotary.frequencies

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rotary(x)

    def rotate(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self(q), self(k)


def _partial_cost(b: int, h: int, n: int, d: int) -> dict[str, int]:
    """RoPE's cost on the rotated quarter (the default factor 0.25) of each head."""
    rotary = int(d // h * 0.25)
    return {"matmul_flops": 0, "elementwise_flops": 6 * b * n * rotary * h,
            "memory": n * rotary}


def _p_rope_cost(b: int, h: int, n: int, d: int) -> dict[str, int]:
    """As RoPE's (the pairs of frequency 0 are rotated by angle 0)."""
    return {"matmul_flops": 0, "elementwise_flops": 6 * b * n * d, "memory": n * (d // h)}


def _build_partial(spec: AttentionSpec, *, base: float = 10000.0,
                   partial_rotary_factor: float = 0.25, rope_layout: str = "interleaved"):
    return PartialRotaryEmbedding(spec.head_dim, base, partial_rotary_factor=partial_rotary_factor,
                                  layout=rope_layout)


def _build_p_rope(spec: AttentionSpec, *, base: float = 10000.0,
                  partial_rotary_factor: float = 0.25, rope_layout: str = "interleaved"):
    return ProportionalRotaryEmbedding(spec.head_dim, base,
                                       partial_rotary_factor=partial_rotary_factor,
                                       layout=rope_layout)


register_position("partial_rope", PartialRotaryEmbedding, build=_build_partial)

register_position("p_rope", ProportionalRotaryEmbedding, build=_build_p_rope)
