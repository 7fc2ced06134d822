"""Self-check questions of chapter 1, "Why order matters" (``01_why_order``).

Each has the id ``"why_order.<slug>"``."""

from __future__ import annotations

from ._format import mc

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "01_why_order"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    return [
        mc("why_order.no-position-same-output",
           "Self-attention with no position information reads “dog bites man” and "
           "“man bites dog”. What can you say about the output vector for “bites”?",
           "It is the same in both sentences",
           {"It differs, because “dog” comes first in one of them":
                "Without position, attention sees a set of tokens: the same keys and values "
                "in any order give the same weighted sum.",
            "It is zero": "Attention still mixes the token vectors; only their order is lost.",
            "It is the same, but only because “bites” stays in the middle":
                "Its place does not matter either: shuffle the sentence any way and each "
                "word's output moves with it, unchanged (equivariance)."},
           "Attention sums over the same keys and values in both orders; the result cannot "
           "depend on the order.",
           understanding=True),
        mc("why_order.distance-only-methods",
           "Which methods give two given tokens the same attention score at distance 3, "
           "wherever in the sequence the pair sits?",
           "RoPE and ALiBi",
           {"Sinusoidal and learned absolute encodings":
                "These add a vector for the absolute position to each token, so the score "
                "changes with where the pair is.",
            "The sinusoidal encoding and ALiBi":
                "PE[p]·PE[p + 3] depends on the distance alone, but the score also has "
                "cross terms that tie one token's content to the other's absolute position.",
            "None of them": "RoPE's score depends on m − n only, and ALiBi's bias on i − j only."},
           "RoPE's rotated dot product and ALiBi's bias depend only on the distance.",
           understanding=True),
        mc("why_order.where-rope-acts",
           "Where does RoPE put position into attention?",
           "It rotates each query and key by an angle set by its position",
           {"It adds a fixed vector to each token embedding, once, below the first layer":
                "That is the sinusoidal and learned absolute encodings.",
            "It adds a bias to the attention scores, growing with the distance i − j":
                "That is ALiBi (and T5, whose bias is learned per bucket of distances).",
            "It rotates the values before they are averaged":
                "RoPE leaves the values alone; among the relative methods only Shaw's "
                "changes them (its vectors added to the values)."},
           "q and k are rotated by angles proportional to their positions, before their dot "
           "product; the values stay free of position."),
        mc("why_order.word-change-slider",
           "In the “I love you” / “you love I” slider figure, with the layer buttons at encoder, "
           "the method menu starts at none: all three bars are at 0. Predict: what do the "
           "bars show when you pick rope in the method menu?",
           "All three rise above 0, “love” as well as “I” and “you”",
           {"“I” and “you” rise; “love” stays at 0, since it is at position 1 in both":
                "“love” keeps its position, but its neighbours swap sides: which word is on "
                "its left and which on its right changes its output too. Pick rope and look "
                "at its bar.",
            "They stay at 0: RoPE sees only distances, and every distance is the same":
                "The distances keep their size but not their sign: “I” is 1 token before "
                "“love” in one sentence and 1 token after it in the other, and RoPE's score "
                "depends on the signed offset m − n.",
            "Only “I” and “you” rise, by the same amount":
                "Each word's change depends on its own neighbours, and “love” changes too. "
                "Pick rope and compare the three bars."},
           "Pick rope in the menu: all three bars are above 0, “love” too. It keeps "
           "position 1, but which neighbour is on its left and which on its right has "
           "changed. Try sinusoidal as well.",
           understanding=True, predict=True),
        mc("why_order.causal-mask-copies",
           "A decoder layer with no position encoding reads a start token followed by five "
           "copies of one token, under the causal mask. How do the outputs of the five "
           "copies compare?",
           "They all differ: each copy averages over a different set of tokens",
           {"They are all equal: without positions identical tokens are interchangeable":
                "That holds without the mask. With it, copy k sees the start token and k "
                "copies, so each averages over a different set of tokens.",
            "The first differs from the rest, which see the same tokens":
                "Each later copy sees one more copy than the one before it, so the weight "
                "on the start token falls copy by copy: every output differs.",
            "They all differ, but only because the layer's weights are random":
                "The same weights without the mask give five equal outputs (the chapter's "
                "check): it is the mask that tells the copies apart."},
           "Copy k attends to the start token and k copies, a different average for each: "
           "the causal mask alone carries position, which is why NoPE decoders can work.",
           understanding=True),
    ]
