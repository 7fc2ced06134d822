"""Figures of the first chapter, why order matters."""

from __future__ import annotations

import numpy as np

from .style import METHOD_COLORS

__all__ = ["ATTENTION", "draw_word_change", "blind_note"]

#: The two forms of the layer the word-change figure compares: every token sees every other
#: one (an encoder), or only those before it (a decoder's causal mask).
ATTENTION = ("encoder (bidirectional)", "decoder (causal)")

_OTHERS = "#c8c8c8"  # the overview's bars of the methods not picked


def blind_note(method: str, blind, layer: str = ATTENTION[0]) -> tuple[str, str] | None:
    """Why ``method``'s bars are all 0, or why they no longer are, as ``(reason, effect)``;
    ``None`` for a method that sees the reversal by itself. ``"none"`` has no position at
    all; a method in ``blind`` (the chapter's reversal test) adds a bias that is the same for a
    key before the query as after it, and reversing a sentence only swaps the two sides.
    Under the causal mask both see it: the mask is an order signal of its own."""
    if method != "none" and method not in blind:
        return None
    if layer != ATTENTION[0]:
        return ("causal mask", "the mask alone sees the reversal")
    if method == "none":
        return ("no position", "it cannot see any shuffle")
    return ("symmetric bias", "it cannot see a reversal")


def draw_word_change(fig, changes: dict[str, dict[str, float]],
                     causal: dict[str, dict[str, float]], blind, method: str,
                     layer: str = ATTENTION[0]):
    """The relative change of each word's output between "I love you" and "you love I".

    Left, for one position ``method``: a bar per word (``changes[method]``, or
    ``causal[method]`` for the decoder's causal mask, from the chapter's runs), and for
    ``"none"`` and the methods in ``blind`` (those the chapter's reversal test found blind
    to a reversal) the reason written in the panel (:func:`blind_note`). Right, every method
    at once: its largest change of a word, the picked one on a shaded row in its colour, the
    blind ones named. One scale per ``layer`` (:data:`ATTENTION`), so picking another method
    compares methods. Returns the two axes."""
    if layer not in ATTENTION:
        raise ValueError(f"layer must be one of {ATTENTION}, got {layer!r}")
    if method not in changes:
        raise ValueError(f"method must be one of {sorted(changes)}, got {method!r}")
    encoder = layer == ATTENTION[0]
    table = changes if encoder else causal
    top = 1.2 * max(max(c.values()) for c in table.values())
    left, right = fig.subplots(1, 2, width_ratios=(1, 1.25), gridspec_kw={"wspace": 0.45})

    words = table[method]
    bars = left.bar(list(words), list(words.values()), width=0.6,
                    color=METHOD_COLORS[method], edgecolor="#333333", lw=0.6)
    left.bar_label(bars, fmt="%.3f", fontsize=8)
    note = blind_note(method, blind, layer)
    if note:
        color = "#b00000" if encoder else "#0b5394"
        # above the tallest bar of any method (the y scale leaves it the top quarter)
        left.text(0.5, 0.85, f"{note[0]}:\n{note[1]}", transform=left.transAxes, ha="center",
                  va="center", fontsize=8.5, color=color,
                  bbox={"boxstyle": "round,pad=0.4", "fc": "white", "ec": color, "lw": 0.8})
    left.set_ylim(0, 1.45 * top)
    left.set_ylabel("relative change of\nthe word's output")
    left.set_title(layer, fontsize=9)
    fig.suptitle(f'"I love you" vs "you love I": position={method}', fontsize=10, y=1.02)

    names = list(table)
    largest = [max(table[m].values()) for m in names]
    rows = np.arange(len(names))[::-1]
    picked = rows[names.index(method)]
    right.axhspan(picked - 0.5, picked + 0.5, color="#fdf0c2", lw=0, zorder=0)  # its row
    right.barh(rows, largest, height=0.7,
               color=[METHOD_COLORS[m] if m == method else _OTHERS for m in names])
    right.set_yticks(rows, names, fontsize=8)
    right.set_xlim(0, top)
    right.set_ylim(-0.6, len(names) - 0.4)
    right.tick_params(axis="x", labelsize=8)
    right.set_xlabel("largest change of a word", fontsize=9)
    right.set_title("every method", fontsize=9)
    right.grid(axis="y", visible=False)
    if encoder:
        for row, name, value in zip(rows, names, largest, strict=True):
            if blind_note(name, blind):
                right.text(value + top * 0.02, row, "no position" if name == "none"
                           else "symmetric", va="center", fontsize=8, color="#b00000")
    return left, right
