"""Key-value retrieval hidden in text, three ways: by content, by order, by the latest binding.

Perplexity on text says how well a model predicts the next byte on average; it does not
say whether the model can *use* a token far back. These tasks ask exactly that (an
associative-recall / "needle in a haystack" task, as in Zoology's MQAR and the passkey
tests of Mohtashami & Jaggi, 2023, and Chen et al., 2023, scaled to bytes):

* the haystack is ordinary text (bytes of Python source, all below 128);
* ``num_pairs`` *pairs* are written over it: a key byte (one of the 8 :data:`KEY_BYTES`,
  128..135, never in the text) immediately followed by a value byte (136..255); the keys
  of one sequence are distinct;
* a *query* is a key written again later: the byte after it must be that key's value.

The three :data:`TASKS` differ in how values are drawn and bound:

* ``"content"``: each key has its own 15 values (row ``k`` of :data:`VALUE_BYTES`), so
  the value says which key it belongs to. The answer is the one byte in the context from
  the query key's row: a reader who sees only the *multiset* of context bytes (a bag of
  bytes, no order) answers every query. It tests finding and copying a token far back,
  not position: the course keeps it as the **content control**. A model that guesses
  among the key's values gets 1/15 (6.7 %).
* ``"positional"``: values are drawn from all 120 value bytes, distinct within a
  sequence, whatever the key (Zoology's MQAR with shared values). Only *where* a value
  sits, right after its key, binds it to the key: swapping two pairs' values leaves the
  multiset of bytes unchanged and changes the answer, so an order-blind reader scores
  1 / ``num_pairs`` (chance among the values present) and a reader who sees order, 100 %
  (:func:`order_blind_answer`, :func:`order_aware_answer`; both tested). It needs ORDER,
  not position: the causal mask alone gives it. Keys are distinct, so each value is
  labelled by the set of keys at or before it, and the query's key is the newest member of
  its own value's set. Two causal attention layers with no position signal read that label
  and score 100 % at every length (:mod:`posenc.order_circuit`; the review of 2026-11-29,
  finding 13.2 and appendix A). An induction step (a head that marks each value with the
  key right before it, a relative offset of 1) is one way to solve it, not the only one.
* ``"rebinding"``: values drawn as in ``"positional"`` (shared by all keys, distinct within
  a sequence), but some keys are written TWICE with two different values, the second
  binding later, and a query asks for its key's LATEST binding. In training ``1 ..
  num_pairs`` of the keys (how many is drawn per sequence) are rebound and queries ask any
  key; in evaluation the queried key is always rebound, with its stale binding placed
  before the scored one. The order-blind reader is still at chance (the multiset is the
  same whichever value the later binding holds) and the order-aware reader still scores
  100 % (the most recent occurrence). The prefix-set circuit of :mod:`posenc.order_circuit`
  no longer solves it: it reads the key's share of each value's prefix, ``1 / n1`` at the
  stale value and ``2 / n2`` at the latest (``n1``, ``n2``: the key bytes up to each), so
  it answers the latest binding only where ``n2 < 2 n1``, about half the evaluation
  queries, whichever binding is the later.

Shapes: a batch is ``(inputs, targets)``, both int64 ``[batch, length]``; ``targets`` is
the next byte at every query position and :data:`IGNORE` (-100, what
``torch.nn.functional.cross_entropy`` skips) elsewhere. Everything is drawn from a
``numpy.random.Generator``, so the same seed gives the same sequences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ._validation import check_choice, check_int

__all__ = [
    "TASKS",
    "KEY_BYTES",
    "VALUE_BYTES",
    "IGNORE",
    "RetrievalBatch",
    "training_batch",
    "evaluation_batch",
    "evaluation_distances",
    "check_answers",
    "order_aware_answer",
    "order_blind_answer",
    "oracle_accuracy",
    "describe",
]

#: The retrieval tasks: ``"content"`` (each key has its own values: the value says which key
#: it belongs to), ``"positional"`` (values shared by all keys: only where a value sits,
#: right after its key, binds it) and ``"rebinding"`` (as positional, but some keys are
#: bound twice and a query asks for the later binding). New tasks go at the end: a task's
#: index seeds its training stream (:mod:`posenc.experiments.extrapolation.training`).
TASKS = ("content", "positional", "rebinding")

#: The 8 key bytes (not ASCII, so never in the haystack).
KEY_BYTES = np.arange(128, 136, dtype=np.int64)
#: ``VALUE_BYTES[k]``: the 15 value bytes of key ``KEY_BYTES[k]`` (136..255, disjoint rows).
VALUE_BYTES = np.arange(136, 256, dtype=np.int64).reshape(len(KEY_BYTES), 15)
#: Target at positions that are not scored (``cross_entropy``'s default ``ignore_index``).
IGNORE = -100


@dataclass(frozen=True)
class RetrievalBatch:
    """Sequences with pairs and queries written over text.

    ``inputs``/``targets`` int64 ``[batch, length]`` (``targets`` is :data:`IGNORE`
    except after a query); ``distances`` int64 ``[batch, length]``: at a query position,
    how far back the value it must read is (query position minus value position), else 0.
    """

    inputs: torch.Tensor
    targets: torch.Tensor
    distances: torch.Tensor

    @property
    def mask(self) -> torch.Tensor:
        """Boolean ``[batch, length]``: the scored (query) positions."""
        return self.targets != IGNORE


def _check_text(text) -> np.ndarray:
    text = np.asarray(text)
    if text.ndim != 1 or text.dtype != np.uint8:
        raise TypeError(f"text must be a 1-D uint8 array of bytes, got {text.dtype} {text.shape}")
    if text.size and int(text.max()) >= int(KEY_BYTES[0]):
        raise ValueError("text must be ASCII (bytes < 128): the key and value bytes must not "
                         "occur in the haystack")
    return text


def _haystack(text: np.ndarray, length: int, rng: np.random.Generator) -> np.ndarray:
    if len(text) < length + 1:
        raise ValueError(f"text has {len(text)} bytes; need at least length + 1 = {length + 1}")
    start = int(rng.integers(0, len(text) - length))
    return text[start:start + length + 1].astype(np.int64)  # inputs and one byte more


def _pairs(num_pairs: int, rng: np.random.Generator,
           task: str) -> tuple[np.ndarray, np.ndarray]:
    """``num_pairs`` distinct keys and their values: for ``"content"`` one of each key's
    own values; for ``"positional"`` distinct values drawn from all 120, whoever's row."""
    rows = rng.choice(len(KEY_BYTES), num_pairs, replace=False)
    if task == "positional":
        return KEY_BYTES[rows], rng.choice(VALUE_BYTES.ravel(), num_pairs, replace=False)
    columns = rng.integers(0, VALUE_BYTES.shape[1], num_pairs)
    return KEY_BYTES[rows], VALUE_BYTES[rows, columns]


def _capacity(free: np.ndarray) -> int:
    """How many 2-byte pairs fit side by side in the runs of ``True`` of ``free`` (bool)."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], free.astype(np.int8), [0]))))
    return int(((edges[1::2] - edges[::2]) // 2).sum())


def _capacity_after(free: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """:func:`_capacity` of ``free`` once a pair is written at each of ``starts`` (indices
    into ``free``, each with both bytes free): the run of length ``r`` it splits at offset
    ``o`` holds ``o // 2 + (r - 2 - o) // 2`` pairs instead of ``r // 2``."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], free.astype(np.int8), [0]))))
    run_starts, run_lengths = edges[::2], edges[1::2] - edges[::2]
    run = np.searchsorted(run_starts, starts, side="right") - 1
    r, o = run_lengths[run], starts - run_starts[run]
    return int((run_lengths // 2).sum()) - r // 2 + o // 2 + (r - 2 - o) // 2


def _write_pair(seq: np.ndarray, taken: np.ndarray, key, value, lo: int, hi: int,
                rng: np.random.Generator, *, leave: int = 0, room=None) -> int:
    """Write ``key, value`` at a random start ``s`` in ``[lo, hi)`` where both bytes are
    free, mark them taken, and return ``s``.

    ``leave > 0``: only at a start that leaves room for ``leave`` more pairs with starts in
    ``room`` (``(lo, hi)`` if not given; it must contain ``[lo, hi)``), so that a nearly
    full sequence cannot dead-end (a pair placed mid-run can waste a byte on each side).
    ``"rebinding"`` uses it; the other tasks keep ``leave=0``, and with it the sequences
    they always had."""
    starts = np.arange(lo, hi)
    starts = starts[~taken[starts] & ~taken[starts + 1]]
    if leave:
        a, b = room or (lo, hi)
        free = ~taken[a:b + 1]
        if _capacity(free) < leave + 2:  # else no start can leave too little
            starts = starts[_capacity_after(free, starts - a) >= leave]
    s = int(rng.choice(starts))
    seq[s], seq[s + 1] = key, value
    taken[s:s + 2] = True
    return s


def _rebinding_values(num_pairs: int, rebound: int,
                      rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For ``"rebinding"``: ``num_pairs`` distinct keys, their latest values and the stale
    values of the first ``rebound`` keys, all ``num_pairs + rebound`` values distinct and
    drawn from all 120 (as ``"positional"``'s)."""
    keys = KEY_BYTES[rng.choice(len(KEY_BYTES), num_pairs, replace=False)]
    values = rng.choice(VALUE_BYTES.ravel(), num_pairs + rebound, replace=False)
    return keys, values[:num_pairs], values[num_pairs:]


def _write_rebinding_pairs(seq: np.ndarray, taken: np.ndarray, num_pairs: int, hi: int,
                           rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict]:
    """The pairs of a ``"rebinding"`` training sequence, at random free starts in ``[0,
    hi)``: ``1 .. num_pairs`` of the keys (drawn) written twice, the earlier pair with the
    stale value. Returns ``(keys, latest values, {key: position of its latest value})``."""
    rebound = int(rng.integers(1, num_pairs + 1))
    keys, values, stale = _rebinding_values(num_pairs, rebound, rng)
    todo = [*keys, *keys[:rebound]]
    starts = {}
    for i, key in enumerate(todo):
        start = _write_pair(seq, taken, key, 0, 0, hi, rng, leave=len(todo) - 1 - i)
        starts.setdefault(int(key), []).append(start)
    value_at = {}
    for j, key in enumerate(keys.tolist()):
        written = sorted(starts[key])  # one start, or two when rebound
        seq[written[-1] + 1] = values[j]
        if j < rebound:
            seq[written[0] + 1] = stale[j]
        value_at[key] = written[-1] + 1
    return keys, values, value_at


def training_batch(text, batch_size: int, length: int, rng: np.random.Generator, *,
                   num_pairs: int = 4, num_queries: int = 4,
                   task: str = "content") -> RetrievalBatch:
    """Training sequences: ``num_pairs`` pairs, then ``num_queries`` queries, all at random
    positions of a random text window of ``length`` bytes.

    Each query repeats a key written earlier, followed by its value (so later queries are
    teacher-forced, as in language-model training); every query is scored. The pairs sit
    in the first half of the sequence and the queries in the second, so distances range
    from 1 to about ``length``. ``"rebinding"``: ``1 .. num_pairs`` of the keys (drawn per
    sequence) are written twice, the earlier pair with a stale value; a query's answer, and
    its distance, are its key's latest binding (the later pair, or an earlier query's copy).
    """
    text, task = _check_text(text), check_choice("task", task, TASKS)
    batch_size, length = check_int("batch_size", batch_size), check_int("length", length)
    num_pairs = check_int("num_pairs", num_pairs)
    num_queries = check_int("num_queries", num_queries)
    if num_pairs > len(KEY_BYTES):
        raise ValueError(f"num_pairs must be at most {len(KEY_BYTES)}, got {num_pairs}")
    half = length // 2
    written = 2 * num_pairs if task == "rebinding" else num_pairs  # at most, when rebinding
    if 2 * written > half - 1 or 2 * num_queries > length - half - 1:
        raise ValueError(f"length={length} is too short for {written} pairs and "
                         f"{num_queries} queries (each takes 2 bytes in its half)")
    seqs, targets, distances = [], [], []
    for _ in range(batch_size):
        seq = _haystack(text, length, rng)
        target = np.full(length, IGNORE, dtype=np.int64)
        distance = np.zeros(length, dtype=np.int64)
        taken = np.zeros(length + 2, dtype=bool)
        if task == "rebinding":
            keys, values, value_at = _write_rebinding_pairs(seq, taken, num_pairs, half - 1, rng)
        else:
            keys, values = _pairs(num_pairs, rng, task)
            value_at = {}
            for key, value in zip(keys, values, strict=True):
                value_at[int(key)] = _write_pair(seq, taken, key, value, 0, half - 1, rng) + 1
        queries = []
        for i, q in enumerate(rng.choice(num_pairs, num_queries)):
            leave = num_queries - 1 - i if task == "rebinding" else 0
            s = _write_pair(seq, taken, keys[q], values[q], half, length - 1, rng, leave=leave)
            target[s] = values[q]  # the logit at the query predicts the value
            queries.append((s, int(keys[q])))
        for s, key in sorted(queries):  # in order: an earlier query's copy is nearer
            distance[s] = s - value_at[key]
            value_at[key] = s + 1
        seqs.append(seq[:-1])
        targets.append(target)
        distances.append(distance)
    return RetrievalBatch(*(torch.from_numpy(np.stack(a)) for a in (seqs, targets, distances)))


def evaluation_distances(length: int, count: int) -> np.ndarray:
    """``count`` distances spread evenly over what a sequence of ``length`` allows.

    The query is the last input byte (position ``length - 1``); its value can be at
    position 1 .. ``length - 2``, i.e. distances 1 .. ``length - 2``. Returns int64
    ``[count]``, centres of ``count`` equal bins of that range, increasing.
    """
    length, count = check_int("length", length, minimum=4), check_int("count", count)
    if count > length - 2:
        raise ValueError(f"count must be at most length - 2 = {length - 2}, got {count}")
    edges = np.linspace(1, length - 1, count + 1)
    return np.floor((edges[:-1] + edges[1:]) / 2).astype(np.int64)


def evaluation_batch(text, length: int, distances, per_distance: int, seed: int, *,
                     num_pairs: int = 4, task: str = "content") -> RetrievalBatch:
    """Evaluation sequences of ``length`` bytes with ONE query, the last input byte.

    For each distance ``d`` in ``distances``, ``per_distance`` sequences whose queried
    value sits exactly ``d`` bytes before the query; the other ``num_pairs - 1`` pairs
    (distractors) sit anywhere else. ``"rebinding"``: the queried key is also bound earlier
    to a stale value (another of the 120), at a random place before its scored pair, so
    ``d`` stays the distance to the value that answers it (at most ``length - 4``: the stale
    pair needs room before); the distractors are bound once. ``seed`` alone decides the
    sequences. Shapes: see :class:`RetrievalBatch`, with ``batch = len(distances) *
    per_distance``.
    """
    text, task = _check_text(text), check_choice("task", task, TASKS)
    length = check_int("length", length, minimum=4)
    per_distance, num_pairs = check_int("per_distance", per_distance), check_int("num_pairs",
                                                                                 num_pairs)
    check_int("seed", seed, minimum=0)
    extra = 2 if task == "rebinding" else 0  # the stale pair
    if num_pairs > len(KEY_BYTES) or 2 * num_pairs + 2 + extra > length:
        raise ValueError(f"num_pairs={num_pairs} does not fit: at most {len(KEY_BYTES)} keys "
                         f"and 2 * num_pairs + {2 + extra} <= length={length}")
    distances = np.asarray(distances, dtype=np.int64)
    farthest = length - 2 - extra
    if distances.ndim != 1 or distances.size == 0 or distances.min() < 1 \
            or distances.max() > farthest:
        raise ValueError(f"distances must be a non-empty list in 1..length-{2 + extra} = "
                         f"1..{farthest}, got {distances.tolist()}")
    rng = np.random.default_rng(seed)
    seqs, targets, dists = [], [], []
    query = length - 1
    for d in distances.tolist():
        for _ in range(per_distance):
            seq = _haystack(text, length, rng)
            taken = np.zeros(length + 2, dtype=bool)
            taken[query:] = True
            if task == "rebinding":
                keys, values, stale = _rebinding_values(num_pairs, 1, rng)
            else:
                keys, values = _pairs(num_pairs, rng, task)
            s = query - d - 1  # the queried key; its value at query - d
            seq[s], seq[s + 1] = keys[0], values[0]  # placed, not drawn
            taken[s:s + 2] = True
            if task == "rebinding":  # the stale binding, somewhere before the scored one
                _write_pair(seq, taken, keys[0], stale[0], 0, s - 1, rng,
                            leave=num_pairs - 1, room=(0, query - 1))
            for i, (key, value) in enumerate(zip(keys[1:], values[1:], strict=True)):
                leave = num_pairs - 2 - i if task == "rebinding" else 0
                _write_pair(seq, taken, key, value, 0, query - 1, rng, leave=leave)
            seq[query] = keys[0]
            target = np.full(length, IGNORE, dtype=np.int64)
            target[query] = values[0]
            distance = np.zeros(length, dtype=np.int64)
            distance[query] = d
            seqs.append(seq[:-1])
            targets.append(target)
            dists.append(distance)
    return RetrievalBatch(*(torch.from_numpy(np.stack(a)) for a in (seqs, targets, dists)))


def check_answers(batch: RetrievalBatch, task: str = "content") -> None:
    """Check every scored answer from the sequence alone; ``AssertionError`` if one is wrong.

    At each query position ``t``: the input is a key; its most recent earlier occurrence
    is followed by the target value, ``distances[t]`` bytes before ``t``; no key occurs
    with two different values, except on ``"rebinding"``, where a key has one or two
    (a rebound key exactly two: every occurrence after its first change of value keeps the
    new one, so the stale binding comes first). ``"content"``: the value is one of that
    key's own values; ``"positional"`` and ``"rebinding"``: no two keys of the sequence
    share a value (so swapping two pairs' values gives another valid sequence). An
    independent statement of what the generators promise.
    """
    task = check_choice("task", task, TASKS)
    inputs, targets, distances = (a.numpy() for a in (batch.inputs, batch.targets,
                                                      batch.distances))
    for row, target, distance in zip(inputs, targets, distances, strict=True):
        values = {}  # key -> its values, in order of occurrence
        for p in np.nonzero(np.isin(row[:-1], KEY_BYTES))[0]:
            values.setdefault(int(row[p]), []).append(int(row[p + 1]))
        if task == "rebinding":
            for seen in values.values():
                changes = sum(a != b for a, b in zip(seen, seen[1:], strict=False))
                assert changes <= 1, "a key is rebound more than once, or back to a stale value"
        else:
            assert all(len(set(v)) == 1 for v in values.values()), "a key has two values"
        if task != "content":
            bound = [b for v in values.values() for b in set(v)]
            assert len(set(bound)) == len(bound), "two keys share a value"
        for t in np.nonzero(target != IGNORE)[0]:
            key = row[t]
            assert key in KEY_BYTES, f"query byte {key} at {t} is not a key"
            earlier = np.nonzero(row[:t] == key)[0]
            assert earlier.size, f"query at {t} has no earlier pair"
            value_pos = earlier[-1] + 1
            assert row[value_pos] == target[t], f"answer at {t} is not the key's value"
            assert target[t] in VALUE_BYTES, f"answer at {t} is not a value byte"
            if task == "content":
                assert target[t] in VALUE_BYTES[key - KEY_BYTES[0]], f"value at {t} not the key's"
            assert t - value_pos == distance[t], f"distance at {t} is wrong"


def order_aware_answer(row, t: int) -> int:
    """The answer of a reader who sees the context IN ORDER: the byte that followed the
    most recent earlier occurrence of the query byte ``row[t]`` (an induction step).
    ``row``: int ``[length]``; ``-1`` when the query byte did not occur before."""
    row = np.asarray(row)
    earlier = np.nonzero(row[:t] == row[t])[0]
    return int(row[earlier[-1] + 1]) if earlier.size else -1


def order_blind_answer(row, t: int) -> int:
    """The answer of a reader who sees only the MULTISET of the bytes up to and including
    the query ``row[t]`` (which bytes, how often; not where).

    Its best rule: a value byte of the query key's own row if one is present (the content
    task's answer is the only one), else the smallest value byte present (on the
    positional and rebinding tasks every present value is as likely as another: permuting
    the values among the pairs, stale bindings included, leaves the multiset unchanged).
    ``-1`` when no value is present."""
    row = np.asarray(row)
    present = np.unique(row[:t + 1])
    values = present[np.isin(present, VALUE_BYTES)]
    key = int(row[t]) - int(KEY_BYTES[0])
    if 0 <= key < len(KEY_BYTES):
        own = values[np.isin(values, VALUE_BYTES[key])]
        if own.size:
            return int(own[0])
    return int(values[0]) if values.size else -1


def oracle_accuracy(batch: RetrievalBatch, oracle) -> float:
    """Fraction of the scored answers of ``batch`` that ``oracle(row, t)`` gets right
    (:func:`order_aware_answer`, :func:`order_blind_answer` or any such function)."""
    inputs, targets = batch.inputs.numpy(), batch.targets.numpy()
    right = [oracle(row, int(t)) == target[t]
             for row, target in zip(inputs, targets, strict=True)
             for t in np.nonzero(target != IGNORE)[0]]
    return float(np.mean(right))


def describe(row, task: str = "content") -> str:
    """A sequence as readable text: a key byte as ``⟨K3⟩``, other bytes as themselves
    (newlines as ``⏎``), and a value byte, for ``"content"``, as ``⟨3:07⟩`` (key 3's value
    7) or, for ``"positional"`` and ``"rebinding"`` (where values belong to no key), as
    ``⟨v55⟩`` (value 55 of 120)."""
    task = check_choice("task", task, TASKS)
    out = []
    for byte in np.asarray(row).tolist():
        if byte in KEY_BYTES:
            out.append(f"⟨K{byte - KEY_BYTES[0]}⟩")
        elif byte >= VALUE_BYTES[0, 0]:
            index = byte - int(VALUE_BYTES[0, 0])
            key, value = divmod(index, VALUE_BYTES.shape[1])
            out.append(f"⟨{key}:{value:02d}⟩" if task == "content" else f"⟨v{index}⟩")
        else:
            out.append("⏎" if byte == 10 else chr(byte))
    return "".join(out)
