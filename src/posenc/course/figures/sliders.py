"""Slider figures that work with no kernel: on the static site and in Jupyter alike.

An ``interact`` slider needs a running kernel; on the published site it moves but
the figure stays put. Instead, :func:`slider_figure` draws the figure once for
every combination of slider values, puts the frames in nested
``ipywidgets.Stack`` s and links each slider's ``index`` to its Stacks'
``selected_index`` with ``jslink``. The link runs in the browser, so the page
switches frames with no Python behind it -- the same in live Jupyter.

A slider whose values are names, not numbers (chapter 1's methods, chapter 15's models,
KERPLE's ``"power"``/``"log"``), is a choice rather than a scale: it becomes
``ToggleButtons`` (:func:`control_kind`), so the reader sees the choices instead of guessing
them from a track. They have the same ``index`` trait as the ``SelectionSlider``, linked the
same way. In Jupyter every name is a button (a row that wraps; Tab, then Space or Enter, picks
one); the site renders at most :data:`MAX_BUTTONS` names as a row of radio buttons and more as
a ``<select>`` menu, which the widget asks for with the class
:data:`~posenc.course.figures.frame_contract.MENU_CLASS`. (Not a ``Dropdown`` in Jupyter:
JupyterLab takes a closed menu's arrow keys for moving between cells, ipywidgets issue 3912,
so no keyboard could change it there.)

Each frame is an ``<img>`` whose ``alt`` text names the values it shows
(``"PE heatmap: d_model=64, base=10000"``, each name as the slider's label
reads); the browser tests read it to check that the figure matches the slider.

Frames are drawn :data:`~posenc.course.figures.style.FIGURE_WIDTH` inches wide at
:data:`~posenc.course.figures.style.FRAME_DPI` (2 device px per CSS px when the figure
fills the site's text column) as a 256-colour palette image, stored losslessly as WebP
or PNG, whichever is smaller for the figure (WebP on every figure of the course so far).
In Jupyter every frame is inline (``data:`` URIs), so a notebook works anywhere;
the site's build (``site/posenc_site/pages.py``) moves all but the first frame of each
figure into content-hashed files that the page fetches on demand.

Draft frames: with the environment variable ``POSENC_DRAFT_FRAMES=1`` (what ``make nbval``
sets for nbval), every combination is still drawn -- ``draw`` runs for each, so a combination
that fails to draw still fails the cell -- but only the first frame is rasterised, and every
frame shows it (alt texts stay exact). Rasterising and encoding are three quarters of a
frame's time; the site's build (``make book``) always renders every frame for real.

Frame budget: at most :data:`MAX_FRAMES` per figure (each ~10-60 KB; ~0.2 s to draw
at build time). The budget of each figure in the course is listed in
``benchmarks/README.md``.

Example::

    slider_figure(draw_heatmap, {"d_model": [16, 32, 64], "base": [100, 10000]},
                  title="PE heatmap")

with ``draw_heatmap(fig, d_model, base)`` drawing into a fresh figure.
"""

from __future__ import annotations

import base64
import html
import itertools
from collections.abc import Callable, Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.transforms import Bbox

from ..environment import draft_frames
from ..i18n import marked, output_languages, translate, translated_figure
from .frame_contract import FRAME_CLASS, MENU_CLASS
from .style import COURSE_RC, CSS_PX_PER_INCH, FIGURE_WIDTH, FRAME_DPI, figure_bytes, tight_bbox

__all__ = ["slider_figure", "format_value", "log_steps", "control_kind", "MAX_BUTTONS"]

MAX_FRAMES = 144  # ~0.2 s a frame to draw: the site build stays within its 180 s
#: A choice between names shows as buttons up to this many names, as a menu beyond.
MAX_BUTTONS = 6


def control_kind(values: Sequence) -> str:
    """The control a slider figure gives these values: ``"slider"`` for numbers (a scale,
    whose track says where a value lies); for names, which have no order a track could show,
    ``"buttons"`` (at most :data:`MAX_BUTTONS`) or ``"menu"`` (more: buttons in Jupyter, a
    menu on the site)."""
    if not any(isinstance(v, str) for v in values):
        return "slider"
    return "buttons" if len(values) <= MAX_BUTTONS else "menu"


def format_value(value) -> str:
    """Short, exact label for a slider value: 10000 -> ``"10000"``, 0.5 -> ``"0.5"``."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def log_steps(low: float, high: float, per_decade: int = 1) -> list[float]:
    """Values ``low .. high`` evenly spaced on a log scale, ``per_decade`` per factor 10.

    ``log_steps(10, 1e6)`` gives ``[10, 100, ..., 1e6]``; with ``per_decade=2``
    the half-decades (rounded to 2 significant digits, e.g. 32, 320) join them.
    """
    import math

    if not (low > 0 and high > low):
        raise ValueError(f"need 0 < low < high, got low={low}, high={high}")
    n = round(math.log10(high / low) * per_decade)
    out = []
    for k in range(n + 1):
        v = low * 10 ** (k / per_decade)
        out.append(float(f"{v:.2g}") if k % per_decade else float(round(v)))
    return out


def slider_figure(draw: Callable, sliders: Mapping[str, Sequence], *, title: str,
                  initial: Mapping[str, object] | None = None,
                  figsize: tuple[float, float] = (FIGURE_WIDTH, 3.2),
                  dpi: float = FRAME_DPI, fmt: str = "auto",
                  labels: Mapping[str, str] | None = None):
    """Pre-render ``draw`` for every combination of ``sliders`` values; return a widget.

    ``draw(fig, **values)`` draws on a fresh ``figure(figsize=figsize)``; the slider
    names are its keyword arguments. ``initial`` picks the starting value of each
    slider (default: its middle value). ``labels`` gives a slider a friendlier
    description than its argument name. ``fmt`` is ``"png"``, ``"webp"`` or ``"auto"``
    (the default: whichever of the two gives the smaller first frame, for every frame of
    the figure); both store a 256-colour palette image losslessly. On the course's
    slider figures lossless WebP is 0.45-0.75x the palette PNG (``benchmarks/README.md``).
    ``figsize`` is in inches: a figure :data:`~posenc.course.figures.style.FIGURE_WIDTH`
    wide fills the site's text column.

    Returns an ``ipywidgets.VBox``: the sliders on top, then the frames; its
    ``links`` attribute lists the ``jslink`` s (slider index -> Stack).
    """
    import ipywidgets as widgets

    if not isinstance(title, str) or not title:
        raise ValueError("title must be a non-empty string (it is the frames' alt text)")
    if fmt not in ("auto", "png", "webp"):
        raise ValueError(f"fmt must be 'auto', 'png' or 'webp', got {fmt!r}")
    if not sliders:
        raise ValueError("sliders must name at least one parameter and its values")
    names = list(sliders)
    values = {name: list(sliders[name]) for name in names}
    for name, vals in values.items():
        if len(vals) < 2:
            raise ValueError(f"slider {name!r} needs at least 2 values, got {vals!r}")
    total = 1
    for vals in values.values():
        total *= len(vals)
    if total > MAX_FRAMES:
        raise ValueError(f"{total} frames is more than MAX_FRAMES={MAX_FRAMES}; use fewer values")
    initial = dict(initial or {})
    for name in initial:
        if name not in values:
            raise ValueError(f"initial names unknown slider {name!r}; sliders are {names}")
    labels = dict(labels or {})
    start = {name: values[name].index(initial[name]) if name in initial
             else (len(values[name]) - 1) // 2 for name in names}
    frames = {}
    scale = CSS_PX_PER_INCH / dpi  # CSS px per image px: the frame's size on the page
    combos = list(itertools.product(*(range(len(values[n])) for n in names)))

    langs = output_languages()
    with plt.rc_context(COURSE_RC):
        # one crop for every frame of a language (the first and last frames' content, with a
        # margin): frames keep one size, so the page does not jump when a slider moves
        boxes = {lang: [] for lang in langs}
        for combo in (combos[0], combos[-1]):
            fig = _drawn(draw, figsize, dpi, _params(names, values, combo))
            for lang in langs:
                with translated_figure(fig, lang):
                    boxes[lang].append(tight_bbox(fig, pad=0.1))
            plt.close(fig)
    job = (draw, figsize, dpi, fmt, {lang: Bbox.union(b) for lang, b in boxes.items()})
    images = _render(job, [_params(names, values, c) for c in combos])
    # each slider's label and its values' labels in each language, once: the frames' alt
    # text and the controls show them (translating also records a text with no Chinese)
    worded = {lang: {n: (translate(labels.get(n, n), lang),
                         [translate(format_value(v), lang) for v in values[n]])
                     for n in names} for lang in langs}
    titles = {lang: translate(title, lang) for lang in langs}
    for combo, image in zip(combos, images, strict=True):
        frames[combo] = widgets.HTML(marked({
            lang: _frame_html(image[lang], scale, titles[lang], {
                worded[lang][n][0]: worded[lang][n][1][i]
                for n, i in zip(names, combo, strict=True)}, lang)
            for lang in langs}))

    # the site's build draws in both languages and shows the English labels; its Chinese
    # pages translate them (site/posenc_site/pages.py)
    shown = worded[langs[0] if len(langs) == 1 else "en"]
    controls = [_control(control_kind(values[n]), shown[n][0], shown[n][1], start[n])
                for n in names]

    def build(level: int, prefix: tuple):
        """Stack for slider ``level``; its children are the next level's Stacks."""
        if level == len(names):
            return frames[prefix]
        children = [build(level + 1, prefix + (i,)) for i in range(len(values[names[level]]))]
        stack = widgets.Stack(children=children, selected_index=start[names[level]])
        links.append(widgets.jslink((controls[level], "index"), (stack, "selected_index")))
        return stack

    links = []
    box = widgets.VBox([*controls, build(0, ())], layout=widgets.Layout(align_items="flex-start"))
    box.links = links
    return box


def _control(kind: str, label: str, options: list[str], index: int):
    """The widget that picks one of ``options`` (:func:`control_kind`): both have the
    ``index`` trait the frames' Stacks are linked to."""
    import ipywidgets as widgets

    if kind in ("buttons", "menu"):
        return widgets.ToggleButtons(
            options=options, index=index, description=label,
            style={"description_width": "initial", "button_width": "auto"},
            _dom_classes=(MENU_CLASS,) if kind == "menu" else ())
    return widgets.SelectionSlider(
        options=options, index=index, description=label, continuous_update=True,
        style={"description_width": "initial"},
        layout=widgets.Layout(width="min(100%, 32em)"))


def _frame_html(image: bytes, scale: float, title: str, shown: dict, lang: str = "en") -> str:
    """One frame: an ``<img>`` whose alt text names each slider as it is labelled on the page,
    with the value it shows as the slider shows it (``shown``: label -> value label), in
    ``lang``'s punctuation."""
    width, height = _image_size(image)
    mime = "webp" if image[8:12] == b"WEBP" else "png"
    data = base64.b64encode(image).decode("ascii")
    colon, comma = ("：", "，") if lang == "zh" else (": ", ", ")
    alt = html.escape(f"{title}{colon}" + comma.join(
        f"{label}={value}" for label, value in shown.items()), quote=True)
    return (f'<img class="{FRAME_CLASS}" src="data:image/{mime};base64,{data}" '
            f'alt="{alt}" title="{alt}" width="{round(width * scale)}" '
            f'height="{round(height * scale)}" style="max-width:100%;height:auto">')


def _image_size(data: bytes) -> tuple[int, int]:
    """Pixel ``(width, height)`` of encoded image bytes."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        return img.size


def _params(names, values, combo) -> dict:
    return {n: values[n][i] for n, i in zip(names, combo, strict=True)}


def _drawn(draw, figsize, dpi, params):
    fig = plt.figure(figsize=figsize, dpi=dpi)
    draw(fig, **params)
    return fig


def _render(job, params_list) -> list[dict[str, bytes]]:
    """The frame of each parameter set in each language, in order (drawing two at once in
    worker processes was tried: on this project's 2 busy cores, spawning them cost what
    they saved). A frame's languages share its drawing; only the text differs."""
    draw, figsize, dpi, fmt, bboxes = job
    draft = draft_frames()
    width_px = round(figsize[0] * dpi)
    out = []
    with plt.rc_context(COURSE_RC):
        for params in params_list:
            fig = _drawn(draw, figsize, dpi, params)
            if draft and out:  # drawn, not rasterised: the first frame stands in
                out.append(out[0])
                plt.close(fig)
                continue
            if fmt == "auto":  # the first frame decides for the figure
                tries = {f: figure_bytes(fig, f, dpi, width_px=width_px, bbox=bboxes["en"]
                                         if "en" in bboxes else next(iter(bboxes.values())))
                         for f in ("webp", "png")}
                fmt = min(tries, key=lambda f: len(tries[f]))
            frame = {}
            for lang, bbox in bboxes.items():
                with translated_figure(fig, lang):
                    frame[lang] = figure_bytes(fig, fmt, dpi, width_px=width_px, bbox=bbox)
            out.append(frame)
            plt.close(fig)
    return out
