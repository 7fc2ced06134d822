"""Self-check questions of chapter 6, "ALiBi: attention with linear biases" (``06_alibi``).

Each has the id ``"alibi.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

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
           "the 8-head sequence, plus every other slope of the 16-head sequence",
           {"2^(−8h/12) for h = 1..12": "That rule holds only for powers of two; the paper "
                                        "uses the closest power of two and fills in.",
            "0.1·h, growing with the head": "That is the source notes' linear slope, not "
                                            "the paper's."},
           "As the chapter's figure shows, 4 extra slopes come from the 16-head sequence."),
        mc("alibi.slider-farthest-key",
           "In the ALiBi bias figure (8 heads, 8 tokens) you move the head slider from 1 to "
           "8. What happens to the bias of the farthest key, 7 tokens back?",
           f"It shrinks from {far[0]:g} to {far[-1]:.3f}: head 8 barely penalises distance",
           {"It grows: later heads penalise distance more": "The slopes 2^(−8h/n) shrink "
                                                             "as h grows; head 8's is the "
                                                             "gentlest.",
            "Nothing: every head has the same bias": "Each head has its own slope; that "
                                                     "is the point of ALiBi's heads."},
           f"The bias is −m·7, and m falls from {slopes[0]:g} (head 1) to {slopes[-1]:g} "
           f"(head 8), {slopes[0] / slopes[-1]:g} times smaller.",
           understanding=True),
        mc("alibi.why-many-slopes",
           "Why does an ALiBi model give its heads different slopes instead of one?",
           "Steep heads read the last few tokens, gentle heads reach far back: together "
           "they cover near and far context",
           {"So that the heads learn different slopes": "ALiBi's slopes are fixed, never "
                                                       "learned.",
            "To make the bias cheaper to compute": "Every head costs the same; the slopes "
                                                   "only change which keys it favours.",
            "One slope would not extrapolate": "One slope extrapolates just as well; it "
                                               "would only fix one reading range for all "
                                               "heads."},
           f"With the bias alone over 64 keys, head 1 puts 90 % of its attention on the "
           f"nearest {span[0]} keys and head 8 spreads it over {span[-1]}.",
           understanding=True),
    ]
