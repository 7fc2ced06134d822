"""Chapter 17's figures: FoX's bias beside ALiBi, stick-breaking against softmax."""

import matplotlib
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402

from posenc.course.figures import data_dependent as dd  # noqa: E402


def _images(axes):
    return [np.ma.filled(ax.get_images()[0].get_array(), np.nan) for ax in axes]


def test_fox_panel_with_every_gate_at_the_word_gate_is_the_alibi_panel():
    """The two panels agree cell by cell when the full stops keep the words' gate (ALiBi
    with slope -ln f, written here as -m (i - j) directly), and differ once a stop closes."""
    n = len(dd.SENTENCE)
    m = -np.log(dd.WORD_GATE)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    alibi = np.where(j <= i, -m * (i - j), np.nan)
    fig = plt.figure()
    fox, right = _images(dd.draw_fox_bias(fig, dd.WORD_GATE))
    np.testing.assert_allclose(fox, alibi, rtol=0, atol=1e-12)
    np.testing.assert_allclose(right, alibi, rtol=0, atol=1e-12)
    fig = plt.figure()
    fox, _ = _images(dd.draw_fox_bias(fig, 0.01))
    # query 6 ('left') to key 2 ('cake'): the stop at 3 and the words at 4, 5, 6 between
    assert fox[6, 2] == pytest.approx(np.log(0.01) + 3 * np.log(dd.WORD_GATE))
    assert fox[7, 0] == -8.0  # two stops: below the colour floor, drawn at the floor
    plt.close("all")


@pytest.mark.parametrize("gate", [0.0, -0.5, 1.5, float("nan")])
def test_fox_gates_are_refused_outside_zero_one(gate):
    with pytest.raises((ValueError, TypeError), match="period_gate"):
        dd.fox_log_gates(gate)


@given(shift=st.floats(-4, 4), seed=st.integers(0, 50))
def test_stick_breaking_bars_sum_to_one_minus_the_stick_left(shift, seed):
    """The stick-breaking bars sum to 1 - prod(1 - sigmoid(z)) (the identity, written with
    the product); the softmax bars do not move with the shift."""
    fig = plt.figure()
    ax = dd.draw_stick_breaking(fig, shift, n=12, seed=seed)
    soft, stick = (np.array([b.get_height() for b in c]) for c in ax.containers
                   if isinstance(c, BarContainer))
    z = dd.sentence_logits(12, seed) + shift
    left = np.prod(1 - 1 / (1 + np.exp(-z)))
    assert stick.sum() == pytest.approx(1 - left, abs=1e-12)
    expected = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    np.testing.assert_allclose(soft, expected, rtol=1e-12)
    plt.close(fig)
