"""Self-check questions of chapter 11, "Position in two and three dimensions" (``11_rope_2d_3d``).

Each has the id ``"rope_2d_3d.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

import numpy as np

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "11_rope_2d_3d"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...rope import apply_rope
    from ...rope_variants import (
        axial_rope_angles,
        cropped_sincos_table,
        mrope_position_ids,
        multi_axis_angles,
        sincos_2d_table,
    )

    angles = axial_rope_angles(np.array([0, 1]), np.array([0, 0]), 32)  # one row down
    row_turn = float(angles[1, 11] - angles[0, 11])
    # the axial slider figure (8x8 patches, head 32): pair 3 across a column, pair 11 down a row
    step = axial_rope_angles(np.array([0, 0, 1]), np.array([0, 1, 0]), 32)
    column_3, row_11 = float(step[1, 3] - step[0, 3]), float(step[2, 11] - step[0, 11])
    assert np.isclose(column_3, row_11) and step[2, 3] == step[0, 3] and step[1, 11] == step[0, 11]
    segments = (5, (1, 4, 6), 2)
    ids = mrope_position_ids(segments)
    after = int(ids[0, 5 + 24])
    assert (ids[:, 5 + 24] == after).all()
    q, k = np.random.default_rng(0).standard_normal((2, 1, 32)).repeat(36, axis=1)
    q, k = apply_rope(q, np.arange(36)), apply_rope(k, np.arange(36))
    assert np.isclose(q[1] @ k[0], q[6] @ k[5])  # 1-D RoPE: the same relation
    # FLUX.2: ids (T, H, W, L); the fifth prompt token is (0, 0, 0, 4)
    flux2_text = multi_axis_angles(np.array([0, 0, 0, 4]), 128, sections=(16,) * 4,
                                   layout="per_axis", base=2000.0)
    turning = int(np.count_nonzero(flux2_text))
    crop = cropped_sincos_table(40, 72, 64, max_size=96).reshape(-1, 64)
    own = sincos_2d_table(40, 72, 64).reshape(-1, 64)
    assert np.allclose(crop @ crop.T, own @ own.T) and not np.allclose(crop, own)
    return [
        number("rope_2d_3d.axial-row-turn",
               "Axial 2-D RoPE, head size 32, base 100: pairs 0–7 follow the column and 8–15 "
               "the row. By how many radians does pair 11 turn from one row to the next? "
               "Give 3 decimals.",
               round(row_turn, 3), 0.0005 + 1e-9,
               f"Pair 11 is row pair 3, with frequency f₃ = 100^(−4·3/32) ≈ {row_turn:.4f} "
               "rad per row.",
               "Pair 8 + i turns by row·fᵢ with fᵢ = 100^(−4i/head_dim)."),
        mc("rope_2d_3d.flattened-grid-neighbours",
           "A 6×6 grid of patches is flattened row by row and given 1-D RoPE. How does it "
           "see patch 6 (first of row 1) against patch 5 (last of row 0)?",
           "Just like two neighbours in a row: one position apart",
           {"As a patch one row down and five columns left": "That is what 2-D RoPE sees; "
                                                             "the flat sequence only knows "
                                                             "6 − 5 = 1.",
            "As two patches of one column, one row apart":
                "That offset, (1, 0), is patch 6 against patch 0, which the flat sequence sees "
                "as 6 positions apart, not 1.",
            "As very far apart, at opposite ends of the image":
                "In the flat sequence they are adjacent."},
           "1-D RoPE sees offset 1 for both pairs; axial RoPE gives (Δrow, Δcol) = (1, −5) "
           "its own angles.",
           understanding=True),
        mc("rope_2d_3d.axial-pair-slider",
           "In the axial 2-D RoPE slider figure (an 8×8 image, head size 32), you move the "
           "pair slider from 3 to 11. Predict the new pattern of angles.",
           "The same stripes, now changing from row to row",
           {"Stripes 8 times slower: later pairs turn more slowly":
                f"Pairs 8–15 start the ladder again: pair 11 is row pair 3, with pair 3's "
                f"frequency, {row_11:.3f} rad per patch.",
            "The same pattern: pairs 3 and 11 both follow the column":
                "Pairs 0–7 follow the column and pairs 8–15 the row: pair 11 follows the row.",
            "Angles that change along the diagonal, mixing row and column":
                "Each pair follows one axis only; row and column meet only in a score, which "
                "adds the pairs of both axes."},
           f"Move the pair slider to 11: pair 3 turns by {column_3:.3f} rad from one column to "
           f"the next, pair 11 by {row_11:.3f} rad from one row to the next. The same frequency "
           f"on the other axis: the stripes turn a quarter turn.",
           understanding=True, predict=True),
        number("rope_2d_3d.mrope-id-after-image",
               "Qwen2-VL's M-RoPE: 5 text tokens (ids 0–4), then an image of 1×4×6 merged "
               "patches, then text. What id does the first text token after the image get?",
               float(after), 0.5,
               f"The image starts at id 5; its ids reach 5 + max(4, 6) − 1 = {after - 1}, so "
               f"the text resumes at {after}. An image costs max(h, w) ids, not h·w.",
               "An image starting at id s gives patch (r, c) the ids (s, s + r, s + c); text "
               "counts on from the largest id so far."),
        mc("rope_2d_3d.mrope-text-ids",
           "Why does M-RoPE give each text token the same id on all three axes?",
           "So that text gets exactly plain RoPE, whatever the sections",
           {"To save memory: one id is stored instead of three":
                "Three equal ids take as much memory as three different ones.",
            "Because text has no position on the image axes":
                "Text has a position: the shared id, which grows token by token and turns the "
                "pairs of every axis alike."},
           "With equal ids every pair turns by the same position, as in 1-D RoPE, whatever the "
           "sections: a model trained on text loses nothing when the image axes are added.",
           understanding=True),
        number("rope_2d_3d.flux2-text-pairs",
               "FLUX.2 splits a 128-wide head into four axes (T, H, W, L) of 16 pairs each, and a "
               "prompt token's ids are (0, 0, 0, token index). How many of the 64 pairs does the "
               "fifth prompt token (index 4) rotate?",
               float(turning), 0.5,
               f"Only the L axis's {turning} pairs: its T, H and W ids are 0, so their pairs "
               "do not turn. In FLUX.1 a prompt token's ids are all 0 and nothing turns.",
               "A pair turns by its axis's id times its frequency."),
        mc("rope_2d_3d.sd3-crop",
           "SD3 gives a 40×72 grid of patches the centre of one 96×96 sin-cos table. Compared "
           "with a table built for 40×72, what changes in the dot products between the "
           "image's patches?",
           "Nothing: they depend only on the offsets between patches",
           {"They all change, since every patch's values differ":
                "The values differ by a fixed rotation of each sin/cos pair, which the dot "
                "product does not see.",
            "Only those of the patches near the edges of the crop":
                "The crop shifts every patch by the same offset.",
            "They shrink, as the larger table spreads its frequencies thinner":
                "The table's frequencies depend on the embedding width, not on how many rows "
                "and columns it has: a 96×96 table has the same sin/cos ladder."},
           "sin/cos of a shifted position is a fixed rotation of the unshifted pair, so "
           "PE[p]·PE[q] = Σ cos((p − q)·w) is unchanged.",
           understanding=True),
    ]
