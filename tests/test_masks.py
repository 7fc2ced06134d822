import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc.masks import (
    causal_mask,
    chunked_mask,
    reach_mask,
    receptive_field,
    sliding_window_mask,
    visible,
)

# --- independent reference: Hugging Face transformers' masking_utils, transcribed -------
# (causal_mask_function, sliding_window_overlay, chunked_overlay, and_masks), evaluated
# one (q_idx, kv_idx) pair at a time, as the mask interface calls them.


def hf_causal_mask_function(batch_idx, head_idx, q_idx, kv_idx):
    return kv_idx <= q_idx


def hf_sliding_window_overlay(sliding_window):
    def inner_mask(batch_idx, head_idx, q_idx, kv_idx):
        return kv_idx > q_idx - sliding_window
    return inner_mask


def hf_chunked_overlay(chunk_size, left_padding):
    def inner_mask(batch_idx, head_idx, q_idx, kv_idx):
        return ((kv_idx - left_padding[batch_idx]) // chunk_size
                == (q_idx - left_padding[batch_idx]) // chunk_size)
    return inner_mask


def hf_and_masks(*mask_functions):
    def and_mask(batch_idx, head_idx, q_idx, kv_idx):
        result = q_idx.new_ones((), dtype=torch.bool)
        for mask in mask_functions:
            result = result & mask(batch_idx, head_idx, q_idx, kv_idx)
        return result
    return and_mask


def hf_dense(mask_function, n):
    out = np.zeros((n, n), dtype=bool)
    b, h = torch.tensor(0), torch.tensor(0)
    for i in range(n):
        for j in range(n):
            out[i, j] = bool(mask_function(b, h, torch.tensor(i), torch.tensor(j)))
    return out


sizes = st.integers(1, 24)


@given(n=sizes)
def test_causal_equals_hugging_face(n):
    np.testing.assert_array_equal(causal_mask(n), hf_dense(hf_causal_mask_function, n))


@given(n=sizes, window=st.integers(1, 30))
def test_sliding_window_equals_hugging_face(n, window):
    ref = hf_dense(hf_and_masks(hf_causal_mask_function, hf_sliding_window_overlay(window)), n)
    np.testing.assert_array_equal(sliding_window_mask(n, window), ref)


@given(n=sizes, chunk=st.integers(1, 30))
def test_chunked_equals_hugging_face(n, chunk):
    no_padding = torch.zeros(1, dtype=torch.int64)
    ref = hf_dense(hf_and_masks(hf_causal_mask_function, hf_chunked_overlay(chunk, no_padding)),
                   n)
    np.testing.assert_array_equal(chunked_mask(n, chunk), ref)


@given(n=sizes, size=st.integers(1, 30))
def test_masks_properties(n, size):
    window, chunk = sliding_window_mask(n, size), chunked_mask(n, size)
    for m in (window, chunk):
        assert m.dtype == bool and m.shape == (n, n)
        assert np.all(np.diag(m))                      # a query always sees itself
        assert not np.any(np.triu(m, 1))               # never the future
    i, j = np.nonzero(window)
    assert np.all(i - j < size)                        # no distance >= window
    i, j = np.nonzero(chunk)
    assert np.all(i - j < size)
    # row i of a sliding window holds min(i + 1, window) keys
    np.testing.assert_array_equal(window.sum(1), np.minimum(np.arange(n) + 1, size))
    # chunked attention sees no more than the window of the same size
    assert not np.any(chunk & ~window)


def test_large_window_or_chunk_is_causal():
    np.testing.assert_array_equal(sliding_window_mask(10, 10), causal_mask(10))
    np.testing.assert_array_equal(chunked_mask(10, 50), causal_mask(10))
    np.testing.assert_array_equal(reach_mask(7, "full"), causal_mask(7))
    np.testing.assert_array_equal(reach_mask(7, "window", 3), sliding_window_mask(7, 3))
    np.testing.assert_array_equal(reach_mask(7, "chunk", 3), chunked_mask(7, 3))


def test_window_one_is_identity():
    np.testing.assert_array_equal(sliding_window_mask(6, 1), np.eye(6, dtype=bool))
    np.testing.assert_array_equal(chunked_mask(6, 1), np.eye(6, dtype=bool))


def test_visible_works_on_torch():
    i = torch.arange(9)[:, None]
    j = torch.arange(9)[None, :]
    np.testing.assert_array_equal(visible(i, j, window=3).numpy(), sliding_window_mask(9, 3))
    np.testing.assert_array_equal(visible(i, j, chunk=4).numpy(), chunked_mask(9, 4))


@given(n=st.integers(2, 30), window=st.integers(1, 8), layers=st.integers(1, 5))
def test_receptive_field_of_sliding_windows(n, window, layers):
    field = receptive_field([sliding_window_mask(n, window)] * layers)
    # reference: reach back exactly layers * (window - 1) tokens (a path of shifts)
    np.testing.assert_array_equal(field, sliding_window_mask(n, layers * (window - 1) + 1))


@given(n=st.integers(2, 30), chunk=st.integers(1, 8), layers=st.integers(1, 5))
def test_receptive_field_of_chunks_stays_in_chunk(n, chunk, layers):
    np.testing.assert_array_equal(receptive_field([chunked_mask(n, chunk)] * layers),
                                  chunked_mask(n, chunk))


def test_receptive_field_of_a_global_layer_is_causal():
    masks = [chunked_mask(12, 3)] * 3 + [causal_mask(12)]
    np.testing.assert_array_equal(receptive_field(masks), causal_mask(12))


@pytest.mark.parametrize("call, match", [
    (lambda: causal_mask(0), "n must be"),
    (lambda: sliding_window_mask(4, 0), "window must be"),
    (lambda: chunked_mask(4, 2.5), "chunk must be"),
    (lambda: reach_mask(4, "band", 2), "reach must be one of"),
    (lambda: receptive_field([]), "at least one"),
    (lambda: receptive_field([causal_mask(3), causal_mask(4)]), r"masks\[1\]"),
    (lambda: receptive_field(causal_mask(3)), "sequence of"),
])
def test_bad_arguments(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
