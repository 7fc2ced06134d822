"""Figures of the chapter "Positions at inference": where StreamingLLM's kept entries sit.

Every ``draw_*`` function draws into the figure it is given, from the library's one
definition (:func:`posenc.inference.streaming_keep`), and returns what it drew on, so a
slider (:func:`posenc.course.figures.sliders.slider_figure`) can call it per frame.
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_int
from ...inference import streaming_keep
from .style import COLORS

__all__ = ["draw_eviction"]


def draw_eviction(fig, sinks: int, window: int, length: int = 48):
    """A cache of ``length`` tokens after StreamingLLM's eviction (``sinks`` first tokens and
    the last ``window``): each kept entry's position as it was in the text and as
    StreamingLLM assigns it, in the cache (``0 .. n-1``); the evicted tokens in grey. The
    title gives the largest distance the next query sees either way. Returns the axes."""
    sinks = check_int("sinks", sinks, minimum=0)
    window, length = check_int("window", window), check_int("length", length)
    kept = streaming_keep(length, sinks=sinks, window=window)
    evicted = np.setdiff1d(np.arange(length), kept)
    ax = fig.subplots()
    ax.plot(evicted, evicted, "x", color="#999999", ms=4, label="evicted")
    ax.plot(kept, kept, "o", mfc="none", color=COLORS[1], ms=5, label="kept: position in the text")
    ax.plot(kept, np.arange(len(kept)), "o", color=COLORS[0], ms=4,
            label="kept: position in the cache")
    first = kept[sinks] if sinks < len(kept) else kept[-1]
    shift = int(first - min(sinks, len(kept) - 1))
    if shift:  # the first window entry moves down by `shift`: one more rotation by -shift
        ax.annotate("", xy=(first, first - shift), xytext=(first, first),
                    arrowprops=dict(arrowstyle="->", color=COLORS[3], lw=1.4))
        ax.text(first - 1, first - shift / 2, f"re-rotate by −{shift}", color=COLORS[3],
                ha="right", va="center", fontsize=9)
    ax.set_xlabel("token in the text")
    ax.set_ylabel("position id")
    ax.set_xlim(-1, length + 1)
    ax.set_ylim(-2, length + 1)
    ax.set_title(f"{sinks} sinks + window {window}: next query's largest distance "
                 f"{length} in the text, {len(kept)} in the cache", fontsize=9)
    ax.legend(loc="upper left", fontsize=8)
    return ax
