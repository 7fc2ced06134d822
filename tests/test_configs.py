"""posenc.configs (issue 35): the position fields of real config.json files, layer by layer.

The reference is Hugging Face's own code, not a re-derivation: for every bundled config,
the config is built by its family's ``PretrainedConfig`` subclass
(``transformers.CONFIG_MAPPING[model_type]``), its family's rotary module
(``<Family>RotaryEmbedding``, which calls ``ROPE_INIT_FUNCTIONS[rope_type]`` or the
family's ``compute_default_rope_parameters``) gives ``inv_freq`` and
``attention_scaling`` per layer type, and its attention modules (built on the meta
device, no weights) say which layers rotate, how far they see and whether they have sinks.

Precision: Hugging Face computes the frequencies in float32. To compare at a relative
tolerance of 1e-12 the same Hugging Face functions are run with float64 as their float
type: the ``torch`` their modules see is ``torch`` with ``torch.float`` and
``torch.float32`` meaning ``torch.float64`` (and ``Tensor.float()`` meaning
``Tensor.double()``), nothing else changed (:func:`hf_float64`). The unpatched float32 run
is compared too, at float32's tolerance, so the patch cannot have changed what is computed.
"""

from __future__ import annotations

import ast
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hf_reference import _family_module, _has_rotary, hf_config, hf_float64, hf_reference
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.configs import (
    FAMILIES,
    ROPE_KEYS,
    bundled_names,
    load_bundled,
    read_bundled,
    read_config,
)
from posenc.rope import rope_frequencies

CONFIGS = Path(__file__).resolve().parents[1] / "src" / "posenc" / "configs"
NAMES = bundled_names()


# --- Hugging Face, the reference ---------------------------------------------------------

@pytest.fixture(scope="module")
def hf():
    """transformers (test only; requirements.txt pins the version)."""
    return pytest.importorskip("transformers")


# the harness (hf_config, hf_reference, hf_float64, ...) lives in tests/hf_reference.py,
# shared with test_configs_real.py (conftest.py puts tests/ on sys.path)

# --- every bundled config against Hugging Face ----------------------------------------------

DEFAULTS_FOUND_IN = (r"transformers 5\.23\.0 configuration_\w+\.py defaults \(Hugging Face's "
                     r"configuration class, documented as [\w.-]+/[\w.-]+\); not the "
                     r"checkpoint's own file")


def test_at_least_fifteen_real_configs_are_bundled_with_their_source_and_date():
    assert len(NAMES) >= 15
    for name in NAMES:
        config = load_bundled(name)
        assert re.fullmatch(r"[\w.-]+/[\w.-]+/config\.json", config["_source"]), name
        # the release month, the year alone where a source gives no month, or "unknown"
        if config["_date"] != "unknown":
            year, *month = map(int, config["_date"].split("-"))
            assert 2023 <= year <= 2026 and all(1 <= m <= 12 for m in month), name
        # a public copy of the file at a commit, or the configuration class's defaults
        assert (re.fullmatch(r"[\w.-]+/[\w.-]+/\S+@[0-9a-f]{40}( \(.+\))?",
                             config["_found_in"])
                or re.fullmatch(DEFAULTS_FOUND_IN, config["_found_in"])), name
        model = read_config(config)
        assert model.source == config["_source"] and model.date == config["_date"]
        assert len(model.layers) == model.num_layers > 0


@pytest.mark.parametrize("name", NAMES)
def test_bundled_config_matches_hugging_face_layer_by_layer(hf, name):
    config = load_bundled(name)
    ours = read_config(config)
    reference = hf_reference(hf, config)
    assert len(ours.layers) == len(reference)
    for layer, (inv, scaling, window, sinks, _) in zip(ours.layers, reference, strict=True):
        where = f"{name} layer {layer.index}"
        if inv is None:
            assert layer.frequencies is None and layer.method == "none", where
        else:
            assert layer.method != "none", where
            assert layer.frequencies.dtype == np.float64
            np.testing.assert_allclose(layer.frequencies, inv, rtol=1e-12, atol=0, err_msg=where)
            assert layer.attention_factor == pytest.approx(scaling, rel=1e-12), where
            assert layer.rotary_dim == 2 * len(inv) or layer.method == "proportional"
        assert layer.window == window, where
        assert layer.sinks == sinks, where


@pytest.mark.parametrize("name", NAMES)
def test_the_float64_reference_agrees_with_hugging_faces_float32_run(hf, name):
    """The float64 patch changes precision only: Hugging Face's own float32 numbers agree
    to float32's rounding (``base ** x`` in float32 errs by about ``2**-24 * ln(base)``
    relative, ``ln(base) <= 16`` here: a few 1e-6)."""
    config = load_bundled(name)
    exact = hf_reference(hf, config)
    plain = hf_reference(hf, config, float64=False)
    for (a, sa, *_), (b, sb, *_) in zip(exact, plain, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=4e-6, atol=0)
            assert sa == pytest.approx(sb, rel=1e-6)


def test_longrope_frequencies_past_the_training_length_are_hugging_faces_long_ones(hf):
    from transformers import modeling_rope_utils

    config = load_bundled("phi-3.5-mini-instruct")
    layer = read_config(config).layers[0]
    cfg = hf_config(hf, config)
    length0 = cfg.rope_parameters["original_max_position_embeddings"]
    with hf_float64([modeling_rope_utils]):
        long, _ = modeling_rope_utils.ROPE_INIT_FUNCTIONS["longrope"](cfg, None,
                                                                       seq_len=length0 + 1)
    np.testing.assert_allclose(layer.frequencies_at(length0 + 1), long.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(layer.frequencies_at(length0), layer.frequencies)


@pytest.mark.parametrize("seq_len", [100, 4096, 5000, 20000])
def test_dynamic_ntk_follows_hugging_face_with_the_sequence_length(hf, seq_len):
    from transformers import modeling_rope_utils

    config = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8,
              "num_hidden_layers": 2, "max_position_embeddings": 4096, "rope_theta": 10000.0,
              "rope_scaling": {"rope_type": "dynamic", "factor": 4.0}}
    layer = read_config(config).layers[1]
    with hf_float64([modeling_rope_utils]):
        ref, scaling = modeling_rope_utils.ROPE_INIT_FUNCTIONS["dynamic"](
            hf_config(hf, config), None, seq_len=seq_len)
    np.testing.assert_allclose(layer.frequencies_at(seq_len), ref.numpy(), rtol=1e-12)
    assert layer.attention_factor == scaling == 1.0


LLAMA4_SHAPED = {  # a small Llama 4-shaped config: Scout's rope parameters, fewer layers
    "model_type": "llama4_text", "hidden_size": 512, "num_attention_heads": 4, "head_dim": 128,
    "num_hidden_layers": 8, "num_key_value_heads": 2, "intermediate_size": 64,
    "intermediate_size_mlp": 128, "num_local_experts": 2, "max_position_embeddings": 10485760,
    "rope_parameters": {"rope_type": "llama3", "factor": 16.0, "high_freq_factor": 1.0,
                        "low_freq_factor": 1.0, "original_max_position_embeddings": 8192,
                        "rope_theta": 500000.0},
    "attention_chunk_size": 8192, "attn_temperature_tuning": True, "floor_scale": 8192,
    "attn_scale": 0.1}


def test_llama4_nope_layers_chunks_and_temperature_match_hugging_face(hf):
    """Llama 4: high_freq_factor == low_freq_factor (an empty blend band), NoPE every 4th
    layer with the temperature, chunked attention on the RoPE layers."""
    import torch

    ours = read_config(LLAMA4_SHAPED)
    reference = hf_reference(hf, LLAMA4_SHAPED)
    assert [la.method for la in ours.layers] == ["llama3"] * 3 + ["none"] + ["llama3"] * 3 + [
        "none"]
    for layer, (inv, _, _, _, attention) in zip(ours.layers, reference, strict=True):
        assert (layer.frequencies is None) == (inv is None) == (not attention.use_rope)
        if inv is not None:
            np.testing.assert_allclose(layer.frequencies, inv, rtol=1e-12)
            assert layer.chunk == 8192 and layer.temperature is None
        else:
            assert layer.chunk is None and layer.temperature is not None
            positions = torch.arange(0, 70000, 997)
            expected = (torch.log1p(torch.floor((positions.double() + 1.0) / attention.floor_scale))
                        * attention.attn_scale + 1.0)
            np.testing.assert_allclose(layer.temperature.scale(positions.numpy()),
                                       expected.numpy(), rtol=1e-12)


def test_ministral3_temperature_is_hugging_faces_llama_4_scaling(hf):
    import torch

    module = _family_module(hf, "ministral3")
    config = load_bundled("ministral-3-3b-instruct-2512")
    layers = read_config(config).layers
    beta = config["text_config"]["rope_parameters"]["llama_4_scaling_beta"]
    length0 = config["text_config"]["rope_parameters"]["original_max_position_embeddings"]
    positions = torch.arange(0, 300000, 1013)[None, :]
    expected = module.get_llama_4_attn_scale(positions.double(), beta, length0)
    assert all(la.temperature is layers[0].temperature for la in layers)
    np.testing.assert_allclose(layers[0].temperature.scale(positions.numpy()[0]),
                               expected.flatten().numpy(), rtol=1e-12)


def test_deepseek_softmax_scale_is_hugging_faces(hf):
    config = load_bundled("deepseek-v3")
    layer = read_config(config).layers[0]
    attention = hf_reference(hf, config)[0][4]
    assert layer.rotary_dim == layer.head_dim == config["qk_rope_head_dim"]
    qk_head_dim = config["qk_nope_head_dim"] + config["qk_rope_head_dim"]
    assert layer.softmax_scale_factor == pytest.approx(attention.scaling * qk_head_dim ** 0.5,
                                                       rel=1e-12)


def test_kimi_linear_layers_are_hugging_faces_and_none_rotates(hf):
    """Kimi Linear: the checkpoint's ``linear_attn_config`` lists its layers 1-based; read
    as KimiLinearConfig reads it. No layer rotates (the family has no rotary embedding)."""
    full = [4, 8, 12, 27]
    config = {"model_type": "kimi_linear", "num_hidden_layers": 27, "hidden_size": 2304,
              "num_attention_heads": 32, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
              "qk_nope_head_dim": 128,
              "linear_attn_config": {"full_attn_layers": full,
                                     "kda_layers": [n for n in range(1, 28) if n not in full]}}
    ours = read_config(config)
    assert [la.layer_type for la in ours.layers] == hf_config(hf, config).layer_types
    assert [la.index + 1 for la in ours.layers if la.layer_type == "full_attention"] == full
    assert ours.methods == ("none",)
    assert not _has_rotary(_family_module(hf, "kimi_linear"))
    with pytest.raises(ValueError, match="kda_layers"):
        read_config({**config, "linear_attn_config": {"full_attn_layers": full,
                                                      "kda_layers": [0, 1]}})
    with pytest.raises(ValueError, match="neither"):
        read_config({**config, "linear_attn_config": {"full_attn_layers": full,
                                                      "kda_layers": [1, 2]}})


def test_deepseek_v32_indexer_rotates_what_hugging_faces_indexer_rotates(hf):
    import torch

    config = load_bundled("deepseek-v3.2-exp")
    ours = read_config(config)
    module = _family_module(hf, "deepseek_v32")
    with torch.device("meta"):
        indexer = module.DeepseekV32Indexer(hf_config(hf, config), layer_idx=0)
    assert {la.indexer_rotary_dim for la in ours.layers} == {indexer.qk_rope_head_dim}
    assert indexer.head_dim == config["index_head_dim"] > indexer.qk_rope_head_dim
    assert read_bundled("deepseek-v3").layers[0].indexer_rotary_dim == 0
    with pytest.raises(ValueError, match="index_head_dim"):
        read_config({**config, "index_head_dim": 32})


def test_what_the_bundled_models_do_with_position():
    """A few facts a reader of the course can check in the configs by hand."""
    gpt = read_bundled("gpt-oss-20b")
    assert [la.window for la in gpt.layers[:2]] == [128, None]
    assert all(la.sinks for la in gpt.layers)
    assert gpt.layers[0].attention_factor == pytest.approx(0.1 * math.log(32) + 1)
    smol = read_bundled("smollm3-3b")
    assert [la.method for la in smol.layers[:4]] == ["default"] * 3 + ["none"]
    exaone = read_bundled("exaone-4.0-32b")
    assert [(la.method, la.window) for la in exaone.layers[:4]] == [("llama3", 4096)] * 3 + [
        ("none", None)]
    gemma = read_bundled("gemma-3-1b-it")
    assert {la.theta for la in gemma.layers if la.window} == {10000.0}
    assert [la.theta for la in gemma.layers if not la.window] == [1e6] * 4
    olmo = read_bundled("olmo-3.1-32b-instruct")
    assert {la.method for la in olmo.layers if la.window} == {"default"}
    assert {la.method for la in olmo.layers if not la.window} == {"yarn"}
    assert "0-2  sliding_attention 4096 default base 500000" in olmo.summary()
    qwen = read_bundled("qwen2.5-7b")
    assert all(la.window is None for la in qwen.layers)  # use_sliding_window is false
    assert read_bundled("llama-2-13b").methods == ("default",)
    assert read_bundled("phi-3.5-mini-instruct").layers[0].frequencies.flags.writeable is False


# --- malformed configs --------------------------------------------------------------------

BASE = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
        "num_hidden_layers": 4, "max_position_embeddings": 4096, "rope_theta": 10000.0}


def with_(**changes):
    config = json.loads(json.dumps(BASE))
    config.update(changes)
    return {k: v for k, v in config.items() if v is not ...}


YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 1024}

MALFORMED = [
    (with_(rope_scaling={"rope_type": "ntk-by-parts", "factor": 2.0}), "rope_type"),
    (with_(rope_scaling={**YARN, "betta_fast": 32}), "betta_fast"),
    (with_(rope_parameters={"rope_type": "default", "rope_theta": 1e4, "factor": 2.0}), "factor"),
    (with_(layer_types=["full_attention"] * 3), "layer_types"),
    (with_(rope_scaling={"type": "linear", "factor": 0}), "factor"),
    (with_(rope_scaling={"type": "linear", "factor": -2.0}), "factor"),
    (with_(rope_scaling={"type": "linear", "factor": 0.5}), "factor"),
    (with_(model_type="phi3", head_dim=32), "head_dim"),
    (with_(no_rope_layers=[1, 1, 0]), "no_rope_layers"),
    (with_(no_rope_layers=[1, 2, 1, 1]), "no_rope_layers"),
    (with_(layer_types=["sliding_attention", "full_attention"] * 2), "sliding_window"),
    (with_(layer_types=["global_attention"] * 4), "layer_types"),
    (with_(rope_scaling={"rope_type": "yarn", "original_max_position_embeddings": 1024}),
     "factor"),
    (with_(rope_scaling={k: v for k, v in LLAMA3.items() if k != "low_freq_factor"}),
     "low_freq_factor"),
    (with_(rope_scaling={"type": "linear", "rope_type": "yarn", "factor": 2.0}), "rope_type"),
    (with_(rope_scaling={"rope_type": "linear", "factor": 2.0},
           rope_parameters={"rope_type": "linear", "factor": 4.0}), "rope_scaling"),
    (with_(partial_rotary_factor=1.5), "partial_rotary_factor"),
    (with_(partial_rotary_factor=0.01), "partial_rotary_factor"),
    (with_(rope_theta=0.5), "rope_theta"),
    (with_(num_hidden_layers=...), "num_hidden_layers"),
    (with_(hidden_size=250), "num_attention_heads"),
    (with_(sliding_window=0), "sliding_window"),
    (with_(layer_types=["sliding_attention"] * 4, sliding_window=64,
           rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1e4}}),
     "sliding_attention"),
    (with_(rope_scaling={**LLAMA3, "high_freq_factor": 0.5}), "high_freq_factor"),
    (with_(model_type="gemma3_text", sliding_window=512, sliding_window_pattern=0),
     "sliding_window_pattern"),
    (with_(model_type="exaone4", sliding_window=512, sliding_window_pattern="LLXG"),
     "sliding_window_pattern"),
    (with_(model_type="llama4_text", attn_scale=-0.1), "attn_scale"),
]


@pytest.mark.parametrize(("config", "field"), MALFORMED,
                         ids=[f"{i}-{f}" for i, (_, f) in enumerate(MALFORMED)])
def test_a_malformed_config_is_refused_naming_the_field(config, field):
    with pytest.raises(ValueError, match=re.escape(field)):
        read_config(config)


@pytest.mark.parametrize(("config", "field"), [
    ([("num_hidden_layers", 2)], "config"),
    (with_(rope_scaling=["linear", 2.0]), "rope_scaling"),
    (with_(num_hidden_layers="32"), "num_hidden_layers"),
    (with_(rope_scaling={"type": "linear", "factor": "2"}), "factor"),
    (with_(layer_types="full_attention"), "layer_types"),
    (with_(model_type="llama4_text", attn_temperature_tuning="yes"), "attn_temperature_tuning"),
    ({"text_config": 3}, "text_config"),
])
def test_a_field_of_the_wrong_kind_is_a_type_error(config, field):
    with pytest.raises(TypeError, match=re.escape(field)):
        read_config(config)


# --- properties ---------------------------------------------------------------------------

even_head = st.integers(1, 256).map(lambda n: 2 * n)
bases = st.floats(1.5, 1e7, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(head_dim=even_head, base=bases, layers=st.integers(1, 6))
def test_default_rope_is_base_to_the_minus_2i_over_d(head_dim, base, layers):
    model = read_config({"num_hidden_layers": layers, "head_dim": head_dim, "rope_theta": base})
    expected = base ** (-np.arange(0, head_dim, 2) / head_dim)
    for layer in model.layers:
        np.testing.assert_allclose(layer.frequencies, expected, rtol=1e-12)
        assert (layer.method, layer.attention_factor, layer.window) == ("default", 1.0, None)


@settings(max_examples=60, deadline=None)
@given(head_dim=even_head, p=st.floats(0.05, 1.0), base=bases)
def test_partial_rotary_factor_rotates_int_head_dim_p_over_2_pairs(head_dim, p, base):
    config = {"num_hidden_layers": 1, "head_dim": head_dim, "rope_theta": base,
              "partial_rotary_factor": p}
    dim = int(head_dim * p)
    if dim < 2 or dim % 2:
        with pytest.raises(ValueError, match="partial_rotary_factor"):
            read_config(config)
        return
    layer = read_config(config).layers[0]
    assert len(layer.frequencies) == dim // 2 and layer.rotary_dim == dim
    np.testing.assert_allclose(layer.frequencies, rope_frequencies(dim, base), rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(factor=st.floats(1.0, 64.0), theta=bases, method=st.sampled_from(["linear", "yarn"]))
def test_the_three_schemas_read_the_same(factor, theta, method):
    """rope_scaling with type, with rope_type, and v5's rope_parameters: one reading."""
    extra = {"original_max_position_embeddings": 2048} if method == "yarn" else {}
    old = with_(rope_theta=theta, rope_scaling={"type": method, "factor": factor, **extra})
    newer = with_(rope_theta=theta, rope_scaling={"rope_type": method, "factor": factor, **extra})
    v5 = with_(rope_theta=..., rope_parameters={"rope_type": method, "rope_theta": theta,
                                                "factor": factor, **extra})
    keyed = with_(rope_theta=..., layer_types=["full_attention"] * 4,
                  rope_parameters={"full_attention": {"rope_type": method, "rope_theta": theta,
                                                      "factor": factor, **extra}})
    first = read_config(old)
    for other in (newer, v5, keyed):
        for a, b in zip(first.layers, read_config(other).layers, strict=True):
            np.testing.assert_array_equal(a.frequencies, b.frequencies)
            assert a.attention_factor == b.attention_factor


@settings(max_examples=40, deadline=None)
@given(flags=st.lists(st.sampled_from([0, 1]), min_size=1, max_size=12),
       window=st.integers(1, 10000), data=st.data())
def test_layer_types_and_nope_layers_land_on_the_right_layers(flags, window, data):
    types_ = data.draw(st.lists(st.sampled_from(["full_attention", "sliding_attention"]),
                                min_size=len(flags), max_size=len(flags)))
    model = read_config({"num_hidden_layers": len(flags), "head_dim": 64,
                         "layer_types": types_, "sliding_window": window,
                         "no_rope_layers": flags})
    for layer, flag, t in zip(model.layers, flags, types_, strict=True):
        assert (layer.method == "none") == (flag == 0)
        assert layer.window == (window if t == "sliding_attention" else None)


# --- the package ---------------------------------------------------------------------------

def test_posenc_configs_imports_no_torch():
    for path in sorted(CONFIGS.glob("*.py")):
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not any(m.split(".")[0] == "torch" for m in names), path.name
    code = ("import sys, posenc.configs as c; c.read_bundled('gpt-oss-20b'); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_every_family_is_a_transformers_model_type_and_every_rope_type_is_hugging_faces(hf):
    """The rules are keyed by real ``model_type`` names, and each rope type is one of
    Hugging Face's (``ROPE_INIT_FUNCTIONS``, or Hunyuan's own ``ntk_alpha``)."""
    from transformers import modeling_rope_utils

    # kimi_k2: Kimi K2's own model_type (remote code on the Hub), DeepSeek-V3's architecture
    assert set(FAMILIES) - {"kimi_k2"} <= set(hf.CONFIG_MAPPING), (
        set(FAMILIES) - set(hf.CONFIG_MAPPING))
    assert FAMILIES["kimi_k2"] == FAMILIES["deepseek_v3"]
    hunyuan = _family_module(hf, "hunyuan_v1_dense")
    assert set(ROPE_KEYS) - {"default"} <= set(modeling_rope_utils.ROPE_INIT_FUNCTIONS) | {
        "ntk_alpha"}
    assert hasattr(hunyuan.HunYuanDenseV1RotaryEmbedding, "compute_ntk_alpha_rope_parameters")


def test_family_rules_are_checked_when_made():
    from posenc.configs import Family

    for bad in ({"layer_rule": "gema3"}, {"nope_rule": "some"}, {"layout": "split"},
                {"position": "sinusoidal"}, {"temperature": "hot"},
                {"rope_by_layer_type": "gemma"}, {"default_theta": 0.5}):
        (name, value), = bad.items()
        with pytest.raises(ValueError, match=f"Family.{name}"):
            Family(**bad)
    with pytest.raises(TypeError, match="extra_rope_keys"):
        Family(extra_rope_keys={"alpha"})
