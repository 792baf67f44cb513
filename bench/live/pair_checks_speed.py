"""Benchmark "pair_checks_speed": what the pair checks add to a finetune cascade's time on a bitext pool of
1,000,000 pairs (issue 89 bounds it at 25%).

The pool: the shared train pairs of the seven domains and KDE4's noise pairs of ``pair_checks.py`` (300 of
each of its five kinds, made from KDE4's train pairs: 36,500 pairs, 4% noise), repeated with a line-number
prefix on both sides ("123456: ...") until 1,000,000 pairs, so every pair is distinct and the checks have
what they catch in a crawl to catch (a pair that fails walks the selection further down its ranking). Each
arm is one ``domainsift select --method finetune --cascade --fraction 0.01 --in-domain KDE4.test.en --pool
pool.en --pool-target pool.de`` in a fresh process with an empty vector cache: ``--no-pair-checks``, and the
defaults (every check; adequacy on the candidates only, in the selecting process). Wall time, peak RSS,
what each check removed; the checks' cost is the difference of the two arms' times over the unchecked one's.
``--threads N`` runs each process on N threads (torch and the BLAS: ``OMP_NUM_THREADS``) and one scoring
process (``--processes 1`` when N is 1), so that the arms run beside another one-thread job alike.

    python bench/live/pair_checks_speed.py [--size 1000000] [--threads 1]

Each finished arm is kept under bench/work/pair_checks_speed/ (keyed by version, commit, size and threads): a
killed run resumes at the arm it had not finished. Rows record the commit of the code (``-dirty``: changes under
src/ not committed); the first row (0.40.0, no commit recorded) is the code before the copy check's bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from _common import ROOT, SEVEN, add_rows, command_line, data_file, read_lines, write_results

WORK = ROOT / "bench" / "work" / "pair_checks_speed"
FRACTION = 0.01
TARGET = "KDE4"
ARMS = {"none": ["--no-pair-checks"], "default": []}
RUNNER = r"""
import json, sys, time
from domainsift.cli import main
t0 = time.time()
rc = main(["-q"] + sys.argv[1:])
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"rc": rc, "seconds": round(time.time() - t0, 1), "peak_rss_mb": round(hwm / 1024, 1)}))
"""


def make(size: int) -> tuple:
    """The pool's two files (made once)."""
    import pair_checks
    en_path, de_path = WORK / f"pool-{size}.en", WORK / f"pool-{size}.de"
    if en_path.exists() and de_path.exists():
        return en_path, de_path
    WORK.mkdir(parents=True, exist_ok=True)
    en = [x for d in SEVEN for x in read_lines(data_file(d, "train", "en"))]
    de = [x for d in SEVEN for x in read_lines(data_file(d, "train", "de"))]
    noise = pair_checks.make_noise(TARGET, 300, WORK / "noise")
    for kind in pair_checks.KINDS:
        en += read_lines(noise[kind][0])
        de += read_lines(noise[kind][1])
    for path, lines in ((en_path, en), (de_path, de)):
        tmp = path.with_suffix(path.suffix + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for i in range(size):
                f.write(f"{i}: {lines[i % len(lines)]}\n")
        tmp.rename(path)
    return en_path, de_path


def _code_of(commit: str) -> str:
    """The last commit that changed the product's code (src/) at or before ``commit`` (``-dirty`` kept): rows of
    one version measured before and after a change of speed keep apart, and commits elsewhere (a row of another
    benchmark landing between two arms; 0.40.0's first rows recorded HEAD) do not."""
    if not commit:
        return ""
    bare = commit.removesuffix("-dirty")
    found = subprocess.run(["git", "log", "-1", "--format=%h", bare, "--", "src"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    return (found or bare) + commit[len(bare):]


def _commit() -> str:
    """The code the product runs now: :func:`_code_of` HEAD, ``-dirty`` with changes under src/ not committed."""
    dirty = subprocess.run(["git", "status", "--porcelain", "src"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return _code_of("HEAD" + ("-dirty" if dirty else ""))


def arm(name: str, size: int, threads: int | None) -> dict:
    from domainsift import __version__
    en, de = make(size)
    commit = _commit()
    tag = f"{__version__}-{commit}-{size}-{name}-t{threads or 0}"
    done = WORK / f"{tag}.json"
    if done.exists():
        return json.loads(done.read_text())
    out, cache = WORK / f"run-{tag}", WORK / f"cache-{tag}"
    for folder in (out, cache):
        subprocess.run(["rm", "-rf", str(folder)], check=True)
    cmd = [sys.executable, "-c", RUNNER, "select", "--method", "finetune", "--cascade", "--fraction", str(FRACTION),
           "--in-domain", data_file(TARGET, "test", "en"), "--pool", str(en), "--pool-target", str(de),
           "--out", str(out), "--cache", str(cache), *ARMS[name]]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
        if threads == 1:
            cmd += ["--processes", "1"]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"{name}: domainsift select failed:\n{proc.stderr[-3000:]}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    sel = json.loads((out / "selection.json").read_text())
    row = {"arm": name, "size": size, "version": __version__, "commit": commit, "threads": threads,
           "command": command_line(),
           "seconds": got["seconds"],
           "peak_rss_mb": got["peak_rss_mb"], "wall_seconds": round(time.time() - t0, 1),
           "selected": sel.get("selected") or sel.get("n_selected"),
           "pair_checks": {k: v for k, v in (sel.get("pair_checks") or {}).items() if k != "examples"}}
    tmp = done.with_suffix(".tmp")
    tmp.write_text(json.dumps(row, indent=1))
    tmp.rename(done)
    return row


def _markdown(rows: list) -> str:
    md = ["# What the pair checks cost a finetune cascade", "",
          f"`domainsift select --method finetune --cascade --fraction {FRACTION}` (1% of the pool) on a bitext pool "
          "of the shared train pairs and KDE4's noise pairs of pair_checks.py, repeated with a line-number prefix; "
          "in-domain set KDE4.test.en; a fresh process with an empty cache per arm. The checks' cost: the "
          "difference of the two arms' times over the unchecked arm's (issue 89: at most 25%).", "",
          "| version | code (last commit to src/) | pairs | threads | no checks (s) | default checks (s) | added | peak RSS (MB) | removed by the checks |",
          "|---|---|---|---|---|---|---|---|---|"]
    keyed = {}
    for r in rows:
        keyed.setdefault((r["version"], _code_of(r.get("commit") or ""), r["size"], r["threads"]), {})[r["arm"]] = r
    for (version, commit, size, threads), arms in sorted(keyed.items(), key=lambda kv: [str(x) for x in kv[0]]):
        if set(arms) != set(ARMS):
            continue
        a, b = arms["none"], arms["default"]
        removed = ", ".join(f"{k} {v}" for k, v in (b["pair_checks"].get("removed") or {}).items())
        md.append(f"| {version} | {commit or '-'} | {size:,} | {threads or 'all'} | {a['seconds']} | {b['seconds']} | "
                  f"{(b['seconds'] - a['seconds']) / a['seconds']:+.1%} | {a['peak_rss_mb']:.0f} / {b['peak_rss_mb']:.0f} | "
                  f"{removed} |")
    # rows of 0.40.0's first runs did not record their command: both were this one
    made = sorted({r.get("command") or "python bench/live/pair_checks_speed.py --threads 1" for r in rows})
    md += ["", "Rows made by: " + "; ".join(f"`{c}`" for c in made), ""]
    return "\n".join(md)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=None, help="threads of each run (default: the machine's)")
    ap.add_argument("--table-only", action="store_true", help="rewrite the table from the finished rows; run nothing")
    args = ap.parse_args()
    if args.table_only:
        add_rows("pair_checks_speed", [], lambda r: None,
                 lambda rows: write_results("pair_checks_speed", {"rows": rows}, _markdown(rows)))
        return
    for name in ARMS:
        row = arm(name, args.size, args.threads)
        add_rows("pair_checks_speed", [row],
                 lambda r: (r["version"], r.get("commit") or "", r["size"], r["threads"], r["arm"]),
                 lambda rows: write_results("pair_checks_speed", {"rows": rows}, _markdown(rows)))


if __name__ == "__main__":
    main()
