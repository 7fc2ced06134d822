"""Order from recurrence (issue 36): the short causal convolution and the gated diagonal decay
(posenc.recurrence, numpy), the torch layer that trains with them
(posenc.nn.GatedDecayRecurrence), and the hybrid layer patterns built on it.

References: ``numpy.convolve`` for the convolution; Hugging Face's Mamba-2 ``segment_sum``
(transformers is a test dependency) for the decay's weighted-sum form; the recurrence and its
unrolled sum as two formulations of one thing; FoX's bias as a third."""

import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from posenc.data_dependent import forgetting_attention_bias
from posenc.layer_patterns import PATTERNS, LayerPattern, LayerSpec
from posenc.model import TinyLM, TinyLMConfig
from posenc.nn import GatedDecayRecurrence, MultiHeadSelfAttention
from posenc.nn.recurrence import gated_decay
from posenc.recurrence import causal_conv, gated_decay_scan, gated_decay_weights

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest.py

SEEDS = st.integers(0, 2**32 - 1)


def _gates(rng, shape, low=0.02):
    return rng.uniform(low, 1.0, size=shape)


# --- numpy: the convolution ----------------------------------------------------------------

@given(SEEDS, st.integers(1, 12), st.integers(1, 5), st.integers(1, 3))
def test_causal_conv_is_numpy_convolve_cut_to_the_past(seed, n, k, d):
    rng = np.random.default_rng(seed)
    x, kernel = rng.normal(size=(n, d)), rng.normal(size=(k, d))
    expected = np.stack([np.convolve(x[:, c], kernel[:, c])[:n] for c in range(d)], axis=-1)
    np.testing.assert_allclose(causal_conv(x, kernel), expected, atol=1e-12)


@given(SEEDS, st.integers(2, 10))
def test_causal_conv_sees_no_future_token(seed, n):
    rng = np.random.default_rng(seed)
    x, kernel = rng.normal(size=(n, 2)), rng.normal(size=(4, 2))
    t = int(rng.integers(0, n - 1))
    changed = x.copy()
    changed[t + 1:] += 1.0
    np.testing.assert_array_equal(causal_conv(x, kernel)[:t + 1],
                                  causal_conv(changed, kernel)[:t + 1])


# --- numpy: the decay, two formulations and FoX ---------------------------------------------

@given(SEEDS, st.integers(1, 12), st.integers(1, 3))
def test_the_recurrence_unrolled_is_the_weighted_sum(seed, n, d):
    rng = np.random.default_rng(seed)
    x, a = rng.normal(size=(2, n, d)), _gates(rng, (2, n, d))
    h = np.einsum("bcts,bsc->btc", gated_decay_weights(a), x)
    np.testing.assert_allclose(gated_decay_scan(x, a), h, atol=1e-12)


@given(SEEDS, st.integers(1, 10))
def test_the_weights_are_mamba2_segment_sums_and_fox_bias(seed, n):
    """``W[t, s] = exp(segsum(log a)[t, s]) (1 - a_s)``, with Hugging Face's Mamba-2
    ``segment_sum`` (sum of log a over s+1..t, -inf above the diagonal); its log is FoX's
    bias with ``log f = log a`` plus ``log(1 - a_s)``."""
    from transformers.models.mamba2.modeling_mamba2 import segment_sum

    rng = np.random.default_rng(seed)
    a = _gates(rng, (n, 3), low=0.05)
    a = np.minimum(a, 0.999)
    log_a = np.log(a).T  # [d, n]
    expected = np.exp(segment_sum(torch.from_numpy(log_a)).numpy()) * (1 - a.T)[:, None, :]
    weights = gated_decay_weights(a)
    np.testing.assert_allclose(weights, expected, rtol=1e-10, atol=1e-14)
    below = np.tril(np.ones((n, n), dtype=bool))
    np.testing.assert_allclose(np.log(weights[:, below]),
                               (forgetting_attention_bias(log_a) + np.log(1 - a.T)[:, None, :]
                                )[:, below], rtol=1e-10, atol=1e-10)


def test_the_decay_at_its_limits():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 2))
    np.testing.assert_array_equal(gated_decay_scan(x, np.zeros_like(x)), x)  # forgets all
    np.testing.assert_array_equal(gated_decay_scan(x, np.ones_like(x)), 0 * x)  # reads none
    # a constant gate is an exponential moving average: h_t = (1-a) sum_s a^(t-s) x_s
    a = 0.7
    ema = [(1 - a) * sum(a ** (t - s) * x[s] for s in range(t + 1)) for t in range(6)]
    np.testing.assert_allclose(gated_decay_scan(x, np.full_like(x, a)), ema, atol=1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda: causal_conv(np.ones(3), np.ones((2, 1))), "x must have at least 2"),
    (lambda: causal_conv(np.ones((3, 2)), np.ones((2, 3))), r"kernel must be \[k, d\]"),
    (lambda: gated_decay_scan(np.ones((3, 2)), np.full((3, 2), 1.5)),
     r"a must hold decay gates in \[0, 1\]"),
    (lambda: gated_decay_scan(np.ones((3, 2)), np.full((3, 1), 0.5)), "a must have x's shape"),
    (lambda: gated_decay_weights(np.zeros((3, 2))), r"a must be in \(0, 1\]"),
    (lambda: gated_decay_scan("x", np.ones((1, 1))), "x must be an array of real numbers"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# --- torch: the chunked decay and the layer -------------------------------------------------

@given(SEEDS, st.integers(1, 40), st.sampled_from([1, 3, 8, 64]))
def test_chunked_decay_is_the_scan(seed, n, chunk):
    rng = np.random.default_rng(seed)
    x, a = rng.normal(size=(2, n, 3)), _gates(rng, (2, n, 3))
    h = gated_decay(torch.from_numpy(x), torch.from_numpy(np.log(a)), chunk=chunk)
    assert h.dtype == torch.float64
    np.testing.assert_allclose(h.numpy(), gated_decay_scan(x, a), atol=1e-12)


def _layer_by_hand(layer: GatedDecayRecurrence, x: np.ndarray) -> np.ndarray:
    """The layer's forward written with the numpy formulas, from its weights (float64)."""
    def p(t):
        return t.detach().double().numpy()

    def silu(v):
        return v / (1 + np.exp(-v))

    d = layer.d_model
    uz = x @ p(layer.in_proj.weight).T + p(layer.in_proj.bias)
    u, z = uz[..., :d], uz[..., d:]
    if layer.conv is not None:  # PyTorch's weight [d, 1, k] is the kernel reversed
        kernel = p(layer.conv.weight)[:, 0, ::-1].T
        u = causal_conv(u, kernel) + p(layer.conv.bias)
    u = silu(u)
    if layer.gate is not None:
        a = 1 / (1 + np.exp(-(u @ p(layer.gate.weight).T + p(layer.decay_bias))))
        u = gated_decay_scan(u, a)
    return (u * silu(z)) @ p(layer.out_proj.weight).T + p(layer.out_proj.bias)


@pytest.mark.parametrize("conv_size, decay", [(4, True), (0, True), (3, False), (0, False)])
def test_the_layer_is_the_numpy_formulas(conv_size, decay):
    torch.manual_seed(0)
    layer = GatedDecayRecurrence(8, conv_size=conv_size, decay=decay).double()
    x = np.random.default_rng(1).normal(size=(2, 19, 8))
    np.testing.assert_allclose(layer(torch.from_numpy(x)).detach().numpy(),
                               _layer_by_hand(layer, x), atol=1e-10)


@pytest.mark.parametrize("conv_size, decay, reach", [
    (4, True, None), (0, True, None), (4, False, 4), (0, False, 1)])
def test_where_each_variant_gets_its_order_from(conv_size, decay, reach):
    """Output t depends on tokens t-reach+1..t (``None``: all of 0..t); never on later ones.
    Without convolution and decay the layer is per-token: its order comes from nowhere."""
    torch.manual_seed(0)
    layer = GatedDecayRecurrence(8, conv_size=conv_size, decay=decay).double()
    x = torch.randn(1, 12, 8, dtype=torch.float64)
    t = 7
    for s in range(12):
        changed = x.clone()
        changed[0, s] += 1.0
        moved = not torch.allclose(layer(x)[0, t], layer(changed)[0, t], atol=1e-12)
        sees = s <= t and (reach is None or s > t - reach)
        assert moved == sees, (s, t)


def test_the_layer_in_float64_bfloat16_and_on_meta():
    torch.manual_seed(0)
    layer = GatedDecayRecurrence(16)
    x = torch.randn(2, 20, 16)
    out = layer(x)
    assert layer.double()(x.double()).dtype == torch.float64
    low = GatedDecayRecurrence(16)
    low.load_state_dict(layer.float().state_dict())
    bf16 = low.to(torch.bfloat16)(x.to(torch.bfloat16))
    assert bf16.dtype == torch.bfloat16
    assert (bf16.float() - out).abs().max() < 0.05 * out.abs().max()
    with torch.device("meta"):
        meta = GatedDecayRecurrence(16)
        assert meta(torch.empty(2, 20, 16)).shape == (2, 20, 16)


def test_four_d_squared_weights_as_attention():
    attention = MultiHeadSelfAttention(16, 2, bias=False)
    layer = GatedDecayRecurrence(16, conv_size=0)
    weights = sum(p.numel() for name, p in layer.named_parameters() if p.ndim == 2)
    assert weights == sum(p.numel() for p in attention.parameters() if p.ndim == 2) == 4 * 16 ** 2


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(conv_size=-1), ValueError, "conv_size must be"),
    (dict(decay="yes"), TypeError, "decay must be True or False"),
])
def test_layer_bad_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        GatedDecayRecurrence(8, **kwargs)
    with pytest.raises(ValueError, match=r"x must be \[batch, seq, d_model=8\]"):
        GatedDecayRecurrence(8)(torch.zeros(2, 3, 5))


# --- hybrid patterns ---------------------------------------------------------------------------

def test_a_recurrent_layer_spec_is_checked():
    spec = LayerSpec(position="none", mixer="recurrent", options={"conv_size": 2})
    assert spec.recurrence_options == {"conv_size": 2, "decay": True}
    assert spec.describe() == "recurrent conv_size 2 decay True"
    with pytest.raises(TypeError, match="a recurrent layer's options are conv_size, decay"):
        LayerSpec(position="none", mixer="recurrent", options={"base": 1e4})
    with pytest.raises(ValueError, match="a recurrent layer has no position method"):
        LayerSpec(position="rope", mixer="recurrent")
    with pytest.raises(ValueError, match="a recurrent layer has no position method"):
        LayerSpec(position="none", mixer="recurrent", reach="window", size=4)
    with pytest.raises(ValueError, match="mixer must be one of"):
        LayerSpec(position="none", mixer="mamba")


@pytest.mark.parametrize("name, top", [("kimi_linear", "none"), ("qwen3_next", "partial_rope")])
def test_the_hybrids_attention_layers(name, top):
    model = TinyLM(TinyLMConfig(pattern=name, num_layers=8))
    kinds = ["recurrent" if b.recurrence is not None else b.attn.position for b in model.blocks]
    assert kinds == ["recurrent"] * 3 + [top] + ["recurrent"] * 3 + [top]
    if name == "qwen3_next":
        assert model.blocks[3].attn.gate is not None
        assert model.blocks[3].attn.encoding.rotary_dim == model.config.head_dim // 4
    tokens = torch.randint(0, 256, (2, 70))
    assert model(tokens).shape == (2, 70, 256)
    assert model.rotary_embeddings() == []


def test_a_hybrid_model_is_causal():
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(pattern="kimi_linear", num_layers=4)).double()
    tokens = torch.randint(0, 256, (1, 20))
    changed = tokens.clone()
    changed[0, 12:] = (changed[0, 12:] + 1) % 256
    np.testing.assert_allclose(model(tokens)[0, :12].detach(), model(changed)[0, :12].detach(),
                               atol=1e-10)


def test_an_unregistered_pattern_value_builds_a_model():
    control = dataclasses.replace(PATTERNS["kimi_linear"], name="control", cycle=(
        dict(position="none", mixer="recurrent", options={"conv_size": 0, "decay": False}),
        dict(position="none")))
    assert isinstance(control, LayerPattern) and "control" not in PATTERNS
    model = TinyLM(TinyLMConfig(pattern=control, num_layers=2))
    assert model.blocks[0].recurrence.conv is None and model.blocks[0].recurrence.gate is None
    x = torch.randn(1, 5, 64)
    assert F.mse_loss(model.blocks[0](x), model.blocks[0](x)) == 0


def test_inference_run_refuses_a_recurrent_layer():
    from posenc.inference import run

    model = TinyLM(TinyLMConfig(pattern="kimi_linear", num_layers=4))
    with pytest.raises(ValueError, match="block 0 is a recurrent layer"):
        run(model, torch.zeros(1, 4, dtype=torch.long))
