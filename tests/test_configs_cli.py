"""posenc.configs for any model (issue 51): files and folders, unknown families, older field
names, ALiBi slopes, the table folded by kind, and ``python -m posenc.configs``."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.alibi import alibi_slopes, mpt_alibi_slopes
from posenc.configs import load_bundled, read_config
from posenc.configs.table import fold_indices, kind_records, kind_rows, kind_table

ROOT = Path(__file__).resolve().parents[1]
LLAMA = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
         "num_hidden_layers": 4, "max_position_embeddings": 4096, "rope_theta": 10000.0}


def _same(a, b):
    assert len(a.layers) == len(b.layers)
    for x, y in zip(a.layers, b.layers, strict=True):
        assert (x.layer_type, x.method, x.window, x.theta, x.layout) == (
            y.layer_type, y.method, y.window, y.theta, y.layout)
        np.testing.assert_array_equal(x.frequencies, y.frequencies)


# --- a dict, a file or a folder -------------------------------------------------------------

def test_read_config_takes_a_dict_a_file_or_a_model_folder(tmp_path):
    config = load_bundled("gpt-oss-20b")
    (tmp_path / "config.json").write_text(json.dumps(config))
    from_dict = read_config(config)
    _same(from_dict, read_config(tmp_path / "config.json"))
    _same(from_dict, read_config(str(tmp_path)))


def test_a_missing_or_broken_file_is_one_clear_error(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        read_config(tmp_path / "nothing.json")
    with pytest.raises(ValueError, match="no such file"):
        read_config(tmp_path)  # a folder without config.json
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_config(tmp_path)
    (tmp_path / "config.json").write_text("[1, 2]")
    with pytest.raises(TypeError, match="JSON list"):
        read_config(tmp_path)
    with pytest.raises(TypeError, match="config must be a mapping"):
        read_config(3)


# --- an unknown family: never a silent answer ----------------------------------------------

def test_an_unknown_family_whose_fields_settle_every_layer_is_read_with_a_note():
    model = read_config({**LLAMA, "model_type": "some_new_llama"})
    assert model.family == "generic"
    assert any("not a family posenc knows" in n for n in model.notes)
    assert "note:" in model.summary()


@pytest.mark.parametrize(("fields", "named"), [
    ({"sliding_window": 4096}, "sliding_window (without layer_types)"),  # Gemma 2's trap
    ({"global_rope_theta": 160000.0, "local_attention": 128}, "global_rope_theta"),
    ({"sliding_window_pattern": 4, "sliding_window": 512,
      "layer_types": ["full_attention"] * 4}, "sliding_window_pattern"),
    ({"rope_local_base_freq": 1e4}, "rope_local_base_freq"),
    ({"attn_layer_period": 8}, "attn_layer_period"),
])
def test_an_unknown_family_with_fields_no_rule_reads_is_refused_or_warned(fields, named):
    config = {**LLAMA, "model_type": "not_a_family", **fields}
    with pytest.raises(ValueError, match="not one of the") as err:
        read_config(config)
    assert named in str(err.value) and "strict=False" in str(err.value)
    with pytest.warns(UserWarning, match="not one of the"):
        model = read_config(config, strict=False)
    assert model.family == "generic" and model.notes


def test_a_config_with_no_model_type_is_read_by_the_generic_rules_quietly():
    config = {k: v for k, v in LLAMA.items() if k != "model_type"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = read_config(config)
    assert model.family == "generic" and model.notes == ()


def test_a_text_config_without_model_type_takes_its_parents_family():
    config = {"model_type": "gemma2", "text_config": {
        k: v for k, v in {**LLAMA, "sliding_window": 64}.items() if k != "model_type"}}
    model = read_config(config)
    assert model.family == "gemma2"
    assert [la.window for la in model.layers] == [64, None, 64, None]


# --- older field names ----------------------------------------------------------------------

def test_older_field_names_read_as_the_new_ones():
    old = {"model_type": "gpt_neox", "n_layer": 4, "n_head": 4, "n_embd": 256,
           "n_positions": 2048, "rotary_emb_base": 10000.0, "rotary_pct": 0.25}
    new = {"model_type": "gpt_neox", "num_hidden_layers": 4, "num_attention_heads": 4,
           "hidden_size": 256, "max_position_embeddings": 2048, "rope_theta": 10000.0,
           "partial_rotary_factor": 0.25}
    _same(read_config(old), read_config(new))
    assert read_config(old).layers[0].rotary_dim == 16
    gptj = {**new, "model_type": "gptj", "rotary_dim": 16}
    del gptj["partial_rotary_factor"]
    assert read_config(gptj).layers[0].rotary_dim == 16
    assert read_config(gptj).layers[0].layout == "interleaved"


@pytest.mark.parametrize(("changes", "named"), [
    ({"n_layer": 6}, "n_layer"),
    ({"rotary_pct": 0.5, "partial_rotary_factor": 0.25}, "rotary_pct"),
    ({"rotary_dim": 32, "partial_rotary_factor": 0.25}, "rotary_dim"),
    ({"rotary_dim": 128}, "rotary_dim"),
])
def test_an_older_name_that_contradicts_the_newer_is_refused(changes, named):
    with pytest.raises(ValueError, match=named):
        read_config({**LLAMA, **changes})


# --- ALiBi ------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(heads=st.integers(1, 96))
def test_mpt_slopes_with_bias_max_8_are_the_official_order(heads):
    """Two formulations of one order: MPT's (concatenate odd then even of the next power of
    two) and the official get_slopes (BLOOM's)."""
    np.testing.assert_allclose(mpt_alibi_slopes(heads, 8), alibi_slopes(heads), rtol=1e-13)


@pytest.mark.parametrize(("heads", "bias_max"), [(32, 8), (12, 8), (48, 16), (7, 4)])
def test_mpt_slopes_are_hugging_faces(heads, bias_max):
    pytest.importorskip("transformers")
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    alibi = build_mpt_alibi_tensor(heads, 2, bias_max)  # [heads, 1, 2]: slope * (-1, 0)
    np.testing.assert_allclose(mpt_alibi_slopes(heads, bias_max),
                               -alibi[:, 0, 0].double().numpy(), rtol=1e-6)


def test_an_alibi_model_reports_slopes_and_no_rotation():
    bloom = read_config({"model_type": "bloom", "n_layer": 2, "n_head": 6, "hidden_size": 96})
    for layer in bloom.layers:
        assert layer.method == "alibi" and layer.frequencies is None and layer.layout is None
        np.testing.assert_array_equal(layer.alibi_slopes, alibi_slopes(6))
    falcon = {"model_type": "falcon", "num_hidden_layers": 2, "num_attention_heads": 4,
              "hidden_size": 256}
    assert read_config({**falcon, "alibi": True}).methods == ("alibi",)
    assert read_config(falcon).methods == ("default",)


# --- layers with no attention ---------------------------------------------------------------

def test_layers_with_no_attention_are_reported_as_such():
    nemotron = read_config({"model_type": "nemotron_h", "num_hidden_layers": 5,
                            "hidden_size": 256, "num_attention_heads": 4,
                            "hybrid_override_pattern": "M-*EM"})
    assert [la.layer_type for la in nemotron.layers] == ["mamba", "mlp", "full_attention",
                                                         "mlp", "mamba"]
    assert [la.attends for la in nemotron.layers] == [False, False, True, False, False]
    assert nemotron.methods == ("none",)
    lfm = read_config({"model_type": "lfm2", "num_hidden_layers": 4, "hidden_size": 256,
                       "num_attention_heads": 4, "full_attn_idxs": [1, 3]})
    assert [la.method != "none" for la in lfm.layers] == [False, True, False, True]
    assert [la.layer_type for la in lfm.layers][::2] == ["conv", "conv"]


def test_an_empty_no_rope_layers_means_the_familys_default():
    config = {"model_type": "llama4_text", "num_hidden_layers": 8, "hidden_size": 512,
              "num_attention_heads": 4, "head_dim": 128, "attention_chunk_size": 8192,
              "max_position_embeddings": 8192}
    _same(read_config({**config, "no_rope_layers": []}), read_config(config))


# --- the table folded by kind ---------------------------------------------------------------

@pytest.mark.parametrize(("indices", "total", "text"), [
    ([0, 1, 2], None, "0-2"),
    ([5], None, "5"),
    ([3, 7, 11, 15], None, "3, 7, ..., 15 (every 4th)"),
    ([0, 2, 4, 6], None, "0, 2, ..., 6 (every other)"),
    ([0, 1, 2, 4, 5, 6], None, "0-2, 4-6"),
    ([0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14], 16, "all but 3, 7, ..., 15 (every 4th)"),
    ([], None, "-"),
])
def test_fold_indices(indices, total, text):
    assert fold_indices(indices, total) == text


@settings(max_examples=60, deadline=None)
@given(flags=st.lists(st.sampled_from([0, 1]), min_size=1, max_size=24))
def test_the_kinds_account_for_every_layer_once(flags):
    model = read_config({"num_hidden_layers": len(flags), "head_dim": 64,
                         "max_position_embeddings": 4096, "no_rope_layers": flags})
    rows = kind_rows(model)
    assert sum(r.count for r in rows) == len(flags)
    assert sorted(r.rotates for r in rows) == sorted({bool(f) for f in flags})


def test_the_table_states_reach_against_a_hand_computation():
    model = read_config({**LLAMA, "head_dim": 64})  # 32 pairs, base 1e4, L0 4096
    (row,) = kind_rows(model)
    theta = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    assert row.slowest_wavelength == pytest.approx(2 * np.pi / theta[-1], rel=1e-12)
    assert row.under_one_turn == int(np.sum(4096 * theta < 2 * np.pi))
    assert (row.rotary_pairs, row.head_pairs, row.trained_length) == (32, 32, 4096)
    assert f"{row.under_one_turn} of 32 (L0 4,096)" in kind_table(model)
    assert json.loads(json.dumps(kind_records(model)))["kinds"][0]["count"] == 4


# --- the command line -----------------------------------------------------------------------

def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "posenc.configs", *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def test_the_command_line_reads_a_file_and_a_folder(tmp_path):
    config = load_bundled("qwen3-next-80b-a3b-instruct")
    folder = tmp_path / "Qwen3-Next"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    by_file, by_folder = _cli(folder / "config.json"), _cli(folder)
    assert by_file.returncode == by_folder.returncode == 0, by_file.stderr
    assert by_file.stdout == by_folder.stdout
    assert "3, 7, ..., 47 (every 4th) [12]" in by_file.stdout
    assert "linear_attention" in by_file.stdout
    records = json.loads(_cli(folder, "--json").stdout)
    assert sum(k["count"] for k in records["kinds"]) == 48
    drawn = _cli(folder, "--plot", tmp_path / "layers.png")
    assert drawn.returncode == 0, drawn.stderr
    assert (tmp_path / "layers.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_command_line_refuses_in_one_line_with_status_2(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps({**LLAMA, "rope_scaling": {"rope_type": "yarn2", "factor": 2}}))
    out = _cli(bad)
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "rope_type" in out.stderr
    unknown = tmp_path / "unknown"
    unknown.mkdir()
    (unknown / "config.json").write_text(json.dumps({**LLAMA, "model_type": "x",
                                                     "sliding_window": 64}))
    assert _cli(unknown).returncode == 2
    lenient = _cli(unknown, "--lenient")
    assert lenient.returncode == 0 and "warning" in lenient.stderr
    assert _cli(tmp_path / "none").returncode == 2


def test_the_readme_shows_the_command_line():
    readme = (ROOT / "README.md").read_text()
    assert "python -m posenc.configs" in readme


def test_every_family_is_in_the_readme_table_and_tested_on_a_real_config():
    """The README's table lists each family of posenc.configs.FAMILIES, and each (but
    Mistral 4's transcribed rules) has a bundled or released config that the Hugging Face
    comparisons read."""
    from posenc.configs import FAMILIES, bundled_names

    readme = (ROOT / "README.md").read_text()
    types = set()
    for name in bundled_names():
        config = load_bundled(name)
        types.add((config.get("text_config") or config).get("model_type"))
    for path in (ROOT / "tests" / "data" / "hf_configs").glob("*.json"):
        config = json.loads(path.read_text())
        types.add((config.get("text_config") or {}).get("model_type") or config["model_type"])
    for model_type in FAMILIES:
        assert f"| `{model_type}` |" in readme, model_type
        assert model_type in types or model_type == "mistral4", model_type
