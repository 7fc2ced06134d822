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
    written = 2 * pairs if task == "rebinding" else pairs  # rebinding: up to 2 per key
    assume(2 * written <= half - 1 and 2 * queries <= length - half - 1)  # else: ValueError
    rng = np.random.default_rng(seed)
    train = retrieval.training_batch(TEXT, 2, length, rng, num_pairs=pairs,
                                     num_queries=queries, task=task)
    retrieval.check_answers(train, task)
    stale = 1 if task == "rebinding" else 0  # the queried key's stale pair
    distances = retrieval.evaluation_distances(length, min(4, length - 2))
    distances = distances[distances <= length - 2 - 2 * stale]
    held = retrieval.evaluation_batch(TEXT, length, distances, 2, seed % 1000,
                                      num_pairs=pairs, task=task)
    retrieval.check_answers(held, task)
    # the order-aware reader answers every query of either task
    assert retrieval.oracle_accuracy(train, retrieval.order_aware_answer) == 1.0
    assert retrieval.oracle_accuracy(held, retrieval.order_aware_answer) == 1.0
    # outside the pairs and queries the haystack is untouched text
    assert (train.inputs[train.inputs < 128] < 128).all()
    assert int(((held.inputs >= 128) & (held.inputs < 136)).sum()) == len(distances) * 2 * (
        pairs + 1 + stale)


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


# --- rebinding: the latest binding, which order but not the prefix set tells -----------------

def _bindings(row, end):
    """``{key: [the value after each of its occurrences before end]}``, in order."""
    found = {}
    for p in range(end):
        if row[p] in KEY_BYTES:
            found.setdefault(int(row[p]), []).append(int(row[p + 1]))
    return found


def test_rebinding_training_sequences_rebind_some_keys_and_ask_for_the_latest():
    """Each sequence binds 1 .. num_pairs of its keys twice, with two different values,
    the stale binding first, both in the first half; every value of a sequence is distinct
    (as on the positional task); each query's answer is its key's latest binding, and its
    distance is to that binding. Over many sequences every count of rebound keys occurs."""
    _, train = _task_batches("rebinding", length=64, pairs=4)
    retrieval.check_answers(train, "rebinding")
    rebound_counts = set()
    for row, target, distance in zip(train.inputs.numpy(), train.targets.numpy(),
                                     train.distances.numpy(), strict=True):
        first = int(np.nonzero(target != retrieval.IGNORE)[0][0])
        assert first >= 32  # queries in the second half
        pairs = _bindings(row, first)
        assert len(pairs) == 4 and all(len(v) in (1, 2) for v in pairs.values())
        rebound = [k for k, v in pairs.items() if len(v) == 2]
        assert all(pairs[k][0] != pairs[k][1] for k in rebound)
        values = [v for vs in pairs.values() for v in vs]
        assert len(set(values)) == len(values)  # distinct, stale ones included
        rebound_counts.add(len(rebound))
        for t in np.nonzero(target != retrieval.IGNORE)[0]:
            latest = _bindings(row, t)[int(row[t])][-1]
            assert target[t] == latest == row[t - distance[t]]
    assert rebound_counts == {1, 2, 3, 4}


def test_rebinding_evaluation_puts_a_stale_binding_before_the_scored_one():
    distances = retrieval.evaluation_distances(64, 8)
    batch = retrieval.evaluation_batch(load_stdlib_corpus().heldout, 64, distances, 16,
                                       seed=64, task="rebinding")
    retrieval.check_answers(batch, "rebinding")
    assert batch.distances[:, -1].tolist() == [d for d in distances.tolist() for _ in range(16)]
    for row, target in zip(batch.inputs.numpy(), batch.targets.numpy(), strict=True):
        t = len(row) - 1
        occurrences = np.nonzero(row[:t] == row[t])[0]
        assert len(occurrences) == 2  # stale, then the scored binding
        assert row[occurrences[0] + 1] != row[occurrences[1] + 1] == target[t]
        pairs = _bindings(row, t)
        assert len(pairs) == 4 and sum(len(v) for v in pairs.values()) == 5  # distractors once
    # the same seed, the same sequences; the positional task's are not these
    assert _same(batch, retrieval.evaluation_batch(load_stdlib_corpus().heldout, 64, distances,
                                                   16, seed=64, task="rebinding"))


@pytest.mark.parametrize("pairs", [2, 4])
def test_rebinding_needs_order_and_the_latest_occurrence_answers_it(pairs):
    """The order-blind reader stays at chance: on the evaluation batch 1 / (pairs + 1) (the
    stale value is one more candidate; within 4 binomial standard deviations); the reader
    who takes the most recent occurrence scores 100 %, in either layout."""
    held, train = _task_batches("rebinding", pairs=pairs)
    for batch in (held, train):
        assert retrieval.oracle_accuracy(batch, retrieval.order_aware_answer) == 1.0
    n, chance = held.inputs.shape[0], 1 / (pairs + 1)
    assert abs(retrieval.oracle_accuracy(held, retrieval.order_blind_answer) - chance) < 4 * (
        chance * (1 - chance) / n) ** 0.5


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), pairs=st.integers(1, 6), distance=st.integers(1, 44))
def test_no_order_blind_reader_beats_chance_on_rebinding(seed, pairs, distance):
    """Swap the scored value with any other value of the sequence (the stale one
    included): the multiset and the query are unchanged, the sequence is again a valid
    rebinding sequence, and the answer is another value. So an order-blind reader, which
    answers both alike, is right on at most one of them."""
    batch = retrieval.evaluation_batch(TEXT, 48, [distance], 1, seed=seed, num_pairs=pairs,
                                       task="rebinding")
    row = batch.inputs[0].numpy()
    t, answer_at = len(row) - 1, len(row) - 1 - distance
    others = [p + 1 for p in range(t) if row[p] in KEY_BYTES and p + 1 != answer_at]
    assert len(others) == pairs  # the stale binding and the distractors
    for other in others:
        swapped = row.copy()
        swapped[answer_at], swapped[other] = row[other], row[answer_at]
        assert sorted(swapped.tolist()) == sorted(row.tolist())
        targets = batch.targets.clone()
        targets[0, -1] = int(swapped[answer_at])
        retrieval.check_answers(retrieval.RetrievalBatch(torch.from_numpy(swapped[None]),
                                                         targets, batch.distances), "rebinding")
        assert swapped[answer_at] != row[answer_at]
        assert retrieval.order_blind_answer(swapped, t) == retrieval.order_blind_answer(row, t)


def test_check_answers_catches_a_stale_answer_and_a_third_binding():
    batch = retrieval.evaluation_batch(TEXT, 48, [6], 1, seed=3, task="rebinding")
    row, t = batch.inputs[0].numpy(), 47
    stale_at = np.nonzero(row[:t] == row[t])[0][0] + 1
    stale = batch.targets.clone()
    stale[0, -1] = int(row[stale_at])
    with pytest.raises(AssertionError, match="not the key's value"):
        retrieval.check_answers(retrieval.RetrievalBatch(batch.inputs, stale, batch.distances),
                                "rebinding")
    # the positional task's check refuses a key with two values
    with pytest.raises(AssertionError, match="two values"):
        retrieval.check_answers(batch, "positional")
    # K1 bound to v0, then v1, then v0 again: rebound twice, refused though the last
    # binding answers the query
    k, v0, v1 = 129, 140, 141
    row = torch.tensor([[10, k, v0, k, v1, k, v0, 20, k]])  # the query last
    target = torch.full_like(row, retrieval.IGNORE)
    target[0, 8] = v0
    distance = torch.zeros_like(row)
    distance[0, 8] = 2
    with pytest.raises(AssertionError, match="rebound more than once"):
        retrieval.check_answers(retrieval.RetrievalBatch(row, target, distance), "rebinding")
    row[0, 5:7] = torch.tensor([20, 21])  # once rebound: valid, the answer is v1
    target[0, 8], distance[0, 8] = v1, 4
    retrieval.check_answers(retrieval.RetrievalBatch(row, target, distance), "rebinding")


def test_rebinding_arguments_are_checked():
    with pytest.raises(ValueError, match="distances must be a non-empty list in 1..length-4"):
        retrieval.evaluation_batch(TEXT, 32, [29], 2, seed=0, task="rebinding")
    retrieval.evaluation_batch(TEXT, 32, [28], 2, seed=0, task="rebinding")  # room: 2 bytes
    with pytest.raises(ValueError, match="too short for 8 pairs"):
        retrieval.training_batch(TEXT, 2, 32, np.random.default_rng(), num_pairs=4,
                                 task="rebinding")  # 16 bytes of pairs, 15 in the half
    retrieval.training_batch(TEXT, 2, 34, np.random.default_rng(), num_pairs=4,
                             num_queries=2, task="rebinding")
    with pytest.raises(ValueError, match="does not fit"):
        retrieval.evaluation_batch(TEXT, 11, [3], 1, seed=0, num_pairs=4, task="rebinding")
    retrieval.evaluation_batch(TEXT, 11, [3], 1, seed=0, num_pairs=4, task="positional")
    assert "⟨v" in retrieval.describe(retrieval.VALUE_BYTES[:1, :3].ravel(), "rebinding")


def test_rebinding_sequences_always_fit_however_full():
    """Up to the sizes the checks allow (2 * num_pairs + 4 bytes for an evaluation
    sequence, 4 * num_pairs <= length // 2 - 1 in training), placement never dead-ends:
    each pair goes only where the rest still fit."""
    for pairs in range(1, 9):
        length = 2 * pairs + 4
        for d in range(1, length - 3):
            batch = retrieval.evaluation_batch(TEXT, length, [d], 4, seed=d, num_pairs=pairs,
                                               task="rebinding")
            retrieval.check_answers(batch, "rebinding")
        length = 2 * (4 * pairs + 1)
        batch = retrieval.training_batch(TEXT, 16, length, np.random.default_rng(pairs),
                                         num_pairs=pairs, num_queries=(length // 2 - 1) // 2,
                                         task="rebinding")
        retrieval.check_answers(batch, "rebinding")


#: Digests of the two older tasks' batches, made by the generators before "rebinding" was
#: added (test_the_older_tasks_sequences_are_pinned).
PINNED = {"content": ("1e598c3f8e1ca94e", "56ec7d3df8b5dc11"),
          "positional": ("be0b9d661e36b926", "0e84fbe10f0c1e61")}


def test_the_older_tasks_sequences_are_pinned():
    """Adding a task changes no sequence of the two the committed results were run on
    (same seed, same bytes): digests of a training and an evaluation batch of each."""
    import hashlib

    def digest(batch):
        return hashlib.sha256(b"".join(a.numpy().tobytes() for a in (
            batch.inputs, batch.targets, batch.distances))).hexdigest()[:16]

    found = {}
    for task in ("content", "positional"):
        found[task] = (
            digest(retrieval.training_batch(TEXT, 8, 64, np.random.default_rng([0, 2]),
                                            task=task)),
            digest(retrieval.evaluation_batch(TEXT, 128, retrieval.evaluation_distances(128, 8),
                                              4, seed=128, task=task)))
    assert found == PINNED


def test_the_experiment_takes_rebinding_as_an_option_and_only_its_preset_trains_it():
    from posenc.experiments.extrapolation import PRESETS, format_summary, run_experiment

    assert ExtrapolationConfig().retrieval_tasks == ("content",)
    assert [n for n, c in PRESETS.items() if "rebinding" in c.retrieval_tasks] == ["rebinding"]
    config = PRESETS["text-small"].replace(
        encodings=("alibi",), steps=2, eval_tokens=256, log_every=1, d_model=16,
        num_layers=1, d_ff=32, retrieval_batch_size=2, retrieval_tasks=("content", "rebinding"),
        retrieval_pairs=2, retrieval_queries=2, retrieval_distances=2,
        retrieval_per_distance=2, num_seeds=2)
    results = run_experiment(config, progress=False)
    entry = results["variants"]["alibi"]  # merged over the two seeds, as any task's
    assert len(entry["rebinding_accuracy"]) == 4 and len(entry["rebinding_by_distance"]) == 4
    assert len(entry["rebinding_accuracy_by_seed"]) == 2
    assert "rebinding_loss" in entry["history"]
    assert "rebinding retrieval accuracy" in format_summary(results)
    distances, accuracy = retrieval_accuracy(_Oracle(), config, TEXT, 64, "rebinding")
    assert accuracy.tolist() == [1.0, 1.0]  # the most recent occurrence answers it
    with pytest.raises(ValueError, match="stale pair needs room"):
        ExtrapolationConfig(train_length=32, retrieval_batch_size=4, retrieval_distances=8,
                            retrieval_tasks=("rebinding",), retrieval_pairs=2, eval_tokens=4096)
    with pytest.raises(ValueError, match="2 \\* retrieval_pairs = 8 pairs must fit"):
        ExtrapolationConfig(train_length=32, retrieval_batch_size=4, retrieval_distances=4,
                            retrieval_tasks=("rebinding",), retrieval_pairs=4, eval_tokens=4096)
    # with retrieval off, the task list is not checked against the lengths
    ExtrapolationConfig(train_length=32, retrieval_tasks=("rebinding",), eval_tokens=4096)
