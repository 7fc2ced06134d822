"""Self-check questions of chapter 7, "Relative position representations" (``07_relative``).

Each has the id ``"relative.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

import numpy as np

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "07_relative"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...relative import t5_relative_bucket

    far = int(t5_relative_bucket(np.array(200), bidirectional=True, num_buckets=32,
                                 max_distance=128))
    farther = int(t5_relative_bucket(np.array(5000), bidirectional=True, num_buckets=32,
                                     max_distance=128))
    assert far == farther
    def bucket(distance, max_distance):
        return int(t5_relative_bucket(np.array(distance), bidirectional=True, num_buckets=32,
                                      max_distance=max_distance))

    near, mid = [bucket(d, 1024) - bucket(d, 128) for d in (5, 100)]
    assert near == 0 and mid < 0 and bucket(500, 128) == bucket(1000, 128)
    return [
        number("relative.t5-bucket-of-200",
               "T5 encoder, 32 buckets, max_distance = 128: which bucket does relative "
               "position +200 (the key 200 tokens after the query) fall in?",
               float(far), 0.5,
               f"Bucket {far}, the last of the 'after' half: every distance from well before "
               "128 on shares it (so does +5000).",
               "Half the buckets are for keys after the query; distances past max_distance "
               "go to the last one."),
        mc("relative.shaw-clipping",
           "Shaw et al. clip the relative distance at k. Why does clipping let the model run "
           "on sequences longer than it was trained on?",
           "Every distance beyond k uses the same trained vector, so no unseen index appears",
           {"It makes attention cheaper": "Clipping changes which vectors are used, not the "
                                          "cost.",
            "It turns the encoding into a formula": "The clipped vectors are still learned."},
           "A longer sequence only adds distances beyond k, which all map to the edge rows.",
           understanding=True),
        mc("relative.where-t5-acts",
           "Where does T5's relative position enter attention?",
           "As a learned scalar bias per head and bucket, added to the scores",
           {"As a vector added to the keys": "That is Shaw et al.",
            "As a rotation of q and k": "That is RoPE."},
           "The bias b[bucket(j − i)] is added to q·k before the softmax."),
        mc("relative.t5-max-distance",
           "In the T5 bucket map you raise max_distance from 128 to 1024 (32 buckets). "
           "What happens?",
           "Near distances keep their own buckets; the far, log-spaced buckets stretch, so "
           "keys 500 and 1000 tokens away are told apart",
           {"Every bucket gets 8 times wider": f"Distances below 8 keep one bucket each "
                                               f"(distance 5 stays in bucket {bucket(5, 128)}"
                                               f"); only the log-spaced ones stretch.",
            "The model gets more buckets to learn": "The number of buckets (32) is "
                                                    "unchanged; they are spread further.",
            "Nothing below 128 changes": f"The log-spaced buckets change well below 128: "
                                         f"distance 100 moves from bucket "
                                         f"{bucket(100, 128)} to {bucket(100, 1024)}."},
           f"With max_distance = 128, distances 500 and 1000 share bucket "
           f"{bucket(500, 128)}; with 1024 they get {bucket(500, 1024)} and "
           f"{bucket(1000, 1024)}.",
           understanding=True),
    ]
