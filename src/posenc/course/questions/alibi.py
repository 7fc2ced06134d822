"""Self-check questions of chapter 6, "ALiBi: attention with linear biases" (``06_alibi``).

Each has the id ``"alibi.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

import numpy as np

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "06_alibi"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...alibi import alibi_bias, alibi_slopes, attention_span, bias_only_attention

    m1 = float(alibi_slopes(8)[0])
    bias = alibi_bias(8, 6)[0]
    assert bias[5, 2] == -3 * m1
    slopes = alibi_slopes(8)
    far = alibi_bias(8, 8)[:, 7, 0]  # the farthest key of the figure's 8 tokens, every head
    span = attention_span(bias_only_attention(slopes, 64))  # keys holding 90 % of attention
    assert far[0] < far[-1] < 0 and span[0] < span[-1]
    assert np.allclose(far[1:] / far[:-1], 0.5)  # 8 heads: each slope half the one before
    # 12 heads: the 8-head slopes and the extra ones, taken from the 16-head sequence
    extra = len(set(alibi_slopes(12).round(12)) - set(slopes.round(12)))
    assert set(slopes.round(12)) < set(alibi_slopes(12).round(12))
    return [
        number("alibi.head-1-slope",
               "An 8-head ALiBi model: what is the slope m of head 1? (A fraction like 1/4 "
               "works too.)",
               m1, 1e-6, f"2^(−8/8) = {m1:g}.", "The slopes are 2^(−8h/n) for n = 8 heads."),
        number("alibi.query-5-key-2-bias",
               "Same model, head 1: what bias does query 5 get for key 2?",
               float(bias[5, 2]), 1e-6, f"−m·(i − j) = −{m1:g}·3 = {bias[5, 2]:g}.",
               "The causal bias is −m·(i − j)."),
        mc("alibi.twelve-head-slopes",
           "A model has 12 heads, not a power of two. Its slopes are…",
           f"the 8-head slopes, plus {extra} from the 16-head sequence",
           {"2^(−8h/12) for h = 1..12, the rule for 8 heads": "That rule holds only for powers "
                                                               "of two; the official code uses "
                                                               "the largest power of two below "
                                                               "n and fills in.",
            "0.1·h for h = 1..12, growing with the head":
                "That is a rule common in tutorials, not the paper's: its slopes grow instead "
                "of falling, and no head reaches far back.",
            "the 16-head slopes, without the 4 gentlest at the end":
                "The official code starts from the largest power of two below 12, which is 8, "
                "and adds the odd terms of the 16-head sequence: steeper slopes, not gentler."},
           f"As the chapter's figure shows, {extra} extra slopes come from the 16-head "
           f"sequence.",
           understanding=True),
        mc("alibi.slider-farthest-key",
           "In the ALiBi bias figure (8 heads, 8 tokens) you move the head slider from 1 to "
           "8. Predict what happens to the bias of the farthest key, 7 tokens back.",
           "It halves at every step of the slider, towards 0",
           {"It grows: later heads penalise distance more": "The slopes 2^(−8h/n) shrink "
                                                             "as h grows; head 8's is the "
                                                             "gentlest.",
            "It rises by equal steps, one eighth of head 1's each":
                "The slopes form a geometric sequence, not an arithmetic one: each is a "
                "fixed fraction of the one before.",
            "Nothing: every head has the same bias": "Each head has its own slope; that "
                                                     "is the point of ALiBi's heads."},
           f"Move the head slider and point at the farthest key: the bias is −m·7, and m "
           f"halves from head to head, from 1/{1 / slopes[0]:.0f} (head 1) to "
           f"1/{1 / slopes[-1]:.0f} (head 8), "
           f"so the bias goes from {far[0]:g} to {far[-1]:.3f}: head 8 barely penalises "
           f"distance.",
           understanding=True, predict=True),
        mc("alibi.why-many-slopes",
           "Why does an ALiBi model give its heads different slopes instead of one?",
           "To cover near and far context at once",
           {"So that the heads learn different slopes in training":
                "ALiBi's slopes are fixed, never learned.",
            "To make the bias cheaper to compute on many heads":
                "Every head costs the same; the slopes only change which keys it favours.",
            "Because one slope would not extrapolate past the training length":
                "One slope extrapolates just as well; it would only fix one reading range for "
                "all heads."},
           f"Steep heads read the last few tokens, gentle heads reach far back: with the bias "
           f"alone over 64 keys, head 1 puts 90 % of its attention on the nearest {span[0]} "
           f"keys and head 8 spreads it over {span[-1]}.",
           understanding=True),
    ]
