"""One multi-head self-attention whose ``position=`` argument picks the encoding.

``position`` is a method and its options as one value, a
:class:`~posenc.nn.PositionSpec` (``PositionSpec("t5", num_buckets=16)``), or a method's
name with its options as keywords (``MultiHeadSelfAttention(64, 4, "t5",
num_buckets=16)``, short for the same spec). Either way the options are checked once,
against that method's own constructor: one it does not take raises ``TypeError``. The
layer's own keywords (``causal``, ``bias``, ``in_model``, ``window``, ``chunk``,
``sinks``, ``temperature``, ``output_gate``) are always the layer's; a method option of
the same name goes
in the spec, ``PositionSpec("winbias", window=3)``, and given as a bare keyword beside a
method name that takes it too, it is refused rather than guessed.

The position method is a module from the registry (:mod:`posenc.nn.positions`, which
documents the protocol); this layer calls its five hooks in order and names no method:
``embed`` (added to the input before the q/k/v projections; in a full model that
happens once, at the embeddings, and the layer does it here so one class can show
every method), ``rotate`` (queries and keys after projection), ``score_bias`` (added to
the scaled scores, given the layer's input too where the method declares ``x``; with
the softmax and no value term it goes to ``scaled_dot_product_attention`` as
``attn_mask``), ``normalise`` (the weights from the masked scores, in place of the
softmax) and ``value_term`` (added to the output). With ``normalise`` or ``value_term``
the weights are computed explicitly.

Scores are scaled by ``1/sqrt(head_dim)`` for every method (T5 itself drops the
scale and folds it into its initialisation).

Per-layer reach and extras (:mod:`posenc.layer_patterns`): ``window`` or ``chunk`` limits
a causal layer to a sliding window or its chunk (:func:`posenc.masks.visible`, the mask
built here with torch, ``[seq, seq]``, on the input's device); ``sinks=True`` adds a
learned sink logit per head (:mod:`posenc.nn.sinks`); ``temperature=(floor_scale,
attn_scale)`` multiplies the queries by Llama 4's
:func:`posenc.scaling.attention_temperature` of their positions. ``output_gate=True``
multiplies each head's output, elementwise, by ``sigmoid(x W_g + b_g)`` before the output
projection (:meth:`MultiHeadSelfAttention.output_gate_values`).
"""

from __future__ import annotations

import inspect
import math

import torch
import torch.nn.functional as F
from torch import nn

from .._validation import check_bool, check_int
from ..masks import visible
from ..scaling import attention_temperature
from .positions import (
    POSITION_METHODS,
    AttentionSpec,
    PositionSpec,
    call_score_bias,
    check_normalise,
    check_score_bias,
    check_value_term,
)
from .sinks import sink_key_value, softmax_with_sinks

__all__ = ["POSITION_METHODS", "MultiHeadSelfAttention"]


class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention with a switchable position method.

    Shape: ``forward(x)`` maps ``[batch, seq, d_model]`` to ``[batch, seq, d_model]``.

    ``position`` is a :class:`~posenc.nn.PositionSpec` (a registered method and its
    options), or a method's name (:data:`posenc.nn.POSITIONS`) with its options as the
    remaining keywords, e.g. ``max_positions`` and ``interpolate`` (learned), ``base``
    (sinusoidal, rope), ``rope_layout`` and ``rope_frequencies`` (rope), ``num_buckets``
    and ``max_distance`` (t5), ``shaw_max_distance`` (shaw). Only the named method's
    options: another's raises ``TypeError`` naming it, the method and the options the
    method takes (``PositionMethod.options``).

    The named keywords (``causal``, ``bias``, ``in_model``, ``window``, ``chunk``,
    ``sinks``, ``temperature``, ``output_gate``) are the layer's, whatever the method:
    ``window=3`` is a sliding window of 3. A method option with such a name goes through the spec,
    ``MultiHeadSelfAttention(16, 2, PositionSpec("winbias", window=3))``, and
    ``MultiHeadSelfAttention(16, 2, PositionSpec("winbias"), window=3)`` gives the layer
    the window and the method its default. Beside a method's *name*, a layer keyword
    set (to other than its default) that the method also takes as an option raises
    ``TypeError`` saying so, as it could mean either; a :class:`PositionSpec` together
    with option keywords raises too (the spec holds the options).
    ``in_model=True`` when a whole model builds the layer (see :class:`AttentionSpec`).

    ``output_gate=True``: gated attention output (Qiu et al., 2025, arXiv:2505.06708, the
    paper's G1 position; Qwen3-Next's ``Qwen3NextAttention``): the output of head ``h``,
    ``[batch, seq, head_dim]`` after the weighted sum of values and before the output
    projection, is multiplied elementwise by ``sigmoid(x W_g + b_g)`` for that head's
    ``head_dim`` columns, ``x`` being the layer's input (after the block's pre-norm, what
    the q/k/v projection reads). ``self.gate`` is that ``Linear(d_model, d_model)``, its
    output laid out head by head as Hugging Face's ``gate.reshape(*input_shape, -1)``
    (Qwen3-Next computes it in ``q_proj``, each head's query and gate side by side, and
    ``torch.chunk`` splits them). Cost: one more ``d_model x d_model`` projection
    (``2 b L d_model^2`` FLOPs, ``d_model^2`` (+ ``d_model``) parameters) and ``2 b L d_model``
    elementwise operations. A head can then output about 0 by closing its gate, where a
    softmax head must put its weight on some key. The gate is built last, so every other
    weight of the layer draws the same random numbers as without it.
    """

    def __init__(self, d_model: int, num_heads: int, position: str | PositionSpec = "none", *,
                 causal: bool = False, bias: bool = True, in_model: bool = False,
                 window: int | None = None, chunk: int | None = None, sinks: bool = False,
                 temperature: tuple[float, float] | None = None, output_gate: bool = False,
                 **options):
        super().__init__()
        self.d_model = check_int("d_model", d_model)
        self.num_heads = check_int("num_heads", num_heads)
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
        self.head_dim = self.d_model // self.num_heads
        layer = dict(causal=causal, bias=bias, in_model=in_model, window=window, chunk=chunk,
                     sinks=sinks, temperature=temperature, output_gate=output_gate)
        position = _position_spec(position, options, layer)
        self.position = position.name
        check_bool("causal", causal)
        self.causal = causal

        self.qkv = nn.Linear(self.d_model, 3 * self.d_model, bias=bias)
        self.out = nn.Linear(self.d_model, self.d_model, bias=bias)
        spec = AttentionSpec(self.d_model, self.num_heads, causal=causal, in_model=in_model)
        self.encoding = position.build(spec)
        self._hooks = frozenset(self.encoding.hooks())
        self._set_reach(window, chunk, sinks, temperature)
        if sinks and "normalise" in self._hooks:
            raise ValueError(f"sinks=True adds a logit to the softmax, and position "
                             f"{self.position!r} replaces the softmax (its normalise hook): "
                             "use one or the other")
        check_bool("output_gate", output_gate)
        # last: the gate's random initial weights leave every other weight as without it
        self.gate = nn.Linear(self.d_model, self.d_model, bias=bias) if output_gate else None

    def _set_reach(self, window, chunk, sinks, temperature) -> None:
        """Check and keep the layer's reach, sinks and temperature (module docstring)."""
        self.window = None if window is None else check_int("window", window)
        self.chunk = None if chunk is None else check_int("chunk", chunk)
        if (self.window or self.chunk) and not self.causal:
            raise ValueError("window and chunk need causal=True (they restrict a causal mask)")
        check_bool("sinks", sinks)
        # GPT-OSS's per-head sink logits (initialised at 0: the sink starts as one more key)
        self.sinks = nn.Parameter(torch.zeros(self.num_heads)) if sinks else None
        if temperature is not None:
            attention_temperature(torch.zeros(1, dtype=torch.int64), floor_scale=temperature[0],
                                  attn_scale=temperature[1])  # validates both
        self.temperature = temperature

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v, bias, mask = self._scores_inputs(x)
        batch, seq, _ = x.shape
        if "value_term" in self._hooks or "normalise" in self._hooks:
            if bias is None and mask is not None:
                bias = _float_mask(mask, q.dtype)
            y = self._explicit_attention(q, k, v, bias)
        else:
            if self.sinks is not None:
                k, v, bias = sink_key_value(k, v, bias, self.sinks)
            attn_mask = bias if bias is not None else mask
            y = F.scaled_dot_product_attention(
                q, k, v, attn_mask=attn_mask, is_causal=self.causal and attn_mask is None)
        y = y.transpose(1, 2).reshape(batch, seq, self.d_model)  # [batch, seq, d_model]
        if self.gate is not None:  # head h's output times its own sigmoid gate, column-wise
            y = y * torch.sigmoid(self.gate(x))
        return self.out(y)

    def _scores_inputs(self, x: torch.Tensor):
        """What the scores are made of, for the layer's input ``x`` ``[batch, seq,
        d_model]``: ``q, k, v`` ``[batch, heads, seq, head_dim]`` after the method's
        ``embed`` and ``rotate`` hooks (and Llama 4's temperature), the additive ``bias``
        (``[..., seq, seq]`` float, the causal mask and the reach folded in, or ``None``)
        and the bool reach ``mask`` (``[seq, seq]`` or ``None``). :meth:`forward` and
        :meth:`attention_weights` share it, so the weights shown are the weights used."""
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(
                f"x must have shape [batch, seq, d_model={self.d_model}], got {tuple(x.shape)}"
            )
        batch, seq, _ = x.shape
        encoding, hooks = self.encoding, self._hooks
        if "embed" in hooks:
            x = encoding.embed(x)
        qkv = self.qkv(x).view(batch, seq, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each [batch, heads, seq, head_dim]
        if "rotate" in hooks:
            q, k = encoding.rotate(q, k)
        if self.temperature is not None:  # Llama 4: queries of NoPE layers, by position
            scale = attention_temperature(torch.arange(seq, device=q.device),
                                          floor_scale=self.temperature[0],
                                          attn_scale=self.temperature[1])
            q = q * scale.to(q.dtype)[:, None]
        bias = call_score_bias(encoding, q, k, x) if "score_bias" in hooks else None
        check_score_bias(self.position, bias, q, k)  # shapes only: a clear error, not torch's
        if bias is not None and self.causal:
            bias = bias + _causal_mask(seq, q.device, q.dtype)
        mask = self.reach_mask(seq, q.device)  # bool [seq, seq], or None: plain causal/full
        if mask is not None and bias is not None:
            bias = bias.masked_fill(~mask, float("-inf"))
        elif self.sinks is not None and bias is None:  # the sink needs a float mask column
            allowed = mask if mask is not None or not self.causal else _allowed(seq, q.device)
            bias = (torch.zeros(seq, seq, device=q.device, dtype=q.dtype) if allowed is None
                    else _float_mask(allowed, q.dtype))
        return q, k, v, bias, mask

    @torch.no_grad()
    def attention_weights(self, x: torch.Tensor) -> torch.Tensor:
        """The attention weights ``[batch, heads, seq, seq]`` (query, key) this layer uses
        for the input ``x`` ``[batch, seq, d_model]``: each row sums to 1 (less with
        ``sinks``, whose share goes to the sink; a ``normalise`` hook's own rule
        otherwise). The same scores as :meth:`forward`, computed explicitly (the fused
        kernel that :meth:`forward` may use returns no weights). For reading heads:
        which key each query looks at (:mod:`posenc.heads`)."""
        q, k, _, bias, mask = self._scores_inputs(x)
        if bias is None and mask is not None:
            bias = _float_mask(mask, q.dtype)
        return self._weights(q, k, bias)

    def output_gate_values(self, x: torch.Tensor) -> torch.Tensor | None:
        """The gate ``sigmoid(x W_g + b_g)`` as ``[batch, heads, seq, head_dim]`` for the
        layer's input ``x`` ``[batch, seq, d_model]`` (``None`` without ``output_gate``);
        after a position method's ``embed``, as :meth:`forward` computes it."""
        if self.gate is None:
            return None
        if "embed" in self._hooks:
            x = self.encoding.embed(x)
        batch, seq, _ = x.shape
        gate = torch.sigmoid(self.gate(x)).view(batch, seq, self.num_heads, self.head_dim)
        return gate.transpose(1, 2)

    def _explicit_attention(self, q, k, v, bias):
        """Attention with the weights in hand, for a method that replaces the softmax or
        adds a value term."""
        weights = self._weights(q, k, bias)
        y = weights @ v  # [b, h, q, head_dim]
        if "value_term" not in self._hooks:
            return y
        extra = self.encoding.value_term(weights, v)
        check_value_term(self.position, extra, weights, v)
        return y if extra is None else y + extra


    def _weights(self, q, k, bias):
        """Weights ``[b, h, q, k]`` from the scaled scores plus ``bias`` (the causal mask
        when ``bias`` is ``None`` in a causal layer): the method's ``normalise`` hook, or
        the softmax (with the sink's logit when the layer has sinks)."""
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)  # [b, h, q, k]
        if bias is not None:
            scores = scores + bias
        elif self.causal:
            scores = scores + _causal_mask(q.shape[-2], q.device, q.dtype)
        if "normalise" in self._hooks:
            weights = self.encoding.normalise(scores)
            check_normalise(self.position, weights, scores)
            return weights
        return (scores.softmax(dim=-1) if self.sinks is None
                else softmax_with_sinks(scores, self.sinks))

    def reach_mask(self, seq: int, device=None) -> torch.Tensor | None:
        """The bool ``[seq, seq]`` mask of a window or chunk layer (True = may attend),
        built from positions by :func:`posenc.masks.visible`; ``None`` for a plain layer."""
        if self.window is None and self.chunk is None:
            return None
        return _allowed(seq, device, window=self.window, chunk=self.chunk)


#: The layer's own keywords and their defaults (a method option of one of these names
#: goes through a PositionSpec).
_LAYER_KEYWORDS = {name: p.default for name, p in
                   inspect.signature(MultiHeadSelfAttention.__init__).parameters.items()
                   if p.kind is p.KEYWORD_ONLY}


def _position_spec(position, options: dict, layer: dict) -> PositionSpec:
    """The layer's ``position`` argument and option keywords as one checked
    :class:`PositionSpec` (class docstring: the layer's keywords stay the layer's)."""
    if isinstance(position, PositionSpec):
        if options:
            raise TypeError(f"options {', '.join(options)} given beside {position!r}: a "
                            "PositionSpec holds its method's options, e.g. "
                            f"position.with_options({', '.join(f'{k}=...' for k in options)})")
        return position
    spec = PositionSpec.of(position, options)
    both = [key for key, value in layer.items()
            if key in spec.method.options and value != _LAYER_KEYWORDS[key]]
    if both:
        given = {key: layer[key] for key in both}
        text = ", ".join(f"{key}={value!r}" for key, value in given.items())
        for_method = spec.with_options(**given)
        raise TypeError(f"{', '.join(both)}: a keyword of the attention layer and also an "
                        f"option of position {spec.name!r}, so {text} could mean either. For "
                        f"the method's, put it in the spec: position={for_method!r}; for the "
                        f"layer's, give the method as a spec: position={spec!r}, {text}")
    return spec


def _allowed(seq: int, device, *, window: int | None = None,
             chunk: int | None = None) -> torch.Tensor:
    """bool ``[seq, seq]`` from positions by :func:`posenc.masks.visible` (causal, plus the
    window or chunk if given): True = may attend."""
    pos = torch.arange(seq, device=device)
    return visible(pos[:, None], pos[None, :], window=window, chunk=chunk)


def _float_mask(mask: torch.Tensor, dtype) -> torch.Tensor:
    """``0`` where ``mask`` allows, ``-inf`` elsewhere: a bool mask made additive."""
    return torch.zeros(mask.shape, device=mask.device, dtype=dtype).masked_fill(
        ~mask, float("-inf"))


def _causal_mask(seq: int, device, dtype) -> torch.Tensor:
    """``0`` on and below the diagonal, ``-inf`` above: ``[seq, seq]`` (the one causal rule,
    :func:`posenc.masks.visible`, made additive)."""
    return _float_mask(_allowed(seq, device), dtype)
