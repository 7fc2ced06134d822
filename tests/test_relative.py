import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.nn import MultiHeadSelfAttention
from posenc.relative import (
    relative_positions,
    shaw_attention_loop,
    shaw_relative_indices,
    t5_bucket_boundaries,
    t5_relative_bucket,
    transformer_xl_score_terms,
)
from posenc.sinusoidal import sinusoidal_encoding


def hf_t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """Hugging Face T5Attention._relative_position_bucket, transcribed."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, large)
    return relative_buckets


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", [(32, 128), (16, 64), (64, 512), (8, 20),
                                                      (32, 50)])
def test_matches_hugging_face(bidirectional, num_buckets, max_distance):
    rel = torch.arange(-3000, 3001)
    ours = t5_relative_bucket(rel.numpy(), bidirectional=bidirectional,
                              num_buckets=num_buckets, max_distance=max_distance)
    np.testing.assert_array_equal(ours, hf_t5_bucket(rel, bidirectional, num_buckets,
                                                     max_distance).numpy())


def test_exact_for_small_distances():
    rel = np.arange(-7, 8)
    b = t5_relative_bucket(rel)
    np.testing.assert_array_equal(b[rel <= 0], -rel[rel <= 0])  # keys before: 0..7
    np.testing.assert_array_equal(b[rel > 0], 16 + rel[rel > 0])  # keys after: 16 + d
    uni = t5_relative_bucket(rel, bidirectional=False)
    np.testing.assert_array_equal(uni[rel <= 0], -rel[rel <= 0])
    assert np.all(uni[rel > 0] == 0)


@given(num_buckets=st.sampled_from([8, 16, 32, 64]), max_distance=st.integers(40, 1000),
       bidirectional=st.booleans())
def test_monotone_and_saturating(num_buckets, max_distance, bidirectional):
    d = np.arange(0, 3 * max_distance)
    back = t5_relative_bucket(-d, bidirectional=bidirectional, num_buckets=num_buckets,
                              max_distance=max_distance)
    assert np.all(np.diff(back) >= 0)
    half = num_buckets // 2 if bidirectional else num_buckets
    assert back.max() == half - 1
    assert np.all(back[d >= max_distance] == half - 1)
    assert np.all(back[d < max_distance] <= half - 1)
    if bidirectional:
        fwd = t5_relative_bucket(d[1:], num_buckets=num_buckets, max_distance=max_distance)
        assert np.all(fwd >= half) and np.all(np.diff(fwd) >= 0)
        assert set(back).isdisjoint(set(fwd))  # sign split


def test_relative_positions_key_minus_query():
    r = relative_positions(3, 5)
    np.testing.assert_array_equal(r[-1], [-4, -3, -2, -1, 0])
    np.testing.assert_array_equal(relative_positions(3), [[0, 1, 2], [-1, 0, 1], [-2, -1, 0]])


def test_shaw_clipping():
    idx = shaw_relative_indices(10, max_distance=2)
    assert idx.shape == (10, 10) and idx.min() == 0 and idx.max() == 4
    i, j = np.indices((10, 10))
    np.testing.assert_array_equal(idx, np.clip(j - i, -2, 2) + 2)
    assert shaw_relative_indices(1000, 3).max() == 6  # any length, 2k+1 entries


def test_bad_input():
    with pytest.raises(TypeError, match="relative_position"):
        t5_relative_bucket(np.array([0.5]))
    with pytest.raises(ValueError, match="num_buckets"):
        t5_relative_bucket(0, num_buckets=0)
    with pytest.raises(ValueError, match="max_distance"):
        t5_relative_bucket(0, num_buckets=32, max_distance=4)
    with pytest.raises(ValueError, match="max_distance"):
        shaw_relative_indices(5, 0)
    with pytest.raises(ValueError, match="key_length"):
        relative_positions(5, 2)


# --- chapter 07 helpers: Shaw loop, T5 bucket boundaries, Transformer-XL terms ---

def shaw_gather(q, k, v, rel_keys, rel_values):
    """Shaw attention vectorised by gathering table rows: a second formulation."""
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    k_max = (len(rel_keys) - 1) // 2
    idx = np.clip(relative_positions(n_q, n_k), -k_max, k_max) + k_max  # [n_q, n_k]
    a_k, a_v = rel_keys[idx], rel_values[idx]  # [n_q, n_k, d]
    e = (q @ k.T + np.einsum("id,ijd->ij", q, a_k)) / np.sqrt(d)
    p = np.exp(e - e.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return p @ v + np.einsum("ij,ijd->id", p, a_v), p


@settings(max_examples=30)
@given(n_q=st.integers(1, 6), extra_keys=st.integers(0, 4), d=st.integers(1, 6),
       k_max=st.integers(0, 5), seed=st.integers(0, 10**6))
def test_shaw_loop_matches_gather_formulation(n_q, extra_keys, d, k_max, seed):
    rng = np.random.default_rng(seed)
    n_k = n_q + extra_keys
    q, k, v = rng.normal(size=(n_q, d)), rng.normal(size=(n_k, d)), rng.normal(size=(n_k, d))
    tk, tv = rng.normal(size=(2 * k_max + 1, d)), rng.normal(size=(2 * k_max + 1, d))
    z, p = shaw_attention_loop(q, k, v, tk, tv)
    z2, p2 = shaw_gather(q, k, v, tk, tv)
    np.testing.assert_allclose(p, p2, atol=1e-12)
    np.testing.assert_allclose(z, z2, atol=1e-12)
    np.testing.assert_allclose(p.sum(1), 1.0)


def test_shaw_loop_without_tables_is_plain_attention(rng):
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    z, p = shaw_attention_loop(q, k, v, np.zeros((5, 3)))
    e = q @ k.T / np.sqrt(3)
    ref = np.exp(e) / np.exp(e).sum(1, keepdims=True)
    np.testing.assert_allclose(p, ref)
    np.testing.assert_allclose(z, ref @ v)


def test_shaw_loop_matches_the_torch_layer():
    torch.manual_seed(1)
    m = MultiHeadSelfAttention(12, 3, "shaw", shaw_max_distance=2).double().eval()
    torch.nn.init.normal_(m.encoding.keys)
    torch.nn.init.normal_(m.encoding.values)
    x = torch.randn(1, 7, 12, dtype=torch.float64)
    q, k, v = m.qkv(x).view(1, 7, 3, 3, 4).permute(2, 0, 3, 1, 4)
    heads = [shaw_attention_loop(q[0, h], k[0, h], v[0, h], m.encoding.keys,
                                 m.encoding.values)[0] for h in range(3)]
    y = m.out(torch.from_numpy(np.concatenate(heads, axis=1))[None])
    torch.testing.assert_close(y, m(x))


def test_shaw_loop_bad_input():
    with pytest.raises(ValueError, match="rel_keys"):
        shaw_attention_loop(np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3)), np.ones((4, 3)))
    with pytest.raises(ValueError, match="q"):
        shaw_attention_loop(np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 4)), np.ones((3, 4)))
    with pytest.raises(ValueError, match="keys"):
        shaw_attention_loop(np.ones((3, 2)), np.ones((2, 2)), np.ones((2, 2)), np.ones((3, 2)))
    with pytest.raises(TypeError, match="q"):
        shaw_attention_loop(np.array([["a"]]), np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)))


@given(num_buckets=st.sampled_from([8, 16, 32, 64]), max_distance=st.integers(40, 600),
       bidirectional=st.booleans())
def test_t5_bucket_boundaries_cover_every_distance(num_buckets, max_distance, bidirectional):
    buckets, starts = t5_bucket_boundaries(num_buckets=num_buckets, max_distance=max_distance,
                                           bidirectional=bidirectional)
    assert starts[0] == 0 and np.all(np.diff(starts) > 0) and np.all(np.diff(buckets) > 0)
    d = np.arange(0, 2 * max_distance)
    expected = hf_t5_bucket(torch.from_numpy(-d), bidirectional, num_buckets,
                            max_distance).numpy()
    owner = buckets[np.searchsorted(starts, d, side="right") - 1]
    np.testing.assert_array_equal(owner, expected)


def test_t5_bucket_boundaries_defaults():
    buckets, starts = t5_bucket_boundaries()
    np.testing.assert_array_equal(buckets, np.arange(16))  # all 16 looking-back buckets used
    np.testing.assert_array_equal(starts[:8], np.arange(8))  # exact: one distance each
    assert starts[-1] <= 128 and t5_relative_bucket(-starts[-1]) == 15


def test_sinusoid_at_matches_the_table():
    from posenc.relative import _sinusoid_at

    for d in (6, 7):
        np.testing.assert_allclose(_sinusoid_at(np.arange(20.0), d, 100.0),
                                   sinusoidal_encoding(20, d, 100.0), atol=1e-12)


def xl_inputs(rng, length=7, d_model=8, d_head=4):
    return (rng.normal(size=(length, d_model)), rng.normal(size=(d_model, d_head)),
            rng.normal(size=(d_model, d_head)), rng.normal(size=(d_model, d_head)),
            rng.normal(size=d_head), rng.normal(size=d_head))


def test_transformer_xl_terms_against_a_loop(rng):
    e, w_q, w_ke, w_kr, u, v = xl_inputs(rng)
    terms = transformer_xl_score_terms(e, w_q, w_ke, w_kr, u, v, base=50.0)
    table = sinusoidal_encoding(7, 8, 50.0)  # R_n for n = 0..6 (keys at or before queries)
    for i in range(7):
        for j in range(i + 1):
            q, k, r = e[i] @ w_q, e[j] @ w_ke, table[i - j] @ w_kr
            total = q @ k + q @ r + u @ k + v @ r
            assert math.isclose(sum(t[i, j] for t in terms.values()), total, rel_tol=1e-10,
                                abs_tol=1e-10)


def test_transformer_xl_terms_structure(rng):
    e, w_q, w_ke, w_kr, u, v = xl_inputs(rng, length=9)
    t = transformer_xl_score_terms(e, w_q, w_ke, w_kr, u, v)
    i, j = np.indices((9, 9))
    for n in range(-8, 9):  # (d) depends on i - j only: constant along each diagonal
        diag = t["d"][i - j == n]
        np.testing.assert_allclose(diag, diag[0])
    np.testing.assert_allclose(t["c"], t["c"][:1].repeat(9, 0))  # (c) depends on j only
    # the same content later in a longer sequence gets the same scores: no absolute position
    longer = np.concatenate([rng.normal(size=(5, 8)), e])
    t2 = transformer_xl_score_terms(longer, w_q, w_ke, w_kr, u, v)
    for name in "abcd":
        np.testing.assert_allclose(t2[name][5:, 5:], t[name], atol=1e-12)


def test_transformer_xl_bad_input(rng):
    e, w_q, w_ke, w_kr, u, v = xl_inputs(rng)
    with pytest.raises(ValueError, match="w_q"):
        transformer_xl_score_terms(e, w_q[:5], w_ke, w_kr, u, v)
    with pytest.raises(ValueError, match="u and v"):
        transformer_xl_score_terms(e, w_q, w_ke, w_kr, u[:2], v)
    with pytest.raises(ValueError, match="content"):
        transformer_xl_score_terms(e[0], w_q, w_ke, w_kr, u, v)
    with pytest.raises(ValueError, match="base"):
        transformer_xl_score_terms(e, w_q, w_ke, w_kr, u, v, base=1.0)
