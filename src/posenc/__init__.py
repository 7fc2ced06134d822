"""posenc: the library behind the course "Positional Encodings, Interactively".

Pure numpy for the maths the figures use (``sinusoidal``, ``rope``, ``scaling``,
``alibi``, ``relative``), torch modules in ``posenc.nn``, the tiny language model
and the extrapolation experiment in ``posenc.model`` and ``posenc.experiments``, and
the kernel-free slider figures in ``posenc.course.figures.sliders``.
"""

from . import alibi, relative, rope, scaling, sinusoidal

__version__ = "0.1.0"
__all__ = ["alibi", "relative", "rope", "scaling", "sinusoidal"]
