import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from posenc.alibi import alibi_bias, alibi_slopes, attention_span, bias_only_attention


def official_get_slopes(n):
    """The ALiBi repository's get_slopes, transcribed."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest)
            + official_get_slopes(2 * closest)[0::2][: n - closest])


def test_eight_heads():
    np.testing.assert_allclose(alibi_slopes(8), [1 / 2**k for k in range(1, 9)])


def test_sixteen_heads_start_at_one_over_sqrt_two():
    s = alibi_slopes(16)
    assert s[0] == pytest.approx(2 ** -0.5) and s[-1] == pytest.approx(2**-8)


@pytest.mark.parametrize("n", list(range(1, 65)) + [80, 96, 112, 128])
def test_matches_official_rule(n):
    np.testing.assert_allclose(alibi_slopes(n), official_get_slopes(n), rtol=1e-15)


def test_non_power_of_two_rule_by_hand():
    # 12 heads: the 8-head slopes, then 1st, 3rd, 5th, 7th of the 16-head sequence
    sixteen = [2 ** (-k / 2) for k in range(1, 17)]
    expected = [2**-k for k in range(1, 9)] + sixteen[0:8:2]
    np.testing.assert_allclose(alibi_slopes(12), expected)


@given(h=st.integers(1, 16), q=st.integers(1, 20), extra=st.integers(0, 10))
def test_bias_shape_and_causal_structure(h, q, extra):
    k = q + extra
    b = alibi_bias(h, q, k)
    assert b.shape == (h, q, k)
    slopes = alibi_slopes(h)
    for i in range(q):
        qpos = extra + i
        for j in range(k):
            if j > qpos:
                assert np.all(np.isneginf(b[:, i, j]))
            else:
                np.testing.assert_allclose(b[:, i, j], -slopes * (qpos - j))
    sym = alibi_bias(h, q, k, causal=False)
    assert np.all(np.isfinite(sym)) and np.all(sym <= 0)
    np.testing.assert_allclose(sym[:, :, : extra + 1], b[:, :, : extra + 1])


def test_symmetric_is_symmetric():
    s = alibi_bias(4, 9, causal=False)
    np.testing.assert_allclose(s, np.swapaxes(s, 1, 2))


def test_official_plus_m_j_form_is_equal_after_softmax():
    # the official code adds +m*j (a per-row constant away from -m*(i-j))
    h, n = 4, 12
    ours = torch.from_numpy(alibi_bias(h, n))
    slopes = torch.from_numpy(alibi_slopes(h))
    official = slopes[:, None, None] * torch.arange(n)[None, None, :].double()
    official = official + torch.full((n, n), float("-inf"), dtype=torch.float64).triu(1)
    torch.testing.assert_close(F.softmax(ours, -1), F.softmax(official, -1))


def test_bad_input():
    for bad in (0, -1):
        with pytest.raises(ValueError, match="num_heads"):
            alibi_slopes(bad)
    with pytest.raises(TypeError, match="num_heads"):
        alibi_slopes(2.0)
    with pytest.raises(ValueError, match="query_length"):
        alibi_bias(4, 0)
    with pytest.raises(ValueError, match="key_length"):
        alibi_bias(4, 5, 3)
    with pytest.raises(TypeError, match="causal"):
        alibi_bias(4, 5, causal="yes")


# --- chapter helpers: bias_only_attention, attention_span ---------------------------------


@pytest.mark.parametrize("h,length", [(1, 1), (8, 16), (12, 40)])
def test_bias_only_attention_is_the_softmax_of_the_last_bias_row(h, length):
    last_row = torch.from_numpy(alibi_bias(h, length)[:, -1, :])  # keys 0 .. L-1
    expected = F.softmax(last_row, -1).flip(-1).numpy()  # reversed: distance 0 first
    np.testing.assert_allclose(bias_only_attention(alibi_slopes(h), length), expected,
                               rtol=1e-12)


def test_bias_only_attention_other_slopes():
    np.testing.assert_allclose(bias_only_attention([0.0], 5), [[0.2] * 5])
    w = bias_only_attention([-0.3, 0.3], 6)  # a negative slope favours far keys
    assert np.all(np.diff(w[0]) > 0) and np.all(np.diff(w[1]) < 0)
    np.testing.assert_allclose(w.sum(-1), 1.0)
    assert np.all(np.isfinite(bias_only_attention([50.0], 1000)))  # no overflow


@given(m=st.floats(0.01, 2.0), mass=st.floats(0.5, 0.99))
def test_attention_span_closed_form_for_long_sequences(m, mass):
    # share of the s nearest keys is 1 - exp(-m s) when m L >> 1
    length = int(60 / m) + 10
    s = np.log(1 / (1 - mass)) / m
    if abs(s - round(s)) < 1e-6:  # skip exact ties, where round-off decides
        return
    span = attention_span(bias_only_attention([m], length), mass)
    assert span[0] == int(np.ceil(s))


def test_attention_span_simple_cases():
    uniform = np.full((2, 10), 0.1)
    np.testing.assert_array_equal(attention_span(uniform, 0.5), [5, 5])
    np.testing.assert_array_equal(attention_span(uniform, 1.0), [10, 10])
    assert attention_span([1.0, 0.0, 0.0], 0.9) == 1
    np.testing.assert_array_equal(attention_span(bias_only_attention(alibi_slopes(8), 1024)),
                                  [5, 10, 19, 37, 74, 148, 295, 551])


def test_bad_input_chapter_helpers():
    with pytest.raises(ValueError, match="slopes"):
        bias_only_attention([], 4)
    with pytest.raises(ValueError, match="slopes"):
        bias_only_attention([np.nan], 4)
    with pytest.raises(ValueError, match="key_length"):
        bias_only_attention([0.5], 0)
    with pytest.raises(ValueError, match="sum to 1"):
        attention_span([0.5, 0.2])
    with pytest.raises(ValueError, match=">= 0"):
        attention_span([1.5, -0.5])
    with pytest.raises(ValueError, match="mass"):
        attention_span([0.5, 0.5], 1.5)
    with pytest.raises(ValueError, match="mass"):
        attention_span([0.5, 0.5], 0.0)


def test_slopes_order_for_six_heads_is_the_official_one_not_sorted():
    """Issue 19: the docstring said "largest first", untrue unless num_heads is a power of
    two. Six heads: 4 power-of-two slopes, then the 1st and 3rd of the 8-head sequence."""
    expected = [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8, 2.0**-1, 2.0**-3]
    np.testing.assert_array_equal(alibi_slopes(6), expected)
    np.testing.assert_array_equal(alibi_slopes(6), official_get_slopes(6))
    assert "largest first" not in alibi_slopes.__doc__.split("\n")[0]
    for n in (1, 2, 4, 8, 16):  # sorted exactly when n is a power of two
        assert list(alibi_slopes(n)) == sorted(alibi_slopes(n), reverse=True)


@given(st.integers(1, 256))
def test_the_gentlest_slope_is_one_over_256_for_any_head_count(n):
    """Chapter 6: the slopes' range ends at 1/256 whatever the number of heads."""
    assert alibi_slopes(n).min() == pytest.approx(2.0**-8, rel=1e-12)


@given(st.integers(0, 7))
def test_more_heads_start_steeper_and_sit_closer_together(k):
    """Chapter 6: doubling the heads (powers of two) raises the steepest slope and shrinks
    the ratio between neighbouring slopes."""
    few, many = alibi_slopes(2**k), alibi_slopes(2 ** (k + 1))
    assert many.max() > few.max()
    ratio = lambda s: np.max(np.sort(s)[1:] / np.sort(s)[:-1]) if len(s) > 1 else np.inf  # noqa: E731
    assert ratio(many) < ratio(few)
