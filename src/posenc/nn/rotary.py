"""Rotary position embedding as a module (Su et al., 2021).

The angles are the ones :func:`posenc.rope.rope_angles` defines (``m * theta_i``);
the rotation is :func:`posenc.nn.rope_kernel.rotate`, the torch kernel that
:func:`posenc.nn.rope_kernel.apply_rope` also uses, so the module and the figures share
one definition.
"""

from __future__ import annotations

import numpy as np
import torch

from .._validation import check_base, check_choice, check_even_int, check_frequencies, to_numpy
from ..rope import LAYOUTS, rope_angles, rope_frequencies
from .positions import AttentionSpec, PositionEncoding, register_position
from .rope_kernel import rotate, rotate_by_angles

__all__ = ["RotaryEmbedding"]


def _angle_dtype(device: torch.device) -> torch.dtype:
    return torch.float32 if device.type == "mps" else torch.float64  # mps has no float64


class RotaryEmbedding(PositionEncoding):
    """Rotate queries and keys by their positions.

    Shape: ``forward(x, positions=None)`` with ``x`` ``[..., seq, head_dim]`` returns the
    same shape and dtype. ``frequencies`` (``[head_dim // 2]``) overrides the default
    ``base ** (-2i / head_dim)``, e.g. with :mod:`posenc.scaling` output; they are a
    persistent float64 buffer (saved with the model, and kept float64 by ``.to(dtype)``).
    ``cos``/``sin`` of the angles for positions ``0 .. n-1`` are cached in non-persistent
    buffers that grow with the longest sequence seen.
    ``layout`` is ``"interleaved"`` (Meta llama) or ``"half"`` (Hugging Face).
    """

    def __init__(self, head_dim: int, base: float = 10000.0, *, layout: str = "interleaved",
                 frequencies=None):
        super().__init__()
        self.head_dim = check_even_int("head_dim", head_dim)
        self.base = check_base(base)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.register_buffer("inv_freq", torch.from_numpy(rope_frequencies(head_dim, base)))
        self.register_buffer("_cos", torch.empty(0, head_dim // 2, dtype=torch.float64),
                             persistent=False)
        self.register_buffer("_sin", torch.empty(0, head_dim // 2, dtype=torch.float64),
                             persistent=False)
        self.frequencies = frequencies
        #: Multiplies the rotated queries and keys (YaRN's attention factor, applied as
        #: Hugging Face applies it, to cos and sin: the scores scale by its square). A
        #: Python float, saved with the model as extra state (no tensor on the hot path).
        self.attention_factor = 1.0

    @property
    def frequencies(self) -> np.ndarray:
        """The per-pair frequencies in use, float64 ``[head_dim // 2]``."""
        return to_numpy(self.inv_freq).astype(np.float64)

    @frequencies.setter
    def frequencies(self, frequencies) -> None:
        values = (rope_frequencies(self.head_dim, self.base) if frequencies is None
                  else check_frequencies(to_numpy(frequencies), self.head_dim // 2))
        device = self.inv_freq.device
        self.inv_freq = torch.from_numpy(values).to(device, _angle_dtype(device))
        self._cos = self._cos[:0]  # the cached angles are stale
        self._sin = self._sin[:0]

    def _apply(self, fn, recurse=True):
        # .to(dtype) must not round the frequencies or the cached angles: keep their dtype
        kept = {n: getattr(self, n) for n in ("inv_freq", "_cos", "_sin")}
        super()._apply(fn, recurse)
        for name, before in kept.items():
            device = getattr(self, name).device
            setattr(self, name, before.to(device, _angle_dtype(device)))
        return self

    def get_extra_state(self) -> dict:
        return {"attention_factor": self.attention_factor}

    def set_extra_state(self, state: dict) -> None:
        self.attention_factor = float(state["attention_factor"])

    def _load_from_state_dict(self, *args, **kwargs):
        super()._load_from_state_dict(*args, **kwargs)
        self._cos, self._sin = self._cos[:0], self._sin[:0]  # angles of the loaded frequencies

    def _cos_sin(self, seq: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        if seq > self._cos.shape[0]:
            positions = torch.arange(seq, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
            angles = positions[:, None] * self.inv_freq[None, :]  # m * theta_i, [seq, d/2]
            self._cos, self._sin = angles.cos(), angles.sin()
        return self._cos[:seq].to(device), self._sin[:seq].to(device)

    def forward(self, x: torch.Tensor, positions=None) -> torch.Tensor:
        if x.shape[-1] != self.head_dim:
            raise ValueError(f"x.shape[-1] must be head_dim={self.head_dim}, got {x.shape[-1]}")
        if positions is None:
            cos, sin = self._cos_sin(x.shape[-2], x.device)
        else:  # any positions: angles from the one definition, in float64
            angles = rope_angles(positions, self.head_dim, self.base,
                                 frequencies=self.frequencies)
            return rotate_by_angles(x, angles, self.layout)
        return rotate(x, cos, sin, self.layout)

    def rotate(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.attention_factor != 1.0:
            return self(q) * self.attention_factor, self(k) * self.attention_factor
        return self(q), self(k)


def _rope_cost(b: int, h: int, n: int, d: int) -> dict[str, int]:
    """4 multiplies and 2 adds per pair, on q and k; cos and sin ``[L, d_head / 2]`` each."""
    return {"matmul_flops": 0, "elementwise_flops": 6 * b * n * d, "memory": n * (d // h)}


def _build_rope(spec: AttentionSpec, *, base: float = 10000.0, rope_layout: str = "interleaved",
                rope_frequencies=None):
    return RotaryEmbedding(spec.head_dim, base, layout=rope_layout, frequencies=rope_frequencies)


register_position("rope", RotaryEmbedding, build=_build_rope)
