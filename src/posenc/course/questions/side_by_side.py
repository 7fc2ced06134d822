"""Self-check questions of chapter 8, "Side by side" (``08_side_by_side``).

Each has the id ``"side_by_side.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "08_side_by_side"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...compare import METHODS, position_parameter_count

    names = {"sinusoidal": "sinusoidal", "learned": "learned", "rope": "RoPE",
             "alibi": "ALiBi", "t5": "T5", "shaw": "Shaw"}
    # the chapter's six methods (a reader may have registered their own in the exercise)
    free = [m for m in METHODS if m in names and position_parameter_count(m) == 0]
    correct = ", ".join(names[m] for m in free)
    t5 = position_parameter_count("t5", num_heads=8, num_buckets=32)
    return [
        mc("side_by_side.parameter-free-methods",
           "Which position methods add no trainable parameters at all?", correct,
           {"learned, T5, Shaw": "These are exactly the ones that learn their position "
                                 "numbers.",
            "Only sinusoidal": "RoPE and ALiBi are fixed formulas too."},
           "They are formulas of the positions; nothing is learned.",
           understanding=True),
        number("side_by_side.t5-table-size",
               "T5's relative bias with 8 heads and 32 buckets: how many trainable numbers "
               "does one layer's table hold?",
               float(t5), 0.5, f"One scalar per head and bucket: {t5}.",
               "T5 learns one number per (bucket, head)."),
        mc("side_by_side.absolute-score",
           "Which of these makes the attention score depend on the absolute positions, not "
           "only on their difference?",
           "A sinusoidal encoding added to the token embeddings",
           {"RoPE": "RoPE's score depends on m − n only.",
            "ALiBi": "ALiBi's bias depends on i − j only."},
           "Added to the input, PE[p] passes through W_q and W_k, and cross terms such as "
           "x·W_q·W_kᵀ·PE[n] depend on n itself.",
           understanding=True),
    ]
