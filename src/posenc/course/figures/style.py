"""The course's figure style: legible at the text column's width, sharp, readable in both themes.

Figures get an opaque white background with dark ink, so they read the same on the
theme's light and dark pages (a transparent figure with black text vanishes on a
dark page). Line colours come from a colour-blind-safe palette (Okabe & Ito);
colour maps are perceptually uniform and colour-blind safe: ``viridis``/``cividis``
for one-sided data and :data:`DIVERGING` (blue - white - orange, straight lines in
CIELAB) for signed data.

Sizes. The site shows a figure :data:`FIGURE_WIDTH` inches wide across the whole
text column (:data:`COLUMN_CSS_PX` CSS px at a 1280-px window), i.e. at
:data:`CSS_PX_PER_INCH` CSS px per inch, and draws it at :data:`DEVICE_PX_PER_CSS_PX`
device pixels per CSS pixel (:data:`FRAME_DPI`), so it is sharp on high-density
screens. Text of :data:`MIN_FONT_PT` points is then
``MIN_FONT_PT / 72 * CSS_PX_PER_INCH`` = 11.1 CSS px tall: no text in a figure is
smaller.
"""

from __future__ import annotations

import io

import matplotlib as mpl
import numpy as np
from matplotlib.colors import LinearSegmentedColormap

from ..._live import LiveMapping

__all__ = ["COLORS", "METHOD_COLORS", "DIVERGING", "use_course_style", "figure_bytes", "tight_bbox",
           "FIGURE_WIDTH", "COLUMN_CSS_PX", "CSS_PX_PER_INCH", "DEVICE_PX_PER_CSS_PX",
           "FRAME_DPI", "MIN_FONT_PT", "lab_to_srgb", "inline_png", "figure_alt", "ALT_KEY",
           "frame_geometry", "clipped_texts"]

#: Okabe-Ito colour-blind-safe palette.
COLORS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
          "#000000"]

def _catalogue():
    """:mod:`posenc.catalogue`, imported on first use: the style itself needs no torch."""
    from ... import catalogue

    return catalogue


#: One fixed colour per position method, so every chapter draws a method the same way: each
#: registered method's colour as the course's catalogue gives it
#: (:func:`posenc.catalogue.facts`), in the catalogue's order (a live view, so a method
#: registered later has its colour too).
METHOD_COLORS = LiveMapping(lambda: _catalogue().method_names(),
                            lambda name: _catalogue().facts(name).color)

#: Width (inches) of a figure that fills the text column.
FIGURE_WIDTH = 6.88
#: The book theme's text column at a 1280-px window (measured in Chromium), in CSS px.
COLUMN_CSS_PX = 688
#: CSS px per figure inch when a FIGURE_WIDTH-wide figure fills the column.
CSS_PX_PER_INCH = COLUMN_CSS_PX / FIGURE_WIDTH
#: Device px per CSS px the frames are drawn for (a high-density screen).
DEVICE_PX_PER_CSS_PX = 2
#: Dots per inch of every frame and static figure.
FRAME_DPI = CSS_PX_PER_INCH * DEVICE_PX_PER_CSS_PX
#: The smallest font in any figure: 8 pt = 11.1 CSS px at the column's width.
MIN_FONT_PT = 8.0

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
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "figure.figsize": (FIGURE_WIDTH, 3.2),
    # the notebook's inline figures are shown at CSS_PX_PER_INCH and saved at 2x ("retina")
    "figure.dpi": CSS_PX_PER_INCH,
    "savefig.dpi": "figure",
    "savefig.bbox": "tight",
    "image.cmap": "viridis",
}


# CIELAB (D65) -> sRGB, the standard formulas (CIE 15; IEC 61966-2-1).
_XYZ_TO_RGB = np.array([[3.2404542, -1.5371385, -0.4985314],
                        [-0.9692660, 1.8760108, 0.0415560],
                        [0.0556434, -0.2040259, 1.0572252]])
_WHITE = np.array([0.95047, 1.0, 1.08883])


def lab_to_srgb(lab) -> np.ndarray:
    """CIELAB (D65 white) to sRGB in ``[0, 1]``, clipped to the gamut. ``lab``: ``[..., 3]``."""
    lab = np.asarray(lab, dtype=np.float64)
    fy = (lab[..., 0] + 16) / 116
    f = np.stack([fy + lab[..., 1] / 500, fy, fy - lab[..., 2] / 200], axis=-1)
    xyz = np.where(f > 6 / 29, f ** 3, 3 * (6 / 29) ** 2 * (f - 4 / 29)) * _WHITE
    rgb = xyz @ _XYZ_TO_RGB.T
    srgb = np.where(rgb <= 0.0031308, 12.92 * rgb, 1.055 * np.abs(rgb) ** (1 / 2.4) - 0.055)
    return np.clip(srgb, 0.0, 1.0)


def _diverging(name: str, low_lab, mid_lab, high_lab, n: int = 256):
    """Straight lines in CIELAB from ``low`` to ``mid`` to ``high``: equal steps in value are
    equal perceptual steps (CIE76) on each side, and lightness is symmetric about ``mid``."""
    t = np.linspace(0.0, 1.0, n // 2)[:, None]
    low, mid, high = (np.asarray(c, dtype=np.float64) for c in (low_lab, mid_lab, high_lab))
    lab = np.concatenate([low + t * (mid - low), mid + t * (high - mid)])
    return LinearSegmentedColormap.from_list(name, lab_to_srgb(lab), N=n)


#: Signed data (a PE table, a bias): dark blue (-) to near-white (0) to dark orange (+).
#: Blue against orange stays distinct for protan, deutan and tritan colour vision.
DIVERGING = _diverging("posenc_diverging", (32, 8, -45), (97, 0, 0), (32, 30, 40))
if "posenc_diverging" not in mpl.colormaps:
    mpl.colormaps.register(DIVERGING)
    mpl.colormaps.register(DIVERGING.reversed())


def use_course_style() -> None:
    """Apply the course style to every later matplotlib figure (call once per notebook).

    In a notebook, inline figures are also shown the way the slider frames are: cropped
    to their content, drawn at 2 device px per CSS px of the text column whatever their
    size in inches, as a 256-colour palette PNG (:func:`inline_png`).
    """
    from .fonts import ensure_matplotlib_fonts

    ensure_matplotlib_fonts()
    mpl.rcParams.update(COURSE_RC)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the course's requirements
        return
    shell = get_ipython()
    if shell is not None:
        try:  # start the inline backend now: starting, it installs its own PNG formatter
            import matplotlib_inline.backend_inline  # noqa: F401
        except ImportError:  # pragma: no cover - ships with ipykernel
            pass
        _use_inline_png(shell)
        # the inline backend installs its own PNG formatter once it has started, which
        # can be after this cell: take the formatter back after every cell
        if _use_inline_png not in shell.events.callbacks["post_run_cell"]:
            shell.events.register("post_run_cell", _use_inline_png)


def _use_inline_png(shell=None, *_):
    from IPython import get_ipython
    from matplotlib.figure import Figure

    shell = shell if hasattr(shell, "display_formatter") else get_ipython()
    png = shell.display_formatter.formatters["image/png"]
    png.enabled = True
    png.for_type(Figure, inline_png)


def inline_png(fig):
    """``(png bytes, metadata)`` of a static figure for Jupyter's ``image/png`` output.

    The image is exactly ``2 * COLUMN_CSS_PX`` pixels wide and says it is
    ``COLUMN_CSS_PX`` wide, so on the site (where it fills the column) and in Jupyter
    it shows at 2 device px per CSS px. Its text is in the notebook's language
    (:mod:`posenc.course.i18n`); in the site's build, which draws both, the other
    languages' images ride in the metadata as :data:`TRANSLATED_KEY` ``{lang: base64 PNG}``
    for their editions' pages (``site/posenc_site/pages.py``).
    """
    import base64

    from ..i18n import output_languages, translated_figure

    first, *others = output_languages()
    with translated_figure(fig, first):
        data, metadata = _column_png(fig)
        alts = {first: figure_alt(fig, first)}
    for lang in others:
        with translated_figure(fig, lang):
            other, _ = _column_png(fig)
            alts[lang] = figure_alt(fig, lang)
        metadata.setdefault(TRANSLATED_KEY, {})[lang] = base64.b64encode(other).decode("ascii")
    metadata[ALT_KEY] = alts
    return data, metadata


#: Where a static figure's output metadata keeps its alt text, ``{lang: text}``.
ALT_KEY = "posenc_alt"


def figure_alt(fig, lang: str = "en") -> str:
    """A static figure's alt text, from what it says: its title (``suptitle``), else its
    panels' titles, else the first panel's axes ("loss against position"); the words are
    the figure's as drawn (in ``lang`` inside :func:`posenc.course.i18n.translated_figure`)."""
    def clean(text: str) -> str:
        return " ".join(text.split())

    sep = "；" if lang == "zh" else "; "
    title = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) else ""
    if title.strip():
        return clean(title)
    titles = [clean(ax.get_title()) for ax in fig.axes if ax.get_title().strip()]
    if titles:
        return sep.join(dict.fromkeys(titles))
    for ax in fig.axes:
        y, x = clean(ax.get_ylabel()), clean(ax.get_xlabel())
        if y and x:
            return f"{y}（横轴：{x}）" if lang == "zh" else f"{y} against {x}"
    return "图" if lang == "zh" else "figure"


#: Where a static figure's output metadata keeps its other languages' images.
TRANSLATED_KEY = "posenc_translated"


def _column_png(fig):
    from PIL import Image

    data = figure_bytes(fig, "png", width_px=DEVICE_PX_PER_CSS_PX * COLUMN_CSS_PX)
    with Image.open(io.BytesIO(data)) as img:
        width, height = img.size
    scale = DEVICE_PX_PER_CSS_PX
    return data, {"width": width // scale, "height": round(height / scale)}


def tight_bbox(fig, pad: float = 0.05):
    """The figure's drawn content (axes, labels, legends outside the axes), in inches."""
    if not hasattr(fig.canvas, "get_renderer"):  # a figure pyplot has closed
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    if fig.get_layout_engine() is not None:
        fig.draw_without_rendering()  # run the layout first: it moves what the box measures
    return fig.get_tightbbox(fig.canvas.get_renderer()).padded(pad)


def frame_geometry(fig, dpi: float | None = None, width_px: int | None = None, bbox=None):
    """The crop (inches) and resolution :func:`figure_bytes` saves ``fig`` at: ``(bbox, dpi)``.

    Without ``bbox``, the crop is the figure's content measured at the resolution it is
    saved at: text extents (and a constrained layout) shift with the resolution, so a box
    measured at another one can cut the longest label at the edge by a few pixels.
    """
    dpi = dpi or fig.dpi
    if bbox is not None:
        return bbox, (width_px / bbox.width if width_px is not None else dpi)
    for _ in range(2):  # measure at the resolution of the last estimate; it converges at once
        fig.set_dpi(dpi)
        bbox = tight_bbox(fig)
        if width_px is None:
            break
        dpi = width_px / bbox.width
    return bbox, dpi


def clipped_texts(fig, bbox, dpi: float, tolerance_px: float = 1.0) -> list[str]:
    """The visible texts of ``fig`` that reach outside ``bbox`` (inches) when it is drawn
    at ``dpi``: labels a saved image would cut."""
    from matplotlib.text import Text
    from matplotlib.transforms import Affine2D

    fig.set_dpi(dpi)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = bbox.transformed(Affine2D().scale(dpi))
    out = []
    for text in fig.findobj(Text):
        if not (text.get_visible() and text.get_text().strip()) or text.get_clip_on():
            continue
        e = text.get_window_extent(renderer)
        if (e.x0 < box.x0 - tolerance_px or e.x1 > box.x1 + tolerance_px
                or e.y0 < box.y0 - tolerance_px or e.y1 > box.y1 + tolerance_px):
            out.append(text.get_text())
    return out


def _rendered(fig, dpi: float, bbox):
    """``fig`` drawn at ``dpi`` and cropped to ``bbox`` (inches), as an RGB image.

    Raw pixels straight from Agg's buffer, the same pixels as a saved PNG (checked in
    tests/test_figures_legibility.py) at 0.6x the time: a PNG would be encoded only to be
    decoded again at once."""
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="rgba", dpi=dpi, bbox_inches=bbox)
    renderer = fig.canvas.renderer  # the one that drew the crop: its size is the image's
    size = (int(renderer.width), int(renderer.height))
    if buf.getbuffer().nbytes != 4 * size[0] * size[1]:  # pragma: no cover - a safety net
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches=bbox,
                    pil_kwargs={"compress_level": 0})
        return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    return Image.frombuffer("RGBA", size, buf.getbuffer(), "raw", "RGBA", 0, 1).convert("RGB")


def figure_bytes(fig, fmt: str = "png", dpi: float | None = None, colors: int = 256,
                 width_px: int | None = None, bbox=None) -> bytes:
    """Render ``fig`` to small image bytes for a slider frame (at ``fig.dpi`` by default).

    The image is cropped to ``bbox`` (inches; default: the figure's tight bounding box).
    With ``width_px``, the resolution is chosen so that the cropped image is exactly that
    many pixels wide (the width of the uncropped figure), so a figure that fills the
    text column carries exactly :data:`DEVICE_PX_PER_CSS_PX` pixels per CSS px.

    The image is reduced to a palette of at most ``colors`` colours (exact for line plots,
    16 levels for the heatmaps) and stored losslessly: ``fmt="png"`` as a palette PNG,
    ``fmt="webp"`` as lossless WebP, about 0.7x the PNG's bytes but 5x the encoding time
    (measured on the course's frames: a 1376-px heatmap 53 KB vs 74 KB, 0.06 s vs 0.009 s).
    """
    from PIL import Image

    if fmt not in ("png", "webp"):
        raise ValueError(f"fmt must be 'png' or 'webp', got {fmt!r}")
    bbox, dpi = frame_geometry(fig, dpi, width_px, bbox)
    img = _rendered(fig, dpi, bbox).quantize(colors, method=Image.Quantize.FASTOCTREE)
    out = io.BytesIO()
    if fmt == "webp":
        img.save(out, format="webp", lossless=True, method=1)
    else:
        img.save(out, format="png", compress_level=6)
    return out.getvalue()
