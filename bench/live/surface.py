"""Benchmark "surface": the in-domain set against the pool on the surface (``domainsift.surface``).

Three tables, through the product's public API (``domainsift.surface.compare``, ``domainsift.share``,
``domainsift.get_selector``):

1. **Quiet where it should be.** Every domain's test file (English and German) as the in-domain set
   against seeded 1,000-line samples (seeds 0-4, ``surface.SAMPLE`` lines as a run draws) of the pools
   the benchmarks use: the seven train files (shared), the six others (zero), and, for KDE4 and
   OpenSubtitles, the negatives-study pools (small: the target 2%; large: 29%). Any warning here
   is a false alarm: these sets differ by domain, not by format.
2. **Loud where it should be.** The same in-domain sets against the shared pool in a format they do not
   have: each line prefixed with its line number (the 10M pool of ``bench/live/scale.py``), each line a
   tab-separated English-German pair, each line wrapped in ``<p>...</p>``, each line an ID (``doc1234``: a
   TSV's first column read as the text); and the in-domain set as paragraphs (10 test lines joined) against
   the sentences of the shared pool.
3. **What a format costs a run** (English; ``--targets``, default KDE4 and EMEA): the shared pool plain and
   with the line-number prefix, the in-domain set plain, and both sets with the prefix (the warning's "add it to
   the other", the numbers drawn from the pool's range, seed 0), and the numbered pool read with the product's
   ``strip_id`` (``--strip-id``): the in-domain share estimated by the product
   (``domainsift.share.estimate_share``, the default bbe on a 20,000-line seeded sample; truth 0.143) and
   cosine's precision at N = 5,000 (the target's train lines among its top 5,000; the product's default
   encoder). ``--finetune`` adds the default finetune's precision (seed 0; minutes a run).

    python bench/live/surface.py [--targets KDE4 EMEA] [--finetune] [--cases plain "line number" ...] [--report-only]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _common import ROOT, SEVEN, data_file, earlier_rows, merge_rows, write_results
from _common import read_lines as lines

WORK = ROOT / "bench" / "work" / "surface"
SEEDS = range(5)
N = 5000


def pools(lang: str) -> dict[str, dict[str, list[str]]]:
    """``{pool: {target: pool lines}}`` for the quiet table."""
    train = {d: lines(data_file(d, "train", lang)) for d in SEVEN}
    out = {"shared": {d: sum((train[x] for x in SEVEN), []) for d in SEVEN},
           "zero": {d: sum((train[x] for x in SEVEN if x != d), []) for d in SEVEN}}
    if lang == "en":
        from negatives_pools import build_pool
        for name in ("small", "large"):
            out[name] = {}
            for d in ("KDE4", "OpenSubtitles"):
                files, _, _ = build_pool(name, d)
                out[name][d] = sum((lines(f) for f in files), [])
    return out


def sample(texts: list[str], seed: int, k: int) -> list[str]:
    keep = np.sort(np.random.default_rng(seed).choice(len(texts), size=min(k, len(texts)), replace=False))
    return [texts[i] for i in keep]


def quiet_rows() -> list[dict]:
    from domainsift.surface import SAMPLE, compare
    rows = []
    for lang in ("en", "de"):
        for pool, by_target in pools(lang).items():
            for target, texts in by_target.items():
                ind = lines(data_file(target, "test", lang))
                found = [d.what for s in SEEDS for d in compare(ind, sample(texts, s, SAMPLE))]
                rows.append({"table": "quiet", "lang": lang, "pool": pool, "target": target, "checks": len(SEEDS),
                             "warnings": len(found), "what": sorted(set(found))})
    return rows


def loud_rows() -> list[dict]:
    from domainsift.surface import SAMPLE, compare
    en = sum((lines(data_file(d, "train")) for d in SEVEN), [])
    de = sum((lines(data_file(d, "train", "de")) for d in SEVEN), [])
    formats = {"line number": [f"{i}: {t}" for i, t in enumerate(en, 1)],
               "tab-separated pair": [f"{a}\t{b}" for a, b in zip(en, de)],
               "markup": [f"<p>{t}</p>" for t in en],
               "ID column (a TSV's first column read as the text)": [f"doc{i}" for i in range(1, len(en) + 1)]}
    rows = []
    for target in SEVEN:
        ind = lines(data_file(target, "test"))
        cases = {name: (ind, pool) for name, pool in formats.items()}
        cases["paragraphs (in-domain set)"] = ([" ".join(ind[i:i + 10]) for i in range(0, len(ind), 10)], en)
        for name, (a, pool) in cases.items():
            found = [compare(a, sample(pool, s, SAMPLE)) for s in SEEDS]
            rows.append({"table": "loud", "format": name, "target": target, "checks": len(SEEDS),
                         "warned": sum(1 for f in found if f), "what": sorted({d.what for f in found for d in f})})
    return rows


CASES = ("plain", "line number", "line number, both", "line number, --strip-id")


def cost_rows(targets: list[str], finetune: bool, cases: tuple = CASES) -> list[dict]:
    import domainsift as ds
    from domainsift import __version__
    from domainsift.select import get_selector
    from domainsift.share import SAMPLE_LINES, estimate_share
    plain = ds.read_corpus([data_file(d, "train") for d in SEVEN])
    WORK.mkdir(parents=True, exist_ok=True)
    numbered_file = WORK / "shared-numbered.en"
    if not numbered_file.exists():
        from domainsift.io.corpus import write_lines
        write_lines(numbered_file, (f"{i}: {t}" for i, t in enumerate(plain.texts, 1)))
    numbered = ds.read_corpus([str(numbered_file)])
    n = len(plain)
    pick = np.sort(np.random.default_rng(0).choice(n, size=min(SAMPLE_LINES, n), replace=False))
    rows = []
    for target in targets:
        ind = ds.read_corpus([data_file(target, "test")])
        truth = np.array([Path(f).name == Path(data_file(target, "train")).name for f, _ in plain.ids])
        # "both": the warning's other advice taken, the in-domain set given the pool's prefix (numbers drawn
        # from the pool's range, seed 0, as bench/live/scale.py's prefixed query)
        numbered_query = WORK / f"{target}-numbered.en"
        if not numbered_query.exists():
            from domainsift.io.corpus import write_lines
            given = np.random.default_rng(0).integers(1, n + 1, len(ind))
            write_lines(numbered_query, (f"{k}: {t}" for k, t in zip(given, ind.texts)))
        ind_numbered = ds.read_corpus([str(numbered_query)])
        stripped = ds.read_corpus([str(numbered_file)], strip_id=True) if "line number, --strip-id" in cases else None
        for fmt, corpus, query in (("plain", plain, ind), ("line number", numbered, ind),
                                   ("line number, both", numbered, ind_numbered),
                                   ("line number, --strip-id", stripped, ind)):
            if fmt not in cases:
                continue
            t0 = time.time()
            est = estimate_share(query.texts, [corpus.texts[i] for i in pick], seed=0, progress=False,
                                 cache_dir=str(WORK / "cache"))
            row = {"table": "cost", "version": __version__, "target": target, "pool format": fmt,
                   "true share": round(float(truth.mean()), 4), "share": round(est.share, 4),
                   "share low": round(est.low, 4), "share high": round(est.high, 4),
                   "share seconds": round(time.time() - t0, 1)}
            methods = ["cosine"] + (["finetune"] if finetune else [])
            for m in methods:
                t0 = time.time()
                sel = get_selector(m, seed=0, progress=False, cache_dir=str(WORK / "cache"))
                sel.fit(query, corpus if sel.fit_uses_pool else None)
                s = np.asarray(sel.score(corpus), dtype=np.float64)
                top = np.argsort(-s, kind="stable")[:N]
                row[f"{m} precision"] = round(float(truth[top].mean()), 4)
                row[f"{m} seconds"] = round(time.time() - t0, 1)
            print(row, flush=True)
            rows.append(row)
    return rows


def report(rows: list[dict]) -> None:
    from domainsift.surface import FEW, LENGTH_RATIO, MOST, PATTERNS, SAMPLE
    quiet = [r for r in rows if r["table"] == "quiet"]
    loud = [r for r in rows if r["table"] == "loud"]
    cost = [r for r in rows if r["table"] == "cost"]
    md = ["# The in-domain set against the pool on the surface (domainsift.surface)", "",
          f"The check: each pattern ({'; '.join(name for name, _ in PATTERNS)}) is reported when it is on at least "
          f"{MOST:.0%} of one set's lines and at most {FEW:.0%} of the other's; the length when one set's median (in "
          f"characters) is {LENGTH_RATIO:g} times the other's. The pool: seeded samples of {SAMPLE:,} lines (seeds "
          f"0-{len(SEEDS) - 1}, as a run draws one); the in-domain set: <D>.test.<lang> (500 lines).", "",
          "## Quiet where the sets differ by domain alone", "",
          "Any warning here is a false alarm. shared: the seven train files; zero: the six others; small / large: "
          "the negatives-study pools (the target 2% / 29%).", "",
          "| language | pool | targets | checks | warnings |", "|---|---|---|---|---|"]
    for lang in ("en", "de"):
        for pool in ("shared", "zero", "small", "large"):
            g = [r for r in quiet if r["lang"] == lang and r["pool"] == pool]
            if g:
                md.append(f"| {lang} | {pool} | {len(g)} | {sum(r['checks'] for r in g)} | "
                          f"{sum(r['warnings'] for r in g)}"
                          + (f" ({', '.join(sorted({w for r in g for w in r['what']})).replace('|', chr(92) + '|')})"
                             if any(r['what'] for r in g)
                             else "") + " |")
    md += ["", "## Loud where the format differs", "",
           "The shared pool's lines in a format the in-domain set does not have (line number: `1234: line`, as the "
           "10M pool of bench/live/scale.py; a tab-separated English-German pair; `<p>line</p>`; `doc1234`, a TSV's ID "
           "column read as the text), and the in-domain "
           "set as paragraphs of 10 test lines against the shared pool's sentences. Seven targets, five pool samples "
           "each.", "",
           "| format | checks | warned | what was said |", "|---|---|---|---|"]
    for fmt in dict.fromkeys(r["format"] for r in loud):
        g = [r for r in loud if r["format"] == fmt]
        md.append(f"| {fmt} | {sum(r['checks'] for r in g)} | {sum(r['warned'] for r in g)} | "
                  f"{', '.join(sorted({w for r in g for w in r['what']})).replace('|', chr(92) + '|')} |")
    if cost:
        md += ["", "## What the line-number prefix costs a run", "",
               "The shared pool (35,000 lines, the target 14.3%) as it is and with every line prefixed by its line "
               "number; the in-domain set <D>.test.en as it is, or (line number, both) given the prefix too, its "
               "numbers drawn from the pool's range (seed 0); line number, --strip-id: the numbered pool read with "
               "the product's strip_id. share: the product's estimate (bbe on a 20,000-line "
               f"seeded sample, 95% interval); precision: the target's train lines among the method's top {N:,} "
               "(seed 0, the default encoder). Rows made by `python bench/live/surface.py --finetune` at the version "
               "each names (the methods and the estimate are the same in every version since).", "",
               "| target | pool | true share | estimated share | " + " | ".join(
                   f"{m} precision" for m in ("cosine", "finetune") if any(f"{m} precision" in r for r in cost))
               + " | version |",
               "|---|---|---|---|" + "---|" * sum(1 for m in ("cosine", "finetune")
                                                   if any(f"{m} precision" in r for r in cost)) + "---|"]
        for r in cost:
            md.append(f"| {r['target']} | {r['pool format']} | {r['true share']:.3f} | {r['share']:.3f} "
                      f"[{r['share low']:.3f}, {r['share high']:.3f}] | " + " | ".join(
                          f"{r[f'{m} precision']:.4f}" if f"{m} precision" in r else "-"
                          for m in ("cosine", "finetune") if any(f"{m} precision" in x for x in cost))
                      + f" | {r['version']} |")
    write_results("surface", {"rows": rows}, "\n".join(md) + "\n")


def key(r: dict) -> tuple:
    return (r["table"], r.get("lang"), r.get("pool"), r.get("format"), r.get("pool format"), r["target"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", nargs="+", default=["KDE4", "EMEA"])
    ap.add_argument("--finetune", action="store_true", help="also the default finetune's precision (minutes a run)")
    ap.add_argument("--no-cost", action="store_true", help="only the two tables of the check itself")
    ap.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES),
                    help="the cost table's cases: the pool plain, with a line-number prefix, or both sets with it")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    rows = earlier_rows("surface")
    if not args.report_only:
        new = quiet_rows() + loud_rows()
        if not args.no_cost:
            new += cost_rows(args.targets, args.finetune, tuple(args.cases))
        rows = merge_rows(rows, new, key)
    report(rows)


if __name__ == "__main__":
    main()
