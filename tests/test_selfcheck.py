"""Self-check questions: well formed, one right answer, numbers that agree with posenc."""

import math

import numpy as np
import pytest

from posenc.course.selfcheck import CHAPTERS, correct_answer, questions


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_three_to_five_well_formed_questions(chapter):
    qs = questions(chapter)
    assert 3 <= len(qs) <= 5
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


def test_numeric_answers_of_chapter_14_match_the_formulas():
    local_global = questions("14_local_global")
    assert correct_answer(local_global[0]) == 3 * (5 - 1)  # k layers x (window - 1)
    assert correct_answer(local_global[3]) == pytest.approx(round(1 + 0.1 * math.log(129), 2))
    assert correct_answer(local_global[4]) == pytest.approx(round(6 / 9, 2))
