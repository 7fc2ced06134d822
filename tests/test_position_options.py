"""A position method's options as one value (issue 33): a :class:`PositionSpec` carries a
method and its options, each option checked once against that method's own constructor,
and an option named like a keyword of the attention layer (``window``, ``chunk``,
``sinks``, ``temperature``) reaches the method, never the layer, in every way options are
given: the spec, ``TinyLMConfig.options``, a layer pattern's layer and the experiment's
``--options``."""

import copy
import dataclasses
import pickle

import pytest
import torch

from posenc.catalogue import describe_method, forget_method
from posenc.experiments.extrapolation import ExtrapolationConfig
from posenc.experiments.extrapolation.cli import config_from_command_line
from posenc.layer_patterns import PATTERNS, LayerPattern, LayerSpec, register_pattern
from posenc.model import TinyLM, TinyLMConfig
from posenc.nn import (
    AttentionSpec,
    MultiHeadSelfAttention,
    PositionEncoding,
    PositionSpec,
    check_position_options,
    register_position,
    unregister_position,
)
from posenc.nn.positions import build_position

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest.py


class ReachBias(PositionEncoding):
    """A reader's bias whose options share their names with the attention layer's keywords:
    ``-1`` beyond ``window`` tokens, ``-1`` more across a ``chunk`` boundary, ``+1`` on the
    first key when ``sinks``, the whole divided by ``temperature``."""

    def __init__(self, spec, *, window: int = 8, chunk: int = 16, sinks: bool = False,
                 temperature: float = 1.0):
        super().__init__()
        self.window, self.chunk, self.sinks, self.temperature = window, chunk, sinks, temperature

    def score_bias(self, q, k):
        i = torch.arange(q.shape[-2], device=q.device)[:, None]
        j = torch.arange(k.shape[-2], device=k.device)[None, :]
        bias = -((i - j).abs() > self.window).to(q.dtype)
        bias = bias - (i // self.chunk != j // self.chunk).to(q.dtype)
        if self.sinks:
            bias = bias + (j == 0).to(q.dtype)
        return bias / self.temperature  # [q, k]


class WindowBias(PositionEncoding):
    """The issue's example: a bias with one option, ``window``, named like the layer's."""

    def __init__(self, spec, *, window: int = 8):
        super().__init__()
        self.window = window

    def score_bias(self, q, k):
        i = torch.arange(q.shape[-2], device=q.device)[:, None]
        j = torch.arange(k.shape[-2], device=k.device)[None, :]
        return -((i - j).abs() > self.window).to(q.dtype)  # [q, k]


def _registered(name, module, label):
    """A reader's method, registered and described for one test, then removed."""
    method = register_position(name, module, replace=True)
    describe_method(name, label=label, color="#888888")
    yield method
    unregister_position(name)
    forget_method(name)


@pytest.fixture
def winbias():
    yield from _registered("winbias", WindowBias, "window bias")


def test_a_spec_with_window_gives_the_method_its_window_and_the_layer_none(winbias):
    attn = MultiHeadSelfAttention(16, 2, PositionSpec("winbias", window=3))
    assert attn.encoding.window == 3 and attn.window is None
    assert attn(torch.randn(1, 6, 16)).shape == (1, 6, 16)


def test_tinylm_gives_its_window_option_to_the_method_not_the_layer(winbias):
    """The layer's reach used to override the option (``{**options, **reach}``): the
    method kept its default window 8 and every block got a sliding window of 3."""
    model = TinyLM(TinyLMConfig(d_model=16, num_heads=2, position="winbias",
                                options={"window": 3}))
    assert [(b.attn.encoding.window, b.attn.window) for b in model.blocks] == [(3, None)] * 2


#: option -> (a value for the method, a value for the layer's keyword of that name)
NAMES = {"window": (3, 4), "chunk": (3, 4), "sinks": (True, True),
         "temperature": (2.0, (8.0, 0.1))}
DEFAULTS = {"window": 8, "chunk": 16, "sinks": False, "temperature": 1.0}


def _layer_value(attn, name):
    """What the attention layer itself holds for keyword ``name`` (``None``: nothing)."""
    value = getattr(attn, name)
    return value if name != "sinks" or value is None else True


@pytest.fixture
def reach_bias():
    yield from _registered("reach_bias", ReachBias, "reach bias")


@pytest.mark.parametrize("name", NAMES)
def test_a_spec_gives_the_method_its_option_and_the_layer_nothing(reach_bias, name):
    value, _ = NAMES[name]
    attn = MultiHeadSelfAttention(16, 2, PositionSpec("reach_bias", **{name: value}))
    assert getattr(attn.encoding, name) == value
    assert _layer_value(attn, name) is None
    assert attn.position == "reach_bias"
    assert attn(torch.randn(1, 6, 16)).shape == (1, 6, 16)
    causal = MultiHeadSelfAttention(16, 2, PositionSpec("reach_bias", **{name: value}),
                                    causal=True)
    assert getattr(causal.encoding, name) == value and _layer_value(causal, name) is None


@pytest.mark.parametrize("name", NAMES)
def test_a_layer_keyword_beside_a_spec_is_the_layers(reach_bias, name):
    _, for_layer = NAMES[name]
    attn = MultiHeadSelfAttention(16, 2, PositionSpec("reach_bias"), causal=True,
                                  **{name: for_layer})
    assert getattr(attn.encoding, name) == DEFAULTS[name]  # the method keeps its default
    assert _layer_value(attn, name) == for_layer
    assert attn(torch.randn(1, 6, 16)).shape == (1, 6, 16)


@pytest.mark.parametrize("name", NAMES)
def test_a_bare_keyword_that_is_both_the_layers_and_the_methods_is_refused(reach_bias, name):
    """Beside a method's name, ``window=3`` could mean the layer's window or the method's
    option: no silent choice, and the message shows both spellings."""
    _, for_layer = NAMES[name]
    with pytest.raises(TypeError, match=rf"{name}: a keyword of the attention layer and also "
                                        r"an option of position 'reach_bias'.*PositionSpec"):
        MultiHeadSelfAttention(16, 2, "reach_bias", causal=True, **{name: for_layer})
    # at the layer's default it means nothing to the layer: the method keeps its default
    attn = MultiHeadSelfAttention(16, 2, "reach_bias", causal=True, window=None, sinks=False)
    assert attn.encoding.window == 8 and attn.window is None and attn.sinks is None


@pytest.mark.parametrize("name", NAMES)
def test_tinylm_options_reach_the_method_in_every_block(reach_bias, name):
    value, _ = NAMES[name]
    config = TinyLMConfig(d_model=16, num_heads=2, num_layers=3, position="reach_bias",
                          options={name: value})
    model = TinyLM(config)
    for block in model.blocks:
        assert getattr(block.attn.encoding, name) == value
        assert block.attn.window is None and block.attn.chunk is None
        assert block.attn.sinks is None and block.attn.temperature is None
    assert config.position_spec == PositionSpec("reach_bias", **{name: value})
    assert model(torch.zeros(1, 6, dtype=torch.long)).shape == (1, 6, 256)


def test_every_option_at_once_in_a_model_with_nope_blocks(reach_bias):
    """NoPE blocks get no option of the config's method (they take none)."""
    options = {n: v for n, (v, _) in NAMES.items()}
    model = TinyLM(TinyLMConfig(d_model=16, num_heads=2, num_layers=4, position="reach_bias",
                                options=options, nope_every=2))
    assert [b.attn.position for b in model.blocks] == ["reach_bias", "none"] * 2
    for block in model.blocks[::2]:
        assert {n: getattr(block.attn.encoding, n) for n in NAMES} == options
    for block in model.blocks:
        assert all(_layer_value(block.attn, n) is None for n in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_a_pattern_layer_keeps_its_option(reach_bias, name):
    value, _ = NAMES[name]
    pattern = register_pattern(LayerPattern("reach_pattern", (
        dict(position="reach_bias", options={name: value}, reach="window", size=0.25),
        dict(position="reach_bias", options={name: value}),
    )))
    try:
        specs = pattern.layers(2, 16)
        assert specs[0].position_spec == PositionSpec("reach_bias", **{name: value})
        model = TinyLM(TinyLMConfig(d_model=16, num_heads=2, num_layers=2,
                                    pattern="reach_pattern", pattern_length=16))
        local, full = (block.attn for block in model.blocks)
        assert getattr(local.encoding, name) == value and getattr(full.encoding, name) == value
        assert local.window == 4 and full.window is None  # reach: the layer's own fields
        if name != "window":
            assert _layer_value(local, name) is None and _layer_value(full, name) is None
        assert model(torch.zeros(1, 6, dtype=torch.long)).shape == (1, 6, 256)
    finally:
        PATTERNS.pop("reach_pattern")


@pytest.mark.parametrize("name", ["window", "sinks"])
def test_experiment_options_reach_the_method(reach_bias, name):
    value, _ = NAMES[name]
    text = "true" if value is True else str(value)
    config = config_from_command_line(["--preset", "small", "--encodings", "reach_bias",
                                       "--options", f"reach_bias:{name}={text}"])
    assert dict(config.options)["reach_bias"] == ((name, value),)
    model = TinyLM(config.model_config("reach_bias"))
    for block in model.blocks:
        assert getattr(block.attn.encoding, name) == value
        assert _layer_value(block.attn, name) is None
    assert config.method_options("reach_bias")[name] == value


# --- an option of another method is refused, in every way of giving one -------------------

FOREIGN = {
    "attention": lambda: MultiHeadSelfAttention(16, 2, "rope", num_buckets=7),
    "spec": lambda: PositionSpec("rope", num_buckets=7),
    "spec.of": lambda: PositionSpec.of("rope", {"num_buckets": 7}),
    "with_options": lambda: PositionSpec("rope").with_options(num_buckets=7),
    "build_position": lambda: build_position("rope", AttentionSpec(16, 2), num_buckets=7),
    "method.build": lambda: PositionSpec("rope").method.build(AttentionSpec(16, 2),
                                                              num_buckets=7),
    "TinyLMConfig": lambda: TinyLMConfig(position="rope", options={"num_buckets": 7}),
    "with_options (config)": lambda: TinyLMConfig(position="rope").with_options(num_buckets=7),
    "LayerSpec": lambda: LayerSpec(position="rope", options={"num_buckets": 7}),
    "ExtrapolationConfig": lambda: ExtrapolationConfig(options={"rope": {"num_buckets": 7}}),
    "--options": lambda: config_from_command_line(["--options", "rope:num_buckets=7"]),
    "check": lambda: check_position_options("rope", {"num_buckets": 7}),
}


@pytest.mark.parametrize("way", FOREIGN)
def test_an_option_of_another_method_is_refused_naming_it(way):
    """T5's ``num_buckets`` given to RoPE built plain RoPE through the attention layer (it
    took any registered method's option): now every way raises the one check's message,
    naming the option, the method and the options the method takes."""
    with pytest.raises(TypeError) as error:
        FOREIGN[way]()
    assert str(error.value) == (
        "unknown option(s) for position 'rope': num_buckets are not options of 'rope', which "
        "takes base, rope_layout, rope_frequencies (the keyword-only arguments of its "
        "constructor)")


@pytest.mark.parametrize("name", NAMES)
def test_a_layer_keyword_is_not_an_option_of_a_method_without_it(name):
    value, _ = NAMES[name]
    with pytest.raises(TypeError, match=rf"{name} are not options of 'rope'"):
        PositionSpec("rope", **{name: value})
    with pytest.raises(TypeError, match=rf"{name} are not options of 'rope'"):
        TinyLMConfig(position="rope", options={name: value})


def test_options_beside_a_spec_are_refused():
    with pytest.raises(TypeError, match=r"options base given beside PositionSpec\('rope'\): "
                                        r"a PositionSpec holds its method's options"):
        MultiHeadSelfAttention(16, 2, PositionSpec("rope"), base=500.0)
    with pytest.raises(TypeError, match="a method name or a PositionSpec"):
        MultiHeadSelfAttention(16, 2, 3)
    with pytest.raises(ValueError, match="position must be one of"):
        PositionSpec("rope_xyz")


def test_options_are_checked_once_and_built_by_the_spec(monkeypatch):
    """A config checks its options once, when it is made; the model it builds does not
    check them again (every block builds from the config's one spec)."""
    import posenc.nn.positions as positions

    calls = []
    check = positions.check_position_options
    monkeypatch.setattr(positions, "check_position_options",
                        lambda name, options: calls.append(name) or check(name, options))
    config = TinyLMConfig(position="t5", options={"num_buckets": 8}, num_layers=3)
    assert calls == ["t5"]
    model = TinyLM(config)
    assert calls == ["t5"]  # no block checked the options again
    assert all(b.attn.encoding.num_buckets == 8 for b in model.blocks)


# --- the spec as a value ---------------------------------------------------------------------

def test_a_spec_is_a_frozen_hashable_value():
    spec = PositionSpec("t5", num_buckets=16, max_distance=64)
    assert spec.name == "t5" and dict(spec.options) == {"num_buckets": 16, "max_distance": 64}
    assert spec == PositionSpec("t5", max_distance=64, num_buckets=16)
    assert hash(spec) == hash(PositionSpec("t5", max_distance=64, num_buckets=16))
    assert spec != PositionSpec("t5", num_buckets=16)
    assert repr(spec) == "PositionSpec('t5', num_buckets=16, max_distance=64)"
    assert PositionSpec.of("t5", {"num_buckets": 16, "max_distance": 64}) == spec
    assert PositionSpec.of(spec) is spec
    assert PositionSpec.of(spec, {"num_buckets": 8}) == spec.with_options(num_buckets=8)
    assert spec.with_options(num_buckets=8).options["num_buckets"] == 8
    assert spec.options["num_buckets"] == 16  # unchanged
    assert spec.method.name == "t5"
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "rope"
    with pytest.raises(TypeError):
        spec.options["num_buckets"] = 8  # read-only
    for copied in (pickle.loads(pickle.dumps(spec)), copy.deepcopy(spec)):
        assert copied == spec and type(copied.options) is type(spec.options)
    module = spec.build(AttentionSpec(32, 4, causal=True))
    assert module.num_buckets == 16 and module.max_distance == 64
    layer = MultiHeadSelfAttention(32, 4, spec, causal=True)
    assert layer.encoding.num_buckets == 16 and layer.position == "t5"


def test_a_model_with_a_spec_in_its_config_copies_and_pickles():
    model = TinyLM(TinyLMConfig(position="rope", options={"base": 500.0}))
    assert copy.deepcopy(model).config.position_spec == PositionSpec("rope", base=500.0)
    config = pickle.loads(pickle.dumps(model.config))
    assert config == model.config and config.position_spec == model.config.position_spec


def test_value_errors_still_come_from_the_constructor():
    """Names are the spec's to check, values the constructor's (a trial build in the config,
    as before)."""
    with pytest.raises(ValueError):
        TinyLMConfig(position="rope", options={"base": 1.0})
    spec = PositionSpec("learned", interpolate="cubic")  # a known name: accepted here
    with pytest.raises(ValueError):
        spec.build(AttentionSpec(16, 2))
