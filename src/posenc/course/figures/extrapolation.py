"""Figures of the extrapolation chapter, drawn from a results dict
(:func:`posenc.experiments.extrapolation.run_experiment` or a committed file).

Each method keeps its registered colour; a derived variant (RoPE + PI, learned +
interpolation) takes the colour of the method it was trained with, dashed.
"""

from __future__ import annotations

import numpy as np

from ...experiments.extrapolation.analysis import binned_mean
from ...experiments.extrapolation.variants import VariantKey
from ...layer_patterns import PATTERNS
from .style import METHOD_COLORS

__all__ = ["variant_color", "variant_linestyle", "draw_loss_by_position",
           "draw_loss_by_length", "draw_training_curves"]


#: A layer pattern's colour when it registered none.
_PATTERN_FALLBACK = "#777777"


def variant_color(variant) -> str:
    """The course colour of a variant (a name or a
    :class:`~posenc.experiments.extrapolation.VariantKey`): that of the encoding it was
    trained with, or of its layer pattern (:attr:`posenc.layer_patterns.LayerPattern.color`)."""
    key = VariantKey.of(variant)
    if key.kind == "pattern":
        return PATTERNS[key.method].color or _PATTERN_FALLBACK
    return METHOD_COLORS[key.source]


#: Line style per kind of variant: derived variants dashed, a method's NoPE-layer twin
#: dotted, fine-tuned RoPE dash-dot, layer patterns long dash-dot, trained methods solid.
_LINESTYLES = {"trained": "-", "derived": "--", "nope": ":", "finetuned": "-.",
               "pattern": (0, (6, 1.5, 1, 1.5))}


def variant_linestyle(variant):
    """The line style of a variant (a name or a key) by its kind (:data:`_LINESTYLES`)."""
    return _LINESTYLES[VariantKey.of(variant).kind]


def draw_loss_by_position(ax, results: dict, variants=None, *, bin_size: int = 16,
                          highlight: str | None = None) -> None:
    """Held-out loss against position in the longest evaluation windows, one line per
    variant (binned by ``bin_size``), the training length marked. ``highlight`` draws one
    variant bold and the others faint."""
    variants = list(results["variants"]) if variants is None else list(variants)
    train = results["train_length"]
    for variant in variants:
        entry = results["variants"][variant]
        x, y = binned_mean(entry["per_position_loss"], bin_size)
        faint = highlight is not None and variant != highlight
        ax.plot(x, y, color=variant_color(variant), ls=variant_linestyle(variant),
                lw=2.4 if variant == highlight else 1.5, alpha=0.25 if faint else 1.0,
                label=entry["label"], zorder=3 if variant == highlight else 2)
    ax.axvline(train, color="#555555", ls=":", lw=1.2)
    ax.text(train, 0.98, " $L_{train}$", transform=ax.get_xaxis_transform(), va="top",
            fontsize=9, color="#555555")
    ax.set_xlabel(f"position in a window of {results['eval_lengths'][-1]} bytes")
    ax.set_ylabel("loss (nats / byte)")


def draw_loss_by_length(ax, results: dict, variants=None) -> None:
    """Mean held-out loss against evaluation length (ALiBi paper, Figure 1 style)."""
    variants = list(results["variants"]) if variants is None else list(variants)
    lengths = np.asarray(results["eval_lengths"])
    for variant in variants:
        entry = results["variants"][variant]
        y = np.array([np.nan if v is None else v for v in entry["loss"]])
        ax.plot(lengths, y, marker="o", ms=4, color=variant_color(variant),
                ls=variant_linestyle(variant), label=entry["label"])
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.minorticks_off()
    ax.axvline(results["train_length"], color="#555555", ls=":", lw=1.2)
    ax.set_xlabel("evaluation length $L_{eval}$ (bytes)")
    ax.set_ylabel("mean loss (nats / byte)")


def draw_training_curves(ax, results: dict) -> None:
    """Training loss (mean over each logging interval) against step, per trained encoding."""
    for variant, entry in results["variants"].items():
        if "history" in entry:
            ax.plot(entry["history"]["step"], entry["history"]["loss"],
                    color=variant_color(variant), label=entry["label"], lw=1.3)
    ax.set_xlabel("training step")
    ax.set_ylabel("training loss (nats / byte)")
