"""Self-check questions of chapter 2, "Sinusoidal encoding" (``02_sinusoidal``).

Each has the id ``"sinusoidal.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

import math

import numpy as np

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "02_sinusoidal"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...sinusoidal import sinusoidal_dot_product, sinusoidal_wavelengths

    lam = sinusoidal_wavelengths(64, 10000.0)
    doubled = sinusoidal_wavelengths(64, 20000.0)
    same_start = math.isclose(lam[0], doubled[0])
    dots = sinusoidal_dot_product(np.array([5, 5]), 64)
    assert same_start and int(np.argmax(lam)) == len(lam) - 1 and dots[0] == dots[1]
    return [
        mc("sinusoidal.longest-wavelength-pair",
           "base = 10000, d_model = 64: which sin/cos pair has the longest wavelength?",
           f"The last pair, i = {len(lam) - 1}",
           {"The first pair, i = 0": f"Pair 0 has the shortest wavelength, 2π ≈ {lam[0]:.2f}.",
            "They are all equal": "The wavelengths grow geometrically with i.",
            f"The middle pair, i = {len(lam) // 2}": "The wavelength keeps growing up to the "
                                                     "last pair."},
           f"Its wavelength is 2π·base^((d−2)/d) ≈ {lam[-1]:,.0f} positions."),
        number("sinusoidal.pair-16-wavelength",
               "d_model = 64, base = 10000: what is the wavelength of pair i = 16 (columns 32 "
               "and 33), in positions? Round to a whole number and press Enter.",
               float(lam[16]), 0.5 + 1e-9,
               f"2π·10000^(32/64) = 2π·100 ≈ {lam[16]:.1f}.",
               "The wavelength of pair i is 2π·base^(2i/d_model)."),
        mc("sinusoidal.doubled-base-pair-0",
           "You double base from 10000 to 20000 (d_model = 64). What happens to the "
           "wavelength of pair 0?",
           "Nothing: it stays 2π",
           {"It doubles": "base enters as base^(2i/d), and for i = 0 that is base⁰ = 1.",
            "It halves": "A larger base never shortens a wavelength."},
           f"base^0 = 1 for every base: pair 0 always has wavelength 2π ≈ {doubled[0]:.2f}; "
           f"only the later pairs slow down (the last one to {doubled[-1]:,.0f}).",
           understanding=True),
        mc("sinusoidal.dot-product-depends-on",
           "PE[p]·PE[p + k] (the dot product of two sinusoidal encodings) depends on…",
           "only the distance k",
           {"p and k": "Expand cos(a − b): every p cancels, so any two pairs at the same "
                       "distance give the same value.",
            "only p": "The dot product of an encoding with itself is the same at every p; "
                      "it is the distance that matters."},
           "Each pair contributes cos(k·θᵢ); the position p cancels.",
           understanding=True),
    ]
