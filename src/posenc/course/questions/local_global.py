"""Self-check questions of chapter 14, "Local and global layers" (``14_local_global``).

Each has the id ``"local_global.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

import math

import numpy as np

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "14_local_global"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...masks import receptive_field, sliding_window_mask
    from ...scaling import attention_temperature

    layers, window = 3, 5
    reach = int(receptive_field([sliding_window_mask(32, window)] * layers)[-1].sum()) - 1
    tau_1m = float(attention_temperature(np.array([1_048_575]))[0])
    sink = math.log(3.0)  # a sink logit of ln 3 beside 6 keys of logit 0: 3 / (3 + 6)
    sink_mass = math.exp(sink) / (math.exp(sink) + 6)
    return [
        number("local_global.sliding-window-reach",
               f"A stack of {layers} sliding-window layers, window {window} (a query sees itself "
               f"and the {window - 1} keys before it). How many tokens back can the last "
               "position be influenced from?", reach, 0.1,
               f"Each layer reaches {window - 1} further back: {layers} × {window - 1} = {reach}.",
               "Each layer can only add window − 1 positions to the path."),
        mc("local_global.local-layers-keep-base",
           "Gemma 3's local layers keep RoPE base 10⁴ while its context grows to 128K tokens. "
           "Why do they not need the larger base or a context-extension scaling?",
           "They never see a distance of 1,024 or more, so every angle they meet was seen "
           "in training",
           {"A small base extrapolates better than a large one": "A small base turns fast; "
            "past the training length it meets unseen angles as any RoPE does.",
            "The global layers correct the local layers' errors": "The global layers add "
            "long-range information; they do not change what the local layers compute."},
           "A window caps the distance: the rotation angles stay those of training at any "
           "context length.", understanding=True),
        mc("local_global.chunked-reach",
           "Stacking more chunked layers (chunk c, no global layer), how far back can the last "
           "token of a chunk be influenced from?",
           "Only from its own chunk, however many layers",
           {"k (c − 1) tokens, growing with depth": "That is a sliding window's reach; chunks "
            "share no tokens, so nothing ever crosses a chunk boundary.",
            "The whole sequence after enough layers": "Only a global (full) layer connects "
            "different chunks."},
           "Every chunked layer only mixes tokens of the same block; the product of the masks "
           "is the chunk mask again.", understanding=True),
        number("local_global.nope-temperature",
               "Llama 4 multiplies the queries of its NoPE layers by "
               "1 + 0.1·ln(1 + floor((p + 1)/8192)). What is the factor at position "
               "p = 1,048,575? (two decimals)", round(tau_1m, 2), 0.011,
               f"(p + 1)/8192 = 128, so 1 + 0.1·ln 129 = {tau_1m:.3f}.",
               "Divide p + 1 by 8192, take the floor, then 1 + 0.1·ln(1 + that)."),
        mc("local_global.log-n-keeps-a-gap",
           "A model trained at L = 4096 tokens multiplies its logits by max(1, ln n / ln L) "
           "for n keys. One relevant key's logit is g above all the others. For which gaps "
           "does its weight stay above what it had at L (with one key more) as n grows "
           "without end?",
           f"g ≥ ln L ≈ {math.log(4096):.1f}: the scaled gap then grows at least as fast as "
           "ln n",
           {"Any gap: the scale grows with n": "For g < ln L the weight still falls to 0, "
            "only more slowly: it is n^a / (n^a + n − 1) with a = g / ln L < 1.",
            "None: without QK-norm every weight falls to 0": "QK-norm bounds the gap; it "
            "does not stop the fading. The log-n scale does, for large enough gaps."},
           "With the scale the weight is n^a / (n^a + n − 1), a = g / ln L; it keeps its "
           "value from L on when a ≥ 1.", understanding=True),
        number("local_global.sink-weight",
               "A GPT-OSS head has sink logit ln 3; one query sees 6 keys, all with logit 0. "
               "What total weight do the 6 keys get? (two decimals)",
               round(1 - sink_mass, 2), 0.011,
               f"The sink takes e^s/(e^s + 6) = 3/9, the keys 1 − 3/9 = {1 - sink_mass:.3f}.",
               "The sink is one more term e^s in the softmax denominator, with no value."),
    ]
