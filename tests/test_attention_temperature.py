import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc.scaling import attention_temperature


# --- independent reference: Hugging Face's Llama4TextAttention.forward, transcribed -------
#     if self.attn_temperature_tuning and not self.use_rope:
#         attn_scales = (torch.log1p(torch.floor((cache_position.float() + 1.0)
#                        / self.floor_scale)) * self.attn_scale + 1.0)
def hf_llama4_attn_scales(cache_position, floor_scale=8192, attn_scale=0.1):
    return torch.log1p(torch.floor((cache_position.float() + 1.0) / floor_scale)) * attn_scale + 1.0


positions = st.lists(st.integers(0, 2_000_000), min_size=1, max_size=40)


@given(p=positions, floor_scale=st.sampled_from([1, 4, 16, 8192]),
       attn_scale=st.sampled_from([0.0, 0.1, 0.5]))
def test_equals_llama4(p, floor_scale, attn_scale):
    ref = hf_llama4_attn_scales(torch.tensor(p), floor_scale, attn_scale)
    got = attention_temperature(torch.tensor(p), floor_scale=floor_scale, attn_scale=attn_scale)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, ref, rtol=0, atol=0)
    np.testing.assert_allclose(attention_temperature(np.array(p), floor_scale=floor_scale,
                                                     attn_scale=attn_scale),
                               ref.double().numpy(), rtol=1e-6)


def test_published_values():
    # 1 until position 8190; at 8191 the floor reaches 1: 1 + 0.1 * ln 2
    s = attention_temperature(np.array([0, 8190, 8191, 8 * 8192 - 1]))
    np.testing.assert_allclose(s, [1.0, 1.0, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(9)])


def test_monotone_and_shape():
    p = np.arange(0, 200_000, 40).reshape(-1, 4)
    s = attention_temperature(p)
    assert s.shape == p.shape
    assert np.all(np.diff(s.ravel()) >= 0)


def test_meta_device():
    out = attention_temperature(torch.arange(10, device="meta"))
    assert out.device.type == "meta" and out.shape == (10,)


@pytest.mark.parametrize("kw, match", [
    (dict(positions=np.array([-1, 2])), "positions must be >= 0"),
    (dict(positions=np.array([0.5])), "positions must be integers"),
    (dict(positions=torch.tensor([0.5])), "positions must be integers"),
    (dict(positions=np.arange(3), floor_scale=0), "floor_scale must be > 0"),
    (dict(positions=np.arange(3), attn_scale=-0.1), "attn_scale must be >= 0"),
])
def test_bad_arguments(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        attention_temperature(**kw)


@given(st.integers(0, 2**22), st.lists(st.floats(-5, 5), min_size=2, max_size=16))
def test_the_factor_sharpens_the_softmax(p, scores):
    """Chapter 14: the factor multiplies the scores, so at or above 1 it is an inverse
    temperature: the softmax's entropy never rises (and falls once the factor exceeds 1,
    unless every score is the same)."""
    s = np.array(scores)
    tau = float(attention_temperature(p))

    def entropy(x):
        w = np.exp(x - x.max())
        w /= w.sum()
        return -(w * np.log(np.maximum(w, 1e-300))).sum()

    assert tau >= 1.0
    assert entropy(tau * s) <= entropy(s) + 1e-12
    if tau > 1.0 and np.ptp(s) > 1e-3:
        assert entropy(tau * s) < entropy(s)
