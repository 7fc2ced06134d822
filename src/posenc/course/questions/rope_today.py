"""Self-check questions of chapter 10, "RoPE in today's models" (``10_rope_today``).

Each has the id ``"rope_today.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

import numpy as np

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "10_rope_today"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...rope import rope_frequencies
    from ...rope_variants import xpos_zeta
    from ...scaling import rope_scaling_frequencies

    slow = [int((4096 * rope_frequencies(128, b) < 2 * np.pi).sum()) for b in (1e4, 5e5)]
    assert slow[1] > slow[0]
    zeta0 = float(xpos_zeta(64)[0])
    factor = zeta0 ** (1024 / 512)
    wide_gamma = 4096  # the xPos figure's slider: scale_base 512 -> 4096
    factor_wide = zeta0 ** (1024 / wide_gamma)
    assert factor < factor_wide < 1
    p_rope, _ = rope_scaling_frequencies("proportional", 64, partial_rotary_factor=0.25)
    turning = np.flatnonzero(p_rope)
    partial_slowest = float(rope_frequencies(2 * len(turning))[-1])  # a head of 16 features
    assert np.array_equal(p_rope[turning], rope_frequencies(64)[turning])
    assert float(p_rope[turning[-1]]) > partial_slowest
    return [
        number("rope_today.llama-3-slow-pairs",
               "head_dim = 128: Llama 3 trains with base 500000 instead of 10000. How many "
               "of the 64 pairs now turn less than once within 4096 tokens?",
               float(slow[1]), 0.5,
               f"{slow[1]} pairs have a wavelength 2π·base^(2i/128) longer than 4096 tokens "
               f"(with base 10000: {slow[0]}). Their angles never wrap within the context.",
               "Pair i turns by 4096·θᵢ with θᵢ = base^(−2i/128); count the pairs where that "
               "stays below 2π."),
        mc("rope_today.partial-rope-vs-p-rope",
           "A 64-wide head, fraction 1/4: partial RoPE and p-RoPE both rotate "
           f"{len(turning)} pairs and leave the rest alone. What is the difference?",
           "Which frequencies the rotated pairs get",
           {"Partial RoPE rotates more of the head's features":
                f"Both move {2 * len(turning)} of the 64 features.",
            "p-RoPE's score depends on the absolute positions": "Both are relative: the "
                                                               "score at distance 5 is the "
                                                               "same wherever it sits.",
            "None: they are two names for one method": "They pick different frequencies for "
                                                       "the rotated pairs."},
           f"Partial RoPE treats its {2 * len(turning)} features as a head of that size, a "
           f"whole frequency ladder (slowest pair {partial_slowest:.1e} rad/token); p-RoPE keeps "
           f"the fastest rungs of the full ladder, base^(−2i/64) for pairs 0 to {turning[-1]} "
           f"(slowest {p_rope[turning[-1]]:.2f} rad/token), and zeroes the slow end.",
           understanding=True),
        number("rope_today.xpos-decay",
               "xPos, head_dim = 64, scale_base γ = 512: by what factor is pair 0's share of "
               "q·k multiplied for a key 1024 tokens back? Give 3 decimals.",
               round(factor, 3), 0.0005 + 1e-9,
               f"ζ₀ = 0.4/1.4 ≈ {zeta0:.4f}, and ζ₀^(1024/512) = ζ₀² ≈ {factor:.4f}: the "
               "fastest pair decays most.",
               "The factor is ζᵢ^((m − n)/γ) with ζᵢ = (2i/d + 0.4)/1.4."),
        mc("rope_today.xpos-scale-base-slider",
           f"In the xPos decay figure you move the scale_base slider from 512 to "
           f"{wide_gamma}. Predict what happens to the curves of the keys behind the query.",
           "Every curve flattens: each pair decays more slowly",
           {"Every pair decays faster: a larger γ is a stronger decay":
                "γ divides the distance in ζᵢ^(r/γ): a larger γ makes the same distance count "
                "for less. Move the slider and watch the curves flatten.",
            "Only pair 0 changes: γ sets the fastest pair's decay":
                "γ enters every pair's factor ζᵢ^(r/γ) the same way; pair 0 only decays most "
                "because its ζ is the smallest.",
            "The keys ahead stop being boosted":
                "The boost of a key ahead, ζᵢ^(−r/γ) > 1, only grows more slowly: xPos still "
                "needs a causal mask."},
           f"Move the slider to {wide_gamma}: the factor is ζᵢ^(r/γ), so on the log axis every "
           f"curve's slope is divided by {wide_gamma // 512}. Pair 0's factor for a key 1024 "
           f"back goes from {factor:.3f} to {factor_wide:.3f}.",
           understanding=True, predict=True),
        mc("rope_today.mla-decoupled-rope",
           "Why does DeepSeek-V2's multi-head latent attention keep RoPE on a separate "
           "small slice instead of rotating the keys rebuilt from its compressed cache?",
           "The rotation would stop Wᵁᴷ being absorbed into the query",
           {"RoPE cannot rotate the compressed latent vectors":
                "RoPE rotates any even-sized vector; the problem is where the rotation sits in "
                "the product.",
            "To save compute during training, when no cache is kept":
                "The reason is the cache at inference: without absorption every key must be "
                "rebuilt from the latent.",
            "Because rotated keys would take more room in the cache":
                "Rotating a key does not change its size; the decoupled slice adds one small "
                "rotated key per token."},
           "Rotated, the score is q·R(n−m)·Wᵁᴷ·cₙ: a matrix that changes with the key's "
           "position sits between the query and Wᵁᴷ, so Wᵁᴷ cannot be folded into the query "
           "once. The decoupled slice qᴿ·kᴿ carries position, and the content part absorbs as "
           "before.",
           understanding=True),
        mc("rope_today.indexer-layout",
           "DeepSeek-V3.2's indexer was trained with its first 64 features rotated in the half "
           "layout. An engine rotates the indexer's queries and keys in the interleaved "
           "layout instead, as its attention does. What happens?",
           "It picks other tokens, and nothing fails",
           {"Nothing: both layouts are RoPE, so every score is the same": "They agree at "
            "offset 0 only: a layout decides which features turn together, and the weights "
            "were trained for one pairing.",
            "The engine stops with a shape error when it loads the weights": "Both layouts "
            "turn 64 features in 32 pairs: the shapes agree, so nothing fails.",
            "The scores start to depend on the absolute positions": "Queries and keys "
            "rotated in the same layout keep the score relative; what is wrong is which "
            "trained features are paired."},
           "The scores still depend on the offset alone, but they are not the trained ones: "
           "the chapter computes the same score at offset 0 and other scores at 1, 16 and 256. "
           "DeepSeek's inference code had this bug until November 2025.",
           understanding=True),
    ]
