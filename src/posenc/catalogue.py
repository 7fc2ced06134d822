"""The course's catalogue of position methods: what each one is, its colour, its order.

:mod:`posenc.nn` registers what torch needs of a method (its name, module class, how to
build it, its options: :func:`posenc.nn.register_position`). What the course says about
it lives here, one layer above: its printed ``label``, its ``family``, ``where`` it puts
position, the ``models`` that use it and its ``paper`` (the comparison table's columns),
its ``parameter_scope``, its ``color`` in every figure, its ``cost`` formula and whether
chapter 8 compares it (``in_comparison``), in a :class:`MethodFacts`.

The built-in methods' facts are one table, :data:`BUILT_IN`, in the course's order; that
order, not the order :mod:`posenc.nn` happens to import its files in, is the order of the
comparison tables, the figure colours and every list of methods the course prints
(:data:`METHOD_ORDER`). A reader's own method is a class, one
:func:`~posenc.nn.register_position` call and, optionally, one :func:`describe_method`
call::

    register_position("distance", DistanceBias)
    describe_method("distance", label="distance bias", color="#888888")

It comes after the built-in ones, in registration order. A registered method with no
facts gets the defaults (:func:`facts`): its name as label, a grey colour, and it is left
out of chapter 8's comparison.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ._live import LiveTuple
from .nn import POSITIONS
from .nn.absolute import _absolute_cost
from .nn.alibi import bias_cost
from .nn.axial_rope import _axial_cost
from .nn.cope import _cope_cost
from .nn.fire import _fire_cost
from .nn.fox import _fox_cost
from .nn.kerple import _kerple_cost
from .nn.partial_rope import _p_rope_cost, _partial_cost
from .nn.rotary import _rope_cost
from .nn.shaw import _shaw_cost
from .nn.stick_breaking import _stick_breaking_cost
from .nn.xpos import _xpos_cost

__all__ = [
    "DEFAULT_COLOR",
    "MethodFacts",
    "BUILT_IN",
    "BUILT_IN_ORDER",
    "METHOD_ORDER",
    "MethodNames",
    "describe_method",
    "forget_method",
    "facts",
    "method_names",
    "check_color",
]

#: The colour of a method that was given none.
DEFAULT_COLOR = "#777777"


@dataclass(frozen=True)
class MethodFacts:
    """What the course says about one position method (see the module docstring).

    ``cost(batch, heads, seq_len, d_model)`` returns the method's extra ``{"matmul_flops",
    "elementwise_flops", "memory"}`` in one attention pass (a multiply-add is 2 FLOPs,
    memory in elements); ``None``: measured (:func:`posenc.compare.measured_attention_cost`).
    ``in_comparison=False`` keeps a method out of chapter 8's side-by-side tables
    (:data:`posenc.compare.METHODS`), for a method taught later; nothing else changes.
    """

    name: str
    label: str
    family: str = "relative"
    where: str = ""
    models: str = ""
    paper: str = ""
    parameter_scope: str = "none"
    color: str = DEFAULT_COLOR
    cost: Callable | None = None
    in_comparison: bool = True


_KERPLE = dict(family="relative", where="learned kernel bias on the logits in every layer",
               models="research models (Chi et al. trained GPT-NeoX models with it)",
               paper="Chi et al., 2022", parameter_scope="2 per head, in every layer",
               cost=_kerple_cost, in_comparison=False)

#: The built-in methods' facts, in the course's order (the order of every table, legend
#: and list of methods the course prints).
BUILT_IN: tuple[MethodFacts, ...] = (
    MethodFacts(
        "none", label="NoPE", family="none", where="nowhere",
        models="NoPE decoders (Kazemnejad et al., 2023)", paper="Kazemnejad et al., 2023",
        color="#000000"),
    MethodFacts(
        "sinusoidal", label="sinusoidal", family="absolute",
        where="fixed table added to the token embeddings",
        models="the original Transformer (Vaswani et al., 2017)", paper="Vaswani et al., 2017",
        parameter_scope="none", color="#0072B2", cost=_absolute_cost),
    MethodFacts(
        "learned", label="learned", family="absolute",
        where="learned table added to the token embeddings",
        models="BERT, GPT-2", paper="Devlin et al., 2019; Radford et al., 2019",
        parameter_scope="one table per model, at the embeddings", color="#56B4E9",
        cost=_absolute_cost),
    MethodFacts(
        "rope", label="RoPE", family="relative (made from absolute rotations)",
        where="rotates q and k in every layer", models="LLaMA, GPT-NeoX, Mistral",
        paper="Su et al., 2021", parameter_scope="none", color="#D55E00", cost=_rope_cost),
    MethodFacts(
        "alibi", label="ALiBi", family="relative",
        where="fixed bias on the logits in every layer", models="BLOOM, MPT",
        paper="Press, Smith & Lewis, 2022", parameter_scope="none", color="#009E73",
        cost=bias_cost),
    MethodFacts(
        "shaw", label="Shaw", family="relative",
        where="learned vectors added to k and v in every layer",
        models="Shaw et al. (2018), Music Transformer", paper="Shaw, Uszkoreit & Vaswani, 2018",
        parameter_scope="one pair of tables per layer, shared by its heads", color="#E69F00",
        cost=_shaw_cost),
    MethodFacts(
        "t5", label="T5 bias", family="relative",
        where="learned bias on the logits in every layer", models="T5",
        paper="Raffel et al., 2020",
        parameter_scope="one table per stack, shared by all its layers", color="#CC79A7",
        cost=bias_cost),
    MethodFacts(
        "partial_rope", label="partial RoPE", family="relative (made from absolute rotations)",
        where="rotates the first features of q and k in every layer",
        models="GPT-NeoX, GPT-J, Phi-2", paper="Black et al., 2022", parameter_scope="none",
        color="#AA4499", cost=_partial_cost, in_comparison=False),
    MethodFacts(
        "p_rope", label="p-RoPE", family="relative (made from absolute rotations)",
        where="rotates q and k in every layer; the slowest pairs not at all",
        models="Gemma 4 (global layers)", paper="Barbero et al., 2025", parameter_scope="none",
        color="#F0A860", cost=_p_rope_cost, in_comparison=False),
    MethodFacts(
        "xpos", label="xPos", family="relative (rotations with a decay)",
        where="rotates and scales q and k in every layer (causal)",
        models="the LEX Transformer (torchscale)", paper="Sun et al., 2023",
        parameter_scope="none", color="#8C564B", cost=_xpos_cost, in_comparison=False),
    MethodFacts(
        "axial_rope", label="2-D RoPE", family="relative in 2-D (made from absolute rotations)",
        where="rotates q and k by row and column in every layer",
        models="RoPE-ViT; the vision encoders of Qwen2-VL", paper="Heo et al., 2024",
        parameter_scope="none", color="#17BECF", cost=_axial_cost, in_comparison=False),
    MethodFacts("kerple_power", label="KERPLE (power)", color="#117733", **_KERPLE),
    MethodFacts("kerple_log", label="KERPLE (log)", color="#44AA99", **_KERPLE),
    MethodFacts(
        "fire", label="FIRE", family="relative",
        where="learned MLP bias on the logits in every layer",
        models="research models (Li et al.'s own decoders)", paper="Li et al., 2024",
        parameter_scope="one small MLP, c and L per layer", color="#882255", cost=_fire_cost,
        in_comparison=False),
    MethodFacts(
        "cope", label="CoPE", family="contextual",
        where="bias on the logits from q, k and a learned table, in every layer",
        models="research models (Golovneva et al.'s own)", paper="Golovneva et al., 2024",
        parameter_scope="one [head_dim, npos] table per layer", color="#332288",
        cost=_cope_cost, in_comparison=False),
    MethodFacts(
        "fox", label="FoX", family="data-dependent",
        where="bias on the logits from forget gates on the input, in every layer",
        models="research models (Lin et al.'s own)",
        paper="Lin et al., 2025", parameter_scope="one gate (d_model -> heads) per layer",
        color="#999933", cost=_fox_cost, in_comparison=False),
    MethodFacts(
        "stick_breaking", label="stick-breaking", family="data-dependent",
        where="replaces the softmax: nearer keys take their share first, in every layer",
        models="research models (Tan et al.'s own)", paper="Tan et al., 2025",
        parameter_scope="none", color="#661100", cost=_stick_breaking_cost,
        in_comparison=False),
)

#: The built-in methods' names, in the course's order.
BUILT_IN_ORDER: tuple[str, ...] = tuple(entry.name for entry in BUILT_IN)

#: name -> facts: the built-in table, then what :func:`describe_method` adds or replaces.
_FACTS: dict[str, MethodFacts] = {entry.name: entry for entry in BUILT_IN}

_HEX_COLOUR = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})")


def check_color(name: str, color) -> str:
    """``color`` if it is a colour: a hex string (``"#1f77b4"``) always; a named colour
    (``"tab:blue"``) only when matplotlib, which is not a core dependency, is installed to
    check it (it is imported only then). ``ValueError`` naming the method otherwise."""
    if isinstance(color, str) and _HEX_COLOUR.fullmatch(color):
        return color
    fix = "give a hex colour such as '#1f77b4'"
    if isinstance(color, str):
        try:  # lazily: matplotlib is the course's dependency, not the library's
            from matplotlib.colors import is_color_like
        except ImportError:
            fix += " (named colours are checked by matplotlib, which is not installed)"
        else:
            if is_color_like(color):
                return color
            raise ValueError(f"method {name!r}: color={color!r} is not a colour matplotlib "
                             f"knows; {fix}")
    raise ValueError(f"method {name!r}: color={color!r} is not a colour; {fix}")


def describe_method(name: str, *, label: str | None = None, family: str = "relative",
                    where: str = "", models: str = "", paper: str = "",
                    parameter_scope: str = "none", color: str = DEFAULT_COLOR,
                    cost: Callable | None = None, in_comparison: bool = True) -> MethodFacts:
    """Give method ``name`` its facts (a :class:`MethodFacts`; ``label`` defaults to the
    name); returns them. Called again, it replaces them (handy when re-running a cell).
    The method may be registered before or after (:func:`posenc.nn.register_position`);
    a colour that is not one raises ``ValueError`` (:func:`check_color`)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a str usable as an identifier, got {name!r}")
    if cost is not None and not callable(cost):
        raise TypeError(f"method {name!r}: cost must be a function "
                        f"cost(batch, heads, seq_len, d_model), got {cost!r}")
    entry = MethodFacts(name=name, label=label or name, family=family, where=where,
                        models=models, paper=paper, parameter_scope=parameter_scope,
                        color=check_color(name, color), cost=cost,
                        in_comparison=bool(in_comparison))
    _FACTS[name] = entry
    return entry


def forget_method(name: str) -> None:
    """Drop the facts :func:`describe_method` gave ``name`` (a built-in method goes back
    to its row of :data:`BUILT_IN`)."""
    _FACTS.pop(name, None)
    for entry in BUILT_IN:
        if entry.name == name:
            _FACTS[name] = entry


def facts(name: str) -> MethodFacts:
    """The facts of method ``name``; for one never described, the defaults: its name as
    label, :data:`DEFAULT_COLOR`, and out of chapter 8's comparison."""
    entry = _FACTS.get(name)
    if entry is None:
        return MethodFacts(name=name, label=name, in_comparison=False)
    return entry


def method_names() -> tuple[str, ...]:
    """Every registered method (:data:`posenc.nn.POSITIONS`) in the course's order: the
    built-in ones in :data:`BUILT_IN` order, then the others in registration order."""
    rank = {name: i for i, name in enumerate(BUILT_IN_ORDER)}
    names = list(POSITIONS)
    return tuple(sorted(names, key=lambda name: (rank.get(name, len(rank)),
                                                 names.index(name))))


class MethodNames(LiveTuple):
    """A live tuple of registered method names in the course's order (a method registered
    later appears too): those ``select(name)`` keeps, stably sorted by ``order(name)``
    (:class:`posenc._live.LiveTuple`, the one live view;
    :class:`posenc.nn.positions.LiveNames` is the same in the registry's order)."""

    def __init__(self, select: Callable[[str], bool] = lambda name: True,
                 order: Callable[[str], int] | None = None):
        def names():
            chosen = [name for name in method_names() if select(name)]
            if order is not None:
                chosen.sort(key=order)  # stable: the course's order within a rank
            return chosen

        super().__init__(names)


#: Every registered method, in the course's order (a live view).
METHOD_ORDER = MethodNames()
