"""Figures and tables of chapter 13, take four: converge, then extrapolate.

Drawn from a results dict of the take-four presets (``main``, ``full``: runs trained until
the held-out positional check reaches ``stop_accuracy`` or the step cap), read through the
verdict rules of :mod:`posenc.experiments.extrapolation.verdicts`, so a figure and a
sentence use the same words.
"""

from __future__ import annotations

import math

import numpy as np

from ...compare import html_table
from ...experiments.extrapolation.config import task_key
from ...experiments.extrapolation.convergence import HEAD_SCORES as CHECKED_SCORES
from ...experiments.extrapolation.convergence import Checker
from ...experiments.extrapolation.training import seed_everything
from ...experiments.extrapolation.verdicts import (
    CHANCE,
    by_seed,
    method_verdict,
    seed_verdicts,
    train_layout_counts,
)
from ...heads import task_head_scores
from ...model import TinyLM
from .extrapolation import variant_color, variant_linestyle
from .long_context import LENGTH_MARKERS

__all__ = ["steps_to_learn", "learned_seeds", "learned_accuracy",
           "HEAD_SCORES", "head_curves", "formation_step", "rate_sweep", "draw_rate_sweep",
           "draw_task_heads", "untrained_head_scores",
           "rank_correlation", "grid", "verdict",
           "draw_steps_to_learn", "draw_check_curves",
           "draw_positional_loss", "draw_head_curves", "draw_learned_extrapolation",
           "draw_grid", "verdict_table_html"]


def steps_to_learn(results, variant: str) -> list:
    """Each seed's steps to learn (``None``: it did not reach the criterion by the cap)."""
    return by_seed(results["variants"][variant], "steps_to_learn")


def learned_seeds(results, variant: str) -> list[int]:
    """The indices of the seeds that reached the criterion at 1x."""
    return [i for i, s in enumerate(steps_to_learn(results, variant)) if s is not None]


def learned_accuracy(results, variant: str, length_index: int,
                     task: str = "positional") -> list[float]:
    """A task's accuracy at one evaluation length for the seeds that learned at 1x only
    (empty when none did, or where the model is not defined): what extrapolation means once a
    model has fit its training length."""
    rows = by_seed(results["variants"][variant], task_key(task, "accuracy"))
    values = [rows[i][length_index] for i in learned_seeds(results, variant)]
    return [v for v in values if v is not None]  # a learned table: not defined past L_train


def verdict(results, variant: str) -> str:
    """The method's word (:func:`~posenc.experiments.extrapolation.verdicts.method_verdict`)."""
    return method_verdict(seed_verdicts(results, variant))


#: The lowest layer read for each head score a check records
#: (:data:`~posenc.experiments.extrapolation.convergence.HEAD_SCORES`): an induction step
#: needs a lower layer's marks, so its best head is sought above layer 0.
HEAD_SCORES = dict(zip(CHECKED_SCORES, (0, 1, 0, 1), strict=True))


def _best_head(layers, key: str) -> float:
    """The best head's score of one check (``[layer][head]``, ``None`` for a recurrent
    layer) from ``key``'s lowest layer up; NaN where no attention layer is read."""
    return max((max(layer) for layer in layers[HEAD_SCORES[key]:] if layer is not None),
               default=math.nan)


def head_curves(results, variant: str, seed: int = 0) -> dict:
    """One seed's head scores at every check: ``{"step": [...], key: [...]}`` for each of
    :data:`HEAD_SCORES` the run recorded, each score the best head of any attention layer
    from the key's lowest layer up (recurrent layers have none). Every seed's scores come
    from ``check_by_seed``; a file that kept only the first seed's (in its history) has
    seed 0 alone."""
    entry = results["variants"][variant]
    checks = entry.get("check_by_seed")
    if checks and "previous_token" in checks[0]:
        if not 0 <= seed < len(checks):
            raise ValueError(f"seed must be in [0, {len(checks) - 1}] for {variant!r}, "
                             f"got {seed!r}")
        record = checks[seed]
        steps = record["step"]
    elif seed == 0:
        record = entry["history"]
        steps = record["check_step"]
    else:
        raise ValueError(f"{variant!r} kept head scores for its first seed only; got seed {seed!r}")

    return {"step": list(steps), **{key: [_best_head(check, key) for check in record[key]]
                                   for key in HEAD_SCORES if key in record}}


def formation_step(results, variant: str, key: str, level: float, seed: int = 0
                   ) -> int | None:
    """The first check (of ``seed``) at which the best head's ``key`` score (one of
    :data:`HEAD_SCORES`, :func:`head_curves`) reaches ``level``; ``None`` if it never does
    before the run stopped."""
    curves = head_curves(results, variant, seed)
    if key not in curves:
        raise ValueError(f"key must be one of {sorted(set(curves) - {'step'})}, got {key!r}")
    for step, value in zip(curves["step"], curves[key], strict=True):
        if value >= level:
            return step
    return None


def untrained_head_scores(config, variant: str, heldout) -> dict[str, float]:
    """The best head's task scores (:func:`posenc.heads.task_head_scores`) of ``variant``'s
    model before any training (``config.seed``'s initial weights), on the held-out check
    sequences of ``config`` (:class:`~posenc.experiments.extrapolation.convergence.Checker`):
    ``{"value_to_key": ..., "query_to_value": ...}``, each the best head from its
    :data:`HEAD_SCORES` layer up. What a method gives the binding's two steps for free."""
    seed_everything(config.seed)
    model = TinyLM(config.model_config(variant)).eval()
    scores = task_head_scores(model, Checker(config, heldout).batch)
    return {key: _best_head(layers, key) for key, layers in scores.items()}


def rate_sweep(runs, variants) -> dict[str, dict[float, int | None]]:
    """The learning-rate sweep: ``runs`` maps a peak learning rate to a results dict of the
    same protocol (its first seed read: the sweep is one seed per rate); returns each
    variant's steps to learn per rate (``None``: not by the cap)."""
    rates = sorted(runs)
    if len(rates) < 2:
        raise ValueError(f"runs must hold at least 2 learning rates, got {rates}")
    for rate in rates:
        found = runs[rate]["config"]["learning_rate"]
        if not math.isclose(found, rate):
            raise ValueError(f"runs[{rate!r}] was trained at learning rate {found!r}")
    return {v: {rate: steps_to_learn(runs[rate], v)[0] for rate in rates} for v in variants}


def draw_rate_sweep(ax, runs, variants, *, shared: float) -> None:
    """One row per variant: its steps to learn (first seed) at each learning rate of
    ``runs`` (:func:`rate_sweep`), a marker per rate, × at the cap for a rate at which it
    did not learn; ``shared`` is the rate every method trained at (drawn filled)."""
    sweep = rate_sweep(runs, variants)
    rates = sorted(runs)
    cap = max(r["config"]["steps"] for r in runs.values())
    markers = ("v", "o", "^", "s", "D")
    labels = {v: runs[shared]["variants"][v]["label"] for v in variants}
    for row, variant in enumerate(variants):
        ax.axhline(row, color="#dddddd", lw=0.8, zorder=0)
        for k, rate in enumerate(rates):
            steps = sweep[variant][rate]
            filled = math.isclose(rate, shared)
            ax.plot(cap if steps is None else steps, row + (k - (len(rates) - 1) / 2) * 0.18,
                    marker="x" if steps is None else markers[k % len(markers)], ms=6,
                    ls="none", color=variant_color(variant),
                    mfc=variant_color(variant) if filled else "none")
    for k, rate in enumerate(rates):
        ax.plot([], [], marker=markers[k % len(markers)], ls="none", color="#555555",
                mfc="#555555" if math.isclose(rate, shared) else "none",
                label=f"{rate:g}" + (" (shared)" if math.isclose(rate, shared) else ""))
    ax.axvline(cap, color="#555555", ls=":", lw=1.1)
    ax.set_yticks(range(len(variants)), [labels[v] for v in variants])
    ax.set_ylim(len(variants) - 0.5, -0.5)
    ax.set_xlabel(f"steps to learn (one seed; × = not by {cap:,})")


def rank_correlation(x, y) -> float:
    """Spearman's rank correlation of two equal-length sequences (ties get their mean
    rank; ``inf`` is a value like any other, larger than every number)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 3:
        raise ValueError(f"x and y must be 1-D of the same length >= 3, got {x.shape}, {y.shape}")

    def ranks(a):
        order = np.argsort(a, kind="stable")
        r = np.empty(len(a))
        r[order] = np.arange(len(a))
        for value in np.unique(a):  # ties: their mean rank
            r[a == value] = r[a == value].mean()
        return r

    rx, ry = ranks(x), ranks(y)
    return float(np.corrcoef(rx, ry)[0, 1])


def grid(results, variant: str) -> tuple[list[int], np.ndarray]:
    """``(distances, accuracy)``: the positional task at the grid's distances (seen in
    training) with the query at the end of every evaluation length; accuracy ``[lengths,
    distances]``, the mean over the seeds that learned at 1x (from ``positional_grid_by_seed``;
    a file without it keeps only the mean over every seed, used when every seed learned).
    NaN where no seed learned, or where a length is not defined."""
    distances = list(results["config"]["grid_distances"])
    entry = results["variants"][variant]
    seeds = learned_seeds(results, variant)
    lengths = len(results["eval_lengths"])
    if "positional_grid_by_seed" in entry and seeds:
        rows = [entry["positional_grid_by_seed"][i] for i in seeds]
    elif seeds and len(seeds) == len(steps_to_learn(results, variant)):
        rows = [entry["positional_grid"]]
    else:
        return distances, np.full((lengths, len(distances)), np.nan)
    values = np.array([[[np.nan] * len(distances) if r is None else r for r in row]
                       for row in rows], dtype=np.float64)  # [seeds, lengths, distances]
    return distances, values.mean(axis=0)


def draw_steps_to_learn(ax, results, variants, *, cap: int | None = None) -> list[str]:
    """One row per variant, a dot per seed at its steps to learn, an open mark at the cap
    for a seed that did not learn; rows sorted by the median (not learned counts as past
    the cap). Returns the order drawn (top row first)."""
    cap = results["config"]["steps"] if cap is None else cap

    def key(variant):
        steps = [cap * 1.5 if s is None else s for s in steps_to_learn(results, variant)]
        return float(np.median(steps))

    order = sorted(variants, key=key)
    for row, variant in enumerate(order):
        steps = steps_to_learn(results, variant)
        jitter = np.linspace(-0.18, 0.18, len(steps)) if len(steps) > 1 else [0.0]
        for s, dy in zip(steps, jitter, strict=True):
            if s is None:
                ax.plot(cap, row + dy, marker="x", ms=5, color="#555555", ls="none")
            else:
                ax.plot(s, row + dy, marker="o", ms=5, color=variant_color(variant), ls="none")
    ax.set_yticks(range(len(order)),
                  [results["variants"][v]["label"] for v in order], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(cap, color="#555555", ls=":", lw=1.2)
    ax.set_xlim(0, cap * 1.04)
    ax.set_xlabel(f"steps to learn (held-out positional answers ≥ "
                  f"{results['config']['stop_accuracy']:.0%}); × = not by {cap:,}")
    return order


def draw_check_curves(ax, results, variants) -> None:
    """The held-out positional accuracy (laid out as in training) at every check, one thin
    line per seed, with the criterion and chance marked."""
    stop = results["config"]["stop_accuracy"]
    for variant in variants:
        entry = results["variants"][variant]
        checks = entry.get("check_by_seed") or [{"step": entry["history"]["check_step"],
                                                 "right": entry["history"]["check_right"]}]
        scored = entry["train_layout_scored"]
        for i, check in enumerate(checks):
            ax.plot(check["step"], np.array(check["right"]) / scored, lw=1.2, alpha=0.85,
                    color=variant_color(variant), ls=variant_linestyle(variant),
                    label=entry["label"] if i == 0 else None)
    for level, text in ((stop, "stop"), (CHANCE, "chance")):
        ax.axhline(level, color="#555555", ls=":", lw=1.1)
        ax.text(0.01, level + 0.01, text, transform=ax.get_yaxis_transform(), va="bottom",
                fontsize=8, color="#555555")
    ax.set_ylim(-0.02, 1.02)
    ax.yaxis.set_major_formatter(lambda y, _: f"{y:.0%}")
    ax.set_xlabel("training step")
    ax.set_ylabel("held-out positional answers right")


def draw_positional_loss(ax, results, variants) -> None:
    """The training loss on the positional answers (first seed), with ln 4: the loss of a
    model that copies one of the 4 values present, right only by luck."""
    for variant in variants:
        history = results["variants"][variant]["history"]
        ax.plot(history["step"], history["positional_loss"], lw=1.3,
                color=variant_color(variant), ls=variant_linestyle(variant),
                label=results["variants"][variant]["label"])
    ax.axhline(math.log(4), color="#555555", ls=":", lw=1.1)
    ax.text(0.995, math.log(4), r"$\ln 4$ ", transform=ax.get_yaxis_transform(), ha="right",
            va="bottom", fontsize=8, color="#555555")
    ax.set_xlabel("training step")
    ax.set_ylabel("positional answer loss (nats)")


def draw_head_curves(axes, results, variants) -> None:
    """Two panels: the best previous-token head and the best induction head at every check
    (first seed), one line per variant, each line ending where its run stopped."""
    for ax, key, title in zip(axes, ("previous_token", "induction"),
                              ("previous-token head", "induction head"), strict=True):
        for variant in variants:
            curves = head_curves(results, variant)
            ax.plot(curves["step"], curves[key], lw=1.4, color=variant_color(variant),
                    ls=variant_linestyle(variant), label=results["variants"][variant]["label"])
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("training step")
    axes[0].set_ylabel("best head's score")


def draw_task_heads(axes, results, variants, *, level: float = 0.5) -> None:
    """Two panels from the checks on the task's own sequences: the best value-to-key head and
    the best query-to-value head (:data:`HEAD_SCORES`) of every seed, against the training
    step as a share of that seed's steps to learn (1 = the check that reached the
    criterion), one thin line per seed; ``level`` is drawn for reference."""
    for ax, key, title in zip(axes, ("value_to_key", "query_to_value"),
                              ("value → its key", "query → its answer"), strict=True):
        for variant in variants:
            entry = results["variants"][variant]
            for seed, learned in enumerate(steps_to_learn(results, variant)):
                curves = head_curves(results, variant, seed)
                end = learned or curves["step"][-1]
                ax.plot(np.array(curves["step"]) / end, curves[key], lw=1.1, alpha=0.85,
                        color=variant_color(variant), ls=variant_linestyle(variant),
                        label=entry["label"] if seed == 0 else None)
        ax.axhline(level, color="#555555", ls=":", lw=1.0)
        ax.axvline(1.0, color="#555555", ls=":", lw=1.0)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("step / steps to learn")
    axes[0].set_ylabel("best head's weight")


def draw_learned_extrapolation(ax, results, variants, *, task: str = "positional") -> list[str]:
    """One row per variant: for each seed that learned at 1x, its accuracy at every longer
    evaluation length (2x to 8x, each with its marker and colour of
    :data:`~posenc.course.figures.long_context.LENGTH_MARKERS`). Variants with no such seed,
    or not defined past the training length (a learned table), are left out. Returns the
    rows drawn."""
    markers, shades = zip(*LENGTH_MARKERS, strict=True)
    lengths = results["eval_lengths"]
    drawn = [v for v in variants if learned_accuracy(results, v, 1, task)]  # defined at 2x
    for row, variant in enumerate(drawn):
        for i in range(1, len(lengths)):
            values = learned_accuracy(results, variant, i, task)
            ax.plot(values, [row] * len(values), marker=markers[i], color=shades[i], ls="none",
                    ms=5, label=f"{lengths[i] // lengths[0]}×" if row == 0 else None)
    ax.set_yticks(range(len(drawn)), [results["variants"][v]["label"] for v in drawn],
                  fontsize=8)
    ax.invert_yaxis()
    ax.axvline(CHANCE, color="#555555", ls=":", lw=1.1)
    ax.set_xlim(-0.02, 1.02)
    ax.xaxis.set_major_formatter(lambda x, _: f"{x:.0%}")
    ax.set_xlabel(f"{task} accuracy past the training length, seeds that learned at 1×")
    return drawn


def draw_grid(ax, results, variant: str) -> None:
    """The positional task at the grid's fixed distances against the query's position (the
    end of each evaluation length): a line per distance. Flat lines: position does not
    matter, only distance; falling lines: the absolute position breaks it."""
    distances, accuracy = grid(results, variant)
    ends = [length - 1 for length in results["eval_lengths"]]
    for j, distance in enumerate(distances):
        ax.plot(ends, accuracy[:, j], marker="o", ms=4, lw=1.4,
                color=("#0072B2", "#E69F00", "#009E73", "#CC79A7")[j % 4],
                label=f"{distance} bytes back")
    ax.axvline(results["train_length"], color="#555555", ls=":", lw=1.1)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ends, [str(e) for e in ends])
    ax.set_ylim(-0.02, 1.02)
    ax.yaxis.set_major_formatter(lambda y, _: f"{y:.0%}")
    ax.set_title(results["variants"][variant]["label"], fontsize=10)
    ax.set_xlabel("query position")


def verdict_table_html(results, variants) -> str:
    """An HTML table: per variant its verdict, each seed's steps to learn and 1x accuracy
    (laid out as in training), and the mean accuracy at 2x, 4x and 8x over the seeds that
    learned (– where none did)."""
    lengths = results["eval_lengths"]
    head = ["model", "verdict", "steps to learn (per seed)", "1× as trained (per seed)",
            *(f"{m // lengths[0]}× (learned seeds)" for m in lengths[1:])]
    rows = []
    for variant in variants:
        steps = ", ".join("–" if s is None else f"{s:,}" for s in steps_to_learn(results, variant))
        ones = ", ".join(f"{r / n:.0%}" for r, n in train_layout_counts(results, variant))
        beyond = []
        for i in range(1, len(lengths)):
            values = learned_accuracy(results, variant, i)
            beyond.append("–" if not values else f"{np.mean(values):.0%}")
        rows.append([results["variants"][variant]["label"], verdict(results, variant), steps,
                     ones, *beyond])
    return html_table(head, rows, "verdicts: steps to learn and accuracy by length",
                      compact=True)
