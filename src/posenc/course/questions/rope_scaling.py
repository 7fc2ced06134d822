"""Self-check questions of chapter 5, "Stretching RoPE to long contexts" (``05_rope_scaling``).

Each has the id ``"rope_scaling.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "05_rope_scaling"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...scaling import self_extend_distance, yarn_attention_factor

    factor = yarn_attention_factor(8.0)
    seen = int(self_extend_distance(11, 0, group=2, window=4))
    return [
        mc("rope_scaling.pi-loses-resolution",
           "Position Interpolation with s = 4 divides every RoPE frequency by 4. What does "
           "the model lose?",
           "Resolution: neighbouring positions are 4 times closer in angle than in training",
           {"Nothing: every angle stays in the trained range": "The range is kept, but the fast "
                                                               "pairs no longer separate "
                                                               "neighbours as they used to.",
            "The ability to run past 4 × the training length": "PI is exactly what makes 4 × "
                                                               "the length fit."},
           "Dividing the fast pairs' frequencies blurs short distances.",
           understanding=True),
        mc("rope_scaling.pairs-left-unchanged",
           "Which pairs do YaRN and Llama 3.1 leave unchanged?",
           "The fast pairs, which turn many times within the training length",
           {"The slow pairs": "The slow pairs are the ones divided by s: they never completed "
                              "a turn in training.",
            "None: every pair is divided by s": "That is Position Interpolation."},
           "Fast pairs have seen every angle already; only the slow ones are stretched.",
           understanding=True),
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
           "A key's rotation depends on the query: near keys use the true distance, far ones "
           "the window",
           {"ReRoPE changes the frequencies as the text grows": "That is Dynamic NTK; ReRoPE "
                                                                 "keeps the frequencies.",
            "ReRoPE needs no cache at all": "It caches keys, but un-rotated, and rotates them "
                                            "per pass."},
           "The same key is scored at i − j in one pass and at w in the other."),
    ]
