"""What each 2025-26 model does with position, per kind of layer, with its source and date.

:func:`layer_kinds` groups a bundled model's layers (:func:`posenc.configs.read_bundled`)
into kinds that position the same way: the layer type and reach, the rope type, the base,
how many features of the head turn, the scaling factor, and a side path's own rotation
(DeepSeek-V3.2's indexer, :mod:`posenc.configs.sparse`). Every row carries its model's
release month and where its numbers were read (the bundled file's ``_found_in``).

:data:`UNBUNDLED` holds the rows of two sparse-attention models whose ``config.json`` the
course has no copy of (GLM-5, DeepSeek-V4-Flash), transcribed from the sources they name:
Hugging Face transformers 5.23.0's code for the family and the model's own announcement.
Their tests check every number against those classes. Numpy only.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial

import numpy as np

from .bundled import load_bundled, read_bundled
from .reader import LayerPositions
from .sparse import SIDE_ROPE

__all__ = ["LayerKindRow", "layer_kinds", "layer_table", "UNBUNDLED"]


@dataclass(frozen=True)
class LayerKindRow:
    """One kind of layer of one model. ``kind``: ``"full"``, ``"sliding <w>"``,
    ``"chunked <c>"``, ``"linear"`` (linear attention), or a description (DeepSeek-V4's
    compressed layers); ``layers`` of ``total`` layers are of it (``None`` where the source
    does not give the count); ``method``: the rope type or ``"none"``; ``base`` (``None``
    where none, or unknown); ``turning``: features of the head that rotate over the head's
    features, e.g. ``"64/128"`` (for latent attention, of the query-key head
    ``qk_nope_head_dim + qk_rope_head_dim``); ``factor``: the scaling factor (``None`` for none);
    ``side``: a side path's own positions (``""`` for none); ``date``: release month;
    ``source``: where the numbers were read; ``from_defaults``: built from a configuration
    class's defaults (its base and scaling are then the class's, not the checkpoint's)."""

    model: str
    date: str
    source: str
    kind: str
    layers: int | None
    total: int | None
    method: str
    base: float | None
    turning: str
    factor: float | None
    side: str
    from_defaults: bool


def _kind(layer: LayerPositions) -> str:
    if layer.layer_type == "linear_attention":
        return "linear"
    if layer.window is not None:
        return f"sliding {layer.window}"
    if layer.chunk is not None:
        return f"chunked {layer.chunk}"
    return "full"


def _turning(config: dict, layer: LayerPositions) -> str:
    if layer.rope is None:
        return "-"
    # p-RoPE keeps the whole head's pairs with the unrotated ones at frequency 0
    turning = 2 * int(np.count_nonzero(layer.frequencies))
    # latent attention: the query-key head is the content part and the rotary part
    return f"{turning}/{layer.head_dim + config.get('qk_nope_head_dim', 0)}"


def _side(config: dict, layer: LayerPositions) -> str:
    if not layer.indexer_rotary_dim:
        return ""
    rope = SIDE_ROPE[config["model_type"]]["indexer"]
    return (f"indexer: {rope.slot} {layer.indexer_rotary_dim} of {config['index_head_dim']}, "
            f"{rope.layout}, top-{config['index_topk']}")


def layer_kinds(name: str) -> tuple[LayerKindRow, ...]:
    """The bundled model ``name``'s layers grouped by kind, in order of first appearance."""
    config, model = load_bundled(name), read_bundled(name)
    rows: dict[tuple, list] = {}
    for layer in model.layers:
        factor = layer.rope.factor if layer.rope is not None else None
        key = (_kind(layer), layer.method, layer.theta, _turning(config, layer), factor or None,
               _side(config, layer))
        rows.setdefault(key, []).append(layer.index)
    return tuple(
        LayerKindRow(model=name, date=model.date, source=config["_found_in"], kind=kind,
                     layers=len(indices), total=len(model.layers), method=method,
                     base=theta if method != "none" else None, turning=turning, factor=factor,
                     side=side, from_defaults=config["_found_in"].startswith("transformers "))
        for (kind, method, theta, turning, factor, side), indices in rows.items())


def layer_table(rows: Iterable[LayerKindRow], width: int = 96) -> str:
    """``rows`` as chapter 15 prints them: per model, a line with its release month and
    source, then one line per kind (kind, layers, rope type, base, turning features,
    factor) and its side path below it. A base is ``-`` for a layer without RoPE and ``?``
    where only a configuration class's defaults (or no source) give it."""
    wrap = dict(width=width, break_on_hyphens=False, break_long_words=False)
    by_model: dict[str, list[LayerKindRow]] = {}
    for row in rows:
        by_model.setdefault(row.model, []).append(row)
    lines = []
    for model, kinds in by_model.items():
        lines.append(textwrap.fill(f"{model} ({kinds[0].date}), read from: {kinds[0].source}",
                                   subsequent_indent="    ", **wrap))
        for r in kinds:
            unknown = r.from_defaults or r.base is None
            base = "-" if r.method == "none" else "?" if unknown else f"{r.base:g}"
            count = "?" if r.layers is None else f"{r.layers}/{r.total}"
            factor = "-" if r.factor is None else f"×{r.factor:g}"
            lines.append(f"  {r.kind:40s} {count:>6} {r.method:12s} {base:>8} {r.turning:>7} "
                         f"{factor:>4}")
            if r.side:
                lines.append(textwrap.fill(r.side, initial_indent=" " * 6,
                                           subsequent_indent=" " * 6, **wrap))
    return "\n".join(lines)


_GLM_SOURCE = ("zai-org/GLM-5 README (commit 57fa4b0, 11 February 2026: GLM-5 integrates "
               "DSA); transformers 5.23.0 configuration / modular_glm_moe_dsa.py "
               "(GlmMoeDsaConfig defaults, GlmMoeDsaIndexer)")
_V4_SOURCE = ("DeepSeek-V4 model card (Hugging Face, April 2026: a preview, CSA and HCA); "
              "transformers 5.23.0 configuration_deepseek_v4.py (DeepseekV4Config defaults "
              "and comments) and modular_deepseek_v4.py")

# DeepSeek-V4-Flash's kinds share all but their reach, rotation and side path
_v4 = partial(LayerKindRow, model="deepseek-v4-flash", date="2026-04", source=_V4_SOURCE,
              layers=None, total=None, turning="64/512", from_defaults=False)

#: Rows of models with no bundled config (see the module docstring), by model.
UNBUNDLED: dict[str, tuple[LayerKindRow, ...]] = {
    "glm-5": (
        LayerKindRow(model="glm-5", date="2026-02", source=_GLM_SOURCE, kind="full", layers=78,
                     total=78, method="default", base=None, turning="64/256", factor=None,
                     side="indexer: first 64 of 128, interleaved, top-2048; each layer runs "
                          "it (full) or reuses the last full layer's top-k (shared)",
                     from_defaults=True),
    ),
    "deepseek-v4-flash": (
        _v4(kind="sliding 128", method="default", base=10000.0, factor=None, side=""),
        _v4(kind="CSA: sliding 128 + 1 entry per 4 tokens", method="yarn", base=160000.0,
            factor=16.0, side="entries rotated at their first token; indexer: last 64 of 128, "
                               "interleaved, top-512 entries; YaRN attention factor 1"),
        _v4(kind="HCA: sliding 128 + 1 entry per 128 tokens", method="yarn", base=160000.0,
            factor=16.0, side="entries rotated at their first token; every entry read; YaRN "
                               "attention factor 1"),
    ),
}
