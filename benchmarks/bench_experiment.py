"""Wall time of the extrapolation presets against their budgets (chapter 13).

    .venv/bin/python benchmarks/bench_experiment.py              # the live preset, 3 runs
    .venv/bin/python benchmarks/bench_experiment.py --preset main --jobs 2 --repeat 1

Runs ``python -m posenc.experiments.extrapolation --preset NAME`` as a reader would (a
fresh process, so imports count), prints each wall time and the 1-minute load average
before and after, and the wall times recorded in the committed results. Budgets on
this project's 2-core CPU: ``small`` (live in the build) <= 30 s, ``main`` <= 25 min,
``full`` <= 75 min (with the positional retrieval task and the layer patterns).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_S = {"small": 30, "main": 25 * 60, "full": 75 * 60}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="small", choices=sorted(BUDGET_S))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from posenc.course.results import load_results

    for name in ("main", "full"):
        try:
            runtime = load_results(f"{name}.json")["runtime"]
        except FileNotFoundError:
            continue
        print(f"committed {name}: {runtime['wall_time_s'] / 60:.1f} min with "
              f"--jobs {runtime.get('jobs', 1)} (budget {BUDGET_S[name] / 60:.0f} min), "
              f"mean load while training {runtime['load_average_during_training_mean']}")
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            load = os.getloadavg()[0]
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "posenc.experiments.extrapolation",
                            "--preset", args.preset, "--jobs", str(args.jobs), "--no-progress",
                            "--output", str(Path(tmp) / "out.json")],
                           check=True, stdout=subprocess.DEVNULL)
            wall = time.perf_counter() - start
            print(f"{args.preset} run {i + 1}: {wall:.1f} s (budget {BUDGET_S[args.preset]} s; "
                  f"load {load:.2f} -> {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
