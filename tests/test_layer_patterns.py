import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from posenc.layer_patterns import (
    PATTERNS,
    LayerPattern,
    LayerSpec,
    get_pattern,
    register_pattern,
)
from posenc.masks import chunked_mask, reach_mask, receptive_field, sliding_window_mask
from posenc.model import TinyLM, TinyLMConfig
from posenc.nn import MultiHeadSelfAttention

NAMED = ("gemma3", "llama4", "command_a", "gpt_oss")
SMALL = dict(d_model=32, num_heads=4, d_ff=64, pattern_length=32)


def config(name, **kw):
    cycle = len(get_pattern(name).cycle)
    return TinyLMConfig(pattern=name, num_layers=kw.pop("num_layers", cycle), **{**SMALL, **kw})


def test_named_patterns_registered():
    assert set(NAMED) <= set(PATTERNS)
    assert config("gemma3").pattern == "gemma3"
    TinyLMConfig(pattern="gemma3")  # the experiment builds them by name


def test_pattern_layers_follow_the_real_models():
    # layer kinds per cycle position, as the Hugging Face configs lay them out:
    # Gemma 3 sliding unless (i + 1) % 6 == 0; Llama 4 no RoPE when (i + 1) % 4 == 0;
    # Cohere2 (Command A) sliding unless (i + 1) % 4 == 0; GPT-OSS sliding when i is even.
    g = config("gemma3", num_layers=12).layer_specs()
    assert [s.reach for s in g] == ["full" if (i + 1) % 6 == 0 else "window" for i in range(12)]
    assert [dict(s.options)["base"] for s in g] == [1e6 if (i + 1) % 6 == 0 else 1e4
                                                     for i in range(12)]
    ll = config("llama4", num_layers=8).layer_specs()
    assert [s.position for s in ll] == ["none" if (i + 1) % 4 == 0 else "rope" for i in range(8)]
    assert [s.reach for s in ll] == ["full" if (i + 1) % 4 == 0 else "chunk" for i in range(8)]
    assert [s.temperature is not None for s in ll] == [(i + 1) % 4 == 0 for i in range(8)]
    # the tiny model keeps Llama 4's floor_scale == chunk (both 8192 there)
    assert ll[3].temperature == (float(ll[0].size), 0.1) and ll[0].size == 32 // 4
    c = config("command_a", num_layers=4).layer_specs()
    assert [(s.position, s.reach) for s in c] == [("rope", "window")] * 3 + [("none", "full")]
    o = config("gpt_oss", num_layers=4).layer_specs()
    assert [s.reach for s in o] == ["window", "full"] * 2 and all(s.sinks for s in o)
    assert o[0].size == 32 // 8


@pytest.mark.parametrize("name", NAMED)
def test_masks_used_by_attention_equal_posenc_masks(name):
    cfg = config(name)
    model = TinyLM(cfg)
    n = 29
    for block, spec in zip(model.blocks, cfg.layer_specs(), strict=True):
        got = block.attn.reach_mask(n)
        want = reach_mask(n, spec.reach, spec.size)
        if spec.reach == "full":
            assert got is None
        else:
            np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("name", NAMED)
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_forward_backward(name, dtype):
    torch.manual_seed(0)
    model = TinyLM(config(name)).to(dtype)
    tokens = torch.randint(0, 256, (2, 32))
    logits = model(tokens)
    assert logits.shape == (2, 32, 256) and logits.dtype == dtype
    assert torch.isfinite(logits.float()).all()
    F.cross_entropy(logits.float().flatten(0, 1), tokens.flatten()).backward()
    for p in model.parameters():
        assert p.grad is not None and torch.isfinite(p.grad.float()).all()
    if name == "gpt_oss":
        sinks = [b.attn.sinks for b in model.blocks]
        assert all(s is not None and s.shape == (4,) and s.grad.abs().sum() > 0 for s in sinks)


@pytest.mark.parametrize("name", NAMED)
def test_forward_backward_on_meta(name):
    with torch.device("meta"):
        model = TinyLM(config(name))
        tokens = torch.zeros(2, 32, dtype=torch.int64)
        logits = model(tokens)
    assert logits.device.type == "meta" and logits.shape == (2, 32, 256)
    logits.sum().backward()


@pytest.mark.parametrize("name", NAMED)
def test_causal_and_local(name):
    """Changing token j changes no output before j, nor any output that the stack's
    receptive field (posenc.masks.receptive_field) says j cannot reach."""
    n = 24
    torch.manual_seed(1)
    for num_layers in range(1, len(get_pattern(name).cycle) + 1):
        cfg = config(name, num_layers=num_layers)
        model = TinyLM(cfg).double().eval()
        field = receptive_field([reach_mask(n, s.reach, s.size) for s in cfg.layer_specs()])
        tokens = torch.randint(0, 256, (1, n))
        base = model(tokens)
        for j in (0, 5, 11, 17, n - 1):
            changed = tokens.clone()
            changed[0, j] = (changed[0, j] + 1) % 256
            moved = (model(changed) - base).abs().amax(-1)[0] > 1e-12
            assert not moved[:j].any()                       # causal
            assert not (moved & ~torch.from_numpy(field[:, j])).any()  # local
            assert moved[j]


def reference_attention(attn, x, mask, temperature=None, sinks=None):
    """Eager attention of a NoPE layer, written out: q scaled by Llama 4's temperature
    (log1p(floor((p + 1) / floor_scale)) * attn_scale + 1), bool mask, optional sink column."""
    b, n, d = x.shape
    h, hd = attn.num_heads, attn.head_dim
    q, k, v = attn.qkv(x).view(b, n, 3, h, hd).permute(2, 0, 3, 1, 4)
    if temperature is not None:
        p = torch.arange(n, dtype=torch.float64)
        q = q * (torch.log1p(torch.floor((p + 1) / temperature[0])) * temperature[1] + 1)[:, None]
    scores = (q @ k.transpose(-1, -2) / math.sqrt(hd)).masked_fill(~mask, float("-inf"))
    if sinks is not None:
        scores = torch.cat([scores, sinks.reshape(1, h, 1, 1).expand(b, h, n, 1)], -1)
    w = scores.softmax(-1)[..., :n]
    return attn.out((w @ v).transpose(1, 2).reshape(b, n, d))


@pytest.mark.parametrize("reach", [dict(), dict(window=3), dict(chunk=4)])
@pytest.mark.parametrize("sinks", [False, True])
@pytest.mark.parametrize("temperature", [None, (2.0, 0.5)])
def test_attention_layer_equals_reference(reach, sinks, temperature):
    torch.manual_seed(2)
    attn = MultiHeadSelfAttention(16, 2, "none", causal=True, sinks=sinks,
                                  temperature=temperature, **reach).double()
    if sinks:
        with torch.no_grad():
            attn.sinks.copy_(torch.tensor([1.5, -0.5]))
    x = torch.randn(2, 11, 16, dtype=torch.float64)
    n = 11
    mask = torch.from_numpy(sliding_window_mask(n, reach["window"]) if "window" in reach
                            else chunked_mask(n, reach["chunk"]) if "chunk" in reach
                            else reach_mask(n))
    want = reference_attention(attn, x, mask, temperature, attn.sinks)
    torch.testing.assert_close(attn(x), want)


@pytest.mark.parametrize("position", ["alibi", "shaw"])
def test_window_and_sinks_with_bias_and_value_methods(position):
    """A score-bias method (ALiBi) and a value-term method (Shaw) also honour the window."""
    torch.manual_seed(3)
    attn = MultiHeadSelfAttention(16, 2, position, causal=True, window=3, sinks=True).double()
    x = torch.randn(1, 10, 16, dtype=torch.float64)
    y = attn(x)
    x2 = x.clone()
    x2[0, 2] += 1.0
    moved = (attn(x2) - y).abs().amax(-1)[0] > 1e-12
    assert moved.tolist() == [i in (2, 3, 4) for i in range(10)]


def test_bad_arguments():
    with pytest.raises(ValueError, match="pattern must be one of"):
        TinyLMConfig(pattern="gemma9")
    with pytest.raises(ValueError, match="leave position='none'"):
        TinyLMConfig(pattern="gemma3", position="rope")
    with pytest.raises(ValueError, match="already registered"):
        register_pattern(get_pattern("gemma3"))
    with pytest.raises(ValueError, match="reach must be one of"):
        LayerSpec(reach="band", size=3)
    with pytest.raises(ValueError, match="size must be"):
        LayerSpec(reach="window", size=0)
    with pytest.raises(ValueError, match="added once at the embeddings"):
        LayerSpec(position="sinusoidal")
    with pytest.raises(ValueError, match="need causal=True"):
        MultiHeadSelfAttention(16, 2, window=3)
    with pytest.raises(ValueError, match="floor_scale must be > 0"):
        LayerSpec(position="none", temperature=(0.0, 0.1))
    with pytest.raises(TypeError, match="pattern must be a LayerPattern"):
        register_pattern("gemma3")


def test_register_a_new_pattern():
    pattern = LayerPattern("test_all_local", (dict(position="alibi", reach="window",
                                                   size=0.5),))
    try:
        register_pattern(pattern)
        cfg = TinyLMConfig(pattern="test_all_local", num_layers=2, pattern_length=16)
        assert [s.size for s in cfg.layer_specs()] == [8, 8]
        assert TinyLM(cfg)(torch.zeros(1, 16, dtype=torch.int64)).shape == (1, 16, 256)
    finally:
        PATTERNS.pop("test_all_local", None)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", NAMED)
def test_cuda_bf16_matches_cpu_masks(name):
    """On a GPU the masks are built there (from positions) and SDPA takes them in bf16."""
    torch.manual_seed(0)
    model = TinyLM(config(name)).to("cuda", torch.bfloat16)
    tokens = torch.randint(0, 256, (2, 32), device="cuda")
    logits = model(tokens)
    logits.float().sum().backward()
    assert torch.isfinite(logits.float()).all()
    for block, spec in zip(model.blocks, config(name).layer_specs(), strict=True):
        got = block.attn.reach_mask(32, "cuda")
        if got is not None:
            assert got.device.type == "cuda"
            np.testing.assert_array_equal(got.cpu().numpy(), reach_mask(32, spec.reach, spec.size))


def test_a_shallow_model_keeps_the_global_layer_and_specs_describe_themselves():
    """Fewer layers than a cycle: the cycle's last kind (the global layer) stays on top;
    each spec prints as one line naming its method, reach, options, sinks, temperature."""
    gemma = get_pattern("gemma3").layers(4, 64)
    assert [s.reach for s in gemma] == ["window"] * 3 + ["full"]
    assert get_pattern("gemma3").layers(1, 64) == (get_pattern("gemma3").layers(6, 64)[-1],)
    assert get_pattern("gemma3").layers(6, 64) == get_pattern("gemma3").layers(12, 64)[:6]
    assert gemma[0].describe() == "rope window 16 base 1e+04"
    assert gemma[-1].describe() == "rope full base 1e+06"
    assert get_pattern("llama4").layers(4, 64)[-1].describe() == "none full temperature"
    assert get_pattern("gpt_oss").layers(2, 64)[0].describe() == "rope window 8 sinks"
