"""Position chosen per layer: the local/global layer patterns of 2024-26 models, scaled down.

A :class:`LayerSpec` says how ONE attention layer handles position and reach: its position
method (any name in :data:`posenc.nn.POSITIONS`) and that method's options (e.g. ``base``),
how far it sees (``"full"`` causal attention, a sliding ``"window"`` or ``"chunk"`` ed
attention, :mod:`posenc.masks`), whether it has learned per-head attention sinks
(:func:`posenc.nn.softmax_with_sinks`) and whether its queries get Llama 4's attention
temperature (:func:`posenc.scaling.attention_temperature`).

A :class:`LayerPattern` is a cycle of specs repeated up the stack (layer ``i`` uses
``cycle[i % len(cycle)]``), with window and chunk sizes given as a FRACTION of the training
length ``L_train`` so the pattern fits the tiny model. ``TinyLMConfig(pattern="gemma3")``
builds one; :data:`PATTERNS` holds the registered patterns, :func:`register_pattern` adds one.

The named patterns and how they are scaled (real models from their configs; the tiny
model's ``L_train`` is ``TinyLMConfig.pattern_length``, 64 by default):

============  ==========================================  =================================
name          real model (year, source)                   tiny model (``L = L_train``)
============  ==========================================  =================================
gemma3        5 sliding-window RoPE (window 1024, base    5 window ``L/4`` base 1e4 :
              1e4) : 1 global RoPE (base 1e6); Gemma 3,   1 full, base 1e6
              2025, arXiv:2503.19786
llama4        3 chunked RoPE (chunk 8192) : 1 global      3 chunk ``L/4`` RoPE : 1 full
              NoPE with temperature (floor_scale 8192,    NoPE, temperature with
              attn_scale 0.1); Llama 4, April 2025,       floor_scale = chunk = ``L/4``,
              Hugging Face ``Llama4TextConfig``           attn_scale 0.1
command_a     3 sliding-window RoPE (window 4096) :       3 window ``L/4`` RoPE : 1 full
              1 full NoPE; Cohere 2025, arXiv:2504.00698  NoPE
gpt_oss       alternating 128-token banded and full       banded ``L/8`` : full, both RoPE,
              layers, learned sinks on every layer;       sinks on every layer (no YaRN:
              OpenAI 2025 model card, ``GptOssConfig``    the tiny model runs at ``L``)
kimi_linear   3 Kimi Delta Attention (recurrent) : 1 MLA     3 recurrent : 1 full NoPE
              with no position; Moonshot, October 2025,   attention
              the bundled ``kimi-linear-48b-a3b``
              config's ``layer_types``
qwen3_next    3 Gated DeltaNet (recurrent) : 1 gated      3 recurrent : 1 full attention,
              attention, RoPE on 25 % of each head        partial RoPE 0.25 (half layout),
              (base 1e4); Qwen, September 2025, the       output gate
              bundled ``qwen3-next-80b-a3b`` config
============  ==========================================  =================================

The recurrent layers of the two hybrids are :class:`posenc.nn.GatedDecayRecurrence` (a short
convolution and a gated diagonal decay), simpler than KDA or Gated DeltaNet (no delta rule).
Granite 4.0-H and Nemotron-H mix the same two kinds of layer (Mamba-2, and attention that
applies no rotation: Hugging Face's ``GraniteMoeHybridAttention`` with
``position_embedding_type=None`` and ``NemotronHAttention``), each in its own proportion.

The fractions are much larger than the real ones (Gemma 3's window is 1/32 of its 32K
pre-training length; GPT-OSS's band 1/32 of 4096) because a 64-token model with a 2-token
window would learn nothing; a quarter keeps the window small next to ``L_train`` while
letting a few layers cover it. Llama 4 uses floor_scale = chunk (both 8192); the tiny
pattern keeps that equality. A model shallower than a cycle (Gemma 3's is 6 layers; the
experiment's models have 4) keeps the cycle's global layer on top and drops local ones:
4-layer Gemma 3 is 3 sliding-window layers and 1 global one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from ._validation import check_bool, check_choice, check_float, check_int
from .nn import PositionSpec, get_position

__all__ = ["LayerSpec", "LayerPattern", "PATTERNS", "register_pattern", "get_pattern",
           "REACHES", "MIXERS"]

#: How far a layer sees: all earlier tokens, a sliding window, or its own chunk.
REACHES = ("full", "window", "chunk")

#: What mixes a layer's tokens: attention, or the recurrent layer of hybrid models
#: (:class:`posenc.nn.GatedDecayRecurrence`, which has no position method and full reach).
MIXERS = ("attention", "recurrent")


@dataclass(frozen=True)
class LayerSpec:
    """One attention layer's position method and reach.

    ``position``: a registered method name (``"none"`` for NoPE); ``options``: that
    method's options, its constructor's keywords (checked when the spec is made; stored
    as sorted ``(name, value)`` pairs, so the spec stays hashable; :attr:`position_spec`
    holds both as one :class:`~posenc.nn.PositionSpec`). An option is the method's
    whatever its name, and the reach fields are the layer's: ``options={"window": 8}``
    gives the method its ``window`` and the layer no sliding window. ``reach``: one of
    :data:`REACHES`; ``size``: the window or chunk in tokens (``None`` for ``"full"``);
    ``sinks``: a learned sink logit per head; ``temperature``: ``None`` or
    ``(floor_scale, attn_scale)`` for Llama 4's query multiplier; ``gate``: a sigmoid gate
    on each head's output (Qwen3-Next's gated attention, the layer's ``output_gate``).
    ``mixer``: one of :data:`MIXERS`; a ``"recurrent"`` layer (a hybrid model's Mamba-2 or
    KDA layer, here :class:`~posenc.nn.GatedDecayRecurrence`) has position ``"none"``, full
    reach, no sinks, temperature or gate, and its ``options`` are the recurrence's
    (:data:`~posenc.nn.recurrence.RECURRENCE_OPTIONS`: ``conv_size``, ``decay``).
    """

    position: str = "rope"
    options: tuple = ()
    reach: str = "full"
    size: int | None = None
    sinks: bool = False
    temperature: tuple | None = None
    gate: bool = False
    mixer: str = "attention"

    def __post_init__(self):
        options = dict(self.options)
        if not all(isinstance(k, str) for k in options):
            raise TypeError(f"options must map option names to values, got {self.options!r}")
        object.__setattr__(self, "options", tuple(sorted(options.items())))
        if check_choice("mixer", self.mixer, MIXERS) == "recurrent":
            self._check_recurrent(options)
            return
        method = get_position(self.position)
        if "embed" in method.hooks:
            raise ValueError(f"a layer's position must act inside attention; {self.position!r} "
                             "is added once at the embeddings")
        _ = self.position_spec  # checks the option names, once (and keeps the spec)
        check_choice("reach", self.reach, REACHES)
        if self.reach == "full":
            if self.size is not None:
                raise ValueError(f"size is only for reach 'window' or 'chunk', got {self.size}")
        else:
            check_int("size", self.size)
        check_bool("sinks", self.sinks)
        check_bool("gate", self.gate)
        if self.temperature is not None:
            if not isinstance(self.temperature, tuple) or len(self.temperature) != 2:
                raise TypeError("temperature must be None or (floor_scale, attn_scale), got "
                                f"{self.temperature!r}")
            check_float("floor_scale", self.temperature[0], greater_than=0.0)
            check_float("attn_scale", self.temperature[1], at_least=0.0)

    def _check_recurrent(self, options: dict) -> None:
        from .nn.recurrence import RECURRENCE_OPTIONS, GatedDecayRecurrence

        unknown = set(options) - set(RECURRENCE_OPTIONS)
        if unknown:
            raise TypeError(f"a recurrent layer's options are {', '.join(RECURRENCE_OPTIONS)};"
                            f" got {', '.join(sorted(unknown))}")
        if (self.position, self.reach, self.size, self.sinks, self.temperature, self.gate) != (
                "none", "full", None, False, None, False):
            raise ValueError("a recurrent layer has no position method, window, chunk, sinks, "
                             "temperature or gate: leave position='none', reach='full', "
                             "size=None, sinks=False, temperature=None, gate=False")
        GatedDecayRecurrence(8, **options)  # checks the values

    @property
    def recurrence_options(self) -> dict:
        """A recurrent layer's options with the defaults filled in (``{}`` for attention)."""
        from .nn.recurrence import RECURRENCE_OPTIONS

        if self.mixer != "recurrent":
            return {}
        return {**RECURRENCE_OPTIONS, **dict(self.options)}

    @cached_property
    def position_spec(self) -> PositionSpec:
        """The layer's method and its options as one :class:`~posenc.nn.PositionSpec`
        (``"none"`` for a recurrent layer, whose options are its recurrence's)."""
        if self.mixer == "recurrent":
            return PositionSpec("none")
        return PositionSpec(self.position, **dict(self.options))

    def describe(self) -> str:
        """One short line: ``"rope window 16 base 1e+04 sinks"``, ``"none full temperature"``,
        ``"rope full gate"``, ``"recurrent conv_size 4 decay True"``."""
        if self.mixer == "recurrent":
            return " ".join(["recurrent", *(f"{k} {v}" for k, v in
                                            self.recurrence_options.items())])
        parts = [self.position, self.reach if self.size is None else f"{self.reach} {self.size}"]
        parts += [f"{k} {v:.0e}" if isinstance(v, float) else f"{k} {v}" for k, v in self.options]
        parts += ["sinks"] * self.sinks + ["temperature"] * (self.temperature is not None)
        parts += ["gate"] * self.gate
        return " ".join(parts)

    @property
    def window(self) -> int | None:
        return self.size if self.reach == "window" else None

    @property
    def chunk(self) -> int | None:
        return self.size if self.reach == "chunk" else None


@dataclass(frozen=True)
class LayerPattern:
    """A cycle of layer kinds, with window/chunk sizes as fractions of ``L_train``.

    ``cycle``: tuple of dicts, the :class:`LayerSpec` fields of each layer kind, where
    ``size`` is a fraction of ``L_train`` and ``temperature`` may be ``"chunk"``
    (floor_scale = this pattern's chunk, attn_scale 0.1, as Llama 4). ``summary``: one
    line for tables; ``label``: a short name for legends (the name when empty); ``color``:
    its colour in figures (hex; the course picks one when empty).
    """

    name: str
    cycle: tuple
    summary: str = ""
    label: str = ""
    color: str = ""

    def layers(self, num_layers: int, train_length: int) -> tuple[LayerSpec, ...]:
        """The concrete specs of a ``num_layers``-deep model trained at ``train_length``:
        sizes ``max(1, round(fraction * train_length))`` tokens.

        A model shallower than the cycle keeps the cycle's last kind (the global layer of
        every named pattern) on top: Gemma 3's 5 : 1 in 4 layers is 3 local : 1 global,
        not 4 local layers and no global one."""
        check_int("num_layers", num_layers)
        check_int("train_length", train_length)
        specs = [self._resolve(kind, train_length) for kind in self.cycle]
        if num_layers < len(specs):
            return (*specs[:num_layers - 1], specs[-1])
        return tuple(specs[i % len(specs)] for i in range(num_layers))

    def _resolve(self, kind: dict, train_length: int) -> LayerSpec:
        kind = dict(kind)
        if kind.get("size") is not None:
            kind["size"] = max(1, round(kind["size"] * train_length))
        if kind.get("temperature") == "chunk":
            chunk = next(self._resolve(k, train_length).size for k in self.cycle
                         if k.get("reach") == "chunk")
            kind["temperature"] = (float(chunk), 0.1)
        return LayerSpec(**kind)


#: Registered patterns by name, in registration order.
PATTERNS: dict[str, LayerPattern] = {}


def register_pattern(pattern: LayerPattern, *, replace: bool = False) -> LayerPattern:
    """Add ``pattern`` to :data:`PATTERNS` (its specs are checked now, at ``L_train = 64``);
    an existing name raises ``ValueError`` unless ``replace=True``."""
    if not isinstance(pattern, LayerPattern):
        raise TypeError(f"pattern must be a LayerPattern, got {type(pattern).__name__}")
    if not isinstance(pattern.name, str) or not pattern.name:
        raise ValueError(f"pattern name must be a non-empty string, got {pattern.name!r}")
    if pattern.name in PATTERNS and not replace:
        raise ValueError(f"pattern {pattern.name!r} is already registered (replace=True "
                         "to redefine it)")
    if not pattern.cycle:
        raise ValueError(f"pattern {pattern.name!r} needs at least one layer kind")
    if pattern.color and not re.fullmatch(r"#[0-9A-Fa-f]{6}", pattern.color):
        raise ValueError(f"pattern {pattern.name!r}: color must be '' or a hex colour like "
                         f"'#4477AA', got {pattern.color!r}")
    pattern.layers(len(pattern.cycle), 64)
    PATTERNS[pattern.name] = pattern
    return pattern


def get_pattern(name: str) -> LayerPattern:
    """The registered pattern called ``name``."""
    if name not in PATTERNS:
        raise ValueError(f"pattern must be one of {', '.join(map(repr, PATTERNS))}; "
                         f"got {name!r}")
    return PATTERNS[name]


_LOCAL = 0.25  # window / chunk as a fraction of L_train (module docstring)

register_pattern(LayerPattern("gemma3", (
    *[dict(position="rope", options={"base": 1e4}, reach="window", size=_LOCAL)] * 5,
    dict(position="rope", options={"base": 1e6}),
), "5 sliding-window RoPE (base 1e4) : 1 global RoPE (base 1e6)", "Gemma 3 layers",
   "#4477AA"))

register_pattern(LayerPattern("llama4", (
    *[dict(position="rope", reach="chunk", size=_LOCAL)] * 3,
    dict(position="none", temperature="chunk"),
), "3 chunked RoPE : 1 global NoPE with attention temperature", "Llama 4 layers",
   "#EE6677"))

register_pattern(LayerPattern("command_a", (
    *[dict(position="rope", reach="window", size=_LOCAL)] * 3,
    dict(position="none"),
), "3 sliding-window RoPE : 1 full NoPE", "Command A layers",
   "#CCBB44"))

_RECURRENT = dict(position="none", mixer="recurrent")

register_pattern(LayerPattern("kimi_linear", (
    *[_RECURRENT] * 3,
    dict(position="none"),
), "3 recurrent (short convolution and gated decay) : 1 full NoPE attention",
   "Kimi Linear layers", "#AA3377"))

register_pattern(LayerPattern("qwen3_next", (
    *[_RECURRENT] * 3,
    dict(position="partial_rope", options={"partial_rotary_factor": 0.25, "rope_layout": "half"},
         gate=True),
), "3 recurrent : 1 full attention with RoPE on 25 % of each head and a gated output",
   "Qwen3-Next layers", "#228833"))

register_pattern(LayerPattern("gpt_oss", (
    dict(position="rope", reach="window", size=_LOCAL / 2, sinks=True),
    dict(position="rope", sinks=True),
), "alternating banded and full RoPE layers, learned sinks on every layer", "GPT-OSS layers",
   "#66CCEE"))
