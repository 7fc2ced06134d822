"""posenc.inference: positions at inference, each identity against an independent formulation
(the model's own forward, a fresh run, Meta's complex-number RoPE, a loop over tokens)."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc.inference import (
    KVCache,
    attention_entropy,
    chunked_prefill,
    decoupled_keys,
    decoupled_scores,
    evict,
    mrope_shift,
    packed_mask,
    packed_position_ids,
    padded_mask,
    position_ids_from_mask,
    rerotate_keys,
    rerotate_mrope,
    run,
    streaming_keep,
    with_layout,
)
from posenc.model import TinyLM, TinyLMConfig
from posenc.rope import apply_rope_complex, interleaved_to_half, rope_frequencies
from posenc.rope_variants import apply_mrope, mrope_position_ids
from posenc.scaling import logn_scale, rope_scaling_frequencies

TOL = 1e-12  # float64 models: an identity holds to round-off


def model_of(position="rope", *, layers=2, seed=0, **options):
    """An untrained float64 TinyLM whose attention is far from uniform (q/k weights scaled
    up), so that a wrong position shows in the outputs."""
    torch.manual_seed(seed)
    model = TinyLM(TinyLMConfig(position=position, num_layers=layers, options=options)).double()
    with torch.no_grad():
        for block in model.blocks:
            block.attn.qkv.weight[: 2 * model.config.d_model] *= 20.0
    return model.eval()


def tokens_of(batch, seq, seed=1):
    return torch.randint(0, 256, (batch, seq), generator=torch.Generator().manual_seed(seed))


def max_diff(a, b):
    return float((a - b).abs().max())


# --- run: the model itself, with explicit positions, mask and cache ------------------------

@pytest.mark.parametrize("position,options", [("rope", {}), ("rope", {"rope_layout": "half"}),
                                              ("alibi", {}), ("none", {})])
def test_run_equals_the_models_forward(position, options):
    model, tokens = model_of(position, **options), tokens_of(2, 17)
    with torch.no_grad():
        assert max_diff(run(model, tokens).logits, model(tokens)) < TOL


def test_run_equals_forward_with_nope_blocks():
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(position="rope", num_layers=4, nope_every=2)).double().eval()
    tokens = tokens_of(1, 9)
    with torch.no_grad():
        assert max_diff(run(model, tokens).logits, model(tokens)) < TOL


@given(st.integers(1, 12), st.integers(1, 12), st.sampled_from(["rope", "alibi"]))
def test_a_cache_continues_a_run_exactly(first, second, position):
    model, tokens = model_of(position), tokens_of(2, first + second)
    with torch.no_grad():
        full = run(model, tokens).logits
        head = run(model, tokens[:, :first])
        tail = run(model, tokens[:, first:], cache=head.cache)
    assert tail.cache.length == first + second
    assert max_diff(torch.cat([head.logits, tail.logits], 1), full) < TOL


def test_run_refuses_what_it_cannot_place():
    with pytest.raises(ValueError, match="absolute table"):
        run(TinyLM(TinyLMConfig(position="sinusoidal")), tokens_of(1, 4))
    with pytest.raises(ValueError, match="block 0 uses position 't5'"):
        run(TinyLM(TinyLMConfig(position="t5")), tokens_of(1, 4))
    with pytest.raises(ValueError, match="window, chunk, sinks"):
        run(TinyLM(TinyLMConfig(pattern="gpt_oss", num_layers=2)), tokens_of(1, 4))
    with pytest.raises(TypeError, match="TinyLM"):
        run(torch.nn.Linear(2, 2), tokens_of(1, 4))


def test_run_refuses_bad_positions_masks_and_scales():
    model, tokens = model_of(), tokens_of(2, 5)
    with pytest.raises(ValueError, match=r"positions must have shape \(2, 5\)"):
        run(model, tokens, positions=torch.arange(4))
    with pytest.raises(ValueError, match="positions must be >= 0"):
        run(model, tokens, positions=torch.arange(5) - 1)
    with pytest.raises(TypeError, match="positions must be an integer tensor"):
        run(model, tokens, positions=torch.arange(5.0))
    with pytest.raises(ValueError, match=r"allowed must have shape \[2, 5, 5\]"):
        run(model, tokens, allowed=torch.ones(5, 6, dtype=torch.bool))
    with pytest.raises(TypeError, match="allowed must be a bool"):
        run(model, tokens, allowed=torch.ones(5, 5))
    with pytest.raises(ValueError, match="query_scale"):
        run(model, tokens, query_scale=np.zeros(5))
    with pytest.raises(ValueError, match="frequencies must have shape"):
        run(model, tokens, frequencies=np.ones(3))
    cache = run(model, tokens).cache
    with pytest.raises(ValueError, match="cache must be a KVCache"):
        run(model, tokens[:1], cache=cache)


# --- left padding -------------------------------------------------------------------------

def reference_position_ids(mask):
    """A loop: each token's position is the number of real tokens before it in its row."""
    out = []
    for row in mask.tolist():
        seen, ids = 0, []
        for real in row:
            ids.append(seen if real else 0)  # padding at 0, as transformers 5.x
            seen += real
        out.append(ids)
    return torch.tensor(out)


@given(st.lists(st.integers(0, 6), min_size=1, max_size=4), st.integers(1, 6))
def test_position_ids_from_mask_count_real_tokens(pads, length):
    mask = torch.tensor([[0] * p + [1] * length + [0] * (6 - p) for p in pads])
    assert torch.equal(position_ids_from_mask(mask), reference_position_ids(mask))


@pytest.mark.parametrize("position", ["rope", "alibi"])
def test_left_padding_with_the_right_ids_and_mask_reproduces_each_prompt(position):
    model = model_of(position)
    prompts = [tokens_of(1, 7, seed=2)[0], tokens_of(1, 4, seed=3)[0]]
    width = 7
    tokens = torch.stack([torch.cat([torch.zeros(width - len(p), dtype=torch.long), p])
                          for p in prompts])
    mask = (torch.arange(width)[None, :] >= torch.tensor([[width - len(p)] for p in prompts]))
    mask = mask.long()
    short = prompts[1]
    with torch.no_grad():
        alone = model(short[None])[0]
        right = run(model, tokens, positions=position_ids_from_mask(mask),
                    allowed=padded_mask(mask))
        for row, prompt in enumerate(prompts):
            assert max_diff(right.logits[row, width - len(prompt):], model(prompt[None])[0]) < TOL
        # no padding mask: the short prompt reads its padding
        unmasked = run(model, tokens, positions=position_ids_from_mask(mask)).logits
        assert max_diff(unmasked[1, width - len(short):], alone) > 1e-3
        # ids 0..6 in every row (padding counted): a uniform shift, which a relative
        # method does not see
        counted = run(model, tokens, allowed=padded_mask(mask)).logits
        assert max_diff(counted[1, width - len(short):], alone) < TOL
        # the next token: from the ids (4 for the short row) it continues the prompt; at
        # its slot (7) after ids from the mask, it sits 3 positions too far
        nxt = tokens_of(2, 1, seed=9)
        allowed = torch.cat([padded_mask(mask)[:, -1:], torch.ones(2, 1, 1, dtype=torch.bool)],
                            -1)
        allowed[:, :, -1] = True
        good = run(model, nxt, cache=right.cache, allowed=allowed).logits[1, -1]
        slot = run(model, nxt, cache=right.cache, allowed=allowed,
                   positions=torch.full((2, 1), width)).logits[1, -1]
        both = model(torch.cat([short, nxt[1]])[None])[0, -1]
        assert max_diff(good, both) < TOL
        assert max_diff(slot, both) > 1e-3


def test_padding_masks_refuse_bad_masks():
    with pytest.raises(ValueError, match="only 0"):
        position_ids_from_mask(torch.tensor([[0, 2]]))
    with pytest.raises(ValueError, match=r"\[batch, seq\]"):
        padded_mask(torch.tensor([1, 1]))


# --- packing ------------------------------------------------------------------------------

def test_packed_ids_and_mask_against_a_loop():
    lengths = [3, 1, 4]
    assert packed_position_ids(lengths).tolist() == [0, 1, 2, 0, 0, 1, 2, 3]
    mask = packed_mask(lengths)
    doc = [0, 0, 0, 1, 2, 2, 2, 2]
    for i in range(8):
        for j in range(8):
            assert bool(mask[i, j]) == (j <= i and doc[i] == doc[j])
    with pytest.raises(ValueError, match=r"lengths\[1\] must be an integer >= 1"):
        packed_mask([3, 0])
    with pytest.raises(TypeError, match="lengths"):
        packed_position_ids("34")


@pytest.mark.parametrize("position", ["rope", "alibi"])
def test_packing_needs_the_ids_and_the_mask(position):
    model = model_of(position)
    docs = [tokens_of(1, 5, seed=4)[0], tokens_of(1, 6, seed=5)[0]]
    packed = torch.cat(docs)[None]
    lengths = [len(d) for d in docs]
    with torch.no_grad():
        alone = torch.cat([model(d[None])[0] for d in docs])
        both = run(model, packed, positions=packed_position_ids(lengths),
                   allowed=packed_mask(lengths)).logits[0]
        ids_only = run(model, packed, positions=packed_position_ids(lengths)).logits[0]
        mask_only = run(model, packed, allowed=packed_mask(lengths)).logits[0]
    assert max_diff(both, alone) < TOL
    second = slice(lengths[0], None)
    assert max_diff(ids_only[second], alone[second]) > 1e-3  # reads the first document
    # the mask with ids running on: each document is shifted uniformly, which RoPE and
    # ALiBi (relative) do not see
    assert max_diff(mask_only[second], alone[second]) < TOL


# --- the cache holds rotated keys ------------------------------------------------------------

@given(st.integers(0, 500), st.integers(-300, 300), st.sampled_from(["interleaved", "half"]))
def test_rerotating_by_delta_equals_rotating_at_the_new_position(m, delta, layout):
    """R(delta) R(m) k = R(m + delta) k; the reference is Meta's complex-number form."""
    m = max(m, -delta)
    rng = np.random.default_rng(m)
    k = rng.normal(size=(3, 16))
    freqs = rope_frequencies(16, 10000.0)
    if layout == "half":  # the complex form is interleaved: compare through the permutation
        perm = interleaved_to_half(16)
        cached = torch.from_numpy(apply_rope_complex(k, np.full(3, m))[:, perm])
        moved = rerotate_keys(cached, delta, frequencies=freqs, layout="half").numpy()
        expect = apply_rope_complex(k, np.full(3, m + delta))[:, perm]
    else:
        cached = torch.from_numpy(apply_rope_complex(k, np.full(3, m)))
        moved = rerotate_keys(cached, delta, frequencies=freqs, layout="interleaved").numpy()
        expect = apply_rope_complex(k, np.full(3, m + delta))
    assert np.allclose(moved, expect, atol=1e-9)


def test_rerotate_keys_refuses_bad_input():
    freqs = rope_frequencies(8, 10000.0)
    with pytest.raises(TypeError, match="delta must be integers"):
        rerotate_keys(torch.zeros(2, 8), 1.5, frequencies=freqs, layout="half")
    with pytest.raises(ValueError, match="layout"):
        rerotate_keys(torch.zeros(2, 8), 1, frequencies=freqs, layout="gptj")
    with pytest.raises(ValueError, match="keys must be a tensor"):
        rerotate_keys(torch.zeros(8), 1, frequencies=freqs, layout="half")


def test_streaming_keep():
    assert streaming_keep(20, sinks=4, window=6).tolist() == [0, 1, 2, 3, 14, 15, 16, 17, 18, 19]
    assert streaming_keep(8, sinks=4, window=6).tolist() == list(range(8))
    with pytest.raises(ValueError, match="window must be an integer >= 1"):
        streaming_keep(8, sinks=4, window=0)


@pytest.mark.parametrize("position", ["rope", "alibi"])
@pytest.mark.parametrize("reposition", [True, False])
def test_eviction_equals_a_fresh_run_of_the_kept_tokens(position, reposition):
    """One layer: a cached entry depends on its token and position only, so after eviction
    the next token must see what a fresh run over the kept tokens at their new (or old)
    positions gives."""
    model, tokens = model_of(position, layers=1), tokens_of(1, 21)
    keep = streaming_keep(20, sinks=4, window=6)
    with torch.no_grad():
        cache = run(model, tokens[:, :20]).cache
        small = evict(model, cache, keep, reposition=reposition)
        nxt = run(model, tokens[:, 20:], cache=small).logits[:, -1]
        kept = torch.cat([tokens[:, keep], tokens[:, 20:]], 1)
        ids = (torch.arange(11) if reposition else torch.tensor([*keep.tolist(), 20]))[None]
        fresh = run(model, kept, positions=ids).logits[:, -1]
    assert max_diff(nxt, fresh) < TOL
    assert small.positions.tolist()[0] == (list(range(10)) if reposition else keep.tolist())


def test_alibi_eviction_changes_no_key():
    model = model_of("alibi", layers=1)
    with torch.no_grad():
        cache = run(model, tokens_of(1, 12)).cache
    small = evict(model, cache, streaming_keep(12, sinks=2, window=3))
    assert torch.equal(small.keys[0], cache.keys[0][:, :, [0, 1, 9, 10, 11]])


def test_evict_refuses_bad_indices():
    model = model_of(layers=1)
    with torch.no_grad():
        cache = run(model, tokens_of(1, 6)).cache
    for bad in ([3, 1], [0, 6], [], [-1, 2]):
        with pytest.raises(ValueError, match="keep must"):
            evict(model, cache, bad)
    with pytest.raises(TypeError, match="KVCache"):
        evict(model, (cache.keys, cache.values), [0])
    assert isinstance(cache, KVCache)


# --- dynamic NTK and a cache ------------------------------------------------------------------

def test_dynamic_ntk_cache_disagrees_with_a_fresh_run_past_l0_only():
    model, tokens = model_of(layers=1), tokens_of(1, 24)
    l0, head_dim = 8, model.config.head_dim

    def dynamic(length):
        return rope_scaling_frequencies("dynamic", head_dim, factor=2.0,
                                        original_max_position_embeddings=l0, seq_len=length)[0]

    def decode(upto):
        cache, out = None, []
        for t in range(upto):
            step = run(model, tokens[:, t:t + 1], cache=cache, frequencies=dynamic(t + 1))
            cache, out = step.cache, out + [step.logits]
        return torch.cat(out, 1)

    with torch.no_grad():
        inside = max_diff(decode(l0), run(model, tokens[:, :l0], frequencies=dynamic(l0)).logits)
        fresh = run(model, tokens, frequencies=dynamic(24)).logits
        past = max_diff(decode(24)[:, -1], fresh[:, -1])
    assert inside < TOL and past > 1e-3


# --- prefix caching and chunked prefill ------------------------------------------------------

@given(st.integers(1, 9), st.sampled_from(["rope", "alibi"]))
def test_chunked_prefill_equals_one_forward(chunk, position):
    model, tokens = model_of(position), tokens_of(2, 19)
    with torch.no_grad():
        assert max_diff(chunked_prefill(model, tokens, chunk), model(tokens)) < TOL


def test_a_suffix_at_the_wrong_offset_changes_the_output():
    model, tokens = model_of(), tokens_of(1, 16)
    with torch.no_grad():
        assert max_diff(chunked_prefill(model, tokens, 8, offset=-8), model(tokens)) > 1e-3
        assert max_diff(chunked_prefill(model, tokens, 8, offset=3), model(tokens)) > 1e-3
    with pytest.raises(ValueError, match="< 0"):
        chunked_prefill(model, tokens, 4, offset=-5)
    with pytest.raises(ValueError, match="chunk must be an integer >= 1"):
        chunked_prefill(model, tokens, 0)


# --- interleaved <-> half ----------------------------------------------------------------------

@given(st.sampled_from([(16, 2), (32, 4), (24, 3), (8, 1)]), st.integers(0, 3))
def test_layout_conversion_is_a_permutation_of_wq_wk(shape, seed):
    d_model, heads = shape
    torch.manual_seed(seed)
    model = TinyLM(TinyLMConfig(position="rope", d_model=d_model, num_heads=heads,
                                num_layers=2)).double().eval()
    tokens = tokens_of(1, 11, seed)
    half = with_layout(model, "half")
    with torch.no_grad():
        assert max_diff(half(tokens), model(tokens)) < TOL
        assert max_diff(with_layout(half, "interleaved")(tokens), model(tokens)) < TOL
    # the value and output projections never move
    assert torch.equal(half.blocks[0].attn.qkv.weight[2 * d_model:],
                       model.blocks[0].attn.qkv.weight[2 * d_model:])


def test_the_wrong_layout_changes_the_output():
    model, tokens = model_of(), tokens_of(1, 16)
    with torch.no_grad():
        assert max_diff(with_layout(model, "half", permute=False)(tokens), model(tokens)) > 1e-2
    with pytest.raises(ValueError, match="position='rope'"):
        with_layout(model_of("alibi"), "half")


# --- MLA's decoupled key and M-RoPE's ids -------------------------------------------------------

def test_mla_shift_rerotates_only_the_rope_part():
    rng = np.random.default_rng(0)
    k_nope, k_rope = rng.normal(size=(6, 8)), rng.normal(size=(6, 4))
    q_nope, q_rope = rng.normal(size=(1, 8)), rng.normal(size=(1, 4))
    pos, delta = np.arange(10, 16), -7
    cached = decoupled_keys(k_nope, k_rope, pos)
    moved = cached.copy()
    moved[:, 8:] = rerotate_keys(torch.from_numpy(cached[:, 8:]), delta,
                                 frequencies=rope_frequencies(4), layout="interleaved").numpy()
    # the reference: scores written out as content term + rotated term at the new positions
    qn = 30 + delta
    rotated_q = apply_rope_complex(q_rope, np.array([qn]))
    expect = q_nope @ k_nope.T + rotated_q @ apply_rope_complex(k_rope, pos + delta).T
    assert np.allclose(decoupled_scores(q_nope, q_rope, moved, [qn]), expect)
    whole = rerotate_keys(torch.from_numpy(cached), delta, frequencies=rope_frequencies(12),
                          layout="interleaved").numpy()  # a whole-key shift: wrong for MLA
    assert not np.allclose(decoupled_scores(q_nope, q_rope, whole, [qn]), expect, atol=1e-3)
    with pytest.raises(ValueError, match="as many tokens"):
        decoupled_keys(k_nope, k_rope[:3], pos[:3])


def test_mrope_shift_of_an_evicted_image_is_its_extent_not_its_count():
    before, after = [3, (1, 4, 5), 2], [3, 2]  # a 4 x 5 image (20 tokens) dropped
    kept = np.r_[0:3, 23:25]
    delta = mrope_shift(before, after, kept)
    assert delta[:, 3:].tolist() == [[-5, -5]] * 3  # ids moved by max(h, w) = 5, not 20
    # dropping the image's first row: the height id of the rest moves, the others do not
    part = mrope_shift([3, (1, 4, 5)], [3, (1, 3, 5)], np.r_[0:3, 8:23])
    assert set(part[0, 3:]) == {0} and set(part[1, 3:]) == {-1} and set(part[2, 3:]) == {0}


def test_rerotate_mrope_equals_recomputing_at_the_new_ids():
    rng = np.random.default_rng(1)
    ids_old = mrope_position_ids([3, (1, 4, 5)])[:, 8:]
    ids_new = mrope_position_ids([3, (1, 3, 5)])[:, 3:]
    k = rng.normal(size=(ids_old.shape[1], 16))
    cached = apply_mrope(k, ids_old, sections=(2, 3, 3))
    moved = rerotate_mrope(cached, ids_new - ids_old, sections=(2, 3, 3))
    assert np.allclose(moved, apply_mrope(k, ids_new, sections=(2, 3, 3)))
    with pytest.raises(ValueError, match="kept must give one index"):
        mrope_shift([3], [2], np.array([0]))
    with pytest.raises(TypeError, match="delta must be integers"):
        rerotate_mrope(cached, (ids_new - ids_old) * 1.0, sections=(2, 3, 3))


# --- silent mismatches ---------------------------------------------------------------------------

def test_logn_scale_matches_qwens_list():
    """Qwen's modeling_qwen.py: logn_list[i - 1] = math.log(i, seq_length) if i > seq_length
    else 1."""
    seq_length = 2048
    qwen = [math.log(i, seq_length) if i > seq_length else 1 for i in range(1, 6000)]
    assert np.allclose(logn_scale(np.arange(5999), train_length=seq_length), qwen, rtol=1e-14)
    with pytest.raises(ValueError, match="positions must be >= 0"):
        logn_scale([-1], train_length=8)
    with pytest.raises(ValueError, match="train_length must be > 1"):
        logn_scale([1], train_length=1)


@given(st.lists(st.floats(-5, 5), min_size=2, max_size=8), st.floats(1.0, 4.0))
def test_a_larger_score_scale_never_raises_the_entropy(logits, c):
    z = np.array(logits)
    w = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    wc = np.exp(c * (z - z.max())) / np.exp(c * (z - z.max())).sum()
    assert attention_entropy(wc[None]) <= attention_entropy(w[None]) + 1e-12


def test_attention_entropy_of_uniform_rows_is_log_n():
    assert np.isclose(attention_entropy(np.full((2, 3, 5), 0.2)), np.log(5))
    with pytest.raises(ValueError, match="summing to 1"):
        attention_entropy(np.ones((2, 3)))


def test_dropping_yarns_factor_changes_the_outputs():
    model, tokens = model_of(), tokens_of(1, 16)
    freqs, factor = rope_scaling_frequencies("yarn", model.config.head_dim, factor=4.0,
                                             original_max_position_embeddings=8)
    model.set_rope_frequencies(freqs, factor)
    with torch.no_grad():
        kept = run(model, tokens, return_weights=True)
        dropped = run(model, tokens, attention_factor=1.0, return_weights=True)
        assert max_diff(kept.logits, model(tokens)) < TOL
    assert max_diff(kept.logits, dropped.logits) > 1e-3
    assert attention_entropy(dropped.weights[0]) > attention_entropy(kept.weights[0])


def test_held_out_windows_are_consecutive_slices_of_the_held_out_text():
    from posenc.data import load_stdlib_corpus
    from posenc.inference import held_out_windows

    corpus = load_stdlib_corpus()
    x, y = held_out_windows(corpus, count=3, length=5)
    for k in range(3):
        chunk = corpus.heldout[k * 6:(k + 1) * 6].astype(np.int64)
        assert x[k].tolist() == chunk[:-1].tolist() and y[k].tolist() == chunk[1:].tolist()
    with pytest.raises(ValueError, match="count x"):
        held_out_windows(corpus, count=10**7)


def test_a_padding_query_still_sees_itself():
    mask = padded_mask(torch.tensor([[0, 0, 1, 1]]))
    assert mask[0].diagonal().all() and not mask[0, 3, :2].any() and mask[0, 3, 2:].all()
