"""Site budgets, measured: build times, page weight, slider response.

    make bench          (or: .venv/bin/python benchmarks/bench_site.py [--skip-build])

1. Full clean build (``make book``: every notebook executed afresh, two at a time, by
   ``site/posenc_site/execute.py --fresh``, then both editions' Sphinx builds -W from that
   cache). Budget: <= 180 s on 2 quiet cores (issue 38). The load average (``uptime``) is
   recorded beside it: on a shared machine the number means little without it.
2. Cached rebuild with nothing changed (``make book-cached`` run twice; the second
   run is timed). Budget: <= 15 s.
3. Bytes transferred on a first load of every page of both editions, measured in Chromium
   (CDP ``encodedDataLength`` of each response that finished by the load event:
   ``posenc_site.sitecheck.LoadEventLog``), from a local server that gzips text as any
   static host does; the raw (uncompressed) bytes beside it. The slider frames that the
   page fetches on demand and prefetches in idle time after load are reported apart
   (``prefetch``). Budget: <= 650 KB gzip (issue 38; ``FIRST_LOAD_BUDGET_BYTES``).
4. Idle scroll: everything on the wire (gzip-6 text, images as they are) after a reader
   scrolls from top to bottom in 10 s, touching nothing. Budget: <= 2 MB on every page.
5. Slider response: key press to the new figure visible (decoded, on the next
   animation frame), for every frame slider on every page, its figure scrolled into view
   and its prefetch (+-2 steps per slider) done. Budget: <= 50 ms for a +-1 step. For the
   figures the page draws itself (posenc-live.js), every slider moved to six values, input
   to redrawn figure (the handler draws before it returns). Budget: <= 16 ms
   (``LIVE_REDRAW_BUDGET_MS``).

Writes benchmarks/results/site.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from posenc_site.sitecheck import (
    FIRST_LOAD_BUDGET_BYTES,
    FRAME_SLIDERS,
    JS_ARM_LATENCY,
    JS_FIGURE_PREFETCHED,
    JS_LIVE_DRAWN,
    JS_LIVE_MOVE,
    JS_SLIDERS,
    JS_WIDGETS_SETTLED,
    LIVE_MOVES,
    SITE,
    LoadEventLog,
    chromium,
    content_pages,
    idle_scroll_transfers,
    serve,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
FRAMES = "/posenc-frames/"  # site/posenc_site/pages.py FRAMES_DIR


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def load_average() -> str:
    """The 1, 5 and 15-minute load averages, as ``uptime`` prints them."""
    return ", ".join(Path("/proc/loadavg").read_text().split()[:3])


def build_times() -> dict:
    shutil.rmtree(ROOT / "_build", ignore_errors=True)
    load_before = load_average()
    clean = timed(["make", "-s", "-o", ".venv/.installed", "book"])
    load_after = load_average()
    cached = timed(["make", "-s", "-o", ".venv/.installed", "book-cached"])
    return {"clean_build_s": round(clean, 1), "cached_rebuild_s": round(cached, 1),
            "load_before": load_before, "load_after": load_after}


def live_redraw_ms(page) -> dict:
    """The figures the page draws itself (posenc-live.js): every slider of every one moved to
    :data:`LIVE_MOVES`, the input handler timed (it redraws before it returns);
    ``{"live_sliders", "live_ms_median", "live_ms_max"}`` over the moves that changed the
    value, or ``{}`` on a page without them."""
    figures = page.locator(".posenc-live")
    page.wait_for_function(JS_LIVE_DRAWN, arg=figures.count(), timeout=15000)
    timings, sliders = [], 0
    for figure in range(figures.count()):
        root = figures.nth(figure)
        root.scroll_into_view_if_needed()
        for index in range(root.locator("input[type=range]").count()):
            sliders += 1
            moves = page.evaluate(JS_LIVE_MOVE, [figure, index, LIVE_MOVES])
            timings += [m["ms"] for m in moves if m["changed"]]
    if not timings:
        return {}
    return {"live_sliders": sliders, "live_ms_median": round(statistics.median(timings), 2),
            "live_ms_max": round(max(timings), 2)}


def page_weights_and_latency() -> dict:
    pages = {}
    with chromium() as browser:
        for compress in (True, False):
            with serve(SITE, compress=compress) as base:
                for path in content_pages():
                    context = browser.new_context()
                    page = context.new_page()
                    log = LoadEventLog(context, page)
                    page.goto(f"{base}/{path}", wait_until="networkidle")
                    if compress:  # what prefetching the figures in view costs on top
                        page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)
                    entry = pages.setdefault(path, {})
                    # first load: what finished by the load event (the page, its assets, the
                    # figures in view); the slider frames fetched on demand and in idle time
                    # after load are counted apart
                    entry["gzip_bytes" if compress else "raw_bytes"] = sum(
                        log.first_load().values())
                    if compress:
                        entry["prefetch_bytes"] = sum(n for _, url, n in log.finished
                                                      if FRAMES in url)
                    if compress:
                        latencies = []
                        widgets = page.locator(".posenc-widget")
                        for s in page.evaluate(JS_SLIDERS):
                            root = widgets.nth(s["widget"])
                            root.scroll_into_view_if_needed()
                            page.wait_for_function(JS_FIGURE_PREFETCHED,
                                                   arg=root.element_handle(), timeout=60000)
                            page.evaluate(JS_ARM_LATENCY, s["index"])
                            key = "ArrowLeft" if s["value"] == s["max"] else "ArrowRight"
                            page.locator(FRAME_SLIDERS).nth(
                                s["index"]).press(key)
                            latencies.append(page.evaluate("window.__posencLatency"))
                        entry["sliders"] = len(latencies)
                        entry["slider_ms_max"] = round(max(latencies), 1) if latencies else None
                        entry["slider_ms_median"] = (round(statistics.median(latencies), 1)
                                                     if latencies else None)
                        entry.update(live_redraw_ms(page))
                    context.close()
                    if compress:
                        entry["idle_scroll_bytes"] = sum(
                            idle_scroll_transfers(browser, base, path).values())
    html_bytes = {path: (SITE / path).stat().st_size for path in pages}
    for path, entry in pages.items():
        entry["html_bytes"] = html_bytes[path]
    return pages


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip-build", action="store_true",
                    help="measure the existing _build/html only")
    args = ap.parse_args(argv)
    out = {} if args.skip_build else build_times()
    out["pages"] = page_weights_and_latency()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "site.json").write_text(json.dumps(out, indent=2) + "\n")

    if "clean_build_s" in out:
        print(f"clean build: {out['clean_build_s']} s (budget 180; load average before "
              f"{out['load_before']}, after {out['load_after']}); cached rebuild: "
              f"{out['cached_rebuild_s']} s (budget 15)")
    print(f"load average now: {load_average()}")
    print(f"\n{'page':27s} {'gzip KB':>8s} {'raw KB':>8s} {'html KB':>8s} {'prefetch KB':>11s} "
          f"{'scroll KB':>9s} {'sliders':>8s} {'ms med':>7s} {'ms max':>7s} {'live':>5s} "
          f"{'live med':>8s} {'live max':>8s}")
    heaviest = max(out["pages"].items(), key=lambda kv: kv[1]["gzip_bytes"])
    print(f"heaviest first load: {heaviest[0]}, {heaviest[1]['gzip_bytes'] / 1e3:.0f} KB "
          f"(budget {FIRST_LOAD_BUDGET_BYTES / 1e3:.0f})")
    for path, e in out["pages"].items():
        print(f"{path.removeprefix('book/'):27s} {e['gzip_bytes'] / 1e3:8.0f} "
              f"{e['raw_bytes'] / 1e3:8.0f} "
              f"{e['html_bytes'] / 1e3:8.0f} {e['prefetch_bytes'] / 1e3:11.0f} "
              f"{e['idle_scroll_bytes'] / 1e3:9.0f} {e['sliders']:8d} "
              f"{e['slider_ms_median'] or 0:7.1f} {e['slider_ms_max'] or 0:7.1f} "
              f"{e.get('live_sliders', 0):5d} {e.get('live_ms_median', 0):8.2f} "
              f"{e.get('live_ms_max', 0):8.2f}")
    return out


if __name__ == "__main__":
    main()
