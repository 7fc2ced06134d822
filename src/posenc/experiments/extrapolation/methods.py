"""What the experiment does with a position method beyond training and evaluating it.

A position method is registered once, in :mod:`posenc.nn` (:func:`posenc.nn.register_position`):
what torch needs and the course's facts. Every registered method can be trained and
evaluated by the experiment as it is. This module holds the rest, the experiment's own
protocol, per method name (:data:`EXPERIMENT_METHODS`):

* ``variants``: evaluation-time variants that reuse the trained weights (:class:`Variant`;
  learned + interpolation, RoPE + Position Interpolation), each evaluated after its method;
* ``finetunable``: a rotary method whose model takes scaled frequencies
  (:meth:`posenc.model.TinyLM.set_rope_frequencies`): the fine-tuning extension
  (``finetune_scalings``) extends it with each scaling (:mod:`.finetuning`);
* ``record(module)``: extra numbers stored with a trained model's entry (T5's bias table,
  FIRE's learned threshold);
* ``undefined_note``: for a method whose model may refuse a length (raising
  ``ValueError``): the experiment records ``null`` there with this note.

The built-in methods' entries are registered at the end of this file, in one place. A
method without an entry gets the empty defaults (:func:`experiment_method`). A reader who
registers a method and wants more than that calls :func:`register_experiment_method` after
:func:`~posenc.nn.register_position` (in a notebook cell, or in the module given to
``--register``, which every worker process imports)::

    register_experiment_method("distance", record=lambda m: {"decay": m.decay})
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..._validation import to_numpy
from ...model import TinyLM
from ...nn import POSITIONS, get_position
from ...scaling import pi_frequencies

__all__ = [
    "Variant",
    "ExperimentMethod",
    "EXPERIMENT_METHODS",
    "register_experiment_method",
    "unregister_experiment_method",
    "experiment_method",
]


@dataclass(frozen=True)
class Variant:
    """An evaluation-time variant of a trained method (e.g. RoPE + Position Interpolation).

    ``adapt(model, train_length, eval_length)`` returns the :class:`~posenc.model.TinyLM`
    to evaluate at ``eval_length`` (a changed copy; the trained model stays as it was).
    ``label`` is its printed name and ``note`` (when given) is stored with its results.
    """

    name: str
    label: str
    adapt: Callable
    note: str = ""


@dataclass(frozen=True)
class ExperimentMethod:
    """The experiment's protocol for one registered method (see the module docstring);
    the defaults are a method's that has no entry."""

    name: str
    variants: tuple[Variant, ...] = ()
    #: True for a rotary method whose model takes scaled frequencies: the fine-tuning
    #: extension (``finetune_scalings``) extends it with each scaling.
    finetunable: bool = False
    #: ``record(module) -> {field: numbers}``: extra numbers stored with a trained model's
    #: entry. A model with one module per layer records a list, one per layer.
    record: Callable | None = None
    #: Set for a method whose model may refuse a length (raising ``ValueError``): the
    #: experiment then records ``null`` there with this note (``{train_length}`` filled in).
    undefined_note: str = ""


#: method name -> :class:`ExperimentMethod`, for the methods that have an entry.
EXPERIMENT_METHODS: dict[str, ExperimentMethod] = {}


def register_experiment_method(name: str, *, variants: Sequence[Variant] = (),
                               finetunable: bool = False, record: Callable | None = None,
                               undefined_note: str = "",
                               replace: bool = False) -> ExperimentMethod:
    """Register what the experiment does with the registered position method ``name``
    beyond training and evaluating it; returns the :class:`ExperimentMethod`.

    ``variants`` are :class:`Variant` s evaluated with the trained weights (their names
    new: neither a method's nor another variant's), ``finetunable=True`` gives a rotary
    method the fine-tuned variants of ``finetune_scalings``, ``record(module)`` returns
    extra numbers for the results (``{field: array-like}``) and ``undefined_note`` is
    stored where the model refuses a length. ``name`` must be registered first
    (:func:`posenc.nn.register_position`); registering it here twice raises
    ``ValueError`` unless ``replace=True`` (handy when re-running a cell).
    """
    get_position(name)  # ValueError naming the registered methods
    if name in EXPERIMENT_METHODS and not replace:
        raise ValueError(f"the experiment's entry for {name!r} is already registered "
                         "(pass replace=True to replace it)")
    variants = tuple(variants)
    taken = {v.name for other, entry in EXPERIMENT_METHODS.items() if other != name
             for v in entry.variants}
    for variant in variants:
        if not isinstance(variant, Variant):
            raise TypeError(f"method {name!r}: each variant must be a Variant(name, label, "
                            f"adapt, note), got {variant!r}")
        if not variant.name.isidentifier():
            raise ValueError(f"method {name!r}: variant name {variant.name!r} is not usable "
                             "as an identifier")
        if variant.name in POSITIONS or variant.name in taken:
            raise ValueError(f"method {name!r}: variant name {variant.name!r} is taken (by a "
                             "method or another method's variant)")
        if not callable(variant.adapt):
            raise TypeError(f"method {name!r}, variant {variant.name!r}: adapt must be a "
                            f"function (model, train_length, eval_length), got {variant.adapt!r}")
        taken.add(variant.name)
    if record is not None and not callable(record):
        raise TypeError(f"method {name!r}: record must be a function of the trained module, "
                        f"got {record!r}")
    if not isinstance(undefined_note, str):
        raise TypeError(f"method {name!r}: undefined_note must be a str, got {undefined_note!r}")
    entry = ExperimentMethod(name=name, variants=variants, finetunable=bool(finetunable),
                             record=record, undefined_note=undefined_note)
    EXPERIMENT_METHODS[name] = entry
    return entry


def unregister_experiment_method(name: str) -> None:
    """Remove a method's entry (the method itself stays registered in :mod:`posenc.nn`).
    :func:`posenc.nn.unregister_position` knows nothing of the experiment, so it leaves the
    entry: a reader who removes a method calls both."""
    if name not in EXPERIMENT_METHODS:
        raise ValueError(f"no experiment entry for {name!r}; the entries are "
                         f"{', '.join(map(repr, EXPERIMENT_METHODS)) or 'none'}")
    del EXPERIMENT_METHODS[name]


def experiment_method(name: str) -> ExperimentMethod:
    """The experiment's entry for the registered method ``name``: the registered one, or the
    empty defaults (no variants, not fine-tunable, nothing recorded, defined at every
    length). ``ValueError`` if ``name`` is not a registered method."""
    get_position(name)
    return EXPERIMENT_METHODS.get(name) or ExperimentMethod(name)


# --- the built-in methods' entries ----------------------------------------------------------

def _stretched(model: TinyLM, train_length: int, eval_length: int) -> TinyLM:
    """The same trained weights with the learned table linearly stretched (a new model)."""
    stretched = type(model)(model.config.with_options(interpolate="linear"))
    stretched.load_state_dict(model.state_dict())
    return stretched.eval()


def _with_pi(model: TinyLM, train_length: int, eval_length: int) -> TinyLM:
    """A copy of a trained RoPE model whose frequencies are divided by ``L_eval / L_train``."""
    adapted = copy.deepcopy(model)
    base = model.config.position_options()["base"]
    adapted.set_rope_frequencies(pi_frequencies(model.config.head_dim, base, train_length,
                                                eval_length))
    return adapted


def _t5_bias_table(module) -> dict:
    """A trained T5 table (:class:`~posenc.nn.T5RelativeBias`): ``t5_bias``
    ``[num_buckets, num_heads]``."""
    return {"t5_bias": to_numpy(module.embedding.weight).astype(np.float64)}


def _fire_threshold(module) -> dict:
    """A trained FIRE layer (:class:`~posenc.nn.FIREBias`): its learned threshold ``L``
    and ``c``."""
    return {"fire_threshold": float(module.threshold.detach()),
            "fire_c": float(module.c.detach())}


register_experiment_method(
    "learned",
    variants=[Variant("learned_interp", "learned + interpolation", _stretched,
                      note="learned weights, table linearly stretched to L_eval rows at "
                           "evaluation (no fine-tuning)")],
    undefined_note="no learned row for positions >= {train_length}: loss is null past 1x")

register_experiment_method(
    "rope", finetunable=True,
    variants=[Variant("rope_pi", "RoPE + PI", _with_pi,
                      note="RoPE weights, frequencies / (L_eval / L_train) at evaluation "
                           "(Position Interpolation, no fine-tuning)")])

register_experiment_method("t5", record=_t5_bias_table)

register_experiment_method("fire", record=_fire_threshold)
