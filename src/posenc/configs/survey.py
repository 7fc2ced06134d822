"""What each bundled model does with position, one row per model (chapter 15's table).

:func:`survey_row` condenses :func:`posenc.configs.read_config` and
:func:`posenc.configs.kv_cache` into the facts a reader compares across models: how many
layers rotate, slide, skip RoPE or are linear attention, the base and the rotated share of
the head, the scaling, the query temperature and the KV cache per token. Numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._validation import check_int
from .bundled import load_bundled, read_bundled
from .kv_cache import kv_cache

__all__ = ["SurveyRow", "survey_row"]


@dataclass(frozen=True)
class SurveyRow:
    """One model. Layer counts: ``rotating`` (apply RoPE), ``windowed`` (sliding or chunked,
    rotating or not), ``nope`` (attention without RoPE), ``linear`` (linear attention, order
    from its recurrence); ``rotating + nope + linear == layers``. ``base``, ``rotated_share``
    (``rotary_dim / head_dim``, or for the ``proportional`` type the share of pairs that
    turn) and ``scaling`` (the rope type, with its factor) of the first rotating
    full-attention layer, else of the first rotating layer (``None`` when no layer
    rotates); ``temperature``: the query temperature's kind or
    ``None``; ``kv_kib``: the KV cache per token at ``length`` tokens, bf16, in KiB;
    ``from_defaults``: built from a configuration class's defaults, not a copy of the
    checkpoint's file (:mod:`posenc.configs.bundled`)."""

    name: str
    date: str
    layers: int
    rotating: int
    windowed: int
    nope: int
    linear: int
    base: float | None
    rotated_share: float | None
    scaling: str | None
    temperature: str | None
    kv_kib: float
    from_defaults: bool


def survey_row(name: str, length: int = 32768) -> SurveyRow:
    """The :class:`SurveyRow` of the bundled config ``name`` (KV cache at ``length``)."""
    length = check_int("length", length)
    config, model = load_bundled(name), read_bundled(name)
    layers = model.layers
    rotating = [la for la in layers if la.rope is not None]
    linear = sum(la.layer_type == "linear_attention" for la in layers)
    # the full-attention layers' rotation where they rotate (Gemma's global base, Gemma 4's
    # p-RoPE), else the first rotating layer's (EXAONE 4's sliding layers)
    full = [la for la in rotating if la.layer_type == "full_attention"]
    first = (full or rotating or [None])[0]
    share = scaling = None
    if first is not None:
        if first.method == "proportional":  # the unrotated pairs are kept at frequency 0
            share = float((first.frequencies > 0).mean())
        else:
            share = first.rotary_dim / first.head_dim
        factor = first.rope.factor
        scaling = first.method if not factor else f"{first.method} ×{factor:g}"
    temperature = next((la.temperature.kind for la in layers if la.temperature), None)
    return SurveyRow(
        name=name, date=model.date, layers=len(layers), rotating=len(rotating),
        windowed=sum(la.window is not None or la.chunk is not None for la in layers),
        nope=len(layers) - len(rotating) - linear, linear=linear,
        base=first.theta if first else None, rotated_share=share, scaling=scaling,
        temperature=temperature,
        kv_kib=kv_cache(config).bytes_per_token(length) / 1024,
        from_defaults=config["_found_in"].startswith("transformers "))
