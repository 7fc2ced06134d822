"""Torch modules, one position method per file, and the registry that names them.

The protocol every method follows, and how to register your own, is documented in
:mod:`posenc.nn.positions`. The maths lives in the numpy modules (``posenc.rope`` etc.).
Importing this package registers the built-in methods in this order: none, sinusoidal,
learned (``absolute.py``), rope (``rotary.py``), alibi, shaw, t5; then RoPE as today's
models ship it: partial_rope, p_rope (``partial_rope.py``), xpos, axial_rope; then the
learned and contextual biases: kerple_power, kerple_log (``kerple.py``), fire, cope;
then position from the data: fox, stick_breaking. ``recurrence.py`` holds no position
method: it is the recurrent token mixer of hybrid models' layer patterns.
The order the course lists them in, and what it says of each, is not this registry's: it
is :data:`posenc.catalogue.BUILT_IN`'s.
"""

from .positions import (  # noqa: I001 -- registration order is the import order
    HOOKS,
    POSITION_METHODS,
    POSITIONS,
    AttentionSpec,
    NoPosition,
    PositionEncoding,
    PositionMethod,
    PositionSpec,
    check_position_options,
    get_position,
    register_position,
    unregister_position,
)
from .absolute import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from .rotary import RotaryEmbedding
from .alibi import ALiBiBias
from .shaw import ShawRelativePosition
from .t5 import T5RelativeBias
from .partial_rope import PartialRotaryEmbedding, ProportionalRotaryEmbedding
from .xpos import XPosEmbedding
from .axial_rope import AxialRotaryEmbedding
from .kerple import KerpleBias
from .fire import FIREBias
from .cope import CoPEBias
from .fox import ForgettingAttentionBias
from .stick_breaking import StickBreakingAttention
from .attention import MultiHeadSelfAttention
from .sinks import sink_key_value, softmax_with_sinks
from .recurrence import GatedDecayRecurrence

__all__ = [
    "ALiBiBias",
    "AttentionSpec",
    "AxialRotaryEmbedding",
    "CoPEBias",
    "FIREBias",
    "GatedDecayRecurrence",
    "ForgettingAttentionBias",
    "HOOKS",
    "KerpleBias",
    "LearnedPositionalEmbedding",
    "MultiHeadSelfAttention",
    "NoPosition",
    "PartialRotaryEmbedding",
    "ProportionalRotaryEmbedding",
    "POSITIONS",
    "POSITION_METHODS",
    "PositionEncoding",
    "PositionMethod",
    "PositionSpec",
    "RotaryEmbedding",
    "ShawRelativePosition",
    "SinusoidalPositionalEncoding",
    "StickBreakingAttention",
    "T5RelativeBias",
    "XPosEmbedding",
    "check_position_options",
    "get_position",
    "register_position",
    "sink_key_value",
    "softmax_with_sinks",
    "unregister_position",
]
