"""The self-check questions at the end of each chapter: one module per chapter, each
question with a stable id.

Chapter ``04_rope``'s questions are in :mod:`posenc.course.questions.rope`: a module is
named after its chapter's notebook without the number (a module name cannot start with a
digit, and a chapter that moves keeps its topic), and says which chapter it ends
(``CHAPTER``). Its function ``questions()`` builds the chapter's questions in their order on
the page, computing every number in them from ``posenc`` (never typed in), so the questions
stay true when the library changes.

Each question has an id, its module's name, a dot and a slug (:data:`ID`):
``"rope.pairs-under-one-turn"``. A test or a translation addresses a question by its id
(:func:`question`), not by its place, so adding, dropping or reordering questions moves
no other question. An id stays once published; a question whose point changes gets a new
one.

Questions aim at understanding rather than recall of wording: predict what a change does,
or compute a value from the chapter's formula. A question is jupyterquiz's dict with its
``id`` (:mod:`posenc.course.questions._format`); :mod:`posenc.course.quiz` draws it, and
:mod:`posenc.course.selfcheck` shows a chapter's in the notebooks' languages.
"""

from __future__ import annotations

from ..._validation import check_choice
from . import (
    alibi,
    data_dependent,
    extrapolation,
    inference,
    learned,
    learned_biases,
    local_global,
    long_context,
    reading_configs,
    relative,
    rope,
    rope_2d_3d,
    rope_scaling,
    rope_today,
    side_by_side,
    sinusoidal,
    why_order,
)
from ._format import ID, correct_answer

__all__ = ["ID", "MODULES", "CHAPTERS", "questions", "question", "question_ids",
           "correct_answer"]

#: Chapter (notebook name without .ipynb) -> the module of its questions, in the book's order.
MODULES = {module.CHAPTER: module for module in (
    why_order, sinusoidal, learned, rope, rope_scaling, alibi, relative, side_by_side,
    extrapolation, rope_today, rope_2d_3d, learned_biases, long_context, local_global,
    reading_configs, inference, data_dependent)}

#: Chapter (notebook name without .ipynb) -> its question builder.
CHAPTERS = {chapter: module.questions for chapter, module in MODULES.items()}

# an id's first part (the module's name) -> its chapter
_CHAPTER_OF = {module.__name__.rpartition(".")[2]: chapter for chapter, module in MODULES.items()}


def questions(chapter: str) -> list[dict]:
    """The questions of ``chapter`` (e.g. ``"02_sinusoidal"``) in their order on the page:
    jupyterquiz's dicts, each with its ``id``."""
    chapter = check_choice("chapter", chapter, tuple(CHAPTERS))
    return CHAPTERS[chapter]()


def question_ids(chapter: str) -> tuple[str, ...]:
    """The ids of ``chapter``'s questions, in their order on the page."""
    return tuple(q["id"] for q in questions(chapter))


def question(question_id: str) -> dict:
    """The question with id ``question_id`` (e.g. ``"rope.pairs-under-one-turn"``).

    An unknown id raises :class:`KeyError` naming the chapter and the ids it has (or, for an
    unknown first part, the modules there are)."""
    module = question_id.partition(".")[0] if isinstance(question_id, str) else None
    if module not in _CHAPTER_OF:
        raise KeyError(f"no chapter's questions have the id {question_id!r}: an id starts "
                       f"with its chapter's module, one of {', '.join(_CHAPTER_OF)}")
    chapter = _CHAPTER_OF[module]
    found = {q["id"]: q for q in questions(chapter)}
    if question_id not in found:
        raise KeyError(f"chapter {chapter} has no question {question_id!r}; its questions: "
                       f"{', '.join(found)}")
    return found[question_id]
