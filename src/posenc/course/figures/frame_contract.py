"""The slider-frame contract: the names that three pieces of the course must agree on.

* :mod:`posenc.course.figures.sliders` writes a slider figure as ipywidgets models whose
  frames are ``<img class="posenc-frame">`` inside ``HTML`` models;
* ``site/posenc_site/pages.py`` (the Sphinx extension) finds those frames in the page's widget
  state and moves all but the first into ``posenc-frames/``, leaving a ``data-src``;
* ``site/static/posenc-widgets.js`` renders exactly these models on the static site and
  fetches a frame from its ``data-src``.

Each name is written here once; the Python imports it, and ``tests/test_frame_contract.py``
checks that the JavaScript spells every one of them the same way.
"""

from __future__ import annotations

__all__ = ["LIVE_MODEL", "LIVE_MODULE", "live_module_source", "FRAME_CLASS", "FRAME_SRC_ATTR",
           "FRAME_SRC_DATASET", "FRAMES_DIR", "LINK_MODELS", "CONTROL_MODELS", "MENU_CLASS",
           "MODEL_PREFIX", "MODELS", "STATE_MIME", "VIEW_MIME", "WIDGET_MODELS"]

#: The class of a frame's ``<img>``.
FRAME_CLASS = "posenc-frame"
#: The attribute that holds a frame's file once the site build has moved it out of the page,
#: and its name in JavaScript's ``img.dataset``.
FRAME_SRC_ATTR = "data-src"
FRAME_SRC_DATASET = "src"
#: The folder, beside each page, that holds its frame files.
FRAMES_DIR = "posenc-frames"
#: The MIME types of the ``<script>`` tags that carry the widget state and each widget view.
STATE_MIME = "application/vnd.jupyter.widget-state+json"
VIEW_MIME = "application/vnd.jupyter.widget-view+json"
#: How one model refers to another in the widget state.
MODEL_PREFIX = "IPY_MODEL_"
#: The controls of a slider figure: a slider over numbers, buttons over names
#: (:func:`posenc.course.figures.sliders.control_kind`); each has the ``index`` trait.
CONTROL_MODELS = ("SelectionSliderModel", "ToggleButtonsModel")
#: The class of a ``ToggleButtons`` with more names than a row of buttons should hold: the
#: site shows it as a ``<select>`` menu of that class (Jupyter keeps the buttons).
MENU_CLASS = "posenc-menu"
#: The models a slider figure is made of (the JavaScript renders these and no others).
WIDGET_MODELS = ("VBoxModel", "HBoxModel", "BoxModel", *CONTROL_MODELS, "StackModel",
                 "HTMLModel")
#: The links that move a Stack when its slider moves (``jslink``), and the traits they link.
LINK_MODELS = ("LinkModel", "DirectionalLinkModel")
LINKED_TRAITS = ("index", "selected_index")
MODELS = WIDGET_MODELS + LINK_MODELS
#: A live figure (:mod:`posenc.course.figures.live`): an anywidget model, and the one ES module
#: file (package data of posenc.course under static/, copied to the site's _static/) that
#: renders it; the model names that file in its ``module`` trait.
LIVE_MODEL = "AnyModel"
LIVE_MODULE = "posenc-live.js"


def live_module_source() -> str:
    """The text of :data:`LIVE_MODULE` as installed with posenc (what Jupyter runs as the
    anywidget's module and what the site's build copies into ``_static/``)."""
    from importlib import resources

    return resources.files("posenc.course").joinpath("static", LIVE_MODULE).read_text("utf-8")
