"""Any model's layers, folded by kind: the table ``python -m posenc.configs`` prints.

:func:`kind_rows` groups the layers of a :class:`~posenc.configs.ModelPositions` (any
config, not only a bundled one) into kinds that handle position alike, and gives each kind
what an engineer asks of it first:

* ``layers``: which layers, folded (``"3, 7, ..., 47 (every 4th)"``, ``"0-2, 4-6"``);
* ``layer_type``, ``rotates``, ``window`` (or ``chunk``), ``base``, ``scaling`` (the rope
  type and factor), ``layout``;
* ``rotary_pairs`` of ``head_pairs``: the pairs that turn;
* ``slowest_wavelength``: ``2 pi / theta_min`` of the shipped frequencies, in tokens;
* ``under_one_turn``: the pairs that turned less than once within the trained length
  ``L0`` at their unscaled frequencies (:func:`posenc.configs.angles.turns`), the ones
  whose angles beyond ``L0`` are unseen; ``trained_length``: that ``L0``;
* ``attention_factor``: the multiplier on cos and sin.

:func:`kind_table` writes them as text; :func:`kind_records` as JSON-ready dicts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .angles import reach, trained_length, turns, unscaled_frequencies
from .reader import LayerPositions, ModelPositions

__all__ = ["KindRow", "fold_indices", "kind_rows", "kind_table", "kind_records"]


@dataclass(frozen=True)
class KindRow:
    """One kind of layer of a model (module docstring); numbers are ``None`` where the
    kind does not rotate."""

    layers: str
    count: int
    layer_type: str
    rotates: bool
    window: int | None
    chunk: int | None
    base: float | None
    scaling: str
    layout: str | None
    rotary_pairs: int
    head_pairs: int
    slowest_wavelength: float | None
    trained_length: int | None
    under_one_turn: int | None
    attention_factor: float


def _every(step: int) -> str:
    if step == 2:
        return "every other"
    suffix = "th" if 10 <= step % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(step % 10, "th")
    return f"every {step}{suffix}"


def fold_indices(indices, total: int | None = None) -> str:
    """0-based layer indices as a short text: ``"0-47"``, ``"3, 7, ..., 47 (every 4th)"``
    for an arithmetic run of four or more, ``"all but 3, 7, ..., 47 (every 4th)"`` where
    the other layers of ``total`` are one, else comma-separated ranges (``"0-2, 4-6"``)."""
    idx = sorted({int(i) for i in indices})
    if total is not None and idx:
        rest = sorted(set(range(total)) - set(idx))
        folded, others = fold_indices(idx), fold_indices(rest)
        if len(rest) >= 4 and "..." in others and "..." not in folded and "," in folded:
            return f"all but {others}"
    if not idx:
        return "-"
    steps = {b - a for a, b in zip(idx, idx[1:], strict=False)}
    if steps <= {1}:
        return f"{idx[0]}-{idx[-1]}" if len(idx) > 1 else str(idx[0])
    if len(idx) >= 4 and len(steps) == 1:
        return f"{idx[0]}, {idx[1]}, ..., {idx[-1]} ({_every(steps.pop())})"
    runs, start = [], idx[0]
    for a, b in zip(idx, [*idx[1:], None], strict=True):
        if b != a + 1:
            runs.append(f"{start}-{a}" if a > start else str(start))
            start = b
    return ", ".join(runs)


def _key(layer: LayerPositions) -> tuple:
    freqs = None if layer.frequencies is None else layer.frequencies.tobytes()
    return (layer.layer_type, layer.method, layer.window, layer.chunk, layer.theta,
            layer.rotary_dim, layer.head_dim, layer.attention_factor, layer.layout, freqs)


def _scaling(layer: LayerPositions) -> str:
    if layer.method in ("none", "alibi") or layer.rope is None:
        return layer.method
    if layer.method == "ntk_alpha":
        return f"ntk_alpha alpha={dict(layer.rope.options)['alpha']:g}"
    factor = layer.rope.factor
    return layer.method if not factor or layer.method == "default" else \
        f"{layer.method} x{factor:g}"


def kind_rows(model: ModelPositions) -> tuple[KindRow, ...]:
    """The kinds of ``model``'s layers, in order of first appearance (module docstring)."""
    if not isinstance(model, ModelPositions):
        raise TypeError(f"model must be a ModelPositions (read_config's result), got "
                        f"{type(model).__name__}")
    groups: dict[tuple, list[LayerPositions]] = {}
    for layer in model.layers:
        groups.setdefault(_key(layer), []).append(layer)
    rows = []
    for layers in groups.values():
        first = layers[0]
        rotates = first.rope is not None
        wavelength = length0 = under = None
        if rotates:
            nonzero = first.frequencies[first.frequencies > 0]
            wavelength = float(2 * np.pi / nonzero.min())
            try:
                length0 = trained_length(model, first)
            except ValueError:  # no max_position_embeddings: L0 unknown
                length0 = None
            if length0 is not None:
                old = unscaled_frequencies(first)
                under = int(np.count_nonzero((old > 0)
                                             & (turns(old, reach(first, length0)) < 1)))
        rows.append(KindRow(
            layers=fold_indices((la.index for la in layers), model.num_layers),
            count=len(layers),
            layer_type=first.layer_type, rotates=rotates, window=first.window,
            chunk=first.chunk, base=first.theta, scaling=_scaling(first), layout=first.layout,
            rotary_pairs=int(np.count_nonzero(first.frequencies)) if rotates else 0,
            head_pairs=first.head_dim // 2, slowest_wavelength=wavelength,
            trained_length=length0, under_one_turn=under,
            attention_factor=first.attention_factor))
    return tuple(rows)


def _number(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if x >= 1000 else f"{x:.4g}"


_COLUMNS = ("layers", "type", "rotates", "window", "base", "scaling", "pairs",
            "slowest wavelength", "under 1 turn in L0", "attn factor")


def kind_table(model: ModelPositions) -> str:
    """:func:`kind_rows` as a text table, under a line naming the model, its family and
    its layer count, with the model's notes below it."""
    rows = kind_rows(model)
    body = []
    for r in rows:
        reach_text = (str(r.window) if r.window else f"chunk {r.chunk}" if r.chunk else "-")
        under = ("-" if r.under_one_turn is None else
                 f"{r.under_one_turn} of {r.rotary_pairs} (L0 {r.trained_length:,})")
        body.append((f"{r.layers} [{r.count}]", r.layer_type, "yes" if r.rotates else "no",
                     reach_text, _number(r.base), r.scaling + (f", {r.layout}" if r.layout
                                                               else ""),
                     f"{r.rotary_pairs}/{r.head_pairs}" if r.rotates else "-",
                     _number(r.slowest_wavelength), under,
                     "-" if not r.rotates else f"{r.attention_factor:.4g}"))
    widths = [max(len(c), *(len(b[i]) for b in body)) for i, c in enumerate(_COLUMNS)]
    lines = [f"{model.model_type or 'config'}: {model.num_layers} layers, rules of "
             f"{model.family!r}",
             "  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(b, widths, strict=True)).rstrip()
              for b in body]
    lines += [f"note: {n}" for n in model.notes]
    return "\n".join(lines)


def kind_records(model: ModelPositions) -> dict:
    """The model and its :func:`kind_rows` as plain JSON-ready values."""
    return {"model_type": model.model_type, "family": model.family,
            "num_layers": model.num_layers, "max_position_embeddings":
            model.max_position_embeddings, "notes": list(model.notes),
            "kinds": [asdict(r) for r in kind_rows(model)]}
