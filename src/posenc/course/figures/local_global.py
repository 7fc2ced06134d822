"""Figures of the chapter "Local and global layers": masks, receptive fields, temperature, sinks.

Every ``draw_*`` function draws into the figure it is given, from the library's one
definition of each rule (:mod:`posenc.masks`, :func:`posenc.scaling.attention_temperature`,
:func:`posenc.nn.softmax_with_sinks`), and returns what it drew on, so a slider
(:func:`posenc.course.figures.sliders.slider_figure`) can call it per frame.
"""

from __future__ import annotations

import math

import numpy as np

from ..._validation import check_choice, check_float, check_int
from ...masks import reach_mask, receptive_field
from ...scaling import QUERY_TEMPERATURES, attention_temperature, log_n_scale
from .style import COLORS

__all__ = ["draw_mask_and_field", "one_key_attention", "draw_temperature",
           "FAMILY_STYLE", "draw_temperature_family",
           "train_sink_model", "SINK_RUNS", "train_sink_runs", "first_token_mass",
           "SINK_RUN_STYLE", "draw_sink_mass"]


# --- (a) masks and receptive fields ---------------------------------------------------------

def draw_mask_and_field(fig, reach: str, size: int, layers: int, n: int = 32):
    """Left: one layer's mask (``reach`` ``"window"`` or ``"chunk"`` of ``size``); right:
    which input tokens reach each position after ``layers`` such layers
    (:func:`posenc.masks.receptive_field`). Query ``n - 1``'s reach is outlined. Returns
    the two axes."""
    check_choice("reach", reach, ("window", "chunk"))
    size, layers, n = check_int("size", size), check_int("layers", layers), check_int("n", n)
    mask = reach_mask(n, reach, size)
    field = receptive_field([mask] * layers)
    axes = fig.subplots(1, 2)
    titles = (f"one {reach} layer ({reach} {size})",
              f"after {layers} layer{'s' if layers > 1 else ''}: "
              f"last query reaches {int(field[-1].sum())} tokens")
    for ax, m, title in zip(axes, (mask, field), titles, strict=True):
        ax.imshow(m, cmap="Blues", vmin=-0.15, vmax=1.1, interpolation="nearest")
        ax.add_patch(_row_box(n))
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("key position j")
        ax.set_xticks([0, n // 2, n - 1])
        ax.set_yticks([0, n // 2, n - 1])
        ax.grid(False)
    axes[0].set_ylabel("query position i")
    return axes


def _row_box(n: int):
    from matplotlib.patches import Rectangle

    return Rectangle((-0.5, n - 1.5), n, 1, fill=False, edgecolor=COLORS[3], lw=1.6)


# --- (b) entropy vs context length, with and without temperature -----------------------------

def one_key_attention(n, gap: float, scale=1.0) -> tuple[np.ndarray, np.ndarray]:
    """The chapter's model of one query over ``n`` keys: ONE relevant key whose logit
    exceeds the ``n - 1`` others by ``gap`` (the others all equal), every logit multiplied
    by ``scale`` (a temperature on the query). Returns ``(p, H)``: the weight on the
    relevant key, ``p = e^(s g) / (e^(s g) + n - 1)``, and the entropy of the weights in
    nats, ``H = -p ln p - (1 - p) ln((1 - p) / (n - 1))``; arrays of ``n``'s shape."""
    n = np.asarray(n, dtype=np.float64)
    if np.any(n < 1):
        raise ValueError("n must be >= 1 (the number of keys)")
    gap = check_float("gap", gap)
    logit = np.asarray(scale, dtype=np.float64) * gap
    # p = 1 / (1 + (n - 1) e^(-s g)), in logs so large n and gaps do not overflow
    p = np.exp(-np.logaddexp(0.0, np.log(np.maximum(n - 1, 1e-300)) - logit))
    p = np.where(n == 1, 1.0, p)
    rest = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -p * np.log(p) - np.where(rest > 0, rest * np.log(rest / np.maximum(n - 1, 1)), 0.0)
    return p, h


def draw_temperature(fig, gap: float, attn_scale: float = 0.1, floor_scale: int = 8192,
                     max_n: float = 1e6):
    """Attention on the relevant key (left) and entropy (right) against the number of
    keys ``n`` (log scale), for :func:`one_key_attention` with no temperature, with Llama 4's
    (:func:`posenc.scaling.attention_temperature` at the last query, ``p = n - 1``), and
    with the log-length scale ``max(1, ln n / ln floor_scale)`` (Scalable-Softmax's ``s log n``
    with ``s = 1 / ln floor_scale``, so it is 1 at ``n = floor_scale``, and never below 1).
    Returns the two axes."""
    attn_scale = check_float("attn_scale", attn_scale, at_least=0.0)
    n = np.unique(np.round(np.logspace(0, math.log10(max_n), 200))).astype(np.int64)
    curves = [
        ("no temperature", 1.0, COLORS[7], "-"),
        (f"Llama 4 (attn_scale {attn_scale:g})",
         attention_temperature(n - 1, floor_scale=floor_scale, attn_scale=attn_scale),
         COLORS[3], "-"),
        (f"ln n / ln {floor_scale} (log-n scaling)", log_n_scale(n, floor_scale),
         COLORS[0], "--"),
    ]
    axes = fig.subplots(1, 2)
    for label, scale, color, ls in curves:
        p, h = one_key_attention(n, gap, scale)
        axes[0].semilogx(n, p, color=color, ls=ls, lw=2, label=label)
        axes[1].semilogx(n, h, color=color, ls=ls, lw=2)
    axes[1].semilogx(n, np.log(n), color="#999999", lw=1, ls=":", label="uniform: ln n")
    axes[0].set(xlabel="number of keys n", ylabel="weight on the relevant key", ylim=(0, 1.02),
                title=f"logit gap {gap:g}")
    axes[1].set(xlabel="number of keys n", ylabel="entropy (nats)", title="entropy")
    for ax in axes:
        ax.axvline(floor_scale, color="#555555", ls=":", lw=1)
    # one legend under both panels: inside, it would cover curves at some slider value
    handles, labels = (a + b for a, b in zip(axes[0].get_legend_handles_labels(),
                                             axes[1].get_legend_handles_labels(), strict=True))
    fig.subplots_adjust(bottom=0.3, wspace=0.3)
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=2, frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    return axes


# --- (b2) one family of query temperatures ------------------------------------------------

#: how each row of :data:`posenc.scaling.QUERY_TEMPERATURES` is drawn: colour, line style
FAMILY_STYLE = {"log-n (Su; Qwen's logn)": (COLORS[0], "-"), "Llama 4": (COLORS[3], "-"),
                "llama_4_scaling_beta": (COLORS[1], "--"), "Scalable-Softmax": (COLORS[4], ":"),
                "YaRN": (COLORS[2], "-.")}


def draw_temperature_family(fig, gap: float, train_length: int = 4096,
                            max_ratio: int = 256):
    """The family of query temperatures side by side: left, the logit multiplier each row of
    :data:`posenc.scaling.QUERY_TEMPERATURES` gives the last query of ``n`` keys in a model
    trained at ``train_length`` (its ``logit_scale``); right, the weight that
    :func:`one_key_attention` puts on the relevant key with logit ``gap``, against ``n``
    (log scale, up to ``max_ratio * train_length``), with no temperature in black. QK-norm
    multiplies nothing and is not drawn. Returns the two axes."""
    train_length = check_int("train_length", train_length, minimum=2)
    max_ratio = check_int("max_ratio", max_ratio, minimum=2)
    n = np.unique(np.round(np.geomspace(16, max_ratio * train_length, 300))).astype(np.int64)
    axes = fig.subplots(1, 2)
    p, _ = one_key_attention(n, gap)
    axes[0].semilogx(n, np.ones(n.shape), color=COLORS[7], lw=1.5, label="no temperature")
    axes[1].semilogx(n, p, color=COLORS[7], lw=1.5)
    for name, (color, ls) in FAMILY_STYLE.items():
        scale = QUERY_TEMPERATURES[name].logit_scale(n, train_length)
        p, _ = one_key_attention(n, gap, scale)
        axes[0].semilogx(n, scale, color=color, ls=ls, lw=2, label=name)
        axes[1].semilogx(n, p, color=color, ls=ls, lw=2)
    at_length, _ = one_key_attention(np.array([train_length]), gap)
    axes[0].set(xlabel="number of keys n", ylabel="logit multiplier", title="the multiplier")
    axes[1].set(xlabel="number of keys n", ylabel="weight on the relevant key", ylim=(0, 1.02),
                title=f"logit gap {gap:g}: weight {float(at_length[0]):.2f} at L")
    for ax in axes:
        ax.axvline(train_length, color="#555555", ls=":", lw=1)
    fig.subplots_adjust(bottom=0.32, wspace=0.3)
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=8, loc="lower center", ncol=3,
               frameon=False, bbox_to_anchor=(0.5, 0.0))
    return axes


# --- (c) attention sinks, live from a tiny model ------------------------------------------

def train_sink_model(corpus, *, steps: int = 200, length: int = 64, batch_size: int = 16,
                     seed: int = 0, checkpoints=(0, 50, 100, 200), eval_batch: int = 16,
                     sinks: bool = True, gate: bool = False):
    """Train a 2-layer :class:`~posenc.model.TinyLM` with the ``gpt_oss`` pattern (a banded
    RoPE layer, then a full one, learned sinks in both) on bytes of ``corpus.train``,
    AdamW at 3e-3, ``length``-byte windows. At each step in ``checkpoints`` it records, on a
    fixed held-out batch, :func:`first_token_mass`. Returns ``{step: stats}``.

    ``sinks=False`` is the control: the same model, seed and batches with the sink logits
    removed (they start at zero and draw nothing from the random stream, so every other
    weight starts the same). ``gate=True`` gives both layers Qwen3-Next's gated attention
    output (``LayerSpec.gate``, :class:`~posenc.nn.MultiHeadSelfAttention`'s
    ``output_gate``): the same model, seed and batches, every other weight copied from the
    ungated model, the gate's weights ``N(0, 0.02)`` and biases 0 as every linear layer of
    :class:`~posenc.model.TinyLM` (so each gate starts near ``sigmoid(0) = 1/2``).
    """
    import torch

    from ...data import random_windows
    from ...model import TinyLM, TinyLMConfig

    steps, length = check_int("steps", steps), check_int("length", length)
    for name, value in (("sinks", sinks), ("gate", gate)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, got {value!r}")
    torch.manual_seed(seed)
    config = TinyLMConfig(pattern="gpt_oss", num_layers=2, pattern_length=length)
    model = TinyLM(config)
    if not sinks:
        for block in model.blocks:
            block.attn.sinks = None
    if gate:
        _add_output_gates(model, config)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    train_gen = torch.Generator().manual_seed(seed)
    held, _ = random_windows(corpus.heldout, eval_batch, length,
                             torch.Generator().manual_seed(seed + 1))
    stats = {}
    for step in range(steps + 1):
        if step in checkpoints:
            stats[step] = first_token_mass(model, held)
        if step == steps:
            break
        x, y = random_windows(corpus.train, batch_size, length, train_gen)
        loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return stats


#: The chapter's three runs of :func:`train_sink_model`: ``label -> (sinks, gate)``. With
#: learned sinks (GPT-OSS); the control without; Qwen3-Next's gated output without sinks.
SINK_RUNS = {"sinks": (True, False), "no sinks": (False, False), "gated": (False, True)}


def train_sink_runs(corpus, **kwargs) -> dict:
    """:func:`train_sink_model` once for each of :data:`SINK_RUNS`, with the same other
    arguments (so the same seed, batches and initial weights): ``{label: {step: stats}}``."""
    return {label: train_sink_model(corpus, sinks=sinks, gate=gate, **kwargs)
            for label, (sinks, gate) in SINK_RUNS.items()}


def _add_output_gates(model, config) -> None:
    """Give every block of ``model`` (built from ``config``'s pattern) a gated attention
    output, keeping its weights and its sinks or their absence (docstring above)."""
    from dataclasses import replace

    from ...model import Block, TinyLM

    for block, spec in zip(model.blocks, config.layer_specs(), strict=True):
        layer = replace(spec, sinks=block.attn.sinks is not None, gate=True)
        gated = Block(config, layer=layer).attn
        gated.load_state_dict(block.attn.state_dict(), strict=False)  # all but the gate
        TinyLM._init_weights(gated.gate)
        block.attn = gated


def first_token_mass(model, tokens) -> dict:
    """Per layer and head, where a :class:`~posenc.model.TinyLM`'s attention goes.

    Recomputes each block's weights from its input (rotated q, k; the layer's mask; its
    sinks through :func:`posenc.nn.softmax_with_sinks`). Returns numpy arrays
    ``"by_key"`` ``[layers, heads, keys]`` (the mean weight on each key over the batch and
    the queries of the second half), ``"sink"`` ``[layers, heads]`` (mean sink mass over
    the same queries), ``"gate"`` ``[layers, heads]`` (the mean of a gated layer's output
    gate, :meth:`~posenc.nn.MultiHeadSelfAttention.output_gate_values`, over the same
    queries and the head's features; 1 for a layer without a gate, which passes all) and
    ``"uniform"`` (the mean of ``1 / (i + 1)`` over them: what a uniform head would give
    each visible key).
    """
    import torch

    from ...nn import softmax_with_sinks

    captured = []
    hooks = [b.attn.register_forward_hook(lambda mod, args, out: captured.append((mod, args[0])))
             for b in model.blocks]
    try:
        with torch.no_grad():
            model(tokens)
            by_key, sink, gates = [], [], []
            for attn, x in captured:
                b, n, _ = x.shape
                q, k, _v = attn.qkv(x).view(b, n, 3, attn.num_heads, attn.head_dim).permute(
                    2, 0, 3, 1, 4)
                if "rotate" in attn._hooks:
                    q, k = attn.encoding.rotate(q, k)
                mask = attn.reach_mask(n)
                if mask is None:
                    mask = torch.ones(n, n, dtype=torch.bool).tril()
                scores = (q @ k.transpose(-1, -2) / math.sqrt(attn.head_dim)).masked_fill(
                    ~mask, float("-inf"))
                w = (scores.softmax(-1) if attn.sinks is None
                     else softmax_with_sinks(scores, attn.sinks))
                late = w[:, :, n // 2:, :]  # queries of the second half
                by_key.append(late.mean((0, 2)).numpy())
                sink.append((1 - late.sum(-1)).mean((0, 2)).numpy())
                g = attn.output_gate_values(x)  # [b, h, n, head_dim], or None
                gates.append(np.ones(attn.num_heads) if g is None
                             else g[:, :, n // 2:].mean((0, 2, 3)).numpy())
    finally:
        for h in hooks:
            h.remove()
    n = tokens.shape[1]
    return {"by_key": np.stack(by_key), "sink": np.stack(sink), "gate": np.stack(gates),
            "uniform": float(np.mean(1.0 / (np.arange(n // 2, n) + 1)))}


#: how each of :data:`SINK_RUNS` is drawn in :func:`draw_sink_mass`: label, colour
SINK_RUN_STYLE = {"sinks": ("learned sinks", COLORS[1]), "no sinks": ("no sinks", "#999999"),
                  "gated": ("gated output", COLORS[3])}


def draw_sink_mass(fig, runs: dict, step: int):
    """The three runs of :func:`train_sink_runs` after ``step`` training steps: left, the
    mean weight on token 0 per head of the full (global) layer in each run, against a
    uniform head's; middle, the learned sinks' mass per layer and head (run ``"sinks"``);
    right, the mean output gate per layer and head (run ``"gated"``; it starts at about 1/2).
    ``runs`` maps the labels of :data:`SINK_RUNS` to ``{step: stats}``. Returns the three
    axes."""
    if set(runs) != set(SINK_RUNS):
        raise ValueError(f"runs must have the keys {', '.join(SINK_RUNS)}, got "
                         f"{', '.join(map(str, runs))}")
    at = {label: stats[step] for label, stats in runs.items()}
    full = at["sinks"]["by_key"].shape[0] - 1  # the last layer attends to everything
    heads = at["sinks"]["by_key"].shape[1]
    axes = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.3, 1, 1]})
    width = 0.8 / len(SINK_RUNS)
    for k, (label, (text, color)) in enumerate(SINK_RUN_STYLE.items()):
        axes[0].bar(np.arange(heads) + (k - 1) * width, at[label]["by_key"][full][:, 0], width,
                    color=color, label=text)
    axes[0].axhline(at["sinks"]["uniform"], color="#555555", ls=":", lw=1.2, label="uniform")
    top = max(float(at[label]["by_key"][full][:, 0].max()) for label in SINK_RUNS)
    axes[0].set(xlabel="head", ylabel="weight on token 0", xticks=range(heads),
                title=f"full layer, step {step}", ylim=(0, max(0.05, 1.3 * top)))
    for ax, (key, run, title) in zip(axes[1:], (("sink", "sinks", "learned sink"),
                                                ("gate", "gated", "output gate")), strict=True):
        values = at[run][key]
        for layer in range(values.shape[0]):
            ax.bar(np.arange(heads) + (layer - 0.5) * 0.4, values[layer], 0.4,
                   color=COLORS[5 if layer == 0 else 0],
                   label=("banded layer" if layer == 0 else "full layer"))
        ax.set(xlabel="head", ylim=(0, 1), title=title, xticks=range(heads))
    axes[1].set_ylabel("mass on the sink")
    axes[2].set_ylabel("mean gate")
    axes[2].axhline(0.5, color="#555555", ls=":", lw=1.2)
    # one legend under the panels: inside, bars reach it at some step and seed
    (line, *bars), (first, *rest) = axes[0].get_legend_handles_labels()
    layers, layer_labels = axes[1].get_legend_handles_labels()
    handles, labels = [*bars, line, *layers], [*rest, first, *layer_labels]
    fig.subplots_adjust(bottom=0.32, wspace=0.45)
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=3, frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    return axes
