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
    from ...scaling import attention_temperature, log_n_scale
    from ..figures.local_global import one_key_attention

    layers, window = 3, 5
    reach = int(receptive_field([sliding_window_mask(32, window)] * layers)[-1].sum()) - 1
    tau_1m = float(attention_temperature(np.array([1_048_575]))[0])
    sink = math.log(3.0)  # a sink logit of ln 3 beside 6 keys of logit 0: 3 / (3 + 6)
    sink_mass = math.exp(sink) / (math.exp(sink) + 6)
    # the temperature figure's gap slider, 8 -> 12: the weight on the relevant key at 8,192
    # and at a million keys, with the log-n scale (dashed) and with no temperature
    keys = np.array([8192, 1_000_000])
    scaled = {g: one_key_attention(keys, g, log_n_scale(keys, 8192))[0] for g in (8.0, 12.0)}
    plain = one_key_attention(keys, 12.0)[0]
    assert scaled[8.0][1] < scaled[8.0][0] and scaled[12.0][1] > scaled[12.0][0]
    assert plain[1] < plain[0] and 8 < math.log(8192) < 12
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
           "Their window caps every distance below 1,024",
           {"A small base extrapolates better than a large one": "A small base turns fast; "
            "past the training length it meets unseen angles as any RoPE does.",
            "The global layers correct the local layers' errors": "The global layers add "
            "long-range information; they do not change what the local layers compute."},
           "A local layer never meets a distance of 1,024 or more, at any context length, so "
           "every rotation angle it meets was seen in training; only the global layers see "
           "long distances.", understanding=True),
        mc("local_global.chunked-reach",
           "Stacking more chunked layers (chunk c, no global layer), how far back can the last "
           "token of a chunk be influenced from?",
           "Only from its own chunk, however many layers",
           {"k (c − 1) tokens, growing with depth": "That is a sliding window's reach; chunks "
            "share no tokens, so nothing ever crosses a chunk boundary.",
            "The whole sequence after enough layers": "Only a global (full) layer connects "
            "different chunks.",
            "From its own chunk and the one before it": "Chunks share no tokens: the first "
            "query of a chunk sees only itself, so nothing of the chunk before ever enters."},
           "However many layers: every chunked layer only mixes tokens of the same block, and "
           "the product of the masks is the chunk mask again.", understanding=True),
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
           f"g ≥ ln L ≈ {math.log(4096):.1f}: then the scaled gap keeps pace with ln n",
           {"Any gap: the scale grows with n": "For g < ln L the weight still falls to 0, "
            "only more slowly: it is n^a / (n^a + n − 1) with a = g / ln L < 1.",
            "None: without QK-norm every weight falls to 0": "QK-norm bounds the gap; it "
            "does not stop the fading. The log-n scale does, for large enough gaps.",
            "No finite gap: it would have to exceed ln n for every n": "The scale multiplies "
            "the gap by ln n / ln L, so the scaled gap g·ln n / ln L keeps pace with ln n once "
            "g ≥ ln L, a finite gap."},
           "The scaled gap then grows at least as fast as ln n: the weight n^a / (n^a + n − 1), "
           "a = g / ln L, keeps its value from L on when a ≥ 1.", understanding=True),
        mc("local_global.temperature-gap-slider",
           "In the figure “Attention vs context length” you move the logit gap slider from 8 "
           "to 12. Predict the dashed log-n curve (ln n / ln 8192) at a million keys.",
           "It now rises with n instead of falling, towards a weight of 1",
           {"It still falls to 0, only later":
                f"With the log-n scale the weight is n^a / (n^a + n − 1), a = g / ln 8192: for "
                f"g = 12, a > 1 and the weight grows. Move the slider and read it at 10^6: "
                f"{scaled[12.0][1]:.3f}.",
            "It rises, and so does the curve with no temperature":
                f"Without a temperature the weight e^g / (e^g + n − 1) falls once n passes "
                f"e^g, whatever the gap: {plain[1]:.3f} at a million keys for g = 12.",
            "Nothing: the gap moves every curve up by the same amount":
                "The gap enters the exponent, scaled by ln n / ln 8192 on the dashed curve: "
                "whether it beats the n − 1 other keys depends on g against ln 8192 ≈ 9."},
           f"Move the gap to 12: ln 8192 ≈ {math.log(8192):.2f} < 12, so the dashed curve climbs "
           f"from {scaled[12.0][0]:.3f} at 8,192 keys to {scaled[12.0][1]:.3f} at a million; at "
           f"gap 8 it fell from {scaled[8.0][0]:.3f} to {scaled[8.0][1]:.3f}.",
           understanding=True, predict=True),
        number("local_global.sink-weight",
               "A GPT-OSS head has sink logit ln 3; one query sees 6 keys, all with logit 0. "
               "What total weight do the 6 keys get? (two decimals)",
               round(1 - sink_mass, 2), 0.011,
               f"The sink takes e^s/(e^s + 6) = 3/9, the keys 1 − 3/9 = {1 - sink_mass:.3f}.",
               "The sink is one more term e^s in the softmax denominator, with no value."),
    ]
