"""Self-check questions of chapter 12, "Learned and contextual biases" (``12_learned_biases``).

Each has the id ``"learned_biases.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

import numpy as np

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "12_learned_biases"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...alibi import alibi_slopes
    from ...learned_bias import cope_positions, fire_normalized_distance, kerple_log, kerple_power

    m = float(alibi_slopes(8)[2])
    assert kerple_power(7.0, m, 1.0) == -m * 7
    log_bias = float(kerple_log(99.0, 1.0, 1.0))
    line = float(kerple_power(99.0, 0.5, 1.0))  # ALiBi with slope 1/2
    fire_in = float(fire_normalized_distance(100.0, 100.0, 0.1, 512.0))
    gates = np.zeros((10, 10))
    gates[9, [3, 9]] = 1.0  # query 9 opens its gates on the full stops at 3 and 9
    cope_p = float(cope_positions(gates)[9, 1])
    # FIRE with L = 0: the query's own position normalises, so its farthest key is always ~1
    whole = [float(fire_normalized_distance(float(i), float(i), 0.1, 0.0)) for i in (100, 1000)]
    half = float(fire_normalized_distance(50.0, 100.0, 0.1, 0.0))
    assert all(abs(w - 1) < 1e-4 for w in whole) and 0.5 < half < 1
    return [
        mc("learned_biases.kerple-as-alibi",
           f"Which KERPLE setting gives exactly ALiBi's bias for a head with slope m = {m:g}?",
           f"The power kernel with r₁ = {m:g}, r₂ = 1",
           {f"The log kernel with r₁ = {m:g}, r₂ = 1": "The log kernel bends: "
                                                       "−r₁·log(1 + r₂·d) is no line.",
            f"The power kernel with r₁ = 1, r₂ = {m:g}": "r₂ is the exponent; a line needs "
                                                         "exponent 1 and the slope in r₁.",
            "None: KERPLE cannot express ALiBi": "The power kernel −r₁·d^r₂ is a line when "
                                                 "r₂ = 1."},
           "−r₁·d^r₂ with r₂ = 1 is −m·d, ALiBi's line (as long as the clamp lets r₁ be that "
           "small).",
           understanding=True),
        number("learned_biases.kerple-log-bias",
               "KERPLE's log kernel with r₁ = r₂ = 1: what bias does a key 99 tokens back "
               "get? Give 2 decimals.",
               round(log_bias, 2), 0.005 + 1e-9,
               f"−log(1 + 99) = −log 100 ≈ −{-log_bias:.3f}; ALiBi with slope 1/2 would "
               f"give −{-line:g}.",
               "The log kernel's bias is −r₁·log(1 + r₂·d), natural logarithm."),
        number("learned_biases.fire-input-below-threshold",
               "FIRE with c = 0.1 and threshold L = 512: query at position 100, key at "
               "position 0. What input does the MLP get? Give 2 decimals.",
               round(fire_in, 2), 0.005 + 1e-9,
               f"The query is below L, so the denominator is ψ(512): "
               f"log(0.1·100 + 1) / log(0.1·512 + 1) ≈ {fire_in:.3f}, not 1.",
               "The input is ψ(i − j)/ψ(max(L, i)) with ψ(x) = log(c·x + 1)."),
        number("learned_biases.cope-position",
               "CoPE: query 9's gates are 1 on the full stops at positions 3 and 9 (the "
               "query ends a sentence) and 0 on every other key. What is the position "
               "p of key 1?",
               cope_p, 1e-6,
               f"p = g₁ + g₂ + … + g₉ counts the open gates from key 1 to the query: "
               f"{cope_p:g}, so key 1 is two sentences back.",
               "p_ij is the sum of the query's gates over keys j to i."),
        mc("learned_biases.fire-without-threshold",
           "In the FIRE normalised-distance figure you move the L slider to 0. A query at "
           "position 100 and one at position 1000 each look at their first token (key 0). "
           "Predict the input the MLP gets.",
           "About 1 for both, whatever the query's position in the text",
           {"100 and 1000, the raw distances": "FIRE never feeds a raw distance to its MLP; it "
                                               "normalises by ψ(max(L, i)).",
            "Larger for the query at 1000, whose key is farther back":
                "ψ(1000)/ψ(1000) = ψ(100)/ψ(100) = 1: the normalisation removes the length.",
            "Exactly 0: with L = 0 the normalisation is switched off":
                "L = 0 does not switch the normalisation off: the denominator becomes ψ(i), "
                "the query's own position."},
           f"Move L to 0 and read the left panel at the end of each curve: ψ(i − 0)/ψ(i) = 1 "
           f"({whole[0]:.4f} and {whole[1]:.4f}); half-way back, key 50 of query 100, gives "
           f"{half:.3f}, more than ½ because ψ is a log. So a longer text never shows the MLP an "
           f"input it has not seen: why FIRE extrapolates.",
           understanding=True, predict=True),
    ]
