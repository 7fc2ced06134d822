"""Self-check questions: well formed, one right answer, numbers that agree with posenc."""

import math

import numpy as np
import pytest

from posenc.course.selfcheck import CHAPTERS, correct_answer, questions


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_three_to_six_well_formed_questions(chapter):
    qs = questions(chapter)
    assert 3 <= len(qs) <= 6
    for q in qs:
        assert q["type"] in ("multiple_choice", "numeric") and q["question"].strip()
        right = [a for a in q["answers"] if a.get("correct")]
        assert len(right) == 1 and all(a.get("feedback") for a in q["answers"])
        if q["type"] == "multiple_choice":
            texts = [a["answer"] for a in q["answers"]]
            assert len(texts) >= 3 and len(set(texts)) == len(texts)
        else:
            assert any(a.get("type") == "default" for a in q["answers"])


def test_answers_are_not_always_in_the_same_place():
    places = {[a["correct"] for a in q["answers"]].index(True)
              for c in CHAPTERS for q in questions(c) if q["type"] == "multiple_choice"}
    assert len(places) >= 3


def test_numeric_answers_match_the_formulas():
    # independent of posenc: the paper's formulas written out here
    q = questions("02_sinusoidal")[1]
    assert correct_answer(q) == pytest.approx(2 * math.pi * 10000 ** (32 / 64))
    slopes = questions("06_alibi")[0]
    assert correct_answer(slopes) == pytest.approx(2 ** (-8 / 8))
    assert correct_answer(questions("06_alibi")[1]) == pytest.approx(-0.5 * 3)
    assert correct_answer(questions("05_rope_scaling")[2]) == pytest.approx(
        round(0.1 * math.log(8) + 1, 2))
    theta = 10000.0 ** (-np.arange(0, 128, 2) / 128)
    assert correct_answer(questions("04_rope")[1]) == float((4096 * theta < 2 * math.pi).sum())
    assert correct_answer(questions("03_learned")[0]) == 512 * 768


def test_numeric_answers_of_the_later_chapters_match_the_formulas():
    # the chapters' formulas written out here, independent of posenc
    today, grid, biases = (questions(c) for c in
                           ("10_rope_today", "11_rope_2d_3d", "12_learned_biases"))
    theta = 500000.0 ** (-np.arange(0, 128, 2) / 128)
    assert correct_answer(today[0]) == float((4096 * theta < 2 * math.pi).sum())
    assert correct_answer(today[2]) == pytest.approx(round((0.4 / 1.4) ** 2, 3))
    assert correct_answer(grid[0]) == pytest.approx(round(100 ** (-12 / 32), 3))
    assert correct_answer(grid[2]) == 5 + max(4, 6)  # the image starts at 5 and uses max(h, w)
    assert correct_answer(biases[1]) == pytest.approx(round(-math.log(100), 2))
    fire = math.log(0.1 * 100 + 1) / math.log(0.1 * 512 + 1)  # below L: normalised by psi(L)
    assert correct_answer(biases[2]) == pytest.approx(round(fire, 2))
    assert correct_answer(biases[3]) == 2  # the stops at 3 and 9 both lie in keys 1..9


def test_every_chapter_of_the_book_has_questions():
    from pathlib import Path

    book = Path(__file__).resolve().parents[1] / "book"
    assert sorted(CHAPTERS) == sorted(p.stem for p in book.glob("[0-9][0-9]_*.ipynb"))


def test_chapter_8_questions_stay_right_after_a_reader_registers_a_method():
    # chapter 8 registers a method of its own before its questions are shown
    import torch

    from posenc.nn import PositionEncoding, register_position, unregister_position

    class FixedLogBias(PositionEncoding):  # no learned parameters, like the chapter's
        def __init__(self, spec):
            super().__init__()

        def score_bias(self, q, k):
            i, j = torch.arange(q.shape[-2]), torch.arange(k.shape[-2])
            return -torch.log1p((i[:, None] - j[None, :]).abs().to(q.dtype))

    before = correct_answer(questions("08_side_by_side")[0])
    register_position("free_test_method", FixedLogBias, label="a test", color="#999999",
                      replace=True)
    try:
        assert correct_answer(questions("08_side_by_side")[0]) == before
    finally:
        unregister_position("free_test_method")
    assert before == "sinusoidal, RoPE, ALiBi"  # the three formulas among the six methods


def test_unknown_chapter():
    with pytest.raises(ValueError, match="chapter must be one of"):
        questions("10_nope")



def test_numeric_answers_of_chapter_13_match_the_formulas():
    long_context = questions("13_long_context")
    assert correct_answer(long_context[0]) == pytest.approx(round(100 / 15, 1))
    assert correct_answer(long_context[2]) == pytest.approx(round((0.1 * math.log(4) + 1) ** 2,
                                                                  2))
    # the order-blind reader's best on the positional task: measured, not derived
    from posenc import retrieval
    from posenc.data import load_stdlib_corpus
    batch = retrieval.evaluation_batch(load_stdlib_corpus().heldout, 64, [5, 20, 40], 400,
                                       seed=3, num_pairs=4, task="positional")
    measured = 100 * retrieval.oracle_accuracy(batch, retrieval.order_blind_answer)
    assert "4 pairs" in long_context[4]["question"]
    assert abs(correct_answer(long_context[4]) - measured) < 4  # 1,200 sequences


# --- How the questions are drawn: contrast (WCAG AA) and no request to another origin ---

def _luminance(hex_colour):
    # WCAG 2.1 relative luminance, written out from the definition (sRGB, linearised)
    channels = [int(hex_colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a, b):
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_helper_matches_published_values():
    assert _contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert _contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # the AA grey


def test_quiz_colours_meet_wcag_aa():
    from posenc.course.selfcheck import QUIZ_COLORS as c

    text = c["--jq-text-color"]
    for bg in ("--jq-multiple-choice-bg", "--jq-numeric-bg", "--jq-correct-color",
               "--jq-incorrect-color"):  # question text; a chosen answer's white text
        assert _contrast(text, c[bg]) >= 4.5, bg
    card = "#f4f6f9"  # course.css: the card the answers and feedback sit on
    for fg in ("--jq-correct-color", "--jq-incorrect-color", "--jq-numeric-input-label"):
        assert _contrast(c[fg], card) >= 4.5, fg


def test_quiz_carries_its_styles_and_requests_nothing_from_another_origin():
    from posenc.course.selfcheck import quiz_html

    html, script = quiz_html("04_rope")
    assert "posenc-quiz" in html and ".posenc-quiz .Input-text" in html  # course.css is inside
    assert "#f4f6f9" in html  # the card colour the test above measures against
    # jupyterquiz would fetch MathJax from a CDN where the page's MathJax cannot typeset
    assert "script.src" not in script and "cdn." not in script
    assert script.startswith("(function (MathJax) {")
    assert html == quiz_html("04_rope")[0]  # same id every build


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_at_least_two_questions_test_understanding(chapter):
    # predict, explain or choose: multiple choice, every answer explained (not just "Not quite.")
    taught = [q for q in questions(chapter) if q.get("understanding")]
    assert len(taught) >= 2
    for q in taught:
        assert q["type"] == "multiple_choice" and len(q["answers"]) >= 3
        for a in q["answers"]:
            reason = a["feedback"].removeprefix("Correct.").removeprefix("Not quite.").strip()
            assert len(reason) > 20, a


def _answer(q, start):
    return next(a for a in q["answers"] if a["answer"].startswith(start))


def test_numbers_in_the_understanding_questions_match_the_formulas():
    # written out here from the papers, independent of posenc
    alibi = questions("06_alibi")
    slopes = [2 ** (-8 * h / 8) for h in range(1, 9)]  # Press et al.: 2^(-8h/n)
    assert correct_answer(alibi[3]).startswith(f"It shrinks from {-slopes[0] * 7:g} to "
                                               f"{-slopes[-1] * 7:.3f}")
    weights = [math.exp(-slopes[0] * r) for r in range(64)]  # bias-only softmax, head 1
    total, span = sum(weights), 0
    while sum(weights[:span]) < 0.9 * total:
        span += 1
    assert f"nearest {span} keys" in _answer(alibi[4], "Steep")["feedback"]

    def t5_bucket(d, max_distance, num_buckets=32):  # Raffel et al.'s bidirectional bucket
        half = num_buckets // 2
        base, exact = (half if d > 0 else 0), half // 2
        if abs(d) < exact:
            return base + abs(d)
        large = exact + int(math.log(abs(d) / exact) / math.log(max_distance / exact)
                            * (half - exact))
        return base + min(large, half - 1)

    t5 = _answer(questions("07_relative")[3], "Near")["feedback"]
    assert (f"share bucket {t5_bucket(500, 128)}; with 1024 they get {t5_bucket(500, 1024)} "
            f"and {t5_bucket(1000, 1024)}") in t5
    assert t5_bucket(500, 1024) != t5_bucket(1000, 1024)

    fire = _answer(questions("12_learned_biases")[4], "About 1")["feedback"]
    half = math.log(0.1 * 50 + 1) / math.log(0.1 * 100 + 1)  # Li et al.: psi(i-j)/psi(i), L=0
    assert f"gives {half:.3f}" in fire


def test_chapter_5_self_extend_question_matches_longlm_formula():
    # LongLM: group query position i // G + w - w // G, group key position j // G
    assert correct_answer(questions("05_rope_scaling")[3]) == 11 // 2 + 4 - 4 // 2 - 0 // 2


def test_numeric_answers_of_chapter_14_match_the_formulas():
    local_global = questions("14_local_global")
    assert correct_answer(local_global[0]) == 3 * (5 - 1)  # k layers x (window - 1)
    assert correct_answer(local_global[3]) == pytest.approx(round(1 + 0.1 * math.log(129), 2))
    assert correct_answer(local_global[4]) == pytest.approx(round(6 / 9, 2))
