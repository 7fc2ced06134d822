"""RoPE as today's models ship it: partial RoPE, p-RoPE, LongRoPE, xPos, M-RoPE, axial 2-D RoPE.

Each function is checked against a transcription (in torch) of the implementation people
use -- Hugging Face transformers (``modeling_rope_utils.py``, GPT-NeoX/Phi partial rotary,
Qwen2-VL's ``apply_multimodal_rotary_pos_emb`` and ``get_rope_index``), torchscale /
rotary-embedding-torch (xPos), RoPE-ViT (``compute_axial_cis``) -- and against identities.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc import rope, rope_variants
from posenc.nn import rope_kernel
from posenc.rope import rope_frequencies
from posenc.rope_variants import axial_rope_angles, mrope_position_ids, xpos_scale, xpos_zeta
from posenc.scaling import ROPE_TYPES, SCALING_METHODS, rope_scaling_frequencies


def _by_input(name, numpy_module):
    """The function ``name`` of the library the first argument belongs to: the numpy one
    (``numpy_module``) for arrays, :mod:`posenc.nn.rope_kernel`'s for tensors, so each
    test below checks both kernels against the same references."""
    def call(x, *args, **kwargs):
        module = rope_kernel if isinstance(x, torch.Tensor) else numpy_module
        return getattr(module, name)(x, *args, **kwargs)
    return call


apply_rope = _by_input("apply_rope", rope)
apply_partial_rope = _by_input("apply_partial_rope", rope_variants)
apply_xpos = _by_input("apply_xpos", rope_variants)
apply_mrope = _by_input("apply_mrope", rope_variants)
apply_axial_rope = _by_input("apply_axial_rope", rope_variants)

# --- references, transcribed -------------------------------------------------------------


def hf_rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def hf_inv_freq(dim, base):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).double() / dim))


def hf_partial_rotary(x, base, rotary_dim):
    """GPT-NeoX / Phi / HF ``partial_rotary_factor``: rotate x[..., :rotary_dim] (rotate_half
    inside it), pass the rest through."""
    inv_freq = hf_inv_freq(rotary_dim, base)
    t = torch.arange(x.shape[-2], dtype=torch.float64)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
    return torch.cat((x_rot * cos + hf_rotate_half(x_rot) * sin, x_pass), dim=-1)


def hf_proportional(head_dim, base, partial_rotary_factor, factor=1.0):
    """HF ``_compute_proportional_rope_parameters``."""
    rope_angles = int(partial_rotary_factor * head_dim // 2)
    inv_freq_rotated = 1.0 / (base ** (torch.arange(0, 2 * rope_angles, 2,
                                                    dtype=torch.int64).double() / head_dim))
    nope_angles = head_dim // 2 - rope_angles
    if nope_angles > 0:
        inv_freq = torch.cat((inv_freq_rotated, torch.zeros(nope_angles, dtype=torch.float64)))
    else:
        inv_freq = inv_freq_rotated
    return inv_freq / factor


def hf_longrope(head_dim, base, short_factor, long_factor, factor, original_max,
                seq_len=None, attention_factor=None):
    """HF ``_compute_longrope_parameters`` (``factor`` as HF derives it:
    max_position_embeddings / original_max_position_embeddings)."""
    if attention_factor is None:
        if factor <= 1.0:
            attention_factor = 1.0
        else:
            attention_factor = math.sqrt(1 + math.log(factor) / math.log(original_max))
    if seq_len and seq_len > original_max:
        ext_factors = torch.tensor(long_factor, dtype=torch.float64)
    else:
        ext_factors = torch.tensor(short_factor, dtype=torch.float64)
    inv_freq_shape = torch.arange(0, head_dim, 2, dtype=torch.int64).double() / head_dim
    return 1.0 / (ext_factors * base**inv_freq_shape), attention_factor


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def ref_xpos(q, k, base, scale_base, centre):
    """torchscale's XPOS / rotary-embedding-torch's xpos: interleaved RoPE, times
    scale = ((2i + 0.4 d) / (1.4 d)) ** ((t - centre) / scale_base) on q, its inverse on k."""
    d, n = q.shape[-1], q.shape[-2]
    zeta = (torch.arange(0, d, 2, dtype=torch.float64) + 0.4 * d) / (1.4 * d)
    t = torch.arange(n, dtype=torch.float64)
    scale = zeta ** ((t - centre) / scale_base)[:, None]
    scale = scale.repeat_interleave(2, dim=-1)  # 'n d -> n (d r)', r=2
    freqs = torch.outer(t, hf_inv_freq(d, base)).repeat_interleave(2, dim=-1)
    cos, sin = freqs.cos(), freqs.sin()
    q_out = (q * cos + rotate_every_two(q) * sin) * scale
    k_out = (k * cos + rotate_every_two(k) * sin) / scale
    return q_out, k_out


def hf_mrope(q, position_ids, mrope_section, base):
    """Qwen2-VL: rotary embedding of [3, bs, seq] ids + ``apply_multimodal_rotary_pos_emb``."""
    inv_freq = hf_inv_freq(q.shape[-1], base)
    freqs = position_ids[..., None].double() * inv_freq  # [3, bs, seq, d/2]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    section = list(mrope_section) * 2
    cos = torch.cat([m[i % 3] for i, m in enumerate(cos.split(section, dim=-1))], dim=-1)
    sin = torch.cat([m[i % 3] for i, m in enumerate(sin.split(section, dim=-1))], dim=-1)
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)  # [bs, 1, seq, d]
    return q * cos + hf_rotate_half(q) * sin


IMAGE, VIDEO, START, TEXT = 151655, 151656, 151652, 7


def hf_get_rope_index(input_ids, image_grid_thw, video_grid_thw, spatial_merge_size=2):
    """Qwen2-VL ``get_rope_index`` for one sequence (no attention mask)."""
    input_tokens = input_ids.tolist()
    starts = torch.argwhere(input_ids == START).squeeze(1)
    vision_tokens = input_ids[starts + 1]
    image_nums = int((vision_tokens == IMAGE).sum())
    video_nums = int((vision_tokens == VIDEO).sum())
    llm_pos_ids_list, st = [], 0
    image_index = video_index = 0
    remain_images, remain_videos = image_nums, video_nums
    for _ in range(image_nums + video_nums):
        ed_image = (input_tokens.index(IMAGE, st) if IMAGE in input_tokens and remain_images > 0
                    else len(input_tokens) + 1)
        ed_video = (input_tokens.index(VIDEO, st) if VIDEO in input_tokens and remain_videos > 0
                    else len(input_tokens) + 1)
        if ed_image < ed_video:
            t, h, w = image_grid_thw[image_index]
            image_index += 1
            remain_images -= 1
            ed = ed_image
        else:
            t, h, w = video_grid_thw[video_index]
            video_index += 1
            remain_videos -= 1
            ed = ed_video
        gt, gh, gw = int(t), int(h) // spatial_merge_size, int(w) // spatial_merge_size
        text_len = ed - st
        st_idx = llm_pos_ids_list[-1].max() + 1 if llm_pos_ids_list else 0
        llm_pos_ids_list.append(torch.arange(text_len).view(1, -1).expand(3, -1) + st_idx)
        t_index = torch.arange(gt).view(-1, 1).expand(-1, gh * gw).flatten()
        h_index = torch.arange(gh).view(1, -1, 1).expand(gt, -1, gw).flatten()
        w_index = torch.arange(gw).view(1, 1, -1).expand(gt, gh, -1).flatten()
        llm_pos_ids_list.append(torch.stack([t_index, h_index, w_index]) + text_len + st_idx)
        st = ed + gt * gh * gw
    if st < len(input_tokens):
        st_idx = llm_pos_ids_list[-1].max() + 1 if llm_pos_ids_list else 0
        text_len = len(input_tokens) - st
        llm_pos_ids_list.append(torch.arange(text_len).view(1, -1).expand(3, -1) + st_idx)
    return torch.cat(llm_pos_ids_list, dim=1).reshape(3, -1)


def rope_vit_axial(x, end_x, end_y, theta):
    """RoPE-ViT ``compute_axial_cis`` + ``apply_rotary_emb`` (complex, interleaved pairs)."""
    dim = x.shape[-1]
    freqs_x = 1.0 / (theta ** (torch.arange(0, dim, 4)[: dim // 4].double() / dim))
    freqs_y = 1.0 / (theta ** (torch.arange(0, dim, 4)[: dim // 4].double() / dim))
    t = torch.arange(end_x * end_y, dtype=torch.float64)
    t_x, t_y = t % end_x, torch.div(t, end_x, rounding_mode="floor")
    ones = torch.ones(len(t), dim // 4, dtype=torch.float64)
    cis_x = torch.polar(ones, torch.outer(t_x, freqs_x))
    cis_y = torch.polar(ones, torch.outer(t_y, freqs_y))
    freqs_cis = torch.cat([cis_x, cis_y], dim=-1)
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(xc * freqs_cis).flatten(-2)


@pytest.fixture
def qk(rng):
    return (torch.from_numpy(rng.standard_normal((2, 3, 12, 16))),
            torch.from_numpy(rng.standard_normal((2, 3, 12, 16))))


# --- partial RoPE --------------------------------------------------------------------------

@pytest.mark.parametrize("rotary_dim", [2, 8, 24, 32])
def test_partial_rope_matches_hf_partial_rotary(rotary_dim, rng):
    x = torch.from_numpy(rng.standard_normal((2, 3, 20, 32)))
    out = apply_partial_rope(x, rotary_dim, layout="half", base=500.0)
    torch.testing.assert_close(out, hf_partial_rotary(x, 500.0, rotary_dim))
    out_np = apply_partial_rope(x.numpy(), rotary_dim, layout="half", base=500.0)
    np.testing.assert_allclose(out_np, out.numpy(), atol=1e-12)


def test_partial_rope_passes_the_rest_and_full_is_rope(rng):
    x = rng.standard_normal((40, 64))
    out = apply_partial_rope(x, 16)
    np.testing.assert_array_equal(out[:, 16:], x[:, 16:])
    np.testing.assert_allclose(out[:, :16], apply_rope(x[:, :16]), atol=1e-15)
    for layout in ("interleaved", "half"):
        np.testing.assert_array_equal(apply_partial_rope(x, 64, layout=layout),
                                      apply_rope(x, layout=layout))


def test_partial_rope_frequencies_and_errors(rng):
    x = rng.standard_normal((5, 32))
    inv = rope_frequencies(8) / 3
    np.testing.assert_allclose(apply_partial_rope(x, 8, frequencies=inv)[:, :8],
                               apply_rope(x[:, :8], positions=np.arange(5) / 3), atol=1e-12)
    with pytest.raises(ValueError, match="rotary_dim"):
        apply_partial_rope(x, 34)
    with pytest.raises(ValueError, match="rotary_dim must be even"):
        apply_partial_rope(x, 7)
    with pytest.raises(TypeError, match="rotary_dim"):
        apply_partial_rope(x, 8.0)
    with pytest.raises(ValueError, match="frequencies"):
        apply_partial_rope(x, 8, frequencies=rope_frequencies(32))


# --- p-RoPE (proportional) and LongRoPE ----------------------------------------------------

@pytest.mark.parametrize("p", [0.25, 0.5, 0.3, 1.0, 0.01])
@pytest.mark.parametrize("head_dim", [8, 64, 256])
def test_proportional_matches_hf(p, head_dim):
    for factor in (1.0, 8.0):
        inv, att = rope_scaling_frequencies("proportional", head_dim, base=1e6, factor=factor,
                                            partial_rotary_factor=p)
        np.testing.assert_allclose(inv, hf_proportional(head_dim, 1e6, p, factor).numpy(),
                                   rtol=1e-14)
        assert att == 1.0


def test_proportional_keeps_fast_pairs_over_the_whole_head(rng):
    inv, _ = rope_scaling_frequencies("proportional", 512, base=1e6, partial_rotary_factor=0.25)
    assert np.count_nonzero(inv) == 64  # Gemma's global layers: 64 of 256 pairs rotate
    np.testing.assert_array_equal(inv[:64], rope_frequencies(512, 1e6)[:64])  # not base^(-2i/128)
    assert np.all(inv[64:] == 0)
    # zero frequencies plug into RoPE: those pairs carry no position
    x = rng.standard_normal((30, 512))
    out = apply_rope(x, layout="half", frequencies=inv)
    half = 256
    np.testing.assert_array_equal(out[:, 64:half], x[:, 64:half])
    np.testing.assert_array_equal(out[:, half + 64:], x[:, half + 64:])
    with pytest.raises(ValueError, match="partial_rotary_factor"):
        rope_scaling_frequencies("proportional", 64, partial_rotary_factor=1.5)
    with pytest.raises(ValueError, match="partial_rotary_factor"):
        rope_scaling_frequencies("proportional", 64, partial_rotary_factor=0.0)


def _phi3_like_factors(n, rng):
    short = 1.0 + np.sort(rng.uniform(0, 0.3, n))
    long = 1.0 + np.sort(rng.uniform(0, 40, n))
    return short.tolist(), long.tolist()


@pytest.mark.parametrize("seq_len", [None, 1000, 4096, 4097, 131072])
def test_longrope_matches_hf(seq_len, rng):
    short, long = _phi3_like_factors(48, rng)
    factor = 131072 / 4096  # Phi-3-mini-128k: 32
    inv, att = rope_scaling_frequencies("longrope", 96, base=1e4, factor=factor,
                                        original_max_position_embeddings=4096, seq_len=seq_len,
                                        short_factor=short, long_factor=long)
    ref, ref_att = hf_longrope(96, 1e4, short, long, factor, 4096, seq_len)
    np.testing.assert_allclose(inv, ref.numpy(), rtol=1e-14)
    assert att == pytest.approx(ref_att, rel=1e-15)
    assert att == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))
    expected = long if seq_len is not None and seq_len > 4096 else short
    np.testing.assert_allclose(inv, rope_frequencies(96) / np.array(expected), rtol=1e-14)


def test_longrope_attention_factor_option_and_errors(rng):
    short, long = _phi3_like_factors(8, rng)
    kw = dict(original_max_position_embeddings=4096, short_factor=short, long_factor=long)
    assert rope_scaling_frequencies("longrope", 16, factor=1.0, **kw)[1] == 1.0
    assert rope_scaling_frequencies("longrope", 16, factor=4.0, attention_factor=1.3,
                                    **kw)[1] == 1.3
    with pytest.raises(ValueError, match="long_factor"):
        rope_scaling_frequencies("longrope", 16, factor=4.0, original_max_position_embeddings=64,
                                 short_factor=short)
    with pytest.raises(ValueError, match="short_factor must hold head_dim // 2 = 8"):
        rope_scaling_frequencies("longrope", 16, factor=4.0, original_max_position_embeddings=64,
                                 short_factor=short[:3], long_factor=long)
    for bad in ([0.0] * 8, [1.0] * 7 + [-0.5], [1.0] * 7 + [float("nan")]):
        with pytest.raises(ValueError, match="long_factor must hold finite numbers > 0"):
            rope_scaling_frequencies("longrope", 16, factor=4.0,
                                     original_max_position_embeddings=64,
                                     short_factor=short, long_factor=bad)
    # 1, and below 1 as MiniCPM4 ships (0.9978), are allowed: lambda_i divides the frequency
    for short_factor in ([1.0] * 8, [0.9978] * 8):
        freqs, _ = rope_scaling_frequencies("longrope", 16, factor=4.0,
                                            original_max_position_embeddings=64,
                                            short_factor=short_factor, long_factor=long)
        np.testing.assert_allclose(freqs, rope_frequencies(16) / np.asarray(short_factor),
                                   rtol=1e-12)
    with pytest.raises(ValueError, match="needs original_max_position_embeddings"):
        rope_scaling_frequencies("longrope", 16, factor=4.0, short_factor=short, long_factor=long)
    with pytest.raises(TypeError, match="unknown option"):
        rope_scaling_frequencies("longrope", 16, factor=4.0, original_max_position_embeddings=64,
                                 short_factor=short, long_factor=long, beta_fast=3)


def test_new_rope_types_are_listed_apart():
    assert ROPE_TYPES[: len(SCALING_METHODS)] == SCALING_METHODS
    assert set(ROPE_TYPES) - set(SCALING_METHODS) == {"longrope", "proportional"}
    with pytest.raises(ValueError, match="longrope"):
        rope_scaling_frequencies("long_rope", 16)


# --- xPos ----------------------------------------------------------------------------------

@pytest.mark.parametrize("seq", [12, 13])
def test_xpos_matches_reference(seq, rng):
    q = torch.from_numpy(rng.standard_normal((2, 3, seq, 16)))
    k = torch.from_numpy(rng.standard_normal((2, 3, seq, 16)))
    q2, k2 = apply_xpos(q, k, scale_base=64.0, base=1000.0)
    rq, rk = ref_xpos(q, k, 1000.0, 64.0, centre=seq // 2)  # rotary-embedding-torch
    torch.testing.assert_close(q2, rq)
    torch.testing.assert_close(k2, rk)
    # torchscale centres at ceil(L/2): different q and k for odd L, the same scores
    tq, tk = ref_xpos(q, k, 1000.0, 64.0, centre=-(-seq // 2))
    torch.testing.assert_close(q2 @ k2.transpose(-1, -2), tq @ tk.transpose(-1, -2))


def test_xpos_zeta_and_scores(rng):
    np.testing.assert_allclose(xpos_zeta(8), [0.4 / 1.4, 0.65 / 1.4, 0.9 / 1.4, 1.15 / 1.4])
    q, k = rng.standard_normal((1, 16)), rng.standard_normal((1, 16))
    # the score of a query at m and key at n: sum_i zeta_i^((m-n)/b) * (rotated pair product)
    m, n, b = 9, 3, 32.0
    pos = np.arange(12)
    qs, ks = apply_xpos(np.repeat(q, 12, 0), np.repeat(k, 12, 0), scale_base=b)
    qr, kr = apply_rope(np.repeat(q, 12, 0)), apply_rope(np.repeat(k, 12, 0))
    pair = (qr[m] * kr[n]).reshape(-1, 2).sum(-1)
    np.testing.assert_allclose(qs[m] @ ks[n], pair @ xpos_zeta(16) ** ((m - n) / b), rtol=1e-12)
    assert xpos_scale(pos, 16).shape == (12, 8)


def test_xpos_with_infinite_scale_base_is_rope(qk):
    q, k = qk
    for scale_base in (math.inf, 1e300):
        q2, k2 = apply_xpos(q, k, scale_base=scale_base)
        torch.testing.assert_close(q2, apply_rope(q))
        torch.testing.assert_close(k2, apply_rope(k))


def test_xpos_errors(qk):
    q, k = qk
    with pytest.raises(ValueError, match="scale_base"):
        apply_xpos(q, k, scale_base=0.0)
    with pytest.raises(TypeError, match="scale_base"):
        apply_xpos(q, k, scale_base="512")
    with pytest.raises(ValueError, match="same \\[seq, head_dim\\]"):
        apply_xpos(q, k[..., :5, :])
    with pytest.raises(ValueError, match="positions"):
        apply_xpos(q, k, positions=np.arange(5))


# --- M-RoPE --------------------------------------------------------------------------------

def test_mrope_matches_qwen2_vl(rng):
    ids = torch.from_numpy(rng.integers(0, 50, (3, 2, 20)))
    q = torch.from_numpy(rng.standard_normal((2, 4, 20, 32)))
    sections = (4, 6, 6)
    ref = hf_mrope(q, ids, sections, 10000.0)
    out = torch.stack([apply_mrope(q[b], ids[:, b], sections=sections) for b in range(2)])
    torch.testing.assert_close(out, ref)
    # [3, batch, 1, seq] broadcasts over heads
    torch.testing.assert_close(apply_mrope(q, ids[:, :, None, :], sections=sections), ref)


def test_mrope_of_a_text_token_is_rope(rng):
    x = rng.standard_normal((3, 25, 128))
    text = np.broadcast_to(np.arange(100, 125), (3, 25))
    np.testing.assert_allclose(apply_mrope(x, text, sections=(16, 24, 24)),
                               apply_rope(x, np.arange(100, 125), layout="half"), atol=1e-12)


def test_mrope_position_ids_match_get_rope_index(rng):
    # text (with the vision-start token), an image 4x6 patches (2x3 after merging), text,
    # a video of 3 frames 4x4 (3x2x2), text
    def seq(n):
        return [TEXT] * (n - 1) + [START]

    tokens = seq(5) + [IMAGE] * 6 + seq(4) + [VIDEO] * 12 + [TEXT] * 3
    ref = hf_get_rope_index(torch.tensor(tokens), torch.tensor([[1, 4, 6]]),
                            torch.tensor([[3, 4, 4]]))
    ours = mrope_position_ids([5, (1, 2, 3), 4, (3, 2, 2), 3])
    np.testing.assert_array_equal(ours, ref.numpy())
    assert ours.dtype == np.int64 and ours.shape == (3, len(tokens))
    np.testing.assert_array_equal(mrope_position_ids([7]), np.tile(np.arange(7), (3, 1)))


def test_mrope_errors(rng):
    x = rng.standard_normal((10, 16))
    ids = np.zeros((3, 10), dtype=np.int64)
    with pytest.raises(ValueError, match="sections must add up to head_dim // 2 = 8"):
        apply_mrope(x, ids, sections=(2, 2, 2))
    with pytest.raises(TypeError, match="sections"):
        apply_mrope(x, ids, sections=(4, 4))
    with pytest.raises(TypeError, match="integer"):
        apply_mrope(x, ids.astype(float), sections=(2, 3, 3))
    with pytest.raises(ValueError, match=r"shape \[3, seq\]"):
        apply_mrope(x, ids[:2], sections=(2, 3, 3))
    with pytest.raises(ValueError, match="positions must have shape"):
        apply_mrope(x, ids[:, :4], sections=(2, 3, 3))
    with pytest.raises(ValueError, match=r"\(t, h, w\)"):
        mrope_position_ids([3, (1, 2)])
    with pytest.raises(ValueError, match="segments"):
        mrope_position_ids([3, (1, 0, 2)])


# --- axial 2-D RoPE ------------------------------------------------------------------------

def test_axial_matches_rope_vit(rng):
    end_x, end_y = 5, 3  # 5 columns, 3 rows
    x = torch.from_numpy(rng.standard_normal((2, 4, end_x * end_y, 32)))
    t = np.arange(end_x * end_y)
    out = apply_axial_rope(x, rows=t // end_x, cols=t % end_x)
    torch.testing.assert_close(out, rope_vit_axial(x, end_x, end_y, 100.0))


@given(st.integers(0, 30), st.integers(0, 30), st.integers(-10, 10), st.integers(-10, 10))
def test_axial_score_depends_on_offsets_only(r, c, dr, dc):
    gen = np.random.default_rng(1)
    q, k = gen.standard_normal((1, 16)), gen.standard_normal((1, 16))

    def score(rq, cq, rk, ck):
        return (apply_axial_rope(q, [rq], [cq]) @ apply_axial_rope(k, [rk], [ck]).T).item()

    assert score(r + dr, c + dc, r, c) == pytest.approx(score(dr, dc, 0, 0), abs=1e-9)


def test_axial_pairs_and_errors(rng):
    ang = axial_rope_angles(np.array([2]), np.array([5]), 16)
    f = 100.0 ** (-np.arange(0, 16, 4) / 16)
    np.testing.assert_allclose(ang[0], np.concatenate([5 * f, 2 * f]))
    x = rng.standard_normal((6, 16))
    with pytest.raises(ValueError, match="multiple of 4"):
        apply_axial_rope(rng.standard_normal((6, 6)), np.arange(6), np.arange(6))
    with pytest.raises(ValueError, match="rows and cols"):
        apply_axial_rope(x, np.arange(6), np.arange(5))
    with pytest.raises(ValueError, match="rows and cols must have shape"):
        apply_axial_rope(x, np.arange(4), np.arange(4))
    with pytest.raises(ValueError, match="base"):
        apply_axial_rope(x, np.arange(6), np.arange(6), base=1.0)
