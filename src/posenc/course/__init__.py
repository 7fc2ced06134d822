"""The course layer: what the chapters show, kept apart from the library.

``posenc`` itself (the maths, ``posenc.nn``, the model, the data, the retrieval task and
the experiments) needs numpy and torch only. This package holds what only the course
needs, with its own dependencies (matplotlib, ipywidgets, jupyterquiz; the ``course``
extra, which ``lab`` includes):

* :mod:`posenc.course.figures` -- every drawing function and the kernel-free slider figures;
* :mod:`posenc.course.selfcheck` -- each chapter's self-check questions, as the notebooks show
  them: the questions in :mod:`posenc.course.questions` (one module per chapter, every
  question with a stable id), drawn by :mod:`posenc.course.quiz`;
* :mod:`posenc.course.results` -- the committed experiment results the chapters load.

Nothing in core ``posenc`` imports from here.
"""
