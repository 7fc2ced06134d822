"""Figures of the chapter "Where order comes from": FoX's forget gates, stick-breaking.

Every ``draw_*`` function draws into the figure it is given, from the library's one
definition of each formula (:func:`posenc.data_dependent.forgetting_attention_bias`,
:func:`posenc.data_dependent.stick_breaking_weights`, :func:`posenc.alibi.alibi_bias`), and
returns what it drew on, so a slider (:func:`posenc.course.figures.sliders.slider_figure`)
can call it per frame.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np

from ..._validation import check_float, check_int
from ...alibi import alibi_bias, alibi_slopes
from ...data_dependent import forgetting_attention_bias, stick_breaking_weights
from .style import COLORS

__all__ = ["SENTENCE", "fox_log_gates", "draw_fox_bias", "sentence_logits",
           "draw_stick_breaking", "ORDER_PROBE_STYLE", "draw_order_probe", "order_probe_findings"]

#: The chapter's example sentence, one token per word (the course's example tokens, kept
#: English in both editions).
SENTENCE = ("They", "ate", "cake", ".", "Then", "they", "left", ".")

#: The gate every word token keeps in the FoX figure (ALiBi's slope -ln 0.9 when every
#: token has it).
WORD_GATE = 0.9

_LOWEST = -8.0  # the colour scale's floor: a weight factor of e^-8 reads as "forgotten"


def fox_log_gates(period_gate: float, word_gate: float = WORD_GATE) -> np.ndarray:
    """``log f`` ``[len(SENTENCE)]``: ``word_gate`` for every word, ``period_gate`` for the
    full stops (the tokens a trained FoX head may use to forget the sentence before)."""
    for name, gate in (("period_gate", period_gate), ("word_gate", word_gate)):
        if not 0 < check_float(name, gate, greater_than=0.0) <= 1:
            raise ValueError(f"{name} must be a forget gate in (0, 1], got {gate!r}")
    gates = np.array([period_gate if t == "." else word_gate for t in SENTENCE])
    return np.log(gates)


def _bias_panel(ax, bias: np.ndarray, title: str, cmap):
    shown = np.ma.masked_invalid(np.maximum(bias, _LOWEST, where=np.isfinite(bias),
                                            out=bias.copy()))
    image = ax.imshow(shown, cmap=cmap, vmin=_LOWEST, vmax=0, interpolation="nearest")
    ticks = np.arange(len(SENTENCE))
    ax.set_xticks(ticks, SENTENCE, rotation=90)
    ax.set_yticks(ticks, SENTENCE)
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
    ax.set_title(title, fontsize=10)
    ax.grid(False)
    return image


def draw_fox_bias(fig, period_gate: float):
    """Left: FoX's bias ``sum_{l=j+1..i} log f_l`` for :data:`SENTENCE`, every word's gate
    :data:`WORD_GATE` and each full stop's ``period_gate``; right: ALiBi's causal bias with
    slope ``m = -ln WORD_GATE``, which FoX equals when every gate is ``WORD_GATE``. Colours
    stop at -8 (grey: masked). Returns the two axes."""
    log_f = fox_log_gates(period_gate)
    slope = -np.log(WORD_GATE)
    fox = forgetting_attention_bias(log_f)
    # ALiBi with one head of slope m: alibi_bias's one head has the paper's slope, rescaled
    alibi = alibi_bias(1, len(SENTENCE))[0] * (slope / alibi_slopes(1)[0])
    cmap = mpl.colormaps["viridis"].with_extremes(bad="#d9d9d9")
    axes = fig.subplots(1, 2)
    image = _bias_panel(axes[0], fox, f"FoX: gate {period_gate:g} at '.', {WORD_GATE:g} "
                        "elsewhere", cmap)
    _bias_panel(axes[1], alibi, f"ALiBi: slope m = {slope:.3f}", cmap)
    fig.subplots_adjust(left=0.1, right=0.88, bottom=0.24, top=0.9, wspace=0.45)
    bar = fig.add_axes((0.9, 0.24, 0.018, 0.66))
    fig.colorbar(image, cax=bar, label="bias")
    return axes


def sentence_logits(n: int = 16, seed: int = 0) -> np.ndarray:
    """One query's logits over ``n`` keys, standard normal from ``seed``: ``[n]``."""
    n = check_int("n", n, minimum=2)
    return np.random.default_rng(check_int("seed", seed, minimum=0)).normal(size=n)


def draw_stick_breaking(fig, shift: float, n: int = 16, seed: int = 0):
    """The last query's weights over ``n`` keys, the logits :func:`sentence_logits` plus
    ``shift``: softmax (the same for every shift) against stick-breaking, whose shares
    ``sigmoid(z)`` grow with the shift so the nearest keys take more. The title gives the
    stick-breaking sum and the remainder. Returns the axes."""
    shift = check_float("shift", shift)
    z = sentence_logits(n, seed) + shift
    logits = np.full((n, n), -np.inf)
    logits[-1] = z  # only the last query's row is drawn; the others are masked
    stick = stick_breaking_weights(logits)[-1]
    soft = np.exp(z - z.max())
    soft /= soft.sum()
    ax = fig.add_subplot()
    j = np.arange(n)
    ax.bar(j - 0.2, soft, width=0.4, color=COLORS[0], label="softmax")
    ax.bar(j + 0.2, stick, width=0.4, color=COLORS[1], label="stick-breaking")
    ax.set(xlabel=f"key j (the query is {n - 1})", ylabel="attention weight",
           ylim=(0, 1.0), xticks=j[::3])
    ax.set_title(f"logits {shift:+g}: stick-breaking sum {stick.sum():.2f}, "
                 f"remainder {1 - stick.sum():.2f}", fontsize=10)
    ax.legend(fontsize=9, loc="upper left", frameon=False)
    return ax



#: How each variant of :data:`posenc.experiments.order_probe.RECURRENCE_VARIANTS` is drawn.
ORDER_PROBE_STYLE = {"convolution and decay": COLORS[0], "decay only": COLORS[2],
                     "convolution only": COLORS[1], "neither (control)": "#777777"}


def draw_order_probe(fig, results: dict):
    """Held-out accuracy on the positional task against training steps, one line per
    variant and seed of :func:`posenc.experiments.order_probe.run_order_probe`'s ``results``
    (a run ends when it reaches the criterion), with the criterion and the most an
    order-blind model can score (:func:`~posenc.experiments.order_probe.order_blind_bound`).
    Returns the axes."""
    from ...experiments.order_probe import order_blind_bound

    settings = results["settings"]
    ax = fig.subplots()
    for name, runs in results["runs"].items():
        for k, run in enumerate(runs.values()):
            ax.plot(run["step"], run["accuracy"], color=ORDER_PROBE_STYLE[name], lw=1.6,
                    label=name if k == 0 else None)
    ax.axhline(settings["criterion"], color="#333333", ls="--", lw=1.0, label="criterion")
    ax.axhline(order_blind_bound(settings), color="#333333", ls=":", lw=1.2,
               label="order-blind bound")
    ax.set(xlabel="training step", ylabel="held-out accuracy", ylim=(0, 1.02),
           xlim=(0, settings["max_steps"]),
           title="positional task: a 2-layer hybrid, attention without position")
    # under the axes: inside, some seed's curve crosses every corner
    fig.legend(fontsize=8, loc="outside lower center", ncol=3, frameon=False)
    return ax


def order_probe_findings(results: dict) -> dict[str, bool]:
    """Each sentence chapter 17 says about the committed order-probe runs
    (:func:`posenc.experiments.order_probe.run_order_probe`), mapped to whether it holds."""
    from ...experiments.order_probe import order_blind_bound, summarise

    rows, bound = summarise(results), order_blind_bound(results["settings"])
    both, control = rows["convolution and decay"], rows["neither (control)"]
    alone = [rows["decay only"], rows["convolution only"]]
    blind_steps = [s for s in both["beyond_blind"] if s is not None]
    reached = [s for s in both["steps"] if s is not None]
    return {
        "three seeds of each, 6,000 steps at most":
            all(len(r["seeds"]) == 3 for r in rows.values())
            and results["settings"]["max_steps"] == 6000,
        "with both sources, every seed rises above the order-blind bound by step 2,000":
            len(blind_steps) == 3 and max(blind_steps) <= 2000,
        "with both sources, one seed reaches 95 %, at step 5,100": reached == [5100],
        "with both sources, the other two end above 80 %, short of 95 %":
            sorted(both["final"])[0] > 0.8 and sorted(both["final"])[1] < 0.95,
        "with either source alone, no seed rises above the bound in 6,000 steps":
            all(step is None for row in alone for step in row["beyond_blind"]),
        "the control stays at or below the order-blind bound in every seed, at every step":
            all(best <= bound for best in control["best"]),
    }
