"""Self-check questions of chapter 3, "Learned absolute embeddings" (``03_learned``).

Each has the id ``"learned.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "03_learned"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    import torch

    from ...compare import position_parameter_count
    from ...nn.absolute import interpolate_table

    params = position_parameter_count("learned", d_model=768, max_positions=512)
    # the slider figure's stand-in table, 64 rows stretched to 128: which old position a
    # new one reads (a "ruler" table whose row p holds p)
    ruler = torch.arange(64, dtype=torch.float64)[:, None]
    read_at_40 = float(interpolate_table(ruler, 128)[40, 0])
    stretch = 40 / read_at_40  # (L' - 1) / (L - 1)
    assert 19 < read_at_40 < 21 and 1.9 < stretch < 2.1
    return [
        number("learned.table-parameter-count",
               "A learned absolute table for a model with d_model = 768 and at most 512 "
               "positions: how many trainable numbers does it hold?",
               float(params), 0.5, f"One row of 768 numbers per position: {params:,}.",
               "One learned vector of d_model numbers per position."),
        mc("learned.lookup-past-the-table",
           "A model with a learned table of 512 rows gets a 700-token input. What does a "
           "plain lookup of position 600 do?",
           "It fails: there is no row 600",
           {"It returns the row of position 600 mod 512": "A table lookup does not wrap "
                                                          "around; the index is out of range.",
            "It returns row 511, the last one, as for every position past it":
                "That is clamping, a patch someone has to write; it gives every position "
                "past 511 the same vector, so they can no longer be told apart.",
            "It extends the table with the sinusoidal formula": "Nothing in a learned table "
                                                                "knows a formula."},
           "A table only knows the positions it was trained with.",
           understanding=True),
        mc("learned.why-a-formula-extends",
           "Why can a sinusoidal encoding be computed for any position while a learned one "
           "cannot?",
           "Its rows come from a formula in p, not from training",
           {"Its rows are shorter, so a longer table still fits in memory":
                "Both have d_model numbers per position; the learned table's limit is not "
                "its size.",
            "It is normalised, so no row can grow larger than the others":
                "Normalising does not create rows for unseen positions.",
            "It was trained on longer sequences":
                "Nothing in a sinusoidal table is trained: there are no rows to train, only "
                "the formula."},
           "sin and cos can be evaluated at any p, trained or not; a learned table has only "
           "the rows it was built with.",
           understanding=True),
        mc("learned.untrained-rows",
           "You build a model with max_positions = 4096 and train it on 512-token sequences "
           "only. What do rows 512 to 4095 of its table hold after training?",
           "Their random initial values, untouched by training",
           {"Copies of row 511, the last row that training reached":
                "Nothing copies rows: each row is a parameter of its own, changed only by "
                "its own gradient.",
            "A smooth continuation of the trained rows, learned along with them":
                "A row learns only from tokens at its own position; no token reached 512 or "
                "later, so their gradient is exactly zero.",
            "Zeros: training resets the rows it does not use":
                "Training never resets a parameter; a row with zero gradient keeps whatever "
                "it started with."},
           "A row is trained only by tokens at its position, so rows no sequence reached keep "
           "their initial values: the model will behave as if it had never seen those "
           "positions, because it has not.",
           understanding=True),
        mc("learned.stretch-slider",
           "In the stretched-table slider figure (a 64-row table), you move the new-length "
           "slider from 64 to 128. Predict: a feature that repeated every 20 positions now "
           "repeats…",
           f"about every {20 * stretch:.0f} positions",
           {"every 20 positions still: rows 64 to 127 are new rows added at the end":
                "Interpolation adds no rows at the end: it resamples the whole table, so "
                "every column is drawn out in position.",
            "about every 10 positions: squeezing the table speeds its columns up":
                "The positions are squeezed, not the columns: new position p′ reads old "
                "position p′·63/127, about half of p′, so each column is drawn out.",
            "nowhere: averaging neighbouring rows blurs the feature away":
                "Linear interpolation keeps each column's shape; a feature as slow as one "
                "period in 20 positions survives it intact."},
           f"Move the slider to 128: every column of the bottom panel is drawn out by "
           f"(L′ − 1)/(L − 1) = 127/63 ≈ {stretch:.2f}, so the feature repeats about every "
           f"{20 * stretch:.0f} positions.",
           understanding=True, predict=True),
        mc("learned.every-position-moves",
           "A 64-row table is stretched to 128 rows by linear interpolation. Which vector "
           "does position 40, a position the model was trained on, now receive?",
           f"Roughly what position {read_at_40:.1f} had: every position moves",
           {"Exactly its own row 40: interpolation only fills positions 64 to 127":
                "Interpolation resamples the whole table: only the first and the last rows "
                "are kept, and every other position moves.",
            "Its own row 40, plus a small correction for the longer text":
                "Nothing is added to row 40: position 40 reads the old table at a "
                "fractional position, between two other rows.",
            "Row 80's vector: the stretch doubles every position":
                "The stretch goes the other way: new position p′ reads the old table at "
                "p′·63/127, so 40 reads near 20, not 80."},
           f"Position 40 reads the old table at 40·63/127 ≈ {read_at_40:.2f}: even positions "
           f"seen in training get new vectors, and tokens 10 apart now look as tokens about "
           f"5 apart did.",
           understanding=True),
    ]
