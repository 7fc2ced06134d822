"""posenc.configs.kv_cache and posenc.configs.angles (issue 35, chapter 15).

References: Hugging Face's own cache (``transformers.DynamicCache`` built from each bundled
config, filled layer by layer on the meta device, its stored tensors counted), hand
derivations from the configs' fields for three models, DeepSeek-V2's count for latent
attention, and chapter 5's definition of an unseen angle written out per pair.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.configs import (
    DTYPE_BYTES,
    angle_ratio,
    bundled_names,
    kv_cache,
    load_bundled,
    pair_regions,
    read_bundled,
    read_config,
    survey_row,
    trained_length,
    unscaled_frequencies,
    unseen_pairs,
)

NAMES = bundled_names()


# --- the KV cache -----------------------------------------------------------------------

def test_kv_bytes_by_hand_for_three_models():
    # Llama 3.1 8B: 32 layers x (K and V) x 8 KV heads x head 4096/32 = 128 x 2 bytes (bf16)
    assert kv_cache(load_bundled("llama-3.1-8b")).bytes_per_token(8192) == 32 * 2 * 8 * 128 * 2
    # DeepSeek-V3 (latent attention): 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64)
    # numbers, shared by all 128 heads (DeepSeek-V2 report: (d_c + d_h^R) l per token)
    deepseek = kv_cache(load_bundled("deepseek-v3"))
    assert deepseek.layout == "mla"
    assert deepseek.bytes_at(1000) == 1000 * 61 * (512 + 64) * 2
    # Gemma 3 1B: 26 layers, every 6th global (layers 5, 11, 17, 23): 4 full layers, 22
    # sliding (window 512: 511 tokens kept); 1 KV head of 256
    per_layer = 2 * 1 * 256 * 2
    gemma = kv_cache(load_bundled("gemma-3-1b-it"))
    assert gemma.bytes_at(32768) == 4 * per_layer * 32768 + 22 * per_layer * 511
    assert gemma.bytes_at(100) == 26 * per_layer * 100  # shorter than the window: all kept
    # GPT-OSS 20B in float32: 12 full + 12 banded (window 128) layers, 8 KV heads of 64
    gpt = kv_cache(load_bundled("gpt-oss-20b"))
    assert gpt.bytes_at(4096, "float32") == 12 * 2 * 8 * 64 * 4 * (4096 + 127)


def test_kv_bytes_by_hand_for_the_hybrids_and_the_indexer():
    # Qwen3.5-9B: 32 layers, one in four full attention (8), 4 KV heads of 256; the 24 Gated
    # DeltaNet layers keep a fixed state, nothing per token
    assert kv_cache(load_bundled("qwen3.5-9b")).bytes_at(1000) == 1000 * 8 * 2 * 4 * 256 * 2
    # Kimi Linear: 27 layers, latent attention at the 7 the checkpoint's linear_attn_config
    # lists in full_attn_layers (1-based 4, 8, ..., 24, 27), 512 + 64 numbers each; the 20
    # KDA layers keep a fixed state
    kimi_config = load_bundled("kimi-linear-48b-a3b-instruct")
    kimi = kv_cache(kimi_config)
    assert len(kimi_config["linear_attn_config"]["full_attn_layers"]) == 7
    assert kimi.layout == "mla" and kimi.bytes_at(1000) == 1000 * 7 * (512 + 64) * 2
    # DeepSeek-V3.2-Exp: 61 latent layers of 512 + 64, plus the indexer's key of 128
    deepseek = kv_cache(load_bundled("deepseek-v3.2-exp"))
    assert deepseek.bytes_at(1000) == 1000 * 61 * (512 + 64 + 128) * 2
    # Gemma 4 E2B: 35 layers, every 5th full attention (7) with its own head of 512, 28
    # sliding (window 512: 511 kept) with heads of 256; one KV head. Its last 20 layers
    # (num_kv_shared_layers) reuse the keys and values of earlier ones and cache nothing, so
    # only layers 0-14 count: 3 full (4, 9, 14) and 12 sliding
    gemma4_text = load_bundled("gemma-4-e2b-it")["text_config"]
    assert (gemma4_text["num_hidden_layers"], gemma4_text["num_kv_shared_layers"]) == (35, 20)
    gemma4 = kv_cache(load_bundled("gemma-4-e2b-it"))
    assert gemma4.bytes_at(1000) == (3 * 1000 * 2 * 1 * 512 + 12 * 511 * 2 * 1 * 256) * 2


def _latent(name: str) -> bool:
    config = load_bundled(name)
    return "kv_lora_rank" in config.get("text_config", config)


@pytest.mark.parametrize("name", [n for n in NAMES if not _latent(n)])
def test_kv_bytes_equal_what_hugging_faces_cache_stores(name):
    """transformers' DynamicCache, built from the same config, filled with one sequence of
    L tokens per attention layer (meta tensors: no memory), holds exactly bytes_at(L). The
    latent-attention models (DeepSeek-V3, V3.2, Kimi Linear) are left out: Hugging Face
    caches their decompressed per-head keys and values, not the latent. A linear-attention
    layer's cache (Qwen3-Next, Qwen3.5) holds a fixed-size state and no per-token keys."""
    torch = pytest.importorskip("torch")
    hf = pytest.importorskip("transformers")
    config = load_bundled(name)
    text = config.get("text_config", config)
    cfg = hf.CONFIG_MAPPING[text["model_type"]](
        **{k: v for k, v in text.items() if not k.startswith("_")})
    head_dim = text.get("head_dim") or cfg.hidden_size // cfg.num_attention_heads
    ours = kv_cache(config)
    for length in (100, 5000):
        cache = hf.DynamicCache(config=cfg)
        for i in range(cfg.num_hidden_layers):
            if i < len(cache.layers) and not hasattr(cache.layers[i], "update"):
                continue  # a linear-attention layer: its state is not keys and values
            if i < len(cache.layers) and type(cache.layers[i]).__name__ == "DummyLayer":
                continue  # Gemma 4: a layer that reuses another's keys and values stores none
            # Gemma 4: a layer's own head and KV heads (Gemma4TextConfig.per_layer_config)
            layer_cfg = cfg.per_layer_config[i] if hasattr(cfg, "per_layer_config") else cfg
            k = torch.empty(1, getattr(layer_cfg, "num_key_value_heads", None)
                            or cfg.num_key_value_heads, length,
                            getattr(layer_cfg, "head_dim", None) or head_dim,
                            dtype=torch.bfloat16, device="meta")
            cache.update(k, k, i)
        stored = sum(t.numel() * t.element_size() for layer in cache.layers
                     if getattr(layer, "keys", None) is not None
                     for t in (layer.keys, layer.values))
        assert stored == ours.bytes_at(length, "bfloat16"), (name, length)


def _without_windows(config: dict) -> dict:
    """The same model with every sliding or chunked layer made full (its window or chunk
    removed)."""
    text = dict(config.get("text_config", config))
    if "layer_types" in text:
        text["layer_types"] = ["full_attention" if t in ("sliding_attention", "chunked_attention")
                               else t for t in text["layer_types"]]
    text.pop("attention_chunk_size", None)
    text["sliding_window"] = None
    text.pop("sliding_window_pattern", None)
    if text.get("model_type") in ("gemma3_text", "olmo3", "gpt_oss", "exaone4", "llama4_text"):
        text["layer_types"] = ["full_attention"] * text["num_hidden_layers"]
    return {"text_config": text} if "text_config" in config else text


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(NAMES), length=st.integers(1, 2_000_000),
       longer=st.integers(0, 2_000_000), dtype=st.sampled_from(sorted(DTYPE_BYTES)))
def test_kv_bytes_properties(name, length, longer, dtype):
    config = load_bundled(name)
    cache = kv_cache(config)
    full = kv_cache(_without_windows(config))
    at = cache.bytes_at(length, dtype)
    # a sliding window never increases the cache, and never empties it
    assert 0 < at <= full.bytes_at(length, dtype)
    # full attention grows linearly with the length
    assert full.bytes_at(length, dtype) == length * full.bytes_at(1, dtype)
    # more tokens never shrink it; a window's share per token never grows
    assert cache.bytes_at(length + longer, dtype) >= at
    assert cache.bytes_per_token(length + longer, dtype) <= cache.bytes_per_token(length,
                                                                                 dtype) + 1e-9
    # the dtype only scales it
    assert at * DTYPE_BYTES["bfloat16"] == cache.bytes_at(length, "bfloat16") * DTYPE_BYTES[dtype]


def test_kv_cache_refuses_bad_input_naming_it():
    config = load_bundled("llama-3.1-8b")
    with pytest.raises(ValueError, match="num_key_value_heads"):
        kv_cache({**config, "num_key_value_heads": 5})
    with pytest.raises(ValueError, match="kv_lora_rank"):
        kv_cache({k: v for k, v in load_bundled("deepseek-v3").items() if k != "kv_lora_rank"})
    with pytest.raises(ValueError, match="dtype"):
        kv_cache(config).bytes_at(10, "int4")
    with pytest.raises(ValueError, match="length"):
        kv_cache(config).bytes_at(0)
    with pytest.raises(TypeError, match="length"):
        kv_cache(config).bytes_per_token(2.5)


def test_num_key_value_heads_defaults_to_the_attention_heads():
    config = {k: v for k, v in load_bundled("llama-2-13b").items() if k != "num_key_value_heads"}
    assert kv_cache(config).bytes_at(1) == 40 * 2 * 40 * 128 * 2


# --- angles -------------------------------------------------------------------------------

def test_llama_3_1_by_hand():
    """Llama 3.1: L0 = 8192, factor 8, low/high 1/4: pairs with wavelength > 8192 are
    divided by 8, pairs with wavelength < 2048 kept, the rest blended (Meta's rule)."""
    model = read_bundled("llama-3.1-8b")
    layer = model.layers[0]
    assert trained_length(model, layer) == 8192
    theta = 500000.0 ** (-np.arange(64) * 2 / 128)
    wavelength = 2 * np.pi / theta
    regions = pair_regions(layer)
    assert np.all(regions[wavelength < 8192 / 4] == "kept")
    assert np.all(regions[wavelength > 8192] == "interpolated")
    assert np.all(regions[(wavelength > 2048) & (wavelength < 8192)] == "blended")
    # at 131,072 = 16 x 8192 the interpolated pairs reach twice their largest training angle
    ratio = angle_ratio(model, layer, 131072)
    assert np.allclose(ratio[wavelength > 8192], 131072 / 8 / 8192)
    unseen = unseen_pairs(model, layer, 131072)
    assert np.array_equal(unseen, 8192 * theta < 2 * np.pi)
    # at 65,536 = 8 x 8192 they are back at exactly their training angles: none unseen
    assert not unseen_pairs(model, layer, 65536).any()


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(NAMES), target=st.integers(1, 4_000_000))
def test_unseen_pairs_is_chapter_5s_definition(name, target):
    model = read_bundled(name)
    for layer in model.layers:
        if layer.rope is None:
            continue
        length0 = trained_length(model, layer)
        limit = layer.window or layer.chunk or math.inf
        old = unscaled_frequencies(layer)
        new = layer.frequencies_at(target)
        seen_max = min(length0, limit) * old
        now_max = min(target, limit) * new
        expected = (old > 0) & (seen_max < 2 * np.pi) & (now_max > seen_max * (1 + 1e-9))
        assert np.array_equal(unseen_pairs(model, layer, target), expected)
        if layer.window is not None and layer.window <= length0:
            # a window no longer than training caps the distance: nothing is ever unseen
            assert not unseen_pairs(model, layer, target).any()
        if target <= length0 and layer.method in ("default", "linear", "yarn", "llama3"):
            assert not unseen_pairs(model, layer, target).any()  # scaling only slows pairs


def test_unscaled_frequencies_of_a_proportional_layer_keep_its_zeros():
    config = {"model_type": "llama", "num_hidden_layers": 2, "head_dim": 64,
              "rope_parameters": {"rope_type": "proportional", "rope_theta": 1e6,
                                  "partial_rotary_factor": 0.25}}
    layer = read_config(config).layers[0]
    old = unscaled_frequencies(layer)
    assert np.count_nonzero(old) == 8 and np.array_equal(old, layer.frequencies)
    assert np.all(pair_regions(layer) == "kept")


def test_angles_refuse_a_layer_without_rotation():
    model = read_bundled("smollm3-3b")
    nope = next(la for la in model.layers if la.rope is None)
    with pytest.raises(ValueError, match="no rotation"):
        trained_length(model, nope)
    with pytest.raises(TypeError, match="LayerPositions"):
        unscaled_frequencies("layer 3")
    with pytest.raises(ValueError, match="target"):
        angle_ratio(model, model.layers[0], 0)


def test_a_misspelled_key_makes_hugging_face_fall_back_and_posenc_refuse():
    """Chapter 15's claim: with ``orig_max_position_embeddings`` for
    ``original_max_position_embeddings``, transformers only warns and takes L0 from
    max_position_embeddings (131,072), so Llama 3.1's frequencies change; read_config
    refuses the key, naming it."""
    pytest.importorskip("torch")
    hf = pytest.importorskip("transformers")
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = load_bundled("llama-3.1-8b")
    scaling = {k: v for k, v in config["rope_scaling"].items()
               if k != "original_max_position_embeddings"}
    scaling["orig_max_position_embeddings"] = 8192
    fields = {k: v for k, v in config.items() if not k.startswith("_")}
    hf_cfg = hf.LlamaConfig(**{**fields, "rope_scaling": scaling})
    hf_freqs = LlamaRotaryEmbedding(config=hf_cfg).inv_freq.double().numpy()
    fallback = {**config, "rope_scaling": {**config["rope_scaling"],
                                           "original_max_position_embeddings": 131072}}
    expected = read_config(fallback).layers[0].frequencies
    trained = read_config(config).layers[0].frequencies
    assert np.allclose(hf_freqs, expected, rtol=1e-6)
    assert np.sum(~np.isclose(hf_freqs, trained, rtol=1e-6)) == 20
    with pytest.raises(ValueError, match="orig_max_position_embeddings"):
        read_config({**config, "rope_scaling": scaling})


def test_every_bundled_model_has_its_source_and_date_on_the_references_page():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "book" / "references.md").read_text()
    section = page[page.index("## Model configurations read in chapter 15"):]
    for name in NAMES:
        config = load_bundled(name)
        entry = next(e for e in section.split("\n- ") if e.startswith(f"`{name}`"))
        assert config["_source"].removesuffix("/config.json") in entry, name
        assert config["_date"] in entry and config["_found_in"] in " ".join(entry.split()), name


# --- chapter 15's table -------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_survey_rows_account_for_every_layer(name):
    row = survey_row(name)
    assert row.rotating + row.nope + row.linear == row.layers == read_bundled(name).num_layers
    assert (row.base is None) == (row.rotating == 0) == (row.scaling is None)
    assert row.from_defaults == (name not in bundled_names(files_only=True))


def test_survey_rows_against_the_files_by_hand():
    qwen = load_bundled("qwen3.5-9b")["text_config"]
    row = survey_row("qwen3.5-9b")
    assert row.rotating == qwen["layer_types"].count("full_attention") == 8
    assert row.linear == 24 and row.nope == 0 and not row.from_defaults
    assert row.rotated_share == qwen["rope_parameters"]["partial_rotary_factor"]
    assert row.base == qwen["rope_parameters"]["rope_theta"]
    # Llama 4: every 4th of 48 layers NoPE (no_rope_layer_interval 4), the rest chunked
    scout = survey_row("llama-4-scout-17b-16e")
    assert (scout.nope, scout.windowed, scout.temperature) == (12, 36, "llama4")
    kimi = survey_row("kimi-linear-48b-a3b-instruct")
    # Kimi Linear: the checkpoint's full_attn_layers (7, no RoPE) and kda_layers (20)
    assert (kimi.rotating, kimi.nope, kimi.linear, kimi.base) == (0, 7, 20, None)
    assert survey_row("ministral-3-3b-instruct-2512").temperature == "llama_4_scaling_beta"
    assert survey_row("llama-3.1-8b").scaling == "llama3 ×8"
    # Gemma 4: the row is its global layers' p-RoPE (a quarter of the pairs turn), not its
    # sliding layers' plain RoPE; Gemma 3: its global base
    gemma4 = load_bundled("gemma-4-e2b-it")["text_config"]["rope_parameters"]["full_attention"]
    row = survey_row("gemma-4-e2b-it")
    assert (row.scaling, row.rotated_share, row.base) == (
        "proportional", gemma4["partial_rotary_factor"], gemma4["rope_theta"])
    assert survey_row("gemma-3-1b-it").base == load_bundled("gemma-3-1b-it")["rope_theta"]
    with pytest.raises(ValueError, match="length"):
        survey_row("llama-3.1-8b", length=0)
