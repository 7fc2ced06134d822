"""The results file: typed records over its JSON, a schema version, and the migration that
upgrades an older file.

A results file (:func:`.run.run_experiment`'s dict, written as JSON by the command line)
carries ``"schema"``: :data:`SCHEMA` for a file written now; a file without the key is
version 1. :func:`migrate` upgrades any older file step by step (:data:`MIGRATIONS`, one
function per version), so the code reads one layout only, and :func:`read_results` reads a
file through it into typed records, one per level:

* :class:`Results`: the file (its config as an
  :class:`~.config.ExtrapolationConfig`, its ``config_hash``, lengths and variants);
* :class:`VariantResult`: one variant's entry (its :class:`~.variants.VariantKey`, label
  and numbers);
* :class:`Numbers`: one metric of a variant at every evaluation length, with its seed range.

Each record is also a read-only mapping over the JSON it was read from, so
``results["variants"]["rope"]["loss"]`` reads as it always did.

A new field of the config (say a training ``schedule``) is one migration step: bump
:data:`SCHEMA`, add ``MIGRATIONS[old] = function`` filling the field with the value every
older run used, and rewrite the committed files once
(``python -m posenc.experiments.extrapolation migrate FILE...``, :func:`rewrite_results`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...nn import POSITIONS
from .config import ExtrapolationConfig, hash_config_dict, task_key
from .variants import VariantKey

__all__ = ["SCHEMA", "MIGRATIONS", "schema_of", "migrate", "Numbers", "VariantResult",
           "Results", "read_results", "rewrite_results"]

#: The version of the results layout this code writes and reads.
SCHEMA = 4


# --- the migration steps ----------------------------------------------------------------------

#: Version 1's fields of T5's settings -> (method, option). They became T5's options.
_V1_OPTION_FIELDS = {"t5_num_buckets": ("t5", "num_buckets"),
                     "t5_max_distance": ("t5", "max_distance"),
                     "t5_bias_lr_scale": ("t5", "bias_lr_scale")}
#: Fields that came during version 1 and were left out of its hash at these values, which
#: every run before them used.
_V1_LATER_FIELDS = {"retrieval_tasks": ["content"], "patterns": [], "retrieval_batch_sizes": []}


def _v1_to_v2(data: dict) -> dict:
    """Version 1 -> 2: the config's ``base`` (given to every method that takes a base) and
    ``t5_*`` fields become those methods' options (left out where they equal the method's
    default, as :meth:`~.config.ExtrapolationConfig.to_dict` leaves them out); the fields
    version 1 added later are filled with the values runs before them used. (Version 1's
    hash was taken over a layout with those old fields; :func:`migrate` takes it again.)"""
    config = dict(data["config"])
    options = {name: dict(opts) for name, opts in dict(config.pop("options", {})).items()}
    if "base" in config:
        base = float(config.pop("base"))
        for encoding in config.get("encodings", ()):
            default = POSITIONS[encoding].options.get("base") if encoding in POSITIONS else None
            if default is not None and float(default) != base:
                options.setdefault(encoding, {}).setdefault("base", base)
    for old, (method, option) in _V1_OPTION_FIELDS.items():
        if old in config:
            value = config.pop(old)
            if value != POSITIONS[method].options[option]:
                options.setdefault(method, {}).setdefault(option, value)
    for name, value in _V1_LATER_FIELDS.items():
        config.setdefault(name, value)
    if options:
        config["options"] = {name: dict(sorted(opts.items()))
                             for name, opts in sorted(options.items()) if opts}
    return {**data, "config": config}


#: Version 3's fields (chapter 13, take four: converge, then extrapolate), at the values
#: every earlier run used: a cosine schedule, no held-out checks, no early stop, no grid.
_V3_FIELDS = {"schedule": "cosine", "stop_accuracy": 0.0, "check_every": 0,
              "check_sequences": 128, "grid_distances": []}


def _v2_to_v3(data: dict) -> dict:
    """Version 2 -> 3: the schedule, the stopping rule and the position-by-distance grid
    (:class:`~.config.ExtrapolationConfig`), filled where absent with the values every
    version-2 run used."""
    return {**data, "config": {**_V3_FIELDS, **data["config"]}}


def _v3_to_v4(data: dict) -> dict:
    """Version 3 -> 4: the task the held-out check reads (``check_task``), which was always
    the positional one before the rebinding preset."""
    return {**data, "config": {"check_task": "positional", **data["config"]}}


#: Version -> the function that upgrades a results dict of that version to the next (its
#: config to the next layout; :func:`migrate` takes the config hash again after the steps).
MIGRATIONS: dict[int, Callable[[dict], dict]] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4}


def schema_of(data: Mapping) -> int:
    """The schema version of a results dict (1 where it has no ``"schema"``); ``TypeError``
    / ``ValueError`` for one that is not an integer from 1 to :data:`SCHEMA`."""
    version = data.get("schema", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise TypeError(f"schema must be an int from 1 to {SCHEMA}, got {version!r}")
    if not 1 <= version <= SCHEMA:
        newer = ": the file was written by a newer posenc" if version > SCHEMA else ""
        raise ValueError(f"schema must be from 1 to {SCHEMA} (this posenc reads those), got "
                         f"{version}{newer}")
    return version


def migrate(data: Mapping) -> dict:
    """``data``, a results dict of any version, upgraded step by step to :data:`SCHEMA`
    (a new dict with ``"schema"`` first; ``data`` itself is left as it was), its
    ``config_hash`` taken over the upgraded config (:func:`.config.hash_config_dict`, as
    :func:`.config.config_hash` takes it). A dict of the current version comes back equal
    to it."""
    if isinstance(data, Results):
        data = data.data  # its JSON, not its records
    if not isinstance(data, Mapping) or not isinstance(data.get("config"), Mapping):
        raise TypeError(f"data must be a results dict (with its 'config'), got "
                        f"{type(data).__name__}")
    start = version = schema_of(data)
    data = copy.deepcopy(dict(data))
    while version < SCHEMA:
        data = MIGRATIONS[version](data)
        version += 1
    if version != start:
        data["config_hash"] = hash_config_dict(data["config"])
    data.pop("schema", None)
    return {"schema": version, **data}


# --- the typed records ------------------------------------------------------------------------

def _floats(values) -> np.ndarray:
    """A row of numbers as float64, ``None`` (not defined) as NaN."""
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


@dataclass(frozen=True)
class Numbers:
    """One metric of one variant (``"loss"``, ``"retrieval_accuracy"``,
    ``"positional_accuracy"``) at every evaluation length: the mean over seeds, its range
    ``low`` .. ``high`` (the mean itself with one seed) and each seed's row (one row with one
    seed). Each is a tuple ``[lengths]``, ``None`` where not defined."""

    mean: tuple
    low: tuple
    high: tuple
    by_seed: tuple

    @classmethod
    def of(cls, entry: Mapping, key: str) -> Numbers:
        """The numbers ``key`` of a variant's entry (its ``<key>_min``, ``<key>_max`` and
        ``<key>_by_seed`` when several seeds were run); ``KeyError`` naming the entry's
        numbers when it has no ``key``."""
        if key not in entry:
            have = [k for k in entry if k == "loss" or k.endswith("_accuracy")]
            raise KeyError(f"no {key!r} in this entry; it has {have}")
        mean = tuple(entry[key])
        return cls(mean=mean, low=tuple(entry.get(f"{key}_min", mean)),
                   high=tuple(entry.get(f"{key}_max", mean)),
                   by_seed=tuple(tuple(row) for row in entry.get(f"{key}_by_seed", [mean])))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(mean, low, high)``, each float64 ``[lengths]`` with NaN where not defined."""
        return _floats(self.mean), _floats(self.low), _floats(self.high)


class _JSONView(Mapping):
    """A record that reads as the JSON dict it came from (``record[key]``), read-only."""

    def __getitem__(self, key):
        return self.data[key]

    def __iter__(self) -> Iterator:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


@dataclass(frozen=True, eq=False)
class VariantResult(_JSONView):
    """One variant's entry: its ``key`` (:class:`~.variants.VariantKey`), ``label``, the
    trained run it used (``trained_encoding``) and its numbers (:meth:`numbers`); ``data``
    is the entry's JSON (curves, history, recorded numbers, notes), which the record also
    reads as."""

    key: VariantKey
    label: str
    trained_encoding: str
    data: Mapping = field(repr=False)

    @classmethod
    def of(cls, name: str, entry: Mapping) -> VariantResult:
        """The record of the entry stored under ``name``; an entry cut down to its numbers
        (as a test or a reader may write one) gets its name as label and the key's
        trained run."""
        key = VariantKey.parse(name)
        return cls(key=key, label=entry.get("label", name),
                   trained_encoding=entry.get("trained_encoding", key.trained_encoding),
                   data=entry)

    def numbers(self, key: str) -> Numbers:
        """The :class:`Numbers` of ``key`` (``"loss"``, ``"retrieval_accuracy"``, ...)."""
        return Numbers.of(self.data, key)

    @property
    def loss(self) -> Numbers:
        """Held-out loss (nats per byte) per evaluation length."""
        return self.numbers("loss")

    def accuracy(self, task: str) -> Numbers:
        """A retrieval task's accuracy (:data:`posenc.retrieval.TASKS`) per length."""
        return self.numbers(task_key(task, "accuracy"))


@dataclass(frozen=True, eq=False)
class Results(_JSONView):
    """A results file at the current :data:`SCHEMA`: ``data`` its JSON (migrated), and
    ``variants``, one :class:`VariantResult` per variant in the file's order. Reads as its
    JSON, with ``results["variants"]`` the records."""

    data: Mapping = field(repr=False)
    variants: dict = field(repr=False)

    @classmethod
    def from_dict(cls, data: Mapping) -> Results:
        """The record of a results dict of any version (:func:`migrate`d first)."""
        if isinstance(data, Results):
            return data
        data = data if schema_of(data) == SCHEMA else migrate(data)
        variants = {name: VariantResult.of(name, entry)
                    for name, entry in data["variants"].items()}
        return cls(data=data, variants=variants)

    def __getitem__(self, key):
        return self.variants if key == "variants" else self.data[key]

    @property
    def schema(self) -> int:
        return self.data.get("schema", SCHEMA)

    @property
    def config(self) -> ExtrapolationConfig:
        """The configuration that produced it (its methods must be registered)."""
        return ExtrapolationConfig.from_dict(self.data["config"])

    @property
    def config_hash(self) -> str:
        return self.data["config_hash"]

    @property
    def train_length(self) -> int:
        return self.data["train_length"]

    @property
    def eval_lengths(self) -> tuple[int, ...]:
        return tuple(self.data["eval_lengths"])

    def to_dict(self) -> dict:
        """The JSON dict (a copy), as written to a file."""
        return copy.deepcopy(dict(self.data))


def read_results(path) -> Results:
    """The results file at ``path`` (any version), read through :func:`migrate`."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no results file at {str(path)!r}")
    return Results.from_dict(json.loads(path.read_text()))


def rewrite_results(paths) -> None:
    """Rewrite each results file in ``paths`` through :func:`migrate`, in place (the
    one-time upgrade of the committed files: ``python -m posenc.experiments.extrapolation
    migrate FILE...``)."""
    for path in map(Path, paths):
        migrated = migrate(json.loads(path.read_text()))
        path.write_text(json.dumps(migrated, indent=1) + "\n")  # as the command line writes
        print(f"{path}: schema {migrated['schema']}")
