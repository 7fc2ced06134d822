"""Self-check questions of chapter 5, "Stretching RoPE to long contexts" (``05_rope_scaling``).

Each has the id ``"rope_scaling.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

import numpy as np

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "05_rope_scaling"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...rope import rope_frequencies
    from ...scaling import rope_scaling_frequencies, self_extend_distance, yarn_attention_factor

    factor = yarn_attention_factor(8.0)
    seen = int(self_extend_distance(11, 0, group=2, window=4))
    # the live figure "New frequency ÷ default" (head_dim 128, L0 = 4096, s = 8): the pair
    # whose wavelength reaches L0 (the dotted line) and the pairs YaRN divides by s, at two bases
    cut, divided = {}, {}
    for base in (1e4, 1e6):
        default = rope_frequencies(128, base)
        cut[base] = int((2 * np.pi / default < 4096).sum())
        yarn, _ = rope_scaling_frequencies("yarn", 128, base=base, factor=8.0,
                                           original_max_position_embeddings=4096)
        divided[base] = int(np.isclose(yarn / default, 1 / 8).sum())
    assert cut[1e6] < cut[1e4] and divided[1e6] > divided[1e4]
    return [
        mc("rope_scaling.pi-loses-resolution",
           "Position Interpolation with s = 4 divides every RoPE frequency by 4. What does "
           "the model lose?",
           "Resolution: neighbours get 4 times closer in angle",
           {"Nothing: every angle stays in the trained range": "The range is kept, but the fast "
                                                               "pairs no longer separate "
                                                               "neighbours as they used to.",
            "Range: the slow pairs' angles leave what training covered":
                "It is the other way round: PI keeps every slow pair inside its trained range "
                "up to 4 × the length; what it gives up is the fine step between neighbours.",
            "The ability to run past 4 × the training length": "PI is exactly what makes 4 × "
                                                               "the length fit."},
           "Dividing the fast pairs' frequencies blurs short distances.",
           understanding=True),
        mc("rope_scaling.pairs-left-unchanged",
           "Which pairs do YaRN and Llama 3.1 leave unchanged?",
           "The fast pairs, which turn many times within the training length",
           {"The slow pairs, which never completed a turn in training":
                "The slow pairs are the ones divided by s: they never completed a turn in "
                "training.",
            "None: every pair is divided by s": "That is Position Interpolation.",
            "The pairs whose wavelength is close to the training length":
                "Those are blended: a ramp between unchanged and divided by s."},
           "The fast pairs turn many times within the training length and have seen every "
           "angle already; only the slow ones are stretched, and those in between blended.",
           understanding=True),
        mc("rope_scaling.ratios-base-slider",
           "In the live figure “New frequency ÷ default” (s = 8, L0 = 4096), you raise the "
           "base slider from 10000 to 1,000,000. Predict what the yarn and llama3 curves do.",
           "Their ramps move left, with the dotted line",
           {"Nothing: they depend on s and L0 only":
                "They decide pair by pair from each pair's wavelength, and the base sets the "
                "wavelengths. Move the base slider and watch the ramp follow the dotted line.",
            "Their ramps move right: a larger base makes every pair faster":
                "A larger base makes every pair but pair 0 slower, so more pairs turn less "
                "than once within L0.",
            "They turn into straight lines on the log axis, like ntk's":
                "Straight lines belong to the methods that change the base, ntk and dynamic; "
                "yarn and llama3 stay flat, ramp, flat at any base."},
           f"Move the base slider to 1,000,000: the dotted line moves from pair {cut[1e4]} to "
           f"pair {cut[1e6]}, and yarn divides {divided[1e6]} pairs by s instead of "
           f"{divided[1e4]}. A larger base slows the pairs, so more of them turn less than "
           f"once within L0.",
           understanding=True, predict=True),
        number("rope_scaling.yarn-attention-factor",
               "YaRN's attention factor for s = 8 (0.1·ln s + 1), to 2 decimals?",
               round(factor, 2), 0.005 + 1e-9, f"0.1·ln 8 + 1 ≈ {factor:.4f}.",
               "Use the natural logarithm: 0.1·ln(8) + 1."),
        number("rope_scaling.self-extend-distance",
               "Self-Extend with window w = 4 and group G = 2: at which distance is the query "
               "at position 11 scored against the key at position 0?",
               seen, 0.5, f"11 − 0 ≥ w, so the grouped positions count: ⌊11/2⌋ + 4 − ⌊4/2⌋ − "
               f"⌊0/2⌋ = {seen}, not the true 11.",
               "Past the window, use ⌊i/G⌋ + w − ⌊w/G⌋ − ⌊j/G⌋."),
        mc("rope_scaling.rerope-key-cache",
           "Why can a server not keep RoPE-rotated keys in its cache under ReRoPE, as it can "
           "under YaRN?",
           "A key's rotation depends on the query it meets",
           {"ReRoPE changes the frequencies as the text grows, so cached keys go stale":
                "That is Dynamic NTK; ReRoPE keeps the frequencies.",
            "ReRoPE keeps no cache at all":
                "It caches keys, but un-rotated (or as two rotated copies), and rotates them "
                "per pass."},
           "Near keys are scored at the true distance i − j, far ones at the window w: the same "
           "key needs one rotation in one pass and another in the other."),
    ]
