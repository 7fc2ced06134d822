"""Execute every chapter notebook into the build's jupyter-cache, two at a time.

    python -m posenc_site.execute [--jobs 2] [--cache _build/.jupyter_cache]

``make book`` runs this before ``jupyter-book build`` (with ``execute_notebooks: cache``):
Jupyter Book 1 executes notebooks one after another, which leaves one of the machine's
two cores idle for most of the build. Here each notebook runs in its own worker process
(jupyter-cache's local executor worker, the one its ``local-parallel`` executor uses,
in the notebook's folder as myst-nb does), longest first, and its outputs go into the
cache that the build then reads. ``--fresh`` (what ``make book`` passes) empties the cache
first, so the build stays a full one: every notebook is executed in this run.

Both languages at once: the kernels run with ``POSENC_LANGUAGES=en,zh``, so every figure,
slider and quiz carries its English and its Chinese version (``posenc.course.i18n``), and
each edition's pages keep their own. A Chinese text with no translation is recorded in
:data:`MISSING` (one JSON string a line); ``site/posenc_site/i18n.py build`` fails on it.

Each chapter runs with its exercises' solutions after its last cell
(:func:`posenc_site.notebooks.add_solution_cells`), which are dropped again before the
notebook is cached: the build runs every solution, and the site shows the chapter's own
outputs. So the golden check (``python -m posenc_site.notebooks golden check``) reads this
execution and no chapter runs twice in ``make test``.

A notebook that fails (a solution included) is reported with its traceback and the script
exits 1 (the build would execute it again and fail anyway; this says so sooner).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
#: What Jupyter Book 1 uses as myst-nb's execution cache (``<build>/.jupyter_cache``).
CACHE = ROOT / "_build" / ".jupyter_cache"
#: Each notebook's execution seconds in the last run: the next run starts the longest first.
TIMES = ROOT / "_build" / "notebook-seconds.json"
#: The same, as measured when it was committed: a fresh clone's first build orders by it.
COMMITTED_TIMES = ROOT / "site" / "notebook-seconds.json"
#: The texts the last execution could not translate (``posenc.course.environment.MISSING_ENV``).
MISSING = ROOT / "_build" / "i18n-missing.jsonl"
#: Every text the last execution translated (``posenc.course.environment.SEEN_ENV``).
SEEN = ROOT / "_build" / "i18n-seen.jsonl"
#: Seconds a cell may run (``execute.timeout`` in _config.yml).
TIMEOUT = yaml.safe_load((ROOT / "_config.yml").read_text())["execute"]["timeout"]


def toc_notebooks(root: Path = ROOT) -> list[Path]:
    """The notebooks of ``_toc.yml``, in the order of the book."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files = [toc["root"]] + [c["file"] for part in toc.get("parts", [])
                             for c in part["chapters"]]
    return [root / f"{f}.ipynb" for f in files if (root / f"{f}.ipynb").exists()]


def _worker():
    """jupyter-cache's local worker, running each chapter with its exercises' solutions after
    its last cell (:func:`posenc_site.notebooks.add_solution_cells`) and caching it without
    them: a failing solution fails the chapter, and no page shows a solution's effect."""
    from jupyter_cache.executors.basic import ExecutionWorkerLocalMProc

    from posenc_site.notebooks import add_solution_cells, drop_solution_cells

    class WithSolutions(ExecutionWorkerLocalMProc):
        @staticmethod
        def execute(project_nb, data):
            add_solution_cells(project_nb.nb, Path(project_nb.uri).name)
            try:
                return ExecutionWorkerLocalMProc.execute(project_nb, data)
            finally:  # executed in place: the cached notebook is the chapter's own cells
                drop_solution_cells(project_nb.nb)

    return WithSolutions()


def _run(cache_path: str, pk: int, uri: str) -> tuple[int, str, float]:
    """Execute one staged notebook and cache it (in a worker process)."""
    from jupyter_cache import get_cache
    from jupyter_cache.executors.basic import ProcessData

    t0 = time.perf_counter()
    code, uri = _worker()(ProcessData(pk, uri, get_cache(cache_path), TIMEOUT, False))
    return code, uri, time.perf_counter() - t0


def execute(notebooks: list[Path], cache_path: Path = CACHE, jobs: int = 2,
            fresh: bool = False) -> list[str]:
    """Execute ``notebooks`` not already cached, ``jobs`` at a time; return the failures."""
    from jupyter_cache import get_cache

    if fresh:
        shutil.rmtree(cache_path, ignore_errors=True)
    cache = get_cache(str(cache_path))
    records = [cache.add_nb_to_project(str(nb)) for nb in notebooks]
    todo = [r for r in records if _uncached(cache, r.pk)]
    # longest first (by the last run's times, kept beside the cache), so that no core
    # waits alone on one long notebook at the end
    times = TIMES if TIMES.exists() else COMMITTED_TIMES
    last = json.loads(times.read_text()) if times.exists() else {}
    todo.sort(key=lambda r: -last.get(Path(r.uri).name, Path(r.uri).stat().st_size / 1e4))
    # each kernel gets one core's worth of threads: two kernels share the two cores
    os.environ["OMP_NUM_THREADS"] = "1"
    from posenc.course.environment import build_environment

    # every output in both languages, the texts translated and not recorded
    os.environ.update(build_environment(MISSING, SEEN))
    failed = []
    if not todo:
        return failed
    MISSING.parent.mkdir(parents=True, exist_ok=True)
    MISSING.write_text("")  # the notebooks run now record afresh
    SEEN.write_text("")
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_run, str(cache_path), r.pk, r.uri) for r in todo]
        for future in futures:
            code, uri, seconds = future.result()
            print(f"{'ok' if code == 0 else 'FAILED'} {seconds:6.1f} s  {Path(uri).name}",
                  flush=True)
            if code:
                failed.append(uri)
            else:
                last[Path(uri).name] = round(seconds, 1)
    TIMES.parent.mkdir(parents=True, exist_ok=True)
    TIMES.write_text(json.dumps(last, indent=1, sort_keys=True) + "\n")
    for uri in failed:
        record = cache.get_project_record(uri)
        print(f"\n{uri}:\n{record.traceback or '(no traceback recorded)'}", file=sys.stderr)
    return failed


def _uncached(cache, pk: int) -> bool:
    return cache.get_cached_project_nb(pk) is None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    ap.add_argument("--cache", type=Path, default=CACHE, help="jupyter-cache folder")
    ap.add_argument("--fresh", action="store_true", help="empty the cache first")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    failed = execute(toc_notebooks(), args.cache, args.jobs, args.fresh)
    print(f"executed in {time.perf_counter() - t0:.1f} s with {args.jobs} workers")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
