"""One live-view mechanism (posenc._live): every view of a registry that follows it is a
LiveTuple or a LiveMapping, and they follow the registry as it changes."""

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import posenc
from posenc import compare, model
from posenc._live import LiveMapping, LiveTuple
from posenc.catalogue import METHOD_ORDER, method_names
from posenc.course.figures.style import METHOD_COLORS
from posenc.nn import (
    POSITION_METHODS,
    POSITIONS,
    NoPosition,
    register_position,
    unregister_position,
)


def test_every_live_view_is_one_of_the_two():
    for view in (POSITION_METHODS, METHOD_ORDER, compare.METHODS, compare.ALL_METHODS,
                 model.ABSOLUTE_METHODS):
        assert isinstance(view, LiveTuple)
    for view in (compare.PARAMETER_SCOPE, compare.METHOD_FACTS, METHOD_COLORS):
        assert isinstance(view, LiveMapping)


def test_no_other_module_writes_its_own_view_class():
    """A class deriving from Mapping or Sequence in the library is a live view written by
    hand; the two in posenc._live are the only ones (records that read as JSON excepted)."""
    root = Path(posenc.__file__).parent
    found = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                if bases & {"Mapping", "Sequence"}:
                    found.append((path.relative_to(root).as_posix(), node.name))
    assert sorted(found) == [("_live.py", "LiveMapping"), ("_live.py", "LiveTuple"),
                             ("experiments/extrapolation/results.py", "_JSONView")]


def test_the_views_follow_a_method_registered_after_them():
    assert "live_probe" not in POSITION_METHODS and "live_probe" not in METHOD_COLORS
    register_position("live_probe", NoPosition, replace=True)
    try:
        assert POSITION_METHODS[-1] == "live_probe" and "live_probe" in METHOD_ORDER
        assert tuple(METHOD_ORDER) == method_names() and METHOD_ORDER == list(method_names())
        assert METHOD_COLORS["live_probe"] == "#777777"  # never described: grey
        assert "live_probe" not in compare.METHODS  # puts position nowhere
    finally:
        unregister_position("live_probe")
    assert "live_probe" not in POSITION_METHODS and tuple(POSITION_METHODS) == tuple(POSITIONS)


@given(st.lists(st.lists(st.text(min_size=1, max_size=3), unique=True), min_size=1,
                max_size=4))
def test_a_live_tuple_and_mapping_read_their_source_on_every_use(states):
    source = []
    names, lengths = LiveTuple(lambda: source), LiveMapping(lambda: source, len)
    for state in states:
        source[:] = state
        assert names == state and list(names) == state and len(names) == len(state)
        assert dict(lengths) == {name: len(name) for name in state}
        for name in state:
            assert name in names and names[state.index(name)] == name
    with pytest.raises(KeyError):
        lengths["not there" * 2]
    with pytest.raises(TypeError):
        hash(names)
