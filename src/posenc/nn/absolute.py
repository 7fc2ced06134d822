"""Absolute position encodings, added to the token embeddings (the ``embed`` hook).

``SinusoidalPositionalEncoding`` (Vaswani et al., 2017) is fixed and has no
maximum length. ``LearnedPositionalEmbedding`` (BERT, GPT-2) is a trained table
with a hard maximum length.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .._validation import check_base, check_choice, check_int
from ..sinusoidal import sinusoidal_encoding
from .positions import AttentionSpec, PositionEncoding, register_position

__all__ = ["SinusoidalPositionalEncoding", "LearnedPositionalEmbedding", "interpolate_table"]


def _check_seq_len(seq_len) -> int:
    return check_int("seq_len", seq_len)


def _absolute_cost(b: int, h: int, n: int, d: int) -> dict[str, int]:
    """Add an ``[L, d]`` table once: ``b L d`` additions, the table in memory."""
    return {"matmul_flops": 0, "elementwise_flops": b * n * d, "memory": n * d}


class SinusoidalPositionalEncoding(PositionEncoding):
    """The fixed sinusoidal table, computed by :func:`posenc.sinusoidal.sinusoidal_encoding`.

    Shape: ``forward(seq_len, offset=0)`` returns ``[seq_len, d_model]``, float32.
    There is no ``max_len``: the table is (re)computed in float64 for as many
    positions as asked and cached in a non-persistent buffer that follows ``.to()``.
    """

    def __init__(self, d_model: int, base: float = 10000.0):
        super().__init__()
        self.d_model = check_int("d_model", d_model)
        self.base = check_base(base)
        self.register_buffer("_table", torch.empty(0, self.d_model), persistent=False)

    def forward(self, seq_len: int, offset: int = 0) -> torch.Tensor:
        seq_len = _check_seq_len(seq_len)
        offset = check_int("offset", offset, minimum=0)
        if offset + seq_len > self._table.shape[0]:
            table = sinusoidal_encoding(offset + seq_len, self.d_model, self.base)
            self._table = torch.from_numpy(table).to(self._table.device, torch.float32)
        return self._table[offset : offset + seq_len]

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        return x + self(x.shape[-2]).to(x.dtype)  # [seq, d] broadcasts over batch


class LearnedPositionalEmbedding(PositionEncoding):
    """A trained table of ``max_positions`` vectors, as in BERT and GPT-2.

    Shape: ``forward(seq_len)`` returns ``[seq_len, d_model]``.

    Past ``max_positions`` there is simply no row to look up, so it raises a
    ``ValueError`` -- unless ``interpolate="linear"``, the usual patch: the table is
    stretched along the position axis to ``seq_len`` rows (the 1-D analogue of what
    ViT does, in 2-D and usually bicubic, to its position table at a new
    resolution). Interpolation keeps the first and last rows and squeezes
    everything between, so every position moves.
    """

    INTERPOLATIONS = ("none", "linear")

    def __init__(self, max_positions: int, d_model: int, *, interpolate: str = "none",
                 init_std: float = 0.02, owner: str = "layer"):
        super().__init__()
        self.max_positions = check_int("max_positions", max_positions)
        self.d_model = check_int("d_model", d_model)
        self.interpolate = check_choice("interpolate", interpolate, self.INTERPOLATIONS)
        self.owner = owner  # named in the error past max_positions ("LM" inside TinyLM)
        self.weight = nn.Parameter(torch.randn(self.max_positions, self.d_model) * init_std)

    def forward(self, seq_len: int) -> torch.Tensor:
        seq_len = _check_seq_len(seq_len)
        if seq_len <= self.max_positions:
            return self.weight[:seq_len]
        if self.interpolate == "none":
            raise ValueError(
                f"seq_len={seq_len} exceeds max_positions={self.max_positions}: a learned "
                f"table has no row for positions >= {self.max_positions}. Use a sequence of "
                f"at most {self.max_positions} tokens or interpolate='linear'."
            )
        return interpolate_table(self.weight, seq_len)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        seq = x.shape[-2]
        if self.interpolate == "none" and seq > self.max_positions:
            raise ValueError(
                f"sequence length {seq} exceeds max_positions={self.max_positions}: this "
                f"{self.owner}'s learned position table has no row for positions >= "
                f"{self.max_positions} (build it with interpolate='linear' to stretch the "
                "table instead)")
        return x + self(seq).to(x.dtype)  # [seq, d_model] broadcasts over batch


def interpolate_table(table: torch.Tensor, new_length: int) -> torch.Tensor:
    """Linearly resample a ``[length, d]`` table to ``[new_length, d]`` (ends kept)."""
    stretched = F.interpolate(table.T[None], size=new_length, mode="linear",
                              align_corners=True)  # [1, d, new_length]
    return stretched[0].T  # [new_length, d]


def _build_sinusoidal(spec: AttentionSpec, *, base: float = 10000.0):
    return SinusoidalPositionalEncoding(spec.d_model, base)


def _build_learned(spec: AttentionSpec, *, max_positions: int = 512, interpolate: str = "none"):
    # inside a model, fairseq's N(0, 1/d_model) (see TinyLM); a lone layer, GPT-2's 0.02
    return LearnedPositionalEmbedding(
        max_positions, spec.d_model, interpolate=interpolate,
        init_std=spec.d_model ** -0.5 if spec.in_model else 0.02,
        owner="LM" if spec.in_model else "layer")


register_position("sinusoidal", SinusoidalPositionalEncoding, build=_build_sinusoidal)

register_position("learned", LearnedPositionalEmbedding, build=_build_learned)
