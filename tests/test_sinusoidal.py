import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc.sinusoidal import (
    sinusoidal_dot_product,
    sinusoidal_encoding,
    sinusoidal_frequencies,
    sinusoidal_shift_matrix,
    sinusoidal_wavelengths,
)


def loop_reference(n, d, base=10000.0):
    """Direct transcription of Vaswani et al. eq. (3.5), one entry at a time."""
    pe = np.zeros((n, d))
    for pos in range(n):
        for col in range(d):
            i = col // 2
            angle = pos / base ** (2 * i / d)
            pe[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return pe


@pytest.mark.parametrize("n,d,base", [(50, 16, 10000.0), (7, 5, 10000.0), (30, 1, 100.0),
                                      (20, 33, 1e6), (64, 128, 10.0)])
def test_matches_direct_loop(n, d, base):
    np.testing.assert_allclose(sinusoidal_encoding(n, d, base), loop_reference(n, d, base),
                               rtol=0, atol=1e-12)


def test_shape_dtype_and_odd_last_column_is_sin():
    pe = sinusoidal_encoding(10, 7)
    assert pe.shape == (10, 7) and pe.dtype == np.float64
    w_last = 10000.0 ** (-6 / 7)
    np.testing.assert_allclose(pe[:, 6], np.sin(np.arange(10) * w_last))


def test_worked_table_d4():
    # position 1, d=4: sin(1), cos(1), sin(1/100), cos(1/100)
    pe = sinusoidal_encoding(2, 4)
    np.testing.assert_allclose(pe[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)])
    np.testing.assert_allclose(pe[0], [0, 1, 0, 1])


def test_frequencies_and_wavelengths():
    w = sinusoidal_frequencies(8, 10000.0)
    np.testing.assert_allclose(w, [1, 0.1, 0.01, 0.001])
    np.testing.assert_allclose(sinusoidal_wavelengths(8), 2 * np.pi / w)
    assert np.all(np.diff(sinusoidal_wavelengths(64)) > 0)  # low dims fast, high dims slow


@given(d_half=st.integers(1, 64), k=st.integers(-300, 300),
       base=st.floats(2.0, 1e6))
def test_shift_matrix_moves_every_position(d_half, k, base):
    d = 2 * d_half
    pe = sinusoidal_encoding(400, d, base)
    m = sinusoidal_shift_matrix(k, d, base)
    p = np.arange(max(0, -k), min(400, 400 - k))
    np.testing.assert_allclose(pe[p] @ m.T, pe[p + k], atol=1e-9)


def test_shift_matrix_is_a_rotation_independent_of_position():
    m = sinusoidal_shift_matrix(5, 16)
    np.testing.assert_allclose(m @ m.T, np.eye(16), atol=1e-12)
    np.testing.assert_allclose(sinusoidal_shift_matrix(2, 16) @ sinusoidal_shift_matrix(3, 16),
                               m, atol=1e-12)


@given(d_half=st.integers(1, 64), p=st.integers(0, 500), q=st.integers(0, 500),
       base=st.floats(2.0, 1e6))
def test_dot_product_depends_only_on_distance(d_half, p, q, base):
    d = 2 * d_half
    pe = sinusoidal_encoding(1001, d, base)
    k = q - p
    direct = pe[p] @ pe[q]
    # same distance somewhere else, and the mirrored distance
    shifted = pe[p + 500] @ pe[q + 500]
    np.testing.assert_allclose(direct, shifted, atol=1e-9)
    np.testing.assert_allclose(direct, sinusoidal_dot_product(k, d, base), atol=1e-9)
    np.testing.assert_allclose(direct, sinusoidal_dot_product(-k, d, base), atol=1e-9)


def test_dot_product_peaks_at_zero_and_is_not_monotone():
    k = np.arange(0, 200)
    dots = sinusoidal_dot_product(k, 64)
    assert dots[0] == pytest.approx(32)
    assert np.all(dots[1:] < dots[0])
    # the note's "decreases directly with distance" is wrong: it goes back up somewhere
    assert np.any(np.diff(dots) > 0)


def test_normalize_gives_unit_rows():
    pe = sinusoidal_encoding(50, 9, normalize=True)
    np.testing.assert_allclose(np.linalg.norm(pe, axis=1), 1.0)
    raw = sinusoidal_encoding(50, 8)
    np.testing.assert_allclose(np.linalg.norm(raw, axis=1), 2.0)  # sqrt(d/2)


def test_float32_exp_form_is_less_accurate():
    # reference-facts: the exp(-ln(base) 2i/d) form loses accuracy in float32
    d, n = 512, 5000
    two_i = np.arange(0, d, 2, dtype=np.float32)
    exp_form = np.exp(-np.log(np.float32(10000.0)) * two_i / np.float32(d))
    pow_form = (np.float32(10000.0) ** (-two_i / np.float32(d))).astype(np.float32)
    exact = sinusoidal_frequencies(d)
    pos = np.arange(n, dtype=np.float32)[:, None]
    err_exp = np.abs(np.sin(pos * exp_form) - np.sin(np.arange(n)[:, None] * exact)).max()
    err_pow = np.abs(np.sin(pos * pow_form) - np.sin(np.arange(n)[:, None] * exact)).max()
    assert err_exp > err_pow


@pytest.mark.parametrize("bad", [0, -3])
def test_bad_sizes(bad):
    with pytest.raises(ValueError, match="num_positions"):
        sinusoidal_encoding(bad, 8)
    with pytest.raises(ValueError, match="d_model"):
        sinusoidal_encoding(8, bad)


def test_bad_types_and_base():
    with pytest.raises(TypeError, match="d_model"):
        sinusoidal_encoding(8, 4.5)
    with pytest.raises(TypeError, match="num_positions"):
        sinusoidal_encoding("8", 4)
    with pytest.raises(ValueError, match="base"):
        sinusoidal_encoding(8, 4, base=1.0)
    with pytest.raises(ValueError, match="base"):
        sinusoidal_encoding(8, 4, base=-10)
    with pytest.raises(ValueError, match="odd d_model"):
        sinusoidal_shift_matrix(1, 5)
    with pytest.raises(ValueError, match="d_model must be even"):
        sinusoidal_dot_product([1, 2], 7)
