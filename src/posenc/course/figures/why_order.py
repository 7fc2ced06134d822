"""Figures of the first chapter, why order matters."""

from __future__ import annotations

from .style import METHOD_COLORS

__all__ = ["draw_word_change"]


def draw_word_change(fig, changes: dict[str, dict[str, float]], method: str):
    """The relative change of each word's output between "I love you" and "you love I",
    for one position ``method`` (``changes[method]``: word -> change, from the chapter's
    runs); one y scale for every method, so a slider step compares them."""
    if method not in changes:
        raise ValueError(f"method must be one of {sorted(changes)}, got {method!r}")
    ax = fig.add_subplot()
    words = changes[method]
    bars = ax.bar(list(words), list(words.values()), color=METHOD_COLORS[method])
    ax.bar_label(bars, fmt="%.3f", fontsize=8)
    ax.set_ylim(0, 1.2 * max(max(c.values()) for c in changes.values()))
    ax.set_ylabel("relative change of\nthe word's output")
    ax.set_title(f'"I love you" vs "you love I": position={method}')
    return ax
