"""A tiny decoder-only Transformer language model with a switchable position encoding.

nanoGPT-sized and nanoGPT-shaped: token embedding, ``num_layers`` pre-norm blocks
(``x + attn(LN(x))``, then ``x + mlp(LN(x))``), a final LayerNorm and a linear
head to next-token logits. Attention is :class:`posenc.nn.MultiHeadSelfAttention`
with ``causal=True``, so the library's one definition of each encoding is the one
the LM trains with.

``position`` names any method registered in :data:`posenc.nn.POSITIONS` (see
:mod:`posenc.nn.positions`); where it enters follows from the hooks it uses:

* the ``embed`` hook (absolute methods: sinusoidal, learned): a ``[seq, d_model]``
  table is added ONCE to the token embeddings, as in the original Transformer and
  GPT-2; the blocks' attention then runs with ``position="none"``.
* any other hook (RoPE, ALiBi, T5, Shaw, ...): the method acts inside attention in
  EVERY block. A method whose module says ``shared_across_layers`` (T5) has one
  module for all blocks, as in T5 itself (the option ``share_t5_bias=False`` gives each
  block its own); the others have one per block (Shaw's tables, as in Shaw et al.).
* ``"none"`` (NoPE, Kazemnejad et al., 2023): no encoding anywhere. A causal
  decoder can still infer position: the causal mask itself breaks permutation
  symmetry (a token can count how many tokens it attends to).

NoPE layers among position layers: ``nope_every=k`` (``k >= 1``) leaves every ``k``-th
block (blocks ``k-1, 2k-1, ...``, counting from 0) without any position, as Llama 4's
interleaved-RoPE ("iRoPE") layers do with ``k = 4``; the other blocks use ``position``.
``0`` (the default) means no such layers. Only for a method that acts inside attention.

Position chosen per layer: ``pattern="gemma3"`` (any name in
:data:`posenc.layer_patterns.PATTERNS`) gives each block its own position method and
options, reach (full, sliding window, chunk), sinks and temperature, sized for
``L_train = pattern_length`` (:mod:`posenc.layer_patterns`). ``position`` then stays
``"none"`` and ``nope_every`` 0: the pattern says where NoPE layers are. (Llama 4 as shipped
is ``pattern="llama4"``: its RoPE layers are also chunked and its NoPE layers' queries get a
temperature, which ``nope_every=4`` alone does not do.)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property

import torch
import torch.nn.functional as F
from torch import nn

from ._validation import check_float, check_frequencies, check_int
from .layer_patterns import LayerPattern, LayerSpec, get_pattern
from .nn import (
    AttentionSpec,
    GatedDecayRecurrence,
    MultiHeadSelfAttention,
    PositionSpec,
    RotaryEmbedding,
    get_position,
)
from .nn.positions import LiveNames

__all__ = ["ABSOLUTE_METHODS", "TinyLMConfig", "FeedForward", "Block", "TinyLM"]

#: Encodings added once to the embeddings (they use the ``embed`` hook); every other
#: method acts inside attention. A live view of the registry.
ABSOLUTE_METHODS = LiveNames(lambda method: "embed" in method.hooks)


@dataclass(frozen=True)
class TinyLMConfig:
    """Everything that defines a :class:`TinyLM`.

    ``vocab_size`` tokens (256 for bytes); ``d_model`` wide, ``num_heads`` heads,
    ``num_layers`` blocks with a ``d_ff``-wide MLP. ``position`` is one of
    :data:`posenc.nn.POSITION_METHODS`, and ``options`` its options: the keyword
    arguments of the method's constructor (``build``) and nothing else, e.g.
    ``TinyLMConfig(position="learned", options={"max_positions": 64})``; an option the
    method does not take raises ``TypeError`` naming the ones it does, and the method's
    own defaults fill the rest (``axial_rope`` keeps its base 100). Every option is the
    method's, whatever its name: an option ``window`` reaches the method, and no block gets
    a sliding window from it (a layer's reach comes from ``pattern``). ``options`` is stored
    as sorted ``(name, value)`` pairs so the config stays hashable; :attr:`position_spec`
    is the method and its options as one :class:`~posenc.nn.PositionSpec` (checked once,
    when the config is made), :meth:`position_options` the options with the defaults.
    ``nope_every=k`` makes every ``k``-th block a NoPE block (module docstring); 0 keeps
    position in all. ``pattern`` names a per-layer
    pattern (:data:`posenc.layer_patterns.PATTERNS`), whose windows and chunks are sized for
    the training length ``pattern_length`` (``L_train``; unused without a pattern); an
    unregistered :class:`~posenc.layer_patterns.LayerPattern` value works too (a control
    variant of a registered one, say).
    """

    vocab_size: int = 256
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2
    d_ff: int = 256
    position: str = "none"
    options: tuple = ()
    nope_every: int = 0
    pattern: str | LayerPattern = ""
    pattern_length: int = 64

    def __post_init__(self):
        options = dict(self.options)
        if not all(isinstance(k, str) for k in options):
            raise TypeError(f"options must map option names to values, got {self.options!r}")
        object.__setattr__(self, "options", tuple(sorted(options.items())))
        for name in ("vocab_size", "d_model", "num_heads", "num_layers", "d_ff"):
            check_int(name, getattr(self, name))
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by num_heads "
                             f"({self.num_heads})")
        position = self.position_spec  # checks the option names, once
        # the method's constructor validates the values (a bad base, interpolate, ...)
        # (a trial build that leaves the random stream alone: seeded runs build configs
        # after seeding, and must draw the same initial weights as before this check)
        with torch.random.fork_rng(devices=[]):
            position.build(AttentionSpec(self.d_model, self.num_heads, causal=True,
                                         in_model=True))
        check_int("nope_every", self.nope_every, minimum=0)
        if self.nope_every and self.position in ABSOLUTE_METHODS:
            raise ValueError(f"nope_every needs a position method that acts inside attention; "
                             f"{self.position!r} is added once at the embeddings")
        check_int("pattern_length", self.pattern_length, minimum=2)
        if self.pattern:
            self.layer_pattern.layers(self.num_layers, self.pattern_length)  # checks them
            if self.position != "none" or self.nope_every:
                raise ValueError(f"pattern {self.pattern!r} sets each layer's position; leave "
                                 f"position='none' and nope_every=0, got {self.position!r}, "
                                 f"{self.nope_every}")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.num_heads

    def layer_specs(self) -> tuple[LayerSpec, ...] | None:
        """Each block's :class:`~posenc.layer_patterns.LayerSpec` under ``pattern`` (sizes
        for ``L_train = pattern_length``); ``None`` without a pattern."""
        if not self.pattern:
            return None
        return self.layer_pattern.layers(self.num_layers, self.pattern_length)

    @property
    def layer_pattern(self) -> LayerPattern | None:
        """The :class:`~posenc.layer_patterns.LayerPattern` that ``pattern`` names (or is)."""
        if not self.pattern:
            return None
        return self.pattern if isinstance(self.pattern, LayerPattern) else get_pattern(
            self.pattern)

    def block_positions(self) -> tuple[str, ...]:
        """The position method of each block's attention, in order (``"none"`` for a
        NoPE block, and for every block of an absolute method, added at the embeddings)."""
        if self.pattern:
            return tuple(spec.position for spec in self.layer_specs())
        own = "none" if self.position in ABSOLUTE_METHODS else self.position
        k = self.nope_every
        return tuple("none" if k and (i + 1) % k == 0 else own for i in range(self.num_layers))

    @cached_property
    def position_spec(self) -> PositionSpec:
        """``position`` and ``options`` as one :class:`~posenc.nn.PositionSpec` (made, and
        its option names checked, once per config)."""
        return PositionSpec(self.position, **dict(self.options))

    def position_options(self) -> dict:
        """The method's options: its defaults, overridden by :attr:`options`."""
        return {**get_position(self.position).options, **dict(self.options)}

    def with_options(self, **changes) -> TinyLMConfig:
        """A copy with some of the method's options changed (validated again)."""
        return self.replace(options={**dict(self.options), **changes})

    def replace(self, **changes) -> TinyLMConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


class FeedForward(nn.Module):
    """The position-wise MLP: ``Linear(d_model, d_ff) -> GELU -> Linear(d_ff, d_model)``.

    Shape: ``[batch, seq, d_model]`` to ``[batch, seq, d_model]``.
    """

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.up = nn.Linear(d_model, d_ff)
        self.down = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x)))


class Block(nn.Module):
    """One pre-norm decoder block: ``x + attn(LN(x))``, then ``x + mlp(LN(x))``.

    Shape: ``[batch, seq, d_model]`` to ``[batch, seq, d_model]``. The attention uses the
    config's position method if it is relative, ``"none"`` if it is absolute (the
    absolute table was already added at the embeddings); ``position`` overrides that
    (:class:`TinyLM` passes ``"none"`` for a NoPE block), and ``layer`` (a pattern's
    :class:`~posenc.layer_patterns.LayerSpec`) overrides both. The config's options go
    only to the config's own method; a pattern layer's method gets the layer's options.
    Options are the method's and reach is the layer's, whatever their names. A recurrent
    layer (``layer.mixer == "recurrent"``) has :attr:`recurrence` (a
    :class:`~posenc.nn.GatedDecayRecurrence`) where an attention layer has :attr:`attn`;
    the other is ``None``.
    """

    def __init__(self, config: TinyLMConfig, position: str | PositionSpec | None = None,
                 layer: LayerSpec | None = None):
        super().__init__()
        if position is None:
            position = "none" if config.position in ABSOLUTE_METHODS else config.position
        reach = {}  # a pattern's layer: its own method and options, reach, sinks, temperature
        if layer is not None:
            position = layer.position_spec
            reach = dict(window=layer.window, chunk=layer.chunk, sinks=layer.sinks,
                         temperature=layer.temperature, output_gate=layer.gate)
        elif not isinstance(position, PositionSpec):  # the config's options: its method's
            position = (config.position_spec if position == config.position
                        else PositionSpec(position))
        self.ln_attn = nn.LayerNorm(config.d_model)
        self.attn = self.recurrence = None  # one of the two mixes the tokens
        if layer is not None and layer.mixer == "recurrent":
            self.recurrence = GatedDecayRecurrence(config.d_model, **layer.recurrence_options)
        else:
            self.attn = MultiHeadSelfAttention(config.d_model, config.num_heads, position,
                                               causal=True, in_model=True, **reach)
        self.ln_mlp = nn.LayerNorm(config.d_model)
        self.mlp = FeedForward(config.d_model, config.d_ff)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + (self.attn or self.recurrence)(self.ln_attn(x))
        return x + self.mlp(self.ln_mlp(x))


class TinyLM(nn.Module):
    """Decoder-only language model.

    Shape: ``forward(tokens)`` maps int64 ``[batch, seq]`` to logits
    ``[batch, seq, vocab_size]``; logit ``t`` predicts token ``t + 1`` and sees only
    tokens ``0 .. t``.

    Initialisation: linear layers and the head ``N(0, 0.02)`` with zero biases (GPT-2).
    Embeddings follow fairseq, the code base of the ALiBi paper: token embeddings
    ``N(0, 1)`` (fairseq's ``N(0, 1/d_model)`` times its ``sqrt(d_model)`` embedding scale,
    as in Vaswani et al.), so a sinusoidal table (entries in ``[-1, 1]``) neither drowns
    the tokens nor vanishes beside them; a learned table ``N(0, 1/d_model)``.
    """

    def __init__(self, config: TinyLMConfig):
        super().__init__()
        if not isinstance(config, TinyLMConfig):
            raise TypeError(f"config must be a TinyLMConfig, got {type(config).__name__}")
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)
        self.position_embedding = None  # the table of an absolute method, added once
        if config.position in ABSOLUTE_METHODS:
            spec = AttentionSpec(config.d_model, config.num_heads, causal=True, in_model=True)
            self.position_embedding = config.position_spec.build(spec)
        layers = config.layer_specs() or (None,) * config.num_layers
        self.blocks = nn.ModuleList(Block(config, position, layer) for position, layer
                                    in zip(config.block_positions(), layers, strict=True))
        self.ln_final = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.apply(self._init_weights)
        nn.init.normal_(self.token_embedding.weight, std=1.0)
        attention = [b for b in self.blocks if b.attn is not None]
        with_position = [b for b in attention if b.attn.position == attention[0].attn.position]
        shared = with_position[0].attn.encoding if with_position else None
        if shared is not None and shared.shared_across_layers:
            for block in with_position[1:]:
                block.attn.encoding = shared  # one module for all blocks, as T5's table

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.ndim != 2 or tokens.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"tokens must be an integer tensor [batch, seq], got "
                             f"{tuple(tokens.shape)} {tokens.dtype}")
        vocab = self.config.vocab_size
        if tokens.numel() and tokens.device.type != "meta" and not (
                0 <= int(tokens.min()) and int(tokens.max()) < vocab):
            raise ValueError(f"token ids must be in [0, vocab_size={vocab}), got ids from "
                             f"{int(tokens.min())} to {int(tokens.max())} (bytes are 0..255)")
        x = self.token_embedding(tokens)  # [batch, seq, d_model]
        if self.position_embedding is not None:
            x = self.position_embedding.embed(x)  # + a [seq, d_model] table
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_final(x))  # [batch, seq, vocab_size]

    def rotary_embeddings(self) -> list[RotaryEmbedding]:
        """The RoPE modules of every block (empty unless ``position="rope"``)."""
        return [b.attn.encoding for b in self.blocks
                if b.attn is not None and isinstance(b.attn.encoding, RotaryEmbedding)]

    def set_rope_frequencies(self, frequencies=None, attention_factor: float = 1.0) -> None:
        """Use ``frequencies`` (``[head_dim // 2]``, e.g. Position Interpolation's
        ``theta / s``) in every block from now on; ``None`` restores ``base ** (-2i/d)``.
        ``attention_factor`` multiplies the rotated queries and keys (YaRN's; 1 for the
        others), as :func:`posenc.scaling.rope_scaling_frequencies` returns it."""
        rotaries = self.rotary_embeddings()
        if not rotaries:
            raise ValueError(f"set_rope_frequencies needs position='rope', got "
                             f"{self.config.position!r}")
        if frequencies is not None:
            frequencies = check_frequencies(frequencies, self.config.head_dim // 2)
        attention_factor = check_float("attention_factor", attention_factor, greater_than=0.0)
        for rotary in rotaries:
            rotary.frequencies = frequencies
            rotary.attention_factor = attention_factor

    def num_parameters(self) -> int:
        """Trainable parameters, each shared tensor counted once."""
        return sum(p.numel() for p in self.parameters())
