"""Chapter 11's 2025-26 image and video positions (``posenc.rope_variants``), each against an
independent reference: Hugging Face's Qwen3-VL, SigLIP2 and DINOv3 code (transformers 5.23.0,
a test dependency), PyTorch's ``interpolate``, and transcriptions of diffusers' FLUX and SD3
code (named with their commit where transcribed), plus the identities they should satisfy."""

import math
import types

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.models.dinov3_vit import modeling_dinov3_vit as hf_dinov3
from transformers.models.dinov3_vit.configuration_dinov3_vit import DINOv3ViTConfig
from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLTextConfig
from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding
from transformers.models.siglip2.modeling_siglip2 import Siglip2VisionEmbeddings

from posenc.rope import apply_rope, rope_frequencies
from posenc.rope_variants import (
    CoordinateJitter,
    apply_mrope,
    axis_frequency_assignment,
    axis_of_pair,
    cropped_sincos_table,
    draw_coordinate_jitter,
    jitter_coordinates,
    mrope_angles,
    multi_axis_angles,
    normalized_axial_angles,
    patch_center_coordinates,
    resize_position_table,
    sincos_2d_table,
)

# --- which axis owns each pair ------------------------------------------------------------


def hf_qwen3_vl_owner(sections) -> np.ndarray:
    """Run Hugging Face's Qwen3-VL recomposition on a frequency tensor whose axis ``a`` holds
    the value ``a`` everywhere: what comes out at pair ``i`` is the axis that owns it."""
    num_pairs = sum(sections)
    freq = torch.arange(3, dtype=torch.float64)[:, None, None, None].expand(3, 1, 1, num_pairs)
    fake = types.SimpleNamespace(mrope_section=list(sections))
    out = Qwen3VLTextRotaryEmbedding.recomposition_frequencies(fake, freq.clone())
    return out[0, 0, :num_pairs].numpy().astype(np.int64)


def test_qwen3_vl_default_sections_interleave_from_the_fastest_pair():
    owner = axis_of_pair((24, 20, 20), layout="interleaved")
    np.testing.assert_array_equal(owner, hf_qwen3_vl_owner((24, 20, 20)))
    assert owner[:6].tolist() == [0, 1, 2, 0, 1, 2] and owner[60:].tolist() == [0, 0, 0, 0]
    # every axis meets the fastest and the slowest part of the ladder; chunks do not
    for a in range(3):
        assert np.flatnonzero(owner == a).min() <= 2
        assert np.flatnonzero(owner == a).max() >= 57
    chunked = axis_of_pair((24, 20, 20))
    assert np.flatnonzero(chunked == 2).min() == 44 and np.flatnonzero(chunked == 0).max() == 23


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 24), st.integers(0, 12), st.integers(0, 12))
def test_interleaving_matches_hugging_face_or_is_refused(s0, s1, s2):
    sections = (s0, s1, s2)
    if sum(sections) == 0:
        return
    hf = hf_qwen3_vl_owner(sections)
    if np.bincount(hf, minlength=3).tolist() == list(sections):
        np.testing.assert_array_equal(axis_of_pair(sections, layout="interleaved"), hf)
    else:  # HF's strided slices run past the head and give an axis fewer pairs: refused
        with pytest.raises(ValueError, match="cannot be interleaved"):
            axis_of_pair(sections, layout="interleaved")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=5).filter(lambda s: sum(s) > 0),
       st.sampled_from(["chunked", "per_axis", "interleaved"]))
def test_every_pair_has_exactly_one_axis_and_counts_are_the_sections(sections, layout):
    try:
        owner = axis_of_pair(sections, layout=layout)
    except ValueError:
        assert layout == "interleaved"
        return
    assert owner.shape == (sum(sections),)
    assert np.bincount(owner, minlength=len(sections)).tolist() == list(sections)
    if layout != "interleaved":
        assert np.all(np.diff(owner) >= 0)  # contiguous chunks in axis order


def test_interleaved_mrope_matches_qwen3_vl_rotary_embedding(rng):
    config = Qwen3VLTextConfig(
        hidden_size=64, num_attention_heads=2, head_dim=32,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                         "mrope_section": [6, 5, 5], "mrope_interleaved": True})
    ids = rng.integers(0, 60, (3, 9))
    cos, sin = Qwen3VLTextRotaryEmbedding(config)(torch.zeros(1, 9, 32),
                                                  torch.from_numpy(ids)[:, None, :])
    angles = mrope_angles(ids, 32, sections=(6, 5, 5), layout="interleaved", base=10000.0)
    np.testing.assert_allclose(np.cos(np.concatenate([angles, angles], -1)), cos[0].numpy(),
                               atol=2e-6)
    np.testing.assert_allclose(np.sin(np.concatenate([angles, angles], -1)), sin[0].numpy(),
                               atol=2e-6)


def test_interleaved_mrope_of_a_text_token_is_still_rope(rng):
    x = rng.standard_normal((2, 12, 64))
    text = np.broadcast_to(np.arange(40, 52), (3, 12))
    np.testing.assert_allclose(
        apply_mrope(x, text, sections=(12, 10, 10), layout="interleaved"),
        apply_rope(x, np.arange(40, 52), layout="half"), atol=1e-12)


def test_chunked_multi_axis_angles_are_mrope(rng):
    ids = rng.integers(0, 50, (3, 11))
    np.testing.assert_array_equal(
        multi_axis_angles(ids, 64, sections=(8, 12, 12), base=1e6),
        mrope_angles(ids, 64, sections=(8, 12, 12), base=1e6))


def diffusers_flux_pos_embed(ids: np.ndarray, axes_dim, theta: float) -> np.ndarray:
    """Transcribed from diffusers (main at 58eb52c, 2026-08-23): ``FluxPosEmbed.forward``
    (transformer_flux.py) and ``Flux2PosEmbed.forward`` (transformer_flux2.py) call
    ``get_1d_rotary_pos_embed(axes_dim[i], pos[..., i], theta=theta)`` for each axis and
    concatenate; that function's frequencies are ``1 / theta ** (arange(0, dim, 2) / dim)``
    (embeddings.py). Returns the angles ``[S, sum(axes_dim) // 2]`` before cos/sin."""
    out = []
    for i, dim in enumerate(axes_dim):
        freqs = 1.0 / (theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
        out.append(np.outer(ids[:, i].astype(np.float64), freqs))
    return np.concatenate(out, axis=-1)


@pytest.mark.parametrize(("axes_dim", "theta"), [
    ((16, 56, 56), 10000.0),       # FLUX.1: FluxTransformer2DModel's axes_dims_rope, theta 10000
    ((32, 32, 32, 32), 2000.0),    # FLUX.2: Flux2Transformer2DModel's defaults, rope_theta 2000
])
def test_per_axis_layout_matches_diffusers_flux(rng, axes_dim, theta):
    ids = rng.integers(0, 64, (20, len(axes_dim)))
    sections = tuple(d // 2 for d in axes_dim)
    ours = multi_axis_angles(ids.T, 128, sections=sections, layout="per_axis", base=theta)
    np.testing.assert_allclose(ours, diffusers_flux_pos_embed(ids, axes_dim, theta), rtol=1e-13)
    axis, freq = axis_frequency_assignment(128, sections, layout="per_axis", base=theta)
    starts = np.cumsum((0,) + sections[:-1])
    assert freq[starts].tolist() == [1.0] * len(sections)  # every axis starts at frequency 1


def test_shared_ladder_layouts_use_ropes_frequencies():
    for layout in ("chunked", "interleaved"):
        _, freq = axis_frequency_assignment(128, (24, 20, 20), layout=layout, base=5e5)
        np.testing.assert_array_equal(freq, rope_frequencies(128, 5e5))


def test_axis_split_errors():
    with pytest.raises(ValueError, match="layout must be one of"):
        axis_of_pair((2, 2), layout="diagonal")
    with pytest.raises(ValueError, match="sections must add up to head_dim // 2 = 64"):
        axis_frequency_assignment(128, (16, 24, 16))
    with pytest.raises(TypeError, match="sections"):
        axis_of_pair("16,24,24")
    with pytest.raises(ValueError, match="sections\\[1\\]"):
        axis_of_pair((4, -1, 5))
    with pytest.raises(ValueError, match="cannot be interleaved"):
        axis_of_pair((2, 5, 5), layout="interleaved")
    with pytest.raises(ValueError, match="positions must have shape \\[4, ...\\]"):
        multi_axis_angles(np.zeros((3, 5)), 128, sections=(16, 16, 16, 16), layout="per_axis")
    with pytest.raises(ValueError, match="layout must be one of"):
        mrope_angles(np.zeros((3, 4), dtype=np.int64), 32, sections=(6, 5, 5), layout="per_axis")


# --- SD3's cropped sin-cos table ----------------------------------------------------------


def diffusers_sd3_pos_embed(height: int, width: int, dim: int, max_size: int,
                            base_size: int) -> np.ndarray:
    """Transcribed from diffusers (main at 58eb52c, 2026-08-23, embeddings.py):
    ``get_2d_sincos_pos_embed(dim, max_size, base_size=base_size, output_type="pt")`` then
    ``PatchEmbed.cropped_pos_embed`` for a ``height x width`` patch grid (interpolation_scale
    1). Returns ``[height * width, dim]``."""
    grid_h = torch.arange(max_size, dtype=torch.float64) / (max_size / base_size)
    grid_w = torch.arange(max_size, dtype=torch.float64) / (max_size / base_size)
    grid = torch.stack(torch.meshgrid(grid_w, grid_h, indexing="xy"), dim=0)  # w goes first
    grid = grid.reshape([2, 1, max_size, max_size])

    def one_d(d, pos):
        omega = torch.arange(d // 2, dtype=torch.float64) / (d / 2.0)
        out = torch.outer(pos.reshape(-1), 1.0 / 10000 ** omega)
        return torch.concat([torch.sin(out), torch.cos(out)], dim=1)

    table = torch.concat([one_d(dim // 2, grid[0]), one_d(dim // 2, grid[1])], dim=1)
    top, left = (max_size - height) // 2, (max_size - width) // 2
    table = table.reshape(max_size, max_size, -1)[top:top + height, left:left + width, :]
    return table.reshape(-1, dim).numpy()


@pytest.mark.parametrize(("height", "width"), [(96, 96), (64, 64), (40, 72), (7, 96), (1, 1)])
def test_cropped_table_matches_diffusers_sd3(height, width):
    # SD3Transformer2DModel: sample_size 128, patch_size 2 (base_size 64), pos_embed_max_size 96
    ours = cropped_sincos_table(height, width, 32, max_size=96, spacing=64 / 96)
    np.testing.assert_allclose(ours.reshape(-1, 32),
                               diffusers_sd3_pos_embed(height, width, 32, 96, 64), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(0, 8), st.sampled_from([8, 16, 24]),
       st.sampled_from([1.0, 0.5, 2 / 3]))
def test_a_crop_sees_the_same_offsets_as_a_table_built_at_its_size(h, w, extra, dim, spacing):
    """The crop starts at (top, left), so its raw values are a table shifted by that offset,
    but every sin/cos pair of a shifted position is the same rotation of the unshifted one:
    the dot products between patches (what attention sees of them) are the same."""
    max_size = max(h, w) + extra
    crop = cropped_sincos_table(h, w, dim, max_size=max_size, spacing=spacing).reshape(-1, dim)
    small = sincos_2d_table(h, w, dim, spacing=spacing).reshape(-1, dim)
    np.testing.assert_allclose(crop @ crop.T, small @ small.T, atol=1e-10)
    if (max_size - h) // 2 == 0 and (max_size - w) // 2 == 0:
        np.testing.assert_allclose(crop, small, atol=1e-12)  # nothing cut from the top-left


def test_a_crop_off_the_corner_is_not_the_small_table():
    crop = cropped_sincos_table(4, 4, 16, max_size=12)
    assert not np.allclose(crop, sincos_2d_table(4, 4, 16))


def test_sincos_table_errors():
    with pytest.raises(ValueError, match="dim must be a multiple of 4"):
        sincos_2d_table(4, 4, 18)
    with pytest.raises(ValueError, match="<= max_size = 8"):
        cropped_sincos_table(9, 4, 16, max_size=8)
    with pytest.raises(ValueError, match="spacing"):
        sincos_2d_table(4, 4, 16, spacing=0.0)


# --- SigLIP2 NaFlex's resized learned table -----------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 20), st.integers(1, 20), st.integers(1, 40), st.integers(1, 40),
       st.integers(1, 3), st.integers(0, 2**16))
def test_resize_matches_torch_interpolate_with_antialias(hin, win, h, w, dim, seed):
    table = np.random.default_rng(seed).standard_normal((hin, win, dim))

    def torch_resize(t, size):  # [H, W, dim] -> [h, w, dim], as SigLIP2 calls it
        out = F.interpolate(torch.from_numpy(t).permute(2, 0, 1)[None], size=size,
                            mode="bilinear", align_corners=False, antialias=True)
        return out[0].permute(1, 2, 0).numpy()

    if w > 1:
        ref = torch_resize(table, (h, w))
    else:
        # torch 2.13's CPU kernel returns wrong rows when the output is one column wide and
        # the height changes (measured: every such case differs; a one-row output is right),
        # so resize the transposed table, whose output is one row high, and transpose back
        ref = torch_resize(table.transpose(1, 0, 2).copy(), (1, h)).transpose(1, 0, 2)
    np.testing.assert_allclose(resize_position_table(table, h, w), ref, atol=1e-12)


@pytest.mark.parametrize(("height", "width"), [(16, 16), (8, 32), (24, 10), (3, 5)])
def test_resize_matches_siglip2_naflex(rng, height, width):
    table = rng.standard_normal((16, 16, 8)).astype(np.float32)  # num_patches 256: 16 x 16
    ref = Siglip2VisionEmbeddings.resize_positional_embeddings(
        torch.from_numpy(table), torch.tensor([[height, width]]), max_length=height * width)
    np.testing.assert_allclose(resize_position_table(table, height, width).reshape(-1, 8),
                               ref[0].numpy(), atol=1e-5)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(1, 30), st.integers(1, 30),
       st.integers(0, 2**16))
def test_resize_is_a_weighted_average(hin, win, h, w, seed):
    table = np.random.default_rng(seed).standard_normal((hin, win, 2))
    out = resize_position_table(table, h, w)
    assert out.min() >= table.min() - 1e-12 and out.max() <= table.max() + 1e-12
    np.testing.assert_allclose(resize_position_table(np.full((hin, win, 1), 3.5), h, w), 3.5)
    np.testing.assert_array_equal(resize_position_table(table, hin, win), table)


def test_resize_errors():
    with pytest.raises(ValueError, match="table must have shape \\[H, W, dim\\]"):
        resize_position_table(np.zeros((16, 16)), 4, 4)
    with pytest.raises(ValueError, match="height"):
        resize_position_table(np.zeros((4, 4, 2)), 0, 4)


# --- DINOv3's normalised, jittered coordinates --------------------------------------------


@pytest.mark.parametrize(("height", "width"), [(1, 1), (4, 3), (14, 14), (7, 20)])
def test_patch_centres_match_dinov3(height, width):
    ref = hf_dinov3.get_patches_center_coordinates(height, width, torch.float64, "cpu")
    np.testing.assert_allclose(patch_center_coordinates(height, width), ref.numpy(), atol=1e-15)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([None, 0.1, 0.5]),
       st.sampled_from([None, 1.2, 2.0]), st.sampled_from([None, 1.5, 2.0]))
def test_jitter_applies_dinov3s_augmentation(seed, shift, jitter, rescale):
    """Draw with torch's generator in HF's order, apply ours, compare with HF's function."""
    coords = torch.from_numpy(patch_center_coordinates(5, 7))
    torch.manual_seed(seed)
    ref = hf_dinov3.augment_patches_center_coordinates(coords, shift, jitter, rescale)
    torch.manual_seed(seed)
    draw = CoordinateJitter()
    if shift is not None:
        s = torch.empty((1, 2), dtype=torch.float64).uniform_(-shift, shift)
        draw = draw._replace(shift=tuple(s[0].tolist()))
    if jitter is not None:
        j = torch.empty((1, 2), dtype=torch.float64).uniform_(-math.log(jitter),
                                                                math.log(jitter)).exp()
        draw = draw._replace(jitter=tuple(j[0].tolist()))
    if rescale is not None:
        r = torch.empty(1, dtype=torch.float64).uniform_(-math.log(rescale),
                                                         math.log(rescale)).exp()
        draw = draw._replace(rescale=float(r))
    np.testing.assert_allclose(jitter_coordinates(coords.numpy(), draw), ref.numpy(),
                               rtol=1e-14)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_drawn_factors_stay_in_their_ranges(seed):
    draw = draw_coordinate_jitter(np.random.default_rng(seed), shift=0.2, jitter=1.5,
                                  rescale=2.0)
    assert all(abs(s) <= 0.2 for s in draw.shift)
    assert all(1 / 1.5 <= j <= 1.5 for j in draw.jitter)
    assert 0.5 <= draw.rescale <= 2.0
    assert draw_coordinate_jitter(np.random.default_rng(seed), rescale=None) == CoordinateJitter()


def test_normalized_angles_match_dinov3_rope(rng):
    config = DINOv3ViTConfig(hidden_size=64, num_attention_heads=2, image_size=64, patch_size=16)
    cos, sin = hf_dinov3.DINOv3ViTRopePositionEmbedding(config).eval()(torch.zeros(1, 3, 64, 48))
    angles = normalized_axial_angles(patch_center_coordinates(4, 3), 32)
    np.testing.assert_allclose(np.cos(np.concatenate([angles, angles], -1)), cos.numpy(),
                               atol=1e-6)
    np.testing.assert_allclose(np.sin(np.concatenate([angles, angles], -1)), sin.numpy(),
                               atol=1e-6)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 200), st.integers(1, 200))
def test_normalised_angles_stay_in_one_range_at_every_grid(height, width):
    # patch indices give a bigger grid new angles; normalised coordinates stay inside the
    # box (-1, 1), so pair i never turns past 2 pi f_i, whatever the image size
    f = 100.0 ** (-np.arange(0, 64, 4) / 64)
    angles = normalized_axial_angles(patch_center_coordinates(height, width), 64)
    assert np.all(np.abs(angles) < 2 * np.pi * np.concatenate([f, f]))


def test_jitter_errors():
    with pytest.raises(TypeError, match="rng must be a numpy Generator"):
        draw_coordinate_jitter(0)
    with pytest.raises(ValueError, match="jitter"):
        draw_coordinate_jitter(np.random.default_rng(0), jitter=0.5)
    with pytest.raises(ValueError, match="coords must have shape \\[..., 2\\]"):
        jitter_coordinates(np.zeros((4, 3)), CoordinateJitter())
    with pytest.raises(TypeError, match="CoordinateJitter"):
        jitter_coordinates(np.zeros((4, 2)), (0, 0))
    with pytest.raises(ValueError, match="multiple of 4"):
        normalized_axial_angles(np.zeros((4, 2)), 30)


# --- the slider figure: which axis owns each pair -----------------------------------------


@pytest.mark.parametrize("model", ["Qwen2-VL", "Qwen3-VL", "FLUX.1", "FLUX.2"])
def test_axis_frequency_figure_draws_each_models_split(fig, model):
    from posenc.course import i18n
    from posenc.course.figures import rope_today

    ax = rope_today.draw_axis_frequencies(fig, model)
    points = {line.get_label(): (line.get_xdata(), line.get_ydata()) for line in ax.lines}
    owner = np.full(64, -1)
    for a, (pairs, _) in enumerate(points.values()):
        owner[np.asarray(pairs, dtype=int)] = a
    wave = np.zeros(64)
    for pairs, w in points.values():
        wave[np.asarray(pairs, dtype=int)] = w
    if model == "Qwen2-VL":  # mrope_section [16, 24, 24]: consecutive chunks, base 10^6
        np.testing.assert_array_equal(owner, np.repeat([0, 1, 2], [16, 24, 24]))
        np.testing.assert_allclose(wave, 2 * np.pi * 1e6 ** (np.arange(64) / 64))
    elif model == "Qwen3-VL":  # HF's recomposition of mrope_section [24, 20, 20]
        np.testing.assert_array_equal(owner, hf_qwen3_vl_owner((24, 20, 20)))
    else:  # diffusers' per-axis ladders, transcribed above: every axis starts at 2 pi
        axes_dim, theta = ((16, 56, 56), 1e4) if model == "FLUX.1" else ((32,) * 4, 2000.0)
        ids = np.eye(len(axes_dim), dtype=np.int64)  # position 1 on one axis at a time
        expected = diffusers_flux_pos_embed(ids, axes_dim, theta).sum(axis=0)
        np.testing.assert_allclose(wave, 2 * np.pi / expected)
        assert np.count_nonzero(np.isclose(wave, 2 * np.pi)) == len(axes_dim)
    with i18n.translated_figure(fig, "zh"):
        texts = [t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text"))]
        assert all(i18n.leftover_english(t) == [] for t in texts if t), texts


def test_flux2_prompt_question_counts_the_text_axis_pairs():
    from posenc.course.questions import rope_2d_3d
    from posenc.course.questions._format import correct_answer

    asked = {q["id"]: q for q in rope_2d_3d.questions()}
    # diffusers' Flux2PosEmbed: four axes of 32 features; a prompt token turns only on L
    assert correct_answer(asked["rope_2d_3d.flux2-text-pairs"]) == 32 // 2
