"""Rotary position embedding as a module (Su et al., 2021).

A thin wrapper: the maths is :func:`posenc.rope.apply_rope`, so the module and
the figures share one definition.
"""

from __future__ import annotations

import torch
from torch import nn

from .._validation import check_base, check_choice, check_even_int, check_frequencies
from ..rope import LAYOUTS, apply_rope

__all__ = ["RotaryEmbedding"]


class RotaryEmbedding(nn.Module):
    """Rotate queries and keys by their positions.

    Shape: ``forward(x, positions=None)`` with ``x`` ``[..., seq, head_dim]`` returns the
    same shape and dtype. ``frequencies`` (``[head_dim // 2]``) overrides the default
    ``base ** (-2i / head_dim)``, e.g. with :mod:`posenc.scaling` output.
    ``layout`` is ``"interleaved"`` (Meta llama) or ``"half"`` (Hugging Face).
    """

    def __init__(self, head_dim: int, base: float = 10000.0, *, layout: str = "interleaved",
                 frequencies=None):
        super().__init__()
        self.head_dim = check_even_int("head_dim", head_dim)
        self.base = check_base(base)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.frequencies = (None if frequencies is None
                            else check_frequencies(frequencies, self.head_dim // 2))

    def forward(self, x: torch.Tensor, positions=None) -> torch.Tensor:
        if x.shape[-1] != self.head_dim:
            raise ValueError(f"x.shape[-1] must be head_dim={self.head_dim}, got {x.shape[-1]}")
        return apply_rope(x, positions, base=self.base, layout=self.layout,
                          frequencies=self.frequencies)
