"""One family of query temperatures (posenc.scaling.temperature), each formula against its
reference: Hugging Face's own code where transformers has it, a transcription of the
published code where it does not, published values and identities."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc.configs import Temperature
from posenc.scaling import (
    QUERY_TEMPERATURES,
    attention_temperature,
    llama_4_beta_scale,
    log_n_scale,
    logn_scale,
    qk_norm_gap_bound,
    scalable_softmax_scale,
)


def softmax(z):
    w = np.exp(z - z.max())
    return w / w.sum()


def relevant_weight(n: int, gap: float, scale: float) -> float:
    """A second formulation of the chapter's model: an explicit softmax over n logits, one
    of them ``gap`` above the n - 1 others, all multiplied by ``scale``."""
    z = np.zeros(n)
    z[0] = gap
    return float(softmax(scale * z)[0])


# --- Su's log-n scale and Qwen's logn ---------------------------------------------------------

def qwen_logn_list(seq_length: int, size: int = 32768):
    # Qwen-7B, modeling_qwen.py (QWenModel/QWenAttention, August 2023):
    #   logn_list = [math.log(i, self.seq_length) if i > self.seq_length else 1
    #                for i in range(1, 32768)]
    # and the query of 0-based position p is multiplied by logn_list[p]
    return [math.log(i, seq_length) if i > seq_length else 1 for i in range(1, size)]


@pytest.mark.parametrize("seq_length", [2, 512, 2048, 8192])
def test_log_n_scale_is_qwens_logn_list(seq_length):
    ref = np.array(qwen_logn_list(seq_length))
    n = np.arange(1, ref.size + 1)
    np.testing.assert_allclose(log_n_scale(n, seq_length), ref, rtol=1e-14)
    # Qwen's list is indexed by position: logn_scale is the same formula at n = p + 1
    np.testing.assert_array_equal(logn_scale(n - 1, train_length=seq_length),
                                  log_n_scale(n, seq_length))


@given(n=st.floats(1, 1e12), length=st.floats(1.001, 1e7))
def test_log_n_scale_identities(n, length):
    s = float(log_n_scale(n, length))
    if n <= length:
        assert s == 1.0  # no change inside the training length
    else:
        # ln n / ln L is log base L of n: L ** s == n
        assert s > 1.0 and math.isclose(length ** s, n, rel_tol=1e-9)


def test_log_n_scale_shapes_and_reals():
    n = np.array([[1, 64], [4096, 262144]])
    s = log_n_scale(n, 4096)
    assert s.shape == (2, 2) and s.dtype == np.float64
    np.testing.assert_allclose(s, [[1, 1], [1, 1.5]])  # 262144 = 4096 ** 1.5
    assert float(log_n_scale(4096 * 64.0, 4096.0)) == pytest.approx(1.5)


# --- the entropy-invariance property, stated exactly -------------------------------------------

@given(length=st.integers(2, 10**5), excess=st.floats(0, 10), ratio=st.floats(1, 1e6))
def test_log_n_scale_keeps_the_relevant_key_above_its_weight_at_the_training_length(
        length, excess, ratio):
    """One relevant key with logit gap g among n - 1 equal others gets
    w(n) = e^(s g) / (e^(s g) + n - 1). With s = log_L n and g >= ln L, for every n >= L:
    w(n) > e^g / (e^g + L), the weight at the training length with one more key.
    (Proof: with a = g / ln L >= 1, e^(s g) = n^a and
    (n - 1) n^-a < n^(1-a) <= L^(1-a) = L e^-g.)"""
    gap = math.log(length) + excess
    n = max(length, int(length * ratio))
    w = relevant_weight_closed(n, gap, float(log_n_scale(n, length)))
    assert w > math.exp(gap) / (math.exp(gap) + length) * (1 - 1e-12)


@given(length=st.integers(2, 1000), fraction=st.floats(0.05, 0.95), power=st.integers(2, 6))
def test_below_ln_l_the_log_n_scale_only_slows_the_fading(length, fraction, power):
    """With g < ln L (a = g / ln L < 1) the scaled weight still goes to 0:
    w(n) <= 1 / (1 + n^(1-a) / 2) for n >= 2 (since n - 1 >= n / 2)."""
    gap = fraction * math.log(length)
    n = length ** power
    a = gap / math.log(length)
    w = relevant_weight_closed(n, gap, float(log_n_scale(n, length)))
    assert w <= 1 / (1 + n ** (1 - a) / 2) * (1 + 1e-12)
    # and without any scale it is lower still
    assert relevant_weight_closed(n, gap, 1.0) <= w


def relevant_weight_closed(n, gap, scale):
    # 1 / (1 + (n - 1) e^(-s g)), in logs so that large n and gaps stay finite
    return 1.0 / (1.0 + math.exp(math.log(n - 1) - scale * gap)) if n > 1 else 1.0


@given(n=st.integers(1, 3000), gap=st.floats(-5, 20), scale=st.floats(0.5, 3))
def test_closed_form_is_the_softmax_and_the_chapters(n, gap, scale):
    from posenc.course.figures.local_global import one_key_attention

    ref = relevant_weight(n, gap, scale)
    assert relevant_weight_closed(n, gap, scale) == pytest.approx(ref, rel=1e-9, abs=1e-300)
    p, _ = one_key_attention(np.array([n]), gap, scale)
    assert float(p[0]) == pytest.approx(ref, rel=1e-9, abs=1e-300)


# --- Llama 4 and llama_4_scaling_beta ---------------------------------------------------------

@given(p=st.lists(st.integers(0, 10**7), min_size=1, max_size=30),
       beta=st.sampled_from([0.0, 0.1, 0.5]), length0=st.sampled_from([1, 4096, 16384]))
def test_llama_4_beta_scale_is_hugging_faces(p, beta, length0):
    from transformers.models.ministral3.modeling_ministral3 import get_llama_4_attn_scale

    ids = torch.tensor([p], dtype=torch.int64)  # position_ids [batch, seq]
    with torch.no_grad():
        ref = get_llama_4_attn_scale(ids.double(), beta, length0)[0, 0, :, 0].numpy()
    got = llama_4_beta_scale(np.array(p), beta=beta, original_max_position_embeddings=length0)
    np.testing.assert_allclose(got, ref, rtol=1e-13)
    # the config reader's Temperature calls the same function
    np.testing.assert_array_equal(
        Temperature("llama_4_scaling_beta", float(length0), beta).scale(np.array(p)), got)


def test_llama_4_beta_scale_published_values():
    # Ministral 3: beta 0.1, original_max_position_embeddings 16384; 1 in the first 16384
    # positions, then 1 + 0.1 ln 2 at 16384, 1 + 0.1 ln 16 at 262143 (its 256K context)
    s = llama_4_beta_scale(np.array([0, 16383, 16384, 262143]), beta=0.1,
                           original_max_position_embeddings=16384)
    np.testing.assert_allclose(s, [1, 1, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(16)])


@given(p=st.integers(0, 10**7), length0=st.sampled_from([2, 64, 8192]))
def test_llama4_is_the_beta_form_one_position_later(p, length0):
    """Llama 4 floors (p + 1) / L0, Ministral's form p / L0: the same curve shifted by one."""
    assert float(attention_temperature(np.array([p]), floor_scale=length0, attn_scale=0.1)[0]) \
        == pytest.approx(float(llama_4_beta_scale(np.array([p + 1]), beta=0.1,
                                                  original_max_position_embeddings=length0)[0]))


# --- Scalable-Softmax ---------------------------------------------------------------------------

@given(z=st.lists(st.floats(-4, 4), min_size=1, max_size=50), s=st.floats(0.05, 2))
def test_scalable_softmax_is_a_softmax_of_n_to_the_s_z(z, s):
    """Nakanishi (2025), eq. (SSMax): z_i -> n^(s z_i) / sum_j n^(s z_j)."""
    z = np.array(z)
    n = z.size
    ref = n ** (s * z) / np.sum(n ** (s * z))
    got = softmax(float(scalable_softmax_scale(n, s=s)) * z)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-300)


def test_scalable_softmax_with_s_one_over_ln_l_is_the_log_n_scale_past_l():
    n = np.arange(1, 20000)
    ssmax = scalable_softmax_scale(n, s=1 / math.log(4096))
    su = log_n_scale(n, 4096)
    np.testing.assert_allclose(ssmax[n >= 4096], su[n >= 4096], rtol=1e-14)
    assert np.all(ssmax[n < 4096] < 1) and np.all(su[n < 4096] == 1)
    # the paper's figure 1: logits +3 against -2 elsewhere, s = 0.43: the largest weight
    # stays near 1 as n grows, while the plain softmax's falls
    for size in (10, 1000, 100000):
        z = np.full(size, -2.0)
        z[-1] = 3.0
        assert softmax(float(scalable_softmax_scale(size, s=0.43)) * z)[-1] > 0.6
    assert softmax(np.r_[np.full(99999, -2.0), 3.0])[-1] < 0.01


# --- YaRN's attention factor, as a logit multiplier ------------------------------------------

@pytest.mark.parametrize("factor", [2.0, 4.0, 16.0, 40.0])
def test_yarn_row_is_hugging_faces_attention_factor_squared(factor):
    from transformers import LlamaConfig
    from transformers import modeling_rope_utils as hf

    cfg = LlamaConfig(hidden_size=256, num_attention_heads=2,
                      max_position_embeddings=int(4096 * factor),
                      rope_parameters={"rope_type": "yarn", "factor": factor,
                                       "original_max_position_embeddings": 4096,
                                       "rope_theta": 10000.0})
    _, attention_factor = hf.ROPE_INIT_FUNCTIONS["yarn"](cfg, None)
    # HF multiplies cos and sin, so queries and keys: the logits by its square
    got = float(QUERY_TEMPERATURES["YaRN"].logit_scale(np.array([4096 * factor]), 4096)[0])
    assert got == pytest.approx(attention_factor ** 2, rel=1e-12)
    assert got == pytest.approx((0.1 * math.log(factor) + 1) ** 2, rel=1e-12)  # YaRN, eq. 22
    assert float(QUERY_TEMPERATURES["YaRN"].logit_scale(np.array([100]), 4096)[0]) == 1.0


# --- QK-norm bounds the gap ----------------------------------------------------------------------

def rms_norm(x, gain, eps=1e-6):
    # Qwen3RMSNorm / T5LayerNorm: weight * x / sqrt(mean(x^2) + eps)
    return gain * x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)


@given(d=st.sampled_from([4, 16, 64, 128]), seed=st.integers(0, 2**31 - 1),
       spread=st.floats(0.1, 3))
def test_qk_norm_gap_bound_holds_with_rope(d, seed, spread):
    """Random queries, keys and gains, RMS-normalised as Qwen3 does, then rotated by RoPE
    (norm-preserving): no logit gap between two keys exceeds the bound."""
    from posenc.rope import apply_rope

    rng = np.random.default_rng(seed)
    g_q, g_k = rng.normal(1, spread, d), rng.normal(1, spread, d)
    q = rms_norm(rng.normal(0, 5, (1, d)) * rng.lognormal(0, 2, d), g_q)
    k = rms_norm(rng.normal(0, 5, (64, d)) * rng.lognormal(0, 2, d), g_k)
    q = apply_rope(q[None], positions=np.array([63]))[0]
    k = apply_rope(k, positions=np.arange(64))
    logits = (q @ k.T)[0] / math.sqrt(d)
    bound = qk_norm_gap_bound(d, gain_q=g_q, gain_k=g_k)
    assert np.ptp(logits) <= bound * (1 + 1e-12)
    assert bound == pytest.approx(2 * math.sqrt(d) * np.abs(g_q).max() * np.abs(g_k).max())


@pytest.mark.parametrize("d, gain", [(64, 1.0), (128, 1.0), (128, 2.5)])
def test_qk_norm_gap_bound_is_reached(d, gain):
    # constant gains, k1 along q and k2 = -k1: the gap is 2 sqrt(d) gain^2 (eps aside)
    u = np.random.default_rng(0).normal(size=d)
    q = rms_norm(u, gain, eps=0.0)
    k1, k2 = rms_norm(u, gain, eps=0.0), rms_norm(-u, gain, eps=0.0)
    gap = (q @ k1 - q @ k2) / math.sqrt(d)
    assert gap == pytest.approx(qk_norm_gap_bound(d, gain_q=gain, gain_k=gain), rel=1e-12)
    assert qk_norm_gap_bound(d, gain_q=gain, gain_k=gain, scale=1 / d) == pytest.approx(
        2 * gain ** 2)


# --- the table ------------------------------------------------------------------------------------

def test_table_rows_use_the_one_definitions():
    n = np.array([1, 100, 4096, 4097, 64 * 4096])
    length = 4096
    rows = QUERY_TEMPERATURES
    assert list(rows) == ["log-n (Su; Qwen's logn)", "Llama 4", "llama_4_scaling_beta",
                          "Scalable-Softmax", "YaRN", "QK-norm"]
    np.testing.assert_array_equal(rows["log-n (Su; Qwen's logn)"].logit_scale(n, length),
                                  log_n_scale(n, length))
    np.testing.assert_array_equal(rows["Llama 4"].logit_scale(n, length),
                                  attention_temperature(n - 1, floor_scale=length))
    np.testing.assert_array_equal(
        rows["llama_4_scaling_beta"].logit_scale(n, length),
        llama_4_beta_scale(n - 1, beta=0.1, original_max_position_embeddings=length))
    assert rows["QK-norm"].logit_scale is None
    for row in rows.values():
        assert row.formula and row.text and row.used_by and row.source
        if row.logit_scale is not None:
            s = row.logit_scale(n, length)
            assert s.shape == n.shape and np.all(np.diff(s) >= 0)  # never shrinks with n
            # every one but Scalable-Softmax leaves fewer keys than the training length alone
            # (Llama 4's first step is at n = L: it floors (p + 1) / L)
            if row.name != "Scalable-Softmax":
                assert np.all(s[n < length] == 1.0)


# --- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda: log_n_scale([0], 512), ValueError, "n must be finite and >= 1"),
    (lambda: log_n_scale([np.inf], 512), ValueError, "n must be finite and >= 1"),
    (lambda: log_n_scale(["a"], 512), TypeError, "n must be numbers"),
    (lambda: log_n_scale([4], 1), ValueError, "train_length must be > 1"),
    (lambda: logn_scale([-1], train_length=8), ValueError, "positions must be >= 0"),
    (lambda: logn_scale([0.5], train_length=8), TypeError, "positions must be integers"),
    (lambda: llama_4_beta_scale([1], beta=-0.1, original_max_position_embeddings=8),
     ValueError, "beta must be >= 0"),
    (lambda: llama_4_beta_scale([1], beta=0.1, original_max_position_embeddings=0),
     ValueError, "original_max_position_embeddings must be > 0"),
    (lambda: llama_4_beta_scale([1.5], beta=0.1, original_max_position_embeddings=8),
     TypeError, "positions must be integers"),
    (lambda: scalable_softmax_scale([4], s=0), ValueError, "s must be > 0"),
    (lambda: scalable_softmax_scale([0.5], s=0.4), ValueError, "n must be finite and >= 1"),
    (lambda: qk_norm_gap_bound(0), ValueError, "head_dim must be an integer >= 1"),
    (lambda: qk_norm_gap_bound(8, gain_q=np.ones(4)), ValueError,
     r"gain_q must be a scalar or \[head_dim\] = \[8\]"),
    (lambda: qk_norm_gap_bound(8, gain_k=[np.nan]), ValueError, "gain_k must be"),
    (lambda: qk_norm_gap_bound(8, scale=-1.0), ValueError, "scale must be > 0"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_the_property_at_the_chapters_numbers():
    # the premise holds at the chapter's numbers: a gap of ln L + 1 at L = 4096 and n = 64 L
    length, n = 4096, 64 * 4096
    gap = math.log(length) + 1
    w = relevant_weight_closed(n, gap, float(log_n_scale(n, length)))
    assert w > math.exp(gap) / (math.exp(gap) + length)
    assert relevant_weight_closed(n, gap, 1.0) < 0.05  # and unscaled it has faded
