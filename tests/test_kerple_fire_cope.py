"""KERPLE, FIRE and CoPE: shapes, causality, each against a transcription of its
reference code (gpt-neox ``ParallelKerpleLog``/``ParallelKerplePower``, the FIRE paper's
reference module, facebookresearch/RAM's ``ContextPosSelfAttn``), ALiBi as KERPLE's
special case, FIRE's normalisation, CoPE with every gate open, and the extrapolation
experiment running them by name."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc.alibi import alibi_bias, alibi_slopes
from posenc.learned_bias import (
    causal_distances,
    cope_interpolate,
    cope_positions,
    fire_normalized_distance,
    fire_psi,
    kerple_log,
    kerple_power,
)
from posenc.model import TinyLM, TinyLMConfig
from posenc.nn import CoPEBias, FIREBias, KerpleBias, MultiHeadSelfAttention

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest.py

NEW = ("kerple_power", "kerple_log", "fire", "cope")


def layer(position, causal=True, seed=0):
    torch.manual_seed(seed)
    m = MultiHeadSelfAttention(32, 4, position, causal=causal)
    if position == "cope":  # make the table matter
        torch.nn.init.normal_(m.encoding.pos_emb, std=1.0)
    return m.double().eval()


# --- shapes -----------------------------------------------------------------------------------

@pytest.mark.parametrize("position", NEW)
@pytest.mark.parametrize("causal", [True, False])
def test_shapes_of_layers_models_and_biases(position, causal):
    m = layer(position, causal)
    x = torch.randn(3, 11, 32, dtype=torch.float64)
    assert m(x).shape == x.shape
    q = torch.randn(3, 4, 11, 8, dtype=torch.float64)
    bias = m.encoding.score_bias(q, q)
    expected = (3, 4, 11, 11) if position == "cope" else (4, 11, 11)
    assert bias.shape == expected and bias.dtype == q.dtype and torch.isfinite(bias).all()
    lm = TinyLM(TinyLMConfig(position=position, d_model=32, num_heads=4, num_layers=2))
    assert lm(torch.randint(0, 256, (2, 20))).shape == (2, 20, 256)


@pytest.mark.parametrize("position", NEW)
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_bias_is_made_on_the_queries_device_and_dtype(position, dtype):
    m = MultiHeadSelfAttention(32, 4, position, causal=True).to("meta")
    assert m(torch.randn(1, 6, 32, device="meta")).device.type == "meta"
    m = MultiHeadSelfAttention(32, 4, position, causal=True).to(dtype)
    q = torch.randn(1, 4, 6, 8, dtype=dtype)
    assert m.encoding.score_bias(q, q).dtype == dtype


# --- causality --------------------------------------------------------------------------------

@pytest.mark.parametrize("position", NEW)
def test_no_information_flows_from_future_keys(position):
    m = layer(position)
    x = torch.randn(2, 12, 32, dtype=torch.float64)
    x2 = x.clone()
    x2[:, 7] += torch.randn(2, 32, dtype=torch.float64)  # perturb one token
    y, y2 = m(x), m(x2)
    assert torch.equal(y[:, :7], y2[:, :7])  # the past: bit for bit identical
    assert not torch.allclose(y[:, 7:], y2[:, 7:])
    torch.manual_seed(0)
    lm = TinyLM(TinyLMConfig(position=position, d_model=32, num_heads=4, num_layers=2)).double()
    t = torch.randint(0, 256, (1, 12))
    t2 = t.clone()
    t2[0, 9] = (t[0, 9] + 1) % 256
    assert torch.equal(lm(t)[:, :9], lm(t2)[:, :9])


def test_cope_counts_only_keys_up_to_the_query_when_causal():
    gates = torch.rand(2, 7, 7, dtype=torch.float64)
    changed = gates.clone()
    changed[..., 5, 6] = 0.123  # a future key of query 5
    p, p2 = cope_positions(gates), cope_positions(changed)
    assert torch.equal(p[..., :6, :6], p2[..., :6, :6])


# --- KERPLE -----------------------------------------------------------------------------------

def test_kerple_log_at_init_is_the_explicit_formula():
    """The official init (gpt-neox ParallelKerpleLog): bias_p = rand(h) * 2, then
    bias_a = rand(h) * 1, and the bias -p log(1 + a (i - j)) below the diagonal."""
    h, n = 4, 9
    torch.manual_seed(3)
    p_ref, a_ref = torch.rand(h) * 2, torch.rand(h)
    torch.manual_seed(3)
    kerple = KerpleBias(h, kernel="log")
    torch.testing.assert_close(kerple.r1.detach(), p_ref, rtol=0, atol=0)
    torch.testing.assert_close(kerple.r2.detach(), a_ref, rtol=0, atol=0)
    bias = kerple(n).double()
    for head in range(h):
        p, a = max(float(p_ref[head]), 0.01), max(float(a_ref[head]), 0.01)
        for i in range(n):
            for j in range(i + 1):
                assert bias[head, i, j].item() == pytest.approx(-p * math.log(1 + a * (i - j)),
                                                                rel=1e-6, abs=1e-6)


def test_kerple_power_init_and_clamps_follow_the_official_code():
    torch.manual_seed(5)
    a_ref, p_ref = torch.rand(3), torch.rand(3) * 2  # bias_a ~ U(0, 1), bias_p ~ U(0, 2)
    torch.manual_seed(5)
    kerple = KerpleBias(3, kernel="power")
    torch.testing.assert_close(kerple.r1.detach(), a_ref, rtol=0, atol=0)
    torch.testing.assert_close(kerple.r2.detach(), p_ref, rtol=0, atol=0)
    with torch.no_grad():
        kerple.r1.fill_(-1.0)
        kerple.r2.copy_(torch.tensor([-1.0, 1.0, 5.0]))
    r1, r2 = kerple.parameters_in_use()
    assert r1.tolist() == pytest.approx([0.01] * 3) and r2.tolist() == pytest.approx([0.01, 1, 2])
    assert kerple.r1[0].item() == -1.0  # the stored parameter is never rewritten


def test_alibi_is_kerple_power_with_exponent_one():
    h, n = 8, 10
    slopes = alibi_slopes(h)
    below = np.tril(np.ones((n, n), dtype=bool))
    for eps, reached in ((0.01, slopes >= 0.01), (1e-4, slopes > 0)):
        kerple = KerpleBias(h, kernel="power", eps=eps)
        with torch.no_grad():
            kerple.r1.copy_(torch.from_numpy(slopes))
            kerple.r2.fill_(1.0)
        got, alibi = kerple(n).detach().numpy()[:, below], alibi_bias(h, n)[:, below]
        equal = np.isclose(got, alibi, rtol=1e-6, atol=1e-6).all(axis=1)
        assert equal.tolist() == reached.tolist()  # the official clamp misses 1/128, 1/256
    # and so the attention layers agree, weight for weight
    alibi, k_layer = layer("alibi"), layer("kerple_power")
    k_layer.load_state_dict(alibi.state_dict(), strict=False)
    k_layer.encoding.eps = 1e-4
    with torch.no_grad():
        k_layer.encoding.r1.copy_(torch.from_numpy(alibi_slopes(4)))
        k_layer.encoding.r2.fill_(1.0)
    x = torch.randn(2, 10, 32, dtype=torch.float64)
    torch.testing.assert_close(k_layer(x), alibi(x))


@given(st.floats(0.01, 3), st.floats(0.01, 2), st.integers(0, 5000))
def test_kerple_kernels_are_negative_and_fall_with_distance(r1, r2, d):
    for kernel in (kerple_power, kerple_log):
        assert kernel(d, r1, r2) <= 0 and kernel(d + 1, r1, r2) < kernel(d, r1, r2)
    assert kerple_power(0, r1, r2) == 0 and kerple_log(0, r1, r2) == 0


def test_kerple_rejects_bad_settings():
    with pytest.raises(ValueError, match="kernel"):
        KerpleBias(2, kernel="cubic")
    with pytest.raises(ValueError, match="num_heads"):
        KerpleBias(0)
    with pytest.raises(TypeError, match="causal"):
        KerpleBias(2, causal="yes")


# --- FIRE -------------------------------------------------------------------------------------

def reference_fire_normalised(n, c, init_L, L_multiplier=1.0, eps=1e-6):
    """The FIRE paper's reference forward pass, transcribed (positions 0..n-1)."""
    positions = np.arange(n, dtype=np.float64)
    rel = positions[:, None] - positions[None, :]
    threshold = abs(L_multiplier * init_L)
    normaliser = np.maximum(positions, threshold)[:, None]
    rel = np.log(np.abs(c * rel) + 1)
    normaliser = np.log(np.abs(c * normaliser) + 1) + eps
    return rel / normaliser


@pytest.mark.parametrize("c,init_L", [(0.1, 512.0), (0.5, 4.0), (2.0, 0.0)])
def test_fire_matches_the_reference_forward_pass(c, init_L):
    torch.manual_seed(0)
    fire = FIREBias(3, init_c=c, init_L=init_L).double()
    n = 20
    expected = reference_fire_normalised(n, c, init_L)
    below = np.tril(np.ones((n, n), dtype=bool))
    got = fire.normalized_distance(n).detach().numpy()
    np.testing.assert_allclose(got[below], expected[below], rtol=1e-6, atol=1e-7)
    mlp_out = fire.mlp(torch.from_numpy(expected).unsqueeze(-1)).permute(2, 0, 1)
    torch.testing.assert_close(fire(n)[:, below], mlp_out[:, below], rtol=1e-5, atol=1e-6)


def test_fire_normalisation_past_the_threshold():
    """Past L the normaliser is psi(i): the first key always maps to 1 and the query
    itself to 0, whatever i. Below L it is the constant psi(L): a function of i - j."""
    L, c, n = 16.0, 0.3, 64
    nd = fire_normalized_distance(causal_distances(n), np.arange(n)[:, None], c, L, eps=0)
    assert np.allclose(nd[int(L):, 0], 1) and np.allclose(np.diag(nd), 0)
    i, j = np.tril_indices(n)
    past = i >= L
    np.testing.assert_allclose(nd[i[past], j[past]],
                               fire_psi(i[past] - j[past], c) / fire_psi(i[past], c))
    before = nd[: int(L), : int(L)]
    assert np.allclose(before[1:, 1:], before[:-1, :-1])  # Toeplitz: depends on i - j only


@given(st.integers(20, 400), st.floats(0.05, 0.95), st.integers(2, 6))
def test_fire_depends_on_the_ratio_of_distance_to_position_as_c_shrinks(i, ratio, scale):
    """psi(x) = log(c x + 1) ~ c x for small c, so psi(i - j) / psi(i) -> (i - j) / i:
    positions (i, j) and (s i, s j) past the threshold get the same normalised distance."""
    c, L = 1e-9, 10.0
    d = round(ratio * i)
    a = fire_normalized_distance(d, i, c, L, eps=0)
    b = fire_normalized_distance(scale * d, scale * i, c, L, eps=0)
    assert a == pytest.approx(b, abs=1e-6) and a == pytest.approx(d / i, abs=1e-6)
    # with the paper's c = 0.1 it is only roughly so: the log favours the nearer keys
    near = fire_normalized_distance(d, i, 0.1, L) - fire_normalized_distance(scale * d,
                                                                            scale * i, 0.1, L)
    assert d == 0 or d == i or near < 0


def test_fire_threshold_and_c_are_learned():
    fire = FIREBias(2, init_L=8.0)
    fire(12).sum().backward()
    assert fire.c.grad is not None and fire.L_multiplier.grad is not None
    assert fire.c.grad.abs() > 0 and fire.L_multiplier.grad.abs() > 0
    assert "init_L" in fire.state_dict()
    with pytest.raises(ValueError, match="init_c"):
        FIREBias(2, init_c=0.0)


# --- CoPE -------------------------------------------------------------------------------------

def brute_force_positions(gates, causal):
    n = gates.shape[-1]
    out = np.zeros_like(gates)
    for i in range(n):
        for j in range(n):
            if causal and j > i:
                continue
            lo, hi = min(i, j), max(i, j)
            out[..., i, j] = gates[..., i, lo:hi + 1].sum(-1)
    return out


@pytest.mark.parametrize("causal", [True, False])
def test_cope_positions_are_sums_of_gates_between_key_and_query(causal, rng):
    gates = rng.uniform(size=(2, 3, 9, 9))
    expected = brute_force_positions(gates, causal)
    np.testing.assert_allclose(cope_positions(gates, causal=causal), expected, atol=1e-12)
    got = cope_positions(torch.from_numpy(gates), causal=causal).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_cope_with_every_gate_open_is_a_relative_position():
    n, d = 10, 8
    cope = CoPEBias(d, npos=32).double()
    torch.nn.init.normal_(cope.pos_emb)
    q = torch.randn(2, 3, n, d, dtype=torch.float64)
    positions = cope.positions(torch.ones(2, 3, n, n, dtype=torch.float64))
    i, j = np.tril_indices(n)
    assert positions[..., i, j].eq(torch.from_numpy(i - j + 1).double()).all()
    bias = cope.bias_from_gates(q, torch.ones(2, 3, n, n, dtype=torch.float64))
    table = cope.pos_emb.detach()  # [d, npos]
    for a, b in zip(i, j, strict=True):  # q_i . e[i - j + 1] / sqrt(d): Shaw's key term
        expected = q[..., a, :] @ table[:, a - b + 1] / math.sqrt(d)
        torch.testing.assert_close(bias[..., a, b], expected)


def test_cope_counts_marked_tokens_and_interpolates():
    # gates open on 3 "sentence ends" only: positions count sentences back
    marks = np.array([0, 0, 1, 0, 0, 1, 0, 1, 0, 0], dtype=np.float64)
    n = marks.size
    p = cope_positions(np.broadcast_to(marks, (n, n)).copy())
    assert p[-1].tolist() == [3, 3, 3, 2, 2, 2, 1, 1, 0, 0]
    logits = np.arange(5.0)[None, :] ** 2  # value p^2 at integer p
    assert cope_interpolate(logits, np.array([[1.25]]))[0, 0] == pytest.approx(1.75)
    t = cope_interpolate(torch.from_numpy(logits), torch.tensor([[1.25]], dtype=torch.float64))
    assert t.item() == pytest.approx(1.75)


def reference_cope_scores(q, k, pos_emb, npos):
    """facebookresearch/RAM ContextPosSelfAttn, transcribed for one head, causal mask:
    the scaled logits before the softmax (positions -inf above the diagonal)."""
    d = q.shape[-1]
    n = q.shape[-2]
    mask = torch.ones(n, n, dtype=q.dtype).tril()
    gate_logits = q @ k.transpose(-1, -2)
    gates = torch.sigmoid(gate_logits / math.sqrt(d)) * mask
    positions = gates.flip(-1).cumsum(dim=-1).flip(-1).clamp(max=npos - 1)
    pos_logits_fixed = q @ pos_emb
    ceil, floor = positions.ceil().long(), positions.floor().long()
    w = positions - floor
    pos_logits = (pos_logits_fixed.gather(-1, ceil) * w
                  + pos_logits_fixed.gather(-1, floor) * (1 - w))
    return (gate_logits + pos_logits) / math.sqrt(d) + mask.log()


@pytest.mark.parametrize("npos", [4, 64])
def test_cope_scores_match_the_official_code(npos):
    torch.manual_seed(0)
    d, n = 8, 12
    cope = CoPEBias(d, npos=npos).double()
    torch.nn.init.normal_(cope.pos_emb)
    q, k = torch.randn(2, n, d, dtype=torch.float64), torch.randn(2, n, d, dtype=torch.float64)
    ours = q @ k.transpose(-1, -2) / math.sqrt(d) + cope.score_bias(q, k)
    ref = reference_cope_scores(q, k, cope.pos_emb.detach(), npos)
    below = torch.ones(n, n, dtype=torch.bool).tril()
    torch.testing.assert_close(ours[:, below], ref[:, below])


def test_cope_rejects_bad_settings():
    with pytest.raises(ValueError, match="npos"):
        CoPEBias(8, npos=1)
    with pytest.raises(ValueError, match="square"):
        cope_positions(np.ones((3, 4)))
    with pytest.raises(ValueError, match="queries"):
        CoPEBias(8).score_bias(torch.randn(1, 3, 8), torch.randn(1, 5, 8))


# --- the extrapolation experiment -----------------------------------------------------------

def test_extrapolation_runs_the_new_methods_by_name(tmp_path):
    out = tmp_path / "results.json"
    args = ["--preset", "text", "--encodings", "kerple_log,fire,cope", "--train-length", "8",
            "--d-model", "16",
            "--num-heads", "2", "--num-layers", "1", "--d-ff", "32", "--steps", "10",
            "--batch-size", "4", "--warmup-steps", "2", "--eval-tokens", "128",
            "--log-every", "5", "--no-progress", "--output", str(out)]
    proc = subprocess.run([sys.executable, "-m", "posenc.experiments.extrapolation", *args],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    assert proc.returncode == 0, proc.stderr
    results = json.loads(out.read_text())
    assert list(results["variants"]) == ["kerple_log", "fire", "cope"]
    for name, entry in results["variants"].items():
        assert all(x is not None and 0 < x < 2 * math.log(256) for x in entry["loss"]), name


# --- the chapter's figures and fits -----------------------------------------------------------

def test_fire_fits_alibi_and_t5_like_targets():
    from posenc.course.figures.learned_biases import fire_fit_targets
    from posenc.nn.fire import fit_fire

    for name, target in fire_fit_targets(64).items():
        result = fit_fire(target, steps=300, snapshots=(0, 300))
        start = np.abs(result["snapshots"][0] - target).max()
        end = np.abs(result["fit"] - target).max()
        assert end < 0.1 * np.ptp(target) < start, name
        np.testing.assert_array_equal(result["snapshots"][300], result["fit"])
    again = fit_fire(fire_fit_targets(64)["T5-like"], steps=20)
    np.testing.assert_array_equal(again["fit"],
                                  fit_fire(fire_fit_targets(64)["T5-like"], steps=20)["fit"])
    with pytest.raises(ValueError, match="threshold"):
        fit_fire(np.zeros(10), threshold=3.0)


def test_cope_gates_and_the_figures_draw():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from posenc.course.figures import learned_biases as figs

    tokens = "a b . c .".split()
    assert figs.cope_gates(tokens, "sentences").tolist() == [0, 0, 1, 0, 1]
    assert figs.cope_gates(tokens, "words").tolist() == [1, 1, 0, 1, 0]
    assert figs.cope_gates(tokens, "tokens").tolist() == [1] * 5
    with pytest.raises(ValueError, match="counting"):
        figs.cope_gates(tokens, "verbs")
    fits = {"T5-like": {"distance": np.arange(4.0), "target": -np.arange(4.0),
                        "fit": -np.arange(4.0), "snapshots": {0: np.zeros(4)}}}
    for draw, kwargs in ((figs.draw_kerple_kernel, dict(kernel="log", r1=1.0, r2=0.5)),
                         (figs.draw_fire_normalized, dict(c=0.1, threshold=64)),
                         (figs.draw_fire_fit, dict(target="T5-like", steps=0, fits=fits)),
                         (figs.draw_cope_positions, dict(counting="sentences", query=15))):
        fig = plt.figure()
        draw(fig, **kwargs)
        assert fig.axes and (fig.axes[0].lines or fig.axes[0].patches)
        plt.close(fig)
    with pytest.raises(ValueError, match="query"):
        figs.draw_cope_positions(plt.figure(), "tokens", 99)
    plt.close("all")
