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

import json
import math
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._validation import check_int
from ..alibi import alibi_slopes, mpt_alibi_slopes
from ..scaling import attention_temperature, llama_4_beta_scale, yarn_mscale
from .families import FAMILIES, GENERIC, Family, unread_fields
from .layers import ATTENTION_TYPES, layer_kinds
from .rope_parameters import (
    ALL_LAYERS,
    RopeSpec,
    rope_parameters_by_layer_type,
    rope_spec,
    rotary_dim,
    spec_frequencies,
)

__all__ = ["read_config", "load_config", "ModelPositions", "LayerPositions", "Temperature"]


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
    where the layer has no indexer). ``layout``: how the rotated features pair up,
    ``"half"`` (``rotate_half``: feature ``i`` with ``i + rotary_dim / 2``) or
    ``"interleaved"`` (``2i`` with ``2i + 1``); ``None`` where the layer does not rotate.
    ``alibi_slopes``: float64 ``[num_attention_heads]``, the per-head ALiBi slopes where
    ``method == "alibi"``, else ``None``. ``mrope_section``: M-RoPE's pairs per axis
    (time, height, width) or ``None``. ``long_attention_factor``: the attention factor past
    ``L0`` where it differs (Phi-3.5-MoE's ``long_mscale``), else ``None``.
    ``layer_type`` may also name a layer with no attention: ``linear_attention``,
    ``mamba``, ``conv`` or ``mlp`` (:data:`posenc.configs.LAYER_TYPES`).
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
    layout: str | None = None
    alibi_slopes: np.ndarray | None = field(default=None, repr=False)
    mrope_section: tuple | None = None
    long_attention_factor: float | None = None

    @property
    def attends(self) -> bool:
        """Whether the layer attends (full, sliding or chunked attention), rather than
        mixing tokens by a recurrence, a convolution, or not at all."""
        return self.layer_type in ATTENTION_TYPES

    def attention_factor_at(self, seq_len: float) -> float:
        """The cos/sin multiplier while the sequence is ``seq_len`` long (Phi-3.5-MoE
        switches to ``long_mscale`` past ``L0``, as ``PhimoeRotaryEmbedding.forward``)."""
        if (self.long_attention_factor is not None and self.rope is not None
                and seq_len > self.rope.original_max_position_embeddings):
            return self.long_attention_factor
        return self.attention_factor

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
    model-wide fields (``source`` / ``date``: a bundled config's ``_source`` / ``_date``;
    ``family``: the ``model_type`` whose rules were applied, ``"generic"`` for the plain
    Llama-style rules; ``notes``: what the reading could not vouch for, e.g. values that are
    a configuration class's defaults, or an unknown family read with ``strict=False``)."""

    model_type: str | None
    num_layers: int
    head_dim: int
    max_position_embeddings: int | None
    layers: tuple[LayerPositions, ...]
    source: str | None = None
    date: str | None = None
    family: str = "generic"
    notes: tuple[str, ...] = ()

    @property
    def methods(self) -> tuple[str, ...]:
        """The distinct methods of the layers, in layer order."""
        return tuple(dict.fromkeys(layer.method for layer in self.layers))

    def summary(self) -> str:
        """One line per run of identical layers, e.g. ``"0-2  sliding_attention 4096 yarn"``,
        then a line per note (see :attr:`notes`)."""
        lines, start = [], 0
        key = [(la.layer_type, la.window, la.chunk, la.method, la.theta) for la in self.layers]
        for i in range(1, len(key) + 1):
            if i == len(key) or key[i] != key[start]:
                t, w, c, m, theta = key[start]
                reach = f" {w}" if w else f" chunk {c}" if c else ""
                base = f" base {theta:g}" if theta else ""
                lines.append(f"{start}-{i - 1}  {t}{reach} {m}{base}")
                start = i
        return "\n".join(lines + [f"note: {n}" for n in self.notes])


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


#: Older or family-specific names of the fields read, by the name read (GPT-2-style
#: ``n_layer``, MPT's ``n_layers`` / ``d_model`` / ``max_seq_len``, GPT-NeoX's
#: ``rotary_emb_base``, BLOOM's ``n_embed``). A config holding both names with different
#: values is refused.
ALIASES = {
    "num_hidden_layers": ("n_layer", "n_layers", "num_layers"),
    "num_attention_heads": ("n_head", "n_heads"),
    "hidden_size": ("n_embd", "n_embed", "d_model"),
    "max_position_embeddings": ("n_positions", "max_seq_len"),
    "rope_theta": ("rotary_emb_base",),
}


def _canonical(config: Mapping) -> dict:
    """``config`` with :data:`ALIASES` under their read names, and ``rotary_pct`` /
    ``rotary_dim`` as ``partial_rotary_factor`` (GPT-NeoX, GPT-J, MiniMax-M2)."""
    out = dict(config)
    for name, others in ALIASES.items():
        for other in others:
            if out.get(other) is None:
                continue
            if out.get(name) is not None and out[name] != out[other]:
                raise ValueError(f"{name} ({out[name]!r}) and its older name {other} "
                                 f"({out[other]!r}) disagree")
            out[name] = out[other]
    return out


def _partial_alias(config: dict, head_dim: int) -> None:
    """``rotary_pct`` (GPT-NeoX) and ``rotary_dim`` (GPT-J, MiniMax-M2: features rotated
    per head) as ``partial_rotary_factor``, as their configuration classes convert them."""
    given = {}
    if config.get("rotary_pct") is not None:
        pct = config["rotary_pct"]
        if isinstance(pct, bool) or not isinstance(pct, int | float):
            raise TypeError(f"rotary_pct must be a number, got {pct!r}")
        given["rotary_pct"] = float(pct)
    if config.get("rotary_dim") is not None:
        dim = check_int("rotary_dim", config["rotary_dim"], minimum=2)
        if dim > head_dim:
            raise ValueError(f"rotary_dim ({dim}) must be at most the head ({head_dim})")
        given["rotary_dim"] = dim / head_dim
    if config.get("partial_rotary_factor") is not None:
        given["partial_rotary_factor"] = config["partial_rotary_factor"]
    values = set(given.values())
    if len(values) > 1:
        raise ValueError("the rotated share of the head is given twice and disagrees: "
                         + ", ".join(f"{k} -> {v!r}" for k, v in given.items()))
    if values:
        config["partial_rotary_factor"] = values.pop()


def load_config(source) -> dict:
    """A config as a dict: ``source`` is a dict (copied), a path to a ``config.json``, or a
    local model folder (a Hugging Face snapshot) holding one."""
    if isinstance(source, Mapping):
        return dict(source)
    if not isinstance(source, str | os.PathLike):
        raise TypeError(f"config must be a mapping (the parsed config.json), a path to a "
                        f"config.json or a model folder, got {type(source).__name__}")
    path = Path(source)
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        raise ValueError(f"config: no such file {str(path)!r} (give a config.json or a "
                         "folder that holds one)")
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"config: {path} is not valid JSON ({err})") from None
    if not isinstance(loaded, Mapping):
        raise TypeError(f"config: {path} holds a JSON {type(loaded).__name__}, not an object")
    return loaded


def _family(config: Mapping, outer_type, strict: bool) -> tuple[str, Family, list[str]]:
    """The rules to apply: ``(name, family, notes)``. An unknown ``model_type`` is read with
    the generic rules only where its fields settle every layer (module docstring)."""
    model_type = config.get("model_type", outer_type)
    for name in (model_type, str(model_type).removesuffix("_text"), outer_type):
        if isinstance(name, str) and name in FAMILIES:
            return name, FAMILIES[name], []
    if model_type is None:
        return "generic", GENERIC, []
    unread = unread_fields(config, GENERIC)
    if not unread:
        return "generic", GENERIC, [f"model_type {model_type!r} is not a family posenc "
                                    "knows; its fields settle every layer, read by the "
                                    "Llama-style rules"]
    message = (f"model_type {model_type!r} is not one of the {len(FAMILIES)} families posenc "
               f"knows (posenc.configs.FAMILIES), and the generic Llama-style rules cannot "
               f"read its fields {', '.join(unread)}: its modelling code decides them")
    if strict:
        raise ValueError(message + "; pass strict=False to read it anyway, with a warning")
    warnings.warn(message + "; read with the generic rules (strict=False)", UserWarning,
                  stacklevel=3)
    return "generic", GENERIC, [message]


def _layout(config: Mapping, family: Family) -> str:
    interleave = config.get("rope_interleave")
    if interleave is None:
        return family.layout
    if not isinstance(interleave, bool):
        raise TypeError(f"rope_interleave must be true or false, got {interleave!r}")
    return "interleaved" if interleave else "half"


def _alibi(config: Mapping, family: Family, heads: int | None) -> np.ndarray | None:
    """Per-head ALiBi slopes where the family uses ALiBi, else ``None``."""
    uses = family.position == "alibi" or (family.position == "alibi_field"
                                          and config.get("alibi", False))
    if not uses:
        return None
    if heads is None:
        raise ValueError("ALiBi needs num_attention_heads (one slope per head)")
    attn = config.get("attn_config") or {}
    if not isinstance(attn, Mapping):
        raise TypeError(f"attn_config must be a mapping, got {attn!r}")
    if "attn_config" in family.fields:  # MPT: build_alibi_bias with alibi_bias_max
        if not attn.get("alibi", True):
            raise ValueError("attn_config['alibi'] is false: this MPT uses no position signal "
                             "posenc reads")
        slopes = mpt_alibi_slopes(heads, attn.get("alibi_bias_max", 8))
    else:  # BLOOM's build_alibi_tensor (Falcon's is a copy)
        slopes = alibi_slopes(heads)
    slopes.setflags(write=False)
    return slopes


def read_config(config, *, strict: bool = True) -> ModelPositions:
    """Read the position fields of a Hugging Face ``config.json``; see the module docstring
    for the fields.

    ``config``: a dict (as ``json.load`` gives it), a path to a ``config.json``, or a local
    model folder holding one (:func:`load_config`). Returns a :class:`ModelPositions` with
    one :class:`LayerPositions` per layer (``num_hidden_layers``). A multimodal config's
    ``text_config`` is read in its place.

    The rules of the config's family come from :data:`posenc.configs.FAMILIES`. A
    ``model_type`` not there is read by the generic Llama-style rules only where its own
    fields settle every layer; otherwise it is refused (``ValueError`` naming the fields it
    could not read), or, with ``strict=False``, read by those rules with a ``UserWarning``
    and a note in :attr:`ModelPositions.notes`. A config with no ``model_type`` is read by
    the generic rules.

    Raises ``ValueError`` naming the field for: an unknown ``rope_type`` or an unknown
    key inside the rope parameters; a missing required key; a ``factor``, ``rope_theta``
    or length that is not > 0 (a ``factor`` < 1 is refused too, by
    :func:`posenc.scaling.rope_scaling_frequencies`); ``layer_types`` or
    ``no_rope_layers`` whose length is not ``num_hidden_layers``; an unknown layer type;
    a ``head_dim`` that contradicts ``hidden_size / num_attention_heads`` in a family whose
    head is defined that way; ``rope_parameters`` and ``rope_scaling`` that disagree; an
    odd or zero rotary dimension. ``TypeError`` for a field of the wrong kind.
    """
    config = load_config(config)
    meta = {k: config.get(k) for k in ("_source", "_date", "_found_in")}
    outer_type = config.get("model_type")
    text = config.get("text_config")
    if text is not None:
        if not isinstance(text, Mapping):
            raise TypeError(f"text_config must be a mapping, got {type(text).__name__}")
        config = text
    config = _canonical({k: v for k, v in config.items() if not str(k).startswith("_")})
    family_name, family, notes = _family(config, outer_type, strict)
    model_type = config.get("model_type", outer_type)
    if "num_hidden_layers" not in config:
        raise ValueError("num_hidden_layers is required (one entry per layer is returned)")
    num_layers = check_int("num_hidden_layers", config["num_hidden_layers"])
    head_dim = _head_dim(config, family)
    _partial_alias(config, head_dim)
    if family.fixed_partial_rotary_factor is not None:  # BambaConfig: "hardcode for BC"
        config["partial_rotary_factor"] = family.fixed_partial_rotary_factor
    full_head = _full_head_dim(config, family)
    if str(meta["_found_in"] or "").startswith("transformers "):
        notes.append("built from a configuration class's defaults, not the checkpoint's "
                     "own config.json: its base and lengths may not be the model's")
    heads = config.get("num_attention_heads")
    heads = None if heads is None else check_int("num_attention_heads", heads)
    slopes = _alibi(config, family, heads)
    layout = _layout(config, family)

    def head_of(layer_type: str) -> int:
        return full_head if full_head is not None and layer_type == "full_attention" else head_dim
    max_len = config.get("max_position_embeddings")
    if max_len is not None:
        max_len = check_int("max_position_embeddings", max_len)

    by_type = rope_parameters_by_layer_type(config, family)
    specs = {t: (None if r is None else rope_spec(r, config, family)) for t, r in by_type.items()}
    computed = {}
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
        factor, long_factor = 1.0, None
        if rotates:
            if (key, layer_head) not in computed:  # one array per kind of layer, read-only
                computed[key, layer_head] = spec_frequencies(spec, layer_head)
                computed[key, layer_head][0].setflags(write=False)
            freqs, factor = computed[key, layer_head]
            factor, long_factor = _mscale(family, spec, by_type[key], float(factor))
        layer_temperature = temperature
        if family.temperature == "llama4":
            layer_temperature = None if kind.rotates else temperature  # NoPE layers only
        alibi = slopes is not None and kind.layer_type in ATTENTION_TYPES
        mrope = (by_type.get(key) or {}).get("mrope_section") if rotates else None
        layers.append(LayerPositions(
            index=i, layer_type=kind.layer_type,
            method=spec.rope_type if rotates else "alibi" if alibi else "none",
            frequencies=freqs if rotates else None,
            attention_factor=factor,
            window=kind.window, chunk=kind.chunk, head_dim=layer_head,
            rotary_dim=rotary_dim(spec, layer_head) if rotates else 0,
            theta=spec.theta if rotates else None, sinks=family.sinks,
            temperature=layer_temperature,
            softmax_scale_factor=_softmax_scale_factor(family, spec, by_type.get(key)),
            rope=spec if rotates else None,
            indexer_rotary_dim=indexer_dim if rotates else 0,
            layout=layout if rotates else None,
            alibi_slopes=slopes if alibi else None,
            mrope_section=None if mrope is None else tuple(mrope),
            long_attention_factor=long_factor))
    return ModelPositions(model_type, num_layers, head_dim, max_len, tuple(layers),
                          meta["_source"], meta["_date"], family_name, tuple(notes))


def _mscale(family: Family, spec: RopeSpec, rope: Mapping,
            factor: float) -> tuple[float, float | None]:
    """Phi-3.5-MoE (``PhimoeRotaryEmbedding.forward``): a scaled type's cos/sin multiplier is
    ``short_mscale`` up to ``L0`` and ``long_mscale`` past it; ``(factor, None)`` otherwise."""
    if family.attention_factor != "mscale_short_long" or spec.rope_type == "default":
        return factor, None
    if rope.get("short_mscale") is None or rope.get("long_mscale") is None:
        return factor, None
    return (_positive("short_mscale", rope["short_mscale"]),
            _positive("long_mscale", rope["long_mscale"]))
