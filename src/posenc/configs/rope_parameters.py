"""The rotary parameters of a config.json, in either schema, checked, and their frequencies.

Hugging Face configs have spelled RoPE three ways, and all three are still on the Hub:

* ``rope_theta`` plus ``rope_scaling = {"type": "linear", "factor": 4.0}`` (2023);
* the same with ``"rope_type"`` instead of ``"type"`` (transformers 4.43 onwards, Llama 3.1);
* ``rope_parameters = {"rope_type": ..., "rope_theta": ..., ...}`` (transformers v5), which
  may instead be keyed by layer type, ``{"full_attention": {...}, "sliding_attention":
  {...}}``, when different layers rotate differently.

:func:`rope_parameters_by_layer_type` turns any of them into one dict per layer type (the
key ``"*"`` when every layer shares one), filled in the way Hugging Face's
``standardize_rope_params`` does it (``modeling_rope_utils.py``): ``type`` becomes
``rope_type``, a missing ``rope_theta`` or ``partial_rotary_factor`` comes from the top
level or the family default, a missing ``original_max_position_embeddings`` from the top
level (Phi-3 keeps it there) or ``max_position_embeddings``. :func:`rope_spec` then checks
one such dict against the keys its ``rope_type`` accepts (Hugging Face's
``_validate_<type>_rope_parameters``) and :func:`spec_frequencies` computes its
frequencies with :func:`posenc.scaling.rope_scaling_frequencies`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._validation import check_float
from ..scaling import rope_scaling_frequencies
from .families import Family

__all__ = ["RopeSpec", "ROPE_KEYS", "rope_parameters_by_layer_type", "rope_spec",
           "rotary_dim", "spec_frequencies", "ALL_LAYERS"]

#: The key of the one set of rotary parameters shared by every layer.
ALL_LAYERS = "*"

#: Keys every rope type accepts.
_ALWAYS = frozenset({"rope_type", "type", "rope_theta", "partial_rotary_factor",
                     "original_max_position_embeddings"})

#: Per Hugging Face ``rope_type``: (required keys, further optional keys), as the
#: ``_validate_<type>_rope_parameters`` methods of ``RotaryEmbeddingConfigMixin`` list them.
ROPE_KEYS: dict[str, tuple[frozenset, frozenset]] = {
    "default": (frozenset(), frozenset()),
    "linear": (frozenset({"factor"}), frozenset()),
    "dynamic": (frozenset({"factor"}), frozenset()),
    "yarn": (frozenset({"factor"}),
             frozenset({"attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
                        "truncate"})),
    "longrope": (frozenset({"short_factor", "long_factor"}),
                 frozenset({"attention_factor", "factor"})),
    "llama3": (frozenset({"factor", "low_freq_factor", "high_freq_factor"}), frozenset()),
    "proportional": (frozenset(), frozenset({"factor"})),
    # Hunyuan's "dynamic" with a fixed alpha (HunYuanDenseV1RotaryEmbedding): a static NTK base
    "ntk_alpha": (frozenset({"alpha"}), frozenset({"factor"})),
}

#: The layer types whose rotary parameters a config may give separately.
_LAYER_TYPE_KEYS = ("full_attention", "sliding_attention", "chunked_attention",
                    "linear_attention")


@dataclass(frozen=True)
class RopeSpec:
    """One checked set of rotary parameters (Hugging Face's conventions).

    ``rope_type``: one of :data:`ROPE_KEYS`; ``theta``: the base; ``factor``: the
    extension factor (``None`` for ``default``); ``partial_rotary_factor``: the fraction
    of the head that rotates; ``original_max_position_embeddings``: the pre-training
    length ``L0`` the scaled types need; ``max_position_embeddings``: the model's length
    (``dynamic`` uses it as ``L0``, as Hugging Face does); ``options``: the type's other
    keys as sorted ``(name, value)`` pairs (lists as tuples); ``where``: the config field
    it came from, for messages.
    """

    rope_type: str
    theta: float
    factor: float | None
    partial_rotary_factor: float
    original_max_position_embeddings: float | None
    max_position_embeddings: float | None
    options: tuple
    where: str


def _is_layer_keyed(params: Mapping) -> bool:
    return bool(params) and all(k in _LAYER_TYPE_KEYS for k in params)


def rope_parameters_by_layer_type(config: Mapping, family: Family) -> dict[str, dict | None]:
    """The config's rotary parameters, one dict per layer type (``"*"``: every layer).

    A layer type mapped to ``None`` rotates nothing (Hugging Face: "possibly a NoPE
    layer"). The dicts are copies, completed as the module docstring says; each carries
    ``"_where"``, the field it came from. Raises ``ValueError`` when ``rope_parameters``
    and ``rope_scaling`` are both given and differ, and ``TypeError`` when either is not
    a mapping.
    """
    params = config.get("rope_parameters")
    scaling = config.get("rope_scaling")
    for name, value in (("rope_parameters", params), ("rope_scaling", scaling)):
        if value is not None and not isinstance(value, Mapping):
            raise TypeError(f"{name} must be a mapping (a JSON object) or null, got "
                            f"{type(value).__name__}")
    if params is not None and scaling is not None and dict(params) != dict(scaling):
        raise ValueError("rope_parameters and rope_scaling are both given and differ: give "
                         "rope_parameters (transformers v5) or rope_scaling (older), not both")
    source, where = (params, "rope_parameters") if params is not None else (scaling,
                                                                             "rope_scaling")
    source = dict(source or {})
    top_theta = config.get("rope_theta")
    top_partial = config.get("partial_rotary_factor")

    if _is_layer_keyed(source):
        by_type = {k: (None if v is None else dict(v)) for k, v in source.items()}
        wheres = {k: f"{where}['{k}']" for k in by_type}
    elif family.rope_by_layer_type is not None:
        by_type = _family_layer_types(config, family, source)
        wheres = {"full_attention": where, "sliding_attention": where}
        if family.rope_by_layer_type == "modernbert":
            wheres = {"full_attention": "global_rope_theta / " + where,
                      "sliding_attention": "local_rope_theta / " + where}
    else:
        by_type = {ALL_LAYERS: source}
        wheres = {ALL_LAYERS: where}

    out = {}
    for layer_type, rope in by_type.items():
        if rope is None:
            out[layer_type] = None
            continue
        for k in rope:
            if not isinstance(k, str):
                raise TypeError(f"{wheres[layer_type]} keys must be strings, got {k!r}")
        if "mrope" in (rope.get("type"), rope.get("rope_type")) and \
                "mrope_section" in family.extra_rope_keys:
            # Qwen2VLTextConfig: "mrope" (alone, or beside rope_type "default") is default RoPE
            # with its pairs split among time, height and width by mrope_section
            rope["type"] = rope["rope_type"] = "default"
        if "type" in rope and "rope_type" in rope and rope["type"] != rope["rope_type"]:
            raise ValueError(f"{wheres[layer_type]} gives type={rope['type']!r} and "
                             f"rope_type={rope['rope_type']!r}: they must agree")
        rope.setdefault("rope_type", rope.get("type", "default"))
        if family.ntk_alpha and rope["rope_type"] == "dynamic" and rope.get("alpha"):
            rope["rope_type"] = "ntk_alpha"  # HunYuanDenseV1RotaryEmbedding: a fixed alpha
        if "rope_theta" not in rope:
            theta = top_theta
            if theta is None:
                theta = family.default_theta
                if isinstance(theta, dict):
                    theta = theta.get(layer_type, theta["full_attention"])
            rope["rope_theta"] = theta
        if top_partial is not None:
            rope.setdefault("partial_rotary_factor", top_partial)
        rope["_where"] = wheres[layer_type]
        out[layer_type] = rope
    return out


def _family_layer_types(config: Mapping, family: Family, source: dict) -> dict:
    """Gemma 3 and OLMo 3: the config's one rope dict is the full-attention layers';
    the sliding layers get plain RoPE (Gemma 3: with ``rope_local_base_freq``)."""
    full = dict(source)
    if family.rope_by_layer_type == "modernbert":
        # ModernBertConfig.convert_rope_params_to_dict: rope_scaling on both layer types,
        # global_rope_theta on the full layers, local_rope_theta on the sliding ones
        thetas = family.default_theta
        return {"full_attention": {**full, "rope_theta": config.get(
                    "global_rope_theta", thetas["full_attention"])},
                "sliding_attention": {**full, "rope_theta": config.get(
                    "local_rope_theta", thetas["sliding_attention"])}}
    if family.rope_by_layer_type == "gemma3":
        local = config.get("rope_local_base_freq", family.default_theta["sliding_attention"])
        if "rope_theta" not in full:
            full["rope_theta"] = config.get("rope_theta", family.default_theta["full_attention"])
        return {"full_attention": full, "sliding_attention": {"rope_type": "default",
                                                              "rope_theta": local}}
    theta = full.get("rope_theta", config.get("rope_theta", family.default_theta))
    full.setdefault("rope_theta", theta)
    return {"full_attention": full, "sliding_attention": {"rope_type": "default",
                                                          "rope_theta": theta}}


def _number(where: str, name: str, value, *, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{where}: {name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or (positive and not value > 0):
        raise ValueError(f"{where}: {name} must be a finite number > 0, got {value}")
    return value


def rope_spec(rope: Mapping, config: Mapping, family: Family) -> RopeSpec:
    """Check one completed rope dict (from :func:`rope_parameters_by_layer_type`).

    Raises ``ValueError`` naming the field for an unknown ``rope_type``, a key that
    ``rope_type`` does not accept, a missing required key, a ``factor``, ``rope_theta``
    or length that is not > 0, or a ``partial_rotary_factor`` outside (0, 1]; ``TypeError``
    for a value of the wrong kind.
    """
    where = rope.get("_where", "rope_parameters")
    rope_type = rope["rope_type"]
    if rope_type not in ROPE_KEYS:
        raise ValueError(f"{where}: rope_type must be one of {', '.join(map(repr, ROPE_KEYS))}; "
                         f"got {rope_type!r}")
    required, optional = ROPE_KEYS[rope_type]
    keys = {k for k in rope if k != "_where"}
    unknown = sorted(keys - required - optional - _ALWAYS - family.extra_rope_keys)
    if unknown:
        accepted = sorted(required | optional | _ALWAYS | family.extra_rope_keys)
        raise ValueError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} for "
                         f"rope_type {rope_type!r}; it accepts {', '.join(accepted)}")
    missing = sorted(required - keys)
    if missing:
        raise ValueError(f"{where}: rope_type {rope_type!r} needs "
                         f"{', '.join(map(repr, missing))}")

    theta = _number(where, "rope_theta", rope["rope_theta"])
    if not theta > 1:
        raise ValueError(f"{where}: rope_theta must be > 1, got {theta}")
    factor = rope.get("factor")
    if factor is not None:
        factor = _number(where, "factor", factor)
    partial = _number(where, "partial_rotary_factor", rope.get("partial_rotary_factor", 1.0))
    if partial > 1:
        raise ValueError(f"{where}: partial_rotary_factor must be in (0, 1], got {partial}")
    max_len = config.get("max_position_embeddings")
    if max_len is not None:
        max_len = _number("config", "max_position_embeddings", max_len)
    length0 = None
    if rope_type in ("yarn", "llama3", "longrope"):
        # Hugging Face's standardize_rope_params: Phi-3's top-level field wins
        length0 = config.get("original_max_position_embeddings",
                             rope.get("original_max_position_embeddings", max_len))
        if length0 is None:
            raise ValueError(f"{where}: rope_type {rope_type!r} needs "
                             "original_max_position_embeddings (or max_position_embeddings)")
        length0 = _number(where, "original_max_position_embeddings", length0)
    elif rope_type == "dynamic":
        if max_len is None:
            raise ValueError(f"{where}: rope_type 'dynamic' needs max_position_embeddings")
        length0 = max_len
    if rope_type == "longrope" and factor is None:
        if max_len is None:
            raise ValueError(f"{where}: rope_type 'longrope' without factor needs "
                             "max_position_embeddings (factor = max / original)")
        factor = max_len / length0  # Hugging Face's Phi-3 rule

    named = {"rope_type", "type", "rope_theta", "factor", "partial_rotary_factor",
             "original_max_position_embeddings", "_where"} | family.extra_rope_keys
    options = []
    for k in sorted(keys - named):
        v = rope[k]
        options.append((k, tuple(v) if isinstance(v, list | tuple) else v))
    return RopeSpec(rope_type, theta, factor, partial, length0, max_len, tuple(options), where)


def rotary_dim(spec: RopeSpec, head_dim: int) -> int:
    """Features per head that rotate: ``int(head_dim * partial_rotary_factor)`` (the whole
    head for ``proportional``, which zeroes the frequencies of the rest instead)."""
    if spec.rope_type == "proportional":
        return head_dim
    dim = int(head_dim * spec.partial_rotary_factor)
    if dim < 2 or dim % 2:
        raise ValueError(f"{spec.where}: int(head_dim * partial_rotary_factor) = "
                         f"int({head_dim} * {spec.partial_rotary_factor}) = {dim} must be an "
                         "even number >= 2 (features rotate in pairs)")
    return dim


def spec_frequencies(spec: RopeSpec, head_dim: int, *,
                     seq_len: float | None = None) -> tuple[np.ndarray, float]:
    """``(frequencies, attention_factor)`` of ``spec`` for a head of ``head_dim`` features.

    Shape ``[rotary_dim // 2]`` float64, one frequency per rotated pair (radians per
    position), from :func:`posenc.scaling.rope_scaling_frequencies`; ``seq_len`` matters
    to ``dynamic`` and ``longrope`` only (``None``: what Hugging Face computes at
    initialisation). Llama 4's ``llama3`` parameters have ``high_freq_factor ==
    low_freq_factor`` (1.0): Hugging Face's blend band is then empty, every pair whose
    wavelength exceeds ``L0 / low_freq_factor`` is divided by ``factor`` and the rest kept;
    computed here from the ``default`` and ``linear`` frequencies of the same function.
    """
    dim = rotary_dim(spec, head_dim)
    options = dict(spec.options)
    kwargs = {"base": spec.theta, "factor": 1.0 if spec.factor is None else spec.factor,
              "original_max_position_embeddings": spec.original_max_position_embeddings,
              "seq_len": seq_len}
    method = spec.rope_type
    if method == "ntk_alpha":  # base * alpha ** (d / (d - 2)): the static NTK-aware base
        method = "ntk"
        kwargs["factor"] = check_float("alpha", options.pop("alpha"), greater_than=0.0)
        kwargs["original_max_position_embeddings"] = None
    if method == "proportional":
        options["partial_rotary_factor"] = spec.partial_rotary_factor
    if method == "llama3":
        low = check_float("low_freq_factor", options["low_freq_factor"], greater_than=0.0)
        high = check_float("high_freq_factor", options["high_freq_factor"], greater_than=0.0)
        if high == low:
            default, _ = rope_scaling_frequencies("default", dim, base=spec.theta)
            divided, _ = rope_scaling_frequencies("linear", dim, base=spec.theta,
                                                  factor=kwargs["factor"])
            long_wave = 2 * np.pi / default > spec.original_max_position_embeddings / low
            return np.where(long_wave, divided, default), 1.0
    try:
        return rope_scaling_frequencies(method, dim, **kwargs, **options)
    except (TypeError, ValueError) as err:
        raise type(err)(f"{spec.where}: {err}") from None
