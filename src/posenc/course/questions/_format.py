"""How a self-check question is written down: jupyterquiz's dict, with the course's ``id``.

A question is the dict ``jupyterquiz`` displays (``question``, ``type``, ``answers``) plus
``id``, its stable name (:data:`ID`), and for some ``understanding`` and ``predict``.
jupyterquiz ignores keys it does not know; :func:`posenc.course.quiz.render` leaves ``id``
out of the page all the same, so that naming a question changes nothing a reader's browser
gets.

Where a multiple-choice question's right answer stands (:func:`place_of`) depends on its id
alone: the same place every build, whatever its texts say, and spread over every place across
the course (tests/test_selfcheck.py counts them). Its wrong answers keep the order they are
written in.
"""

from __future__ import annotations

import hashlib
import re

#: A question's id: its chapter module's name, a dot, and a slug of lowercase words and
#: digits joined by ``-`` (``"rope.pairs-under-one-turn"``).
ID = re.compile(r"[a-z][a-z0-9_]*\.[a-z0-9]+(?:-[a-z0-9]+)*")


def _checked_id(question_id: str) -> str:
    """``question_id`` if it has :data:`ID`'s form."""
    if not isinstance(question_id, str) or not ID.fullmatch(question_id):
        raise ValueError(f"a question id is '<chapter module>.<slug-of-words>', e.g. "
                         f"'rope.pairs-under-one-turn'; got {question_id!r}")
    return question_id


def place_of(question_id: str, count: int) -> int:
    """Where the right answer of question ``question_id`` stands among its ``count`` answers
    (1 = first): a place drawn from the id's sha256, each place equally likely, so that across
    the course the right answer is as often last as first and never where a reader would
    look for it. A text can change without moving its answer."""
    digest = hashlib.sha256(_checked_id(question_id).encode()).digest()
    return 1 + int.from_bytes(digest[:8], "big") % count


def mc(question_id: str, question: str, correct: str, wrong: dict[str, str], why: str, *,
       understanding: bool = False, predict: bool = False, place: int | None = None) -> dict:
    """A multiple-choice question: one correct answer (with ``why``), wrong ones with theirs.

    ``understanding``: the question asks the reader to predict, explain or choose (what a
    slider will do, why a method fails, which model uses what), not to recall or plug in;
    every chapter has at least two (tests/test_selfcheck.py).

    ``predict``: the question names one of the chapter's slider or live figures and asks what
    moving its slider will do; its feedback tells the reader to move it and what they will
    see. Every chapter with such a figure has one.

    ``place``: where the right answer stands, 1 for first (default: :func:`place_of`, from the
    id); the wrong ones fill the other places in their order."""
    _checked_id(question_id)
    answers = [{"answer": a, "correct": False, "feedback": f"Not quite. {fb}"}
               for a, fb in wrong.items()]
    count = len(answers) + 1
    if place is None:
        place = place_of(question_id, count)
    elif not (isinstance(place, int) and 1 <= place <= count):
        raise ValueError(f"place must be 1 .. {count} (the number of answers), got {place!r}")
    answers.insert(place - 1, {"answer": correct, "correct": True,
                               "feedback": f"Correct. {why}"})
    q = {"id": question_id, "question": question, "type": "multiple_choice",
         "answers": answers}
    if understanding:
        q["understanding"] = True  # jupyterquiz ignores keys it does not know
    if predict:
        q["predict"] = True
    return q


def number(question_id: str, question: str, value: float, tolerance: float, why: str,
           hint: str, *, predict: bool = False) -> dict:
    """A numeric question: any answer within ``tolerance`` of ``value`` is correct.
    ``predict``: as for :func:`mc`, a number the reader predicts, then reads off a figure."""
    q = {"id": _checked_id(question_id), "question": question, "type": "numeric",
         "answers": [
             {"type": "range", "range": [value - tolerance, value + tolerance],
              "correct": True, "feedback": f"Correct. {why}"},
             {"type": "default", "feedback": f"Not quite. {hint}"}]}
    if predict:
        q["predict"] = True
    return q


def correct_answer(question: dict):
    """The correct answer of one question: its text (multiple choice) or a number in range."""
    for answer in question["answers"]:
        if answer.get("correct"):
            if "range" in answer:
                low, high = answer["range"]
                return (low + high) / 2
            return answer["answer"]
    raise ValueError("question has no correct answer")
