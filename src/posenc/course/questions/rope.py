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
    import torch

    from ...nn.rope_kernel import rope_angles_in_dtype
    from ...rope import rope_angles, rope_frequencies, wrap_angle

    slow = int((rope_angles(np.array([4096]), 128, 10000.0)[0] < 2 * np.pi).sum())
    slowest = 2 * np.pi / rope_frequencies(128, 10000.0)[-1]
    slowest_big = 2 * np.pi / rope_frequencies(128, 500000.0)[-1]
    assert slowest_big > slowest
    # the live RoPE angles figure: pairs below one turn at position 1024 and 32768
    near, far = 1024, 32768
    blue_near, blue_far = (int((rope_angles(np.array([m]), 128)[0] < 2 * np.pi).sum())
                           for m in (near, far))
    assert 0 < blue_far < blue_near and slowest > far
    # bfloat16: the first position it cannot hold, how far positions 32768..65535 round,
    # and the angles of a head_dim 128 head computed in bfloat16 against the exact ones
    positions = torch.arange(65536, dtype=torch.float64)
    rounded = positions.to(torch.bfloat16).double()
    first_inexact = int(positions[rounded != positions][0])
    worst_far = int((rounded - positions)[far:].abs().max())
    angle_error = np.abs(wrap_angle(rope_angles_in_dtype(8192, 128, dtype=torch.bfloat16)
                                    - rope_angles(np.arange(8192), 128))).max(-1)
    float32_error = np.abs(wrap_angle(rope_angles_in_dtype(8192, 128, dtype=torch.float32)
                                      - rope_angles(np.arange(8192), 128))).max()
    assert first_inexact == 2 ** 8 + 1 and angle_error[4096:].max() > 3.1 > 0.01 > float32_error
    return [
        mc("rope.dot-product-depends-on",
           "RoPE rotates q at position m and k at position n. Their dot product depends on "
           "the positions only through…",
           "m − n",
           {"m + n": "Rotating both by their own angles leaves the angle between them, "
                     "(m − n)·θ, in the dot product.",
            "|m − n|, the distance without its sign":
                "The sign counts: a key three tokens behind the query scores differently "
                "from one three tokens ahead, as the chapter's check with m − n = −4 shows.",
            "m and n separately": "That is what an absolute encoding added to the input does."},
           "R(mθ)q · R(nθ)k = q · R((n − m)θ)k.",
           understanding=True),
        number("rope.pairs-under-one-turn",
               "head_dim = 128, base = 10000: how many of the 64 pairs have not completed one "
               "full turn by position 4096?",
               float(slow), 0.5, f"{slow} pairs have a wavelength longer than 4096 positions.",
               "Pair i turns by 4096·θᵢ with θᵢ = base^(−2i/head_dim); count the pairs where "
               "that stays below 2π."),
        mc("rope.angles-position-slider",
           f"In the live RoPE angles figure (base 10000, head_dim 128), you drag the position "
           f"slider from {near} to {far}. Predict what happens to the blue pairs, those below "
           f"one full turn.",
           "Most turn orange; a few slow ones stay blue",
           {f"Every pair turns orange: {far} lies past every wavelength":
                f"The slowest wavelength is about {slowest:,.0f} positions, longer than {far}: "
                f"the slowest pairs have not yet come round.",
            "More pairs turn blue, as their angles wrap back below 2π":
                "A pair that has completed a turn stays orange: its angle mod 2π may be small "
                "again, but m·θᵢ itself only grows with m.",
            "Nothing: the colours depend on the base and head_dim, not the position":
                "A pair turns orange once m·θᵢ passes 2π, and m·θᵢ grows with the position: "
                "the further along, the more pairs have come round."},
           f"Move the position slider to {far}: {blue_far} of the 64 pairs are still below one "
           f"turn, against {blue_near} at {near}. Only pairs with wavelengths above {far} "
           f"positions, up to about {slowest:,.0f}, have not come round; the fast ones look "
           f"scrambled.",
           understanding=True, predict=True),
        mc("rope.larger-base-slowest-pair",
           "A model raises base from 10000 to 500000 (head_dim = 128). Its slowest pair now "
           "turns…",
           f"more slowly: its wavelength grows {slowest_big / slowest:.0f}-fold",
           {"faster, since every angle m·θᵢ grows with the base":
                "θᵢ = base^(−2i/d) shrinks when base grows, and the angles with it.",
            "at the same speed":
                "It is the other way round: pair 0 keeps its speed (θ₀ = base⁰ = 1), and every "
                "later pair slows, the slowest most."},
           f"θᵢ = base^(−2i/d) shrinks as base grows: the slowest wavelength goes from about "
           f"{slowest:,.0f} to {slowest_big:,.0f} positions.",
           understanding=True),
        mc("rope.layout-mismatch",
           "A checkpoint trained with the half layout (GPT-NeoX, Hugging Face) is loaded into "
           "code that rotates interleaved pairs, with W_q and W_k as they are. What happens?",
           "It runs and its scores stay relative, but what it learned is gone",
           {"Loading fails with a shape error":
                "The shapes all fit: both layouts rotate the same head_dim features, only "
                "paired differently. Nothing crashes, which is what makes the mistake "
                "dangerous.",
            "Its scores stop depending on m − n alone, which a test would catch":
                "Any consistent pairing is a valid RoPE: the scores still depend only on "
                "m − n, so a test of the relative property passes while the outputs are wrong.",
            "Nothing: a reordering of the features leaves the dot products unchanged":
                "Reordering q and k together would not matter, but W_q and W_k produce features "
                "that turn with their own partners: now each turns with the wrong partner at the "
                "wrong frequency."},
           "Every feature turns with the wrong partner at the wrong frequency, yet the scores "
           "stay relative and nothing fails: in real ports the symptom is fluent-looking "
           "nonsense.",
           understanding=True),
        mc("rope.layout-conversion",
           "You convert Meta's interleaved checkpoint for code that uses the half layout. "
           "What do you permute?",
           "The output rows of W_q and W_k, in each head",
           {"The output rows of W_q, W_k and W_v, so that all three projections agree":
                "W_v is never rotated, so its features have no partners to match; permuting "
                "its rows would scramble the values.",
            "The queries and keys after the rotation, at every step":
                "After the rotation is too late: the wrong pairs have already been turned. The "
                "fix goes into the weights, once.",
            "The columns of W_q and W_k":
                "The columns read the token's features, which have no layout; it is the output "
                "rows that make the features RoPE pairs up."},
           "Hugging Face's conversion script does this (its permute function): each head's "
           "rows reordered so the projection makes features already in the half layout; W_v "
           "and the output projection stay as they are.",
           understanding=True),
        number("rope.bf16-first-inexact-position",
               "A model cast to bfloat16 also builds its position numbers in bfloat16, which "
               "keeps 8 significant bits. What is the first position it cannot hold exactly?",
               float(first_inexact), 0.5,
               f"bfloat16 holds every integer up to 2^8 = {2 ** 8}; {first_inexact} becomes "
               f"{int(rounded[first_inexact])}, and the gaps keep doubling: between {far} and "
               f"{2 * far} a position is off by up to {worst_far}.",
               "With 8 significant bits the integers are exact up to 2^8; just above it, the "
               "representable numbers are 2 apart."),
        mc("rope.bf16-angles-fix",
           "A model cast to bfloat16 works on short prompts and degrades on long ones: its "
           "RoPE angles m·θᵢ are computed in bfloat16. What is the fix?",
           "Compute the angles in float32, and cast only cos and sin down",
           {"Compute them in float16, which has more significant bits":
                "float16 keeps the integers exact only up to 2048 and fails the same way past "
                "it; the angles need float32 or better.",
            "Wrap each angle into (−π, π] before taking cos and sin":
                f"Wrapping cannot undo a position that was already rounded: between {far} and "
                f"{2 * far} a position off by up to {worst_far} is an angle off by as many "
                f"radians in pair 0.",
            "Lower the base, so that the angles stay small":
                "It is the position m that bfloat16 rounds, before any frequency multiplies it; "
                "a smaller base changes the frequencies, not the rounding."},
           f"Keep the frequency buffer in float32 when the model is cast, form positions and "
           f"angles there, and cast only cos and sin (or the rotated q and k) down. In bfloat16 "
           f"some pair is off by {angle_error[4096:].max():.2f} rad, nearly π, past position "
           f"4096; in float32 the worst error up to 8192 is {float32_error:.0e} rad.",
           understanding=True),
    ]
