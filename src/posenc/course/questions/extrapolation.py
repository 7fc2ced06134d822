"""Self-check questions of chapter 9, "Train short, test long" (``09_extrapolation``).

Each has the id ``"extrapolation.<slug>"``."""

from __future__ import annotations

from ._format import mc

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "09_extrapolation"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    return [
        mc("extrapolation.learned-table-past-training",
           "A model trained on 128-byte sequences with a learned absolute table is run on "
           "512 bytes. What do positions 128 to 511 use?",
           "Nothing trained: the table has no rows for them (unless it is stretched)",
           {"The rows of positions 0 to 127 again": "Only if you wrap the index yourself, "
                                                    "which the model never saw.",
            "Rows learned during evaluation": "Nothing is learned at test time."},
           "This is why the chapter also tries a stretched (interpolated) table.",
           understanding=True),
        mc("extrapolation.loss-by-position",
           "Why does the chapter compare losses by position rather than only one average "
           "per length?",
           "An average over a long sequence hides where past the training length the loss "
           "goes up",
           {"Because the average is always the same": "It is not; but it mixes seen and "
                                                     "unseen positions.",
            "Because position 0 is never scored": "Position is about where the failure "
                                                  "starts."},
           "Loss by position shows whether the model fails right after L_train or later.",
           understanding=True),
        mc("extrapolation.alibi-far-tokens",
           "ALiBi's bias grows linearly with distance. What does that do to far tokens at "
           "test lengths never seen in training?",
           "They get ever smaller weights, so the model mostly reads a local window it knows",
           {"They get larger weights": "The bias is negative and grows in size with distance.",
            "Nothing: the bias is cut off at the training length": "ALiBi's bias has no "
                                                                   "cut-off."},
           "The penalty keeps attention local, so longer inputs look like familiar ones.",
           understanding=True),
    ]
