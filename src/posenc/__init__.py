"""posenc: the library behind the course "Positional Encodings, Interactively".

Pure numpy for the maths the figures use (``sinusoidal``, ``rope``, ``alibi``,
``relative``), torch modules in ``posenc.nn``, and the kernel-free slider
figures in ``posenc.sliders``.
"""

from . import alibi, relative, rope, sinusoidal

__version__ = "0.1.0"
__all__ = ["alibi", "relative", "rope", "sinusoidal"]
