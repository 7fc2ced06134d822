"""A corpus that needs no download: Python's own standard library, read as bytes.

Every Python installation ships the source of its standard library (``Lib/`` in the
CPython tree; ``sysconfig.get_paths()["stdlib"]`` on an installed Python). The
language-model experiment of the extrapolation chapter trains on a fixed, sorted list
of large pure-Python modules and evaluates on two *other* modules, byte by byte
(vocabulary 256, no tokenizer to install or download).

Why this text: it is real text with structure at every range -- within a line
(syntax), across lines (indentation, names defined a few lines up) and across whole
functions and classes (an identifier or docstring phrase reappearing hundreds of bytes
later) -- so a model can gain from context longer than it was trained on, which is
what makes a length-extrapolation test mean something. And it is on every machine
that can run the course.

What is not guaranteed: the files change a little between Python patch releases
(3.11.4 vs 3.11.7). :func:`load_stdlib_corpus` therefore records a SHA-256 of each
split and the Python version, and the experiment stores them with its results, so
a reader can tell whether their text is byte-identical to the one the committed
numbers came from. Line endings are normalised to ``\\n``.
"""

from __future__ import annotations

import hashlib
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ._validation import check_int

__all__ = [
    "TRAIN_FILES",
    "HELDOUT_FILES",
    "Corpus",
    "stdlib_directory",
    "read_files",
    "load_stdlib_corpus",
    "random_windows",
    "contiguous_windows",
    "previous_occurrence_distance",
]

#: Training text: large pure-Python modules present in every CPython 3.11 (about 1.6 MB).
TRAIN_FILES = (
    "_pydecimal.py", "_pyio.py", "argparse.py", "doctest.py", "enum.py", "inspect.py",
    "ipaddress.py", "locale.py", "mailbox.py", "pickletools.py", "pydoc.py",
    "subprocess.py", "tarfile.py", "turtle.py", "typing.py",
)

#: Held-out text, never trained on (about 139 KB).
HELDOUT_FILES = ("configparser.py", "difflib.py")


@dataclass(frozen=True)
class Corpus:
    """Byte-level train / held-out text.

    ``train`` and ``heldout`` are uint8 arrays (shape ``[n_bytes]``); ``info`` records the
    files, sizes, SHA-256 digests and the Python version they came from.
    """

    train: np.ndarray
    heldout: np.ndarray
    info: dict


def stdlib_directory() -> Path:
    """The directory holding this interpreter's pure-Python standard library."""
    return Path(sysconfig.get_paths()["stdlib"])


def read_files(names, root: Path | str | None = None) -> bytes:
    """Concatenate the files ``names`` (relative to ``root``, default the stdlib), in order.

    ``\\r\\n`` becomes ``\\n``. A missing file raises ``FileNotFoundError`` naming it.
    """
    root = stdlib_directory() if root is None else Path(root)
    parts = []
    for name in names:
        path = root / name
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: the extrapolation corpus needs the standard-library "
                f"source file {name!r} (present in every CPython 3.11 install)")
        parts.append(path.read_bytes().replace(b"\r\n", b"\n"))
    return b"".join(parts)


def load_stdlib_corpus(train_files=TRAIN_FILES, heldout_files=HELDOUT_FILES,
                       root: Path | str | None = None) -> Corpus:
    """Read the training and held-out files into a :class:`Corpus`.

    The two lists must not overlap (held-out text is never trained on).
    """
    overlap = set(train_files) & set(heldout_files)
    if overlap:
        raise ValueError(f"train_files and heldout_files overlap: {sorted(overlap)}")
    train, heldout = read_files(train_files, root), read_files(heldout_files, root)
    info = {
        "source": "CPython standard library source files, read as bytes",
        "python_version": sys.version.split()[0],
        "train_files": list(train_files),
        "heldout_files": list(heldout_files),
        "train_bytes": len(train),
        "heldout_bytes": len(heldout),
        "train_sha256": hashlib.sha256(train).hexdigest(),
        "heldout_sha256": hashlib.sha256(heldout).hexdigest(),
    }
    return Corpus(np.frombuffer(train, dtype=np.uint8), np.frombuffer(heldout, dtype=np.uint8),
                  info)


def random_windows(data: np.ndarray, batch_size: int, length: int,
                   generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A training batch: ``batch_size`` windows at random offsets drawn from ``generator``.

    Returns ``(inputs, targets)``, both int64 ``[batch_size, length]``; ``targets`` is
    ``inputs`` shifted left by one byte.
    """
    batch_size, length = check_int("batch_size", batch_size), check_int("length", length)
    if len(data) < length + 1:
        raise ValueError(f"data has {len(data)} bytes; need at least length + 1 = {length + 1}")
    starts = torch.randint(0, len(data) - length, (batch_size,), generator=generator)
    windows = torch.stack([torch.from_numpy(data[s:s + length + 1].astype(np.int64))
                           for s in starts.tolist()])  # [batch, length + 1]
    return windows[:, :-1], windows[:, 1:]


def contiguous_windows(data: np.ndarray, length: int,
                       num_tokens: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Non-overlapping evaluation windows, as in Press et al.'s evaluation.

    Splits the first ``num_tokens + 1`` bytes into ``num_tokens // length`` windows of
    ``length`` inputs. Whatever ``length`` is, the targets are the same bytes
    ``data[1 : num_tokens + 1]``, so losses at different lengths are comparable.
    Returns ``(inputs, targets)``, int64 ``[num_tokens // length, length]``.
    """
    length, num_tokens = check_int("length", length), check_int("num_tokens", num_tokens)
    if num_tokens % length:
        raise ValueError(f"num_tokens ({num_tokens}) must be a multiple of length ({length})")
    if len(data) < num_tokens + 1:
        raise ValueError(f"data has {len(data)} bytes; need num_tokens + 1 = {num_tokens + 1}")
    flat = torch.from_numpy(data[:num_tokens + 1].astype(np.int64))
    inputs = flat[:-1].view(-1, length)
    targets = flat[1:].view(-1, length)
    return inputs, targets


def previous_occurrence_distance(data, ngram: int = 8) -> np.ndarray:
    """For each position, how far back the same ``ngram`` bytes last started.

    ``out[t]`` is ``t - s`` for the largest ``s < t`` with ``data[s:s+ngram] ==
    data[t:t+ngram]``, or ``-1`` if the n-gram is new. A crude, model-free measure of
    how far back useful context lies: a copy-capable model can predict the rest of a
    repeated n-gram from its previous occurrence. Shape ``[len(data) - ngram + 1]``, int64.
    """
    ngram = check_int("ngram", ngram)
    raw = bytes(np.asarray(data, dtype=np.uint8))
    last_seen: dict[bytes, int] = {}
    out = np.full(max(len(raw) - ngram + 1, 0), -1, dtype=np.int64)
    for t in range(len(out)):
        key = raw[t:t + ngram]
        s = last_seen.get(key)
        if s is not None:
            out[t] = t - s
        last_seen[key] = t
    return out
