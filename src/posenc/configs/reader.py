"""``read_config``: what a Hugging Face config.json says about position, layer by layer.

Engineers meet positional encodings as a handful of fields in a model's ``config.json``.
:func:`read_config` reads them all (numpy only, no ``transformers`` needed) and returns a
:class:`ModelPositions` whose ``.layers`` has one :class:`LayerPositions` per layer:
its rotary frequencies (or ``None``), attention factor, window, chunk, sinks and
temperature. The frequencies and attention factors are those of Hugging Face's rotary
initialisation (``transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS`` and each
family's ``compute_default_rope_parameters``), computed in float64 by
:func:`posenc.scaling.rope_scaling_frequencies` / :func:`posenc.scaling.yarn_attention_factor`;
``tests/test_configs.py`` checks them against Hugging Face's own code for every bundled
config (:mod:`posenc.configs.bundled`).

The fields read (the rest of a config.json is ignored; keys starting with ``_`` are
metadata):

=====================================  ====================================================
fields                                 what they give
=====================================  ====================================================
``rope_theta`` + ``rope_scaling``      the rotary base and scaling, older schema
(``type`` or ``rope_type``)
``rope_parameters``                    the same in transformers v5's schema, flat or keyed
                                       by layer type (:mod:`.rope_parameters`)
``head_dim``, ``hidden_size``,         the head size (``hidden_size / num_attention_heads``
``num_attention_heads``                when no ``head_dim``); ``partial_rotary_factor``
                                       the fraction of it that rotates
``global_head_dim``                    Gemma 4: the head of its full-attention layers
``qk_rope_head_dim``                   DeepSeek's latent attention: the rotating part
``layer_types``, ``sliding_window``,   each layer's type and reach (:mod:`.layers`)
``sliding_window_pattern``,
``attention_chunk_size``
``index_head_dim``                     DeepSeek-V3.2's indexer (its rotary part is
                                       ``qk_rope_head_dim``, half layout)
``no_rope_layers``,                    NoPE layers (SmolLM3, Llama 4)
``no_rope_layer_interval``
``attn_temperature_tuning``,           Llama 4's query temperature on its NoPE layers
``floor_scale``, ``attn_scale``;       (:func:`posenc.scaling.attention_temperature`);
``llama_4_scaling_beta``               Ministral 3's on every layer
``text_config``                        a multimodal model's language model (read instead)
=====================================  ====================================================

What the family's code adds (NoPE global layers of EXAONE 4, Gemma 3's local base,
GPT-OSS's sinks) comes from :mod:`posenc.configs.families`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_int
from ..scaling import attention_temperature, llama_4_beta_scale, yarn_mscale
from .families import Family, get_family
from .layers import layer_kinds
from .rope_parameters import (
    ALL_LAYERS,
    RopeSpec,
    rope_parameters_by_layer_type,
    rope_spec,
    rotary_dim,
    spec_frequencies,
)

__all__ = ["read_config", "ModelPositions", "LayerPositions", "Temperature"]


@dataclass(frozen=True)
class Temperature:
    """A query multiplier that grows with the position (numpy, float64).

    ``kind="llama4"`` (Llama 4's ``attn_temperature_tuning``, on its NoPE layers):
    ``log1p(floor((p + 1) / floor_scale)) * attn_scale + 1``, as
    :func:`posenc.scaling.attention_temperature`. ``kind="llama_4_scaling_beta"``
    (Ministral 3, every layer, Hugging Face ``get_llama_4_attn_scale``):
    ``1 + attn_scale * log(1 + floor(p / floor_scale))`` with ``attn_scale`` = beta and
    ``floor_scale`` = ``original_max_position_embeddings``, as
    :func:`posenc.scaling.llama_4_beta_scale`.
    """

    kind: str
    floor_scale: float
    attn_scale: float

    def scale(self, positions) -> np.ndarray:
        """The multiplier at each integer position ``p >= 0`` (any shape, float64)."""
        if self.kind == "llama4":
            return attention_temperature(positions, floor_scale=self.floor_scale,
                                         attn_scale=self.attn_scale)
        return llama_4_beta_scale(positions, beta=self.attn_scale,
                                  original_max_position_embeddings=self.floor_scale)


@dataclass(frozen=True)
class LayerPositions:
    """How one layer handles position.

    ``frequencies``: float64 ``[rotary_dim // 2]``, one rotation frequency (radians per
    position) per rotated pair, Hugging Face's ``inv_freq`` at initialisation (the
    ``proportional`` type keeps the whole head's pairs, the unrotated ones at 0); ``None``
    where the layer applies no rotation (``method == "none"``). Read-only; layers of one
    kind share the array. ``attention_factor``: Hugging Face's ``attention_scaling``,
    multiplying cos and sin (1.0 when none). ``method``: the rope type (``"default"``,
    ``"linear"``, ``"dynamic"``, ``"yarn"``, ``"llama3"``, ``"longrope"``,
    ``"proportional"``) or ``"none"``. ``layer_type``: ``full_attention``,
    ``sliding_attention``, ``chunked_attention`` or ``linear_attention``. ``window`` /
    ``chunk``: tokens, or ``None``. ``head_dim``: the features per head that RoPE could
    act on (``qk_rope_head_dim`` for latent attention); ``rotary_dim``: those that rotate
    (0 for none). ``sinks``: learned per-head attention sinks. ``temperature``: a
    :class:`Temperature` or ``None``. ``softmax_scale_factor``: a multiplier on the
    ``1/sqrt(d)`` softmax scale (DeepSeek's YaRN ``mscale ** 2``; 1.0 otherwise).
    ``rope``: the checked parameters (``None`` when none). ``indexer_rotary_dim``: the
    features of DeepSeek-V3.2's indexer keys that rotate (same frequencies, half layout; 0
    where the layer has no indexer).
    """

    index: int
    layer_type: str
    method: str
    frequencies: np.ndarray | None
    attention_factor: float
    window: int | None
    chunk: int | None
    head_dim: int
    rotary_dim: int
    theta: float | None
    sinks: bool = False
    temperature: Temperature | None = None
    softmax_scale_factor: float = 1.0
    rope: RopeSpec | None = field(default=None, repr=False)
    indexer_rotary_dim: int = 0

    def frequencies_at(self, seq_len: float) -> np.ndarray | None:
        """The frequencies while the sequence is ``seq_len`` long: differs from
        :attr:`frequencies` only for ``dynamic`` (the NTK base grows past ``L0``) and
        ``longrope`` (the long factors past ``L0``), as Hugging Face's
        ``dynamic_rope_update`` recomputes them."""
        if self.rope is None:
            return None
        if self.method not in ("dynamic", "longrope"):
            return self.frequencies
        return spec_frequencies(self.rope, self.head_dim, seq_len=seq_len)[0]


@dataclass(frozen=True)
class ModelPositions:
    """Everything :func:`read_config` found: per-layer :class:`LayerPositions` and the
    model-wide fields (``source`` / ``date``: a bundled config's ``_source`` / ``_date``)."""

    model_type: str | None
    num_layers: int
    head_dim: int
    max_position_embeddings: int | None
    layers: tuple[LayerPositions, ...]
    source: str | None = None
    date: str | None = None

    @property
    def methods(self) -> tuple[str, ...]:
        """The distinct methods of the layers, in layer order."""
        return tuple(dict.fromkeys(layer.method for layer in self.layers))

    def summary(self) -> str:
        """One line per run of identical layers, e.g. ``"0-2  sliding_attention 4096 yarn"``."""
        lines, start = [], 0
        key = [(la.layer_type, la.window, la.chunk, la.method, la.theta) for la in self.layers]
        for i in range(1, len(key) + 1):
            if i == len(key) or key[i] != key[start]:
                t, w, c, m, theta = key[start]
                reach = f" {w}" if w else f" chunk {c}" if c else ""
                base = f" base {theta:g}" if theta else ""
                lines.append(f"{start}-{i - 1}  {t}{reach} {m}{base}")
                start = i
        return "\n".join(lines)


def _head_dim(config: Mapping, family: Family) -> int:
    """Features per head that RoPE may act on (module docstring)."""
    if family.latent or "qk_rope_head_dim" in config:
        return check_int("qk_rope_head_dim", config.get("qk_rope_head_dim"), minimum=2)
    head_dim = config.get("head_dim")
    hidden, heads = config.get("hidden_size"), config.get("num_attention_heads")
    derived = None
    if hidden is not None and heads is not None:
        hidden = check_int("hidden_size", hidden)
        heads = check_int("num_attention_heads", heads)
        if head_dim is None and hidden % heads:
            raise ValueError(f"hidden_size ({hidden}) must be divisible by num_attention_heads "
                             f"({heads}) when head_dim is not given")
        derived = hidden // heads
    if head_dim is None:
        if derived is None:
            raise ValueError("the head size needs head_dim, or hidden_size and "
                             "num_attention_heads")
        return derived
    head_dim = check_int("head_dim", head_dim, minimum=2)
    if family.derived_head_dim and derived is not None and head_dim != derived:
        raise ValueError(f"head_dim ({head_dim}) contradicts hidden_size / num_attention_heads "
                         f"= {hidden} / {heads} = {derived}: this family's head is "
                         "hidden_size / num_attention_heads")
    return head_dim


def _temperature(config: Mapping, family: Family, specs: dict) -> Temperature | None:
    if family.temperature == "llama4":
        tuning = config.get("attn_temperature_tuning", True)
        if not isinstance(tuning, bool):
            raise TypeError(f"attn_temperature_tuning must be true or false, got {tuning!r}")
        if not tuning:
            return None
        floor = config.get("floor_scale", 8192)
        scale = config.get("attn_scale", 0.1)
        return Temperature("llama4", _positive("floor_scale", floor),
                           _positive("attn_scale", scale, allow_zero=True))
    if family.temperature == "llama_4_scaling_beta":
        for rope in specs.values():
            if rope is not None and rope.get("llama_4_scaling_beta") is not None:
                beta = _positive(f"{rope['_where']}['llama_4_scaling_beta']",
                                 rope["llama_4_scaling_beta"], allow_zero=True)
                length0 = config.get("original_max_position_embeddings",
                                     rope.get("original_max_position_embeddings"))
                if length0 is None:
                    raise ValueError("llama_4_scaling_beta needs "
                                     "original_max_position_embeddings")
                return Temperature("llama_4_scaling_beta",
                                   _positive("original_max_position_embeddings", length0), beta)
    return None


def _full_head_dim(config: Mapping, family: Family) -> int | None:
    """Gemma 4: the full-attention layers' own head (``global_head_dim``); ``None`` for a
    family with one head size."""
    if family.global_head_dim is None:
        return None
    return check_int("global_head_dim", config.get("global_head_dim", family.global_head_dim),
                     minimum=2)


def _indexer_rotary_dim(config: Mapping, family: Family, head_dim: int) -> int:
    """DeepSeek-V3.2 (``DeepseekV32Indexer``): the first ``qk_rope_head_dim`` of the indexer's
    ``index_head_dim`` features rotate; 0 for a family without an indexer."""
    if not family.indexer:
        return 0
    index_dim = check_int("index_head_dim", config.get("index_head_dim", 128))
    if index_dim < head_dim:
        raise ValueError(f"index_head_dim ({index_dim}) must be at least qk_rope_head_dim "
                         f"({head_dim}): the indexer rotates that many of its features")
    return head_dim


def _positive(name: str, value, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (not allow_zero and value == 0):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value}")
    return value


def _softmax_scale_factor(family: Family, spec: RopeSpec | None, rope: Mapping | None) -> float:
    """DeepSeek (``yarn_apply_mscale``): ``yarn_mscale(factor, mscale_all_dim) ** 2`` on the
    softmax scale when the rope type is not default and ``mscale_all_dim`` is set."""
    if not family.latent or spec is None or spec.rope_type == "default":
        return 1.0
    mscale_all_dim = dict(spec.options).get("mscale_all_dim")
    if not mscale_all_dim or spec.factor is None:
        return 1.0
    return yarn_mscale(spec.factor, mscale_all_dim) ** 2


def read_config(config: Mapping) -> ModelPositions:
    """Read the position fields of a Hugging Face ``config.json`` (a dict, as ``json.load``
    gives it); see the module docstring for the fields.

    Returns a :class:`ModelPositions` with one :class:`LayerPositions` per layer
    (``num_hidden_layers``). A multimodal config's ``text_config`` is read in its place.

    Raises ``ValueError`` naming the field for: an unknown ``rope_type`` or an unknown
    key inside the rope parameters; a missing required key; a ``factor``, ``rope_theta``
    or length that is not > 0 (a ``factor`` < 1 is refused too, by
    :func:`posenc.scaling.rope_scaling_frequencies`); ``layer_types`` or
    ``no_rope_layers`` whose length is not ``num_hidden_layers``; an unknown layer type;
    a ``head_dim`` that contradicts ``hidden_size / num_attention_heads`` in a family whose
    head is defined that way; ``rope_parameters`` and ``rope_scaling`` that disagree; an
    odd or zero rotary dimension. ``TypeError`` for a field of the wrong kind.
    """
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a mapping (the parsed config.json), got "
                        f"{type(config).__name__}")
    meta = {k: config.get(k) for k in ("_source", "_date")}
    text = config.get("text_config")
    if text is not None:
        if not isinstance(text, Mapping):
            raise TypeError(f"text_config must be a mapping, got {type(text).__name__}")
        config = text
    config = {k: v for k, v in config.items() if not str(k).startswith("_")}
    model_type = config.get("model_type")
    family = get_family(model_type)
    if "num_hidden_layers" not in config:
        raise ValueError("num_hidden_layers is required (one entry per layer is returned)")
    num_layers = check_int("num_hidden_layers", config["num_hidden_layers"])
    head_dim = _head_dim(config, family)
    full_head = _full_head_dim(config, family)

    def head_of(layer_type: str) -> int:
        return full_head if full_head is not None and layer_type == "full_attention" else head_dim
    max_len = config.get("max_position_embeddings")
    if max_len is not None:
        max_len = check_int("max_position_embeddings", max_len)

    by_type = rope_parameters_by_layer_type(config, family)
    specs = {t: (None if r is None else rope_spec(r, config, family)) for t, r in by_type.items()}
    computed = {(t, head_of(t)): (None if s is None else spec_frequencies(s, head_of(t)))
                for t, s in specs.items()}
    for pair in computed.values():
        if pair is not None:
            pair[0].setflags(write=False)
    temperature = _temperature(config, family, by_type)
    indexer_dim = _indexer_rotary_dim(config, family, head_dim)

    layers = []
    for i, kind in enumerate(layer_kinds(config, family, num_layers)):
        key = kind.layer_type if ALL_LAYERS not in specs else ALL_LAYERS
        if key not in specs:
            if kind.rotates:
                raise ValueError(f"layer {i} is {kind.layer_type!r} but the rope parameters "
                                 f"have no entry for it (they have {', '.join(specs)})")
            key = None
        spec = specs.get(key)
        rotates = kind.rotates and spec is not None
        layer_head = head_of(kind.layer_type)
        if rotates:
            if (key, layer_head) not in computed:  # a head size of its own (Gemma 4)
                computed[key, layer_head] = spec_frequencies(spec, layer_head)
                computed[key, layer_head][0].setflags(write=False)
            freqs, factor = computed[key, layer_head]
        layer_temperature = temperature
        if family.temperature == "llama4":
            layer_temperature = None if kind.rotates else temperature  # NoPE layers only
        layers.append(LayerPositions(
            index=i, layer_type=kind.layer_type,
            method=spec.rope_type if rotates else "none",
            frequencies=freqs if rotates else None,
            attention_factor=float(factor) if rotates else 1.0,
            window=kind.window, chunk=kind.chunk, head_dim=layer_head,
            rotary_dim=rotary_dim(spec, layer_head) if rotates else 0,
            theta=spec.theta if rotates else None, sinks=family.sinks,
            temperature=layer_temperature,
            softmax_scale_factor=_softmax_scale_factor(family, spec, by_type.get(key)),
            rope=spec if rotates else None,
            indexer_rotary_dim=indexer_dim if rotates else 0))
    return ModelPositions(model_type, num_layers, head_dim, max_len, tuple(layers),
                          meta["_source"], meta["_date"])
