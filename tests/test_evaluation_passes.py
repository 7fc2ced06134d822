"""Evaluation in passes sized for the CPU's cache (chapter 13's runner): how many sequences
one forward pass takes, and that the numbers do not depend on it."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc import retrieval
from posenc.data import contiguous_windows, load_stdlib_corpus
from posenc.experiments.extrapolation import ExtrapolationConfig, retrieval_accuracy
from posenc.experiments.extrapolation.evaluation import (
    SCORES_PER_PASS,
    per_position_loss,
    rows_per_pass,
)
from posenc.model import TinyLM, TinyLMConfig


@settings(max_examples=200, deadline=None)
@given(length=st.integers(1, 4096), batch_size=st.integers(1, 256))
def test_rows_per_pass_keeps_the_scores_in_budget_and_at_least_two_rows(length, batch_size):
    rows = rows_per_pass(length, batch_size)
    assert 1 <= rows <= batch_size
    # within the budget, or at the floor of two rows (one when the batch has one)
    assert rows * length ** 2 <= SCORES_PER_PASS or rows == min(2, batch_size)
    # as many as the budget allows: one more row would pass it (or the batch is whole)
    assert rows == batch_size or (rows + 1) * length ** 2 > SCORES_PER_PASS or rows == 2
    assert rows_per_pass(length + 1, batch_size) <= rows  # longer sequences, fewer rows


def test_rows_per_pass_at_chapter_13s_lengths():
    # 16 per pass at L_train = 64, down to the floor of 2 at 4x and 8x
    assert [rows_per_pass(64 * m, 16) for m in (1, 2, 4, 8)] == [16, 4, 2, 2]


@pytest.mark.parametrize("call, error, name", [
    (lambda: rows_per_pass(0, 16), ValueError, "length"),
    (lambda: rows_per_pass(64, 0), ValueError, "batch_size"),
    (lambda: rows_per_pass(64.0, 16), TypeError, "length"),
    (lambda: rows_per_pass(64, "16"), TypeError, "batch_size"),
])
def test_rows_per_pass_names_a_bad_argument(call, error, name):
    with pytest.raises(error, match=name):
        call()


@pytest.fixture(scope="module")
def text():
    return load_stdlib_corpus().heldout[:200_000]


@pytest.mark.parametrize("position", ["cope", "stick_breaking", "shaw", "alibi", "rope"])
def test_loss_and_accuracy_do_not_depend_on_the_pass_size(position, text):
    """At 128 tokens a pass takes 4 of 16 sequences; every number matches one pass of all 16
    (and, for the loss, a direct cross-entropy of the whole batch)."""
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(d_model=16, num_heads=2, num_layers=2, d_ff=32,
                                position=position)).eval()
    inputs, targets = contiguous_windows(text, 128, 16 * 128)
    assert rows_per_pass(128, 16) == 4
    with torch.no_grad():  # the reference: all 16 windows in one pass
        whole = F.cross_entropy(model(inputs).transpose(1, 2), targets, reduction="none")
    np.testing.assert_allclose(per_position_loss(model, inputs, targets, 16),
                               whole.double().mean(0).numpy(), rtol=1e-5)
    config = ExtrapolationConfig(train_length=32, retrieval_distances=2,
                                 retrieval_per_distance=8, eval_batch_size=16)
    distances, in_passes = retrieval_accuracy(model, config, text, 128, "positional")
    batch = retrieval.evaluation_batch(text, 128, distances, 8, seed=128,
                                       num_pairs=config.retrieval_pairs, task="positional")
    with torch.no_grad():  # all 16 sequences in one pass
        right = model(batch.inputs)[:, -1].argmax(-1) == batch.targets[:, -1]
    np.testing.assert_array_equal(in_passes, right.double().view(2, 8).mean(1).numpy())
