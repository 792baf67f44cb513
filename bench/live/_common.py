"""Shared helpers for the benchmarks: the data location and result writing."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("DOMAINSIFT_DATA", ROOT.parent / "shared" / "data" / "opus-multidomain" / "de-en"))
RESULTS = ROOT / "bench" / "results"
CLASSIC = ["EMEA", "JRC-Acquis", "KDE4", "OpenSubtitles", "Tanzil"]
SEVEN = CLASSIC + ["TED2020", "QED"]
PAIR = DATA.name  # de-en for the shared data; another pair of the same layout (fr-en) works too
LANG = next((x for x in PAIR.split("-") if x != "en"), "de")  # the cross-lingual benchmarks' in-domain language


def data_file(domain: str, split: str, lang: str = "en") -> str:
    p = DATA / f"{domain}.{split}.{lang}"
    if not p.exists():
        sys.exit(f"benchmark data not found: {p} (set DOMAINSIFT_DATA)")
    return str(p)


def read_lines(path) -> list[str]:
    """A text file's lines (UTF-8, without their line ends)."""
    return Path(path).read_text(encoding="utf-8").splitlines()


def clustering_set(per_domain: int = 2000):
    """The clustering set: the first ``per_domain`` distinct lines of <D>.train.en of the five classic
    domains (10,000 sentences by default), as a Corpus (its files give the gold labels)."""
    from domainsift.io.corpus import read_corpus
    return read_corpus([data_file(d, "train") for d in CLASSIC], max_per_file=per_domain, distinct=True)


def command_line() -> str:
    import shlex  # quoted as a shell needs it ("line number, both"), so the header reruns as written
    return "python " + shlex.join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])


def machine() -> str:
    """The machine a result was measured on: CPU model and instruction-set family (and its native bfloat16
    units, where it has them), cores, Python."""
    from domainsift.machine import cpu_isa, cpu_model
    bf16 = native_bf16()
    return (f"{cpu_model()} ({cpu_isa()}{', ' + bf16 if bf16 else ''}), {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}")


def native_bf16() -> str:
    """The CPU's native bfloat16 arithmetic, from Linux's flags: ``amx`` (AMX tiles, which also means
    AVX512-BF16), ``avx512-bf16``, or ``""`` (none: bfloat16 is emulated in float32)."""
    try:
        with open("/proc/cpuinfo") as fh:
            flags = next((ln.split(":", 1)[1].split() for ln in fh if ln.startswith("flags")), [])
    except OSError:
        return ""
    return "amx" if "amx_bf16" in flags else "avx512-bf16" if "avx512_bf16" in flags else ""


def cpu_isa() -> str:
    """The instruction-set family of this CPU (avx2, avx512, avx512-vnni, amx ...), as rows record it."""
    from domainsift.machine import cpu_isa as isa
    return isa()


def version_key(version) -> tuple:
    """A version string ('0.21.0') as a tuple that orders versions (a missing one first)."""
    return tuple(int(x) for x in str(version or "0").split(".") if x.isdigit())


SEEDS_FOR_A_VERDICT = 3  # issue 88: at least three training seeds before a claim is decided


def over_seeds(tests: dict) -> str:
    """A claim tested once per training seed, in the three words docs/papers.md uses. ``tests``: seed ->
    ``(version, test)``, ``test`` one metric of a paired bootstrap (``difference``, ``ci95``, ``decided``) of the
    system against the baseline the claim puts below it. The seeds are training runs (the training's noise): the
    claim **holds** when every seed's test is significant in its direction, **does not hold** when every seed's is
    significant the other way, and is **not decided** otherwise or with fewer than SEEDS_FOR_A_VERDICT seeds;
    given with the mean difference, its 95% t-interval over the seeds and each seed's test."""
    import numpy as np
    from scipy import stats
    diffs = np.array([t["difference"] for _, t in tests.values()])
    signs = {(t["difference"] > 0) if t["decided"] else None for _, t in tests.values()}
    word = "not decided" if len(tests) < SEEDS_FOR_A_VERDICT or len(signs) != 1 or None in signs else \
        "holds" if signs == {True} else "does not hold"
    spread = ""
    if len(tests) > 1:
        half = stats.t.ppf(0.975, len(tests) - 1) * diffs.std(ddof=1) / np.sqrt(len(tests))
        spread = f" [{diffs.mean() - half:+.2f}, {diffs.mean() + half:+.2f}] (t over the seeds)"
    each = "; ".join(f"s{s} ({v}) {t['difference']:+.2f} [{t['ci95'][0]:+.2f}, {t['ci95'][1]:+.2f}]"
                     for s, (v, t) in tests.items())
    return (f"**{word}** over {len(tests)} seed{'s' if len(tests) > 1 else ''}; mean {diffs.mean():+.2f}{spread}; "
            f"each seed's paired bootstrap: {each}")


def claims_over_seeds(paired: dict, claims: list[tuple[str, str]]) -> list[str]:
    """Each claim ``(system, baseline)`` of ``claims`` on each group (a target, a new domain) over its seeds, by
    :func:`over_seeds`; ``paired``: ``(group, system, baseline, seed) -> (version, paired bootstrap)``."""
    out = []
    for group in sorted({g for g, _, _, _ in paired}):
        for system, baseline in claims:
            tests = {seed: (v, test["bleu"]) for (g, a, b, seed), (v, test) in sorted(paired.items())
                     if (g, a, b) == (group, system, baseline)}
            if tests:
                out.append(f"{group}: {system} above {baseline}: {over_seeds(tests)}.  ")
    return out


def read_once(read):
    """``read(row, *rest)`` remembered for each row (by identity: rows are dicts) and ``rest``, so that a row that
    is in several comparisons is read once per table."""
    seen = {}

    def once(row, *rest):
        key = (id(row), *rest)
        if key not in seen:
            seen[key] = read(row, *rest)
        return seen[key]
    return once


def keep_gzipped(src: Path, dst: Path) -> None:
    """``src`` gzipped (reproducibly: no time stamp) to ``dst``, through a temporary name."""
    import gzip
    import shutil
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_suffix(".tmp")
    with open(src, "rb") as fin, gzip.GzipFile(tmp, "wb", mtime=0) as fout:
        shutil.copyfileobj(fin, fout)
    tmp.rename(dst)


def read_gzipped(path: Path) -> list[str]:
    """The lines of a file :func:`keep_gzipped` wrote."""
    import gzip
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return fh.read().splitlines()


def stale_selection(out) -> None:
    """Drop the selection in ``out`` when another version of domainsift made it (its pair checks may differ), so
    that the caller selects again; its scores stay."""
    from domainsift import __version__
    out = Path(out)
    if (out / "selection.json").exists() and \
            json.loads((out / "signature.json").read_text()).get("version") != __version__:
        (out / "selection.json").unlink()


def earlier_rows(name: str) -> list[dict]:
    """The rows of ``bench/results/<name>.json`` as the last run left them (none yet: empty); a benchmark
    that adds rows keeps the others."""
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text())["rows"] if path.exists() else []


def merge_rows(rows: list[dict], new: list[dict], key) -> list[dict]:
    """``rows`` with those that ``new`` measures again (the same ``key(row)``) replaced by ``new``."""
    done = {key(r) for r in new}
    return [r for r in rows if key(r) not in done] + new


def add_rows(name: str, new: list[dict], key, write) -> list[dict]:
    """``new`` merged into the rows ``bench/results/<name>.json`` holds now, and ``write(rows)`` called, under
    an exclusive lock: two runs of one benchmark side by side (``--threads 1`` each) keep each other's rows.
    Each new row gets the ``machine`` it was measured on (:func:`machine`)."""
    with locked(name):
        for r in new:  # every row keeps the machine it was measured on
            r.setdefault("machine", machine())
        rows = merge_rows(earlier_rows(name), new, key)
        write(rows)
    return rows


@contextmanager
def locked(name: str):
    """An exclusive lock on ``bench/results/<name>.json`` while the block rewrites it (runs side by side wait)."""
    import fcntl
    lock = ROOT / "bench" / "work" / ".locks" / f"{name}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def write_results(name: str, payload: dict, markdown: str) -> None:
    from domainsift.io import atomic_open, save_json
    RESULTS.mkdir(parents=True, exist_ok=True)
    from domainsift import __version__
    from domainsift.machine import library_versions
    payload = {"command": command_line(), "machine": machine(), "version": __version__,
               "libraries": {k: v for k, v in library_versions().items() if v},
               "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **payload}
    save_json(RESULTS / f"{name}.json", payload)
    libs = ", ".join(f"{k} {v}" for k, v in payload["libraries"].items())
    head = (f"Command: `{payload['command']}`  \nMachine: {payload['machine']}  \n"
            f"domainsift {payload['version']}; {libs}  \nDate: {payload['date']}\n\n")
    with atomic_open(RESULTS / f"{name}.md") as fh:
        fh.write(markdown.split("\n", 1)[0] + "\n\n" + head + markdown.split("\n", 1)[1])
    print(f"wrote {RESULTS / name}.md and .json")


def threads_option(ap) -> None:
    """``--threads N``: torch's threads, and so ONNX Runtime's (the encoders take torch's count); two
    1-thread benchmarks side by side get more done on 2 cores than one of 2, at the cost of their timings."""
    ap.add_argument("--threads", type=int, default=None,
                    help="torch's (and ONNX Runtime's) threads (default: torch's); seconds measured beside "
                         "another process are not timings")


def apply_threads(args) -> None:
    if getattr(args, "threads", None):
        import torch
        torch.set_num_threads(args.threads)


def rows_options(ap, name: str, write):
    """A row-by-row benchmark's command line: ``--table-only`` (rewrite ``bench/results/<name>`` from its
    finished rows with ``write(rows)``, training nothing) and ``--threads``. Returns the parsed arguments, or
    None when the table was all there was to do."""
    ap.add_argument("--table-only", action="store_true", help="rewrite the table from the finished rows; train nothing")
    threads_option(ap)
    args = ap.parse_args()
    apply_threads(args)
    if args.table_only:  # under the file's lock, as a run adding rows writes it
        add_rows(name, [], key=id, write=write)
        return None
    return args
