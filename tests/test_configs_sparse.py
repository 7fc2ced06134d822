"""Sparse attention's side paths (posenc.configs.sparse) against Hugging Face's own code.

Each rotation is checked on the tensors Hugging Face's modules produce (transformers 5.23.0,
a test dependency): DeepSeek-V3.2's and GLM-5's indexers run their real ``forward`` and we
catch the rotated keys they hand to the cache; DeepSeek-V4's compressor runs its real
``forward`` and we catch the positions it rotates at and the causal bias it returns.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.configs.sparse import (
    SIDE_ROPE,
    compressed_positions,
    deepseek_v4_rope,
    indexer_types,
    rotate_slot,
    visible_entries,
)
from posenc.rope import interleaved_to_half, rope_frequencies

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY_MLA = dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=2, q_lora_rank=16,
                kv_lora_rank=16, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=8,
                index_head_dim=16, index_n_heads=2, index_topk=4, num_hidden_layers=2,
                n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                intermediate_size=32, vocab_size=64)


class _CatchIndexerKeys:
    """A stand-in cache: the indexer hands it its rotated keys (``update_indexer``)."""

    def update_indexer(self, k, layer_idx):
        self.keys = k
        return k


def _indexer_keys(family: str, seq: int = 7):
    """Run one indexer of ``family``; return its keys before and after RoPE, numpy
    ``[seq, index_head_dim]``, and the config."""
    if family == "deepseek_v32":
        from transformers.models.deepseek_v32 import modeling_deepseek_v32 as mod
        config = mod.DeepseekV32Config(**TINY_MLA)
        indexer, rotary = mod.DeepseekV32Indexer(config, 0), mod.DeepseekV32RotaryEmbedding(config)
    else:
        from transformers.models.glm_moe_dsa import modeling_glm_moe_dsa as mod
        config = mod.GlmMoeDsaConfig(**TINY_MLA)
        indexer, rotary = mod.GlmMoeDsaIndexer(config, 0), mod.GlmMoeDsaRotaryEmbedding(config)
    torch.manual_seed(0)
    indexer = indexer.double()
    hidden = torch.randn(1, seq, config.hidden_size, dtype=torch.float64)
    q_resid = torch.randn(1, seq, config.q_lora_rank, dtype=torch.float64)
    position_ids = torch.arange(seq)[None] + 3  # not starting at 0: positions are read
    cos, sin = rotary(hidden, position_ids)
    mask = torch.ones(1, seq, seq, dtype=torch.bool).tril()
    cache = _CatchIndexerKeys()
    indexer(hidden, q_resid, (cos.double(), sin.double()), mask, position_ids, cache)
    before = indexer.k_norm(indexer.wk(hidden))[0].detach().numpy()
    return before, cache.keys[0].detach().numpy(), config, position_ids[0].numpy()


def test_deepseek_v32_indexer_rotates_its_first_slice_in_the_half_layout():
    before, after, config, pos = _indexer_keys("deepseek_v32")
    side = SIDE_ROPE["deepseek_v32"]["indexer"]
    ours = rotate_slot(before, pos, rotary_dim=config.qk_rope_head_dim, slot=side.slot,
                       layout=side.layout)
    np.testing.assert_allclose(ours, after, rtol=0, atol=1e-6)  # HF's cos/sin are float32
    # the attention's own layout on the same slice is a different rotation: the known bug
    wrong = rotate_slot(before, pos, rotary_dim=config.qk_rope_head_dim, slot="first",
                        layout="interleaved")
    assert not np.allclose(wrong, after, atol=1e-3)
    assert (side.layout, side.slot) == ("half", "first")
    assert SIDE_ROPE["deepseek_v32"]["attention"].layout == "interleaved"


def test_glm_moe_dsa_indexer_rotates_its_first_slice_interleaved():
    before, after, config, pos = _indexer_keys("glm_moe_dsa")
    r = config.qk_rope_head_dim
    side = SIDE_ROPE["glm_moe_dsa"]["indexer"]
    ours = rotate_slot(before, pos, rotary_dim=r, slot=side.slot, layout=side.layout)
    # Hugging Face's interleaved helper returns the rotated pairs de-interleaved (evens, then
    # odds): the same rotation, its features permuted; both q and k are, so scores agree
    perm = interleaved_to_half(r)
    np.testing.assert_allclose(ours[:, :r][:, perm], after[:, :r], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(ours[:, r:], after[:, r:])
    assert (side.layout, side.slot) == ("interleaved", "first")


def test_deepseek_v4_rotates_the_last_slice_interleaved():
    from transformers.models.deepseek_v4 import modeling_deepseek_v4 as mod
    g = np.random.default_rng(0)
    x = g.standard_normal((5, 24))
    pos = np.arange(5) + 11
    freqs = rope_frequencies(8, 160000.0)
    angles = torch.tensor(pos[:, None] * freqs[None])  # [seq, pairs]: V4's half-sized cos/sin
    theirs = mod.apply_rotary_pos_emb(torch.tensor(x)[None, None], angles.cos()[None],
                                      angles.sin()[None])[0, 0].numpy()
    side = SIDE_ROPE["deepseek_v4"]["attention"]
    ours = rotate_slot(x, pos, rotary_dim=8, slot=side.slot, layout=side.layout, base=160000.0)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)  # HF rotates in float32
    assert all(s.layout == "interleaved" and s.slot == "last"
               for s in SIDE_ROPE["deepseek_v4"].values())


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["first", "last"]), st.sampled_from(["interleaved", "half"]),
       st.integers(0, 50), st.integers(1, 30))
def test_rotate_slot_is_relative_within_the_slice(slot, layout, start, offset):
    """Matched layouts: the score depends on the offset only. The untouched features add
    the same content score at any position."""
    g = np.random.default_rng(start)
    q, k = g.standard_normal((2, 1, 12))
    scores = [(rotate_slot(q, [p + offset], rotary_dim=8, slot=slot, layout=layout)
               @ rotate_slot(k, [p], rotary_dim=8, slot=slot, layout=layout).T).item()
              for p in (start, start + 17)]
    assert np.isclose(scores[0], scores[1], rtol=1e-9, atol=1e-9)


def test_the_other_layout_changes_what_the_indexer_scores():
    """Weights trained with the half layout, run with the interleaved one on both sides
    (DeepSeek-V3.2-Exp's released inference code until November 2025): the score still
    depends on the offset only, but it is not the trained score at any offset but 0."""
    g = np.random.default_rng(3)
    q, k = g.standard_normal((2, 1, 16))

    def score(layout, offset, at=40):
        return (rotate_slot(q, [at + offset], rotary_dim=8, layout=layout)
                @ rotate_slot(k, [at], rotary_dim=8, layout=layout).T).item()

    assert np.isclose(score("half", 0), score("interleaved", 0))  # no rotation, same score
    for offset in (1, 5, 100):
        assert not np.isclose(score("half", offset), score("interleaved", offset), atol=1e-3)
        assert np.isclose(score("interleaved", offset), score("interleaved", offset, at=900))


def test_compressed_positions_and_visibility_match_deepseek_v4s_compressor():
    from transformers.models.deepseek_v4 import modeling_deepseek_v4 as mod
    rates = {"compressed_sparse_attention": 4, "heavily_compressed_attention": 8}
    config = mod.DeepseekV4Config(hidden_size=32, head_dim=16, num_attention_heads=2,
                                  num_hidden_layers=4, q_lora_rank=8, index_head_dim=8,
                                  index_n_heads=2, compress_rates=rates, vocab_size=64)
    compressor = mod.DeepseekV4HCACompressor(config)
    torch.nn.init.normal_(compressor.position_bias)
    seen = []
    forward = compressor.rotary_emb.forward

    def catch(x, position_ids, layer_type=None):
        seen.append((position_ids[0].numpy().copy(), layer_type))
        return forward(x, position_ids, layer_type)

    compressor.rotary_emb.forward = catch
    seq, ratio = 29, 8
    hidden = torch.randn(1, seq, 32)
    position_ids = torch.arange(seq)[None]
    _, bias = compressor(hidden, None, position_ids, None, 0)
    (positions, layer_type), = seen
    np.testing.assert_array_equal(positions, compressed_positions(seq // ratio, ratio))
    assert layer_type == "compress"
    visible = np.isfinite(bias[0, 0].numpy()).sum(axis=-1)  # per query: entries not masked
    np.testing.assert_array_equal(visible, visible_entries(np.arange(seq), ratio))


@pytest.mark.parametrize("scaling", [None, {"type": "yarn", "factor": 16,
                                            "original_max_position_embeddings": 65536,
                                            "beta_fast": 32, "beta_slow": 1}])
def test_deepseek_v4_rope_matches_hugging_face(scaling):
    from transformers.models.deepseek_v4 import modeling_deepseek_v4 as mod
    fields = {"rope_theta": 10000, "compress_rope_theta": 160000, "qk_rope_head_dim": 64,
              "head_dim": 512}
    if scaling:
        fields["rope_scaling"] = scaling
    hf_fields = {k: v for k, v in fields.items() if k != "rope_scaling"}
    config = mod.DeepseekV4Config(num_hidden_layers=4, **hf_fields,
                                  **({"rope_parameters": dict(scaling, rope_type="yarn")}
                                     if scaling else {}))
    rotary = mod.DeepseekV4RotaryEmbedding(config)
    ours = deepseek_v4_rope(fields)
    for kind in ("main", "compress"):
        theirs = getattr(rotary, f"{kind}_inv_freq").double().numpy()
        np.testing.assert_allclose(ours[kind][0], theirs, rtol=1e-6)
        assert ours[kind][1] == pytest.approx(getattr(rotary, f"{kind}_attention_scaling"))
    assert ours["main"][0][-1] > ours["compress"][0][-1]  # the compressed layers turn slower


def test_deepseek_v4_defaults_are_hugging_faces():
    from transformers.models.deepseek_v4 import modeling_deepseek_v4 as mod
    config = mod.DeepseekV4Config()
    ours = deepseek_v4_rope({})
    assert (config.rope_theta, config.compress_rope_theta, config.qk_rope_head_dim,
            config.head_dim) == (10000.0, 160000.0, 64, 512)
    assert config.compress_rates == {"compressed_sparse_attention": 4,
                                     "heavily_compressed_attention": 128}
    np.testing.assert_allclose(ours["compress"][0], rope_frequencies(64, 160000.0))


@pytest.mark.parametrize(("freq", "offset", "pattern"),
                         [(1, 2, None), (4, 2, None), (4, 3, None), (3, 0, None),
                          (1, 2, "FSSFSSFF")])
def test_indexer_types_match_glm_moe_dsa_config(freq, offset, pattern):
    from transformers import GlmMoeDsaConfig
    kwargs = {"index_topk_pattern": pattern} if pattern else {
        "index_topk_freq": freq, "index_skip_topk_offset": offset}
    config = GlmMoeDsaConfig(num_hidden_layers=8, **kwargs)
    ours = indexer_types(8, freq=freq, offset=offset, pattern=pattern)
    assert list(ours) == list(config.indexer_types)
    # offset >= 1 puts a full layer first, which every shared layer needs before it (with
    # offset 0 Hugging Face's rule itself makes layer 0 shared, and the model refuses to run)
    assert ours[0] == "full" or offset == 0


def test_bad_input_names_the_argument():
    x = np.zeros((3, 8))
    with pytest.raises(ValueError, match="slot"):
        rotate_slot(x, rotary_dim=4, slot="middle")
    with pytest.raises(ValueError, match="rotary_dim"):
        rotate_slot(x, rotary_dim=10, slot="last")
    with pytest.raises(ValueError, match="x must have shape"):
        rotate_slot(np.zeros(8), rotary_dim=4, slot="last")
    with pytest.raises(ValueError, match="ratio"):
        compressed_positions(3, 0)
    with pytest.raises(ValueError, match="positions"):
        visible_entries([-1, 2], 4)
    with pytest.raises(ValueError, match="pattern"):
        indexer_types(3, pattern="FXS")
    with pytest.raises(TypeError, match="config"):
        deepseek_v4_rope([("rope_theta", 1e4)])
