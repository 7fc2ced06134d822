"""`make test` on a fresh clone, as CI runs it: wall time in all and per stage.

    .venv/bin/python benchmarks/bench_make_test.py [--repo .] [--output FILE]

Clones the repository's committed HEAD into a temporary folder (no .venv, no _build),
runs ``.ci/run`` there and times each line of its output, so the stages can be read off
the Makefile's own commands: creating .venv, lint, unit tests + the local path side by side,
the -W build of both editions (every notebook and solution run once), the golden outputs
read from it, the browser suite, the timing budgets. The load
average before and after goes beside the times: on a shared machine they are upper bounds.
Beside each stage's wall time goes the CPU time the whole machine spent while it ran
(``/proc/stat``, where there is one): on a quiet machine, that stage's CPU-seconds, to set
against the cores' capacity.
Issue 38's budget: <= 15 min on this project's 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The first output line of each stage (``make`` echoes the command it runs).
STAGES = {
    "venv": "-m venv",
    "lint": "ruff check",
    "unit + local": "unit local",
    "build": "-m posenc_site.execute --fresh",
    "golden": "notebooks golden check",
    "browser": "-m 'not budget'",
    "budgets": "-m budget",
}


def busy_cpu_seconds() -> float | None:
    """CPU-seconds the machine has spent busy since boot (all cores), or None without
    ``/proc/stat``."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def run(repo: Path, log: Path) -> dict:
    """Clone ``repo`` and run its CI (its output, time-stamped, into ``log``);
    ``{"seconds", "stages", "returncode", "load"}``."""
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
        load_before = os.getloadavg()
        t0 = time.monotonic()
        starts: dict[str, float] = {}
        busy_at: dict[str, float | None] = {}
        with subprocess.Popen(["bash", ".ci/run"], cwd=clone, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env={**os.environ, "CI": "true"}) as proc, \
                log.open("w") as out:
            for line in proc.stdout:
                out.write(f"{time.monotonic() - t0:8.1f} {line}")
                for stage, marker in STAGES.items():
                    if stage not in starts and marker in line:
                        starts[stage] = time.monotonic() - t0
                        busy_at[stage] = busy_cpu_seconds()
        total = time.monotonic() - t0
        busy_end = busy_cpu_seconds()
    ordered = sorted(starts.items(), key=lambda kv: kv[1])
    ends = [t for _, t in ordered[1:]] + [total]
    busy_ends = [busy_at[name] for name, _ in ordered[1:]] + [busy_end]
    cpu = {name: round(end - busy_at[name], 1)
           for (name, _), end in zip(ordered, busy_ends, strict=True)
           if end is not None and busy_at[name] is not None}
    return {"seconds": round(total, 1), "returncode": proc.returncode,
            "cores": os.cpu_count(),
            "stages": {name: round(end - start, 1)
                       for (name, start), end in zip(ordered, ends, strict=True)},
            "busy_cpu_seconds": cpu,
            "load": {"before": load_before, "after": os.getloadavg()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=ROOT)
    parser.add_argument("--output", type=Path,
                        default=ROOT / "benchmarks" / "results" / "make_test.json")
    parser.add_argument("--log", type=Path, default=Path(tempfile.gettempdir()) / "make_test.log",
                        help="where the run's output goes, each line with its second")
    args = parser.parse_args()
    result = run(args.repo, args.log)
    args.output.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
