"""Chapter 15's per-layer table (posenc.configs.per_layer) against the bundled files' own
fields, read directly from the JSON (not through read_config), and its two unbundled models
against Hugging Face's configuration classes (transformers 5.23.0, a test dependency)."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from posenc.configs import bundled_names
from posenc.configs.per_layer import UNBUNDLED, layer_kinds, layer_table
from posenc.configs.sparse import SIDE_ROPE


def _raw(name: str) -> dict:
    path = resources.files("posenc.configs") / "data" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


RECENT = [n for n in bundled_names() if not _raw(n)["_date"].startswith(("2023", "2024"))]


def _row(name: str, kind: str, method: str | None = None):
    rows = [r for r in layer_kinds(name) if r.kind == kind and method in (None, r.method)]
    assert len(rows) == 1, rows
    return rows[0]


@pytest.mark.parametrize("name", RECENT)
def test_every_layer_counted_once_with_the_files_date_and_source(name):
    raw, rows = _raw(name), layer_kinds(name)
    layers = raw.get("text_config", raw)["num_hidden_layers"]  # multimodal files nest it
    assert sum(r.layers for r in rows) == layers
    assert {(r.total, r.date, r.source) for r in rows} == {
        (layers, raw["_date"], raw["_found_in"])}
    assert {r.from_defaults for r in rows} == {raw["_found_in"].startswith("transformers ")}


def test_gemma_3_sliding_and_global_layers():
    raw = _raw("gemma-3-1b-it")
    n, every = raw["num_hidden_layers"], raw["sliding_window_pattern"]
    sliding = _row("gemma-3-1b-it", f"sliding {raw['sliding_window']}")
    full = _row("gemma-3-1b-it", "full")
    assert (sliding.layers, full.layers) == (n - n // every, n // every)
    assert (sliding.base, full.base) == (raw["rope_local_base_freq"], raw["rope_theta"])
    assert sliding.turning == full.turning == f"{raw['head_dim']}/{raw['head_dim']}"


def test_qwen3_next_rotates_a_quarter_of_the_head_on_its_full_layers():
    raw = _raw("qwen3-next-80b-a3b-instruct")  # flat rope fields, no layer_types in the file
    head, every = raw["head_dim"], raw["full_attention_interval"]
    full = _row("qwen3-next-80b-a3b-instruct", "full")
    assert full.layers == raw["num_hidden_layers"] // every == 12
    assert (full.base, full.turning) == (
        raw["rope_theta"], f"{int(head * raw['partial_rotary_factor'])}/{head}")
    assert _row("qwen3-next-80b-a3b-instruct", "linear").method == "none"


def test_gpt_oss_scales_both_kinds():
    raw = _raw("gpt-oss-20b")
    for kind in ("full", f"sliding {raw['sliding_window']}"):
        row = _row("gpt-oss-20b", kind)
        assert (row.method, row.factor, row.base) == (
            "yarn", raw["rope_scaling"]["factor"], raw["rope_theta"])
        assert row.layers == raw["layer_types"].count(
            "full_attention" if kind == "full" else "sliding_attention")


def test_gemma_4_global_layers_turn_a_quarter_of_their_own_head():
    raw = _raw("gemma-4-e2b-it")["text_config"]
    full_rope = raw["rope_parameters"]["full_attention"]
    full = _row("gemma-4-e2b-it", "full")
    head = raw["global_head_dim"]
    pairs = int(full_rope["partial_rotary_factor"] * head // 2)
    assert (full.method, full.base, full.turning) == (
        "proportional", full_rope["rope_theta"], f"{2 * pairs}/{head}")


def test_deepseek_v32_row_names_its_indexers_own_rope():
    raw = _raw("deepseek-v3.2-exp")
    (row,) = layer_kinds("deepseek-v3.2-exp")
    rope = SIDE_ROPE["deepseek_v32"]["indexer"]
    rotary = raw["qk_rope_head_dim"]
    assert row.turning == f"{rotary}/{rotary + raw['qk_nope_head_dim']}"
    assert row.side == (f"indexer: {rope.slot} {raw['qk_rope_head_dim']} of "
                        f"{raw['index_head_dim']}, {rope.layout}, top-{raw['index_topk']}")


def test_glm_5_row_against_its_configuration_class():
    transformers = pytest.importorskip("transformers")
    config = transformers.GlmMoeDsaConfig()
    (row,) = UNBUNDLED["glm-5"]
    rope = SIDE_ROPE["glm_moe_dsa"]["indexer"]
    assert row.layers == row.total == config.num_hidden_layers
    assert row.turning == f"{config.qk_rope_head_dim}/{config.qk_head_dim}"
    assert row.side.startswith(f"indexer: {rope.slot} {config.qk_rope_head_dim} of "
                               f"{config.index_head_dim}, {rope.layout}, top-{config.index_topk};")
    assert set(config.indexer_types) == {"full"}  # the class's default: no sharing
    assert row.from_defaults and row.base is None  # the class's base is not the checkpoint's


def test_deepseek_v4_rows_against_its_configuration_class():
    transformers = pytest.importorskip("transformers")
    from transformers.models.deepseek_v4.configuration_deepseek_v4 import DeepseekV4Config
    config = DeepseekV4Config(rope_parameters={"rope_type": "yarn", "factor": 16.0,
                                               "original_max_position_embeddings": 65536})
    sliding, csa, hca = UNBUNDLED["deepseek-v4-flash"]
    main, compress = config.rope_parameters["main"], config.rope_parameters["compress"]
    assert sliding.kind == f"sliding {config.sliding_window}"
    assert (sliding.method, sliding.base) == (main["rope_type"], main["rope_theta"])
    rates = config.compress_rates
    for row, rate in ((csa, rates["compressed_sparse_attention"]),
                      (hca, rates["heavily_compressed_attention"])):
        assert f"1 entry per {rate} tokens" in row.kind
        assert (row.method, row.base, row.factor) == (
            compress["rope_type"], compress["rope_theta"], compress["factor"])
        assert "attention factor 1" in row.side and compress["attention_factor"] == 1.0
    for row in (sliding, csa, hca):
        assert row.turning == f"{config.qk_rope_head_dim}/{config.head_dim}"
    assert f"last {config.qk_rope_head_dim} of {config.index_head_dim}" in csa.side
    assert f"top-{config.index_topk} entries" in csa.side
    assert transformers.__version__ == "5.23.0"  # the version the sources name


def test_layer_table_prints_every_row_under_its_source():
    rows = [*layer_kinds("gemma-3-1b-it"), *UNBUNDLED["deepseek-v4-flash"]]
    text = layer_table(rows, width=96)
    lines = text.splitlines()
    assert all(len(line) <= 96 for line in lines)
    raw = _raw("gemma-3-1b-it")
    assert lines[0].startswith(f"gemma-3-1b-it ({raw['_date']}), read from:")
    assert raw["_found_in"] in " ".join(line.strip() for line in lines[:3])
    kind_lines = [line for line in lines if line.startswith("  ") and not line.startswith("    ")]
    assert len(kind_lines) == len(rows)
    sliding = next(line for line in kind_lines if line.split()[:2] == ["sliding", "512"])
    assert sliding.split()[2:6] == ["22/26", "default", "10000", "256/256"]
    v4_csa = next(line for line in kind_lines if line.lstrip().startswith("CSA"))
    assert v4_csa.split()[-5:] == ["?", "yarn", "160000", "64/512", "×16"]  # count unknown
