"""Chapter 5's table of RoPE base bounds: the exact scan, not a rounded copy of it.

Men et al. (2024)'s criterion ``B(m) = sum_i cos(m * base ** (-2i/d)) >= 0`` for every
``m < L`` is not monotone in the base, so a bound rounded to two digits can fail it (Su's
2.4e7 for 256k reaches 141,858 tokens). The chapter therefore plots the values of
:func:`posenc.scaling.rope_base_lower_bound` as computed, each with its own reach
(:func:`posenc.scaling.rope_base_reach`), from a committed file that this module writes:

    python -m posenc.course.base_bound_table --output src/posenc/course/results/base_bound/d128.json

(43 minutes on one core of this project's 2-core machine, beside other work; the 1M entry
takes 22 of them).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ..scaling import rope_base_lower_bound, rope_base_reach

#: Su's table (kexue.fm/archives/10122, head_dim 128), two significant digits, for the
#: comparison the chapter makes: these are the rounded values, which the tests show to fail.
SU_ROUNDED = {1024: 4.3e3, 2048: 1.2e4, 4096: 2.7e4, 8192: 8.4e4, 16384: 2.3e5,
              32768: 6.3e5, 65536: 2.1e6, 131072: 4.9e6, 262144: 2.4e7, 524288: 5.8e7,
              1048576: 6.5e7}
TABLE_PATH = Path(__file__).resolve().parent / "results" / "base_bound" / "d128.json"
COMMAND = ("python -m posenc.course.base_bound_table "
           "--output src/posenc/course/results/base_bound/d128.json")


def compute_table(lengths=tuple(SU_ROUNDED), head_dim: int = 128, rtol: float = 1e-3) -> dict:
    """``{"head_dim", "rtol", "command", "rows": [{"length", "bound", "reach", "su",
    "su_reach", "seconds"}]}``: for each length the scan's bound and its reach, and Su's
    rounded value with its reach (reach ``None``: beyond ``4 * length``)."""
    rows = []
    for length in lengths:
        start = time.perf_counter()
        bound = rope_base_lower_bound(length, head_dim, rtol=rtol)
        seconds = time.perf_counter() - start
        su = SU_ROUNDED.get(length)
        rows.append({"length": length, "bound": bound,
                     "reach": rope_base_reach(bound, head_dim, max_length=4 * length),
                     "su": su,
                     "su_reach": None if su is None else rope_base_reach(
                         su, head_dim, max_length=4 * length),
                     "seconds": round(seconds, 1)})
        print(f"L = {length:>9,}: bound {bound:.4g} (reach {rows[-1]['reach']}), "
              f"Su {su:.2g} (reach {rows[-1]['su_reach']}), {seconds:.0f} s", flush=True)
    return {"head_dim": head_dim, "rtol": rtol, "command": COMMAND, "rows": rows}


def load_table(path: Path = TABLE_PATH) -> dict:
    """The committed table (:func:`compute_table`'s dictionary)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def base_bound_rows(path: Path = TABLE_PATH) -> list[dict]:
    """The committed table's rows, shortest length first: ``length``, ``bound`` (the scan),
    ``reach`` (the bound's own), ``su`` (Su's rounded value) and ``su_reach``."""
    return load_table(path)["rows"]


def show_base_bound_table(rows=None) -> None:
    """Chapter 5's table of :func:`base_bound_rows` (or ``rows``): each length's scanned
    bound and Su's rounded value, each beside its own reach, ``✗`` where the reach falls
    short of the length."""
    from .tables import show_table

    rows = base_bound_rows() if rows is None else rows
    show_table(["L", "bound (scan)", "its reach", "Su's table, rounded", "its reach"],
               [[f"{r['length']:,}", f"{r['bound']:.3g}", f"{r['reach']:,}", f"{r['su']:.2g}",
                 f"{r['su_reach']:,}" + ("" if r["su_reach"] >= r["length"] else " ✗")]
                for r in rows], "Men et al.'s bound, d = 128", numbers_from=0, compact=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=TABLE_PATH)
    parser.add_argument("--lengths", type=lambda s: [int(x) for x in s.split(",")],
                        default=list(SU_ROUNDED))
    args = parser.parse_args(argv)
    table = compute_table(args.lengths)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
