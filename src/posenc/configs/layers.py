"""Which layer is which: layer types, sliding windows, chunks and NoPE layers of a config.json.

Per layer, a config says (or its family's code implies, :mod:`posenc.configs.families`):

* its **type**: ``layer_types`` when given (``full_attention``, ``sliding_attention``,
  ``chunked_attention``, ``linear_attention``; the older ``attention`` and DeepSeek-V3.2's
  ``indexed_attention`` mean ``full_attention``), else derived as the family's
  configuration class derives it
  (``sliding_window_pattern``, ``max_window_layers``, ``full_attention_interval``, ...);
* its **reach**: ``sliding_window`` tokens for a ``sliding_attention`` layer,
  ``attention_chunk_size`` for a ``chunked_attention`` one;
* whether it **rotates**: ``no_rope_layers`` (SmolLM3, Llama 4: 1 = RoPE, 0 = NoPE) or a
  NoPE layer every ``no_rope_layer_interval`` layers; a ``linear_attention`` layer never
  rotates (its recurrence carries order); no layer of a family with ``nope_rule="all"``
  (Kimi Linear) rotates.

:func:`layer_kinds` returns one :class:`LayerKind` per layer. Contradictions raise
``ValueError`` naming the field: ``layer_types`` or ``no_rope_layers`` of the wrong
length, an unknown layer type, a sliding layer without a ``sliding_window``.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from .._validation import check_int
from .families import LAYER_RULES, Family

__all__ = ["LayerKind", "LAYER_TYPES", "ATTENTION_TYPES", "layer_kinds"]

#: The layer types :func:`layer_kinds` knows (``"attention"`` and ``"indexed_attention"`` are
#: read as full attention: DeepSeek-V3.2's sparse attention still sees the whole prefix).
LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention",
               "mamba", "conv", "mlp")

#: The layer types that attend (a query scores keys); the others mix tokens by a recurrence
#: (``linear_attention``: Gated DeltaNet, KDA, lightning attention; ``mamba``: Mamba/Mamba-2
#: state-space layers), a short convolution (``conv``), or not at all (``mlp``).
ATTENTION_TYPES = ("full_attention", "sliding_attention", "chunked_attention")

#: Other spellings of a layer type in config files (transformers' legacy names, hybrids'
#: ``layers_block_type``): ``hybrid`` is a layer with an attention block beside its Mamba
#: mixer (Zamba2, Falcon-H1), read as its attention.
_TYPE_NAMES = {"attention": "full_attention", "indexed_attention": "full_attention",
               "hybrid": "full_attention", "moe": "mlp", "mamba2": "mamba"}


class LayerKind(NamedTuple):
    """One layer's type, reach and whether it rotates."""

    layer_type: str
    window: int | None
    chunk: int | None
    rotates: bool


def _list(name: str, value, num_layers: int) -> list:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list with one entry per layer, got {value!r}")
    if len(value) != num_layers:
        raise ValueError(f"{name} has {len(value)} entries but num_hidden_layers is "
                         f"{num_layers}: one entry per layer")
    return list(value)


def _every(period_name: str, config: Mapping, default: int, num_layers: int, *,
           hit: str, miss: str, offset: int = 0) -> list[str]:
    """``hit`` where ``(i + 1 - offset) % period == 0`` (1-based period), ``miss`` elsewhere."""
    period = check_int(period_name, config.get(period_name, default))
    return [miss if (i + 1 - offset) % period else hit for i in range(num_layers)]


def _indices(name: str, config: Mapping, num_layers: int, default) -> set[int]:
    value = config.get(name, default)
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list of 0-based layer indices, got {value!r}")
    for n in value:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 0 <= n < num_layers:
            raise ValueError(f"{name} holds 0-based layer indices in [0, {num_layers - 1}], "
                             f"got {n!r}")
    return set(value)


def _rule_generic(config, family, num_layers, rotates):
    # Mistral-style: one window on every layer unless switched off
    if config.get("sliding_window") is not None and config.get("use_sliding_window", True):
        return ["sliding_attention"] * num_layers
    return ["full_attention"] * num_layers


def _rule_gemma3(config, family, num_layers, rotates):
    return _every("sliding_window_pattern", config, 6, num_layers,
                  hit="full_attention", miss="sliding_attention")


def _rule_gemma2(config, family, num_layers, rotates):
    # Gemma2Config.__post_init__: sliding where (i + 1) % 2, i.e. at even 0-based indices
    return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(num_layers)]


def _rule_olmo3(config, family, num_layers, rotates):
    return ["sliding_attention" if (i + 1) % 4 else "full_attention" for i in range(num_layers)]


def _rule_gpt_oss(config, family, num_layers, rotates):
    return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(num_layers)]


def _rule_exaone4(config, family, num_layers, rotates):
    pattern = config.get("sliding_window_pattern", 4)
    if config.get("sliding_window") is None:
        return ["full_attention"] * num_layers
    if isinstance(pattern, str):
        if not pattern or set(pattern) - {"L", "G"}:
            raise ValueError("sliding_window_pattern must be an integer or a string of "
                             f"'L' (local) and 'G' (global), got {pattern!r}")
        return ["sliding_attention" if pattern[i % len(pattern)] == "L" else
                "full_attention" for i in range(num_layers)]
    return _every("sliding_window_pattern", config, 4, num_layers,
                  hit="full_attention", miss="sliding_attention")


def _rule_qwen2(config, family, num_layers, rotates):
    if not config.get("use_sliding_window", False) or config.get("sliding_window") is None:
        return ["full_attention"] * num_layers
    first = check_int("max_window_layers", config.get("max_window_layers", 28), minimum=0)
    return ["sliding_attention" if i >= first else "full_attention" for i in range(num_layers)]


def _rule_full_attention_interval(config, family, num_layers, rotates):
    return _every("full_attention_interval", config, 4, num_layers,
                  hit="full_attention", miss="linear_attention")


def _rule_kimi_linear(config, family, num_layers, rotates):
    # KimiLinearConfig: the checkpoint's linear_attn_config lists both kinds, 1-indexed;
    # without it, full attention at every i > 0 with i % 4 == 0
    linear = config.get("linear_attn_config") or {}
    if not isinstance(linear, Mapping):
        raise TypeError(f"linear_attn_config must be a mapping, got {linear!r}")
    if "full_attn_layers" in linear and "kda_layers" in linear:
        types = [None] * num_layers
        for key, kind in (("full_attn_layers", "full_attention"),
                          ("kda_layers", "linear_attention")):
            for n in linear[key]:
                if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= num_layers:
                    raise ValueError(f"linear_attn_config['{key}'] holds 1-based layer "
                                     f"numbers in [1, {num_layers}], got {n!r}")
                types[n - 1] = kind
        if None in types:
            raise ValueError(f"linear_attn_config leaves layer {types.index(None) + 1} "
                             "(1-based) in neither full_attn_layers nor kda_layers")
        return types
    return ["full_attention" if i and i % 4 == 0 else "linear_attention"
            for i in range(num_layers)]


def _rule_llama4(config, family, num_layers, rotates):
    return ["chunked_attention" if r else "full_attention" for r in rotates]


def _rule_smollm3(config, family, num_layers, rotates):
    slide = (bool(config.get("use_sliding_window", False))
             and config.get("sliding_window") is not None)
    return ["sliding_attention" if slide and not r else "full_attention" for r in rotates]


def _rule_cohere2(config, family, num_layers, rotates):
    # Cohere2Config.__post_init__: sliding where (i + 1) % sliding_window_pattern (default 4)
    return _every("sliding_window_pattern", config, 4, num_layers,
                  hit="full_attention", miss="sliding_attention")


def _rule_modernbert(config, family, num_layers, rotates):
    # ModernBertConfig: full where i % global_attn_every_n_layers == 0 (0-based), else local
    period = check_int("global_attn_every_n_layers", config.get("global_attn_every_n_layers", 3))
    return ["sliding_attention" if i % period else "full_attention" for i in range(num_layers)]


def _rule_jamba(config, family, num_layers, rotates):
    # JambaConfig.layers_block_type: attention where i % period == offset, Mamba elsewhere
    period = check_int("attn_layer_period", config.get("attn_layer_period", 8))
    offset = check_int("attn_layer_offset", config.get("attn_layer_offset", 4), minimum=0)
    if offset >= period:
        raise ValueError(f"attn_layer_offset ({offset}) must be smaller than attn_layer_period "
                         f"({period})")
    return ["full_attention" if i % period == offset else "mamba" for i in range(num_layers)]


_NEMOTRON_H = {"M": "mamba", "*": "full_attention", "-": "mlp", "E": "mlp"}


def _rule_nemotron_h(config, family, num_layers, rotates):
    # NemotronHConfig._pattern_to_list: M Mamba-2, * attention, - MLP, E mixture of experts
    pattern = config.get("hybrid_override_pattern")
    if not isinstance(pattern, str) or set(pattern) - set(_NEMOTRON_H):
        raise ValueError("nemotron_h needs layer_types or hybrid_override_pattern, a string of "
                         f"'M' (Mamba-2), '*' (attention), '-' (MLP), 'E' (experts); got "
                         f"{pattern!r}")
    if len(pattern) != num_layers:
        raise ValueError(f"hybrid_override_pattern has {len(pattern)} layers but "
                         f"num_hidden_layers is {num_layers}")
    return [_NEMOTRON_H[c] for c in pattern]


def _rule_bamba(config, family, num_layers, rotates):
    # BambaConfig.layers_block_type: attention at attn_layer_indices, Mamba-2 elsewhere
    attention = _indices("attn_layer_indices", config, num_layers, [])
    return ["full_attention" if i in attention else "mamba" for i in range(num_layers)]


def _rule_lfm2(config, family, num_layers, rotates):
    # Lfm2Config.__post_init__: attention at full_attn_idxs (default all), convolution elsewhere
    attention = _indices("full_attn_idxs", config, num_layers, list(range(num_layers)))
    return ["full_attention" if i in attention else "conv" for i in range(num_layers)]


def _rule_falcon_h1(config, family, num_layers, rotates):
    # FalconH1DecoderLayer: attention and a Mamba-2 mixer side by side in every layer
    return ["full_attention"] * num_layers


def _rule_minimax(config, family, num_layers, rotates):
    # MiniMaxConfig.__post_init__: full attention at even indices, lightning attention at odd
    return ["full_attention" if (i + 1) % 2 else "linear_attention" for i in range(num_layers)]


def _rule_granitemoehybrid(config, family, num_layers, rotates):
    # GraniteMoeHybridConfig.__post_init__: every layer Mamba-2 when layer_types is absent
    return ["mamba"] * num_layers


#: Zamba2Config's default ``layers_block_type`` (Zamba2-2.7B's 54 layers).
_ZAMBA2_DEFAULT = (["mamba"] + (["mamba"] * 5 + ["full_attention"]) * 7 + ["mamba"] * 4
                   + ["full_attention"] + ["mamba"] * 3 + ["full_attention"] + ["mamba"] * 2)


def _rule_zamba2(config, family, num_layers, rotates):
    # Zamba2Config.__post_init__: mamba2 layers, and "hybrid" ones (a shared attention block)
    if num_layers != len(_ZAMBA2_DEFAULT):
        raise ValueError(f"zamba2 without layers_block_type has Zamba2Config's default of "
                         f"{len(_ZAMBA2_DEFAULT)} layers, but num_hidden_layers is "
                         f"{num_layers}: give layers_block_type")
    return list(_ZAMBA2_DEFAULT)


#: One function per name of :data:`posenc.configs.families.LAYER_RULES`.
_RULES = {name.removeprefix("_rule_"): f for name, f in list(globals().items())
          if name.startswith("_rule_")}
if set(_RULES) != set(LAYER_RULES):
    raise ImportError(f"layers.py derives layer types by {sorted(_RULES)} but "
                      f"families.LAYER_RULES lists {sorted(LAYER_RULES)}")


def _derived_types(config: Mapping, family: Family, num_layers: int,
                   rotates: list[bool]) -> list[str]:
    """``layer_types`` as the family's configuration class derives them."""
    return _RULES[family.layer_rule](config, family, num_layers, rotates)


def _rotating_layers(config: Mapping, family: Family, num_layers: int) -> list[bool]:
    """Which layers apply RoPE by ``no_rope_layers`` / ``no_rope_layer_interval`` (all,
    when the config has neither and its family has no default interval)."""
    flags = config.get("no_rope_layers")
    if flags is not None and not (isinstance(flags, Sequence) and not isinstance(flags, str)
                                  and len(flags) == 0):  # [] means the default (Llama4Config)
        flags = _list("no_rope_layers", flags, num_layers)
        out = []
        for i, f in enumerate(flags):
            if isinstance(f, bool) or (isinstance(f, numbers.Integral) and f in (0, 1)):
                out.append(bool(f))
            else:
                raise ValueError(f"no_rope_layers[{i}] must be 1 (the layer applies RoPE) or 0 "
                                 f"(NoPE), got {f!r}")
        return out
    interval = config.get("no_rope_layer_interval", family.default_nope_interval)
    if interval is None:
        return [True] * num_layers
    interval = check_int("no_rope_layer_interval", interval)
    return [bool((i + 1) % interval) for i in range(num_layers)]


def _given_types(config: Mapping, family: Family, num_layers: int) -> list[str] | None:
    given = config.get("layer_types")
    name = "layer_types"
    if given is None and "layers_block_type" in family.fields:
        given, name = config.get("layers_block_type"), "layers_block_type"
    if given is None:
        return None
    types = []
    for i, t in enumerate(_list(name, given, num_layers)):
        t = _TYPE_NAMES.get(t, t)
        if t == "linear_attention":  # transformers' name for hybrids' Mamba layers too
            t = family.recurrent_type
        if t not in LAYER_TYPES:
            raise ValueError(f"{name}[{i}] must be one of "
                             f"{', '.join(map(repr, LAYER_TYPES))}; got {t!r}")
        types.append(t)
    return types


def _window(config: Mapping, family: Family) -> int | None:
    if family.layer_rule == "modernbert" and config.get("sliding_window") is None:
        # ModernBertConfig.sliding_window: local_attention // 2 tokens on each side
        return check_int("local_attention", config.get("local_attention", 128), minimum=2) // 2
    if config.get("sliding_window") is None:
        return None
    return check_int("sliding_window", config["sliding_window"])


def layer_kinds(config: Mapping, family: Family, num_layers: int) -> list[LayerKind]:
    """One :class:`LayerKind` per layer of ``config`` (module docstring)."""
    rotates = _rotating_layers(config, family, num_layers)
    types = _given_types(config, family, num_layers)
    if types is None:
        types = _derived_types(config, family, num_layers, rotates)

    window = chunk = None
    switched_off = (family.layer_rule in ("qwen2", "smollm3")
                    and not config.get("use_sliding_window", False))
    if "sliding_attention" in types and not switched_off:  # Qwen2: no window unless switched on
        window = _window(config, family)
        if window is None:
            raise ValueError("layer_types has sliding_attention layers but sliding_window is "
                             "not given")
    if "chunked_attention" in types:
        if config.get("attention_chunk_size") is None:
            raise ValueError("layer_types has chunked_attention layers but "
                             "attention_chunk_size is not given")
        chunk = check_int("attention_chunk_size", config["attention_chunk_size"])

    alibi = family.position == "alibi_field" and bool(config.get("alibi", False))  # Falcon
    if family.nope_rule == "all" or family.position in ("alibi", "none") or alibi:
        rotates = [False] * num_layers
    if family.nope_rule == "exaone4" and config.get("sliding_window") is not None:
        rotates = [r and t != "full_attention" for r, t in zip(rotates, types, strict=True)]
    if family.nope_rule == "full_attention":  # Cohere 2: the global layers apply no RoPE
        rotates = [r and t != "full_attention" for r, t in zip(rotates, types, strict=True)]
    if family.nope_rule == "position_embedding_type":  # Granite 4: RoPE only when named
        kind = config.get("position_embedding_type")
        if kind not in (None, "rope", "nope"):
            raise ValueError(f"position_embedding_type must be 'rope', 'nope' or null, got "
                             f"{kind!r}")
        rotates = [r and kind == "rope" for r in rotates]
    if family.nope_rule == "use_mem_rope":  # Zamba2: the shared attention rotates only so
        rotates = [r and bool(config.get("use_mem_rope", False)) for r in rotates]
    return [LayerKind(t, window if t == "sliding_attention" else None,
                      chunk if t == "chunked_attention" else None,
                      r and t in ATTENTION_TYPES)
            for t, r in zip(types, rotates, strict=True)]
