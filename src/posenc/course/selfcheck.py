"""Self-check questions at the end of each chapter, shown with ``jupyterquiz``.

Each chapter's last cell is ``show_questions("02_sinusoidal")``: three to five quick
questions a reader answers on the page (multiple choice, or a number typed in and
Enter pressed) with immediate feedback. ``jupyterquiz`` embeds the questions and its
own JavaScript in the cell output, so they work offline on the static site and in
Jupyter alike. Every number in a question or an answer is computed here from
``posenc`` (never typed in), so the questions stay true when the library changes.

Questions aim at understanding rather than recall of wording: predict what a change
does, or compute a value from the chapter's formula.
"""

from __future__ import annotations

import hashlib
import json
import math
import re

import numpy as np

from .._validation import check_choice
from .i18n import marked, output_languages, translate

__all__ = ["CHAPTERS", "questions", "translated_questions", "show_questions", "quiz_html",
           "correct_answer"]


def _mc(question: str, correct: str, wrong: dict[str, str], why: str, *,
        understanding: bool = False) -> dict:
    """A multiple-choice question: one correct answer (with ``why``), wrong ones with theirs.

    ``understanding``: the question asks the reader to predict, explain or choose (what a
    slider will do, why a method fails, which model uses what), not to recall or plug in;
    every chapter has at least two (tests/test_selfcheck.py)."""
    answers = [{"answer": correct, "correct": True, "feedback": f"Correct. {why}"}]
    answers += [{"answer": a, "correct": False, "feedback": f"Not quite. {fb}"}
                for a, fb in wrong.items()]
    # a fixed order that does not give the answer away (not always first, same every build)
    answers.sort(key=lambda a: hashlib.sha256(a["answer"].encode()).hexdigest())
    q = {"question": question, "type": "multiple_choice", "answers": answers}
    if understanding:
        q["understanding"] = True  # jupyterquiz ignores keys it does not know
    return q


def _number(question: str, value: float, tolerance: float, why: str, hint: str) -> dict:
    """A numeric question: any answer within ``tolerance`` of ``value`` is correct."""
    return {"question": question, "type": "numeric", "answers": [
        {"type": "range", "range": [value - tolerance, value + tolerance], "correct": True,
         "feedback": f"Correct. {why}"},
        {"type": "default", "feedback": f"Not quite. {hint}"}]}


def _why_order() -> list[dict]:
    return [
        _mc("Self-attention with no position information reads “dog bites man” and "
            "“man bites dog”. What can you say about the output vector for “bites”?",
            "It is the same in both sentences",
            {"It differs, because “dog” comes first in one of them":
                 "Without position, attention sees a set of tokens: the same keys and values "
                 "in any order give the same weighted sum.",
             "It is zero": "Attention still mixes the token vectors; only their order is lost."},
            "Attention sums over the same keys and values in both orders; the result cannot "
            "depend on the order.",
            understanding=True),
        _mc("Which methods give two given tokens the same attention score at distance 3, "
            "wherever in the sequence the pair sits?",
            "RoPE and ALiBi",
            {"Sinusoidal and learned absolute encodings":
                 "These add a vector for the absolute position to each token, so the score "
                 "changes with where the pair is.",
             "None of them": "RoPE's score depends on m − n only, and ALiBi's bias on i − j only."},
            "RoPE's rotated dot product and ALiBi's bias depend only on the distance.",
            understanding=True),
        _mc("Where does RoPE put position into attention?",
            "It rotates the queries and keys before their dot product",
            {"It adds a vector to each token embedding": "That is the sinusoidal and learned "
                                                         "absolute encodings.",
             "It adds a bias to the attention scores": "That is ALiBi and T5.",
             "It changes the values": "RoPE leaves the values alone; Shaw's method changes them."},
            "q and k are rotated by angles proportional to their positions."),
    ]


def _sinusoidal() -> list[dict]:
    from ..sinusoidal import sinusoidal_dot_product, sinusoidal_wavelengths

    lam = sinusoidal_wavelengths(64, 10000.0)
    doubled = sinusoidal_wavelengths(64, 20000.0)
    same_start = math.isclose(lam[0], doubled[0])
    dots = sinusoidal_dot_product(np.array([5, 5]), 64)
    assert same_start and int(np.argmax(lam)) == len(lam) - 1 and dots[0] == dots[1]
    return [
        _mc("base = 10000, d_model = 64: which sin/cos pair has the longest wavelength?",
            f"The last pair, i = {len(lam) - 1}",
            {"The first pair, i = 0": f"Pair 0 has the shortest wavelength, 2π ≈ {lam[0]:.2f}.",
             "They are all equal": "The wavelengths grow geometrically with i.",
             f"The middle pair, i = {len(lam) // 2}": "The wavelength keeps growing up to the "
                                                      "last pair."},
            f"Its wavelength is 2π·base^((d−2)/d) ≈ {lam[-1]:,.0f} positions."),
        _number("d_model = 64, base = 10000: what is the wavelength of pair i = 16 (columns 32 "
                "and 33), in positions? Round to a whole number and press Enter.",
                float(lam[16]), 0.5 + 1e-9,
                f"2π·10000^(32/64) = 2π·100 ≈ {lam[16]:.1f}.",
                "The wavelength of pair i is 2π·base^(2i/d_model)."),
        _mc("You double base from 10000 to 20000 (d_model = 64). What happens to the "
            "wavelength of pair 0?",
            "Nothing: it stays 2π",
            {"It doubles": "base enters as base^(2i/d), and for i = 0 that is base⁰ = 1.",
             "It halves": "A larger base never shortens a wavelength."},
            f"base^0 = 1 for every base: pair 0 always has wavelength 2π ≈ {doubled[0]:.2f}; "
            f"only the later pairs slow down (the last one to {doubled[-1]:,.0f}).",
            understanding=True),
        _mc("PE[p]·PE[p + k] (the dot product of two sinusoidal encodings) depends on…",
            "only the distance k",
            {"p and k": "Expand cos(a − b): every p cancels, so any two pairs at the same "
                        "distance give the same value.",
             "only p": "The dot product of an encoding with itself is the same at every p; "
                       "it is the distance that matters."},
            "Each pair contributes cos(k·θᵢ); the position p cancels.",
            understanding=True),
    ]


def _learned() -> list[dict]:
    from ..compare import position_parameter_count

    params = position_parameter_count("learned", d_model=768, max_positions=512)
    return [
        _number("A learned absolute table for a model with d_model = 768 and at most 512 "
                "positions: how many trainable numbers does it hold?",
                float(params), 0.5, f"One row of 768 numbers per position: {params:,}.",
                "One learned vector of d_model numbers per position."),
        _mc("A model with a learned table of 512 rows gets a 600-token input. What does a "
            "plain lookup of position 600 do?",
            "It fails: there is no row 600",
            {"It returns the row of position 600 mod 512": "A table lookup does not wrap "
                                                           "around; the index is out of range.",
             "It extends the table with the sinusoidal formula": "Nothing in a learned table "
                                                                 "knows a formula."},
            "A table only knows the positions it was trained with.",
            understanding=True),
        _mc("Why can a sinusoidal encoding be computed for any position while a learned one "
            "cannot?",
            "It is a formula of p; the learned one is a list of trained rows",
            {"It uses fewer dimensions": "Both have d_model numbers per position.",
             "It is normalised": "Normalising does not create rows for unseen positions."},
            "sin and cos can be evaluated at any p, trained or not.",
            understanding=True),
    ]


def _rope() -> list[dict]:
    from ..rope import rope_angles, rope_frequencies

    slow = int((rope_angles(np.array([4096]), 128, 10000.0)[0] < 2 * np.pi).sum())
    slowest = 2 * np.pi / rope_frequencies(128, 10000.0)[-1]
    slowest_big = 2 * np.pi / rope_frequencies(128, 500000.0)[-1]
    assert slowest_big > slowest
    return [
        _mc("RoPE rotates q at position m and k at position n. Their dot product depends on "
            "the positions only through…",
            "m − n",
            {"m + n": "Rotating both by their own angles leaves the angle between them, "
                      "(m − n)·θ, in the dot product.",
             "m and n separately": "That is what an absolute encoding added to the input does."},
            "R(mθ)q · R(nθ)k = q · R((n − m)θ)k.",
            understanding=True),
        _number("head_dim = 128, base = 10000: how many of the 64 pairs have not completed one "
                "full turn by position 4096?",
                float(slow), 0.5, f"{slow} pairs have a wavelength longer than 4096 positions.",
                "Pair i turns by 4096·θᵢ with θᵢ = base^(−2i/head_dim); count the pairs where "
                "that stays below 2π."),
        _mc("A model raises base from 10000 to 500000 (head_dim = 128). Its slowest pair now "
            "turns…",
            "more slowly: its wavelength grows",
            {"faster": "θᵢ = base^(−2i/d) shrinks when base grows.",
             "at the same speed": "Only pair 0 keeps its speed whatever the base."},
            f"Its wavelength goes from about {slowest:,.0f} to {slowest_big:,.0f} positions.",
            understanding=True),
    ]


def _rope_scaling() -> list[dict]:
    from ..scaling import self_extend_distance, yarn_attention_factor

    factor = yarn_attention_factor(8.0)
    seen = int(self_extend_distance(11, 0, group=2, window=4))
    return [
        _mc("Position Interpolation with s = 4 divides every RoPE frequency by 4. What does "
            "the model lose?",
            "Resolution: neighbouring positions are 4 times closer in angle than in training",
            {"Nothing: every angle stays in the trained range": "The range is kept, but the fast "
                                                                "pairs no longer separate "
                                                                "neighbours as they used to.",
             "The ability to run past 4 × the training length": "PI is exactly what makes 4 × "
                                                                "the length fit."},
            "Dividing the fast pairs' frequencies blurs short distances.",
            understanding=True),
        _mc("Which pairs do YaRN and Llama 3.1 leave unchanged?",
            "The fast pairs, which turn many times within the training length",
            {"The slow pairs": "The slow pairs are the ones divided by s: they never completed "
                               "a turn in training.",
             "None: every pair is divided by s": "That is Position Interpolation."},
            "Fast pairs have seen every angle already; only the slow ones are stretched.",
            understanding=True),
        _number("YaRN's attention factor for s = 8 (0.1·ln s + 1), to 2 decimals?",
                round(factor, 2), 0.005 + 1e-9, f"0.1·ln 8 + 1 ≈ {factor:.4f}.",
                "Use the natural logarithm: 0.1·ln(8) + 1."),
        _number("Self-Extend with window w = 4 and group G = 2: at which distance is the query "
                "at position 11 scored against the key at position 0?",
                seen, 0.5, f"11 − 0 ≥ w, so the grouped positions count: ⌊11/2⌋ + 4 − ⌊4/2⌋ − "
                f"⌊0/2⌋ = {seen}, not the true 11.",
                "Past the window, use ⌊i/G⌋ + w − ⌊w/G⌋ − ⌊j/G⌋."),
        _mc("Why can a server not keep RoPE-rotated keys in its cache under ReRoPE, as it can "
            "under YaRN?",
            "A key's rotation depends on the query: near keys use the true distance, far ones "
            "the window",
            {"ReRoPE changes the frequencies as the text grows": "That is Dynamic NTK; ReRoPE "
                                                                  "keeps the frequencies.",
             "ReRoPE needs no cache at all": "It caches keys, but un-rotated, and rotates them "
                                             "per pass."},
            "The same key is scored at i − j in one pass and at w in the other."),
    ]


def _alibi() -> list[dict]:
    from ..alibi import alibi_bias, alibi_slopes, attention_span, bias_only_attention

    m1 = float(alibi_slopes(8)[0])
    bias = alibi_bias(8, 6)[0]
    assert bias[5, 2] == -3 * m1
    slopes = alibi_slopes(8)
    far = alibi_bias(8, 8)[:, 7, 0]  # the farthest key of the figure's 8 tokens, every head
    span = attention_span(bias_only_attention(slopes, 64))  # keys holding 90 % of attention
    assert far[0] < far[-1] < 0 and span[0] < span[-1]
    return [
        _number("An 8-head ALiBi model: what is the slope m of head 1? (A fraction like 1/4 "
                "works too.)",
                m1, 1e-6, f"2^(−8/8) = {m1:g}.", "The slopes are 2^(−8h/n) for n = 8 heads."),
        _number("Same model, head 1: what bias does query 5 get for key 2?",
                float(bias[5, 2]), 1e-6, f"−m·(i − j) = −{m1:g}·3 = {bias[5, 2]:g}.",
                "The causal bias is −m·(i − j)."),
        _mc("A model has 12 heads, not a power of two. Its slopes are…",
            "the 8-head sequence, plus every other slope of the 16-head sequence",
            {"2^(−8h/12) for h = 1..12": "That rule holds only for powers of two; the paper "
                                         "uses the closest power of two and fills in.",
             "0.1·h, growing with the head": "That is the source notes' linear slope, not "
                                             "the paper's."},
            "As the chapter's figure shows, 4 extra slopes come from the 16-head sequence."),
        _mc("In the ALiBi bias figure (8 heads, 8 tokens) you move the head slider from 1 to "
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
        _mc("Why does an ALiBi model give its heads different slopes instead of one?",
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


def _relative() -> list[dict]:
    from ..relative import t5_relative_bucket

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
        _number("T5 encoder, 32 buckets, max_distance = 128: which bucket does relative "
                "position +200 (the key 200 tokens after the query) fall in?",
                float(far), 0.5,
                f"Bucket {far}, the last of the 'after' half: every distance from well before "
                "128 on shares it (so does +5000).",
                "Half the buckets are for keys after the query; distances past max_distance "
                "go to the last one."),
        _mc("Shaw et al. clip the relative distance at k. Why does clipping let the model run "
            "on sequences longer than it was trained on?",
            "Every distance beyond k uses the same trained vector, so no unseen index appears",
            {"It makes attention cheaper": "Clipping changes which vectors are used, not the "
                                           "cost.",
             "It turns the encoding into a formula": "The clipped vectors are still learned."},
            "A longer sequence only adds distances beyond k, which all map to the edge rows.",
            understanding=True),
        _mc("Where does T5's relative position enter attention?",
            "As a learned scalar bias per head and bucket, added to the scores",
            {"As a vector added to the keys": "That is Shaw et al.",
             "As a rotation of q and k": "That is RoPE."},
            "The bias b[bucket(j − i)] is added to q·k before the softmax."),
        _mc("In the T5 bucket map you raise max_distance from 128 to 1024 (32 buckets). "
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


def _side_by_side() -> list[dict]:
    from ..compare import METHODS, position_parameter_count

    names = {"sinusoidal": "sinusoidal", "learned": "learned", "rope": "RoPE",
             "alibi": "ALiBi", "t5": "T5", "shaw": "Shaw"}
    # the chapter's six methods (a reader may have registered their own in the exercise)
    free = [m for m in METHODS if m in names and position_parameter_count(m) == 0]
    correct = ", ".join(names[m] for m in free)
    t5 = position_parameter_count("t5", num_heads=8, num_buckets=32)
    return [
        _mc("Which position methods add no trainable parameters at all?", correct,
            {"learned, T5, Shaw": "These are exactly the ones that learn their position "
                                  "numbers.",
             "Only sinusoidal": "RoPE and ALiBi are fixed formulas too."},
            "They are formulas of the positions; nothing is learned.",
            understanding=True),
        _number("T5's relative bias with 8 heads and 32 buckets: how many trainable numbers "
                "does one layer's table hold?",
                float(t5), 0.5, f"One scalar per head and bucket: {t5}.",
                "T5 learns one number per (bucket, head)."),
        _mc("Which of these makes the attention score depend on the absolute positions, not "
            "only on their difference?",
            "A sinusoidal encoding added to the token embeddings",
            {"RoPE": "RoPE's score depends on m − n only.",
             "ALiBi": "ALiBi's bias depends on i − j only."},
            "Added to the input, PE[p] passes through W_q and W_k, and cross terms such as "
            "x·W_q·W_kᵀ·PE[n] depend on n itself.",
            understanding=True),
    ]


def _extrapolation() -> list[dict]:
    return [
        _mc("A model trained on 128-byte sequences with a learned absolute table is run on "
            "512 bytes. What do positions 128 to 511 use?",
            "Nothing trained: the table has no rows for them (unless it is stretched)",
            {"The rows of positions 0 to 127 again": "Only if you wrap the index yourself, "
                                                     "which the model never saw.",
             "Rows learned during evaluation": "Nothing is learned at test time."},
            "This is why the chapter also tries a stretched (interpolated) table.",
            understanding=True),
        _mc("Why does the chapter compare losses by position rather than only one average "
            "per length?",
            "An average over a long sequence hides where past the training length the loss "
            "goes up",
            {"Because the average is always the same": "It is not; but it mixes seen and "
                                                      "unseen positions.",
             "Because position 0 is never scored": "Position is about where the failure "
                                                   "starts."},
            "Loss by position shows whether the model fails right after L_train or later.",
            understanding=True),
        _mc("ALiBi's bias grows linearly with distance. What does that do to far tokens at "
            "test lengths never seen in training?",
            "They get ever smaller weights, so the model mostly reads a local window it knows",
            {"They get larger weights": "The bias is negative and grows in size with distance.",
             "Nothing: the bias is cut off at the training length": "ALiBi's bias has no "
                                                                    "cut-off."},
            "The penalty keeps attention local, so longer inputs look like familiar ones.",
            understanding=True),
    ]


def _rope_today() -> list[dict]:
    from ..rope import rope_frequencies
    from ..rope_variants import xpos_zeta
    from ..scaling import rope_scaling_frequencies

    slow = [int((4096 * rope_frequencies(128, b) < 2 * np.pi).sum()) for b in (1e4, 5e5)]
    assert slow[1] > slow[0]
    zeta0 = float(xpos_zeta(64)[0])
    factor = zeta0 ** (1024 / 512)
    p_rope, _ = rope_scaling_frequencies("proportional", 64, partial_rotary_factor=0.25)
    turning = np.flatnonzero(p_rope)
    partial_slowest = float(rope_frequencies(2 * len(turning))[-1])  # a head of 16 features
    assert np.array_equal(p_rope[turning], rope_frequencies(64)[turning])
    assert float(p_rope[turning[-1]]) > partial_slowest
    return [
        _number("head_dim = 128: Llama 3 trains with base 500000 instead of 10000. How many "
                "of the 64 pairs now turn less than once within 4096 tokens?",
                float(slow[1]), 0.5,
                f"{slow[1]} pairs have a wavelength 2π·base^(2i/128) longer than 4096 tokens "
                f"(with base 10000: {slow[0]}). Their angles never wrap within the context.",
                "Pair i turns by 4096·θᵢ with θᵢ = base^(−2i/128); count the pairs where that "
                "stays below 2π."),
        _mc("A 64-wide head, fraction 1/4: partial RoPE and p-RoPE both rotate "
            f"{len(turning)} pairs and leave the rest alone. What is the difference?",
            "p-RoPE keeps the head's fastest frequencies; partial RoPE spreads a whole "
            "frequency ladder over its pairs",
            {"Partial RoPE rotates more features": f"Both move {2 * len(turning)} of the 64 "
                                                   "features.",
             "p-RoPE's score depends on the absolute positions": "Both are relative: the "
                                                                "score at distance 5 is the "
                                                                "same wherever it sits.",
             "There is none: they are two names for one method": "They pick different "
                                                                 "frequencies for the "
                                                                 "rotated pairs."},
            f"Partial RoPE treats its {2 * len(turning)} features as a head of that size "
            f"(slowest pair {partial_slowest:.1e} rad/token); p-RoPE keeps base^(−2i/64) for "
            f"pairs 0 to {turning[-1]} (slowest {p_rope[turning[-1]]:.2f} rad/token) and zeroes "
            "the slow end.",
            understanding=True),
        _number("xPos, head_dim = 64, scale_base γ = 512: by what factor is pair 0's share of "
                "q·k multiplied for a key 1024 tokens back? Give 3 decimals.",
                round(factor, 3), 0.0005 + 1e-9,
                f"ζ₀ = 0.4/1.4 ≈ {zeta0:.4f}, and ζ₀^(1024/512) = ζ₀² ≈ {factor:.4f}: the "
                "fastest pair decays most.",
                "The factor is ζᵢ^((m − n)/γ) with ζᵢ = (2i/d + 0.4)/1.4."),
        _mc("Why does DeepSeek-V2's multi-head latent attention keep RoPE on a separate "
            "small slice instead of rotating the keys rebuilt from its compressed cache?",
            "The rotation would sit between the query and Wᵁᴷ and change with the key's "
            "position, so Wᵁᴷ could no longer be absorbed into the query",
            {"RoPE cannot rotate the latent vectors": "RoPE rotates any even-sized vector; "
                                                      "the problem is where the rotation "
                                                      "sits in the product.",
             "To save compute at training time": "The reason is the cache at inference: "
                                                 "without absorption every key must be "
                                                 "rebuilt from the latent.",
             "Because RoPE makes the cache larger": "Rotating a key does not change its "
                                                    "size; the decoupled slice adds one small "
                                                    "rotated key per token."},
            "q·R(n−m)·Wᵁᴷ·cₙ has a position-dependent matrix in the middle; the decoupled "
            "slice qᴿ·kᴿ carries position, and the content part absorbs as before.",
            understanding=True),
    ]


def _rope_2d_3d() -> list[dict]:
    from ..rope import apply_rope
    from ..rope_variants import axial_rope_angles, mrope_position_ids

    angles = axial_rope_angles(np.array([0, 1]), np.array([0, 0]), 32)  # one row down
    row_turn = float(angles[1, 11] - angles[0, 11])
    segments = (5, (1, 4, 6), 2)
    ids = mrope_position_ids(segments)
    after = int(ids[0, 5 + 24])
    assert (ids[:, 5 + 24] == after).all()
    q, k = np.random.default_rng(0).standard_normal((2, 1, 32)).repeat(36, axis=1)
    q, k = apply_rope(q, np.arange(36)), apply_rope(k, np.arange(36))
    assert np.isclose(q[1] @ k[0], q[6] @ k[5])  # 1-D RoPE: the same relation
    return [
        _number("Axial 2-D RoPE, head size 32, base 100: pairs 0–7 follow the column and 8–15 "
                "the row. By how many radians does pair 11 turn from one row to the next? "
                "Give 3 decimals.",
                round(row_turn, 3), 0.0005 + 1e-9,
                f"Pair 11 is row pair 3, with frequency f₃ = 100^(−4·3/32) ≈ {row_turn:.4f} "
                "rad per row.",
                "Pair 8 + i turns by row·fᵢ with fᵢ = 100^(−4i/head_dim)."),
        _mc("A 6×6 grid of patches is flattened row by row and given 1-D RoPE. How does it "
            "see patch 6 (first of row 1) against patch 5 (last of row 0)?",
            "Exactly like two neighbours in a row: one position apart",
            {"As a patch one row down and five columns left": "That is what 2-D RoPE sees; "
                                                              "the flat sequence only knows "
                                                              "6 − 5 = 1.",
             "As very far apart": "In the flat sequence they are adjacent."},
            "1-D RoPE sees offset 1 for both pairs; axial RoPE gives (Δrow, Δcol) = (1, −5) "
            "its own angles.",
            understanding=True),
        _number("Qwen2-VL's M-RoPE: 5 text tokens (ids 0–4), then an image of 1×4×6 merged "
                "patches, then text. What id does the first text token after the image get?",
                float(after), 0.5,
                f"The image starts at id 5; its ids reach 5 + max(4, 6) − 1 = {after - 1}, so "
                f"the text resumes at {after}. An image costs max(h, w) ids, not h·w.",
                "An image starting at id s gives patch (r, c) the ids (s, s + r, s + c); text "
                "counts on from the largest id so far."),
        _mc("Why does M-RoPE give each text token the same id on all three axes?",
            "So that text gets exactly plain RoPE, whatever the sections",
            {"To save memory": "Three equal ids take as much memory as three different ones.",
             "Because text has no position": "Text has a position: the shared id, which "
                                             "grows token by token."},
            "With equal ids every pair turns by the same position, as in 1-D RoPE: a model "
            "trained on text loses nothing when the image axes are added.",
            understanding=True),
    ]


def _learned_biases() -> list[dict]:
    from ..alibi import alibi_slopes
    from ..learned_bias import cope_positions, fire_normalized_distance, kerple_log, kerple_power

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
        _mc(f"Which KERPLE setting gives exactly ALiBi's bias for a head with slope m = {m:g}?",
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
        _number("KERPLE's log kernel with r₁ = r₂ = 1: what bias does a key 99 tokens back "
                "get? Give 2 decimals.",
                round(log_bias, 2), 0.005 + 1e-9,
                f"−log(1 + 99) = −log 100 ≈ −{-log_bias:.3f}; ALiBi with slope 1/2 would "
                f"give −{-line:g}.",
                "The log kernel's bias is −r₁·log(1 + r₂·d), natural logarithm."),
        _number("FIRE with c = 0.1 and threshold L = 512: query at position 100, key at "
                "position 0. What input does the MLP get? Give 2 decimals.",
                round(fire_in, 2), 0.005 + 1e-9,
                f"The query is below L, so the denominator is ψ(512): "
                f"log(0.1·100 + 1) / log(0.1·512 + 1) ≈ {fire_in:.3f}, not 1.",
                "The input is ψ(i − j)/ψ(max(L, i)) with ψ(x) = log(c·x + 1)."),
        _number("CoPE: query 9's gates are 1 on the full stops at positions 3 and 9 (the "
                "query ends a sentence) and 0 on every other key. What is the position "
                "p of key 1?",
                cope_p, 1e-6,
                f"p = g₁ + g₂ + … + g₉ counts the open gates from key 1 to the query: "
                f"{cope_p:g}, so key 1 is two sentences back.",
                "p_ij is the sum of the query's gates over keys j to i."),
        _mc("In the FIRE figure you set the threshold L to 0. A query at position 100 and "
            "one at position 1000 each look at their first token (key 0). What input does "
            "the MLP get?",
            "About 1 for both: each distance is measured against the query's own position",
            {"100 and 1000": "FIRE never feeds a raw distance to its MLP; it normalises by "
                             "ψ(max(L, i)).",
             "Larger for the query at 1000": "ψ(1000)/ψ(1000) = ψ(100)/ψ(100) = 1: the "
                                             "normalisation removes the length."},
            f"ψ(i − 0)/ψ(i) = 1 ({whole[0]:.4f} and {whole[1]:.4f}); half-way back, key 50 of "
            f"query 100, gives {half:.3f}, more than ½ because ψ is a log. So a longer text "
            "never shows the MLP an input it has not seen: why FIRE extrapolates.",
            understanding=True),
    ]


#: Chapter (notebook name without .ipynb) -> its question builder.
def _long_context() -> list[dict]:
    from ..experiments.extrapolation import PRESETS
    from ..retrieval import VALUE_BYTES
    from ..scaling import yarn_attention_factor

    chance = 100.0 / VALUE_BYTES.shape[1]
    pairs = PRESETS["main"].retrieval_pairs  # chapter 13's sequences
    score_scale = yarn_attention_factor(4.0) ** 2
    return [
        _number("In the content retrieval task every key has its own 15 values. What accuracy "
                "(in %) does a model get that always answers with one of the query key's values, "
                "picked at random?", round(chance, 1), 0.2,
                f"1 in 15: {chance:.1f} %. Anything above that used the sequence.",
                "Count the values a key can have; the model guesses uniformly among them."),
        _mc("A model's held-out loss stays flat from 1× to 8× the training length, but its "
            "retrieval accuracy falls to near chance at long distances. What is the most "
            "likely reading?",
            "It predicts well from nearby text and does not reach the far tokens",
            {"It has learnt to use the whole window": "Then it would find the answer far "
                                                      "back as well as near.",
             "The retrieval test is broken at long lengths": "The same sequences score well "
                                                            "for other models; the test is the "
                                                            "same at every length."},
            "Most next bytes are predictable from the last few dozen; flat loss says nothing "
            "about the far ones, retrieval does (ALiBi's recency bias is the textbook case).",
            understanding=True),
        _number("YaRN at factor s = 4 multiplies the rotated queries and keys by "
                "0.1·ln(s) + 1. By what factor are the attention scores multiplied? "
                "(two decimals)", round(score_scale, 2), 0.011,
                f"Both q and k are scaled, so the scores by (0.1·ln 4 + 1)² = {score_scale:.3f}.",
                "q and k are both multiplied: square the factor."),
        _mc("Two methods score 62 % and 60 % retrieval accuracy at 4× the training length; "
            "over the seeds each score moves by about ±5 points. What can you conclude?",
            "Not which is better: the gap is inside the seed-to-seed spread",
            {"The first method is better": "One seed's 2 points are smaller than the spread "
                                           "between seeds of the same method.",
             "They are the same method in effect": "The error bars overlap, which says the "
                                                   "runs cannot tell them apart, not that "
                                                   "they are equal."},
            "This is why the chapter trains several seeds and draws error bars before ranking "
            "methods.",
            understanding=True),
        _number(f"On the positional task a sequence has {pairs} pairs whose values are shared "
                "by all keys. A reader sees which bytes the context holds and how often, but not "
                "their order. What accuracy (in %) can it reach at best?", 100 / pairs, 0.5,
                f"{100 / pairs:.0f} %: swapping two pairs' values leaves the bytes the same and "
                f"changes the answer, so it can only pick one of the {pairs} values present.",
                "Which values could be the answer, if you cannot see which key each follows?"),
        _mc("A method scores 95 % on the content task and 25 % on the positional task (4 "
            "pairs). What has it learned?",
            "To find the byte that belongs to the query key, not to use where it sits",
            {"To use position, but not far back": "Then it would score above chance on the "
                                                 "positional task at short distances.",
             "Nothing: both scores are chance": "Chance on the content task is 1/15, 6.7 %; "
                                                "95 % is a real look-up."},
            "The content task is solved by a bag of bytes; the positional one needs order. A "
            "gap between them is a model that looks up content without binding it by position.",
            understanding=True),
    ]


def _local_global() -> list[dict]:
    from ..masks import receptive_field, sliding_window_mask
    from ..scaling import attention_temperature

    layers, window = 3, 5
    reach = int(receptive_field([sliding_window_mask(32, window)] * layers)[-1].sum()) - 1
    tau_1m = float(attention_temperature(np.array([1_048_575]))[0])
    sink = math.log(3.0)  # a sink logit of ln 3 beside 6 keys of logit 0: 3 / (3 + 6)
    sink_mass = math.exp(sink) / (math.exp(sink) + 6)
    return [
        _number(f"A stack of {layers} sliding-window layers, window {window} (a query sees itself "
                f"and the {window - 1} keys before it). How many tokens back can the last "
                "position be influenced from?", reach, 0.1,
                f"Each layer reaches {window - 1} further back: {layers} × {window - 1} = {reach}.",
                "Each layer can only add window − 1 positions to the path."),
        _mc("Gemma 3's local layers keep RoPE base 10⁴ while its context grows to 128K tokens. "
            "Why do they not need the larger base or a context-extension scaling?",
            "They never see a distance of 1,024 or more, so every angle they meet was seen "
            "in training",
            {"A small base extrapolates better than a large one": "A small base turns fast; "
             "past the training length it meets unseen angles as any RoPE does.",
             "The global layers correct the local layers' errors": "The global layers add "
             "long-range information; they do not change what the local layers compute."},
            "A window caps the distance: the rotation angles stay those of training at any "
            "context length.", understanding=True),
        _mc("Stacking more chunked layers (chunk c, no global layer), how far back can the last "
            "token of a chunk be influenced from?",
            "Only from its own chunk, however many layers",
            {"k (c − 1) tokens, growing with depth": "That is a sliding window's reach; chunks "
             "share no tokens, so nothing ever crosses a chunk boundary.",
             "The whole sequence after enough layers": "Only a global (full) layer connects "
             "different chunks."},
            "Every chunked layer only mixes tokens of the same block; the product of the masks "
            "is the chunk mask again.", understanding=True),
        _number("Llama 4 multiplies the queries of its NoPE layers by "
                "1 + 0.1·ln(1 + floor((p + 1)/8192)). What is the factor at position "
                "p = 1,048,575? (two decimals)", round(tau_1m, 2), 0.011,
                f"(p + 1)/8192 = 128, so 1 + 0.1·ln 129 = {tau_1m:.3f}.",
                "Divide p + 1 by 8192, take the floor, then 1 + 0.1·ln(1 + that)."),
        _number("A GPT-OSS head has sink logit ln 3; one query sees 6 keys, all with logit 0. "
                "What total weight do the 6 keys get? (two decimals)",
                round(1 - sink_mass, 2), 0.011,
                f"The sink takes e^s/(e^s + 6) = 3/9, the keys 1 − 3/9 = {1 - sink_mass:.3f}.",
                "The sink is one more term e^s in the softmax denominator, with no value."),
    ]


CHAPTERS = {
    "01_why_order": _why_order,
    "02_sinusoidal": _sinusoidal,
    "03_learned": _learned,
    "04_rope": _rope,
    "05_rope_scaling": _rope_scaling,
    "06_alibi": _alibi,
    "07_relative": _relative,
    "08_side_by_side": _side_by_side,
    "09_extrapolation": _extrapolation,
    "10_rope_today": _rope_today,
    "11_rope_2d_3d": _rope_2d_3d,
    "12_learned_biases": _learned_biases,
    "13_long_context": _long_context,
    "14_local_global": _local_global,
}

#: jupyterquiz's colours; with course.css every text/background pair is at least 4.5:1 (WCAG AA)
#: in both themes. The question sits on dark blue in white; a chosen answer turns dark green
#: (right) or dark red (wrong) under white text, and the feedback line is written in those
#: colours on the quiz's light card.
QUIZ_COLORS = {
    "--jq-multiple-choice-bg": "#1f4e79",
    "--jq-mc-button-bg": "#fafafa",
    "--jq-mc-button-border": "#767676",
    "--jq-mc-button-inset-shadow": "#555555",
    "--jq-many-choice-bg": "#1f4e79",
    "--jq-numeric-bg": "#1f4e79",
    "--jq-numeric-input-bg": "#ffffff",
    "--jq-numeric-input-label": "#1a1a1a",
    "--jq-numeric-input-shadow": "#767676",
    "--jq-string-bg": "#1f4e79",
    "--jq-incorrect-color": "#a4001d",
    "--jq-correct-color": "#1e6b24",
    "--jq-text-color": "#ffffff",
    "--jq-link-color": "#cfe3ff",
}


def questions(chapter: str) -> list[dict]:
    """The questions of ``chapter`` (e.g. ``"02_sinusoidal"``), in jupyterquiz's format."""
    chapter = check_choice("chapter", chapter, tuple(CHAPTERS))
    return CHAPTERS[chapter]()


def correct_answer(question: dict):
    """The correct answer of one question: its text (multiple choice) or a number in range."""
    for answer in question["answers"]:
        if answer.get("correct"):
            if "range" in answer:
                low, high = answer["range"]
                return (low + high) / 2
            return answer["answer"]
    raise ValueError("question has no correct answer")


#: What jupyterquiz's script itself writes on the page (a label, default feedback).
QUIZ_UI = ("Type numeric answer here:", "Type your answer here:", "Correct!",
           "Incorrect -- try again.", "Incorrect. Try again.")


def translated_questions(chapter: str, lang: str = "en") -> list[dict]:
    """:func:`questions` with every question, answer and feedback in ``lang``
    (:func:`posenc.course.i18n.translate`)."""
    def walk(node, key=None):
        if isinstance(node, dict):
            return {k: walk(v, k) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        if isinstance(node, str) and key in ("question", "answer", "feedback"):
            return translate(node, lang)
        return node

    return walk(questions(chapter))


def quiz_html(chapter: str, lang: str = "en") -> tuple[str, str]:
    """``chapter``'s questions as jupyterquiz draws them: (HTML with its styles, JavaScript),
    in ``lang``.

    What ``jupyterquiz.display_quiz`` would display, with three changes: the course's
    ``course.css`` (contrast in both themes; in JupyterLab, no "disconnected" mark on the
    kernel-free sliders) is added to the styles; the quiz's id comes from
    the chapter (a rebuilt page is the same page); and the script cannot load MathJax from a
    CDN. jupyterquiz typesets with a page's MathJax 3 when it finds one, but where
    ``window.MathJax`` exists without ``typeset`` (JupyterLab's) it overwrites it and fetches
    MathJax from jsDelivr, a request to another origin that fails offline and then throws.
    The questions use no TeX, so the script gets a ``MathJax`` of its own: the page's when it
    can typeset, else none; and the fetch line is cut out as well.
    """
    from importlib.resources import files

    from jupyterquiz.dynamic.loader import load_questions_script
    from jupyterquiz.dynamic.renderer import build_script, build_styles, render_div

    qs = translated_questions(chapter, lang)
    div_id = "posencQuiz" + "".join(c for c in chapter if c.isalpha())  # a JS identifier too
    div_id += "" if lang == "en" else lang
    prefix, static, url = load_questions_script(qs, div_id)
    div = render_div(div_id, False, False, False, 1_000_000, 700, 10, "left")
    css = files(__package__).joinpath("course.css").read_text(encoding="utf-8")
    html = (f'<div class="posenc-quiz">{div}</div></div>'
            f"{build_styles(div_id, QUIZ_COLORS)}<style>{css}</style>")
    script = re.sub(r"script\.src\s*=\s*'[^']*';", "return;", build_script(prefix, static, url,
                                                                        div_id, True))
    for ui in QUIZ_UI if lang != "en" else ():  # jupyterquiz's own words, in its script
        script = script.replace(json.dumps(ui), json.dumps(translate(ui, lang), ensure_ascii=False))
    script = ("(function (MathJax) {\n" + script + "\n})(typeof MathJax !== 'undefined' && "
              "typeof MathJax.typeset === 'function' ? MathJax : undefined);\n")
    return html, script


def show_questions(chapter: str) -> None:
    """Display ``chapter``'s questions (the last cell of each chapter)."""
    from IPython.display import HTML, Javascript, display

    langs = output_languages()
    if len(langs) == 1:
        html, script = quiz_html(chapter, langs[0])
        display(HTML(html))
        display(Javascript(script))
        return
    # the site's build: one output holding every language's quiz, each with its script
    versions = {}
    for lang in langs:
        html, script = quiz_html(chapter, lang)
        script = script.replace("</script", "<\\/script")
        versions[lang] = f'{html}<script type="text/javascript">{script}</script>'
    display(HTML(marked(versions)))
