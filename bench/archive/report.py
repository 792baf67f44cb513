"""Benchmark "report": the HTML report over the shared benchmark's runs, its size and load time.

Runs: a clustering of the clustering benchmark's set (the first 2,000 distinct lines of the five
classic <D>.train.en files, all-MiniLM-L6-v2, k = 5, PCA 50, 5 seeds: `domainsift cluster`), the
five `cosine` selections of bench/live/selection.py (bench/work/selection/<D>/cosine) and, when present,
their downstream check. Writes the report, then opens it in headless Chromium (Debian's chromium
and chromedriver, through selenium) five times and reports the time until Bokeh has rendered every
plot (the page's documents idle), the file size and any console error.

    python bench/archive/report.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))  # the shared helpers: bench/live/_common.py
from _common import CLASSIC, ROOT, data_file, write_results

WORK = ROOT / "bench" / "work" / "report"
SEL = ROOT / "bench" / "work" / "selection"


def main() -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    cluster = WORK / "cluster"
    if not (cluster / "map.json").exists():
        subprocess.run([sys.executable, "-m", "domainsift", "-q", "cluster",
                        *[data_file(d, "train") for d in CLASSIC], "--max-per-file", "2000", "--distinct",
                        "--k", "5", "--pca", "50", "--seeds", "5", "--out", str(cluster)], check=True)
    runs = [cluster] + [SEL / t / "cosine" for t in CLASSIC if (SEL / t / "cosine" / "selection.json").exists()]
    from domainsift.report.html import build_report
    out = WORK / "report.html"
    t0 = time.time()
    info = build_report(runs, out, title="domainsift: the shared benchmark")
    t_build = time.time() - t0

    sys.path.insert(0, str(ROOT / "tests"))
    from test_report import _driver
    loads, errors = [], []
    for _ in range(5):
        drv = _driver()
        try:
            t0 = time.time()
            drv.get(out.resolve().as_uri())
            while not drv.execute_script(
                    "return window.Bokeh !== undefined && Bokeh.documents.length > 0 && "
                    "Bokeh.documents.every(d => d.is_idle)"):
                time.sleep(0.02)
            loads.append(time.time() - t0)
            errors += [e["message"] for e in drv.get_log("browser") if e["level"] == "SEVERE"]
        finally:
            drv.quit()
    rows = {"runs": [str(Path(r).relative_to(ROOT)) for r in runs], "bytes": info["bytes"],
            "build_seconds": round(t_build, 2), "load_seconds": [round(x, 2) for x in loads],
            "load_seconds_median": round(statistics.median(loads), 2), "console_errors": errors}
    md = ["# HTML report over the shared benchmark's runs", "",
          f"Runs: {len(runs)} ({', '.join(Path(r).parent.name + '/' + Path(r).name for r in runs)}).", "",
          "| file size | build | load in headless Chromium (median of 5, until every Bokeh document is idle) | console errors |",
          "|---|---|---|---|",
          f"| {info['bytes'] / 1e6:.2f} MB | {t_build:.1f} s | {statistics.median(loads):.2f} s "
          f"({', '.join(f'{x:.2f}' for x in loads)}) | {len(errors)} |"]
    write_results("report", rows, "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
