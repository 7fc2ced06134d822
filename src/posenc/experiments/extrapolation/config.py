"""The extrapolation experiment's configuration: what decides the numbers.

The variants evaluated come from the registry (:data:`posenc.nn.POSITIONS`): each
trained method is followed by the evaluation-time variants it registered (learned +
interpolation, RoPE + Position Interpolation).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass

from ..._validation import check_float, check_int
from ...model import TinyLMConfig
from ...nn import POSITIONS, get_position

__all__ = [
    "ENCODINGS",
    "DERIVED_VARIANTS",
    "VARIANT_LABELS",
    "ExtrapolationConfig",
    "PRESETS",
    "config_hash",
    "variant_source",
]

#: The encodings trained by default: those of the ALiBi paper's comparison plus NoPE and learned.
ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")


def _variants():
    """``{variant name: (trained method, Variant)}`` over the whole registry."""
    return {v.name: (m.name, v) for m in POSITIONS.values() for v in m.variants}


class _DerivedVariants(Mapping):
    """Evaluation-time variant -> the trained method whose weights it reuses (live view)."""

    def __getitem__(self, name):
        return _variants()[name][0]

    def __iter__(self):
        return iter(_variants())

    def __len__(self) -> int:
        return len(_variants())


class _VariantLabels(Mapping):
    """Variant or method name -> its printed label (live view)."""

    def _labels(self) -> dict:
        labels = {name: method.label for name, method in POSITIONS.items()}
        labels.update({name: variant.label for name, (_, variant) in _variants().items()})
        return labels

    def __getitem__(self, name):
        return self._labels()[name]

    def __iter__(self):
        return iter(self._labels())

    def __len__(self) -> int:
        return len(self._labels())


#: Evaluation-time variants: name -> the trained encoding whose weights they reuse.
DERIVED_VARIANTS = _DerivedVariants()

#: Printed label of every method and variant.
VARIANT_LABELS = _VariantLabels()


def variant_source(variant: str) -> str:
    """The trained method a variant comes from (a method is its own source)."""
    return DERIVED_VARIANTS.get(variant, variant)


@dataclass(frozen=True)
class ExtrapolationConfig:
    """Everything that decides the numbers (threads and output path do not).

    Model: ``d_model``, ``num_heads``, ``num_layers``, ``d_ff``, ``base``; T5's buckets
    ``t5_num_buckets`` / ``t5_max_distance`` (the defaults put ``max_distance`` at
    ``train_length``, so every bucket is trained, as in the paper where 128 < 512);
    ``t5_bias_lr_scale`` multiplies the learning rate of the T5 bias table (a learned bias
    must grow to several units to act like a recency penalty, and Adam moves a parameter
    by about one learning rate per step: at the shared rate 1000 steps cannot get there).
    Training: ``steps`` AdamW steps of ``batch_size`` random windows of
    ``train_length`` bytes, learning rate warmed up linearly for ``warmup_steps`` then
    cosine-decayed to ``min_lr_ratio`` times the peak; gradients clipped to ``grad_clip``.
    Evaluation: the first ``eval_tokens`` held-out bytes, split into non-overlapping
    windows of ``m * train_length`` for each ``m`` in ``eval_multipliers``.
    ``encodings`` may name any registered method (:data:`posenc.nn.POSITIONS`).
    """

    encodings: tuple[str, ...] = ENCODINGS
    train_length: int = 128
    eval_multipliers: tuple[int, ...] = (1, 2, 4, 8)
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 4
    d_ff: int = 256
    base: float = 10000.0
    t5_num_buckets: int = 32
    t5_max_distance: int = 128
    t5_bias_lr_scale: float = 10.0
    steps: int = 1000
    batch_size: int = 16
    learning_rate: float = 2e-3
    warmup_steps: int = 50
    min_lr_ratio: float = 0.1
    grad_clip: float = 1.0
    eval_tokens: int = 65536
    eval_batch_size: int = 16
    seed: int = 0
    log_every: int = 25

    def __post_init__(self):
        object.__setattr__(self, "encodings", tuple(self.encodings))
        object.__setattr__(self, "eval_multipliers", tuple(self.eval_multipliers))
        if not self.encodings or len(set(self.encodings)) != len(self.encodings):
            raise ValueError(f"encodings must be a non-empty list without repeats, "
                             f"got {self.encodings}")
        for encoding in self.encodings:
            try:
                get_position(encoding)
            except ValueError as error:
                raise ValueError(f"encodings: {error}") from None
        mults = self.eval_multipliers
        if (not mults or mults[0] != 1 or list(mults) != sorted(set(mults))
                or not all(isinstance(m, int) and not isinstance(m, bool) for m in mults)):
            raise ValueError(f"eval_multipliers must be increasing integers starting at 1, "
                             f"got {mults}")
        for name in ("train_length", "steps", "batch_size", "eval_tokens", "eval_batch_size",
                     "log_every"):
            check_int(name, getattr(self, name))
        check_int("warmup_steps", self.warmup_steps, minimum=0)
        check_int("seed", self.seed, minimum=0)
        check_float("learning_rate", self.learning_rate, greater_than=0.0)
        check_float("min_lr_ratio", self.min_lr_ratio, at_least=0.0)
        check_float("grad_clip", self.grad_clip, greater_than=0.0)
        check_float("t5_bias_lr_scale", self.t5_bias_lr_scale, greater_than=0.0)
        if self.eval_tokens % self.max_eval_length:
            raise ValueError(f"eval_tokens ({self.eval_tokens}) must be a multiple of the "
                             f"longest evaluation length ({self.max_eval_length})")
        self.model_config("none")  # validate the model fields now

    @property
    def eval_lengths(self) -> tuple[int, ...]:
        return tuple(m * self.train_length for m in self.eval_multipliers)

    @property
    def max_eval_length(self) -> int:
        return self.train_length * self.eval_multipliers[-1]

    @property
    def variants(self) -> tuple[str, ...]:
        """Trained encodings, each followed by the evaluation-time variants derived from it."""
        return tuple(name for encoding in self.encodings
                     for name in (encoding, *(v.name for v in POSITIONS[encoding].variants)))

    def model_config(self, position: str) -> TinyLMConfig:
        """The :class:`TinyLMConfig` trained for ``position``."""
        return TinyLMConfig(
            vocab_size=256, d_model=self.d_model, num_heads=self.num_heads,
            num_layers=self.num_layers, d_ff=self.d_ff, position=position,
            max_positions=self.train_length, base=self.base,
            t5_num_buckets=self.t5_num_buckets, t5_max_distance=self.t5_max_distance)

    def to_dict(self) -> dict:
        """JSON-ready: tuples become lists."""
        return {k: list(v) if isinstance(v, tuple) else v
                for k, v in dataclasses.asdict(self).items()}

    @classmethod
    def from_dict(cls, values: dict) -> ExtrapolationConfig:
        return cls(**values)

    def replace(self, **changes) -> ExtrapolationConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


#: ``full``: the committed results (minutes). ``small``: the chapter's live run (seconds).
PRESETS = {
    "full": ExtrapolationConfig(),
    "small": ExtrapolationConfig(
        encodings=("sinusoidal", "rope", "alibi"), train_length=32, d_model=32, num_heads=4,
        num_layers=2, d_ff=128, t5_num_buckets=16, t5_max_distance=32, steps=200,
        batch_size=16, learning_rate=5e-3, warmup_steps=20, eval_tokens=8192, log_every=10),
}


def config_hash(config: ExtrapolationConfig) -> str:
    """SHA-256 of the config's canonical JSON: equal hashes, equal configurations."""
    text = json.dumps(config.to_dict(), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()
