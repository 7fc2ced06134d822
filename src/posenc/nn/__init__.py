"""Torch modules, one concept per file; the maths lives in the numpy modules above."""

from .absolute import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from .attention import POSITION_METHODS, MultiHeadSelfAttention
from .bias import ALiBiBias, T5RelativeBias
from .rotary import RotaryEmbedding
from .shaw import ShawRelativePosition

__all__ = [
    "ALiBiBias",
    "LearnedPositionalEmbedding",
    "MultiHeadSelfAttention",
    "POSITION_METHODS",
    "RotaryEmbedding",
    "ShawRelativePosition",
    "SinusoidalPositionalEncoding",
    "T5RelativeBias",
]
