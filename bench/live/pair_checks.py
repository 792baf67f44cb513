"""Pair checks on the shared pool (issue 89): what they remove of curated pairs, and how many noise pairs a
selection takes with and without them.

    python bench/live/pair_checks.py [--methods moore-lewis] [--targets EMEA KDE4] [--per-type 300]

1. **Clean pairs**: every pair of the seven domains' train files (35,000), checked at the defaults; the share
   each check removes, by domain, with examples.
2. **A noisy crawl**: the same pool plus ``--per-type`` noise pairs of each of Khayrallah & Koehn's (2018)
   five kinds, each made from a pair of the target's own train file (so its scored English side is
   in-domain and a selection wants it), written as pool files of their own so their ids tell their kind:
   *misaligned* (the German side of another pair of the domain), *misordered* (the German side's words
   shuffled), *wrong language* (an English sentence of another pair in the German column), *untranslated*
   (the English side copied into the German column), *fragment* (the German side cut to its first 2-5
   words). The rates follow the paper's setting of noise as large as the clean data in kind, not in share:
   ``--per-type`` of each kind beside the domain's 5,000 clean pairs. Each method selects ``N`` = 5,000
   pairs for the target (500 in-domain lines, ``<D>.test.en``) with the default checks, with
   ``--pair-checks all`` (adequacy too) and ``--pair-checks none``, through ``domainsift.run``; reported: the
   noise pairs of each kind selected.

Every row has its command, version, CPU and seed (0). The BLEU of models trained on these selections is
the judge's (``downstream --judge nmt``) and not part of this script.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from pathlib import Path

from _common import ROOT, SEVEN, apply_threads, data_file, earlier_rows, merge_rows, read_lines, threads_option, \
    write_results

WORK = ROOT / "bench" / "work" / "pair_checks"
KINDS = ["misaligned", "misordered", "wrong-language", "untranslated", "fragment"]
N, N_IN = 5000, 500


def clean_rates(sample_per_domain: int | None) -> dict:
    """Each domain's pairs checked at the defaults as one candidate set. Since 0.41.0 each domain's checks learn
    from its own pairs, as a selection learns from its first candidates (before: one set of checks that learnt
    from the seven domains' first 100 pairs)."""
    from domainsift.pairs import PairChecks
    out, examples, ratios = {}, {}, {}
    languages, thresholds = set(), {}
    for d in SEVEN:
        en, de = read_lines(data_file(d, "train", "en")), read_lines(data_file(d, "train", "de"))
        pairs = [(e, g) for e, g in zip(en, de) if e.strip() and g.strip()]
        pairs = pairs[:sample_per_domain] if sample_per_domain else pairs
        checks = PairChecks()
        checks.learn(pairs)
        failing = checks.failing(pairs)
        for pair, why in zip(pairs, failing):
            if why:
                checks.record(why, pair)
        out[d] = {"pairs": len(pairs), **{c: checks.removed.get(c, 0) for c in checks.checks}}
        described = checks.describe()
        for c, ex in described["examples"].items():
            examples.setdefault(c, []).extend(ex[:1])  # the first of each domain's
        ratios[d] = described.get("length_ratio")
        languages.add(" / ".join(checks.languages or []))
        thresholds = {"max_ratio": checks.max_ratio, "min_margin": checks.min_margin,
                      "numbers_margin": described.get("numbers_margin"), "pieces": described.get("adequacy_pieces")}
    total = {"pairs": sum(v["pairs"] for v in out.values()),
             **{c: sum(v.get(c, 0) for v in out.values()) for c in checks.checks}}
    return {"by_domain": out, "total": total, "languages": sorted(languages), "examples": examples,
            "length_ratio": ratios, "thresholds": thresholds}


def make_noise(target: str, per_type: int, folder: Path, seed: int = 0, source: tuple | None = None) -> dict:
    """The noise pairs of each kind as files of their own: ``{kind: (en file, de file)}``, made from the
    target's train pairs (``source``: these English and German files instead)."""
    rng = random.Random(seed)
    en_file, de_file = source or (data_file(target, "train", "en"), data_file(target, "train", "de"))
    en, de = read_lines(en_file), read_lines(de_file)
    idx = [k for k in range(len(en)) if en[k].strip() and de[k].strip() and len(de[k].split()) >= 6]
    files = {}
    folder.mkdir(parents=True, exist_ok=True)
    for kind in KINDS:
        pick = rng.sample(idx, per_type)
        other = rng.sample(idx, per_type)
        rows = []
        for a, b in zip(pick, other):
            if b == a:
                b = idx[(idx.index(a) + 1) % len(idx)]
            if kind == "misaligned":
                rows.append((en[a], de[b]))
            elif kind == "misordered":
                words = de[a].split()
                rng.shuffle(words)
                rows.append((en[a], " ".join(words)))
            elif kind == "wrong-language":
                rows.append((en[a], en[b]))
            elif kind == "untranslated":
                rows.append((en[a], en[a]))
            else:
                rows.append((en[a], " ".join(de[a].split()[:rng.randint(2, 5)])))
        fe, fd = folder / f"noise-{kind}.en", folder / f"noise-{kind}.de"
        fe.write_text("".join(r[0] + "\n" for r in rows), encoding="utf-8")
        fd.write_text("".join(r[1] + "\n" for r in rows), encoding="utf-8")
        files[kind] = (str(fe), str(fd))
    return files


def noisy_row(method: str, target: str, per_type: int, checks: str) -> dict:
    from domainsift import PoolSource, read_corpus, run
    from domainsift.spec import Rule, RunSpec
    noise = make_noise(target, per_type, WORK / target)
    en_files = [data_file(d, "train", "en") for d in SEVEN] + [noise[k][0] for k in KINDS]
    de_files = [data_file(d, "train", "de") for d in SEVEN] + [noise[k][1] for k in KINDS]
    out = WORK / target / f"{method}-{checks}"
    t0 = time.time()
    spec = RunSpec.single(method, read_corpus([data_file(target, "test", "en")]), PoolSource.open(en_files, de_files),
                          str(out), rule=Rule(top=N, pair_checks=None if checks == "default" else checks), seed=0,
                          overwrite=True)
    res = run(spec)
    seconds = time.time() - t0
    chosen = res.ids() if hasattr(res, "ids") else None
    import json
    sel = json.loads((out / "selection.json").read_text())
    kind_of = {str(Path(noise[k][0]).resolve()): k for k in KINDS}
    target_file = str(Path(data_file(target, "train", "en")).resolve())
    counts = Counter()
    for line in (out / "selected.ids.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        f = str(Path(line.split("\t")[0]).resolve())
        counts[kind_of.get(f, "target" if f == target_file else "other domains")] += 1
    del chosen
    return {"method": method, "target": target, "checks": checks, "per_type": per_type, "n": N,
            **{k: counts.get(k, 0) for k in KINDS}, "noise": sum(counts.get(k, 0) for k in KINDS),
            "in_domain": counts.get("target", 0), "removed": (sel.get("pair_checks") or {}).get("removed"),
            "seconds": round(seconds, 1)}


def _markdown(clean: dict | None, rows: list[dict]) -> str:
    md = ["# Pair checks: clean pairs removed, noise pairs selected", ""]
    if clean:
        t = clean["total"]
        names = [c for c in ("copy", "language", "ratio", "adequacy", "repeat") if c in t]  # the version's checks
        md += ["## Clean pairs (the seven domains' train files), at the defaults", "",
               f"Languages told from the pairs: {'; '.join(clean['languages'])}; max length ratio "
               f"{clean['thresholds']['max_ratio']:g}.", "",
               "Each domain's pairs are one candidate set (adequacy's neighbours are the domain's own pairs; since "
               "0.41.0 the checks learn from them, as a selection learns from its first candidates); the "
               "defaults of the version that made the table (adequacy: margin under "
               f"{clean['thresholds'].get('min_margin', '?')}"
               + (f", or under {clean['thresholds']['numbers_margin']} where the sides' numbers differ, each side's "
                  f"first {clean['thresholds'].get('pieces')} pieces read" if clean['thresholds'].get('numbers_margin')
                  is not None else "")
               + "; the learnt length ratio of German to English "
               + (", ".join(f"{d} {r}" for d, r in clean["length_ratio"].items())
                  if isinstance(clean.get("length_ratio"), dict) else f"{clean.get('length_ratio', '?')}") + ").", "",
               "| domain | pairs | " + " | ".join(names) + " | removed at the defaults |",
               "|---|---|" + "---|" * (len(names) + 1)]
        for d, v in list(clean["by_domain"].items()) + [("all", t)]:
            rem = sum(v.get(c, 0) for c in names)
            md.append(f"| {d} | {v['pairs']:,} | " + " | ".join(str(v.get(c, "-")) for c in names)
                      + f" | {rem} ({rem / v['pairs']:.2%}) |")
        md += ["", "Examples of what each check removed:", ""]
        for c, ex in clean["examples"].items():
            md += [f"- {c}: " + "; ".join(f"`{a[:70]}` / `{b[:70]}`" for a, b in ex)]
        md.append("")
    if rows:
        md += ["## A noisy crawl: noise pairs in a selection of 5,000", "",
               "The default checks: copy, language and ratio before 0.39.0; since 0.39.0 adequacy too (0.37.0's "
               "`all`).", "",
               "| method | target | checks | version | " + " | ".join(KINDS) + " | all noise | target's own |",
               "|---|---|---|---|" + "---|" * (len(KINDS) + 2)]
        for r in rows:
            md.append(f"| {r['method']} | {r['target']} | {r['checks']} | {r.get('version', '?')} | "
                      + " | ".join(str(r[k]) for k in KINDS) + f" | {r['noise']} ({r['noise'] / r['n']:.1%}) | "
                      f"{r['in_domain']} |")
        md.append("")
    return "\n".join(md)


def _table_of(results: dict) -> str:
    """The table as write_results wrote it, from the results file (its command, machine and date: the run that
    made the rows)."""
    md = _markdown(results.get("clean"), results.get("rows", []))
    libs = ", ".join(f"{k} {v}" for k, v in results.get("libraries", {}).items())
    head = (f"Command: `{results['command']}`  \nMachine: {results['machine']}  \n"
            f"domainsift {results['version']}; {libs}  \nDate: {results['date']}\n\n")
    return md.split("\n", 1)[0] + "\n\n" + head + md.split("\n", 1)[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--methods", nargs="+", default=["moore-lewis"])
    ap.add_argument("--targets", nargs="+", default=["EMEA", "KDE4"])
    ap.add_argument("--per-type", type=int, default=300)
    ap.add_argument("--skip-clean", action="store_true")
    ap.add_argument("--clean-only", action="store_true", help="measure the clean pairs only; keep the noisy rows")
    ap.add_argument("--table-only", action="store_true", help="rewrite the table from the results; run nothing")
    ap.add_argument("--checks", nargs="+", default=["default", "none"],
                    help="the --pair-checks of each row: default, none, all or a list (0.37.0 ran default, all, none)")
    threads_option(ap)
    args = ap.parse_args()
    apply_threads(args)
    from domainsift import __version__
    import json
    from _common import RESULTS
    old = json.loads((RESULTS / "pair_checks.json").read_text()) if (RESULTS / "pair_checks.json").exists() else {}
    if args.table_only:
        (RESULTS / "pair_checks.md").write_text(_table_of(old), encoding="utf-8")
        return
    clean = old.get("clean") if args.skip_clean else clean_rates(None)
    rows = earlier_rows("pair_checks")
    if args.clean_only:
        write_results("pair_checks", {"clean": clean, "rows": rows}, _markdown(clean, rows))
        return
    for method in args.methods:
        for target in args.targets:
            new = [dict(noisy_row(method, target, args.per_type, checks), version=__version__, seed=0)
                   for checks in args.checks]
            rows = merge_rows(rows, new, lambda r: (r["method"], r["target"], r["checks"], r["per_type"],
                                                    r.get("version")))
            write_results("pair_checks", {"clean": clean, "rows": rows}, _markdown(clean, rows))


if __name__ == "__main__":
    main()
