"""Self-check questions of chapter 8, "Side by side" (``08_side_by_side``).

Each has the id ``"side_by_side.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

import numpy as np

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "08_side_by_side"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...alibi import alibi_slopes
    from ...compare import (
        METHODS,
        attention_core_cost,
        extra_attention_cost,
        position_parameter_count,
        rope_mean_score,
        sinusoidal_similarity,
    )
    from ...relative import t5_relative_bucket

    names = {"sinusoidal": "sinusoidal", "learned": "learned", "rope": "RoPE",
             "alibi": "ALiBi", "t5": "T5", "shaw": "Shaw"}
    # the chapter's six methods (a reader may have registered their own in the exercise)
    free = [m for m in METHODS if m in names and position_parameter_count(m) == 0]
    correct = ", ".join(names[m] for m in free)
    t5 = position_parameter_count("t5", num_heads=8, num_buckets=32)
    # the chapter's cost table: d_model 512, 8 heads, L = 2048
    sizes = {"d_model": 512, "num_heads": 8, "seq_len": 2048}
    scores = attention_core_cost(**sizes)["memory"]
    shaw = extra_attention_cost("shaw", **sizes)["memory"] / scores
    bias = extra_attention_cost("alibi", **sizes)["memory"] / scores
    # the distance curves: where the average ones first cross 0, where ALiBi reaches 1 %,
    # and the first encoder distance in T5's last bucket (32 buckets, max_distance 128)
    k = np.arange(1, 4097)
    sin_zero = int(k[np.argmax(sinusoidal_similarity(k, 512) < 0)])
    rope_zero = int(k[np.argmax(rope_mean_score(k, 64) < 0)])
    one_percent = np.log(100) / alibi_slopes(8)
    buckets = t5_relative_bucket(-k)
    last_bucket = int(k[np.argmax(buckets == buckets[-1])])
    assert bias == 1 and shaw > 10 and rope_zero < sin_zero
    return [
        mc("side_by_side.parameter-free-methods",
           "Which position methods add no trainable parameters at all?", correct,
           {"learned, T5, Shaw": "These are exactly the ones that learn their position "
                                 "numbers.",
            "sinusoidal, RoPE, ALiBi, T5": f"T5 learns one number per head and bucket: {t5} "
                                           f"for 8 heads and 32 buckets.",
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
           {"RoPE, which rotates q by its absolute position m":
                "The rotations are absolute, but they cancel in the score: RoPE's score "
                "depends on m − n only.",
            "ALiBi, whose penalty grows with the key's position":
                "ALiBi's bias depends on i − j only: it grows with the distance, not with "
                "where the key is.",
            "T5's bias, learned for each bucket of offsets":
                "T5's bias is learned, but it is looked up by the offset j − i: the same for "
                "every pair at one distance."},
           "Added to the input, PE[p] passes through W_q and W_k, and cross terms such as "
           "x·W_q·W_kᵀ·PE[n] depend on n itself.",
           understanding=True),
        mc("side_by_side.shaw-memory",
           "d_model = 512, 8 heads, L = 2048: why does Shaw's method, as the paper writes it, "
           "cost the most memory of the six?",
           "It builds [L, L, d_head] tensors for a^K and a^V",
           {"Its tables grow with the longest sequence it has seen":
                "With the clip, its tables have 2k + 1 rows at any length; what grows is the "
                "tensor built from them for every pair of positions.",
            "It keeps separate tables for each of the 8 heads":
                "Shaw's tables are shared by the heads of a layer; the cost is the tensor "
                "gathered from them, L × L × d_head numbers.",
            "It stores a bias as large as the score matrix":
                f"That is ALiBi and T5, whose bias is exactly the size of the score matrix; "
                f"Shaw's two tensors take {shaw:g} times it."},
           f"a^K and a^V hold L·L·d_head numbers each: together {shaw:g} times the score "
           f"matrix. The gather from the relative chapter's first exercise avoids building "
           f"them.",
           understanding=True),
        mc("side_by_side.decay-by-construction",
           "Which encoding lowers a key's weight at every step of distance by construction, "
           "not only on average?",
           "ALiBi, whose bias falls by its slope m at every token of distance",
           {"RoPE: the score of a query with itself falls with the distance":
                f"Only on average: averaged over random queries it rises again on about half "
                f"the steps and first crosses 0 at k = {rope_zero} (d_head = 64).",
            "The sinusoidal encoding: PE[p]·PE[p + k] falls as k grows":
                f"Only on average: it oscillates and first crosses 0 at k = {sin_zero} "
                f"(d_model = 512).",
            "T5: its learned bias falls bucket by bucket":
                f"T5's bias is learned, so nothing forces it to fall; and every key from "
                f"{last_bucket} tokens back shares one bucket."},
           f"Each head's factor e^(−m·k) falls by a fixed e^(−m) per token: the steepest head "
           f"cuts a key's weight to 1 % at {one_percent[0]:.1f} tokens, the gentlest at "
           f"{one_percent[-1]:.0f}.",
           understanding=True),
    ]
