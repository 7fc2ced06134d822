import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc.relative import relative_positions, shaw_relative_indices, t5_relative_bucket


def hf_t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """Hugging Face T5Attention._relative_position_bucket, transcribed."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, large)
    return relative_buckets


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", [(32, 128), (16, 64), (64, 512), (8, 20),
                                                      (32, 50)])
def test_matches_hugging_face(bidirectional, num_buckets, max_distance):
    rel = torch.arange(-3000, 3001)
    ours = t5_relative_bucket(rel.numpy(), bidirectional=bidirectional,
                              num_buckets=num_buckets, max_distance=max_distance)
    np.testing.assert_array_equal(ours, hf_t5_bucket(rel, bidirectional, num_buckets,
                                                     max_distance).numpy())


def test_exact_for_small_distances():
    rel = np.arange(-7, 8)
    b = t5_relative_bucket(rel)
    np.testing.assert_array_equal(b[rel <= 0], -rel[rel <= 0])  # keys before: 0..7
    np.testing.assert_array_equal(b[rel > 0], 16 + rel[rel > 0])  # keys after: 16 + d
    uni = t5_relative_bucket(rel, bidirectional=False)
    np.testing.assert_array_equal(uni[rel <= 0], -rel[rel <= 0])
    assert np.all(uni[rel > 0] == 0)


@given(num_buckets=st.sampled_from([8, 16, 32, 64]), max_distance=st.integers(40, 1000),
       bidirectional=st.booleans())
def test_monotone_and_saturating(num_buckets, max_distance, bidirectional):
    d = np.arange(0, 3 * max_distance)
    back = t5_relative_bucket(-d, bidirectional=bidirectional, num_buckets=num_buckets,
                              max_distance=max_distance)
    assert np.all(np.diff(back) >= 0)
    half = num_buckets // 2 if bidirectional else num_buckets
    assert back.max() == half - 1
    assert np.all(back[d >= max_distance] == half - 1)
    assert np.all(back[d < max_distance] <= half - 1)
    if bidirectional:
        fwd = t5_relative_bucket(d[1:], num_buckets=num_buckets, max_distance=max_distance)
        assert np.all(fwd >= half) and np.all(np.diff(fwd) >= 0)
        assert set(back).isdisjoint(set(fwd))  # sign split


def test_relative_positions_key_minus_query():
    r = relative_positions(3, 5)
    np.testing.assert_array_equal(r[-1], [-4, -3, -2, -1, 0])
    np.testing.assert_array_equal(relative_positions(3), [[0, 1, 2], [-1, 0, 1], [-2, -1, 0]])


def test_shaw_clipping():
    idx = shaw_relative_indices(10, max_distance=2)
    assert idx.shape == (10, 10) and idx.min() == 0 and idx.max() == 4
    i, j = np.indices((10, 10))
    np.testing.assert_array_equal(idx, np.clip(j - i, -2, 2) + 2)
    assert shaw_relative_indices(1000, 3).max() == 6  # any length, 2k+1 entries


def test_bad_input():
    with pytest.raises(TypeError, match="relative_position"):
        t5_relative_bucket(np.array([0.5]))
    with pytest.raises(ValueError, match="num_buckets"):
        t5_relative_bucket(0, num_buckets=0)
    with pytest.raises(ValueError, match="max_distance"):
        t5_relative_bucket(0, num_buckets=32, max_distance=4)
    with pytest.raises(ValueError, match="max_distance"):
        shaw_relative_indices(5, 0)
    with pytest.raises(ValueError, match="key_length"):
        relative_positions(5, 2)
