"""Self-check questions: well formed, one right answer, numbers that agree with posenc."""

import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from posenc.course.selfcheck import (
    CHAPTERS,
    correct_answer,
    question,
    question_ids,
    questions,
    quiz_html,
    translated_questions,
)


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_five_to_eight_well_formed_questions(chapter):
    qs = questions(chapter)
    assert 5 <= len(qs) <= 8
    for q in qs:
        assert q["type"] in ("multiple_choice", "numeric") and q["question"].strip()
        right = [a for a in q["answers"] if a.get("correct")]
        assert len(right) == 1 and all(a.get("feedback") for a in q["answers"])
        if q["type"] == "multiple_choice":
            texts = [a["answer"] for a in q["answers"]]
            assert len(texts) >= 3 and len(set(texts)) == len(texts)
        else:
            assert any(a.get("type") == "default" for a in q["answers"])


def _multiple_choice():
    return [q for c in CHAPTERS for q in questions(c) if q["type"] == "multiple_choice"]


def _right_index(q):
    return [a["correct"] for a in q["answers"]].index(True)


def test_the_right_answer_is_in_every_place_and_in_none_too_often():
    # a reader who always picks the first (or the last) answer scores no better than chance
    places = Counter(_right_index(q) + 1 for q in _multiple_choice())
    assert all(places[place] >= 5 for place in (1, 2, 3, 4)), places
    assert max(places.values()) <= 0.4 * sum(places.values()), places


def test_the_right_answer_is_not_given_away_by_its_length():
    # a reader who picks the longest (or the shortest) answer scores little better than chance:
    # wrong answers are as specific as the right one, which is not padded or bare
    def strictly(q, better):
        lengths = [len(a["answer"]) for a in q["answers"]]
        right = _right_index(q)
        return all(better(lengths[right], n) for i, n in enumerate(lengths) if i != right)

    mc = _multiple_choice()
    longest = [q["id"] for q in mc if strictly(q, int.__gt__)]
    shortest = [q["id"] for q in mc if strictly(q, int.__lt__)]
    assert len(longest) <= 0.35 * len(mc), longest
    assert len(shortest) <= 0.35 * len(mc), shortest


def test_the_right_answers_place_comes_from_the_id_or_is_chosen():
    from posenc.course.questions._format import mc, place_of

    wrong = {"w1": "because 1", "w2": "because 2", "w3": "because 3"}
    q = mc("rope.some-question", "Q?", "right", wrong, "why")
    assert _right_index(q) + 1 == place_of("rope.some-question", 4)
    # the texts do not move it; the wrong answers keep their order around it
    other = mc("rope.some-question", "Other?", "another right", wrong, "why")
    assert _right_index(other) == _right_index(q)
    assert [a["answer"] for a in q["answers"] if not a["correct"]] == list(wrong)
    for place in (1, 2, 3, 4):
        assert _right_index(mc("rope.some-question", "Q?", "right", wrong, "why",
                               place=place)) == place - 1
    for place in (0, 5, 1.5):
        with pytest.raises(ValueError, match="place must be"):
            mc("rope.some-question", "Q?", "right", wrong, "why", place=place)
    # over many ids every place comes up
    assert {place_of(f"rope.question-{i}", 4) for i in range(40)} == {1, 2, 3, 4}


def test_numeric_answers_match_the_formulas():
    # independent of posenc: the paper's formulas written out here
    q = question("sinusoidal.pair-16-wavelength")
    assert correct_answer(q) == pytest.approx(2 * math.pi * 10000 ** (32 / 64))
    slopes = question("alibi.head-1-slope")
    assert correct_answer(slopes) == pytest.approx(2 ** (-8 / 8))
    assert correct_answer(question("alibi.query-5-key-2-bias")) == pytest.approx(-0.5 * 3)
    assert correct_answer(question("rope_scaling.yarn-attention-factor")) == pytest.approx(
        round(0.1 * math.log(8) + 1, 2))
    theta = 10000.0 ** (-np.arange(0, 128, 2) / 128)
    assert correct_answer(question("rope.pairs-under-one-turn")) == float(
        (4096 * theta < 2 * math.pi).sum())
    assert correct_answer(question("learned.table-parameter-count")) == 512 * 768


def test_numeric_answers_of_the_later_chapters_match_the_formulas():
    # the chapters' formulas written out here, independent of posenc
    def answer(question_id):
        return correct_answer(question(question_id))

    theta = 500000.0 ** (-np.arange(0, 128, 2) / 128)
    assert answer("rope_today.llama-3-slow-pairs") == float((4096 * theta < 2 * math.pi).sum())
    assert answer("rope_today.xpos-decay") == pytest.approx(round((0.4 / 1.4) ** 2, 3))
    assert answer("rope_2d_3d.axial-row-turn") == pytest.approx(round(100 ** (-12 / 32), 3))
    # the image starts at 5 and uses max(h, w)
    assert answer("rope_2d_3d.mrope-id-after-image") == 5 + max(4, 6)
    assert answer("learned_biases.kerple-log-bias") == pytest.approx(round(-math.log(100), 2))
    fire = math.log(0.1 * 100 + 1) / math.log(0.1 * 512 + 1)  # below L: normalised by psi(L)
    assert answer("learned_biases.fire-input-below-threshold") == pytest.approx(round(fire, 2))
    # the stops at 3 and 9 both lie in keys 1..9
    assert answer("learned_biases.cope-position") == 2


def test_every_chapter_of_the_book_has_questions():
    from pathlib import Path

    book = Path(__file__).resolve().parents[1] / "book"
    assert sorted(CHAPTERS) == sorted(p.stem for p in book.glob("[0-9][0-9]_*.ipynb"))


def test_chapter_8_questions_stay_right_after_a_reader_registers_a_method():
    # chapter 8 registers a method of its own before its questions are shown
    import torch

    from posenc.catalogue import describe_method, forget_method
    from posenc.nn import PositionEncoding, register_position, unregister_position

    class FixedLogBias(PositionEncoding):  # no learned parameters, like the chapter's
        def __init__(self, spec):
            super().__init__()

        def score_bias(self, q, k):
            i, j = torch.arange(q.shape[-2]), torch.arange(k.shape[-2])
            return -torch.log1p((i[:, None] - j[None, :]).abs().to(q.dtype))

    before = correct_answer(question("side_by_side.parameter-free-methods"))
    register_position("free_test_method", FixedLogBias, replace=True)
    describe_method("free_test_method", label="a test", color="#999999")
    try:
        assert correct_answer(question("side_by_side.parameter-free-methods")) == before
    finally:
        unregister_position("free_test_method")
        forget_method("free_test_method")
    assert before == "sinusoidal, RoPE, ALiBi"  # the three formulas among the six methods


def test_unknown_chapter():
    with pytest.raises(ValueError, match="chapter must be one of"):
        questions("10_nope")


# --- Every question has a stable id: its chapter's module, a dot, a slug ---

SLUG_ID = re.compile(r"[a-z][a-z0-9_]*\.[a-z0-9]+(-[a-z0-9]+)*")  # rope.pairs-under-one-turn


def _module_name(chapter):
    return chapter.split("_", 1)[1]  # 04_rope -> rope: a module name cannot start with a digit


def test_question_ids_are_unique_across_the_course_and_look_stable():
    ids = [q["id"] for c in CHAPTERS for q in questions(c)]
    assert len(ids) == len(set(ids)) and len(ids) >= 3 * len(CHAPTERS)
    for chapter in CHAPTERS:
        for question_id in question_ids(chapter):
            assert SLUG_ID.fullmatch(question_id) and len(question_id) <= 50, question_id
            assert question_id.split(".")[0] == _module_name(chapter), question_id
            assert not re.search(r"\d{2}_", question_id), question_id  # no chapter number


def test_a_malformed_id_is_refused():
    from posenc.course.questions._format import mc, number

    with pytest.raises(ValueError, match="question id"):
        mc("rope.Fastest Pair", "Q?", "yes", {"no": "because"}, "why")
    with pytest.raises(ValueError, match="question id"):
        number("pairs-under-one-turn", "Q?", 1.0, 0.5, "why", "hint")  # no module


def test_every_chapter_has_its_module_of_questions():
    import importlib
    import pkgutil

    import posenc.course.questions as package

    for chapter in CHAPTERS:
        module = importlib.import_module(f"posenc.course.questions.{_module_name(chapter)}")
        assert module.CHAPTER == chapter and CHAPTERS[chapter] is module.questions
    modules = {m.name for m in pkgutil.iter_modules(package.__path__)
               if not m.name.startswith("_")}
    assert modules == {_module_name(c) for c in CHAPTERS}  # and none without a chapter


def test_a_question_is_found_by_its_id_in_its_place():
    for chapter in CHAPTERS:
        assert [question(i) for i in question_ids(chapter)] == questions(chapter)


def test_an_unknown_id_names_the_chapter_and_its_ids():
    with pytest.raises(KeyError, match="04_rope") as raised:
        question("rope.fastest-pair-wavelength")
    for known in question_ids("04_rope"):
        assert known in str(raised.value)
    with pytest.raises(KeyError, match="rope_scaling") as raised:
        question("scaling.yarn-attention-factor")  # the module is rope_scaling
    assert all(_module_name(c) in str(raised.value) for c in CHAPTERS)


def test_ids_stay_out_of_the_page():
    # the id is the course's name for a question; the reader's page is as it was before ids
    html, script = quiz_html("05_rope_scaling", "zh")
    assert not any(i in html or i in script for i in question_ids("05_rope_scaling"))
    assert all(q["id"] for q in translated_questions("05_rope_scaling", "zh"))



def test_numeric_answers_of_chapter_13_match_the_formulas():
    assert correct_answer(question("long_context.content-chance")) == pytest.approx(
        round(100 / 15, 1))
    # the schedule question's premise: take three's rate had decayed by step 1,000
    from posenc.experiments.extrapolation import PRESETS, learning_rate_at
    take3 = PRESETS["take3"]
    assert learning_rate_at(999, take3) <= 0.11 * take3.learning_rate
    assert "1,000 steps" in question("long_context.decayed-rate-ranking")["question"]
    # the order-blind reader's best on the positional task: measured, not derived
    from posenc import retrieval
    from posenc.data import load_stdlib_corpus
    batch = retrieval.evaluation_batch(load_stdlib_corpus().heldout, 64, [5, 20, 40], 400,
                                       seed=3, num_pairs=4, task="positional")
    measured = 100 * retrieval.oracle_accuracy(batch, retrieval.order_blind_answer)
    order_blind = question("long_context.order-blind-best")
    assert "4 pairs" in order_blind["question"]
    assert abs(correct_answer(order_blind) - measured) < 4  # 1,200 sequences


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


def _right(q):
    return next(a for a in q["answers"] if a.get("correct"))


def test_numbers_in_the_understanding_questions_match_the_formulas():
    # written out here from the papers, independent of posenc
    slopes = [2 ** (-8 * h / 8) for h in range(1, 9)]  # Press et al.: 2^(-8h/n)
    assert all(b / a == 0.5 for a, b in zip(slopes[:-1], slopes[1:], strict=True))  # halves
    assert f"from {-slopes[0] * 7:g} to {-slopes[-1] * 7:.3f}" in _right(
        question("alibi.slider-farthest-key"))["feedback"]
    weights = [math.exp(-slopes[0] * r) for r in range(64)]  # bias-only softmax, head 1
    total, span = sum(weights), 0
    while sum(weights[:span]) < 0.9 * total:
        span += 1
    assert f"nearest {span} keys" in _right(question("alibi.why-many-slopes"))["feedback"]

    def t5_bucket(d, max_distance, num_buckets=32):  # Raffel et al.'s bidirectional bucket
        half = num_buckets // 2
        base, exact = (half if d > 0 else 0), half // 2
        if abs(d) < exact:
            return base + abs(d)
        large = exact + int(math.log(abs(d) / exact) / math.log(max_distance / exact)
                            * (half - exact))
        return base + min(large, half - 1)

    t5 = _right(question("relative.t5-max-distance"))["feedback"]
    assert (f"share bucket {t5_bucket(500, 128)}; with 1024 they get {t5_bucket(500, 1024)} "
            f"and {t5_bucket(1000, 1024)}") in t5
    assert t5_bucket(500, 1024) != t5_bucket(1000, 1024)

    fire = _answer(question("learned_biases.fire-without-threshold"), "About 1")["feedback"]
    half = math.log(0.1 * 50 + 1) / math.log(0.1 * 100 + 1)  # Li et al.: psi(i-j)/psi(i), L=0
    assert f"gives {half:.3f}" in fire


def test_chapter_5_self_extend_question_matches_longlm_formula():
    # LongLM: group query position i // G + w - w // G, group key position j // G
    assert correct_answer(question("rope_scaling.self-extend-distance")) == \
        11 // 2 + 4 - 4 // 2 - 0 // 2


def test_numeric_answers_of_chapter_14_match_the_formulas():
    def answer(question_id):
        return correct_answer(question(question_id))

    # k layers x (window - 1)
    assert answer("local_global.sliding-window-reach") == 3 * (5 - 1)
    assert answer("local_global.nope-temperature") == pytest.approx(
        round(1 + 0.1 * math.log(129), 2))
    assert answer("local_global.sink-weight") == pytest.approx(round(6 / 9, 2))


def test_numeric_answers_of_chapter_17_match_the_formulas():
    def answer(question_id):
        return correct_answer(question(question_id))

    # FoX: the gates of tokens 3, 4, 5 between key 2 and query 5
    assert answer("data_dependent.fox-bias-between") == pytest.approx(round(3 * math.log(0.5), 2))
    # stick-breaking: three keys each taking half of what is left
    assert answer("data_dependent.stick-left") == pytest.approx(1 / 2 + 1 / 4 + 1 / 8)


# --- Predict, then move the slider: every chapter with a slider or live figure has one ---

BOOK = Path(__file__).resolve().parents[1] / "book"
# a chapter's code cell that shows a slider figure (SLIDERS[...]) or a live one (LIVE[...])
SHOWS_A_SLIDER = re.compile(r"\b(?:SLIDERS|LIVE)\[[^\]]+\]\.show\(")


def _chapters_with_a_slider():
    """The chapters whose notebook shows a slider or live figure, read from the notebooks
    themselves (not from the question modules)."""
    found = set()
    for path in BOOK.glob("[0-9][0-9]_*.ipynb"):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        if any(SHOWS_A_SLIDER.search("".join(c["source"])) for c in cells
               if c["cell_type"] == "code"):
            found.add(path.stem)
    return found


def test_the_notebooks_show_slider_figures_where_expected():
    # the detection itself: chapter 2's live figures and chapter 1's slider, none in 8, 9, 13
    found = _chapters_with_a_slider()
    assert {"01_why_order", "02_sinusoidal", "04_rope", "06_alibi"} <= found
    assert not found & {"08_side_by_side", "09_extrapolation", "13_long_context"}


@pytest.mark.parametrize("chapter", sorted(_chapters_with_a_slider()))
def test_every_chapter_with_a_slider_asks_to_predict_then_move_it(chapter):
    predict = [q for q in questions(chapter) if q.get("predict")]
    assert predict, f"{chapter} shows a slider figure but no question asks to predict it"
    for q in predict:
        # it names the slider and asks what moving it will do; the feedback says to move it
        assert "slider" in q["question"] and "Predict" in q["question"], q["question"]
        right = _right(q)["feedback"]
        assert re.search(r"\b(?:Move|Pick)\b", right), right
        assert q.get("understanding") or q["type"] == "numeric", q["id"]


def test_no_question_cites_notes_the_reader_never_sees():
    # the course's source notes are no page of it: a wrong rule is "common in tutorials"
    pattern = re.compile(r"source notes|notes (?:this|the) course|the notes'", re.I)
    for chapter in CHAPTERS:
        for q in questions(chapter):
            texts = [q["question"], *(a.get("answer", "") for a in q["answers"]),
                     *(a["feedback"] for a in q["answers"])]
            assert not any(pattern.search(t) for t in texts), q["id"]


def test_predict_questions_are_marked_in_the_dict():
    from posenc.course.questions._format import mc, number

    marked = mc("rope.a-slider", "Q?", "yes", {"no": "because"}, "why", predict=True)
    assert marked["predict"] is True and "predict" not in mc("rope.b", "Q?", "y", {"n": "b"}, "w")
    assert number("rope.c", "Q?", 1.0, 0.5, "why", "hint", predict=True)["predict"] is True
