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
    # the live figures' sliders: the wavelengths above a 128-position sequence, d_model 64
    # and 512; the normalised dot product past k = 30 at base 10 and 10000 (d_model 64)
    wide = sinusoidal_wavelengths(512, 10000.0)
    slow, slow_wide = int((lam > 128).sum()), int((wide > 128).sum())
    assert abs(slow / len(lam) - slow_wide / len(wide)) < 0.05 and slow_wide > 4 * slow
    far = np.arange(30, 1024)
    dot_10 = sinusoidal_dot_product(far, 64, base=10.0) / 32
    dot_10000 = sinusoidal_dot_product(far, 64, base=10000.0) / 32
    assert abs(dot_10.mean()) < 0.01 < 0.2 < dot_10000.mean()
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
           {"It doubles, like every pair's wavelength":
                "base enters as base^(2i/d), and for i = 0 that is base⁰ = 1; only the later "
                "pairs stretch.",
            "It grows a little, less than the last pair's":
                "It does not grow at all: pair 0 turns one radian per position whatever the "
                "base. The stretch grows with i, up to the last pair's.",
            "It halves": "A larger base never shortens a wavelength."},
           f"base^0 = 1 for every base: pair 0 always has wavelength 2π ≈ {doubled[0]:.2f}; "
           f"only the later pairs slow down (the last one to {doubled[-1]:,.0f}).",
           understanding=True),
        mc("sinusoidal.wavelength-slider",
           f"The live Wavelengths figure counts the pairs above its dashed line, the "
           f"128-position sequence: at d_model = 64 and base 10000 it reads {slow}/{len(lam)}. "
           f"Predict the reading after you move the d_model slider to 512.",
           f"About the same share of the pairs, now of {len(wide)}",
           {f"The same {slow} pairs, now out of {len(wide)}: the base alone sets the slow ones":
                "The base sets the range of the line, 2π to just under 2π·base; d_model only "
                "sets how many pairs sample it, so the count grows with the pairs.",
            f"All {len(wide)}: a wider model turns every pair slower":
                "Pair 0 still turns one radian per position, with wavelength 2π, whatever "
                "d_model is: the fast end of the line stays where it is.",
            f"Fewer than {slow}: the extra pairs crowd into the fast end":
                "The extra pairs are spread evenly along the same line, on a log scale, not "
                "piled at one end."},
           f"Move the d_model slider to 512: the figure reads {slow_wide}/{len(wide)}, about "
           f"the same share as {slow}/{len(lam)}. The line spans the same wavelengths; "
           f"d_model only samples it more densely.",
           understanding=True, predict=True),
        mc("sinusoidal.dot-product-depends-on",
           "PE[p]·PE[p + k] (the dot product of two sinusoidal encodings) depends on…",
           "only the distance k",
           {"both p and k, since every row holds sin(p·ωᵢ)":
                "Expand cos(a − b): every p cancels, so any two pairs at the same distance "
                "give the same value.",
            "k alone, and it falls steadily as k grows":
                "It depends on k alone, but it does not fall steadily: a sum of cosines "
                "oscillates, and only its running mean decays.",
            "only p": "The dot product of an encoding with itself is the same at every p; "
                      "it is the distance that matters."},
           "Each pair contributes cos(k·ωᵢ); the position p cancels.",
           understanding=True),
        mc("sinusoidal.dot-product-base-slider",
           "In the live figure PE[p]·PE[p+k] (d_model = 64), you move the base slider from "
           "10000 down to 10. Predict the curve past the first few dozen distances.",
           "It jitters around 0, with no downward trend left",
           {"It decays more slowly: a smaller base keeps the curve high for longer":
                "A smaller base makes every pair turn faster, so the cosines fall out of step "
                "sooner, not later. Move the slider to 10 and watch the curve drop within a "
                "few positions.",
            "It falls smoothly to 0 and stays there":
                "A sum of cosines never settles: past the first drop it keeps swinging up "
                "and down around 0. Move the slider and look at the solid curve, not only "
                "the dashed mean.",
            "Nothing changes: the dot product depends on k, not on the base":
                "It depends on k alone, but through cos(k·ωᵢ), and ωᵢ = base^(−2i/d): the "
                "base sets how fast each cosine turns."},
           f"Move the slider to 10: past k = 30 the normalised dot product swings between "
           f"{dot_10.min():.2f} and {dot_10.max():.2f} around a mean of {dot_10.mean():.2f}, "
           f"where at base 10000 its mean is {dot_10000.mean():.2f}. Every pair has turned "
           f"many times, so the cosines cancel: no notion of far and farther is left.",
           understanding=True, predict=True),
    ]
