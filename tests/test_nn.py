import math

import pytest
import torch
import torch.nn.functional as F

from posenc.alibi import alibi_bias
from posenc.nn import (
    POSITION_METHODS,
    ALiBiBias,
    LearnedPositionalEmbedding,
    MultiHeadSelfAttention,
    RotaryEmbedding,
    ShawRelativePosition,
    SinusoidalPositionalEncoding,
    T5RelativeBias,
)
from posenc.nn.rope_kernel import apply_rope
from posenc.relative import relative_positions, t5_relative_bucket
from posenc.sinusoidal import sinusoidal_encoding


def make(position, causal=False, seed=0, **kw):
    torch.manual_seed(seed)
    m = MultiHeadSelfAttention(32, 4, position, causal=causal, **kw)
    if position == "t5":  # default init is tiny-ish; make the bias matter in the test
        torch.nn.init.normal_(m.encoding.embedding.weight, std=1.0)
    if position == "shaw":
        torch.nn.init.normal_(m.encoding.keys, std=1.0)
        torch.nn.init.normal_(m.encoding.values, std=1.0)
    return m.double().eval()


def test_no_position_is_permutation_equivariant():
    m = make("none")
    x = torch.randn(2, 12, 32, dtype=torch.float64)
    perm = torch.randperm(12)
    torch.testing.assert_close(m(x[:, perm]), m(x)[:, perm])


@pytest.mark.parametrize("position", [p for p in POSITION_METHODS if p != "none"])
def test_every_method_sees_order(position):
    m = make(position)
    x = torch.randn(2, 12, 32, dtype=torch.float64)
    perm = torch.roll(torch.arange(12), 3)
    assert not torch.allclose(m(x[:, perm]), m(x)[:, perm], atol=1e-6)


@pytest.mark.parametrize("position", POSITION_METHODS)
def test_causal_masking(position):
    m = make(position, causal=True)
    x = torch.randn(1, 10, 32, dtype=torch.float64)
    y = m(x)
    x2 = x.clone()
    x2[:, 6:] = torch.randn(1, 4, 32, dtype=torch.float64)  # change only the future
    torch.testing.assert_close(m(x2)[:, :6], y[:, :6])
    assert not torch.allclose(m(x2)[:, 6:], y[:, 6:])


def manual_attention(m, x, bias=None, rotate=False):
    """Attention written out with softmax, to check the SDPA paths."""
    b, s, d = x.shape
    q, k, v = m.qkv(x).view(b, s, 3, m.num_heads, m.head_dim).permute(2, 0, 3, 1, 4)
    if rotate:
        q, k = apply_rope(q), apply_rope(k)
    scores = q @ k.transpose(-1, -2) / math.sqrt(m.head_dim)
    if bias is not None:
        scores = scores + bias
    y = scores.softmax(-1) @ v
    return m.out(y.transpose(1, 2).reshape(b, s, d))


def test_alibi_attention_is_scores_plus_bias():
    m = make("alibi", causal=True)
    x = torch.randn(2, 9, 32, dtype=torch.float64)
    expected = manual_attention(m, x, torch.from_numpy(alibi_bias(4, 9)))
    torch.testing.assert_close(m(x), expected)


def test_rope_attention_rotates_q_and_k():
    m = make("rope", causal=True)
    x = torch.randn(2, 9, 32, dtype=torch.float64)
    mask = torch.full((9, 9), float("-inf"), dtype=torch.float64).triu(1)
    torch.testing.assert_close(m(x), manual_attention(m, x, mask, rotate=True))


def test_t5_attention_adds_looked_up_bias():
    m = make("t5")
    x = torch.randn(2, 9, 32, dtype=torch.float64)
    buckets = t5_relative_bucket(relative_positions(9), bidirectional=True)
    bias = m.encoding.embedding.weight[torch.from_numpy(buckets)].permute(2, 0, 1)
    torch.testing.assert_close(m(x), manual_attention(m, x, bias))


def test_shaw_attention_against_einsum_free_loop():
    m = make("shaw")
    x = torch.randn(1, 7, 32, dtype=torch.float64)
    q, k, v = m.qkv(x).view(1, 7, 3, 4, 8).permute(2, 0, 3, 1, 4)
    kmax = m.encoding.max_distance
    out = torch.zeros(1, 4, 7, 8, dtype=torch.float64)
    for h in range(4):
        for i in range(7):
            e = torch.stack([
                q[0, h, i] @ (k[0, h, j] + m.encoding.keys[max(-kmax, min(kmax, j - i)) + kmax])
                for j in range(7)]) / math.sqrt(8)
            p = e.softmax(-1)
            out[0, h, i] = sum(p[j] * (v[0, h, j]
                               + m.encoding.values[max(-kmax, min(kmax, j - i)) + kmax])
                               for j in range(7))
    expected = m.out(out.transpose(1, 2).reshape(1, 7, 32))
    torch.testing.assert_close(m(x), expected)


def test_sinusoidal_module_is_the_numpy_table_without_max_length():
    pe = SinusoidalPositionalEncoding(16)
    torch.testing.assert_close(pe(5), torch.from_numpy(sinusoidal_encoding(5, 16)).float())
    long = pe(20000)
    assert long.shape == (20000, 16)
    torch.testing.assert_close(pe(4, offset=9), long[9:13])


def test_learned_embedding_errors_past_its_length_and_interpolates():
    emb = LearnedPositionalEmbedding(8, 4)
    assert emb(8).shape == (8, 4)
    with pytest.raises(ValueError, match="max_positions=8"):
        emb(9)
    stretched = LearnedPositionalEmbedding(8, 4, interpolate="linear")
    stretched.load_state_dict(emb.state_dict())
    out = stretched(15)
    assert out.shape == (15, 4)
    torch.testing.assert_close(out[0], emb.weight[0])
    torch.testing.assert_close(out[-1], emb.weight[-1])
    torch.testing.assert_close(out[2], emb.weight[1])  # 15 rows: every other is an old row
    torch.testing.assert_close(out[1], (emb.weight[0] + emb.weight[1]) / 2)


def test_rotary_module_and_bias_modules():
    rot = RotaryEmbedding(8, layout="half")
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(rot(x), apply_rope(x, layout="half"))
    torch.testing.assert_close(ALiBiBias(4)(6, 8), torch.from_numpy(alibi_bias(4, 6, 8)).float())
    t5 = T5RelativeBias(3, num_buckets=8, max_distance=16, bidirectional=False)
    assert t5(5).shape == (3, 5, 5)
    a_k, a_v = ShawRelativePosition(8, 2)(6)
    assert a_k.shape == a_v.shape == (6, 6, 8)


def test_gradients_flow_through_every_method():
    for position in POSITION_METHODS:
        m = MultiHeadSelfAttention(16, 2, position, causal=True)
        m(torch.randn(2, 6, 16)).sum().backward()
        params = [p for p in m.parameters() if p.grad is not None]
        assert params and all(torch.isfinite(p.grad).all() for p in params)


def test_sdpa_is_used_for_alibi_and_equal_to_functional():
    x = torch.randn(1, 4, 6, 8)
    bias = torch.from_numpy(alibi_bias(4, 6)).float()
    ref = (x @ x.transpose(-1, -2) / math.sqrt(8) + bias).softmax(-1) @ x
    torch.testing.assert_close(F.scaled_dot_product_attention(x, x, x, attn_mask=bias), ref)


def test_bad_input():
    with pytest.raises(ValueError, match="position"):
        MultiHeadSelfAttention(32, 4, "cope_xyz")
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadSelfAttention(30, 4)
    with pytest.raises(ValueError, match="num_heads"):
        MultiHeadSelfAttention(32, 0)
    with pytest.raises(ValueError, match="head_dim"):
        MultiHeadSelfAttention(12, 4, "rope")  # head_dim 3 is odd
    with pytest.raises(ValueError, match="shape"):
        MultiHeadSelfAttention(32, 4)(torch.randn(2, 5, 16))
    with pytest.raises(TypeError, match="causal"):
        MultiHeadSelfAttention(32, 4, causal=1)
    with pytest.raises(ValueError, match="interpolate"):
        LearnedPositionalEmbedding(8, 4, interpolate="cubic")
    with pytest.raises(ValueError, match="head_dim"):
        RotaryEmbedding(8)(torch.randn(2, 3, 6))
    with pytest.raises(ValueError, match="max_distance"):
        T5RelativeBias(2, num_buckets=32, max_distance=4)
    with pytest.raises(ValueError, match="seq_len"):
        SinusoidalPositionalEncoding(8)(0)
