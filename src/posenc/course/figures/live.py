"""Card figures computed in the reader's browser: continuous sliders, a readout under the pointer.

A slider figure of :mod:`~posenc.course.figures.sliders` steps through frames Python drew in
advance. The figures here are drawn by the page's own script from their formulas
(``posenc/course/static/posenc-live.js``), so their sliders take every value the chapter allows
(any ``base``, any ``d_model``) and the figure shows the value under the mouse or the finger.

The same ES module serves both places: :class:`LiveFigure` is an `anywidget
<https://anywidget.dev>`_ whose ``_esm`` is that file, so Jupyter draws it with no kernel round
trip; the site's build copies the file into ``_static/`` and ``posenc-widgets.js`` renders the
embedded widget state with it (never running the ``_esm`` string of the state). Its formulas
are checked against posenc's numpy ones (``tests/test_live_figures.py``).

A chapter shows one with ``LIVE[key].show()``. The figure's words (title, axis labels,
readout) are English here and translated by :mod:`posenc.course.i18n` (``locale/zh.json``),
like every other figure's text: the widget carries each output language's words.
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass, field

import anywidget
import traitlets

from ..i18n import output_languages, translate
from .frame_contract import LIVE_MODULE, live_module_source

__all__ = ["Control", "LiveSpec", "LiveFigure", "LIVE", "MODULE_FILE", "module_source"]

#: The ES module's file name: package data of posenc.course, copied to the site's _static/.
MODULE_FILE = LIVE_MODULE


#: The ES module's text (what Jupyter runs and the site's build copies).
module_source = live_module_source


@dataclass(frozen=True)
class Control:
    """One slider: ``name`` (the value's key), ``low`` .. ``high`` on a ``"linear"`` or
    ``"log"`` track, values snapped to ``"int"``, ``"even"`` or ``"sig3"`` (three significant
    digits); ``max_from`` names another control whose value is this one's upper bound."""

    name: str
    low: float
    high: float
    initial: float
    scale: str = "linear"
    snap: str = "int"
    label: str = ""
    max_from: str | None = None

    def check(self, value, bound: float | None = None):
        """``value`` if this control accepts it, else a ``TypeError``/``ValueError`` naming the
        argument and the accepted range."""
        high = self.high if bound is None else min(self.high, bound)
        kind = {"int": "an integer", "even": "an even integer", "sig3": "a number"}[self.snap]
        accepted = f"{kind} in {_num(self.low)} .. {_num(high)}"
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{self.name} must be {accepted}, got {value!r}")
        if self.snap in ("int", "even") and value != int(value):
            raise TypeError(f"{self.name} must be {accepted}, got {value!r}")
        if not self.low <= value <= high:
            raise ValueError(f"{self.name} must be {accepted}, got {value!r}")
        if self.snap == "even" and int(value) % 2:
            raise ValueError(f"{self.name} must be {accepted}, got {value!r}")
        return int(value) if self.snap in ("int", "even") else float(value)

    def as_state(self) -> dict:
        state = {"name": self.name, "min": self.low, "max": self.high, "scale": self.scale,
                 "snap": self.snap}
        if self.max_from:
            state["max_from"] = self.max_from
        return state


def _num(x: float) -> str:
    return f"{x:g}"


#: Words every figure's readout may use (English; translated per output language).
COMMON_WORDS = {"hint": "Point at the figure (or touch it) to read a value."}


@dataclass(frozen=True)
class LiveSpec:
    """One live figure: its chapter, the controls and the English words it shows."""

    chapter: str
    kind: str
    controls: tuple[Control, ...]
    words: dict[str, str | dict[str, str]] = field(default_factory=dict)

    def show(self, **values) -> LiveFigure:
        """The figure's widget, at the controls' initial values or ``values``."""
        return LiveFigure(self.kind, **values)


_BASE = Control("base", 10.0, 1e6, 10000.0, scale="log", snap="sig3")
_D_MODEL = Control("d_model", 2, 1024, 64, scale="log", snap="even")
_SINUSOIDAL = (_D_MODEL, _BASE)
_NUM_HEADS = Control("num_heads", 1, 64, 12, label="heads")

#: The live figures, by key, in the order of the book.
LIVE: dict[str, LiveSpec] = {
    "pe_heatmap": LiveSpec("02_sinusoidal", "pe_heatmap", _SINUSOIDAL, {
        "title": "PE heatmap", "xlabel": "dimension (column 2i = sin, 2i+1 = cos)",
        "ylabel": "position p", "dimension": "dimension", "position": "position"}),
    "wavelengths": LiveSpec("02_sinusoidal", "wavelengths", _SINUSOIDAL, {
        "title": "Wavelengths", "xlabel": "column 2i of the pair",
        "ylabel": "wavelength (positions)", "seqLength": "sequence length", "pair": "pair",
        "column": "column", "wavelength": "wavelength",
        "slowPairs": "{slow}/{total} pairs > {length}"}),
    "dot_product": LiveSpec("02_sinusoidal", "dot_product", _SINUSOIDAL, {
        "title": "PE[p]·PE[p+k]", "xlabel": "distance k", "ylabel": "normalised dot product",
        "distance": "distance", "runningMean": "running mean"}),
    "alibi_slopes": LiveSpec("06_alibi", "alibi_slopes", (_NUM_HEADS,), {
        "title": "ALiBi slopes", "xlabel": "head h", "ylabel": "slope m", "head": "head",
        "slope": "slope", "geometric": "geometric, as for {c} heads",
        "oddTerms": "odd terms of the {c}-head sequence", "naive": "2^(−8h/n), not used",
        "naiveUsed": "2^(−8h/n), the rule itself (n a power of 2)"}),
    "alibi_bias": LiveSpec("06_alibi", "alibi_bias", (
        Control("num_heads", 1, 64, 8, label="heads"),
        Control("head", 1, 64, 1, max_from="num_heads"),
        Control("length", 2, 64, 8)), {
        "xlabel": "key j", "ylabel": "query i", "heads": "heads", "head": "head",
        "slope": "slope m", "length": "length", "query": "query", "key": "key", "bias": "bias",
        "masked": "masked"}),
    "rope_angles": LiveSpec("04_rope", "rope_angles", (
        Control("base", 100.0, 1e6, 10000.0, scale="log", snap="sig3"),
        Control("head_dim", 4, 1024, 128, scale="log", snap="even"),
        Control("position", 1, 131072, 1024, scale="log")), {
        "title": "RoPE angles", "xlabel": "pair i", "ylabel": "angle mod 2π (rad)",
        "pair": "pair", "turned": "≥ 1 full turn ({n} pairs)",
        "still": "< 1 turn: the angle is m·θᵢ itself ({n} pairs)", "turns": "{n} turns"}),
    "frequency_ratios": LiveSpec("05_rope_scaling", "frequency_ratios", (
        Control("factor", 1.25, 64.0, 8.0, scale="log", snap="sig3", label="scale factor s"),
        Control("base", 1000.0, 1e7, 10000.0, scale="log", snap="sig3")), {
        "title": "New frequency ÷ default", "xlabel": "pair index i (fast → slow)",
        "pair": "pair", "cut": "wavelength = L0",
        "methods": {"linear": "linear", "ntk": "ntk", "dynamic": "dynamic (at L = s·L0)",
                    "yarn": "yarn", "llama3": "llama3"}}),
}

_SLOT = re.compile(r"\{(\w+)\}")


def _translated(text: str, lang: str) -> str:
    """``text`` in ``lang``; a ``{name}`` slot stands for a number while it is translated
    (the table's phrases hold numbers: ``12/32 pairs > 128``)."""
    slots = _SLOT.findall(text)
    stand_ins = {name: str(9101 + 111 * k) for k, name in enumerate(slots)}
    out = translate(_SLOT.sub(lambda m: stand_ins[m.group(1)], text), lang)
    for name, number in stand_ins.items():
        out = out.replace(number, "{" + name + "}")
    return out


def figure_words(spec: LiveSpec, lang: str) -> dict:
    """Every string ``spec``'s figure shows, in ``lang``: its words, the hint and each
    slider's label (``base``, ``d_model`` stay Latin)."""
    words = {key: {k: _translated(t, lang) for k, t in text.items()} if isinstance(text, dict)
             else _translated(text, lang) for key, text in {**spec.words, **COMMON_WORDS}.items()}
    words["controls"] = {c.name: translate(c.label or c.name, lang) for c in spec.controls}
    return words


class LiveFigure(anywidget.AnyWidget):
    """A figure drawn by ``posenc-live.js`` in the browser (Jupyter or the site).

    ``LiveFigure("pe_heatmap", d_model=128, base=500)``: ``kind`` is a key of :data:`LIVE`;
    each keyword is one of its controls, checked against the control's range (``TypeError``
    for the wrong kind of value, ``ValueError`` outside the range, each naming the argument
    and what it accepts). ``values`` follows the sliders as the reader moves them.
    """

    _esm = traitlets.Unicode(module_source()).tag(sync=True)
    #: which file of the site's _static/ renders this model (posenc-widgets.js checks it)
    module = traitlets.Unicode(MODULE_FILE).tag(sync=True)
    kind = traitlets.Unicode().tag(sync=True)
    values = traitlets.Dict().tag(sync=True)
    controls = traitlets.List().tag(sync=True)
    text = traitlets.Dict().tag(sync=True)

    def __init__(self, kind: str, **values):
        if not isinstance(kind, str) or kind not in LIVE:
            raise ValueError(f"kind must be one of {', '.join(map(repr, LIVE))}; got {kind!r}")
        spec = LIVE[kind]
        names = [c.name for c in spec.controls]
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise TypeError(f"{kind!r} takes the values {', '.join(names)}; got {unknown[0]!r}")
        chosen: dict[str, float] = {}
        for control in spec.controls:
            bound = chosen.get(control.max_from) if control.max_from else None
            value = values.get(control.name, control.initial)
            if control.name not in values and bound is not None:
                value = min(value, bound)
            chosen[control.name] = control.check(value, bound)
        super().__init__(
            kind=kind, values=chosen,
            controls=[c.as_state() for c in spec.controls],
            text={lang: figure_words(spec, lang) for lang in output_languages()})

    @traitlets.validate("values")
    def _check_values(self, proposal):
        values = dict(proposal["value"])
        spec = LIVE.get(self.kind)
        if spec is None:  # set before kind during construction: checked in __init__
            return values
        for control in spec.controls:
            if control.name not in values:
                raise ValueError(f"values must give {control.name}")
            bound = values.get(control.max_from) if control.max_from else None
            values[control.name] = control.check(values[control.name], bound)
        return values
