"""The key-value retrieval task (posenc.retrieval): deterministic generators whose every
answer is checked from the sequence alone, and an evaluation harness checked with an
oracle model that looks the answer up by hand."""

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from posenc import retrieval
from posenc.data import load_stdlib_corpus
from posenc.experiments.extrapolation import ExtrapolationConfig, retrieval_accuracy
from posenc.retrieval import KEY_BYTES, VALUE_BYTES

TEXT = np.frombuffer(b"def f(x):\n    return x + 1\n" * 200, dtype=np.uint8)


def _same(a, b):
    return all(torch.equal(x, y) for x, y in zip((a.inputs, a.targets, a.distances),
                                                   (b.inputs, b.targets, b.distances),
                                                   strict=True))


def test_key_and_value_bytes_are_outside_the_text_and_disjoint():
    corpus = load_stdlib_corpus()
    assert corpus.train.max() < KEY_BYTES.min() and corpus.heldout.max() < KEY_BYTES.min()
    values = VALUE_BYTES.ravel()
    assert len(set(values)) == values.size == 120 and not set(values) & set(KEY_BYTES)
    assert VALUE_BYTES.shape == (len(KEY_BYTES), 15) and values.max() == 255


def test_training_batch_is_deterministic_and_every_answer_checks():
    a = retrieval.training_batch(TEXT, 8, 64, np.random.default_rng(3))
    b = retrieval.training_batch(TEXT, 8, 64, np.random.default_rng(3))
    c = retrieval.training_batch(TEXT, 8, 64, np.random.default_rng(4))
    assert _same(a, b) and not _same(a, c)
    assert a.inputs.shape == a.targets.shape == a.distances.shape == (8, 64)
    assert a.inputs.dtype == a.targets.dtype == torch.int64
    assert (a.mask.sum(1) == 4).all()  # num_queries scored answers per sequence
    assert (a.distances[a.mask] >= 1).all() and (a.distances[~a.mask] == 0).all()
    retrieval.check_answers(a)
    for row in a.inputs:  # 4 distinct keys, each written once as a pair and again per query
        keys = row[(row >= 128) & (row < 136)]
        assert len(set(keys.tolist())) <= 4


def test_evaluation_batch_puts_the_answer_at_the_asked_distance():
    distances = [1, 5, 30, 62]
    batch = retrieval.evaluation_batch(TEXT, 64, distances, 3, seed=7)
    assert batch.inputs.shape == (12, 64)
    assert batch.mask[:, :-1].sum() == 0 and batch.mask[:, -1].all()  # one query, at the end
    assert batch.distances[:, -1].tolist() == [d for d in distances for _ in range(3)]
    retrieval.check_answers(batch)
    rows = torch.arange(12)
    value_pos = 63 - batch.distances[:, -1]
    assert torch.equal(batch.inputs[rows, value_pos], batch.targets[:, -1])
    assert torch.equal(batch.inputs[rows, value_pos - 1], batch.inputs[:, -1])  # its key
    assert _same(batch, retrieval.evaluation_batch(TEXT, 64, distances, 3, seed=7))
    assert not _same(batch, retrieval.evaluation_batch(TEXT, 64, distances, 3, seed=8))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(16, 200),
       pairs=st.integers(1, 4), queries=st.integers(1, 3), task=st.sampled_from(retrieval.TASKS))
def test_generators_keep_their_promises(seed, length, pairs, queries, task):
    half = length // 2
    assume(2 * pairs <= half - 1 and 2 * queries <= length - half - 1)  # else: ValueError
    rng = np.random.default_rng(seed)
    train = retrieval.training_batch(TEXT, 2, length, rng, num_pairs=pairs,
                                     num_queries=queries, task=task)
    retrieval.check_answers(train, task)
    distances = retrieval.evaluation_distances(length, min(4, length - 2))
    held = retrieval.evaluation_batch(TEXT, length, distances, 2, seed % 1000,
                                      num_pairs=pairs, task=task)
    retrieval.check_answers(held, task)
    # the order-aware reader answers every query of either task
    assert retrieval.oracle_accuracy(train, retrieval.order_aware_answer) == 1.0
    assert retrieval.oracle_accuracy(held, retrieval.order_aware_answer) == 1.0
    # outside the pairs and queries the haystack is untouched text
    assert (train.inputs[train.inputs < 128] < 128).all()
    assert int(((held.inputs >= 128) & (held.inputs < 136)).sum()) == len(distances) * 2 * (
        pairs + 1)


def test_check_answers_catches_a_wrong_answer_and_a_wrong_distance():
    batch = retrieval.evaluation_batch(TEXT, 32, [4, 9], 2, seed=0)
    wrong = batch.targets.clone()
    key = int(batch.inputs[0, -1]) - 128
    wrong[0, -1] = VALUE_BYTES[key][(list(VALUE_BYTES[key]).index(int(wrong[0, -1])) + 1) % 15]
    with pytest.raises(AssertionError, match="not the key's value"):
        retrieval.check_answers(retrieval.RetrievalBatch(batch.inputs, wrong, batch.distances))
    far = batch.distances.clone()
    far[1, -1] += 1
    with pytest.raises(AssertionError, match="distance"):
        retrieval.check_answers(retrieval.RetrievalBatch(batch.inputs, batch.targets, far))


@given(length=st.integers(4, 4096), count=st.integers(1, 16))
def test_evaluation_distances_are_spread_over_the_window(length, count):
    if count > length - 2:
        with pytest.raises(ValueError, match="count"):
            retrieval.evaluation_distances(length, count)
        return
    d = retrieval.evaluation_distances(length, count)
    assert d.shape == (count,) and d.min() >= 1 and d.max() <= length - 2
    assert np.all(np.diff(d) >= 0)
    if count > 1 and length >= 8 * count:
        assert d[0] < length / count and d[-1] > length - length / count - 2


@pytest.mark.parametrize("call, message", [
    (lambda: retrieval.training_batch(TEXT.astype(np.int64), 2, 32, np.random.default_rng()),
     "uint8"),
    (lambda: retrieval.training_batch(np.full(100, 200, np.uint8), 2, 32,
                                      np.random.default_rng()), "ASCII"),
    (lambda: retrieval.training_batch(TEXT, 2, 16, np.random.default_rng(), num_pairs=9),
     "num_pairs"),
    (lambda: retrieval.training_batch(TEXT, 2, 12, np.random.default_rng(), num_pairs=4),
     "too short"),
    (lambda: retrieval.training_batch(TEXT[:20], 2, 32, np.random.default_rng()), "bytes"),
    (lambda: retrieval.evaluation_batch(TEXT, 32, [31], 2, seed=0), "distances"),
    (lambda: retrieval.evaluation_batch(TEXT, 32, [0], 2, seed=0), "distances"),
    (lambda: retrieval.evaluation_batch(TEXT, 32, [4], 0, seed=0), "per_distance"),
    (lambda: retrieval.evaluation_batch(TEXT, 32, [4], 2, seed=-1), "seed"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


class _Oracle(torch.nn.Module):
    """Looks the answer up by hand: logit 1 on the byte after the last earlier copy of the
    current byte (an induction head written out), 0 elsewhere."""

    def forward(self, tokens):
        logits = torch.zeros(*tokens.shape, 256)
        for b, row in enumerate(tokens.tolist()):
            last = row[-1]
            earlier = [p for p in range(len(row) - 1) if row[p] == last]
            if earlier:
                logits[b, -1, row[earlier[-1] + 1]] = 1.0
        return logits


class _Constant(torch.nn.Module):
    def forward(self, tokens):
        logits = torch.zeros(*tokens.shape, 256)
        logits[..., int(VALUE_BYTES[0, 0])] = 1.0
        return logits


def test_retrieval_accuracy_is_one_for_an_oracle_and_low_for_a_constant_guess():
    config = ExtrapolationConfig(train_length=32, retrieval_batch_size=4, retrieval_distances=4,
                                 retrieval_per_distance=8, eval_tokens=4096)
    distances, accuracy = retrieval_accuracy(_Oracle(), config, TEXT, 64)
    assert distances.tolist() == retrieval.evaluation_distances(64, 4).tolist()
    assert accuracy.tolist() == [1.0] * 4
    _, accuracy = retrieval_accuracy(_Constant(), config, TEXT, 64)
    assert accuracy.mean() < 0.25  # right only when the value happens to be that byte


# --- content vs positional: which one needs order --------------------------------------------

def _task_batches(task, seed=0, per_distance=150, length=96, pairs=4):
    corpus = load_stdlib_corpus()
    held = retrieval.evaluation_batch(corpus.heldout, length,
                                      retrieval.evaluation_distances(length, 8), per_distance,
                                      seed=seed, num_pairs=pairs, task=task)
    train = retrieval.training_batch(corpus.train, 64, length, np.random.default_rng(seed),
                                     num_pairs=pairs, task=task)
    return held, train


@pytest.mark.parametrize("pairs", [2, 4])
def test_content_task_needs_no_order_and_positional_task_does(pairs):
    """The issue's test of the tasks: a reader who sees only the multiset of context bytes
    and the query (order-blind) scores 100 % on the content task and chance (1 / pairs)
    on the positional one; a reader who sees order scores 100 % on both."""
    content, content_train = _task_batches("content", pairs=pairs)
    positional, positional_train = _task_batches("positional", pairs=pairs)
    blind, aware = retrieval.order_blind_answer, retrieval.order_aware_answer
    for batch in (content, content_train, positional, positional_train):
        assert retrieval.oracle_accuracy(batch, aware) == 1.0
    assert retrieval.oracle_accuracy(content, blind) == 1.0
    assert retrieval.oracle_accuracy(content_train, blind) == 1.0
    n = positional.inputs.shape[0]  # 1,200 single-query sequences
    chance = 1 / pairs
    # within 4 binomial standard deviations of chance
    assert abs(retrieval.oracle_accuracy(positional, blind) - chance) < 4 * (
        chance * (1 - chance) / n) ** 0.5


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), pairs=st.integers(2, 6))
def test_no_order_blind_reader_beats_chance_on_the_positional_task(seed, pairs):
    """Why no reader of the multiset can do better than chance: swapping the values of the
    queried pair and any other pair leaves the multiset of bytes (and the query) exactly
    as it was, is again a valid positional sequence, and changes the answer. So the
    multiset decides nothing; an order-blind reader's answer is the same for both."""
    batch = retrieval.evaluation_batch(TEXT, 48, [9], 1, seed=seed, num_pairs=pairs,
                                       task="positional")
    row, target = batch.inputs[0].numpy().copy(), int(batch.targets[0, -1])
    t = len(row) - 1
    keys = [p for p in range(t) if row[p] in KEY_BYTES]
    answer_at = next(p + 1 for p in keys if row[p] == row[t])
    for p in keys:
        if p + 1 == answer_at:
            continue
        swapped = row.copy()
        swapped[answer_at], swapped[p + 1] = row[p + 1], row[answer_at]
        assert sorted(swapped.tolist()) == sorted(row.tolist())  # same multiset, same query
        targets = batch.targets.clone()
        targets[0, -1] = int(swapped[answer_at])
        twin = retrieval.RetrievalBatch(torch.from_numpy(swapped[None]), targets,
                                        batch.distances)
        retrieval.check_answers(twin, "positional")  # a valid sequence of the task
        assert int(swapped[answer_at]) != target  # with another answer
        assert retrieval.order_blind_answer(swapped, t) == retrieval.order_blind_answer(row, t)
        assert retrieval.order_aware_answer(swapped, t) == int(swapped[answer_at])


def test_tasks_share_their_bytes_and_positional_values_ignore_the_key():
    """Both tasks use the same keys and value bytes (a model cannot tell the task from the
    bytes); on the positional task a value is any of the 120, not its key's own."""
    _, train = _task_batches("positional", length=128, pairs=4)
    inputs, targets = train.inputs.numpy(), train.targets.numpy()
    own = [targets[i, t] in VALUE_BYTES[inputs[i, t] - KEY_BYTES[0]]
           for i, t in zip(*np.nonzero(targets != retrieval.IGNORE), strict=True)]
    assert np.mean(own) < 0.2  # 1/8 expected by chance
    assert set(np.unique(targets[targets != retrieval.IGNORE])) <= set(VALUE_BYTES.ravel())


def test_task_is_checked():
    with pytest.raises(ValueError, match="task must be one of 'content', 'positional'"):
        retrieval.training_batch(TEXT, 2, 32, np.random.default_rng(), task="order")
    with pytest.raises(ValueError, match="task must be one of"):
        retrieval.evaluation_batch(TEXT, 32, [3], 1, seed=0, task="")
