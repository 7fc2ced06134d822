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
           "Exactly like two neighbours in a row: one position apart",
           {"As a patch one row down and five columns left": "That is what 2-D RoPE sees; "
                                                             "the flat sequence only knows "
                                                             "6 − 5 = 1.",
            "As very far apart": "In the flat sequence they are adjacent."},
           "1-D RoPE sees offset 1 for both pairs; axial RoPE gives (Δrow, Δcol) = (1, −5) "
           "its own angles.",
           understanding=True),
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
           {"To save memory": "Three equal ids take as much memory as three different ones.",
            "Because text has no position": "Text has a position: the shared id, which "
                                            "grows token by token."},
           "With equal ids every pair turns by the same position, as in 1-D RoPE: a model "
           "trained on text loses nothing when the image axes are added.",
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
           {"They all change, since the values differ": "The values differ by a fixed rotation "
                                                        "of each sin/cos pair, which the dot "
                                                        "product does not see.",
            "Only those near the edges": "The crop shifts every patch by the same offset."},
           "sin/cos of a shifted position is a fixed rotation of the unshifted pair, so "
           "PE[p]·PE[q] = Σ cos((p − q)·w) is unchanged.",
           understanding=True),
    ]
