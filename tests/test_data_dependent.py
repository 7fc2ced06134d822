"""Position from the data (issue 36): FoX's forgetting bias, stick-breaking weights and PaTH's
Householder products (posenc.data_dependent), each against a transcription of its authors'
reference code and against known identities (FoX with f = 1 is NoPE, with a constant gate
ALiBi; stick-breaking leaves 1 - prod(1 - sigmoid) of the stick; PaTH's reflections are
orthogonal and its products telescope); the torch methods "fox" and "stick_breaking" equal
the numpy formulas in float64 and the authors' attention end to end; and the two hooks they
need (a score_bias that reads the layer's input, a normalise that replaces the softmax)."""

import ast
import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from posenc.alibi import alibi_bias, alibi_slopes
from posenc.data_dependent import (
    forgetting_attention_bias,
    householder,
    path_logits,
    path_transforms,
    stick_breaking_order,
    stick_breaking_weights,
)
from posenc.model import TinyLM, TinyLMConfig
from posenc.nn import (
    POSITIONS,
    AttentionSpec,
    ForgettingAttentionBias,
    MultiHeadSelfAttention,
    PositionEncoding,
    StickBreakingAttention,
    register_position,
)
from posenc.nn.positions import call_score_bias
from posenc.rope import apply_rope

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest.py

SEEDS = st.integers(0, 2**32 - 1)


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


# --- transcriptions of the authors' reference code (float64 kept where they cast to float32) -

def fox_reference_bias(log_fgate: torch.Tensor) -> torch.Tensor:
    """FoX's decay bias, transcribed from zhixuan-lin/forgetting-transformer at commit
    883f260c636e87971339749b0d8310004794a5cc:
    src/forgetting_transformer/model/forgetting_transformer/modeling_forgetting_transformer.py
    (the ``output_attentions`` branch of ``ForgettingAttentionLayer.forward``) for the bias,
    and src/forgetting_transformer/ops/forgetting_attention.py (``_fwd_kernel``) for the
    causal rule. ``log_fgate`` ``[B, H, T]``."""
    log_lambda = torch.cumsum(log_fgate, dim=-1)
    decay_bias = log_lambda[:, :, :, None] - log_lambda[:, :, None, :]
    offs = torch.arange(log_fgate.shape[-1])
    causal_mask = offs[:, None] >= offs[None, :]
    return torch.where(causal_mask, decay_bias, float("-inf"))


def fla_naive_forgetting_attn(q, k, v, g, scale=None):
    """fla-org/flash-linear-attention at commit bc3b101dcb713ddc5bd8924b66754eb68b5ccf89,
    fla/ops/forgetting_attn/naive.py ``naive_forgetting_attn`` (the FoX README's pointer to
    a variable-length implementation), with one query head per key head (``G = 1``, so
    ``repeat`` is the identity), no window, einops written out. ``q``, ``k``, ``v``
    ``[B, T, H, D]``, ``g`` ``[B, T, H]`` (log forget gates)."""
    _, T, HQ, D = q.shape
    if scale is None:
        scale = D ** -0.5
    gc = g.cumsum(1)
    mask = torch.tril(torch.ones((T, T), dtype=torch.bool))
    ref = torch.einsum("bqhd,bkhd->bhqk", q * scale, k)
    gc = gc.permute(0, 2, 1)  # "b t h -> b h t"
    ref = ref + gc[..., :, None] - gc[..., None, :]
    ref = ref.masked_fill(~mask.unsqueeze(0).unsqueeze(0), -float("inf"))
    return torch.einsum("bhqk,bkhd->bqhd", F.softmax(ref, dim=-1), v)


def sb_reference(q, k, v, mask, cum_weight):
    """Stick-breaking attention, transcribed from shawntan/stickbreaking-attention at commit
    3147a3841b025a31d271fc8f873120ff6fa0461b, stickbreaking_attention/sb_ref.py
    ``stickbreaking`` (its ``.float()`` round trip left out: the inputs here are float64).
    Returns ``(att @ v, 1 - att.sum(-1))``."""
    logits = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    log_z = F.logsigmoid(logits).masked_fill(mask, -1e5)
    log_beta = F.logsigmoid(-logits).masked_fill(mask, 0)
    re_cum_log_beta = torch.einsum("bhij,jk->bhik", log_beta, cum_weight.to(log_beta))
    log_att = log_z + re_cum_log_beta
    att = log_att.exp()
    return att @ v, 1 - att.sum(dim=-1)


def sb_reference_masks(length, attend_current):
    """The mask and cumulative weight of ``ref_fwd`` in the same repository's
    tests/test_attn.py (on the CPU)."""
    cm = torch.ones(length, length).tril(-1).double()
    mask = torch.ones(length, length).triu(1 if attend_current else 0).bool()
    return mask, cm


def sb_reference_forward(q, k, v, attend_current=True):
    """tests/test_attn.py ``ref_fwd``: the output, the rest of the stick on the own value."""
    mask, cm = sb_reference_masks(q.shape[-2], attend_current)
    o, rem = sb_reference(q, k, v, mask, cm)
    return o + rem[..., None] * v


def fla_naive_path_attn(q, k, v, w, beta, g, scale, chunk_size=4):
    """PaTH attention, transcribed from fla-org/flash-linear-attention at commit
    bc3b101dcb713ddc5bd8924b66754eb68b5ccf89, fla/ops/path_attn/naive.py
    ``naive_path_attn`` (the authors' reference: Yang et al. wrote PaTH's kernels there),
    one query head per key head, einops written out, float64 kept. ``q``, ``k``, ``v``,
    ``w`` ``[B, T, H, D]``; ``beta``, ``g`` ``[B, T, H]``. Returns the logits ``A``
    (before ``scale``, the forget gate ``g`` and the softmax) and the output."""
    q, k, v, w, beta, g = (x.transpose(1, 2) for x in (q, k, v, w, beta, g))
    g_cumsum = g.cumsum(-1)
    b, h, l, _ = q.shape
    BT = chunk_size
    if l % BT != 0:
        padding_size = BT - l % BT
        q, k, w = (F.pad(x, (0, 0, 0, padding_size)) for x in (q, k, w))
        beta = F.pad(beta, (0, padding_size))
    seq_len = q.shape[2]
    w_beta = w * beta[..., None]
    q, k, w, w_beta = (x.reshape(b, h, seq_len // BT, BT, x.shape[-1])
                       for x in (q, k, w, w_beta))  # "b h (n c) d -> b h n c d"
    mask = torch.triu(torch.ones(BT, BT, dtype=torch.bool), diagonal=0)
    T_mat = -(w_beta @ w.transpose(-1, -2)).masked_fill(mask, 0)
    for i in range(1, BT):
        T_mat[..., i, :i] = T_mat[..., i, :i].clone() + (
            T_mat[..., i, :, None].clone() * T_mat[..., :, :i].clone()).sum(-2)
    T_mat = T_mat + torch.eye(BT, dtype=q.dtype)
    Twbk = T_mat @ (w_beta @ k.transpose(-1, -2)).masked_fill(mask, 0)
    qw = (q @ w.transpose(-1, -2)).tril()
    Twb = T_mat @ w_beta
    A_local = (q @ k.transpose(-1, -2)).tril() - qw @ Twbk
    q = q - qw @ Twb
    k = k - Twbk.transpose(-1, -2) @ w
    H_mat = w.transpose(-1, -2) @ Twb
    A = torch.zeros(b, h, seq_len, seq_len, dtype=q.dtype)
    q, k = (x.reshape(b, h, seq_len, x.shape[-1]) for x in (q, k))
    for i in range(0, seq_len, BT):
        q_i = q[:, :, i:i + BT].clone()
        for j in range(i - BT, -BT, -BT):
            k_j = k[:, :, j:j + BT]
            A[:, :, i:i + BT, j:j + BT] = q_i @ k_j.transpose(-1, -2)
            q_i = q_i - q_i @ H_mat[:, :, j // BT]
    for i in range(0, seq_len // BT):
        A[:, :, i * BT:i * BT + BT, i * BT:i * BT + BT] = A_local[:, :, i]
    A = A.masked_fill_(~torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool)),
                       float("-inf"))
    A = A[:, :, :l, :l]
    logits = A.clone()
    A = A + g_cumsum[..., None] - g_cumsum[..., None, :]
    ref_o = (A * scale).softmax(-1).to(v) @ v
    return logits, ref_o.transpose(1, 2)


def fla_path_decoding_logits(q, k, w, beta):
    """PaTH's logits one token at a time, as the authors' decoding step does it:
    fla/layers/path_attn.py (same commit) ``rank_one_update`` turns every cached key by the
    new token's ``H_t`` (``k - beta (k . w) w``) before the new key joins the cache.
    ``q``, ``k``, ``w`` ``[T, D]``, ``beta`` ``[T]`` (numpy); returns ``[T, T]``."""
    T = q.shape[0]
    past_k = np.zeros((0, q.shape[1]))
    logits = np.full((T, T), -np.inf)
    for t in range(T):
        past_k = past_k - beta[t] * (past_k * w[t]).sum(-1, keepdims=True) * w[t]
        past_k = np.concatenate([past_k, k[t:t + 1]])
        logits[t, :t + 1] = past_k @ q[t]
    return logits


# --- FoX ----------------------------------------------------------------------------------

@given(SEEDS, st.integers(1, 12), st.integers(1, 3))
def test_fox_bias_is_the_authors_decay_bias(seed, n, heads):
    rng = np.random.default_rng(seed)
    log_f = -np.logaddexp(0, -rng.normal(scale=3, size=(2, heads, n)))  # logsigmoid
    expected = fox_reference_bias(torch.from_numpy(log_f)).numpy()
    np.testing.assert_allclose(forgetting_attention_bias(log_f), expected, rtol=1e-12,
                               atol=1e-12)


@given(SEEDS, st.integers(1, 10))
def test_fox_bias_sums_the_gates_between_query_and_key(seed, n):
    """A second formulation: the sum written as a loop; and it telescopes."""
    log_f = -np.random.default_rng(seed).exponential(size=n)
    bias = forgetting_attention_bias(log_f)
    both = forgetting_attention_bias(log_f, causal=False)
    for i in range(n):
        for j in range(n):
            between = sum(log_f[lo] for lo in range(min(i, j) + 1, max(i, j) + 1))
            assert both[i, j] == pytest.approx(between, abs=1e-12)
            assert bias[i, j] == (pytest.approx(between, abs=1e-12) if j <= i else -np.inf)
            for mid in range(j, i + 1):
                assert bias[i, j] == pytest.approx(bias[i, mid] + bias[mid, j], abs=1e-12)


def test_fox_with_every_gate_open_is_nope():
    """f = 1: nothing forgotten, no position; only the causal mask is left."""
    np.testing.assert_array_equal(forgetting_attention_bias(np.zeros((3, 7))),
                                  np.broadcast_to(np.where(np.tri(7), 0.0, -np.inf), (3, 7, 7)))
    assert not forgetting_attention_bias(np.zeros(5), causal=False).any()


@pytest.mark.parametrize("heads", [1, 4, 6, 8])
@pytest.mark.parametrize("causal", [True, False])
def test_fox_with_a_constant_gate_is_alibi(heads, causal):
    """f = exp(-m): every token forgets the same, so the bias is -m (i - j), ALiBi."""
    slopes = alibi_slopes(heads)
    log_f = np.broadcast_to(-slopes[:, None], (heads, 11))
    np.testing.assert_allclose(forgetting_attention_bias(log_f, causal=causal),
                               alibi_bias(heads, 11, causal=causal), rtol=1e-12, atol=1e-12)


def test_fox_is_data_dependent_where_alibi_is_not():
    """The bias at (i, j) moves with the gates of the tokens between them, and only with
    those; ALiBi's depends on i - j alone."""
    log_f = np.full(8, -0.5)
    i, j = 6, 2
    for lo in range(8):
        changed = log_f.copy()
        changed[lo] = -3.0
        moved = forgetting_attention_bias(changed)[i, j] != forgetting_attention_bias(log_f)[i, j]
        assert moved == (j < lo <= i), lo
    alibi = alibi_bias(1, 8)[0]
    assert alibi[6, 2] == alibi[7, 3] == alibi[4, 0]


def test_fox_bias_refuses_bad_gates():
    with pytest.raises(ValueError, match=r"log_f must hold logs.*<= 0"):
        forgetting_attention_bias([0.0, 0.5])
    with pytest.raises(ValueError, match="log_f must hold"):
        forgetting_attention_bias([-np.inf, 0.0])
    with pytest.raises(ValueError, match="log_f must have at least 1 dimension"):
        forgetting_attention_bias(-1.0)
    with pytest.raises(TypeError, match="causal must be True or False"):
        forgetting_attention_bias([-1.0], causal=1)


def _fox_layer(causal=True, seed=0):
    torch.manual_seed(seed)
    return MultiHeadSelfAttention(16, 2, "fox", causal=causal).double()


def _qkv(layer, x):
    b, s, _ = x.shape
    return layer.qkv(x).view(b, s, 3, layer.num_heads, layer.head_dim).permute(2, 0, 3, 1, 4)


@pytest.mark.parametrize("causal", [True, False])
def test_fox_module_equals_the_numpy_bias_in_float64(causal):
    layer = _fox_layer(causal)
    x = torch.randn(2, 9, 16, dtype=torch.float64)
    fox = layer.encoding
    gate = x.numpy() @ fox.gate.weight.detach().numpy().T + fox.gate.bias.detach().numpy()
    log_f = -np.logaddexp(0, -gate).transpose(0, 2, 1)  # [b, h, n]
    np.testing.assert_allclose(fox.log_forget(x).detach().numpy(), log_f, rtol=1e-12)
    q, k, _ = _qkv(layer, x)
    bias = call_score_bias(fox, q, k, x)
    assert bias.dtype == torch.float64 and bias.shape == (2, 2, 9, 9)
    np.testing.assert_allclose(bias.detach().numpy(),
                               forgetting_attention_bias(log_f, causal=causal), rtol=1e-12,
                               atol=1e-12)


def test_fox_layer_is_the_reference_forgetting_attention():
    """End to end: the layer's output is fla's naive forgetting attention on the layer's own
    q, k, v and gates, through the output projection."""
    layer = _fox_layer()
    x = torch.randn(3, 10, 16, dtype=torch.float64)
    q, k, v = _qkv(layer, x)  # [b, h, n, d]
    g = layer.encoding.log_forget(x).transpose(1, 2)  # [b, n, h]
    o = fla_naive_forgetting_attn(*(t.transpose(1, 2) for t in (q, k, v)), g)  # [b, n, h, d]
    expected = layer.out(o.reshape(3, 10, 16))
    torch.testing.assert_close(layer(x), expected, rtol=1e-10, atol=1e-12)


def test_fox_layer_with_open_gates_is_the_nope_layer():
    layer = _fox_layer()
    nope = MultiHeadSelfAttention(16, 2, "none", causal=True).double()
    nope.load_state_dict(layer.state_dict(), strict=False)
    with torch.no_grad():
        layer.encoding.gate.weight.zero_()
        layer.encoding.gate.bias.fill_(60.0)  # f = sigmoid(60): log f ~ -1e-26
    x = torch.randn(2, 8, 16, dtype=torch.float64)
    torch.testing.assert_close(layer(x), nope(x), rtol=1e-12, atol=1e-12)


def test_fox_gates_learn_in_the_tiny_lm():
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(position="fox", vocab_size=50, d_model=32, num_layers=2))
    tokens = torch.randint(0, 50, (2, 12))
    changed = tokens.clone()
    changed[:, 6:] = (changed[:, 6:] + 1) % 50
    torch.testing.assert_close(model(changed)[:, :6], model(tokens)[:, :6], rtol=0, atol=0)
    loss = F.cross_entropy(model(tokens[:, :-1]).transpose(1, 2), tokens[:, 1:])
    loss.backward()
    gates = [block.attn.encoding.gate.weight.grad for block in model.blocks]
    assert all(g is not None and g.abs().sum() > 0 for g in gates)


def test_fox_needs_the_input():
    fox = ForgettingAttentionBias(16, 2)
    q = torch.randn(1, 2, 4, 8)
    with pytest.raises(ValueError, match="reads the layer's input x, and none was given"):
        call_score_bias(fox, q, q, None)
    with pytest.raises(ValueError, match="one query and one key per input token"):
        fox.score_bias(q, q, torch.randn(1, 5, 16))


# --- stick-breaking -----------------------------------------------------------------------

@given(SEEDS, st.integers(1, 12), st.integers(1, 8), st.booleans())
def test_stick_breaking_weights_are_the_authors(seed, n, d, attend_current):
    """sb_ref.stickbreaking with v = I returns the weights themselves; the authors' default
    (attend_current=False) is these weights with the own key masked."""
    gen = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(2, 3, n, d, generator=gen, dtype=torch.float64) * 2 for _ in range(2))
    eye = torch.eye(n, dtype=torch.float64).expand(2, 3, n, n)
    mask, cm = sb_reference_masks(n, attend_current)
    att, rem = sb_reference(q, k, eye, mask, cm)
    logits = (q @ k.transpose(-1, -2)).numpy() / math.sqrt(d)
    if not attend_current:
        logits = np.where(np.eye(n, dtype=bool), -np.inf, logits)
    weights = stick_breaking_weights(logits)
    np.testing.assert_allclose(weights, att.numpy(), rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(1 - weights.sum(-1), rem.numpy(), rtol=1e-10, atol=1e-12)


@given(SEEDS, st.integers(1, 10), st.booleans())
def test_stick_breaking_is_the_product_written_out(seed, n, causal):
    """A second formulation: for each query, visit the keys nearest first (the earlier of
    two at one distance first) and give each its share of what is left."""
    z = np.random.default_rng(seed).normal(scale=3, size=(n, n))
    weights = stick_breaking_weights(z, causal=causal)
    for i in range(n):
        keys = [j for j in range(n) if j <= i or not causal]
        left = 1.0
        for j in sorted(keys, key=lambda j: (abs(i - j), j)):
            assert weights[i, j] == pytest.approx(left * _sigmoid(z[i, j]), rel=1e-10,
                                                  abs=1e-300)
            left *= 1 - _sigmoid(z[i, j])
        assert weights[i].sum() == pytest.approx(1 - left, rel=1e-10)  # the stick not taken
        assert weights[i].sum() <= 1 + 1e-12
        assert all(weights[i, j] == 0 for j in range(n) if j not in keys)


def test_stick_breaking_order_goes_outwards_from_the_query():
    order, rank = stick_breaking_order(5)
    assert order[2].tolist() == [2, 1, 3, 0, 4] and order[4].tolist() == [4, 3, 2, 1, 0]
    assert order[0].tolist() == [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(np.take_along_axis(order, rank, -1),
                                  np.broadcast_to(np.arange(5), (5, 5)))


def test_stick_breaking_masked_keys_take_nothing_and_break_nothing():
    z = np.random.default_rng(1).normal(size=(6, 6))
    masked = z.copy()
    masked[5, 3] = -np.inf
    a, b = stick_breaking_weights(z), stick_breaking_weights(masked)
    assert b[5, 3] == 0
    np.testing.assert_allclose(b[5, 4:], a[5, 4:], rtol=1e-14)  # nearer keys unchanged
    # the keys behind it get what key 3 would have taken from them: (1 - sigmoid) undone
    np.testing.assert_allclose(b[5, :3], a[5, :3] / (1 - _sigmoid(z[5, 3])), rtol=1e-12)


def test_stick_breaking_holds_at_long_lengths_and_large_logits():
    """Log space: 2000 keys that each keep nearly all the stick, or take nearly all of it,
    give finite weights whose rows sum as the product says (computed with log1p)."""
    n = 2000
    for value in (-30.0, 30.0, 0.0):
        z = np.full((n, n), value)
        weights = stick_breaking_weights(z)
        assert np.isfinite(weights).all() and (weights >= 0).all()
        log_left = (np.arange(n) + 1) * np.log1p(-_sigmoid(value))
        np.testing.assert_allclose(weights.sum(-1), -np.expm1(log_left), rtol=1e-9)


def test_stick_breaking_is_ordered_by_its_content():
    """Key j's weight depends on the keys between it and the query, not on those behind."""
    z = np.random.default_rng(2).normal(size=(8, 8))
    i, j = 6, 2
    for k in range(8):
        changed = z.copy()
        changed[i, k] += 2.0
        moved = stick_breaking_weights(changed)[i, j] != stick_breaking_weights(z)[i, j]
        assert moved == (j <= k <= i), k


def test_stick_breaking_refuses_bad_logits():
    with pytest.raises(ValueError, match=r"logits must be square.*\[\.\.\., n, n\]"):
        stick_breaking_weights(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="logits must be real numbers or -inf"):
        stick_breaking_weights(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="logits must be real numbers or -inf"):
        stick_breaking_weights(np.array([[np.inf]]))
    with pytest.raises(ValueError, match="at least 2 dimension"):
        stick_breaking_weights(np.zeros(3))
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        stick_breaking_order(0)
    with pytest.raises(TypeError, match="n must be an integer >= 1"):
        stick_breaking_order(2.0)


@pytest.mark.parametrize("causal", [True, False])
def test_stick_breaking_module_equals_the_numpy_weights_in_float64(causal):
    z = torch.randn(2, 3, 9, 9, dtype=torch.float64) * 3  # a causal module masks it itself
    weights = StickBreakingAttention(AttentionSpec(16, 2, causal=causal)).normalise(z)
    assert weights.dtype == torch.float64
    expected = stick_breaking_weights(z.numpy(), causal=causal)
    expected += np.eye(9) * (1 - expected.sum(-1))[..., None]  # the rest on the own key
    np.testing.assert_allclose(weights.numpy(), expected, rtol=1e-12, atol=1e-15)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 9, dtype=torch.float64))


def test_stick_breaking_layer_is_the_reference_attention():
    """End to end: the layer's output is the authors' reference (attend_current=True, the
    rest of the stick on the own value) on the layer's own q, k, v."""
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(16, 2, "stick_breaking", causal=True).double()
    x = torch.randn(3, 10, 16, dtype=torch.float64)
    q, k, v = _qkv(layer, x)
    o = sb_reference_forward(q, k, v, attend_current=True)  # [b, h, n, d]
    expected = layer.out(o.transpose(1, 2).reshape(3, 10, 16))
    torch.testing.assert_close(layer(x), expected, rtol=1e-10, atol=1e-12)


def test_stick_breaking_in_a_window_never_reaches_past_it():
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(16, 2, "stick_breaking", causal=True, window=3)
    x = torch.randn(1, 8, 16)
    y = layer(x)
    changed = x.clone()
    changed[:, 0] += 5.0  # token 0 is outside the window of queries 3 and later
    torch.testing.assert_close(layer(changed)[:, 3:], y[:, 3:])
    with pytest.raises(ValueError, match="replaces the softmax"):
        MultiHeadSelfAttention(16, 2, "stick_breaking", causal=True, sinks=True)


@pytest.mark.parametrize("position", ["stick_breaking", "fox"])
def test_both_methods_train_with_finite_gradients(position):
    """Masked keys sit at -inf in log space: no nan may come back through them. A tiny
    model memorises one batch (the loss falls by more than half in 40 Adam steps)."""
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(position=position, vocab_size=50, d_model=32, num_layers=2))
    tokens = torch.randint(0, 50, (4, 20))
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(40):
        loss = F.cross_entropy(model(tokens[:, :-1]).transpose(1, 2), tokens[:, 1:])
        optimiser.zero_grad()
        loss.backward()
        assert all(torch.isfinite(p.grad).all() for p in model.parameters()
                   if p.grad is not None)
        optimiser.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    layer = MultiHeadSelfAttention(16, 2, position, causal=False)
    x = torch.randn(2, 7, 16, requires_grad=True)
    layer(x).sum().backward()
    assert torch.isfinite(x.grad).all()


def test_stick_breaking_refuses_unequal_queries_and_keys():
    with pytest.raises(ValueError, match="as many queries as keys"):
        StickBreakingAttention().normalise(torch.zeros(1, 1, 2, 3))


# --- the hooks the two methods need ---------------------------------------------------------

class InputGateBias(PositionEncoding):
    """A reader's method: a bias of each key's mean input feature (reads x)."""

    def __init__(self, spec, *, scale: float = 1.0):
        super().__init__()
        self.scale = scale

    def score_bias(self, q, k, x):
        return self.scale * x.mean(-1)[:, None, None, :].to(q.dtype)  # [b, 1, 1, k]


class SharpSoftmax(PositionEncoding):
    """A reader's normalise: the softmax of twice the scores."""

    def __init__(self, spec):
        super().__init__()

    def normalise(self, scores):
        return (2 * scores).softmax(-1)


class WrongWeights(SharpSoftmax):
    def normalise(self, scores):
        return scores.softmax(-1)[..., :-1]


def test_a_readers_bias_gets_the_layer_input_and_a_readers_normalise_the_masked_scores():
    try:
        register_position("input_gate", InputGateBias)
        register_position("sharp", SharpSoftmax)
        assert POSITIONS["input_gate"].hooks == ("score_bias",)
        assert POSITIONS["sharp"].hooks == ("normalise",)
        torch.manual_seed(0)
        x = torch.randn(2, 6, 16, dtype=torch.float64)
        layer = MultiHeadSelfAttention(16, 2, "input_gate", causal=True, scale=0.5).double()
        q, k, v = _qkv(layer, x)
        scores = q @ k.transpose(-1, -2) / math.sqrt(8) + 0.5 * x.mean(-1)[:, None, None, :]
        scores = scores.masked_fill(~torch.ones(6, 6, dtype=torch.bool).tril(), -math.inf)
        expected = layer.out((scores.softmax(-1) @ v).transpose(1, 2).reshape(2, 6, 16))
        torch.testing.assert_close(layer(x), expected)
        sharp = MultiHeadSelfAttention(16, 2, "sharp", causal=True).double()
        q, k, v = _qkv(sharp, x)
        scores = (q @ k.transpose(-1, -2) / math.sqrt(8)).masked_fill(
            ~torch.ones(6, 6, dtype=torch.bool).tril(), -math.inf)
        expected = sharp.out(((2 * scores).softmax(-1) @ v).transpose(1, 2).reshape(2, 6, 16))
        torch.testing.assert_close(sharp(x), expected)
        with pytest.raises(TypeError, match=r"method 'wrong', hook normalise: returned shape "
                                            r"\(2, 2, 5, 4\).*Fix: return weights"):
            register_position("wrong", WrongWeights)
        assert "wrong" not in POSITIONS
    finally:
        POSITIONS.pop("input_gate", None)
        POSITIONS.pop("sharp", None)


# --- PaTH -----------------------------------------------------------------------------------

def _unit(rng, *shape):
    w = rng.normal(size=shape)
    return w / np.linalg.norm(w, axis=-1, keepdims=True)


@given(SEEDS, st.integers(1, 6))
def test_a_householder_with_beta_two_is_a_reflection(seed, d):
    rng = np.random.default_rng(seed)
    w = _unit(rng, 3, d)
    h = householder(w, np.full(3, 2.0))
    eye = np.broadcast_to(np.eye(d), h.shape)
    np.testing.assert_allclose(h @ np.swapaxes(h, -1, -2), eye, atol=1e-12)  # orthogonal
    np.testing.assert_allclose(h @ h, eye, atol=1e-12)  # a reflection: twice is nothing
    np.testing.assert_allclose(np.linalg.det(h), -1.0, atol=1e-12)
    np.testing.assert_allclose(h @ w[..., None], -w[..., None], atol=1e-12)  # w flips


@given(SEEDS, st.integers(1, 8), st.integers(1, 4))
def test_path_transforms_telescope_and_never_lengthen(seed, n, d):
    rng = np.random.default_rng(seed)
    w, beta = _unit(rng, n, d), rng.uniform(0, 2, size=n)
    p = path_transforms(w, beta)
    h = householder(w, beta)
    for i in range(n):
        np.testing.assert_array_equal(p[i, i], np.eye(d))
        for j in range(i):
            np.testing.assert_allclose(p[i, j], h[i] @ p[i - 1, j], atol=1e-12)
            for mid in range(j, i + 1):
                np.testing.assert_allclose(p[i, j], p[i, mid] @ p[mid, j], atol=1e-12)
            assert np.linalg.norm(p[i, j], 2) <= 1 + 1e-12  # eigenvalues 1 - beta in [-1, 1]
        assert not p[i, i + 1:].any()


@given(SEEDS, st.integers(1, 11), st.integers(1, 5))
def test_path_logits_are_the_authors(seed, n, d):
    """Both of the authors' forms: the chunked reference (fla's naive_path_attn, chunks of
    4, so whole and partial chunks and the pieces between them) and the decoding step."""
    rng = np.random.default_rng(seed)
    q, k, v = (rng.normal(size=(n, d)) for _ in range(3))
    w, beta = _unit(rng, n, d), rng.uniform(0, 2, size=n)
    logits = path_logits(q, k, w, beta)
    np.testing.assert_allclose(logits, fla_path_decoding_logits(q, k, w, beta), rtol=1e-10,
                               atol=1e-10)
    as_torch = [torch.from_numpy(a)[None, :, None] for a in (q, k, v, w, beta)]  # [1, T, 1, .]
    scale = d ** -0.5
    ref_logits, ref_o = fla_naive_path_attn(*as_torch, torch.zeros(1, n, 1,
                                                                   dtype=torch.float64), scale)
    np.testing.assert_allclose(logits, ref_logits[0, 0].numpy(), rtol=1e-10, atol=1e-10)
    weights = np.exp(scale * logits - (scale * logits).max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(weights @ v, ref_o[0, :, 0].numpy(), rtol=1e-10, atol=1e-10)


@given(SEEDS, st.integers(1, 8), st.integers(1, 4), st.floats(0, 2))
def test_path_with_one_fixed_householder_is_relative(seed, n, d, beta):
    """No data in w and beta: P[i, j] = H^(i-j) = I - (1 - (1 - beta)^(i-j)) w w^T (H scales
    w by 1 - beta and leaves the rest), a function of i - j alone; with beta = 2 it only
    flips w on every other token."""
    w = _unit(np.random.default_rng(seed), d)
    p = path_transforms(np.broadcast_to(w, (n, d)), np.full(n, beta))
    for i in range(n):
        for j in range(i + 1):
            closed = np.eye(d) - (1 - (1 - beta) ** (i - j)) * np.outer(w, w)
            np.testing.assert_allclose(p[i, j], closed, atol=1e-12)
            np.testing.assert_allclose(p[i, j], p[i - j, 0], atol=1e-12)


def test_path_with_no_householder_is_nope():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 6, 4))
    logits = path_logits(q, k, _unit(rng, 6, 4), np.zeros(6))
    np.testing.assert_allclose(logits, np.where(np.tri(6, dtype=bool), q @ k.T, -np.inf))


@pytest.mark.parametrize("phi", [0.3, 1.1])
def test_two_alternating_reflections_are_rope(phi):
    """Two reflections make a rotation by twice the angle between their vectors: with w
    alternating between two unit vectors phi apart, every pair of tokens turns by 2 phi,
    which is RoPE at frequency phi (2-D, one pair) between keys and queries an even number
    of tokens apart (ending at an odd token)."""
    n = 11
    u0, u1 = np.array([1.0, 0.0]), np.array([math.cos(phi), -math.sin(phi)])
    w = np.stack([u1 if t % 2 else u0 for t in range(n)])
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, n, 2))
    path = path_logits(q, k, w, np.full(n, 2.0))
    rope = apply_rope(q[None], frequencies=[phi])[0] @ apply_rope(k[None], frequencies=[phi])[0].T
    pairs = [(i, j) for i in range(1, n, 2) for j in range(1, i + 1, 2)]
    assert len(pairs) == 15
    for i, j in pairs:
        assert path[i, j] == pytest.approx(rope[i, j], abs=1e-12)


def test_rope_is_the_same_for_every_input_and_path_is_not():
    """RoPE turns key j seen from query i by R(i - j) whatever the tokens are; PaTH's turn is
    made of the tokens between them, so it moves when they change (and only then)."""
    rng = np.random.default_rng(3)
    n, d = 8, 4
    q, k = rng.normal(size=(2, n, d))
    i, j = 6, 2
    rope = apply_rope(q[None])[0] @ apply_rope(k[None])[0].T
    other = rng.normal(size=(2, n, d))  # every other token replaced
    other[0, i], other[1, j] = q[i], k[j]
    rope_other = apply_rope(other[0][None])[0] @ apply_rope(other[1][None])[0].T
    assert rope[i, j] == pytest.approx(rope_other[i, j], abs=1e-12)
    w, beta = _unit(rng, n, d), rng.uniform(0.5, 2, size=n)
    base = path_logits(q, k, w, beta)[i, j]
    for lo in range(n):
        changed = w.copy()
        changed[lo] = _unit(rng, d)
        moved = abs(path_logits(q, k, changed, beta)[i, j] - base) > 1e-9
        assert moved == (j < lo <= i), lo


def test_path_refuses_bad_input():
    w = np.array([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="w must have unit length"):
        householder(2 * w, np.ones(2))
    with pytest.raises(ValueError, match=r"beta must lie in \[0, 2\]"):
        householder(w, np.array([1.0, 2.5]))
    with pytest.raises(ValueError, match=r"beta must have shape \(2,\)"):
        householder(w, np.ones(3))
    with pytest.raises(ValueError, match="q, k and w must have one shape"):
        path_logits(np.zeros((2, 3)), np.zeros((2, 3)), w, np.ones(2))


def test_the_numpy_formulas_never_import_torch():
    """posenc.data_dependent is the numpy definition the torch methods are tested against."""
    import posenc.data_dependent as module

    tree = ast.parse(Path(module.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert "numpy" in imported and not {m for m in imported if m.split(".")[0] == "torch"}


def test_the_course_places_both_methods_after_chapter_8():
    """Catalogue rows: labels, not in chapter 8's tables; where each acts, read from its
    hooks; FoX's one matrix product (the gate, 2 b L d_model h FLOPs) seen by the
    measured cost as in the hand formula."""
    from posenc.catalogue import facts
    from posenc.compare import METHODS, applies_to, extra_attention_cost, measured_attention_cost

    assert (facts("fox").label, facts("stick_breaking").label) == ("FoX", "stick-breaking")
    assert "fox" not in METHODS and "stick_breaking" not in METHODS
    assert applies_to("fox") == "attention scores"
    assert applies_to("stick_breaking") == "attention weights"
    sizes = dict(d_model=32, num_heads=4, seq_len=10, batch=3)
    for name, flops in (("fox", 2 * 3 * 10 * 32 * 4), ("stick_breaking", 0)):
        assert extra_attention_cost(name, **sizes)["matmul_flops"] == flops
        assert measured_attention_cost(name, **sizes)["matmul_flops"] == flops
