"""Self-check questions of chapter 3, "Learned absolute embeddings" (``03_learned``).

Each has the id ``"learned.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "03_learned"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...compare import position_parameter_count

    params = position_parameter_count("learned", d_model=768, max_positions=512)
    return [
        number("learned.table-parameter-count",
               "A learned absolute table for a model with d_model = 768 and at most 512 "
               "positions: how many trainable numbers does it hold?",
               float(params), 0.5, f"One row of 768 numbers per position: {params:,}.",
               "One learned vector of d_model numbers per position."),
        mc("learned.lookup-past-the-table",
           "A model with a learned table of 512 rows gets a 600-token input. What does a "
           "plain lookup of position 600 do?",
           "It fails: there is no row 600",
           {"It returns the row of position 600 mod 512": "A table lookup does not wrap "
                                                          "around; the index is out of range.",
            "It extends the table with the sinusoidal formula": "Nothing in a learned table "
                                                                "knows a formula."},
           "A table only knows the positions it was trained with.",
           understanding=True),
        mc("learned.why-a-formula-extends",
           "Why can a sinusoidal encoding be computed for any position while a learned one "
           "cannot?",
           "It is a formula of p; the learned one is a list of trained rows",
           {"It uses fewer dimensions": "Both have d_model numbers per position.",
            "It is normalised": "Normalising does not create rows for unseen positions."},
           "sin and cos can be evaluated at any p, trained or not.",
           understanding=True),
    ]
