"""``python -m posenc.experiments.extrapolation``: see :mod:`.cli`."""

from .cli import main

main()
