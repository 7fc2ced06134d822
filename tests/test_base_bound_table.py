"""Chapter 5's committed table of RoPE base bounds (posenc.course.base_bound_table).

The rows are checked against a direct sum of the criterion, independent of the scan, and
the first rows are recomputed; the rounded copy of Su's table is shown to fail the criterion
where the chapter says it does."""

from __future__ import annotations

import numpy as np
import pytest

from posenc.course.base_bound_table import (
    COMMAND,
    SU_ROUNDED,
    TABLE_PATH,
    compute_table,
    load_table,
)
from posenc.scaling import rope_base_reach

TABLE = load_table()


def first_negative(base: float, length: int, d: int = 128) -> int | None:
    """The first m < length with sum_i cos(m base^(-2i/d)) < 0, by a direct sum in chunks."""
    exponents = base ** (-np.arange(0, d, 2) / d)
    for start in range(0, length, 1 << 14):
        m = np.arange(start, min(start + (1 << 14), length), dtype=np.float64)
        negative = np.flatnonzero(np.cos(np.outer(m, exponents)).sum(1) < 0)
        if negative.size:
            return int(m[negative[0]])
    return None


def test_the_table_records_its_command_and_lengths():
    assert TABLE["command"] == COMMAND and TABLE_PATH.is_file()
    assert [r["length"] for r in TABLE["rows"]] == list(SU_ROUNDED)
    assert TABLE["head_dim"] == 128 and TABLE["rtol"] == 1e-3


@pytest.mark.parametrize("row", TABLE["rows"], ids=lambda r: str(r["length"]))
def test_each_bound_reaches_its_length(row):
    # B(m) >= 0 for every m below the length, by the direct sum ...
    assert first_negative(row["bound"], row["length"]) is None
    assert row["reach"] == rope_base_reach(row["bound"], 128, max_length=4 * row["length"])
    assert row["reach"] >= row["length"]
    # ... and the grid point just below it fails (the scan found the first working base)
    below = row["bound"] / (1 + TABLE["rtol"])
    assert first_negative(below, row["length"]) is not None


def test_rounded_su_values_fail_at_seven_lengths():
    fails = [r["length"] for r in TABLE["rows"] if r["su_reach"] < r["length"]]
    assert fails == [2048, 4096, 16384, 131072, 262144, 524288, 1048576]
    for r in TABLE["rows"]:
        assert r["su"] == SU_ROUNDED[r["length"]]
    # the reviewer's independent scan: 6.5e7 reaches 679,592 tokens, not 1M
    assert next(r for r in TABLE["rows"] if r["length"] == 1 << 20)["su_reach"] == 679_592


def test_the_first_rows_reproduce():
    again = compute_table((1024, 2048, 4096))
    for new, old in zip(again["rows"], TABLE["rows"][:3], strict=True):
        assert {k: new[k] for k in ("length", "bound", "reach", "su", "su_reach")} == \
               {k: old[k] for k in ("length", "bound", "reach", "su", "su_reach")}
