import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.masks import sliding_window_mask
from posenc.nn import sink_key_value, softmax_with_sinks


# --- independent reference: Hugging Face's modeling_gpt_oss.eager_attention_forward, ----
# transcribed (one KV group, no dropout): the weights and the output.
def hf_gpt_oss_eager(query, key, value, attention_mask, sinks, scaling):
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key.shape[-2]]
        attn_weights = attn_weights + causal_mask
    sinks = sinks.reshape(1, -1, 1, 1).expand(query.shape[0], -1, query.shape[-2], -1)
    combined_logits = torch.cat([attn_weights, sinks], dim=-1)
    combined_logits = combined_logits - combined_logits.max(dim=-1, keepdim=True).values
    probs = F.softmax(combined_logits, dim=-1, dtype=combined_logits.dtype)
    scores = probs[..., :-1]
    return torch.matmul(scores, value), scores


def float_mask(bool_mask, dtype=torch.float64):
    m = torch.as_tensor(bool_mask)
    return torch.zeros(m.shape, dtype=dtype).masked_fill(~m, float("-inf"))


@settings(deadline=None, max_examples=30)
@given(batch=st.integers(1, 3), heads=st.integers(1, 4), n=st.integers(1, 12),
       window=st.integers(1, 12), seed=st.integers(0, 2**31 - 1))
def test_equals_gpt_oss_eager(batch, heads, n, window, seed):
    g = torch.Generator().manual_seed(seed)
    d = 8
    q, k, v = (torch.randn(batch, heads, n, d, generator=g, dtype=torch.float64) for _ in "qkv")
    sinks = 3 * torch.randn(heads, generator=g, dtype=torch.float64)
    mask = float_mask(sliding_window_mask(n, window))[None, None]
    ref_out, ref_w = hf_gpt_oss_eager(q, k, v, mask, sinks, 1 / math.sqrt(d))
    w = softmax_with_sinks(q @ k.transpose(-1, -2) / math.sqrt(d) + mask, sinks)
    torch.testing.assert_close(w, ref_w)
    # rows sum to less than 1; masked entries are exactly 0
    assert torch.all(w.sum(-1) < 1)
    assert torch.all(w.masked_select(mask.expand_as(w) == float("-inf")) == 0)
    # the SDPA fast path: a zero key/value whose bias column holds the sink
    k2, v2, bias2 = sink_key_value(k, v, mask[0, 0], sinks)
    out = F.scaled_dot_product_attention(q, k2, v2, attn_mask=bias2)
    torch.testing.assert_close(out, ref_out)


def test_sink_mass_is_the_missing_mass():
    scores = torch.zeros(1, 2, 1, 3, dtype=torch.float64)  # three equal keys
    sinks = torch.tensor([0.0, math.log(6.0)], dtype=torch.float64)
    w = softmax_with_sinks(scores, sinks)
    # head 0: e^0 / (e^0 + 3) = 1/4 to the sink; head 1: 6 / (6 + 3) = 2/3
    torch.testing.assert_close(w.sum(-1).flatten(), torch.tensor([0.75, 1 / 3],
                                                                 dtype=torch.float64))


def test_very_negative_sink_is_plain_softmax():
    scores = torch.randn(2, 3, 4, 5, dtype=torch.float64)
    w = softmax_with_sinks(scores, torch.full((3,), -1e4, dtype=torch.float64))
    torch.testing.assert_close(w, scores.softmax(-1))


def test_bf16_large_logits_finite():
    scores = torch.full((1, 1, 2, 3), 300.0, dtype=torch.bfloat16)
    w = softmax_with_sinks(scores, torch.tensor([300.0]))
    assert torch.isfinite(w.float()).all()
    torch.testing.assert_close(w.float().sum(-1), torch.full((1, 1, 2), 0.75), atol=1e-2,
                               rtol=0)


def test_gradient_reaches_sinks():
    sinks = torch.zeros(2, requires_grad=True)
    w = softmax_with_sinks(torch.randn(1, 2, 3, 3), sinks)
    (w * torch.arange(3.0)).sum().backward()
    assert sinks.grad is not None and torch.all(sinks.grad != 0)


@pytest.mark.parametrize("scores, sinks, match", [
    (torch.zeros(2, 3, 4), torch.zeros(3), "scores must be"),
    (torch.zeros(1, 3, 4, 4), torch.zeros(2), "sinks must be a tensor"),
    (torch.zeros(1, 3, 4, 4), [0.0, 0.0, 0.0], "sinks must be a tensor"),
])
def test_bad_arguments(scores, sinks, match):
    with pytest.raises(ValueError, match=match):
        softmax_with_sinks(scores, sinks)
