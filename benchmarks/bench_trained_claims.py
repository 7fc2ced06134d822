"""Every trained claim (posenc.course.trained_claims) over more seeds and every CPU kernel.

    .venv/bin/python benchmarks/bench_trained_claims.py [--offsets 0 1 2 3 4 5] [--output FILE]

The test (tests/test_trained_claims.py) runs 6 (kernel, seed) pairs to stay cheap; this runs
the whole grid, each kernel in its own process (torch reads ATEN_CPU_CAPABILITY when it
loads), and prints, per clause, on how many (kernel, seed) pairs it held. Issue 32.
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from posenc.course.trained_claims import finish_run, start_run

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ("default", "avx2", None)  # None: the machine's own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--offsets", type=int, nargs="+", default=list(range(6)))
    parser.add_argument("--output", default=str(ROOT / "benchmarks/results/trained_claims.json"))
    args = parser.parse_args()
    with ThreadPoolExecutor(2) as pool:  # two at a time: the machine's two cores
        results = list(pool.map(lambda k: finish_run(start_run(k, args.offsets)), KERNELS))
    Path(args.output).write_text(json.dumps(results, indent=1) + "\n")
    print("kernels:", ", ".join(r["capability"] for r in results), "| seeds (offsets):",
          args.offsets)
    for name in results[0]["claims"]:
        print(f"{name} ({', '.join(str(r['seconds'][name]) + ' s' for r in results)}):")
        for clause in next(iter(results[0]["claims"][name].values())):
            cells = [(r["capability"], seed, v[clause]) for r in results
                     for seed, v in r["claims"][name].items()]
            misses = [f"{k} seed {s}" for k, s, ok in cells if not ok]
            print(f"  {len(cells) - len(misses)}/{len(cells)}  {clause}"
                  + (f"  (fails: {', '.join(misses)})" if misses else ""))


if __name__ == "__main__":
    main()
