"""The position-method protocol and its registry, :data:`POSITIONS`.

Position can enter self-attention in five places, and a position method is one
:class:`PositionEncoding` module that overrides the hooks for the places it uses
(the others keep their do-nothing defaults). :class:`~posenc.nn.MultiHeadSelfAttention`
calls every hook of every method in the same order, with no method named in its code::

    x      = enc.embed(x)                  # [batch, seq, d_model]: added to the token embeddings
    q, k, v = project(x)                   # each [batch, heads, seq, head_dim]
    q, k   = enc.rotate(q, k)              # applied to queries and keys
    s      = q @ k^T / sqrt(head_dim)      # [batch, heads, seq_q, seq_k]
    s      = s + enc.score_bias(q, k)      # a bias on the scores (None: no bias); a
                                           # method may read the layer's input too:
                                           # score_bias(q, k, x)
    s      = s + causal mask               # when causal (and a window's or chunk's mask)
    p      = enc.normalise(s)              # the weights: softmax(s) unless overridden
    y      = p @ v + enc.value_term(p, v)  # a term added to the values (None: none)

==================  ===================================  ===============================
hook                what it returns                      methods
==================  ===================================  ===============================
``embed(x)``        ``x`` plus a ``[seq, d_model]``      sinusoidal, learned
                    table (same shape, dtype as ``x``)
``rotate(q, k)``    ``(q', k')``, each the shape of      RoPE; xPos, partial RoPE,
                    its input; q and k may be treated    p-RoPE, 2-D RoPE
                    differently (xPos scales them
                    inversely)
``score_bias(q,k)`` a bias broadcastable to              ALiBi, T5, Shaw's key term;
                    ``[batch, heads, seq_q, seq_k]``,    KERPLE, FIRE (from positions
                    added to the *scaled* scores; it     only); CoPE (from q and k);
                    may read q and k, and the layer's    FoX (from the input's forget
                    input ``x`` ``[batch, seq,           gates)
                    d_model]`` if it declares a third
                    parameter named ``x``
``normalise(s)``    the weights ``[batch, heads, seq_q,  stick-breaking attention
                    seq_k]`` from the masked scores
                    (``-inf`` where a key is hidden),
                    same shape and dtype: replaces
                    the softmax
``value_term(p,v)`` ``[batch, heads, seq_q, head_dim]``  Shaw's value term
                    added to ``p @ v`` (``p`` are the
                    attention weights)
==================  ===================================  ===============================

Rules every method follows:

* Work on the device and in the dtype of the tensor it is given (``x`` or ``q``);
  cached tables are non-persistent buffers (they follow ``.to()`` and grow when a
  longer sequence comes), and state a model depends on is a parameter or a
  persistent buffer, so it survives ``state_dict()`` / ``load_state_dict()``.
* Only ``score_bias`` may read the input, and only by declaring it:
  ``def score_bias(self, q, k, x)`` (:meth:`PositionEncoding.bias_reads_input`); the
  others see what the table shows. A ``normalise`` gets scores already masked
  (``-inf``), gives a hidden key weight 0, and replaces the softmax wholly: such a
  method cannot share a layer with learned sinks, whose logit needs the softmax.
* Angles and other position arithmetic in at least float32, whatever the input dtype.
* A method that uses ``embed`` uses no other hook: :class:`~posenc.model.TinyLM` adds
  such a table once, at the embeddings, and runs its blocks without position.
* ``shared_across_layers = True`` makes :class:`~posenc.model.TinyLM` use the first
  block's module in every block (T5's one bias table per stack).

A method is registered once, with :func:`register_position`, under a name; from then
on ``MultiHeadSelfAttention(position=name)``, ``TinyLMConfig(position=name)``, the
comparison tables (:mod:`posenc.compare`), the figure colours and the extrapolation
experiment know it. The registry holds what torch needs (the name, the module class, how
to build it, its options); what the course says about a method (its label, family,
colour, cost formula, whether chapter 8 compares it) and the order the course lists the
methods in live one layer above, in :mod:`posenc.catalogue` (the experiment trains and
evaluates any method; what more it does with one, such as evaluation-time variants, is
registered in the experiment's package, not here). The built-in methods are one file
each in :mod:`posenc.nn` (``absolute.py`` holds two, sinusoidal and learned),
registration at the end of the file; :mod:`posenc.nn` imports each file. A reader's own
method is a class and one call (and, optionally, its facts for the course), e.g. in a
notebook cell::

    class DistanceBias(PositionEncoding):
        def __init__(self, spec, *, decay=0.1):
            super().__init__()
            self.decay = decay

        def score_bias(self, q, k):
            i = torch.arange(q.shape[-2], device=q.device)
            j = torch.arange(k.shape[-2], device=k.device)
            return -self.decay * (i[:, None] - j[None, :]).abs().to(q.dtype)

    register_position("distance", DistanceBias)
    posenc.catalogue.describe_method("distance", label="distance bias", color="#888888")

The constructor takes an :class:`AttentionSpec` and, keyword-only with defaults, the
method's options: those keywords, and nothing else, are what the method takes
(:attr:`PositionMethod.options`). A method and its options travel as one value, a
:class:`PositionSpec`: ``PositionSpec("distance", decay=0.2)``, checked once when it is
made (:func:`check_position_options`: an option the method does not take raises
``TypeError`` naming it, the method and the options it takes), then built as often as
needed (``PositionSpec.build(spec)``). ``MultiHeadSelfAttention(16, 2,
PositionSpec("distance", decay=0.2))`` takes one, and ``MultiHeadSelfAttention(16, 2,
"distance", decay=0.2)`` is short for it; ``TinyLMConfig(position="distance",
options={"decay": 0.2})`` and the experiment's ``--options distance:decay=0.2`` make one
too. An option may share its name with a keyword of the attention layer (``window``,
``chunk``, ``sinks``, ...): inside a :class:`PositionSpec` (and in ``TinyLMConfig.options``
or a layer pattern's ``options``) it is the method's, never the layer's.

:func:`register_position` checks a method on the spot: it builds one on a small spec
(``d_model=16``, two heads, causal) and runs each hook the class overrides on a tiny
CPU float32 input, and refuses (``TypeError`` naming the method, the hook and the fix)
a class that overrides no hook, defines a hook-like name that is not a hook
(``scores_bias``), cannot be built from a spec, or returns a wrong shape or dtype
(``embed`` must return ``x`` plus a table, ``rotate`` keeps every feature, ``normalise``
the scores' shape); a class that overrides no hook registers only as a
:class:`NoPosition` subclass. At run time attention checks the shape and dtype of each
``score_bias``, ``normalise`` and ``value_term`` (:func:`check_score_bias`,
:func:`check_normalise`), which costs no tensor work.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import torch
from torch import nn

from .._live import LiveTuple

__all__ = [
    "HOOKS",
    "AttentionSpec",
    "PositionEncoding",
    "NoPosition",
    "PositionMethod",
    "PositionSpec",
    "POSITIONS",
    "POSITION_METHODS",
    "register_position",
    "unregister_position",
    "get_position",
    "build_position",
    "check_position_options",
    "call_score_bias",
    "check_score_bias",
    "check_normalise",
    "check_value_term",
]

#: The hooks, in the order attention calls them.
HOOKS = ("embed", "rotate", "score_bias", "normalise", "value_term")


@dataclass(frozen=True)
class AttentionSpec:
    """The sizes a position module is built for.

    ``in_model`` is True when a whole model (:class:`~posenc.model.TinyLM`) builds it,
    False for a lone attention layer: a method may follow a model-level convention
    then (the learned table is initialised ``N(0, 1/d_model)`` as fairseq does).
    """

    d_model: int
    num_heads: int
    causal: bool = False
    in_model: bool = False

    @property
    def head_dim(self) -> int:
        return self.d_model // self.num_heads


class PositionEncoding(nn.Module):
    """Base class of every position method: five hooks that do nothing until overridden
    (``normalise`` is the softmax until then).

    Subclasses take ``(spec: AttentionSpec, *, option=default, ...)`` in ``__init__``
    and override the hooks they use (see the module docstring for shapes).
    """

    #: Use one instance for every block of a model (T5's shared bias table).
    shared_across_layers: bool = False

    #: A trainer's learning rate for this module's parameters is the shared one times this
    #: (``None``: the shared rate, in the shared parameter group). The experiment
    #: (:mod:`posenc.experiments.extrapolation`) reads it, whatever the method; T5 sets it
    #: from its ``bias_lr_scale`` option.
    param_lr_scale: float | None = None

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """``[batch, seq, d_model]`` -> the same, with position added."""
        return x

    def rotate(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Queries and keys ``[batch, heads, seq, head_dim]`` -> transformed ones."""
        return q, k

    def score_bias(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor | None:
        """A bias added to ``q k^T / sqrt(head_dim)``, broadcastable to ``[b, h, q, k]``.
        An override may add a third parameter ``x``: it then gets the layer's input."""
        return None

    def normalise(self, scores: torch.Tensor) -> torch.Tensor:
        """The attention weights from the masked, scaled scores ``[b, h, q, k]``: the
        softmax, which an override replaces (same shape and dtype)."""
        return scores.softmax(dim=-1)

    def value_term(self, weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor | None:
        """A term added to ``weights @ v``: ``[batch, heads, seq_q, head_dim]``."""
        return None

    @classmethod
    def hooks(cls) -> tuple[str, ...]:
        """The hooks this class overrides, in :data:`HOOKS` order."""
        return tuple(h for h in HOOKS if getattr(cls, h) is not getattr(PositionEncoding, h))

    @classmethod
    def bias_reads_input(cls) -> bool:
        """Whether this class's ``score_bias`` takes the layer's input: a parameter
        named ``x`` (FoX computes its forget gates from it)."""
        return _declares_input(cls.score_bias)


@functools.cache
def _declares_input(score_bias: Callable) -> bool:
    """Whether ``score_bias`` has a parameter ``x`` (asked once per function: attention
    asks on every call)."""
    return "x" in inspect.signature(score_bias).parameters


def call_score_bias(encoding: PositionEncoding, q: torch.Tensor, k: torch.Tensor,
                    x: torch.Tensor | None) -> torch.Tensor | None:
    """``encoding.score_bias(q, k)``, with ``x=x`` (the layer's input ``[batch, seq,
    d_model]``) for a method that declares it: the one place the hook is called from
    (attention, the registration check, the measured cost)."""
    if encoding.bias_reads_input():
        if x is None:
            raise ValueError(f"{type(encoding).__name__}.score_bias reads the layer's input "
                             "x, and none was given")
        return encoding.score_bias(q, k, x=x)
    return encoding.score_bias(q, k)


class NoPosition(PositionEncoding):
    """No position anywhere (NoPE, Kazemnejad et al., 2023): attention alone is then
    permutation-equivariant; a causal mask still lets a decoder infer position."""

    def __init__(self, spec: AttentionSpec | None = None):
        super().__init__()


@dataclass(frozen=True)
class PositionMethod:
    """One registered method: what torch needs of it (its module class, how to build it,
    its options). The course's facts about it (label, colour, cost, ...) are in
    :mod:`posenc.catalogue`; what the extrapolation experiment does with it beyond training
    and evaluating it is the experiment's, registered there."""

    name: str
    module: type[PositionEncoding]
    factory: Callable
    options: Mapping = field(default_factory=dict)

    @property
    def hooks(self) -> tuple[str, ...]:
        return self.module.hooks()

    def build(self, spec: AttentionSpec, **options) -> PositionEncoding:
        """The module for ``spec`` with ``options``, each one this method takes (another
        raises ``TypeError``, :func:`check_position_options`)."""
        return self.factory(spec, **check_position_options(self.name, options))


#: name -> :class:`PositionMethod`, in registration order.
POSITIONS: dict[str, PositionMethod] = {}


def register_position(name: str, module: type[PositionEncoding], *, build: Callable | None = None,
                      replace: bool = False, **unknown) -> PositionMethod:
    """Register ``module`` under ``name``; returns the :class:`PositionMethod`.

    ``module`` is a :class:`PositionEncoding` subclass. ``build(spec, *, option=default,
    ...)`` makes one for an :class:`AttentionSpec`; by default ``build`` is ``module``
    itself, whose ``__init__`` then takes the spec and keyword-only options. The
    keyword-only arguments of ``build`` are the method's options, and nothing else:
    :class:`PositionSpec`, ``MultiHeadSelfAttention(name, **options)``,
    ``TinyLMConfig(position=name, options={...})`` and the experiment's ``--options
    NAME:key=value`` accept exactly those (:func:`check_position_options`). What the
    course says about the method (its label, family, colour, cost formula, whether chapter
    8 compares it) is not registered here: give it with
    ``posenc.catalogue.describe_method(name, label=..., color=..., ...)`` (without it the
    method gets the catalogue's defaults); passing one of those keywords here raises
    ``TypeError`` saying so. A module that sets
    :attr:`PositionEncoding.param_lr_scale` gets its own learning rate in a trainer that
    reads it. What the extrapolation experiment does with a method beyond training and
    evaluating it (evaluation-time variants, fine-tuning, extra numbers in the results, a
    note where the model refuses a length) is the experiment's protocol, not the
    method's: it is registered apart, in the experiment's package
    (``posenc.experiments.extrapolation.register_experiment_method``); passing one of
    its old keywords here (``variants``, ``finetunable``, ``record``, ``undefined_note``)
    raises ``TypeError`` saying so. Registering a taken name raises ``ValueError`` unless
    ``replace=True`` (handy when re-running a cell).
    """
    if unknown:
        _refuse_keywords(name, unknown)
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a str usable as an identifier, got {name!r}")
    if not (isinstance(module, type) and issubclass(module, PositionEncoding)):
        raise TypeError(f"module must be a PositionEncoding subclass, got {module!r}")
    hooks = module.hooks()
    if "embed" in hooks and len(hooks) > 1:
        raise TypeError(f"{module.__name__} overrides embed and {hooks[1:]}: a method that "
                        "adds to the embeddings uses no other hook")
    if name in POSITIONS and not replace:
        raise ValueError(f"position method {name!r} is already registered "
                         "(pass replace=True to replace it)")
    factory = module if build is None else build
    _check_method(name, module, factory)
    options = {p.name: p.default for p in inspect.signature(factory).parameters.values()
               if p.kind is p.KEYWORD_ONLY}
    method = PositionMethod(name=name, module=module, factory=factory, options=options)
    POSITIONS[name] = method
    return method


#: Keywords ``register_position`` took before the extrapolation experiment's protocol
#: moved to the experiment's package (issue 33).
_EXPERIMENT_KEYWORDS = ("variants", "finetunable", "record", "undefined_note")

#: Keywords ``register_position`` took before the course's facts moved to
#: :mod:`posenc.catalogue` (issue 33).
_CATALOGUE_KEYWORDS = ("label", "family", "where", "models", "paper", "parameter_scope",
                       "color", "cost", "in_comparison")


def _refuse_keywords(name, unknown: Mapping) -> None:
    """``TypeError`` for keywords ``register_position`` does not take, pointing to where the
    experiment's keywords went."""
    moved = [key for key in unknown if key in _EXPERIMENT_KEYWORDS]
    if moved:
        given = ", ".join(f"{key}=..." for key in moved)
        raise TypeError(f"method {name!r}: {', '.join(moved)} belong to the extrapolation "
                        "experiment, not to the method: after register_position, call "
                        "posenc.experiments.extrapolation.register_experiment_method("
                        f"{name!r}, {given})")
    facts = [key for key in unknown if key in _CATALOGUE_KEYWORDS]
    if facts:
        given = ", ".join(f"{key}=..." for key in facts)
        raise TypeError(f"method {name!r}: {', '.join(facts)} belong to the course's "
                        "catalogue, not to the torch registry: after register_position, call "
                        f"posenc.catalogue.describe_method({name!r}, {given})")
    raise TypeError(f"register_position() got an unexpected keyword argument "
                    f"{next(iter(unknown))!r}")


def unregister_position(name: str) -> None:
    """Remove a registered method (a reader's experiment, say)."""
    get_position(name)
    del POSITIONS[name]


def get_position(name) -> PositionMethod:
    """The registered method ``name``; ``ValueError`` naming the registered ones if none."""
    if not isinstance(name, str) or name not in POSITIONS:
        raise ValueError(f"position must be one of {', '.join(map(repr, POSITIONS))}; "
                         f"got {name!r}")
    return POSITIONS[name]


def all_options() -> dict:
    """Every registered method's options and their defaults, in one dict (an option that
    two methods share appears once). For comparisons that give every method the same
    sizes (:mod:`posenc.compare`); a method itself takes only its own
    (:func:`check_position_options`)."""
    return {o: d for m in POSITIONS.values() for o, d in m.options.items()}


def check_position_options(name: str, options: Mapping) -> dict:
    """``options`` as a dict, each one an option of method ``name`` (a keyword-only argument
    of its constructor, :attr:`PositionMethod.options`); ``TypeError`` naming the options
    it does not take, the method and the options it does. The one check of a method's
    option names: :class:`PositionSpec`, :class:`~posenc.model.TinyLMConfig`, the layer
    patterns and the experiment's ``options`` all call it (the values are the
    constructor's to check)."""
    method = get_position(name)
    if not isinstance(options, Mapping):
        raise TypeError(f"options of position {method.name!r} must map option names to "
                        f"values, got {options!r}")
    options = dict(options)
    unknown = [key for key in options if key not in method.options]
    if unknown:
        names = ", ".join(map(str, unknown))
        takes = ", ".join(method.options) or "no options"
        raise TypeError(f"unknown option(s) for position {method.name!r}: {names} are not "
                        f"options of {method.name!r}, which takes {takes} (the keyword-only "
                        "arguments of its constructor)")
    return options


@dataclass(frozen=True, init=False, repr=False)
class PositionSpec:
    """A position method and its options, as one value: ``PositionSpec("t5",
    num_buckets=16)``.

    ``name`` is a registered method (:data:`POSITIONS`); ``options`` (read-only) are some
    of its constructor's keyword-only arguments, the method's defaults filling the rest.
    The names are checked once, here (:func:`check_position_options`: ``TypeError``
    naming an option the method does not take); the values when the module is built
    (:meth:`build`). Every keyword after the name is an option, whatever its name: in
    ``PositionSpec("winbias", window=3)`` ``window`` is the method's, even where an
    attention layer has a keyword of that name too. ``PositionSpec.of(position, options)``
    makes one from a name (or a spec) and a mapping; ``with_options(**changes)`` a copy
    with some options changed.
    """

    name: str
    options: Mapping

    def __init__(self, name: str, /, **options):
        self._set(name, check_position_options(name, options))  # (a registered name)

    def _set(self, name: str, options: dict) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "options", MappingProxyType(options))

    @classmethod
    def of(cls, position: str | PositionSpec, options: Mapping | None = None) -> PositionSpec:
        """``position`` (a method name or a :class:`PositionSpec`) with ``options`` (a
        mapping, or ``(name, value)`` pairs) added to its own."""
        options = dict(options or {})
        if isinstance(position, PositionSpec):
            return position.with_options(**options) if options else position
        if not isinstance(position, str):
            raise TypeError(f"position must be a method name or a PositionSpec, got "
                            f"{position!r}")
        return cls(position, **options)

    def with_options(self, **changes) -> PositionSpec:
        """A copy with some options changed (checked again)."""
        return type(self)(self.name, **{**self.options, **changes})

    @property
    def method(self) -> PositionMethod:
        """The registered :class:`PositionMethod`."""
        return get_position(self.name)

    def build(self, spec: AttentionSpec) -> PositionEncoding:
        """The module for ``spec`` (its constructor checks the option values)."""
        return get_position(self.name).factory(spec, **self.options)

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted(self.options.items()))))

    def __repr__(self) -> str:
        options = "".join(f", {key}={value!r}" for key, value in self.options.items())
        return f"PositionSpec({self.name!r}{options})"

    def __reduce__(self):  # (a read-only mapping does not pickle or deep-copy by itself)
        return _unpickle_position_spec, (self.name, dict(self.options))


def _unpickle_position_spec(name: str, options: dict) -> PositionSpec:
    """A :class:`PositionSpec` back from a pickle or a copy (checked when it was made)."""
    spec = PositionSpec.__new__(PositionSpec)
    spec._set(name, options)
    return spec


def build_position(position: str | PositionSpec, spec: AttentionSpec,
                   **options) -> PositionEncoding:
    """Build ``position`` (a method name, or a :class:`PositionSpec`) for ``spec``, with
    ``options`` added to the spec's: each an option of that method, or ``TypeError``."""
    return PositionSpec.of(position, options).build(spec)


# --- the checks register_position runs ------------------------------------------------------

#: The sizes a method is tried on when it registers: small, CPU, float32.
_CHECK_SPEC = AttentionSpec(d_model=16, num_heads=2, causal=True, in_model=False)
_CHECK_BATCH, _CHECK_SEQ = 2, 5


def _squash(name: str) -> str:
    return name.lower().replace("_", "")


def _misspelled_hooks(module: type) -> list[tuple[str, str]]:
    """``(name, hook)`` for each method ``module`` defines whose name is close to a hook's
    but is not one (``scores_bias``): attention would never call it."""
    found = []
    for cls in module.__mro__:
        if cls is PositionEncoding or not issubclass(cls, PositionEncoding):
            continue
        for attr, value in vars(cls).items():
            if attr in HOOKS or attr.startswith("__") or not callable(value):
                continue
            near = [h for h in HOOKS if _squash(h) == _squash(attr.lstrip("_"))]
            near = near or difflib.get_close_matches(attr, HOOKS, n=1, cutoff=0.8)
            if near:
                found.append((attr, near[0]))
    return found


def _refuse(name: str, hook: str, problem: str, fix: str):
    raise TypeError(f"method {name!r}, hook {hook}: {problem}. Fix: {fix}")


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to exactly ``target`` (plain Python: the first call of
    ``torch.broadcast_shapes`` costs most of a second)."""
    if len(shape) > len(target):
        return False
    return all(a in (1, b) for a, b in zip(reversed(shape), reversed(target), strict=False))


def _check_tensor(name, hook, out, shape, dtype, what, fix):
    if not isinstance(out, torch.Tensor):
        _refuse(name, hook, f"returned {type(out).__name__}, not a tensor", fix)
    if not _broadcasts_to(tuple(out.shape), tuple(shape)):
        _refuse(name, hook, f"returned shape {tuple(out.shape)}, which does not broadcast "
                f"to {what} {tuple(shape)}", fix)
    if out.dtype != dtype:
        _refuse(name, hook, f"returned dtype {out.dtype} for {dtype} input", fix +
                " (work in the dtype of the input: .to(q.dtype))")


def check_score_bias(name: str, bias, q: torch.Tensor, k: torch.Tensor) -> None:
    """The run-time check of a ``score_bias`` (shape and dtype only, so it costs nothing):
    a wrong one would otherwise fail deep inside torch's attention."""
    if bias is None:
        return
    shape = (*q.shape[:-1], k.shape[-2])  # [batch, heads, seq_q, seq_k]
    _check_tensor(name, "score_bias", bias, shape, q.dtype, "[batch, heads, seq_q, seq_k] =",
                  "return a bias broadcastable to [batch, heads, seq_q, seq_k], e.g. [heads, q, k]")


def check_normalise(name: str, weights, scores: torch.Tensor) -> None:
    """The run-time check of a ``normalise`` (shape and dtype: exactly the scores')."""
    fix = "return weights of the scores' shape and dtype, [batch, heads, seq_q, seq_k]"
    _check_tensor(name, "normalise", weights, scores.shape, scores.dtype,
                  "the scores' shape", fix)
    if tuple(weights.shape) != tuple(scores.shape):
        _refuse(name, "normalise", f"returned shape {tuple(weights.shape)}, not the scores' "
                f"{tuple(scores.shape)}", fix)


def check_value_term(name: str, term, weights: torch.Tensor, v: torch.Tensor) -> None:
    """The run-time check of a ``value_term`` (shape and dtype)."""
    if term is None:
        return
    shape = (*weights.shape[:-1], v.shape[-1])  # [batch, heads, seq_q, head_dim]
    _check_tensor(name, "value_term", term, shape, v.dtype, "[batch, heads, seq_q, head_dim] =",
                  "return a term of the shape of weights @ v, [batch, heads, seq_q, head_dim]")


def _check_method(name: str, module: type[PositionEncoding], factory: Callable) -> None:
    """Build one instance on a small spec and run each hook it overrides on a tiny CPU
    float32 input; ``TypeError`` naming the method, the hook and the fix otherwise."""
    cls = module.__name__
    for attr, hook in _misspelled_hooks(module):
        raise TypeError(f"method {name!r}: {cls}.{attr} is not a hook, so attention never "
                        f"calls it. Fix: rename it {hook} (the hooks are {', '.join(HOOKS)})")
    hooks = module.hooks()
    if not hooks and not issubclass(module, NoPosition):
        raise TypeError(f"method {name!r}: {cls} overrides no hook, so it puts no position "
                        f"anywhere. Fix: override one of {', '.join(HOOKS)} (or subclass "
                        "NoPosition if that is the point)")
    spec = _CHECK_SPEC
    try:
        # a trial build must not move the caller's random stream (a seeded run after a
        # registration would otherwise draw other initial weights)
        with torch.random.fork_rng(devices=[]):
            encoding = factory(spec)
    except Exception as error:
        raise TypeError(f"method {name!r}: cannot build it from a spec: "
                        f"{getattr(factory, '__name__', factory)}({spec}) raised "
                        f"{type(error).__name__}: {error}. Fix: take the AttentionSpec first and "
                        "every option keyword-only with a default: "
                        "def __init__(self, spec, *, option=default)") from error
    if not isinstance(encoding, module):
        raise TypeError(f"method {name!r}: building it gave {type(encoding).__name__}, not a "
                        f"{cls}. Fix: make build= return the registered module class")
    gen = torch.Generator().manual_seed(0)
    b, h, n, d = _CHECK_BATCH, spec.num_heads, _CHECK_SEQ, spec.head_dim
    q, k, v = (torch.randn(b, h, n, d, generator=gen) for _ in range(3))
    with torch.no_grad():
        if "embed" in hooks:
            x = torch.randn(b, n, spec.d_model, generator=gen)
            fix = "return x + table (the table broadcast to [batch, seq, d_model])"
            out = encoding.embed(x)
            _check_tensor(name, "embed", out, x.shape, x.dtype, "x's shape", fix)
            if tuple(out.shape) != tuple(x.shape):
                _refuse(name, "embed", f"returned shape {tuple(out.shape)}, not x's "
                        f"{tuple(x.shape)}", fix)
            shifted = encoding.embed(x + 1.0)
            if not torch.allclose(shifted - out, torch.ones_like(out), atol=1e-4):
                _refuse(name, "embed", "its output does not move with x (did it return the "
                        "table alone?)", fix)
        if "rotate" in hooks:
            out = encoding.rotate(q, k)
            fix = "return (q', k'), each of its input's shape [batch, heads, seq, head_dim]"
            if not (isinstance(out, tuple) and len(out) == 2):
                _refuse(name, "rotate", f"returned {type(out).__name__}, not a pair (q, k)", fix)
            for label, before, after in zip("qk", (q, k), out, strict=True):
                _check_tensor(name, "rotate", after, before.shape, before.dtype,
                              f"{label}'s shape", fix)
                if tuple(after.shape) != tuple(before.shape):
                    _refuse(name, "rotate", f"returned {label} of shape {tuple(after.shape)}, "
                            f"not {tuple(before.shape)} (features dropped?)", fix)
        if "score_bias" in hooks:
            x = torch.randn(b, n, spec.d_model, generator=gen)
            check_score_bias(name, call_score_bias(encoding, q, k, x), q, k)
        if "normalise" in hooks:
            causal = torch.ones(n, n, dtype=torch.bool).tril()
            scores = torch.randn(b, h, n, n, generator=gen).masked_fill(~causal, float("-inf"))
            check_normalise(name, encoding.normalise(scores), scores)
        if "value_term" in hooks:
            weights = torch.randn(b, h, n, n, generator=gen).softmax(-1)
            check_value_term(name, encoding.value_term(weights, v), weights, v)


class LiveNames(LiveTuple):
    """A live tuple of registered names (a method registered later appears too): the
    methods ``select(method)`` keeps, in registration order, stably sorted by
    ``order(method)`` when given (:class:`posenc._live.LiveTuple`, the one live view)."""

    def __init__(self, select: Callable[[PositionMethod], bool] = lambda m: True,
                 order: Callable[[PositionMethod], int] | None = None):
        def names():
            methods = [m for m in POSITIONS.values() if select(m)]
            if order is not None:
                methods.sort(key=order)  # stable: registration order within a rank
            return (m.name for m in methods)

        super().__init__(names)


#: Every registered name, in registration order (a live view of :data:`POSITIONS`).
POSITION_METHODS = LiveNames()

register_position("none", NoPosition)
