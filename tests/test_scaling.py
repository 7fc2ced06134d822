import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

from posenc.nn import RotaryEmbedding, rope_kernel
from posenc.rope import apply_rope, rope_frequencies
from posenc.scaling import (
    SCALING_METHODS,
    rope_scaling_frequencies,
    yarn_attention_factor,
    yarn_correction_range,
    yarn_mscale,
)

head_dims = st.integers(2, 128).map(lambda h: 2 * h)  # 4 .. 256
bases = st.floats(2.0, 1e7)
factors = st.floats(1.0, 64.0)
lengths = st.integers(64, 1_000_000)


def scaled(method, head_dim=128, **kw):
    return rope_scaling_frequencies(method, head_dim, **kw)


# --- independent references: Hugging Face's formulas, transcribed in torch ---------------

def hf_default(dim, base, dtype):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype) / dim))


def hf_linear(dim, base, factor, dtype=torch.float64):
    return hf_default(dim, base, dtype) / factor


def hf_dynamic(dim, base, factor, max_pos, seq_len=None, dtype=torch.float64):
    seq_len = max_pos if seq_len is None else max(seq_len, max_pos)
    base = base * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2))
    return hf_default(dim, base, dtype)


def hf_yarn(dim, base, factor, max_pos, beta_fast=32, beta_slow=1, truncate=True,
            dtype=torch.float64):
    def correction_dim(rot):
        return (dim * math.log(max_pos / (rot * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=dtype) - low) / (high - low), 0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2).to(dtype) / dim)
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    extrapolation_factor = 1 - ramp
    inv_freq = interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor
    return inv_freq, 0.1 * math.log(factor) + 1.0


def hf_llama3(dim, base, factor, low_freq_factor, high_freq_factor, old_context_len,
              dtype=torch.float64):
    inv_freq = hf_default(dim, base, dtype)
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium, smoothed, inv_freq_llama)


LLAMA31 = dict(head_dim=128, base=500000.0, factor=8.0, low=1.0, high=4.0, L0=8192)


@pytest.mark.parametrize("dim, base, factor, L0", [
    (128, 500000.0, 8.0, 8192),   # Llama 3.1
    (128, 10000.0, 16.0, 4096),   # YaRN paper's Llama 2 runs (s = 16, 32)
    (128, 10000.0, 32.0, 4096),
    (64, 10000.0, 4.0, 2048),
    (96, 1e6, 2.5, 32768),
    (16, 100.0, 3.0, 512),
])
def test_matches_hugging_face_transcription(dim, base, factor, L0):
    def ours(method, **kw):
        return scaled(method, dim, base=base, factor=factor,
                      original_max_position_embeddings=L0, **kw)

    def close(a, b):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-12, atol=0)

    close(ours("default")[0], hf_default(dim, base, torch.float64))
    close(ours("linear")[0], hf_linear(dim, base, factor))
    for seq in (None, L0 // 2, L0, 3 * L0, factor * L0):
        close(ours("dynamic", seq_len=seq)[0], hf_dynamic(dim, base, factor, L0, seq))
    for truncate in (True, False):
        ref, att = hf_yarn(dim, base, factor, L0, truncate=truncate)
        inv, ours_att = ours("yarn", truncate=truncate)
        close(inv, ref)
        assert ours_att == pytest.approx(att, rel=1e-15)
    ref, _ = hf_yarn(dim, base, factor, L0, beta_fast=16, beta_slow=2)
    close(ours("yarn", beta_fast=16, beta_slow=2)[0], ref)
    close(ours("llama3")[0], hf_llama3(dim, base, factor, 1.0, 4.0, L0))
    close(ours("llama3", low_freq_factor=2, high_freq_factor=8)[0],
          hf_llama3(dim, base, factor, 2.0, 8.0, L0))


def test_agrees_with_hugging_face_float32_to_float32_precision():
    c = LLAMA31
    ours = scaled("llama3", c["head_dim"], base=c["base"], factor=c["factor"],
                  original_max_position_embeddings=c["L0"])[0]
    ref = hf_llama3(c["head_dim"], c["base"], c["factor"], c["low"], c["high"], c["L0"],
                    dtype=torch.float32).numpy()
    np.testing.assert_allclose(ours, ref, rtol=2e-6)
    ours = scaled("yarn", 128, factor=32, original_max_position_embeddings=4096)[0]
    np.testing.assert_allclose(ours, hf_yarn(128, 1e4, 32, 4096, dtype=torch.float32)[0].numpy(),
                               rtol=2e-6)


# --- each method against independently derived values ----------------------------------

def test_default_and_linear():
    theta = rope_frequencies(64, 10000.0)
    inv, att = scaled("default", 64)
    np.testing.assert_array_equal(inv, theta)
    assert att == 1.0
    inv, att = scaled("linear", 64, factor=4)
    np.testing.assert_allclose(inv, theta / 4, rtol=1e-15)
    np.testing.assert_allclose(inv[:3], [0.25, 0.25 * 10 ** (-1 / 8), 0.25 * 10 ** (-2 / 8)])
    assert att == 1.0


@given(head_dims, bases, factors)
def test_ntk_is_a_base_change_whose_slowest_pair_is_divided_by_s(d, base, s):
    inv, att = scaled("ntk", d, base=base, factor=s)
    new_base = base * s ** (d / (d - 2))
    np.testing.assert_allclose(inv, rope_frequencies(d, new_base), rtol=1e-12)
    theta = rope_frequencies(d, base)
    assert inv[0] == 1.0 == theta[0]  # the fastest pair is untouched
    np.testing.assert_allclose(inv[-1], theta[-1] / s, rtol=1e-12)  # the slowest is /s exactly
    assert att == 1.0


def test_ntk_known_value():
    # d = 4: pairs 0 and 1; base' = base * s**2, theta'_1 = base'**(-1/2) = theta_1 / s
    inv, _ = scaled("ntk", 4, base=100.0, factor=3.0)
    np.testing.assert_allclose(inv, [1.0, 1 / 30], rtol=1e-14)


@given(head_dims, bases, factors, lengths, st.floats(0.01, 1.0))
def test_dynamic_is_default_up_to_the_training_length(d, base, s, L0, fraction):
    theta = rope_frequencies(d, base)
    for seq in (None, L0, fraction * L0):
        inv, att = scaled("dynamic", d, base=base, factor=s, original_max_position_embeddings=L0,
                          seq_len=seq)
        np.testing.assert_allclose(inv, theta, rtol=1e-12)
        assert att == 1.0


@given(head_dims, bases, factors, lengths, st.floats(1.0, 64.0))
def test_dynamic_above_the_training_length_is_ntk_with_an_effective_scale(d, base, s, L0, r):
    inv, _ = scaled("dynamic", d, base=base, factor=s, original_max_position_embeddings=L0,
                    seq_len=r * L0)
    effective = s * r - (s - 1)
    np.testing.assert_allclose(inv, scaled("ntk", d, base=base, factor=effective)[0], rtol=1e-12)
    np.testing.assert_allclose(inv, rope_frequencies(d, base * effective ** (d / (d - 2))),
                               rtol=1e-12)


def test_llama31_real_settings():
    c = LLAMA31
    theta = rope_frequencies(c["head_dim"], c["base"])
    inv, att = scaled("llama3", c["head_dim"], base=c["base"], factor=c["factor"],
                      original_max_position_embeddings=c["L0"])
    assert att == 1.0
    wavelength = 2 * np.pi / theta
    short, long = wavelength < c["L0"] / c["high"], wavelength > c["L0"] / c["low"]
    # hand count: wavelength 2 pi 500000**(i/64) < 2048 <=> i <= 28; > 8192 <=> i >= 35
    assert short.sum() == 29 and long.sum() == 29
    np.testing.assert_array_equal(np.flatnonzero(~short & ~long), np.arange(29, 35))
    np.testing.assert_array_equal(inv[short], theta[short])
    np.testing.assert_allclose(inv[long], theta[long] / 8, rtol=1e-15)
    ratio = inv[~short & ~long] / theta[~short & ~long]
    assert np.all((ratio > 1 / 8) & (ratio < 1)) and np.all(np.diff(ratio) < 0)


@given(head_dims, bases, factors, lengths, st.floats(0.25, 4.0), st.floats(1.1, 16.0))
def test_llama3_bands(d, base, s, L0, low, ratio):
    high = low * ratio
    theta = rope_frequencies(d, base)
    inv, _ = scaled("llama3", d, base=base, factor=s, original_max_position_embeddings=L0,
                    low_freq_factor=low, high_freq_factor=high)
    wavelength = 2 * np.pi / theta
    short, long = wavelength < L0 / high, wavelength > L0 / low
    np.testing.assert_array_equal(inv[short], theta[short])
    np.testing.assert_allclose(inv[long], theta[long] / s, rtol=1e-14)
    r = inv / theta
    assert np.all(r <= 1 + 1e-12) and np.all(r >= 1 / s - 1e-12)
    assert np.all(np.diff(r) <= 1e-12)  # the blend moves monotonically from 1 to 1/s


def test_yarn_attention_factor_and_ramp_bounds_for_llama2_settings():
    # head_dim 128, base 10000, L0 4096: the pair turning 32 times sits at 20.94, once at 45.03
    assert yarn_correction_range(128, 10000.0, 4096) == (20, 46)
    lo, hi = yarn_correction_range(128, 10000.0, 4096, truncate=False)
    assert lo == pytest.approx(128 * math.log(4096 / (64 * math.pi)) / (2 * math.log(1e4)))
    assert (round(lo, 2), round(hi, 2)) == (20.94, 45.03)
    theta = rope_frequencies(128, 10000.0)
    for s in (16, 32):
        inv, att = scaled("yarn", 128, factor=s, original_max_position_embeddings=4096)
        assert att == pytest.approx(0.1 * math.log(s) + 1)
        np.testing.assert_array_equal(inv[:21], theta[:21])
        np.testing.assert_allclose(inv[46:], theta[46:] / s, rtol=1e-15)
        gamma = (1 - inv / theta) / (1 - 1 / s)  # the ramp, recovered
        np.testing.assert_allclose(gamma[20:47], np.arange(27) / 26, atol=1e-12)
    assert yarn_attention_factor(16) == pytest.approx(1.2772588722239782)
    assert yarn_attention_factor(1.0) == 1.0


@given(head_dims, bases, factors, lengths, st.booleans())
def test_yarn_keeps_fast_pairs_and_divides_slow_ones(d, base, s, L0, truncate):
    """Independent of the ramp's details: a pair turning >= 32 times within L0 is
    unchanged, one turning <= once is divided by s, and the blend is monotone."""
    low, high = yarn_correction_range(d, base, L0, truncate=truncate)
    assume(low <= high)  # see test_yarn_every_pair_fast_quirk for the other case
    theta = rope_frequencies(d, base)
    inv, att = scaled("yarn", d, base=base, factor=s, original_max_position_embeddings=L0,
                      truncate=truncate)
    turns = L0 * theta / (2 * np.pi)
    fast, slow = turns >= 32 * (1 + 1e-9), turns <= 1 - 1e-9
    np.testing.assert_array_equal(inv[fast], theta[fast])
    np.testing.assert_allclose(inv[slow], theta[slow] / s, rtol=1e-14)
    r = inv / theta
    assert np.all(np.diff(r) <= 1e-12) and np.all(r >= 1 / s - 1e-12)
    assert att == pytest.approx(0.1 * math.log(s) + 1)


def test_yarn_options():
    base_kw = dict(factor=40.0, original_max_position_embeddings=4096)
    assert scaled("yarn", **base_kw, attention_factor=1.5)[1] == 1.5
    # DeepSeek style: mscale == mscale_all_dim gives 1; Hugging Face ignores a lone mscale
    assert scaled("yarn", **base_kw, mscale=1.0, mscale_all_dim=1.0)[1] == 1.0
    assert scaled("yarn", **base_kw, mscale=0.707)[1] == pytest.approx(0.1 * math.log(40) + 1)
    ratio = (0.1 * 2 * math.log(40) + 1) / (0.1 * math.log(40) + 1)
    assert scaled("yarn", **base_kw, mscale=2.0, mscale_all_dim=1.0)[1] == pytest.approx(ratio)
    # None means "default", as Hugging Face's `.get("beta_fast") or 32`
    np.testing.assert_array_equal(scaled("yarn", **base_kw, beta_fast=None)[0],
                                  scaled("yarn", **base_kw)[0])


def test_yarn_mscale_and_deepseek_softmax_scale():
    # YaRN's yarn_get_mscale: 0.1 * m * ln(s) + 1, and 1 at or below s = 1
    assert yarn_mscale(40.0) == pytest.approx(0.1 * math.log(40) + 1)
    assert yarn_mscale(40.0, 0.707) == pytest.approx(0.0707 * math.log(40) + 1)
    assert yarn_mscale(1.0, 5.0) == yarn_mscale(0.5) == 1.0
    # DeepSeek-V3 (factor 40, mscale = mscale_all_dim = 1): cos/sin unscaled, but the
    # softmax scale is multiplied by mscale(40, 1)^2 = (0.1 ln 40 + 1)^2 ~ 1.874
    assert yarn_attention_factor(40, mscale=1.0, mscale_all_dim=1.0) == 1.0
    assert yarn_mscale(40.0, 1.0) ** 2 == pytest.approx(1.8738, abs=1e-4)
    with pytest.raises(ValueError, match="mscale"):
        yarn_mscale(4.0, 0.0)
    with pytest.raises(TypeError, match="factor"):
        yarn_mscale("4")


def test_yarn_zero_width_ramp_guard():
    # both correction dims below 0 -> low = 0; high = ceil(-0.x) = 0 -> high := 0.001
    # (L0 = 6 < 2 pi: pair 0 turns less than once within L0)
    lo, hi = yarn_correction_range(8, 10000.0, 6)
    assert (lo, hi) == (0, 0)
    inv, _ = scaled("yarn", 8, factor=4, original_max_position_embeddings=6)
    theta = rope_frequencies(8, 10000.0)
    np.testing.assert_allclose(inv, np.r_[theta[:1], theta[1:] / 4], rtol=1e-15)


def test_yarn_every_pair_fast_quirk():
    # Every pair turns > 32 times within L0 (tiny head_dim, base 2): the beta_fast dim (4.2)
    # lies beyond the clamp head_dim - 1 = 3, so low > high, the ramp saturates at 1 and
    # Hugging Face divides every pair by s. We follow it.
    assert yarn_correction_range(4, 2.0, 2 * math.pi * 32 * 2 ** 2.1) == (4, 3)
    inv, _ = scaled("yarn", 4, base=2.0, factor=2, original_max_position_embeddings=1000)
    np.testing.assert_allclose(inv, rope_frequencies(4, 2.0) / 2, rtol=1e-15)
    ref, _ = hf_yarn(4, 2.0, 2, 1000)
    np.testing.assert_allclose(inv, ref.numpy(), rtol=1e-15)


@given(st.sampled_from(SCALING_METHODS), head_dims, bases, factors, lengths,
       st.floats(0.1, 100.0))
def test_frequencies_positive_and_non_increasing(method, d, base, s, L0, seq_ratio):
    inv, att = scaled(method, d, base=base, factor=s, original_max_position_embeddings=L0,
                      seq_len=seq_ratio * L0)
    assert inv.shape == (d // 2,) and inv.dtype == np.float64
    assert np.all(np.isfinite(inv)) and np.all(inv > 0)
    assert np.all(np.diff(inv) <= 0)
    assert att >= 1.0


@given(st.sampled_from(SCALING_METHODS), head_dims, bases, lengths)
def test_factor_one_is_default(method, d, base, L0):
    inv, att = scaled(method, d, base=base, factor=1.0, original_max_position_embeddings=L0)
    np.testing.assert_allclose(inv, rope_frequencies(d, base), rtol=1e-12)
    assert att == 1.0


def test_dynamic_with_factor_one_still_changes_above_the_training_length():
    inv, _ = scaled("dynamic", 64, factor=1.0, original_max_position_embeddings=1000,
                    seq_len=3000)
    np.testing.assert_allclose(inv, scaled("ntk", 64, factor=3.0)[0], rtol=1e-12)
    assert inv[-1] < rope_frequencies(64)[-1]


# --- plugging the output into RoPE --------------------------------------------------------

def test_linear_equals_interpolated_positions(rng):
    x = rng.standard_normal((2, 40, 32))
    inv, _ = scaled("linear", 32, factor=4)
    np.testing.assert_allclose(apply_rope(x, frequencies=inv),
                               apply_rope(x, positions=np.arange(40) / 4), atol=1e-12)


@pytest.mark.parametrize("method", SCALING_METHODS)
def test_output_plugs_into_apply_rope_and_rotary_embedding(method, rng):
    inv, _ = scaled(method, 64, factor=8, original_max_position_embeddings=256, seq_len=1024)
    x = torch.from_numpy(rng.standard_normal((2, 3, 50, 64)))
    module = RotaryEmbedding(64, frequencies=inv, layout="half")
    positions = torch.arange(1000, 1050)
    out = module(x, positions)
    torch.testing.assert_close(out, rope_kernel.apply_rope(x, positions, layout="half",
                                                           frequencies=inv))
    # still a rotation: norms kept, scores depend on relative position only
    torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1))
    q, k = module(x[..., :1, :], torch.tensor([1200])), module(x[..., 1:2, :], torch.tensor([7]))
    q2, k2 = module(x[..., :1, :], torch.tensor([1193])), module(x[..., 1:2, :], torch.tensor([0]))
    torch.testing.assert_close((q * k).sum(-1), (q2 * k2).sum(-1))


def test_attention_factor_scales_logits_by_its_square(rng):
    """Hugging Face multiplies cos and sin by attention_factor (rotate_half layout)."""
    inv, att = scaled("yarn", 32, factor=16, original_max_position_embeddings=64)
    x = torch.from_numpy(rng.standard_normal((10, 32)))
    angles = torch.outer(torch.arange(10, dtype=torch.float64), torch.from_numpy(inv))
    emb = torch.cat([angles, angles], -1)
    cos, sin = emb.cos() * att, emb.sin() * att
    rotated = torch.cat([-x[..., 16:], x[..., :16]], -1)
    hf = x * cos + rotated * sin
    ours = rope_kernel.apply_rope(x, layout="half", frequencies=inv) * att
    torch.testing.assert_close(hf, ours)
    plain = rope_kernel.apply_rope(x, layout="half", frequencies=inv)
    torch.testing.assert_close(hf @ hf.T, att**2 * (plain @ plain.T))


# --- bad input ----------------------------------------------------------------------------

def test_bad_input():
    with pytest.raises(ValueError, match="method"):
        scaled("rope-magic")
    with pytest.raises(ValueError, match="factor"):
        scaled("linear", factor=0.5)
    with pytest.raises(TypeError, match="factor"):
        scaled("linear", factor="2")
    with pytest.raises(ValueError, match="even"):
        scaled("linear", 63)
    with pytest.raises(ValueError, match="base"):
        scaled("ntk", base=1.0)
    with pytest.raises(ValueError, match="base"):
        scaled("ntk", base=-5.0)
    for method in ("dynamic", "yarn", "llama3"):
        with pytest.raises(ValueError, match="original_max_position_embeddings"):
            scaled(method, factor=2)
    scaled("linear", factor=2)  # linear and ntk do not need L0
    scaled("ntk", factor=2)
    with pytest.raises(ValueError, match="original_max_position_embeddings"):
        scaled("yarn", factor=2, original_max_position_embeddings=0)
    with pytest.raises(ValueError, match="seq_len"):
        scaled("dynamic", factor=2, original_max_position_embeddings=10, seq_len=-1)
    with pytest.raises(TypeError, match="beta_fast"):
        scaled("llama3", factor=2, original_max_position_embeddings=10, beta_fast=3)
    with pytest.raises(TypeError, match="low_freq_factr"):
        scaled("llama3", factor=2, original_max_position_embeddings=10, low_freq_factr=3)
    with pytest.raises(TypeError, match="truncate"):
        scaled("linear", factor=2, truncate=False)
    with pytest.raises(ValueError, match="high_freq_factor"):
        scaled("llama3", factor=2, original_max_position_embeddings=10, low_freq_factor=4,
               high_freq_factor=4)
    with pytest.raises(ValueError, match="beta_fast must be >= beta_slow"):
        scaled("yarn", factor=2, original_max_position_embeddings=10, beta_fast=1, beta_slow=2)
    with pytest.raises(TypeError, match="truncate"):
        scaled("yarn", factor=2, original_max_position_embeddings=10, truncate="yes")
    with pytest.raises(ValueError, match="attention_factor"):
        scaled("yarn", factor=2, original_max_position_embeddings=10, attention_factor=-1.0)
    with pytest.raises(ValueError, match="head_dim >= 4"):
        scaled("ntk", 2, factor=2)


@given(st.sampled_from(["dynamic", "yarn", "llama3"]), head_dims, factors)
def test_l0_required_whatever_the_settings(method, d, s):
    assume(d >= 4)
    with pytest.raises(ValueError, match="needs original_max_position_embeddings"):
        scaled(method, d, factor=s)


# --- the chapter's figure helpers ---------------------------------------------------------

def test_scaled_frequency_table():
    from posenc.course.figures.scaling import scaled_frequency_table

    table = scaled_frequency_table(8, 1e4, 64, 1024)
    assert list(table) == list(SCALING_METHODS)
    np.testing.assert_allclose(table["dynamic"], scaled("ntk", 64, factor=8 * 8 - 7)[0],
                               rtol=1e-12)  # dynamic at seq_len = s * L0 by default
    at_l0 = scaled_frequency_table(8, 1e4, 64, 1024, seq_len=1024)["dynamic"]
    np.testing.assert_array_equal(at_l0, rope_frequencies(64))


def test_draw_functions_show_every_method_and_count_unseen_pairs():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from posenc.course.figures import scaling as figs

    fig = plt.figure()
    figs.draw_turns_at_position(fig, position=8 * 4096, factor=8)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    # at m = s * L0: PI, YaRN, llama3 keep every slow pair in range; NTK leaves 17 of 18 out
    assert {"default: 18 unseen", "linear: 0 unseen", "ntk: 17 unseen", "dynamic: 0 unseen",
            "yarn: 0 unseen", "llama3: 0 unseen"} <= set(labels)
    assert "m=32768" in fig.axes[0].get_title()
    plt.close(fig)
    for draw in (figs.draw_turns_within_context, figs.draw_short_range_scores):
        fig = plt.figure()
        draw(fig)
        assert len(fig.axes[0].get_lines()) >= 2
        plt.close(fig)
