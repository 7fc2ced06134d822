"""Experiments that train small models; each is a module runnable with ``python -m``.

* :mod:`posenc.experiments.extrapolation` -- "train short, test long" (Press et al., 2022):
  train a tiny byte-level LM per position encoding at one length, evaluate at 1x-8x.
"""
