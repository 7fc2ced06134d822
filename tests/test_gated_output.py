"""Gated attention output (Qiu et al. 2025, arXiv:2505.06708; Qwen3-Next):
``MultiHeadSelfAttention(output_gate=True)`` against Hugging Face's ``Qwen3NextAttention``
itself, and two identities (an open gate is the ungated layer; a closed head is a head whose
output-projection columns are zero)."""

import dataclasses

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.layer_patterns import LayerSpec
from posenc.model import Block, TinyLM, TinyLMConfig
from posenc.nn import MultiHeadSelfAttention, PositionSpec

transformers = pytest.importorskip("transformers")
from transformers.models.qwen3_next.configuration_qwen3_next import Qwen3NextConfig  # noqa: E402
from transformers.models.qwen3_next.modeling_qwen3_next import (  # noqa: E402
    Qwen3NextAttention,
    Qwen3NextRotaryEmbedding,
)


def qwen3_next_attention(d_model, heads, *, bias, partial_rotary_factor):
    """Hugging Face's Qwen3-Next attention layer (SDPA, one KV head per query head) with
    its per-head q/k RMSNorm replaced by the identity: the course's layer has no QK-norm,
    and the gate is what is compared here."""
    config = Qwen3NextConfig(hidden_size=d_model, num_attention_heads=heads,
                             num_key_value_heads=heads, head_dim=d_model // heads,
                             attention_bias=bias,
                             rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                              "partial_rotary_factor": partial_rotary_factor})
    config._attn_implementation = "sdpa"  # eager takes its softmax in float32
    attn = Qwen3NextAttention(config, layer_idx=3).double()
    attn.q_norm, attn.k_norm = torch.nn.Identity(), torch.nn.Identity()
    return attn, Qwen3NextRotaryEmbedding(config).double()


def copy_from_qwen(ours, hf):
    """Hugging Face's weights into the course's layer. ``q_proj`` holds each head's query
    and gate side by side (``view(..., heads, 2 * head_dim)`` then ``chunk``): rows
    ``[h, 0]`` are head h's query, rows ``[h, 1]`` its gate."""
    h, hd, d = ours.num_heads, ours.head_dim, ours.d_model
    with torch.no_grad():
        w = hf.q_proj.weight.view(h, 2, hd, d)
        ours.qkv.weight.copy_(torch.cat([w[:, 0].reshape(d, d), hf.k_proj.weight,
                                         hf.v_proj.weight]))
        ours.gate.weight.copy_(w[:, 1].reshape(d, d))
        ours.out.weight.copy_(hf.o_proj.weight)
        if hf.q_proj.bias is not None:
            b = hf.q_proj.bias.view(h, 2, hd)
            ours.qkv.bias.copy_(torch.cat([b[:, 0].reshape(d), hf.k_proj.bias,
                                           hf.v_proj.bias]))
            ours.gate.bias.copy_(b[:, 1].reshape(d))
            ours.out.bias.copy_(hf.o_proj.bias)


@settings(deadline=None, max_examples=12)
@given(bias=st.booleans(), rotary=st.sampled_from([None, 0.25, 1.0]), batch=st.integers(1, 2),
       n=st.integers(1, 9), seed=st.integers(0, 2**31 - 1))
def test_equals_qwen3_next_attention(bias, rotary, batch, n, seed):
    d_model, heads = 32, 2
    torch.manual_seed(seed)
    hf, rope = qwen3_next_attention(d_model, heads, bias=bias,
                                    partial_rotary_factor=rotary or 1.0)
    with torch.no_grad():  # weights larger than the default, so the gates reach their tails
        for p in hf.parameters():
            p.normal_(0, 0.3)
    position = ("none" if rotary is None else
                PositionSpec("partial_rope", partial_rotary_factor=rotary, rope_layout="half"))
    ours = MultiHeadSelfAttention(d_model, heads, position, causal=True, bias=bias,
                                  output_gate=True).double()
    copy_from_qwen(ours, hf)
    x = torch.randn(batch, n, d_model, dtype=torch.float64)
    positions = torch.arange(n)[None].expand(batch, n)
    # HF takes its frequencies, cos and sin in float32; the same formulas in float64 (its
    # inv_freq: base^(-2i/rotary_dim); its forward: the angles repeated over both halves),
    # checked against them
    rotary_dim = 2 * rope.inv_freq.numel()
    inv_freq = 10000.0 ** (-torch.arange(0, rotary_dim, 2, dtype=torch.float64) / rotary_dim)
    torch.testing.assert_close(rope.inv_freq.double(), inv_freq, rtol=1e-6, atol=0)
    angles = positions[..., None].double() * inv_freq
    cos, sin = torch.cat([angles, angles], -1).cos(), torch.cat([angles, angles], -1).sin()
    hf_cos, hf_sin = rope(x, positions)
    torch.testing.assert_close(hf_cos, cos, rtol=0, atol=1e-6)
    torch.testing.assert_close(hf_sin, sin, rtol=0, atol=1e-6)
    if rotary is None:  # no position: the rotation by angle 0
        cos, sin = torch.ones_like(cos), torch.zeros_like(sin)
    mask = torch.full((n, n), float("-inf"), dtype=torch.float64).triu(1)[None, None]
    expected, _ = hf(x, (cos, sin), mask.expand(batch, 1, n, n))
    torch.testing.assert_close(ours(x), expected, rtol=1e-10, atol=1e-12)


def gated_twin(layer: MultiHeadSelfAttention, **keywords) -> MultiHeadSelfAttention:
    """``layer`` rebuilt with ``output_gate=True`` and the same weights (the gate's own
    weights freshly drawn); ``keywords``: the layer's other keywords, as ``layer`` had them."""
    twin = MultiHeadSelfAttention(layer.d_model, layer.num_heads, layer.position,
                                  output_gate=True, **keywords).to(layer.qkv.weight.dtype)
    missing, unexpected = twin.load_state_dict(layer.state_dict(), strict=False)
    assert sorted(missing) == ["gate.bias", "gate.weight"] and not unexpected
    return twin


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("keywords", [dict(causal=True), dict(causal=True, sinks=True, window=3),
                                      dict(causal=False)])
def test_an_open_gate_is_the_ungated_layer(dtype, keywords):
    torch.manual_seed(0)
    plain = MultiHeadSelfAttention(16, 2, "rope", **keywords).to(dtype)
    if plain.sinks is not None:
        with torch.no_grad():
            plain.sinks.copy_(torch.tensor([1.5, -0.5]))
    gated = gated_twin(plain, **keywords)
    with torch.no_grad():
        gated.gate.weight.zero_()
        gated.gate.bias.fill_(100.0)  # sigmoid(100) rounds to exactly 1 in float32 and 64
    x = torch.randn(3, 7, 16, dtype=dtype)
    assert torch.equal(gated(x), plain(x))


def test_the_gate_starts_new_random_draws_after_every_other_weight():
    torch.manual_seed(5)
    plain = MultiHeadSelfAttention(16, 2, "t5", causal=True)
    torch.manual_seed(5)
    gated = MultiHeadSelfAttention(16, 2, "t5", causal=True, output_gate=True)
    for name, tensor in plain.state_dict().items():
        assert torch.equal(gated.state_dict()[name], tensor), name


@settings(deadline=None, max_examples=20)
@given(head=st.integers(0, 3), seed=st.integers(0, 2**31 - 1))
def test_a_closed_gate_silences_its_head(head, seed):
    """Second formulation: closing head h's gate is removing head h's columns of the
    output projection."""
    torch.manual_seed(seed)
    d, heads = 32, 4
    hd = d // heads
    plain = MultiHeadSelfAttention(d, heads, "alibi", causal=True).double()
    gated = gated_twin(plain, causal=True)
    cut = MultiHeadSelfAttention(d, heads, "alibi", causal=True).double()
    cut.load_state_dict(plain.state_dict())
    with torch.no_grad():
        gated.gate.weight.zero_()
        gated.gate.bias.fill_(100.0)
        gated.gate.bias[head * hd:(head + 1) * hd] = -800.0  # sigmoid: exactly 0 in float64
        cut.out.weight[:, head * hd:(head + 1) * hd] = 0.0
    x = torch.randn(2, 6, d, dtype=torch.float64)
    torch.testing.assert_close(gated(x), cut(x), rtol=1e-12, atol=1e-14)
    values = gated.output_gate_values(x)
    assert values.shape == (2, heads, 6, hd)
    assert torch.all(values[:, head] == 0) and torch.all(values.sum(1) == heads - 1)


def test_gate_values_are_what_forward_multiplies():
    torch.manual_seed(1)
    layer = MultiHeadSelfAttention(16, 4, "rope", causal=True, output_gate=True).double()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    captured = []
    handle = layer.out.register_forward_hook(lambda mod, args, out: captured.append(args[0]))
    layer(x)
    handle.remove()
    with torch.no_grad():
        ungated_out = MultiHeadSelfAttention(16, 4, "rope", causal=True).double()
        ungated_out.load_state_dict(layer.state_dict(), strict=False)
        heads = []
        ungated_out.out.register_forward_hook(lambda mod, args, out: heads.append(args[0]))
        ungated_out(x)
    gate = layer.output_gate_values(x).transpose(1, 2).reshape(2, 5, 16)
    torch.testing.assert_close(captured[0], heads[0] * gate)
    assert MultiHeadSelfAttention(16, 4).output_gate_values(x.float()) is None


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_dtypes(dtype):
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(16, 2, "rope", causal=True, output_gate=True)
    x = torch.randn(2, 5, 16)
    reference = layer.double()(x.double())
    y = layer.to(dtype)(x.to(dtype))
    assert y.dtype == dtype and y.shape == (2, 5, 16)
    tol = 1e-12 if dtype == torch.float64 else 3e-2
    torch.testing.assert_close(y.double(), reference, rtol=tol, atol=tol)


def test_meta_device():
    layer = MultiHeadSelfAttention(64, 4, "rope", causal=True, output_gate=True).to("meta")
    y = layer(torch.empty(2, 9, 64, device="meta"))
    assert y.device.type == "meta" and y.shape == (2, 9, 64)
    assert layer.output_gate_values(torch.empty(2, 9, 64, device="meta")).shape == (2, 4, 9, 16)


@pytest.mark.parametrize("bad", [1, "yes", None, 1.0])
def test_bad_output_gate(bad):
    with pytest.raises(TypeError, match="output_gate must be True or False"):
        MultiHeadSelfAttention(16, 2, output_gate=bad)
    with pytest.raises(TypeError, match="gate must be True or False"):
        LayerSpec(gate=bad)


def test_layer_spec_gate_reaches_the_block():
    config = TinyLMConfig(pattern="gpt_oss", num_layers=2, pattern_length=64)
    spec = dataclasses.replace(config.layer_specs()[1], sinks=False, gate=True)
    assert spec.describe() == "rope full gate"
    block = Block(config, layer=spec)
    assert block.attn.gate is not None and block.attn.sinks is None
    assert Block(config, layer=config.layer_specs()[1]).attn.gate is None
    # the gate adds d_model^2 + d_model parameters per gated layer, nothing else
    plain = TinyLM(config).blocks[1].attn
    assert (sum(p.numel() for p in block.attn.parameters())
            - sum(p.numel() for p in plain.parameters())) == 64 * 64 + 64 - 4  # - 4 sinks
