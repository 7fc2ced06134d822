"""Self-check questions of chapter 4, "Rotary position embedding (RoPE)" (``04_rope``).

Each has the id ``"rope.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

import numpy as np

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "04_rope"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...rope import rope_angles, rope_frequencies

    slow = int((rope_angles(np.array([4096]), 128, 10000.0)[0] < 2 * np.pi).sum())
    slowest = 2 * np.pi / rope_frequencies(128, 10000.0)[-1]
    slowest_big = 2 * np.pi / rope_frequencies(128, 500000.0)[-1]
    assert slowest_big > slowest
    return [
        mc("rope.dot-product-depends-on",
           "RoPE rotates q at position m and k at position n. Their dot product depends on "
           "the positions only through…",
           "m − n",
           {"m + n": "Rotating both by their own angles leaves the angle between them, "
                     "(m − n)·θ, in the dot product.",
            "m and n separately": "That is what an absolute encoding added to the input does."},
           "R(mθ)q · R(nθ)k = q · R((n − m)θ)k.",
           understanding=True),
        number("rope.pairs-under-one-turn",
               "head_dim = 128, base = 10000: how many of the 64 pairs have not completed one "
               "full turn by position 4096?",
               float(slow), 0.5, f"{slow} pairs have a wavelength longer than 4096 positions.",
               "Pair i turns by 4096·θᵢ with θᵢ = base^(−2i/head_dim); count the pairs where "
               "that stays below 2π."),
        mc("rope.larger-base-slowest-pair",
           "A model raises base from 10000 to 500000 (head_dim = 128). Its slowest pair now "
           "turns…",
           "more slowly: its wavelength grows",
           {"faster": "θᵢ = base^(−2i/d) shrinks when base grows.",
            "at the same speed": "Only pair 0 keeps its speed whatever the base."},
           f"Its wavelength goes from about {slowest:,.0f} to {slowest_big:,.0f} positions.",
           understanding=True),
    ]
