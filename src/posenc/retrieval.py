"""Key-value retrieval hidden in text: a task whose answer sits a known distance back.

Perplexity on text says how well a model predicts the next byte on average; it does not
say whether the model can *use* a token far back. This task asks exactly that (an
associative-recall / "needle in a haystack" task, as in Zoology's MQAR and the passkey
tests of Mohtashami & Jaggi, 2023, and Chen et al., 2023, scaled to bytes):

* the haystack is ordinary text (bytes of Python source, all below 128);
* ``num_pairs`` *pairs* are written over it: a key byte (one of the 8
  :data:`KEY_BYTES`, 128..135, never in the text) immediately followed by a value byte
  from that key's own 15 values (row ``k`` of :data:`VALUE_BYTES`); the keys of one
  sequence are distinct;
* a *query* is a key written again later: the byte after it must be that key's value.

Each key has its own values, so the value says which key it belongs to: answering is a
content look-up (find the one byte of the query key's block, however far back, among
the other pairs and the text) and a copy. That is what "using a token far back" needs,
and what perplexity does not show. A model that only guesses gets 1/15 (6.7 %).

Why not values shared by all keys (Zoology's MQAR, where a value is bound to its key
only by coming right after it)? Binding needs an induction-style circuit, and the
course's tiny models did not learn it within a CPU budget: with 2 pairs, after 2,000
steps they stayed near 50 %, picking one of the two values present.

Shapes: a batch is ``(inputs, targets)``, both int64 ``[batch, length]``; ``targets`` is
the next byte at every query position and :data:`IGNORE` (-100, what
``torch.nn.functional.cross_entropy`` skips) elsewhere. Everything is drawn from a
``numpy.random.Generator``, so the same seed gives the same sequences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ._validation import check_int

__all__ = [
    "KEY_BYTES",
    "VALUE_BYTES",
    "IGNORE",
    "RetrievalBatch",
    "training_batch",
    "evaluation_batch",
    "evaluation_distances",
    "check_answers",
    "describe",
]

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


def _pairs(num_pairs: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``num_pairs`` distinct keys and, for each, one of its own values."""
    rows = rng.choice(len(KEY_BYTES), num_pairs, replace=False)
    columns = rng.integers(0, VALUE_BYTES.shape[1], num_pairs)
    return KEY_BYTES[rows], VALUE_BYTES[rows, columns]


def _write_pair(seq: np.ndarray, taken: np.ndarray, key, value, lo: int, hi: int,
                rng: np.random.Generator) -> int:
    """Write ``key, value`` at a random start ``s`` in ``[lo, hi)`` where both bytes are
    free, mark them taken, and return ``s``."""
    starts = np.arange(lo, hi)
    s = int(rng.choice(starts[~taken[starts] & ~taken[starts + 1]]))
    seq[s], seq[s + 1] = key, value
    taken[s:s + 2] = True
    return s


def training_batch(text, batch_size: int, length: int, rng: np.random.Generator, *,
                   num_pairs: int = 4, num_queries: int = 4) -> RetrievalBatch:
    """Training sequences: ``num_pairs`` pairs, then ``num_queries`` queries, all at random
    positions of a random text window of ``length`` bytes.

    Each query repeats a key written earlier, followed by its value (so later queries are
    teacher-forced, as in language-model training); every query is scored. The pairs sit
    in the first half of the sequence and the queries in the second, so distances range
    from 1 to about ``length``.
    """
    text = _check_text(text)
    batch_size, length = check_int("batch_size", batch_size), check_int("length", length)
    num_pairs = check_int("num_pairs", num_pairs)
    num_queries = check_int("num_queries", num_queries)
    if num_pairs > len(KEY_BYTES):
        raise ValueError(f"num_pairs must be at most {len(KEY_BYTES)}, got {num_pairs}")
    half = length // 2
    if 2 * num_pairs > half - 1 or 2 * num_queries > length - half - 1:
        raise ValueError(f"length={length} is too short for {num_pairs} pairs and "
                         f"{num_queries} queries (each takes 2 bytes in its half)")
    seqs, targets, distances = [], [], []
    for _ in range(batch_size):
        seq = _haystack(text, length, rng)
        target = np.full(length, IGNORE, dtype=np.int64)
        distance = np.zeros(length, dtype=np.int64)
        taken = np.zeros(length + 2, dtype=bool)
        keys, values = _pairs(num_pairs, rng)
        value_at = {}
        for key, value in zip(keys, values, strict=True):
            value_at[int(key)] = _write_pair(seq, taken, key, value, 0, half - 1, rng) + 1
        queries = []
        for q in rng.choice(num_pairs, num_queries):
            s = _write_pair(seq, taken, keys[q], values[q], half, length - 1, rng)
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
                     num_pairs: int = 4) -> RetrievalBatch:
    """Evaluation sequences of ``length`` bytes with ONE query, the last input byte.

    For each distance ``d`` in ``distances``, ``per_distance`` sequences whose queried
    value sits exactly ``d`` bytes before the query; the other ``num_pairs - 1`` pairs
    (distractors) sit anywhere else. ``seed`` alone decides the sequences. Shapes: see
    :class:`RetrievalBatch`, with ``batch = len(distances) * per_distance``.
    """
    text = _check_text(text)
    length = check_int("length", length, minimum=4)
    per_distance, num_pairs = check_int("per_distance", per_distance), check_int("num_pairs",
                                                                                 num_pairs)
    check_int("seed", seed, minimum=0)
    if num_pairs > len(KEY_BYTES) or 2 * num_pairs + 2 > length:
        raise ValueError(f"num_pairs={num_pairs} does not fit: at most {len(KEY_BYTES)} keys "
                         f"and 2 * num_pairs + 2 <= length={length}")
    distances = np.asarray(distances, dtype=np.int64)
    if distances.ndim != 1 or distances.size == 0 or distances.min() < 1 \
            or distances.max() > length - 2:
        raise ValueError(f"distances must be a non-empty list in 1..length-2 = 1..{length - 2}, "
                         f"got {distances.tolist()}")
    rng = np.random.default_rng(seed)
    seqs, targets, dists = [], [], []
    query = length - 1
    for d in distances.tolist():
        for _ in range(per_distance):
            seq = _haystack(text, length, rng)
            taken = np.zeros(length + 2, dtype=bool)
            taken[query:] = True
            keys, values = _pairs(num_pairs, rng)
            s = query - d - 1  # the queried key; its value at query - d
            seq[s], seq[s + 1] = keys[0], values[0]  # placed, not drawn
            taken[s:s + 2] = True
            for key, value in zip(keys[1:], values[1:], strict=True):
                _write_pair(seq, taken, key, value, 0, query - 1, rng)
            seq[query] = keys[0]
            target = np.full(length, IGNORE, dtype=np.int64)
            target[query] = values[0]
            distance = np.zeros(length, dtype=np.int64)
            distance[query] = d
            seqs.append(seq[:-1])
            targets.append(target)
            dists.append(distance)
    return RetrievalBatch(*(torch.from_numpy(np.stack(a)) for a in (seqs, targets, dists)))


def check_answers(batch: RetrievalBatch) -> None:
    """Check every scored answer from the sequence alone; ``AssertionError`` if one is wrong.

    At each query position ``t``: the input is a key; its most recent earlier occurrence
    is followed by the target value, one of that key's values, ``distances[t]`` bytes
    before ``t``; no key occurs with two different values. An independent statement of
    what the generators promise.
    """
    inputs, targets, distances = (a.numpy() for a in (batch.inputs, batch.targets,
                                                      batch.distances))
    for row, target, distance in zip(inputs, targets, distances, strict=True):
        for t in np.nonzero(target != IGNORE)[0]:
            key = row[t]
            assert key in KEY_BYTES, f"query byte {key} at {t} is not a key"
            earlier = np.nonzero(row[:t] == key)[0]
            assert earlier.size, f"query at {t} has no earlier pair"
            value_pos = earlier[-1] + 1
            assert row[value_pos] == target[t], f"answer at {t} is not the key's value"
            assert target[t] in VALUE_BYTES[key - KEY_BYTES[0]], f"value at {t} not the key's"
            assert t - value_pos == distance[t], f"distance at {t} is wrong"
            followers = {row[p + 1] for p in np.nonzero(row[:-1] == key)[0]}
            assert len(followers) == 1, f"key {key} has two values"


def describe(row) -> str:
    """A sequence as readable text: a key byte as ``⟨K3⟩``, a value byte as ``⟨3:07⟩``
    (key 3's value 7), other bytes as themselves (newlines as ``⏎``)."""
    out = []
    for byte in np.asarray(row).tolist():
        if byte in KEY_BYTES:
            out.append(f"⟨K{byte - KEY_BYTES[0]}⟩")
        elif byte >= VALUE_BYTES[0, 0]:
            key, value = divmod(byte - int(VALUE_BYTES[0, 0]), VALUE_BYTES.shape[1])
            out.append(f"⟨{key}:{value:02d}⟩")
        else:
            out.append("⏎" if byte == 10 else chr(byte))
    return "".join(out)
