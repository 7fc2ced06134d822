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
from .families import Family

__all__ = ["LayerKind", "LAYER_TYPES", "layer_kinds"]

#: The layer types :func:`layer_kinds` knows (``"attention"`` and ``"indexed_attention"`` are
#: read as full attention: DeepSeek-V3.2's sparse attention still sees the whole prefix).
LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention")


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


def _derived_types(config: Mapping, family: Family, num_layers: int,
                   rotates: list[bool]) -> list[str]:
    """``layer_types`` as the family's configuration class derives them."""
    rule = family.layer_rule
    window = config.get("sliding_window")
    if rule == "gemma3":
        period = check_int("sliding_window_pattern", config.get("sliding_window_pattern", 6))
        return ["sliding_attention" if (i + 1) % period else "full_attention"
                for i in range(num_layers)]
    if rule == "olmo3":
        return ["sliding_attention" if (i + 1) % 4 else "full_attention"
                for i in range(num_layers)]
    if rule == "gpt_oss":
        return ["sliding_attention" if (i + 1) % 2 else "full_attention"
                for i in range(num_layers)]
    if rule == "exaone4":
        pattern = config.get("sliding_window_pattern", 4)
        if window is None:
            return ["full_attention"] * num_layers
        if isinstance(pattern, str):
            if not pattern or set(pattern) - {"L", "G"}:
                raise ValueError("sliding_window_pattern must be an integer or a string of "
                                 f"'L' (local) and 'G' (global), got {pattern!r}")
            return ["sliding_attention" if pattern[i % len(pattern)] == "L" else
                    "full_attention" for i in range(num_layers)]
        period = check_int("sliding_window_pattern", pattern)
        return ["sliding_attention" if (i + 1) % period else "full_attention"
                for i in range(num_layers)]
    if rule == "qwen2":
        if not config.get("use_sliding_window", False) or window is None:
            return ["full_attention"] * num_layers
        first = check_int("max_window_layers", config.get("max_window_layers", 28), minimum=0)
        return ["sliding_attention" if i >= first else "full_attention"
                for i in range(num_layers)]
    if rule == "full_attention_interval":
        period = check_int("full_attention_interval", config.get("full_attention_interval", 4))
        return ["linear_attention" if (i + 1) % period else "full_attention"
                for i in range(num_layers)]
    if rule == "kimi_linear":
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
    if rule == "llama4":
        return ["chunked_attention" if r else "full_attention" for r in rotates]
    if rule == "smollm3":
        slide = bool(config.get("use_sliding_window", False)) and window is not None
        return ["sliding_attention" if slide and not r else "full_attention" for r in rotates]
    # generic: Mistral-style, one window on every layer unless switched off
    if window is not None and config.get("use_sliding_window", True):
        return ["sliding_attention"] * num_layers
    return ["full_attention"] * num_layers


def _rotating_layers(config: Mapping, family: Family, num_layers: int) -> list[bool]:
    """Which layers apply RoPE by ``no_rope_layers`` / ``no_rope_layer_interval`` (all,
    when the config has neither and its family has no default interval)."""
    flags = config.get("no_rope_layers")
    if flags is not None:
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


def layer_kinds(config: Mapping, family: Family, num_layers: int) -> list[LayerKind]:
    """One :class:`LayerKind` per layer of ``config`` (module docstring)."""
    rotates = _rotating_layers(config, family, num_layers)
    given = config.get("layer_types")
    if given is not None:
        types = []
        for i, t in enumerate(_list("layer_types", given, num_layers)):
            t = "full_attention" if t in ("attention", "indexed_attention") else t
            if t not in LAYER_TYPES:
                raise ValueError(f"layer_types[{i}] must be one of "
                                 f"{', '.join(map(repr, LAYER_TYPES))}; got {t!r}")
            types.append(t)
    else:
        types = _derived_types(config, family, num_layers, rotates)

    window = chunk = None
    switched_off = (family.layer_rule in ("qwen2", "smollm3")
                    and not config.get("use_sliding_window", False))
    if "sliding_attention" in types and not switched_off:  # Qwen2: no window unless switched on
        if config.get("sliding_window") is None:
            raise ValueError("layer_types has sliding_attention layers but sliding_window is "
                             "not given")
        window = check_int("sliding_window", config["sliding_window"])
    if "chunked_attention" in types:
        if config.get("attention_chunk_size") is None:
            raise ValueError("layer_types has chunked_attention layers but "
                             "attention_chunk_size is not given")
        chunk = check_int("attention_chunk_size", config["attention_chunk_size"])

    if family.nope_rule == "all":
        rotates = [False] * num_layers
    if family.nope_rule == "exaone4" and config.get("sliding_window") is not None:
        rotates = [r and t != "full_attention" for r, t in zip(rotates, types, strict=True)]
    return [LayerKind(t, window if t == "sliding_attention" else None,
                      chunk if t == "chunked_attention" else None,
                      r and t != "linear_attention")
            for t, r in zip(types, rotates, strict=True)]
