"""Argument checks shared by every public function.

Each check raises ``TypeError`` for the wrong kind of value and ``ValueError``
for a value out of range, and names the argument and what is accepted, so a
reader gets a clear message instead of a broadcasting error from deep inside
numpy or torch.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Sequence

import numpy as np


def check_bool(name: str, value) -> bool:
    """Return ``value`` if it is ``True`` or ``False`` (not 0, 1 or ``None``)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


def check_int(name: str, value, *, minimum: int = 1) -> int:
    """Return ``value`` as an ``int`` if it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_even_int(name: str, value, *, minimum: int = 2) -> int:
    """Return ``value`` as an ``int`` if it is an even integer >= ``minimum``."""
    value = check_int(name, value, minimum=minimum)
    if value % 2:
        raise ValueError(f"{name} must be even (features are rotated in pairs), got {value}")
    return value


def check_float(name: str, value, *, greater_than: float | None = None,
                at_least: float | None = None) -> float:
    """Return ``value`` as a finite ``float`` above the given bound."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if greater_than is not None and not value > greater_than:
        raise ValueError(f"{name} must be > {greater_than}, got {value}")
    if at_least is not None and not value >= at_least:
        raise ValueError(f"{name} must be >= {at_least}, got {value}")
    return value


def check_base(base) -> float:
    """The base of a geometric frequency ladder must be a real number > 1."""
    return check_float("base", base, greater_than=1.0)


def check_choice(name: str, value, choices: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def check_frequencies(frequencies, num_pairs: int) -> np.ndarray:
    """A per-pair frequency vector: 1-D, ``num_pairs`` long, finite and >= 0 (a zero
    frequency leaves its pair unrotated, as p-RoPE's lowest pairs)."""
    arr = np.asarray(frequencies, dtype=np.float64)
    if arr.shape != (num_pairs,):
        raise ValueError(
            f"frequencies must have shape ({num_pairs},) = (head_dim // 2,), got {arr.shape}"
        )
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError("frequencies must be finite and >= 0")
    return arr


def to_numpy(a):
    """``a`` as numpy: a torch tensor is detached and copied to the CPU (any dtype kept,
    bfloat16 widened to float32, which numpy lacks); anything else goes through unchanged.

    The one place the library turns tensors into arrays.
    """
    if is_tensor(a):
        a = a.detach().cpu()
        if a.dtype == sys.modules["torch"].bfloat16:
            a = a.float()
        return a.numpy()
    return a


def is_tensor(a) -> bool:
    """Whether ``a`` is a torch tensor, without importing torch (if torch was never
    imported, nothing can be a tensor): the numpy modules stay numpy-only."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(a, torch.Tensor)
