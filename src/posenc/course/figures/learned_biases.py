"""Draw functions for the chapter on learned and contextual biases (KERPLE, FIRE, CoPE).

Each ``draw_*(fig, **values)`` draws into a fresh matplotlib figure, the way
:func:`posenc.course.figures.sliders.slider_figure` calls it; axes limits stay fixed across
slider values so that a slider shows a real change. The formulas come from
:mod:`posenc.learned_bias`; the FIRE fits from :func:`posenc.nn.fire.fit_fire`.
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_choice, check_int
from ...learned_bias import cope_positions, fire_normalized_distance, kerple_log, kerple_power
from ...relative import t5_relative_bucket
from .sliders import format_value
from .style import METHOD_COLORS

__all__ = [
    "COPE_SENTENCE",
    "COPE_COUNTING",
    "cope_gates",
    "draw_kerple_kernel",
    "draw_fire_normalized",
    "fire_fit_targets",
    "fire_fits",
    "draw_fire_fit",
    "draw_cope_positions",
]

GREY = "#888888"

#: The little text whose tokens CoPE counts in the chapter (one token per word or stop).
COPE_SENTENCE = "Ann met Bob . He was late . They ate cake . Then they left .".split()

#: What the gates open on: every token, words only, or sentence ends only.
COPE_COUNTING = ("tokens", "words", "sentences")


def cope_gates(tokens, counting: str) -> np.ndarray:
    """0/1 gates per key for a counting rule, the same for every query: ``[n]`` float64.

    In CoPE the gate is ``sigmoid(q_i . k_j)``; a query whose vector lines up with the
    keys of full stops (and against the others) drives it to these 0/1 values.
    """
    check_choice("counting", counting, COPE_COUNTING)
    tokens = list(tokens)
    if counting == "tokens":
        return np.ones(len(tokens))
    stop = np.array([t == "." for t in tokens], dtype=np.float64)
    return stop if counting == "sentences" else 1.0 - stop


def draw_kerple_kernel(fig, kernel: str, r1: float, r2: float, max_distance: int = 64):
    """KERPLE's bias against the distance for one head, with ALiBi's line of slope ``r1``
    (the power kernel at ``r2 = 1``) for reference."""
    check_choice("kernel", kernel, ("power", "log"))
    d = np.arange(check_int("max_distance", max_distance) + 1, dtype=np.float64)
    formula = kerple_power if kernel == "power" else kerple_log
    ax = fig.add_subplot()
    ax.plot(d, kerple_power(d, r1, 1.0), "--", color=METHOD_COLORS["alibi"], lw=1.2,
            label=f"ALiBi, slope {format_value(r1)}")
    color = METHOD_COLORS["kerple_power" if kernel == "power" else "kerple_log"]
    text = (f"−{format_value(r1)}·d^{format_value(r2)}" if kernel == "power"
            else f"−{format_value(r1)}·log(1 + {format_value(r2)}·d)")
    ax.plot(d, formula(d, r1, r2), color=color, lw=2, label=f"KERPLE {kernel}: {text}")
    ax.set(xlabel="distance d = i − j", ylabel="bias", xlim=(0, d[-1]), ylim=(-16, 0.5))
    ax.legend(loc="lower left", fontsize=8, frameon=False)
    ax.set_title(f"KERPLE {kernel} kernel: r1 = {format_value(r1)}, r2 = {format_value(r2)}")


def draw_fire_normalized(fig, c: float, threshold: int, queries=(32, 64, 128, 256)):
    """FIRE's normalised distance ``psi(i-j) / psi(max(L, i))`` for a few queries ``i``:
    against the distance (left) and against the relative distance ``(i - j) / i``
    (right), where the curves of queries past ``L`` meet when ``c`` is small."""
    axes = fig.subplots(1, 2, sharey=True)
    colors = [METHOD_COLORS["fire"], "#CC6677", "#DDAA33", "#332288"]
    for i, color in zip(queries, colors, strict=False):
        d = np.arange(i + 1, dtype=np.float64)
        nd = fire_normalized_distance(d, float(i), c, float(threshold))
        style = "-" if i >= threshold else ":"
        axes[0].plot(d, nd, style, color=color, lw=1.6, label=f"query i = {i}")
        axes[1].plot(d / i, nd, style, color=color, lw=1.6)
    axes[0].set(xlabel="distance i − j", ylabel="normalised distance", xlim=(0, max(queries)),
                ylim=(0, 1.05))
    axes[1].set(xlabel="relative distance (i − j) / i", xlim=(0, 1))
    axes[0].legend(fontsize=8, frameon=False, loc="lower right")
    fig.suptitle(f"FIRE: ψ(i − j) / ψ(max(L, i)), c = {format_value(c)}, L = {threshold}"
                 " (dotted: i < L)", fontsize=10)


def fire_fit_targets(n: int = 128) -> dict[str, np.ndarray]:
    """Two biases of the distance ``0 .. n-1`` for FIRE to fit: ALiBi's line with slope
    1/8, and a staircase on T5's 32 decoder buckets (``-bucket / 4``, a stand-in for a
    trained T5 table, whose values are learned)."""
    d = np.arange(check_int("n", n, minimum=2))
    buckets = t5_relative_bucket(-d, bidirectional=False, num_buckets=32, max_distance=128)
    return {"ALiBi-like": -d / 8.0, "T5-like": -buckets / 4.0}


def fire_fits(steps=(0, 50, 200, 1000), n: int = 128, seed: int = 0) -> dict[str, dict]:
    """:func:`posenc.nn.fire.fit_fire` on each of :func:`fire_fit_targets`, with the fit
    kept at each of ``steps`` (``seed``: the fit's initial weights)."""
    from ...nn.fire import fit_fire  # torch only when fitting

    return {name: fit_fire(target, steps=max(steps), snapshots=tuple(steps), seed=seed)
            for name, target in fire_fit_targets(n).items()}


def draw_fire_fit(fig, target: str, steps: int, fits: dict):
    """One FIRE head fitted to ``target`` after ``steps`` Adam steps (``fits`` from
    :func:`fire_fits`): the target and the fit against the distance."""
    result = fits[target]
    fit = result["snapshots"][steps]
    ax = fig.add_subplot()
    ax.plot(result["distance"], result["target"], color=GREY, lw=3, alpha=0.6,
            label=f"target: {target}")
    ax.plot(result["distance"], fit, color=METHOD_COLORS["fire"], lw=1.6, label="FIRE fit")
    err = np.abs(fit - result["target"]).max()
    ax.set(xlabel="distance i − j", ylabel="bias", xlim=(0, result["distance"][-1]),
           ylim=(-17, 1.5))
    ax.legend(loc="lower left", fontsize=8, frameon=False)
    ax.set_title(f"FIRE fitted to a {target} bias: {steps} steps, max error {err:.2f}")


def draw_cope_positions(fig, counting: str, query: int, tokens=COPE_SENTENCE):
    """CoPE's position ``p`` of every key seen from ``query`` (0-based), when the gates
    open on ``counting`` (:data:`COPE_COUNTING`); keys after the query are masked."""
    tokens = list(tokens)
    n = len(tokens)
    query = check_int("query", query, minimum=0)
    if query >= n:
        raise ValueError(f"query must be in 0 .. {n - 1}, got {query}")
    gates = np.broadcast_to(cope_gates(tokens, counting), (n, n))
    p = cope_positions(gates)[query]
    ax = fig.add_subplot()
    keys = np.arange(n)
    seen = keys <= query
    ax.bar(keys[seen], p[seen], color=METHOD_COLORS["cope"], width=0.7)
    ax.bar(keys[~seen], np.zeros((~seen).sum()) + 0.15, color="#dddddd", width=0.7)
    for j in keys[seen]:
        ax.annotate(format_value(float(p[j])), (j, p[j]), ha="center", va="bottom",
                    fontsize=8, xytext=(0, 2), textcoords="offset points")
    labels = [f"[{t}]" if j == query else t for j, t in enumerate(tokens)]
    ax.set_xticks(keys, labels, rotation=60, fontsize=8)
    ax.set(ylabel="position p of the key", ylim=(0, n + 1.5), xlim=(-0.6, n - 0.4))
    ax.grid(axis="x", visible=False)
    ax.set_title(f"CoPE counting {counting}, from the query [{tokens[query]}] (token {query})",
                 fontsize=10)
