"""The course's figure style: readable on the theme's light *and* dark pages.

Figures get an opaque white background with dark ink, so they read the same in
both modes (a transparent figure with black text vanishes on a dark page).
Colours come from a colour-blind-safe palette (Okabe & Ito).
"""

from __future__ import annotations

import io
from collections.abc import Mapping

import matplotlib as mpl

__all__ = ["COLORS", "use_course_style", "figure_bytes", "METHOD_COLORS"]

#: Okabe-Ito colour-blind-safe palette.
COLORS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
          "#000000"]

class _MethodColors(Mapping):
    """Each position method's colour, as registered in :data:`posenc.nn.POSITIONS`
    (looked up when asked, so a method registered later has its colour too)."""

    def _colors(self) -> dict[str, str]:
        from ..nn import POSITIONS  # on first use: the style itself needs no torch

        return {name: method.color for name, method in POSITIONS.items()}

    def __getitem__(self, name: str) -> str:
        return self._colors()[name]

    def __iter__(self):
        return iter(self._colors())

    def __len__(self) -> int:
        return len(self._colors())


#: One fixed colour per position method, so every chapter draws a method the same way.
METHOD_COLORS = _MethodColors()

COURSE_RC = {
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.transparent": False,
    "axes.edgecolor": "#333333",
    "axes.labelcolor": "#222222",
    "text.color": "#222222",
    "xtick.color": "#333333",
    "ytick.color": "#333333",
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": mpl.cycler(color=COLORS),
    "font.size": 10,
    "axes.titlesize": 11,
    "figure.dpi": 90,
    "savefig.dpi": 90,
    "savefig.bbox": "tight",
    "image.cmap": "RdBu_r",
}


def use_course_style() -> None:
    """Apply the course style to every later matplotlib figure (call once per notebook)."""
    mpl.rcParams.update(COURSE_RC)


def figure_bytes(fig, fmt: str = "png", dpi: float | None = None, colors: int = 256) -> bytes:
    """Render ``fig`` to small image bytes for a slider frame.

    ``fmt="png"`` gives a palette PNG of at most ``colors`` colours: exact for line
    plots and about a third of the size of a full-colour PNG for heatmaps (measured:
    a 6.4x3 in heatmap at 72 dpi, 65 KB -> 20 KB). ``fmt="webp"`` gives a lossy
    WebP (quality 80), smaller still but soft on thin lines.
    """
    from PIL import Image

    if fmt not in ("png", "webp"):
        raise ValueError(f"fmt must be 'png' or 'webp', got {fmt!r}")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    img = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    out = io.BytesIO()
    if fmt == "webp":
        img.save(out, format="webp", quality=80, method=4)
    else:
        img.quantize(colors, method=Image.Quantize.MEDIANCUT).save(out, format="png",
                                                                   optimize=True)
    return out.getvalue()
