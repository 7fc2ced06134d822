"""Self-check questions of chapter 7, "Relative position representations" (``07_relative``).

Each has the id ``"relative.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

import math

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
    shrink = math.sqrt(64)  # T5's W_q carries 1/sqrt(d); a layer dividing again, d = 64
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
           "Beyond k, every distance reuses a trained vector",
           {"It makes attention cheaper, so that longer inputs fit in memory":
                "Clipping changes which vectors are used, not the cost.",
            "It turns the learned table into a formula of the distance":
                "The clipped vectors are still learned; there are just 2k + 1 of them.",
            "It drops the keys farther than k from the query":
                "No key is dropped: a key farther than k is still attended to, with the edge "
                "vector of its direction."},
           "A longer sequence only adds distances beyond k, which all map to the edge rows: the "
           "tables keep their 2k + 1 rows at any length.",
           understanding=True),
        mc("relative.where-t5-acts",
           "Where does T5's relative position enter attention?",
           "A learned scalar per head and bucket, added to each logit",
           {"A learned vector per distance, added to the keys": "That is Shaw et al.",
            "A rotation of q and k by the distance": "That is RoPE.",
            "A fixed penalty proportional to the distance":
                "That is ALiBi; T5's bias is learned, one number per head and bucket."},
           "The bias b[bucket(j − i)] is added to q·k before the softmax, one learned number "
           "per head and bucket."),
        mc("relative.t5-max-distance",
           "In the T5 bucket map you move the max_distance slider from 128 to 1024 (32 "
           "buckets). Predict what happens to the buckets.",
           "The far buckets stretch; the near ones keep their own",
           {"Every bucket gets 8 times wider, the near ones too":
                f"Distances below 8 keep one bucket each (distance 5 stays in bucket "
                f"{bucket(5, 128)}); only the log-spaced ones stretch.",
            "The model gets 8 times as many buckets to learn": "The number of buckets (32) is "
                                                               "unchanged; they are spread "
                                                               "further.",
            "Nothing below 128 changes; only the keys past 128 get new buckets":
                f"The log-spaced buckets change well below 128: distance 100 moves from "
                f"bucket {bucket(100, 128)} to {bucket(100, 1024)}."},
           f"Move the max_distance slider to 1024: the exact buckets up close stay, and the "
           f"log-spaced ones spread out. With max_distance = 128, distances 500 and 1000 share "
           f"bucket {bucket(500, 128)}; with 1024 they get {bucket(500, 1024)} and "
           f"{bucket(1000, 1024)}.",
           understanding=True, predict=True),
        mc("relative.t5-port-scaling",
           "You load T5's weights into a layer that divides q·k by √d, as posenc's does "
           "(d = 64). What changes?",
           f"Content logits shrink {shrink:g}-fold; the bias does not",
           {"Nothing: T5 adds its bias after the scaling as well":
                f"T5's W_q already carries the 1/√d; dividing again makes every content logit "
                f"√64 = {shrink:g} times too small.",
            f"The position bias shrinks {shrink:g}-fold, so the model ignores position":
                "The bias is added after the division and keeps its size; it is q·k that is "
                "divided twice.",
            "Every logit is smaller, the bias too: a softer softmax, the same ranking":
                "Only q·k is divided, not the bias, so the balance tips toward position: "
                "more than a change of temperature."},
           f"T5 puts 1/√d into the initialisation of W_q. Divided again, every content logit is "
           f"{shrink:g} times too small for d = 64 while the bias keeps its size: the model "
           f"leans far more on position than it was trained to.",
           understanding=True),
    ]
