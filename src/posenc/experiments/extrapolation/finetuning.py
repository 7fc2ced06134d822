"""Fine-tuning: a trained rotary model (a method whose experiment entry has
``finetunable=True``, :mod:`.methods`: RoPE) extended to a longer context with a scaling
of its frequencies (:mod:`posenc.scaling`), then trained briefly at the longer length.
"""

from __future__ import annotations

import copy

import numpy as np

from ..._validation import check_int
from ...model import TinyLM
from ...scaling import rope_scaling_frequencies
from .config import ExtrapolationConfig
from .training import _optimizer, _train_steps, learning_rate_at, seed_everything
from .variants import VariantKey

__all__ = ["scaled_rope_frequencies", "finetune_rope"]


def scaled_rope_frequencies(config: ExtrapolationConfig, scaling: str, factor: float,
                            position: str) -> tuple[np.ndarray, float]:
    """``(frequencies [head_dim // 2], attention factor)`` of ``scaling`` ("none" or a
    :func:`posenc.scaling.rope_scaling_frequencies` method) by ``factor`` for the
    config's head size and training length and the ``base`` option ``position`` is
    trained with."""
    method = "default" if scaling == "none" else scaling
    base = config.method_options(position)["base"]
    return rope_scaling_frequencies(method, config.d_model // config.num_heads,
                                    base=base, factor=factor,
                                    original_max_position_embeddings=config.train_length)


def finetune_rope(model: TinyLM, config: ExtrapolationConfig, scaling: str,
                  train_data: np.ndarray, *, seed: int | None = None,
                  progress: bool = True) -> tuple[TinyLM, dict]:
    """Extend a trained rotary model to ``finetune_multiplier * train_length``: a copy with
    the scaling's frequencies (and attention factor) by that factor, fine-tuned for
    ``finetune_steps`` steps at the longer length.

    Same bytes per step as training (batch sizes divided by the multiplier); a fresh
    AdamW; learning rate warmed up over a tenth of the steps to ``finetune_lr_ratio``
    times the peak, then on the training's schedule (cosine decay, or held constant). The
    copy keeps the scaling.
    """
    seed = config.seed if seed is None else check_int("seed", seed, minimum=0)
    factor = config.finetune_multiplier
    tuned = copy.deepcopy(model)
    position = model.config.position
    tuned.set_rope_frequencies(*scaled_rope_frequencies(config, scaling, factor, position))
    seed_everything(seed)
    schedule = config.replace(steps=config.finetune_steps,
                              warmup_steps=max(config.finetune_steps // 10, 1),
                              learning_rate=config.learning_rate * config.finetune_lr_ratio)
    history = _train_steps(
        tuned, _optimizer(tuned, config), config, steps=config.finetune_steps,
        length=config.train_length * factor, batch_size=config.batch_size // factor,
        retrieval_batch_size=config.retrieval_batch_size // factor,
        lr_at=lambda step: learning_rate_at(step, schedule), train_data=train_data,
        seed=seed + 1000, desc=VariantKey.finetuned(position, scaling).name, progress=progress)
    return tuned, history
