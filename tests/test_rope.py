import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc.nn import rope_kernel
from posenc.nn.rope_kernel import rope_angles_in_dtype
from posenc.rope import (
    apply_rope,
    apply_rope_complex,
    interleaved_to_half,
    interleaved_to_half_weight,
    rope_angles,
    rope_frequencies,
    rope_relative_upper_bound,
    rope_rotation_matrix,
    wrap_angle,
)

head_dims = st.integers(1, 32).map(lambda h: 2 * h)
bases = st.floats(2.0, 1e6)


# --- independent references -------------------------------------------------------------

def meta_llama_reference(x: torch.Tensor, base=10000.0):
    """Meta llama's precompute_freqs_cis / apply_rotary_emb, transcribed (interleaved)."""
    seq, dim = x.shape[-2], x.shape[-1]
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2)[: dim // 2].double() / dim))
    t = torch.arange(seq, dtype=torch.float64)
    freqs_cis = torch.polar(torch.ones(seq, dim // 2, dtype=torch.float64), torch.outer(t, freqs))
    xc = torch.view_as_complex(x.double().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs_cis).flatten(-2)


def hf_rotate_half_reference(x: torch.Tensor, base=10000.0):
    """Hugging Face's rotate_half / apply_rotary_pos_emb, transcribed (half layout)."""
    seq, dim = x.shape[-2], x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).double() / dim))
    freqs = torch.outer(torch.arange(seq, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    x = x.double()
    x1, x2 = x[..., : dim // 2], x[..., dim // 2:]
    rotated = torch.cat((-x2, x1), dim=-1)
    return x * emb.cos() + rotated * emb.sin()


def test_matches_meta_llama(rng):
    x = rng.standard_normal((2, 3, 17, 64))
    ours = rope_kernel.apply_rope(torch.from_numpy(x), layout="interleaved")
    torch.testing.assert_close(ours, meta_llama_reference(torch.from_numpy(x)))


def test_matches_hugging_face(rng):
    x = rng.standard_normal((2, 3, 17, 64))
    ours = rope_kernel.apply_rope(torch.from_numpy(x), layout="half", base=500000.0)
    torch.testing.assert_close(ours, hf_rotate_half_reference(torch.from_numpy(x), 500000.0))


def test_frequencies_values():
    np.testing.assert_allclose(rope_frequencies(8, 10000.0), [1, 0.1, 0.01, 0.001])
    assert rope_frequencies(128).shape == (64,)


# --- properties -------------------------------------------------------------------------

@given(d=head_dims, m=st.integers(-5000, 5000), n=st.integers(-5000, 5000),
       shift=st.integers(-5000, 5000), base=bases, seed=st.integers(0, 2**16),
       layout=st.sampled_from(["interleaved", "half"]))
def test_score_depends_only_on_relative_position(d, m, n, shift, base, seed, layout):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 1, d))
    score = (apply_rope(q, [m], base=base, layout=layout)
             @ apply_rope(k, [n], base=base, layout=layout).T)
    moved = (apply_rope(q, [m + shift], base=base, layout=layout)
             @ apply_rope(k, [n + shift], base=base, layout=layout).T)
    at_origin = q @ apply_rope(k, [n - m], base=base, layout=layout).T
    np.testing.assert_allclose(score, moved, atol=1e-9)
    np.testing.assert_allclose(score, at_origin, atol=1e-9)


@given(d=head_dims, seed=st.integers(0, 2**16), base=bases,
       layout=st.sampled_from(["interleaved", "half"]))
def test_preserves_norms(d, seed, base, layout):
    x = np.random.default_rng(seed).standard_normal((4, 40, d))
    y = apply_rope(x, base=base, layout=layout)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1))


@given(d=head_dims, seed=st.integers(0, 2**16), base=bases)
def test_complex_real_and_matrix_forms_agree(d, seed, base):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((30, d))
    real = apply_rope(x, base=base)
    np.testing.assert_allclose(apply_rope_complex(x, base=base), real, atol=1e-12)
    # an independent complex form, written here from the definition
    z = (x[:, 0::2] + 1j * x[:, 1::2]) * np.exp(
        1j * np.arange(30)[:, None] * base ** (-np.arange(0, d, 2) / d))
    np.testing.assert_allclose(np.stack([z.real, z.imag], -1).reshape(30, d), real, atol=1e-12)
    for layout in ("interleaved", "half"):
        by_matrix = np.stack([rope_rotation_matrix(m, d, base, layout=layout) @ x[m]
                              for m in range(30)])
        np.testing.assert_allclose(by_matrix, apply_rope(x, base=base, layout=layout),
                                   atol=1e-12)


def test_rotation_matrix_is_orthogonal_and_composes():
    r3, r5 = rope_rotation_matrix(3, 16), rope_rotation_matrix(5, 16)
    np.testing.assert_allclose(r3.T @ r3, np.eye(16), atol=1e-12)
    np.testing.assert_allclose(r3.T @ r5, rope_rotation_matrix(2, 16), atol=1e-12)
    # one 2x2 block, written out
    t = 3 * 10000.0 ** (-2 / 16)
    np.testing.assert_allclose(r3[2:4, 2:4], [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])


@given(d=head_dims, seed=st.integers(0, 2**16))
def test_layouts_equal_up_to_fixed_permutation(d, seed):
    x = np.random.default_rng(seed).standard_normal((3, 25, d))
    perm = interleaved_to_half(d)
    assert sorted(perm) == list(range(d))
    np.testing.assert_allclose(apply_rope(x[..., perm], layout="half"),
                               apply_rope(x)[..., perm], atol=1e-12)
    if d > 2:  # and they really are different layouts
        assert not np.allclose(apply_rope(x, layout="half"), apply_rope(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_numpy_equals_torch(dtype, layout, rng):
    x = rng.standard_normal((2, 4, 33, 16))
    xt = torch.from_numpy(x).to(dtype)
    out = rope_kernel.apply_rope(xt, layout=layout)
    assert isinstance(out, torch.Tensor) and out.dtype == dtype and out.shape == xt.shape
    expected = apply_rope(xt.double().numpy(), layout=layout)
    tol = {torch.float64: 1e-12, torch.float32: 1e-5, torch.bfloat16: 2e-2, torch.float16: 2e-3}
    np.testing.assert_allclose(out.double().numpy(), expected, atol=tol[dtype] * 8,
                               rtol=tol[dtype])


def test_numpy_and_torch_functions_refuse_the_other_library(rng):
    x = rng.standard_normal((4, 8))
    with pytest.raises(TypeError, match="x must be a numpy array.*posenc.nn.rope_kernel"):
        apply_rope(torch.from_numpy(x))
    with pytest.raises(TypeError, match="x must be a torch tensor.*posenc.rope"):
        rope_kernel.apply_rope(x)


def test_numpy_dtype_preserved(rng):
    x = rng.standard_normal((5, 8)).astype(np.float32)
    assert apply_rope(x).dtype == np.float32
    assert apply_rope(x.astype(np.float16)).dtype == np.float16


def test_half_precision_angles_are_not_used():
    # at position 5000 a bf16 angle is wrong by whole radians; ours must not be
    x = torch.zeros(1, 5001, 2, dtype=torch.bfloat16)
    x[..., 0] = 1
    out = rope_kernel.apply_rope(x).double()
    exact = np.cos(np.arange(5001.0))
    np.testing.assert_allclose(out[0, :, 0].numpy(), exact, atol=1e-2)
    bf16_angle = torch.arange(5001, dtype=torch.bfloat16).double()
    assert (bf16_angle.cos().numpy() - exact).__abs__().max() > 0.5


def test_positions_and_frequencies(rng):
    x = rng.standard_normal((2, 6, 8))
    np.testing.assert_allclose(apply_rope(x, np.arange(6)), apply_rope(x))
    shifted = apply_rope(x, np.arange(6) + 100)
    np.testing.assert_allclose(shifted[:, 0], apply_rope(x[:, :1], [100])[:, 0])
    freqs = rope_frequencies(8) / 4
    np.testing.assert_allclose(apply_rope(x, frequencies=freqs),
                               apply_rope(x, np.arange(6) / 4), atol=1e-12)
    per_batch = apply_rope(x, np.array([[0], [10]]) + np.arange(6))
    np.testing.assert_allclose(per_batch[1], apply_rope(x[1], np.arange(10, 16)))
    np.testing.assert_allclose(rope_angles([2], 4), [[2, 0.02]])


def test_relative_upper_bound_decays_on_average():
    r = np.arange(0, 1000)
    bound = rope_relative_upper_bound(r, 128)
    assert bound[0] == pytest.approx(np.mean(np.arange(1, 65)))
    assert bound[900:].mean() < bound[:10].mean() / 3
    assert np.any(np.diff(bound) > 0)  # it wiggles


def test_bad_input():
    x = np.zeros((4, 6))
    with pytest.raises(ValueError, match="head_dim"):
        apply_rope(np.zeros((4, 7)))
    with pytest.raises(ValueError, match="head_dim"):
        rope_frequencies(7)
    with pytest.raises(ValueError, match="head_dim"):
        rope_frequencies(0)
    with pytest.raises(ValueError, match="base"):
        apply_rope(x, base=1.0)
    with pytest.raises(ValueError, match="layout"):
        apply_rope(x, layout="neox")
    with pytest.raises(ValueError, match="positions"):
        apply_rope(x, positions=np.arange(5))
    with pytest.raises(ValueError, match="frequencies"):
        apply_rope(x, frequencies=np.ones(2))
    with pytest.raises(ValueError, match="frequencies"):
        apply_rope(x, frequencies=-np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        apply_rope(np.zeros(6))
    with pytest.raises(TypeError, match="x must be"):
        apply_rope([[0.0, 1.0]])
    with pytest.raises(TypeError, match="floating"):
        apply_rope(np.zeros((4, 6), dtype=int))
    with pytest.raises(TypeError, match="positions"):
        apply_rope(x, positions=["a"] * 4)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_torch_paths_autograd_and_strided_inputs(layout, rng):
    # a permuted (non-contiguous) q as attention produces it, with gradients on
    base = torch.from_numpy(rng.standard_normal((2, 7, 3, 4, 16)))  # [b, s, 3, h, d]
    q = base.permute(2, 0, 3, 1, 4)[1].requires_grad_(False).clone().transpose(1, 2)
    q = q.transpose(1, 2)  # non-contiguous view of a [b, h, s, d] tensor
    assert not q.is_contiguous()
    expected = apply_rope(q.numpy(), layout=layout)
    np.testing.assert_allclose(rope_kernel.apply_rope(q, layout=layout).numpy(), expected,
                               atol=1e-12)
    leaf = q.detach().clone().requires_grad_(True)
    out = rope_kernel.apply_rope(leaf, layout=layout)
    np.testing.assert_allclose(out.detach().numpy(), expected, atol=1e-12)
    out.pow(2).sum().backward()  # rotation preserves norms: d|Rx|^2/dx = 2x
    np.testing.assert_allclose(leaf.grad.numpy(), 2 * q.numpy(), atol=1e-10)


# --- chapter helpers: wrap_angle, rope_angles_in_dtype, interleaved_to_half_weight ---------


def test_wrap_angle_values():
    np.testing.assert_allclose(wrap_angle([0.0, np.pi, -np.pi, 3 * np.pi, 2 * np.pi, -0.5]),
                               [0.0, np.pi, np.pi, np.pi, 0.0, -0.5], atol=1e-12)


@given(a=st.floats(-1e4, 1e4))
def test_wrap_angle_is_the_same_rotation_in_range(a):
    w = wrap_angle(a)
    assert -np.pi < w <= np.pi
    assert np.isclose(np.cos(w), np.cos(a), atol=1e-9) and np.isclose(np.sin(w), np.sin(a),
                                                                       atol=1e-9)


def test_angles_in_float64_are_exact():
    np.testing.assert_allclose(rope_angles_in_dtype(100, 16, dtype=torch.float64),
                               rope_angles(np.arange(100), 16), rtol=1e-15)


def test_half_precision_angles_are_wrong_at_long_positions():
    n = 20000
    exact = rope_angles(np.arange(n), 64)
    bf16 = rope_angles_in_dtype(n, 64, dtype=torch.bfloat16)
    # pair 0 has frequency 1 exactly: bf16 holds every integer up to 256, and not 257
    np.testing.assert_array_equal(bf16[:257, 0], np.arange(257))
    assert bf16[257, 0] != 257
    assert np.abs(wrap_angle(bf16 - exact)).max() > 3.0
    fp16 = rope_angles_in_dtype(n, 64, dtype=torch.float16)
    np.testing.assert_array_equal(fp16[:2049, 0], np.arange(2049))
    assert np.abs(wrap_angle(fp16 - exact)).max() > 3.0
    fp32 = rope_angles_in_dtype(n, 64, dtype=torch.float32)
    assert np.abs(wrap_angle(fp32 - exact)).max() < 1e-2


def test_angles_in_dtype_bad_input():
    with pytest.raises(TypeError, match="dtype"):
        rope_angles_in_dtype(10, 8, dtype=np.float32)
    with pytest.raises(TypeError, match="dtype"):
        rope_angles_in_dtype(10, 8, dtype=torch.int32)
    with pytest.raises(ValueError, match="num_positions"):
        rope_angles_in_dtype(0, 8, dtype=torch.float32)
    with pytest.raises(ValueError, match="head_dim"):
        rope_angles_in_dtype(10, 7, dtype=torch.float32)


def hf_conversion_permute(w, n_heads, dim1, dim2):
    """Hugging Face convert_llama_weights_to_hf.py's permute, transcribed."""
    return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)


@pytest.mark.parametrize("heads,head_dim", [(1, 2), (4, 16), (8, 64)])
def test_weight_permutation_matches_hugging_face(heads, head_dim):
    w = torch.randn(heads * head_dim, 24)
    expected = hf_conversion_permute(w, heads, heads * head_dim, 24)
    torch.testing.assert_close(interleaved_to_half_weight(w, heads), expected)
    np.testing.assert_array_equal(interleaved_to_half_weight(w.numpy(), heads), expected.numpy())


@given(heads=st.integers(1, 4), half_dim=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_permuted_weights_give_the_same_scores_in_the_half_layout(heads, half_dim, seed):
    rng = np.random.default_rng(seed)
    head_dim, d_in, seq = 2 * half_dim, 12, 9
    x = rng.standard_normal((seq, d_in))
    w_q, w_k = rng.standard_normal((2, heads * head_dim, d_in))
    b_q = rng.standard_normal(heads * head_dim)

    def scores(wq, bq, wk, layout):
        q = (x @ wq.T + bq).reshape(seq, heads, head_dim).transpose(1, 0, 2)  # [h, seq, hd]
        k = (x @ wk.T).reshape(seq, heads, head_dim).transpose(1, 0, 2)
        return apply_rope(q, layout=layout) @ apply_rope(k, layout=layout).transpose(0, 2, 1)

    expected = scores(w_q, b_q, w_k, "interleaved")
    converted = scores(interleaved_to_half_weight(w_q, heads),
                       interleaved_to_half_weight(b_q, heads),
                       interleaved_to_half_weight(w_k, heads), "half")
    np.testing.assert_allclose(converted, expected, atol=1e-9)
    if half_dim > 1:  # without the permutation the scores change
        assert not np.allclose(scores(w_q, b_q, w_k, "half"), expected)


def test_weight_permutation_bad_input():
    with pytest.raises(ValueError, match="divisible"):
        interleaved_to_half_weight(np.zeros((10, 3)), 4)
    with pytest.raises(ValueError, match="even"):
        interleaved_to_half_weight(np.zeros((12, 3)), 4)
    with pytest.raises(TypeError, match="weight"):
        interleaved_to_half_weight([[1.0, 2.0]], 1)
    with pytest.raises(ValueError, match="num_heads"):
        interleaved_to_half_weight(np.zeros((8, 3)), 0)
