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
            "It is zero": "Attention still mixes the token vectors; only their order is lost."},
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
            "None of them": "RoPE's score depends on m − n only, and ALiBi's bias on i − j only."},
           "RoPE's rotated dot product and ALiBi's bias depend only on the distance.",
           understanding=True),
        mc("why_order.where-rope-acts",
           "Where does RoPE put position into attention?",
           "It rotates the queries and keys before their dot product",
           {"It adds a vector to each token embedding": "That is the sinusoidal and learned "
                                                        "absolute encodings.",
            "It adds a bias to the attention scores": "That is ALiBi and T5.",
            "It changes the values": "RoPE leaves the values alone; Shaw's method changes them."},
           "q and k are rotated by angles proportional to their positions."),
    ]
