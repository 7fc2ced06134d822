"""Axial 2-D RoPE for a grid of image patches (Heo et al., 2024, "RoPE-ViT").

Half of each head's pairs turn with the patch's column, half with its row
(:func:`posenc.rope_variants.apply_axial_rope`), so a score depends on the row offset and the
column offset between two patches. The sequence is read as a grid filled row by row,
``grid_cols`` patches wide (a ViT's ``end_x``).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .._validation import check_base, check_int
from .positions import AttentionSpec, PositionEncoding, register_position
from .rope_kernel import apply_axial_rope

__all__ = ["AxialRotaryEmbedding", "grid_coordinates"]


def grid_coordinates(seq: int, grid_cols: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, cols)`` of positions ``0 .. seq-1`` on a grid filled row by row.

    ``grid_cols`` patches per row; ``None`` takes ``ceil(sqrt(seq))`` (a square grid when
    ``seq`` is a square number). Each ``[seq]``, int64.
    """
    seq = check_int("seq", seq)
    cols = math.isqrt(seq - 1) + 1 if grid_cols is None else check_int("grid_cols", grid_cols)
    t = np.arange(seq)
    return t // cols, t % cols


class AxialRotaryEmbedding(PositionEncoding):
    """Axial 2-D RoPE on queries and keys of a patch sequence.

    Shape: ``rotate(q, k)`` with ``[batch, heads, seq, head_dim]`` tensors (``head_dim`` a
    multiple of 4) returns the same shapes; patch ``t`` sits at row ``t // grid_cols``,
    column ``t % grid_cols`` (:func:`grid_coordinates`). ``base`` 100 as in RoPE-ViT.
    The default width is fixed (8), so a patch keeps its coordinates whatever the sequence
    length -- a causal model needs that; ``grid_cols=None`` takes the square grid of each
    sequence (:func:`grid_coordinates`), as a ViT on square images does.
    """

    def __init__(self, head_dim: int, base: float = 100.0, *, grid_cols: int | None = 8):
        super().__init__()
        head_dim = check_int("head_dim", head_dim, minimum=4)
        if head_dim % 4:
            raise ValueError(f"head_dim must be a multiple of 4 for axial 2-D RoPE, got "
                             f"{head_dim}")
        self.head_dim = head_dim
        self.base = check_base(base)
        self.grid_cols = None if grid_cols is None else check_int("grid_cols", grid_cols)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = grid_coordinates(x.shape[-2], self.grid_cols)
        return apply_axial_rope(x, rows, cols, base=self.base)

    def rotate(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self(q), self(k)


def _axial_cost(b: int, h: int, n: int, d: int) -> dict[str, int]:
    """As RoPE's: every pair rotated once, by a row or a column angle."""
    return {"matmul_flops": 0, "elementwise_flops": 6 * b * n * d, "memory": n * (d // h)}


def _build_axial(spec: AttentionSpec, *, base: float = 100.0, grid_cols: int | None = 8):
    return AxialRotaryEmbedding(spec.head_dim, base, grid_cols=grid_cols)


register_position("axial_rope", AxialRotaryEmbedding, build=_build_axial)
