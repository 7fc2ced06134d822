"""A recurrent token mixer: short causal convolution, then a gated diagonal decay.

The layer that gives a hybrid model its order when its attention layers have no position
(Kimi Linear's KDA layers, Granite 4.0-H's and Nemotron-H's Mamba-2 layers), in the
simplest form that keeps their two sources of order: Mamba's short depthwise convolution
(kernel 4) and a data-dependent diagonal decay (GLA, Griffin's RG-LRU, Mamba-2; KDA adds a
delta rule this layer leaves out). The maths, and the proof that the chunked form below is
the recurrence, is :mod:`posenc.recurrence` (numpy; tested equal).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .._validation import check_bool, check_int

__all__ = ["GatedDecayRecurrence", "gated_decay", "RECURRENCE_OPTIONS"]

#: The recurrence's options and their defaults: ``conv_size`` (0: no convolution) and
#: ``decay`` (False: no recurrence). Both off leave a per-token layer, the control.
RECURRENCE_OPTIONS = {"conv_size": 4, "decay": True}


def gated_decay(x: torch.Tensor, log_a: torch.Tensor, chunk: int = 8) -> torch.Tensor:
    """``h_t = a_t h_{t-1} + (1 - a_t) x_t`` for ``x``, ``log_a`` ``[batch, seq, d]``.

    Computed chunk by chunk as Mamba-2's "SSD" does: inside a chunk, the weighted sum of
    :func:`posenc.recurrence.gated_decay_weights` (one ``[chunk, chunk]`` matrix per
    channel, built from the cumulative sum of ``log a`` as FoX builds its bias); across
    chunks, the state carried forward. ``[b, d, chunk, chunk]`` per chunk bounds the
    memory at any length. In at least float32; returned in ``x``'s dtype. (``chunk=8``:
    a fast forward and backward on the course's CPU at its sizes, measured with
    ``benchmarks/bench_recurrence.py``: 64 is 8 times slower; 4 is a fifth faster there and
    takes twice the loop steps at long lengths.)
    """
    dtype = torch.promote_types(x.dtype, torch.float32)
    x, log_a = x.to(dtype), log_a.to(dtype)
    b, n, d = x.shape
    u = -torch.expm1(log_a) * x  # (1 - a_t) x_t
    state = x.new_zeros(b, d)
    out = []
    for start in range(0, n, chunk):
        la = log_a[:, start:start + chunk].transpose(1, 2)  # [b, d, c]
        c = la.cumsum(-1)  # sum of log a from the chunk's start to t
        m = la.shape[-1]
        below = torch.ones(m, m, dtype=torch.bool, device=x.device).tril()
        weights = (c[..., :, None] - c[..., None, :]).masked_fill(~below, float("-inf")).exp()
        h = (weights @ u[:, start:start + chunk].transpose(1, 2)[..., None])[..., 0]  # [b, d, c]
        h = h + c.exp() * state[..., None]  # what came before the chunk, decayed since
        state = h[..., -1]
        out.append(h.transpose(1, 2))
    return torch.cat(out, dim=1) if out else x.clone()


class GatedDecayRecurrence(nn.Module):
    """``[batch, seq, d_model]`` -> ``[batch, seq, d_model]``, causal, no position anywhere.

    ``u, z = in_proj(x)``; ``u = silu(conv(u))`` (depthwise, ``conv_size`` taps; none when
    0); ``a = sigmoid(gate(u) + decay_bias)`` per token and channel; ``h`` the gated decay of
    ``u`` (:func:`gated_decay`; skipped when ``decay=False``); out ``out_proj(h * silu(z))``,
    the output gate of Mamba and GLA. ``4 d^2`` weights, as an attention layer's q, k, v and
    output projections. ``decay_bias`` starts so the channels' gates spread from 0.5 to 0.97
    (memories of about 1 to 30 tokens), as Mamba spreads its time steps; it is a parameter of
    its own so the model's ``N(0, 0.02)`` initialisation of linear layers leaves it alone.
    """

    def __init__(self, d_model: int, *, conv_size: int = 4, decay: bool = True):
        super().__init__()
        self.d_model = check_int("d_model", d_model)
        self.conv_size = check_int("conv_size", conv_size, minimum=0)
        check_bool("decay", decay)
        self.in_proj = nn.Linear(d_model, 2 * d_model)
        self.conv = (nn.Conv1d(d_model, d_model, conv_size, groups=d_model,
                               padding=conv_size - 1) if conv_size else None)
        self.gate = nn.Linear(d_model, d_model, bias=False) if decay else None
        self.decay_bias = None
        if decay:
            spread = torch.linspace(0.5, 0.97, d_model)
            self.decay_bias = nn.Parameter(torch.log(spread / (1 - spread)))
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must be [batch, seq, d_model={self.d_model}], got "
                             f"{tuple(x.shape)}")
        n = x.shape[1]
        u, z = self.in_proj(x).chunk(2, dim=-1)  # [b, n, d] each
        if self.conv is not None:  # causal: pad on the left only, keep the first n outputs
            u = self.conv(u.transpose(1, 2))[..., :n].transpose(1, 2)
        u = F.silu(u)
        if self.gate is not None:
            wide = torch.promote_types(x.dtype, torch.float32)  # gates in at least float32
            log_a = F.logsigmoid((self.gate(u) + self.decay_bias).to(wide))
            u = gated_decay(u, log_a).to(x.dtype)
        return self.out_proj(u * F.silu(z))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, conv_size={self.conv_size}, decay={self.gate is not None}"
