"""How a self-check question is written down: jupyterquiz's dict, with the course's ``id``.

A question is the dict ``jupyterquiz`` displays (``question``, ``type``, ``answers``) plus
``id``, its stable name (:data:`ID`), and for some ``understanding``. jupyterquiz ignores
keys it does not know; :func:`posenc.course.quiz.render` leaves ``id`` out of the page all
the same, so that naming a question changes nothing a reader's browser gets.
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


def mc(question_id: str, question: str, correct: str, wrong: dict[str, str], why: str, *,
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
    q = {"id": _checked_id(question_id), "question": question, "type": "multiple_choice",
         "answers": answers}
    if understanding:
        q["understanding"] = True  # jupyterquiz ignores keys it does not know
    return q


def number(question_id: str, question: str, value: float, tolerance: float, why: str,
           hint: str) -> dict:
    """A numeric question: any answer within ``tolerance`` of ``value`` is correct."""
    return {"id": _checked_id(question_id), "question": question, "type": "numeric",
            "answers": [
                {"type": "range", "range": [value - tolerance, value + tolerance],
                 "correct": True, "feedback": f"Correct. {why}"},
                {"type": "default", "feedback": f"Not quite. {hint}"}]}


def correct_answer(question: dict):
    """The correct answer of one question: its text (multiple choice) or a number in range."""
    for answer in question["answers"]:
        if answer.get("correct"):
            if "range" in answer:
                low, high = answer["range"]
                return (low + high) / 2
            return answer["answer"]
    raise ValueError("question has no correct answer")
