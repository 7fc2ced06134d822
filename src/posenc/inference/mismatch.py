"""Silent mismatches: a query scale the model expects and the engine drops, measured.

Some models multiply their scores by a factor that depends on the configuration or the
position: YaRN's attention factor (``0.1 ln s + 1`` on queries and keys, so the scores
grow by its square), Qwen's log-n scale on the queries past the training length
(:func:`posenc.scaling.logn_scale`), Ministral 3's ``llama_4_scaling_beta``
(:func:`posenc.scaling.llama_4_beta_scale`) and Llama 4's
temperature (:func:`posenc.scaling.attention_temperature`). An engine that does not read
the field runs without it and raises no error; the outputs change. This module measures
that on a tiny model: :func:`attention_entropy` (multiplying the scores by ``c > 1``
can only lower the entropy of a softmax: its derivative in ``c`` is ``-c Var(z)``),
:func:`next_byte_loss` with :func:`posenc.inference.run`, and :func:`train_briefly`, a
short training run of a :class:`~posenc.model.TinyLM` with a given factor.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .._validation import check_int, to_numpy
from .forward import run

__all__ = ["attention_entropy", "next_byte_loss", "train_briefly", "held_out_windows"]


def attention_entropy(weights, *, start: int = 0) -> float:
    """Mean entropy, in nats, of attention rows ``weights`` ``[..., queries, keys]`` (each
    row sums to 1), over every row from query ``start`` on."""
    w = np.asarray(to_numpy(weights), dtype=np.float64)
    if w.ndim < 2 or not np.allclose(w.sum(-1), 1.0):
        raise ValueError("weights must be attention rows [..., queries, keys] summing to 1")
    start = check_int("start", start, minimum=0)
    if start >= w.shape[-2]:
        raise ValueError(f"start must be below the number of queries ({w.shape[-2]}), got {start}")
    w = w[..., start:, :]
    terms = np.where(w > 0, -w * np.log(np.where(w > 0, w, 1.0)), 0.0)
    return float(terms.sum(-1).mean())


def next_byte_loss(model, tokens: torch.Tensor, targets: torch.Tensor, **options) -> float:
    """Mean cross-entropy (nats per byte) of ``model`` on ``tokens`` ``[batch, seq]``
    predicting ``targets``, run by :func:`posenc.inference.run` with ``options``
    (``attention_factor=1.0``, ``query_scale=...``)."""
    with torch.no_grad():
        logits = run(model, tokens, **options).logits
    return float(F.cross_entropy(logits.flatten(0, 1), targets.flatten()))


def held_out_windows(corpus, *, count: int = 16, length: int = 64):
    """The first ``count`` consecutive ``length``-byte windows of ``corpus.heldout`` and their
    next bytes: int64 ``(inputs, targets)``, each ``[count, length]`` (the same on every
    machine: no randomness)."""
    count, length = check_int("count", count), check_int("length", length)
    need = count * (length + 1)
    if len(corpus.heldout) < need:
        raise ValueError(f"corpus.heldout has {len(corpus.heldout)} bytes; count x (length + 1)"
                         f" = {need} needed")
    windows = np.asarray(corpus.heldout[:need], dtype=np.int64).reshape(count, length + 1)
    return torch.from_numpy(windows[:, :-1].copy()), torch.from_numpy(windows[:, 1:].copy())


def train_briefly(config, corpus, *, steps: int = 150, length: int = 64, batch_size: int = 16,
                  seed: int = 0, frequencies=None, attention_factor: float = 1.0):
    """A :class:`~posenc.model.TinyLM` of ``config`` trained ``steps`` steps (AdamW, 3e-3)
    on ``length``-byte windows of ``corpus.train``, its RoPE blocks set to ``frequencies``
    and ``attention_factor`` (:meth:`~posenc.model.TinyLM.set_rope_frequencies`) throughout.
    Seeded: the same arguments give the same model on the same CPU kernels."""
    from ..data import random_windows
    from ..model import TinyLM

    steps, length = check_int("steps", steps), check_int("length", length)
    torch.manual_seed(seed)
    model = TinyLM(config)
    if frequencies is not None or attention_factor != 1.0:
        model.set_rope_frequencies(frequencies, attention_factor)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x, y = random_windows(corpus.train, batch_size, length, gen)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()
