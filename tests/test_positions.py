"""The position-method registry: every method on any device and dtype, state that
survives saving, cached tables that follow the module, and a method defined here, in
a test file, running through attention, TinyLM and the extrapolation experiment."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from posenc.catalogue import BUILT_IN_ORDER, METHOD_ORDER, describe_method, forget_method
from posenc.compare import METHODS, applies_to, extra_attention_cost, position_parameter_count
from posenc.course.figures.style import METHOD_COLORS
from posenc.experiments.extrapolation import ExtrapolationConfig, main
from posenc.model import TinyLM, TinyLMConfig
from posenc.nn import (
    POSITION_METHODS,
    POSITIONS,
    ALiBiBias,
    MultiHeadSelfAttention,
    PositionEncoding,
    RotaryEmbedding,
    T5RelativeBias,
    register_position,
    unregister_position,
)
from posenc.rope import apply_rope

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest.py

BUILT_IN = ("none", "sinusoidal", "learned", "rope", "alibi", "shaw", "t5",
            "partial_rope", "p_rope", "xpos", "axial_rope",
            "kerple_power", "kerple_log", "fire", "cope", "fox", "stick_breaking")


def _small(position):
    """A 16-row learned table (the methods without that option take nothing)."""
    return {"max_positions": 16} if "max_positions" in POSITIONS[position].options else {}


# --- a method defined here, outside posenc --------------------------------------------------

class LogDistanceBias(PositionEncoding):
    """``-s_h log(1 + |i - j|)``: one learned slope per head on the log of the distance."""

    def __init__(self, spec, *, log_slope_init: float = 0.5):
        super().__init__()
        self.slopes = nn.Parameter(torch.full((spec.num_heads,), float(log_slope_init)))

    def score_bias(self, q, k):
        i = torch.arange(q.shape[-2], device=q.device)
        j = torch.arange(k.shape[-2], device=k.device)
        distance = (i[:, None] - j[None, :]).abs().to(q.dtype)  # [q, k]
        return -self.slopes.to(q.dtype)[:, None, None] * torch.log1p(distance)  # [h, q, k]


def register_log_distance():
    """Register the method above as ``"logdist"`` and give the course its facts (also
    imported by the CLI test)."""
    method = register_position("logdist", LogDistanceBias, replace=True)
    describe_method(
        "logdist", label="log-distance bias", color="#999999",
        where="learned bias on the logits", models="none (a test)",
        cost=lambda b, h, n, d: {"matmul_flops": 0, "elementwise_flops": b * h * n * n,
                                 "memory": h * n * n})
    return method


@pytest.fixture
def logdist():
    method = register_log_distance()
    yield method
    unregister_position("logdist")
    forget_method("logdist")


# --- the registry -----------------------------------------------------------------------------

def test_built_in_methods_are_registered_in_order():
    assert tuple(POSITION_METHODS) == BUILT_IN == tuple(POSITIONS)
    assert tuple(METHOD_ORDER) == BUILT_IN_ORDER == BUILT_IN
    # chapter 8 compares the methods of chapters 2-7; later ones are described
    # in_comparison=False in the catalogue
    assert tuple(METHODS) == ("sinusoidal", "learned", "rope", "alibi", "t5", "shaw")
    hooks = {name: POSITIONS[name].hooks for name in BUILT_IN}
    assert hooks == {"none": (), "sinusoidal": ("embed",), "learned": ("embed",),
                     "rope": ("rotate",), "alibi": ("score_bias",), "t5": ("score_bias",),
                     "shaw": ("score_bias", "value_term"), "partial_rope": ("rotate",),
                     "p_rope": ("rotate",), "xpos": ("rotate",), "axial_rope": ("rotate",),
                     "kerple_power": ("score_bias",), "kerple_log": ("score_bias",),
                     "fire": ("score_bias",), "cope": ("score_bias",),
                     "fox": ("score_bias",), "stick_breaking": ("normalise",)}


def test_the_course_order_is_the_catalogues_not_the_import_order():
    """Issue 33: the order of the tables, legends and lists is posenc.catalogue's table,
    explicit: registering the built-in methods in another order changes none of it."""
    from posenc.course.figures.style import METHOD_COLORS

    before = (tuple(METHOD_ORDER), tuple(METHODS), tuple(METHOD_COLORS))
    saved = dict(POSITIONS)
    try:
        POSITIONS.clear()
        POSITIONS.update(reversed(saved.items()))
        assert tuple(POSITIONS) != BUILT_IN
        assert (tuple(METHOD_ORDER), tuple(METHODS), tuple(METHOD_COLORS)) == before
        assert tuple(METHOD_ORDER) == BUILT_IN_ORDER
    finally:
        POSITIONS.clear()
        POSITIONS.update(saved)


def test_the_torch_registry_holds_no_course_fact():
    """posenc.nn keeps what torch needs (name, module, build, options); the course's facts
    live in posenc.catalogue."""
    import dataclasses

    from posenc.nn import PositionMethod

    fields = {f.name for f in dataclasses.fields(PositionMethod)}
    assert fields == {"name", "module", "factory", "options"}
    course = ("label", "family", "where", "models", "paper", "parameter_scope", "color",
              "cost", "in_comparison")
    for method in POSITIONS.values():
        assert not any(hasattr(method, fact) for fact in course), method.name


def test_registering_bad_methods_fails_clearly(logdist):
    with pytest.raises(ValueError, match="already registered"):
        register_position("logdist", LogDistanceBias)
    with pytest.raises(TypeError, match="PositionEncoding subclass"):
        register_position("plain", nn.Linear)

    class Both(PositionEncoding):
        def embed(self, x):
            return x

        def rotate(self, q, k):
            return q, k

    with pytest.raises(TypeError, match="no other hook"):
        register_position("both", Both)
    with pytest.raises(ValueError, match="identifier"):
        register_position("two words", LogDistanceBias)
    with pytest.raises(TypeError, match="unknown option"):
        MultiHeadSelfAttention(16, 2, "logdist", log_slope=1.0)
    assert "both" not in POSITIONS and "plain" not in POSITIONS


# --- every method, any device and dtype ------------------------------------------------------

@pytest.mark.parametrize("position", BUILT_IN)
@pytest.mark.parametrize("causal", [False, True])
def test_every_method_runs_on_the_meta_device(position, causal):
    layer = MultiHeadSelfAttention(64, 4, position=position, causal=causal).to("meta")
    y = layer(torch.randn(2, 10, 64, device="meta"))
    assert y.shape == (2, 10, 64) and y.device.type == "meta"
    model = TinyLM(TinyLMConfig(position=position, options=_small(position))).to("meta")
    logits = model(torch.zeros(1, 12, dtype=torch.long, device="meta"))
    assert logits.shape == (1, 12, 256) and logits.device.type == "meta"


def test_alibi_bias_follows_the_module():
    layer = MultiHeadSelfAttention(64, 4, position="alibi").to("meta")
    assert layer.encoding._bias.device.type == "meta"
    layer(torch.randn(1, 6, 64, device="meta"))
    assert layer.encoding._bias.device.type == "meta" and layer.encoding._bias.shape == (4, 6, 6)


@pytest.mark.parametrize("position", BUILT_IN)
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_every_method_keeps_the_input_dtype(position, dtype):
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(64, 4, position=position, causal=True).to(dtype)
    x = torch.randn(2, 10, 64, dtype=dtype)
    y = layer(x)
    assert y.shape == x.shape and y.dtype == dtype and torch.isfinite(y).all()
    if dtype == torch.bfloat16:  # same weights in float32: bf16 rounding, nothing worse
        reference = layer.float()(x.float())
        assert (y.float() - reference).abs().max() < 0.1 * reference.abs().max()
    model = TinyLM(TinyLMConfig(position=position, options=_small(position))).to(dtype)
    logits = model(torch.randint(0, 256, (1, 12)))
    assert logits.shape == (1, 12, 256) and logits.dtype == dtype


def test_rope_angles_stay_float64_in_a_bfloat16_module():
    """The Hugging Face bug fixed in transformers PR #29285: frequencies cast with the model.

    In bf16, position 2000 times theta_0 = 1 is held as 2000 exactly, but theta_i of
    the other pairs and their products lose whole radians; the module must not."""
    rotary = RotaryEmbedding(64).to(torch.bfloat16)
    assert rotary.inv_freq.dtype == torch.float64
    x = torch.randn(1, 2048, 64)
    out = rotary(x.to(torch.bfloat16))
    rotary(x[:, :8].to(torch.bfloat16))  # a shorter sequence reuses the cache
    assert rotary._cos.dtype == torch.float64 and rotary._cos.shape[0] == 2048
    exact = apply_rope(x.to(torch.bfloat16).double().numpy())
    assert np.abs(out.double().numpy() - exact).max() < 0.05  # bf16 output rounding only


def test_cached_tables_grow_and_are_not_saved():
    alibi, t5 = ALiBiBias(2), T5RelativeBias(2, num_buckets=8, max_distance=16)
    alibi(5), t5(5)
    assert alibi._bias.shape == (2, 5, 5) and t5._buckets.shape == (5, 5)
    torch.testing.assert_close(alibi(3), alibi(5)[:, :3, :3])
    alibi(9)
    assert alibi._bias.shape == (2, 9, 9)
    assert "_bias" not in alibi.state_dict() and list(t5.state_dict()) == ["embedding.weight"]
    rotary = RotaryEmbedding(8)
    # the frequencies and the attention factor (extra state), not the cos/sin cache
    assert list(rotary.state_dict()) == ["inv_freq", "_extra_state"]


# --- state survives saving ---------------------------------------------------------------------

@pytest.mark.parametrize("position", BUILT_IN)
def test_save_load_round_trip_keeps_outputs_identical(position, tmp_path):
    torch.manual_seed(0)
    config = TinyLMConfig(position=position, options=_small(position), d_model=32,
                          num_heads=4)
    model = TinyLM(config).eval()
    if position == "rope":  # state set after construction must survive too
        model.set_rope_frequencies(model.rotary_embeddings()[0].frequencies / 3)
    tokens = torch.randint(0, 256, (2, 12))
    expected = model(tokens)
    torch.save(model.state_dict(), tmp_path / "model.pt")
    torch.manual_seed(1)
    fresh = TinyLM(config).eval()
    fresh.load_state_dict(torch.load(tmp_path / "model.pt"))
    assert torch.equal(fresh(tokens), expected)
    layer = MultiHeadSelfAttention(32, 4, position, causal=True).eval()
    again = MultiHeadSelfAttention(32, 4, position, causal=True).eval()
    again.load_state_dict(layer.state_dict())
    x = torch.randn(1, 7, 32)
    assert torch.equal(again(x), layer(x))


def test_rope_frequencies_are_saved_with_the_model():
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(position="rope"))
    interpolated = model.rotary_embeddings()[0].frequencies / 4
    model.set_rope_frequencies(interpolated)
    fresh = TinyLM(TinyLMConfig(position="rope"))
    fresh.load_state_dict(model.state_dict())
    for rotary in fresh.rotary_embeddings():
        np.testing.assert_array_equal(rotary.frequencies, interpolated)
        assert rotary.attention_factor == 1.0


def test_rope_attention_factor_is_saved_with_the_model():
    """YaRN's factor is state the scores depend on: a reloaded model must keep it."""
    model = TinyLM(TinyLMConfig(position="rope"))
    model.set_rope_frequencies(model.rotary_embeddings()[0].frequencies / 4, 1.1386)
    fresh = TinyLM(TinyLMConfig(position="rope"))
    fresh.load_state_dict(model.state_dict())
    assert [r.attention_factor for r in fresh.rotary_embeddings()] == [1.1386] * 2


# --- a method defined in this file -------------------------------------------------------------

def test_own_method_in_attention_is_scores_plus_its_bias(logdist):
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(16, 2, "logdist", causal=True, log_slope_init=0.7).double()
    x = torch.randn(2, 9, 16, dtype=torch.float64)
    b, s, d = x.shape
    q, k, v = layer.qkv(x).view(b, s, 3, 2, 8).permute(2, 0, 3, 1, 4)
    i, j = np.arange(9)[:, None], np.arange(9)[None, :]
    bias = np.where(j <= i, -0.7 * np.log(1 + np.abs(i - j)), -np.inf)  # written out again
    scores = q @ k.transpose(-1, -2) / math.sqrt(8) + torch.from_numpy(bias)
    expected = layer.out((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d))
    torch.testing.assert_close(layer(x), expected)
    assert position_parameter_count("logdist", d_model=16, num_heads=2) == 2
    assert "logdist" in METHODS and METHOD_COLORS["logdist"] == "#999999"
    assert applies_to("logdist") == "attention scores"
    assert extra_attention_cost("logdist", d_model=16, num_heads=2, seq_len=4)["memory"] == 32


def test_own_method_in_the_tiny_lm_is_causal_and_trains(logdist):
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(position="logdist", vocab_size=50, d_model=32, num_layers=2,
                                options={"log_slope_init": 0.3}))
    assert all(block.attn.encoding.slopes[0] == 0.3 for block in model.blocks)
    x = torch.randint(0, 50, (2, 14))
    x2 = x.clone()
    x2[:, 7:] = (x2[:, 7:] + 1) % 50
    torch.testing.assert_close(model(x2)[:, :7], model(x)[:, :7], rtol=0, atol=0)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    first = None
    for _ in range(30):
        loss = torch.nn.functional.cross_entropy(model(x[:, :-1]).transpose(1, 2), x[:, 1:])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        first = first or loss.item()
    assert loss.item() < 0.5 * first
    assert model.blocks[0].attn.encoding.slopes.grad is not None


TINY_ARGS = ["--preset", "text", "--train-length", "8", "--d-model", "16", "--num-heads", "2",
             "--num-layers", "1",
             "--d-ff", "32", "--steps", "30", "--batch-size", "8", "--learning-rate", "0.01",
             "--warmup-steps", "4", "--eval-tokens", "512", "--log-every", "10",
             "--no-progress"]


def _check_results(results):
    assert list(results["variants"]) == ["logdist", "alibi"]
    entry = results["variants"]["logdist"]
    assert entry["label"] == "log-distance bias" and entry["num_parameters"] > 0
    assert all(0 < x < 2 * math.log(256) for x in entry["loss"])
    assert entry["history"]["loss"][-1] < entry["history"]["loss"][0] - 0.5
    assert results["config"] == ExtrapolationConfig(
        encodings=("logdist", "alibi"), train_length=8, d_model=16, num_heads=2, num_layers=1,
        d_ff=32, steps=30, batch_size=8, learning_rate=0.01, warmup_steps=4, eval_tokens=512,
        log_every=10, options={"t5": {"bias_lr_scale": 10.0}}).to_dict()  # the text preset's


def test_own_method_runs_through_the_experiment(logdist, tmp_path, capsys):
    results = main(["--encodings", "logdist,alibi", *TINY_ARGS,
                    "--output", str(tmp_path / "out.json")])
    _check_results(results)
    assert "log-distance bias" in capsys.readouterr().out


def test_command_line_registers_a_method_from_a_module(logdist, tmp_path):
    """``python -m posenc.experiments.extrapolation --register MODULE``: the module (here
    one that imports this test file) registers the method before the config is read."""
    (tmp_path / "my_positions.py").write_text(
        "import test_positions\ntest_positions.register_log_distance()\n")
    env = {**os.environ, "PYTHONHASHSEED": "0",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(Path(__file__).parents[1] / "src"),
                                          str(Path(__file__).parent)])}  # this tree's posenc
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [sys.executable, "-m", "posenc.experiments.extrapolation", "--register", "my_positions",
         "--encodings", "logdist,alibi", *TINY_ARGS, "--output", str(out)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    _check_results(json.loads(out.read_text()))


def test_own_method_options_are_set_from_the_command_line(logdist):
    from posenc.experiments.extrapolation import PRESETS, config_hash
    from posenc.experiments.extrapolation.cli import config_from_command_line

    config = config_from_command_line(["--preset", "small", "--encodings", "logdist,alibi",
                                       "--options", "logdist:log_slope_init=0.25"])
    assert dict(config.options)["logdist"] == (("log_slope_init", 0.25),)
    assert dict(config.options)["t5"] == (("max_distance", 32),)  # the preset's, kept
    model = TinyLM(config.model_config("logdist"))
    slopes = model.blocks[0].attn.encoding.slopes.detach()
    assert torch.equal(slopes, torch.full((config.num_heads,), 0.25))
    assert config.to_dict()["options"] == {"logdist": {"log_slope_init": 0.25},
                                           "t5": {"max_distance": 32}}
    assert ExtrapolationConfig.from_dict(config.to_dict()) == config
    assert config_hash(config) != config_hash(config.replace(options=PRESETS["small"].options))
    with pytest.raises(TypeError, match=r"decay are not options of 'logdist', which takes "
                                        r"log_slope_init"):
        config_from_command_line(["--encodings", "logdist", "--options", "logdist:decay=1"])
    with pytest.raises(SystemExit):
        config_from_command_line(["--options", "logdist=0.3"])


def test_a_results_file_reruns_from_its_own_recorded_command(logdist, tmp_path):
    """Issue 19: the results record the exact command (a ``--register`` given as a ``.py``
    path, with its source's SHA-256); running that command again gives the same numbers."""
    from posenc.course.results import load_results

    module = tmp_path / "my_positions.py"
    module.write_text("import test_positions\ntest_positions.register_log_distance()\n")
    first = tmp_path / "first.json"
    main(["--register", str(module), "--encodings", "logdist,alibi",
          "--options", "logdist:log_slope_init=0.25", *TINY_ARGS, "--output", str(first)])
    recorded = load_results(first)  # any path, not only the committed files
    argv = recorded["argv"]
    assert argv[1:3] == ["-m", "posenc.experiments.extrapolation"]
    assert recorded["register"] == [{"module": str(module), "sha256": __import__(
        "hashlib").sha256(module.read_bytes()).hexdigest()}]
    assert recorded["config"]["options"] == {"logdist": {"log_slope_init": 0.25},
                                             "t5": {"bias_lr_scale": 10.0}}  # text preset's
    second = tmp_path / "second.json"
    argv = [*argv[:argv.index("--output") + 1], str(second), *argv[argv.index("--output") + 2:]]
    env = {**os.environ, "PYTHONHASHSEED": "0",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1] / "src"),
                                          str(Path(__file__).parent)])}
    proc = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    rerun = load_results(str(second))
    assert rerun["config_hash"] == recorded["config_hash"]
    assert rerun["register"] == recorded["register"]
    for name, entry in recorded["variants"].items():
        assert rerun["variants"][name]["loss"] == entry["loss"], name
        assert rerun["variants"][name]["history"]["loss"] == entry["history"]["loss"], name
    with pytest.raises(ValueError, match="no results file"):
        load_results(str(tmp_path / "missing.json"))
