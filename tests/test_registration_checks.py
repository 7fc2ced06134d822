"""register_position checks a method on the spot: each mistake a new user made
(issue 19) is refused at registration with a message naming the method, the hook and
the fix, and a hook output of the wrong shape or dtype fails clearly at run time."""

import subprocess
import sys

import pytest
import torch
from torch import nn

from posenc.catalogue import check_color, describe_method, facts, forget_method
from posenc.nn import (
    POSITIONS,
    MultiHeadSelfAttention,
    NoPosition,
    PositionEncoding,
    register_position,
)

pytestmark = pytest.mark.usefixtures("one_thread")


class GoodBias(PositionEncoding):
    def __init__(self, spec, *, decay: float = 0.1):
        super().__init__()
        self.decay = decay

    def score_bias(self, q, k):
        i = torch.arange(q.shape[-2], device=q.device)
        j = torch.arange(k.shape[-2], device=k.device)
        return -self.decay * (i[:, None] - j[None, :]).abs().to(q.dtype)


class Misspelled(PositionEncoding):
    def __init__(self, spec):
        super().__init__()

    def scores_bias(self, q, k):  # never called: not a hook
        return torch.zeros(q.shape[-2], k.shape[-2])


class NoHook(PositionEncoding):
    def __init__(self, spec):
        super().__init__()


class AlsoNone(NoPosition):
    """No position on purpose: a NoPosition subclass may override no hook."""


class NoSpec(PositionEncoding):
    def __init__(self, num_heads):  # no spec: TinyLM would call NoSpec(spec)
        super().__init__()
        self.table = nn.Parameter(torch.zeros(num_heads, 4, 4))

    def score_bias(self, q, k):
        return self.table


class TableAlone(PositionEncoding):
    def __init__(self, spec):
        super().__init__()
        self.table = nn.Parameter(torch.randn(64, spec.d_model))

    def embed(self, x):
        return self.table[: x.shape[1]].to(x.dtype).expand_as(x)  # forgot "x +"


class DropsFeature(PositionEncoding):
    def __init__(self, spec):
        super().__init__()

    def rotate(self, q, k):
        return q[..., :-1], k[..., :-1]


class WrongBiasShape(PositionEncoding):
    def __init__(self, spec):
        super().__init__()

    def score_bias(self, q, k):
        return torch.zeros(q.shape[-2], k.shape[-2] + 7, dtype=q.dtype)


class WrongBiasDtype(PositionEncoding):
    def __init__(self, spec):
        super().__init__()

    def score_bias(self, q, k):
        return torch.zeros(q.shape[-2], k.shape[-2], dtype=torch.float64)


class WrongValueTerm(PositionEncoding):
    def __init__(self, spec):
        super().__init__()

    def score_bias(self, q, k):
        return None

    def value_term(self, weights, v):
        return torch.zeros(v.shape[-2], v.shape[-1] + 1, dtype=v.dtype)


@pytest.mark.parametrize("module, hook, fix", [
    (Misspelled, "scores_bias", "rename it score_bias"),
    (NoHook, "overrides no hook",
     "override one of embed, rotate, score_bias, normalise, value_term"),
    (NoSpec, "cannot be built|cannot build", r"def __init__\(self, spec, \*, option=default\)"),
    (TableAlone, "hook embed", r"return x \+ table"),
    (DropsFeature, "hook rotate", "each of its input's shape"),
    (WrongBiasShape, "hook score_bias", r"broadcastable to \[batch, heads, seq_q, seq_k\]"),
    (WrongBiasDtype, "hook score_bias", r"\.to\(q\.dtype\)"),
    (WrongValueTerm, "hook value_term", r"\[batch, heads, seq_q, head_dim\]"),
])
def test_each_mistake_is_refused_naming_method_hook_and_fix(module, hook, fix):
    name = f"bad_{module.__name__.lower()}"
    with pytest.raises(TypeError) as error:
        register_position(name, module)
    message = str(error.value)
    assert f"method {name!r}" in message
    assert any(h in message for h in hook.split("|")), message
    assert "Fix:" in message and __import__("re").search(fix, message), message
    assert name not in POSITIONS


def test_a_correct_method_registers_and_a_no_position_subclass_may_have_no_hook():
    try:
        register_position("good_bias", GoodBias)
        register_position("also_none", AlsoNone)
        y = MultiHeadSelfAttention(16, 2, "good_bias", decay=0.3)(torch.randn(1, 4, 16))
        assert y.shape == (1, 4, 16)
    finally:
        POSITIONS.pop("good_bias", None)
        POSITIONS.pop("also_none", None)


def test_a_bad_colour_is_refused_when_a_method_is_described():
    with pytest.raises(ValueError, match=r"method 'brown'.*color='brownish'.*hex colour"):
        describe_method("brown", color="brownish")
    with pytest.raises(ValueError, match="color=12"):
        check_color("m", 12)
    assert facts("brown").color == "#777777"  # nothing was stored
    for good in ("#abc", "#a1b2c3", "#A1B2C3FF"):
        assert check_color("m", good) == good
    for bad in ("#12345", "#ggg", "123456", ""):
        with pytest.raises(ValueError):
            check_color("m", bad)


def test_named_colours_need_matplotlib_which_core_never_imports():
    """Without matplotlib a named colour is refused, with a message saying why; a hex one
    is accepted; and registering never imports matplotlib."""
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'matplotlib':\n"
        "            raise ModuleNotFoundError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from posenc.catalogue import check_color\n"
        "assert check_color('m', '#000') == '#000'\n"
        "try:\n"
        "    check_color('m', 'tab:blue')\n"
        "except ValueError as e:\n"
        "    assert 'matplotlib, which is not installed' in str(e), e\n"
        "else:\n"
        "    raise SystemExit('named colour accepted without matplotlib')\n"
        "assert not any(m.startswith('matplotlib') for m in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    pytest.importorskip("matplotlib")
    assert check_color("m", "tab:blue") == "tab:blue"


class LateWrongShape(GoodBias):
    """Right at the registration sizes, wrong at others: caught at run time."""

    def score_bias(self, q, k):
        bias = super().score_bias(q, k)
        return bias if q.shape[-2] == 5 else bias[:, :-1]


def test_a_wrong_bias_at_run_time_fails_naming_the_method_not_deep_in_torch():
    try:
        register_position("late", LateWrongShape)
        layer = MultiHeadSelfAttention(16, 2, "late")
        layer(torch.randn(1, 5, 16))
        with pytest.raises(TypeError, match=r"method 'late', hook score_bias: returned shape "
                                            r"\(6, 5\)"):
            layer(torch.randn(1, 6, 16))
    finally:
        POSITIONS.pop("late", None)


def test_built_in_methods_have_distinct_colours():
    """Issue 19: shaw and partial_rope shared #E69F00, so a figure with both mixed them up."""
    from posenc.course.figures.style import METHOD_COLORS

    colours = {name: facts(name).color.lower() for name in POSITIONS}
    assert len(set(colours.values())) == len(colours), colours
    assert all(METHOD_COLORS[name].lower() == colour for name, colour in colours.items())


def test_registration_check_leaves_the_random_stream_alone():
    # the trial build runs where a reader registers (a notebook cell between seeded runs)
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    try:
        register_position("stream_bias", GoodBias)
        assert torch.equal(torch.rand(3), expected)
    finally:
        POSITIONS.pop("stream_bias", None)


@pytest.mark.parametrize("keyword", ["variants", "finetunable", "record", "undefined_note"])
def test_the_experiments_keywords_are_refused_naming_where_they_went(keyword):
    """Issue 33: what the extrapolation experiment does with a method is registered in the
    experiment's package; register_position refuses its old keywords and says where."""
    with pytest.raises(TypeError, match=rf"method 'moved_bias': {keyword} belong to the "
                       r"extrapolation experiment.*register_experiment_method\('moved_bias'"):
        register_position("moved_bias", GoodBias, color="#123456", **{keyword: None})
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        register_position("moved_bias", GoodBias, colour="#123456")
    assert "moved_bias" not in POSITIONS


@pytest.mark.parametrize("keyword", ["label", "family", "where", "models", "paper",
                                     "parameter_scope", "color", "cost", "in_comparison"])
def test_the_course_facts_are_refused_naming_the_catalogue(keyword):
    """Issue 33: what the course says about a method is the catalogue's
    (posenc.catalogue.describe_method), not the torch registry's."""
    with pytest.raises(TypeError, match=rf"method 'moved_bias': {keyword} belong to the "
                       r"course's catalogue.*describe_method\('moved_bias'"):
        register_position("moved_bias", GoodBias, **{keyword: None})
    assert "moved_bias" not in POSITIONS


def test_a_method_without_facts_gets_the_defaults_and_describe_method_sets_them():
    from posenc.compare import ALL_METHODS, METHODS
    from posenc.course.figures.style import METHOD_COLORS

    try:
        register_position("plain_bias", GoodBias)
        plain = facts("plain_bias")
        assert (plain.label, plain.color, plain.in_comparison, plain.cost) == (
            "plain_bias", "#777777", False, None)
        assert METHOD_COLORS["plain_bias"] == "#777777"
        assert "plain_bias" in ALL_METHODS and "plain_bias" not in METHODS
        described = describe_method("plain_bias", label="plain bias", color="#123456")
        assert facts("plain_bias") is described and described.in_comparison
        assert METHOD_COLORS["plain_bias"] == "#123456" and "plain_bias" in METHODS
    finally:
        POSITIONS.pop("plain_bias", None)
        forget_method("plain_bias")
    assert facts("plain_bias").label == "plain_bias"


def test_the_protocols_own_example_runs_as_written():
    """The recipe in posenc.nn.positions' docstring: one class, register_position, and
    optionally describe_method."""
    import textwrap

    import posenc
    import posenc.catalogue
    import posenc.nn.positions as positions

    doc = positions.__doc__
    code = doc[doc.index("notebook cell::") + len("notebook cell::"):doc.index("The constructor")]
    try:
        exec(textwrap.dedent(code), {"PositionEncoding": PositionEncoding, "torch": torch,
                                     "register_position": register_position, "posenc": posenc})
        assert MultiHeadSelfAttention(16, 2, "distance")(torch.randn(1, 4, 16)).shape == (1, 4, 16)
        assert facts("distance").label == "distance bias"
        assert facts("distance").color == "#888888"
    finally:
        POSITIONS.pop("distance", None)
        forget_method("distance")
