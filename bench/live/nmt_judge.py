"""Benchmark "nmt_judge": paper 000's question in BLEU. Does the translation model trained on each
method's selection order the methods as precision does?

Since 0.38.0 every judged target (KDE4, EMEA, JRC-Acquis) has a judge set held out of the pool: the last
``HELD_OUT`` = 1,100 pairs of its train file, minus any whose English or German line the pool still holds
(the files' own repeats, compared as the judge compares them): 1,070 KDE4, 1,055 EMEA and 1,093
JRC-Acquis pairs. The pool is the seven domains' train pairs without those three blocks
(31,700 pairs, the same pool for every target; its files are written under bench/work/nmt_judge/pool, never
into the repository). A target's in-domain set is its test file's English side (500 lines, minus lines the
pool holds); its pairs are the dev set every model stops on (each row leaves out the pairs its training data
holds). Each method selects N = 3,900 pairs (the target's share of the pool, so the oracle is exactly its
in-domain pairs) scoring the English side (``--pool ... --pool-target ...``; the selection writes both
sides); the product's judge (``domainsift.jobs.downstream.judge_nmt``, as ``downstream --judge nmt``) trains
a `proxy`-preset model (domainsift nmt, from scratch, de->en) on the selected pairs and judges it by BLEU,
chrF and chrF++ (sacrebleu) on the judge set, beam 5, keeping its translations (and, gzipped, in
bench/results/nmt_judge_hyp/, so that a later checkout can test them again); every row is tested against
the random row by paired bootstrap (1,000 resamples). Rows: random, moore-lewis, cosine, finetune, the oracle
(the target's own 3,900 pairs in the pool) and, with ``--methods pool``, all 31,700 pairs (the judge's
whole-pool bitext, read from the random selection and trained as a reference row; where the random row's
translations are kept, the random model is not trained again). The selection's
precision against the target's pool file is reported beside it. Before 0.38.0 the judge set was half of the
test file (215-256 pairs): those rows stay in the table with their version and settings.

Every row is a real run directory under bench/work/nmt_judge/<D>/s<seed> made through the public API; a
finished row is written to bench/results/nmt_judge.json as it lands, so a killed benchmark resumes (and one
benchmark at a time: a row's seconds are timings).

    python bench/live/nmt_judge.py [--targets KDE4 ...] [--methods random moore-lewis ...] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path

import numpy as np
from _common import RESULTS, ROOT, SEVEN, add_rows, command_line, data_file, earlier_rows, read_lines, \
    rows_options, write_results

WORK = ROOT / "bench" / "work" / "nmt_judge"
JUDGED = ["KDE4", "EMEA", "JRC-Acquis"]  # the targets judged: each holds out HELD_OUT train pairs of the pool
HELD_OUT = 1100  # at least 1,000 judge pairs after the drops (the files repeat lines)
N = 3900  # a judged target's pairs left in the pool: the oracle selection is exactly them
METHODS = ["random", "moore-lewis", "cosine", "finetune", "oracle"]
# the pair checks every row selects with: 0.37.0's and 0.38.0's defaults, pinned when adequacy joined the defaults
# (0.39.0), so that every seed and target of paper 000's table selects alike (the pool is curated pairs)
PAIR_CHECKS = "copy,language,ratio"
# the proxy preset's own batches and warm-up (0.37.0); at most 60 epochs, a cap the rows do not reach (15 of 32
# rows of 0.32.0-0.36.0 stopped at 30, 9 still improving)
EPOCHS, PATIENCE, BEAM, MAX_TOKENS, WARMUP = 60, 3, 5, 800, 200
SETTINGS = (f"epochs {EPOCHS}, patience {PATIENCE}, max_tokens {MAX_TOKENS}, warmup {WARMUP}, beam {BEAM}, "
            f"judge: the last {HELD_OUT} train pairs held out of the pool, N {N}, the product's judge")


def pool_files() -> tuple[list[str], list[str]]:
    """The pool's English and German files: each domain's train pairs, a judged target's last HELD_OUT
    pairs left out (written once under WORK/pool)."""
    en, de = [], []
    for d in SEVEN:
        for lang, out in (("en", en), ("de", de)):
            path = WORK / "pool" / f"{d}.train.{lang}"
            if not path.exists():
                lines = read_lines(data_file(d, "train", lang))
                path.parent.mkdir(parents=True, exist_ok=True)
                keep = lines[:-HELD_OUT] if d in JUDGED else lines
                tmp = path.with_suffix(path.suffix + ".tmp")
                tmp.write_text("".join(x + "\n" for x in keep), encoding="utf-8")
                tmp.rename(path)
            out.append(str(path))
    return en, de


def halves(target: str, pool_en: set, pool_de: set, seed: int = 0) -> tuple[list, list]:
    """The query and judge halves of <target>.test as (de, en) pairs, cut by a seeded hash of the English
    line; judge pairs that the pool holds (either side) are dropped (the judge of rows before 0.38.0, and
    bench/live/guda.py's)."""
    query, judge = [], []
    for de, en in zip(read_lines(data_file(target, "test", "de")), read_lines(data_file(target, "test", "en"))):
        if not de.strip() or not en.strip():
            continue
        side = hashlib.sha256(f"{seed}\t{en}".encode("utf-8")).digest()[0] & 1
        if side == 0:
            query.append((de, en))
        elif en not in pool_en and de not in pool_de:
            judge.append((de, en))
    return query, judge


def judge_sets(target: str, pool_en: list, pool_de: list) -> tuple[list, list]:
    """The target's query pairs (its test file: the in-domain set and the dev set) and judge pairs (its train
    file's last HELD_OUT pairs), as (de, en): judge pairs that repeat a sentence of the pool, and query pairs
    that repeat one of the pool or of the judge set, are dropped, compared as the product compares them
    (``domainsift.nmt.data.held``: the judge refuses what it would find)."""
    from domainsift.nmt.data import Bitext, held

    def pairs(split, tail=None):
        de, en = read_lines(data_file(target, split, "de")), read_lines(data_file(target, split, "en"))
        got = list(zip(de, en))[-tail:] if tail else list(zip(de, en))
        return [(d, e) for d, e in got if d.strip() and e.strip()]

    def without(got, *others):
        b = Bitext(tuple(d for d, _ in got), tuple(e for _, e in got), ("", ""))
        for o in others:
            b = Bitext(tuple(x for x, h in zip(b.src, held(o, b)) if h is None),
                       tuple(x for x, h in zip(b.tgt, held(o, b)) if h is None), ("", ""))
        return b
    pool = Bitext(tuple(pool_de), tuple(pool_en), ("", ""))
    judge = without(pairs("train", HELD_OUT), pool)
    query = without(pairs("test"), pool, judge)
    return list(zip(query.src, query.tgt)), list(zip(judge.src, judge.tgt))


def select(method: str, target: str, query_file: Path, seed: int, out: Path) -> float:
    """The method's selection of N pairs in ``out`` (through ``domainsift.run``; a finished one is kept while
    the version that made it runs) and its precision."""
    from _common import stale_selection
    from domainsift import PoolSource, read_corpus, run
    from domainsift.jobs.evaluate import evaluate_run
    from domainsift.spec import Rule, RunSpec
    en, de = pool_files()
    stale_selection(out)
    if not (out / "selection.json").exists():
        run(RunSpec.single(method, read_corpus([str(query_file)]), PoolSource.open(en, de), str(out),
                           rule=Rule(top=N, pair_checks=PAIR_CHECKS), seed=seed, overwrite=True))
    return evaluate_run(out, [en[SEVEN.index(target)]])["precision"]


def judged(method: str, target: str, tdir: Path, query_file: Path, query, judge, seed: int) -> tuple[dict, float]:
    """The product's judge (``downstream --judge nmt``) on the method's row: trained, translated and scored
    into ``tdir/judge`` (a finished row is kept), against the random row when it exists (paired bootstrap).
    Returns the judge's row and the selection's precision (None for the oracle and the whole pool)."""
    from domainsift.jobs.downstream import JudgeSettings, judge_nmt
    from domainsift.nmt import Bitext, read_bitext
    from domainsift.nmt.trainer import TrainSettings
    settings = TrainSettings(preset="proxy", epochs=EPOCHS, patience=PATIENCE, seed=seed, max_tokens=MAX_TOKENS,
                             warmup=WARMUP)
    test = Bitext(tuple(d for d, _ in judge), tuple(e for _, e in judge), ("judge.de", "judge.en"))
    dev = Bitext(tuple(d for d, _ in query), tuple(e for _, e in query), ("query.de", "query.en"))
    en, de = pool_files()
    random_dir = tdir / "random" / "selection"
    # the random row's kept translations, when an earlier run made it: the test against it needs no random
    # model trained again (a fresh checkout has no bench/work)
    base = None if method == "random" else _random_translations(target, seed)
    random_precision = None
    if base is None or method == "pool":  # the baseline's model to train, the pool to read, or the random row
        random_precision = select("random", target, query_file, seed, random_dir)
    runs, refs, precision = ([] if base is not None else [str(random_dir)]), [], None
    if method == "oracle":
        k = SEVEN.index(target)
        refs = [("oracle", read_bitext(de[k], en[k], limit=N))]
    elif method == "pool":  # the judge's whole-pool bitext, read from the random selection, as a reference row
        from domainsift.jobs.downstream import pool_bitext
        refs = [("pool", pool_bitext(random_dir))]
    elif method != "random":
        precision = select(method, target, query_file, seed, tdir / method / "selection")
        runs.append(str(tdir / method / "selection"))
    else:  # the random row: its selection, made above
        precision = random_precision
    result = judge_nmt(runs, test, dev, tdir / "judge", references=refs,
                       settings=JudgeSettings(train=settings, beam=BEAM))
    row = next(r for r in result["rows"] if r["name"] == method)
    if base is not None:  # as the judge tests a row against its baseline (downstream._against)
        from domainsift.nmt.significance import paired_bootstrap
        row["vs_baseline"] = {"baseline": "random", **paired_bootstrap(base, read_lines(row["translations"]),
                                                                       [e for _, e in judge])}
    return row, precision


def _random_translations(target: str, seed: int) -> list[str] | None:
    """The newest random row's translations of ``target``'s judge set at ``seed`` and these settings, kept."""
    from _common import version_key
    rows = [r for r in earlier_rows("nmt_judge") if (r["target"], r["method"], r["seed"], r.get("settings"))
            == (target, "random", seed, SETTINGS)]
    for r in sorted(rows, key=lambda r: version_key(r["version"]), reverse=True):
        found = _translations(r)
        if found is not None:
            return found
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", nargs="+", default=["KDE4"], choices=JUDGED)
    ap.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS + ["pool"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    args = rows_options(ap, "nmt_judge", _write)
    if args is None:
        return
    from domainsift import __version__
    rows, mine = earlier_rows("nmt_judge"), []
    en, de = pool_files()
    pool_en = [x for f in en for x in read_lines(f)]
    pool_de = [x for f in de for x in read_lines(f)]
    for target in args.targets:
        query, judge = judge_sets(target, pool_en, pool_de)
        for seed in args.seeds:
            tdir = WORK / target / f"s{seed}"
            tdir.mkdir(parents=True, exist_ok=True)
            query_file = tdir / "query.en"
            query_file.write_text("".join(en + "\n" for _, en in query), encoding="utf-8")
            for method in args.methods:
                key = (target, method, seed, __version__, SETTINGS)
                if any(_key(r) == key for r in rows):
                    continue
                t0 = time.time()
                res, precision = judged(method, target, tdir, query_file, query, judge, seed)
                row = {"target": target, "method": method, "seed": seed, "version": __version__, "settings": SETTINGS,
                       "n_train": res["n_pairs"], "n_dev": res["n_dev"], "n_judge": len(judge),
                       "precision": None if precision is None else round(precision, 4),
                       "bleu": res["bleu"], "chrf": res["chrf"], "chrfpp": res["chrfpp"],
                       "xent_per_char": res["xent_per_char"], "best_epoch": res["best_epoch"],
                       "epochs_run": res["epochs_run"], "dev_loss": res["dev_loss"],
                       "train_seconds": res["train_seconds"], "target_tokens_per_second": res["target_tokens_per_second"],
                       **({"vs_random": {k: res["vs_baseline"][k] for k in ("bleu", "chrfpp", "n_samples", "seed")}}
                          if "vs_baseline" in res else {}),
                       "translations": res["translations"], "seconds": round(time.time() - t0, 1),
                       "threads": _threads(),
                       "command": command_line()}
                mine.append(row)  # every row of this run, merged again at each write: a run beside an older one,
                rows = add_rows("nmt_judge", mine, _key, _write)  # which rewrites the file whole, loses none
                print(f"{target} {method} s{seed}: BLEU {row['bleu']:.2f} chrF {row['chrf']:.2f} precision "
                      f"{row['precision']} ({row['seconds']:.0f} s)", flush=True)
    add_rows("nmt_judge", mine, _key, _write)


def _kept(r: dict) -> Path:
    """Where a row's translations of the judge set are kept in the repository (gzip), so that its tests can be
    made again in a later checkout (bench/work, where the judge writes them, is not kept)."""
    return RESULTS / "nmt_judge_hyp" / f"{r['target']}-s{r['seed']}-{r['method']}-{r['version']}.hyp.gz"


def _keep(rows: list[dict]) -> None:
    """Keep the translations of every row whose judge folder still holds them and that are not kept yet: the
    folder's own, while its judge record gives the row's scores (a folder a later version judged again holds
    another model's translations)."""
    import json

    from _common import keep_gzipped
    for r in rows:
        src, dst = Path(r.get("translations") or ""), _kept(r)
        record = src.parent / "judge.json"
        if r.get("translations") and src.exists() and not dst.exists() and record.exists() and \
                {k: json.loads(record.read_text()).get(k) for k in ("bleu", "chrf")} == \
                {"bleu": r["bleu"], "chrf": r["chrf"]}:
            keep_gzipped(src, dst)


def _translations(r: dict) -> list[str] | None:
    """A row's translations: from its judge folder, or as kept (:func:`_kept`); None: neither."""
    from _common import read_gzipped
    if r.get("translations") and Path(r["translations"]).exists():
        return read_lines(r["translations"])
    if _kept(r).exists():
        return read_gzipped(_kept(r))
    return None


def _threads() -> int:
    """torch's threads for the row (its seconds are timings only beside nothing else)."""
    import torch
    return torch.get_num_threads()


def _key(r: dict) -> tuple:
    return r["target"], r["method"], r["seed"], r["version"], r.get("settings")


def _over_seeds(rows: list[dict]) -> list[str]:
    """The mean BLEU of each method over a target's seeds (the newest row of each seed at the newest settings),
    for targets with two seeds or more; the order of the methods by the mean, and whether each seed gives that order."""
    from _common import version_key
    newest: dict = {}
    rows = [r for r in rows if r.get("settings") == SETTINGS]  # the means compare rows of one judge only
    for r in sorted(rows, key=lambda r: version_key(r["version"])):
        newest[(r["target"], r["method"], r["seed"])] = r
    out = []
    for target in sorted({t for t, _, _ in newest}):
        seeds = sorted({s for t, _, s in newest if t == target})
        methods = [m for m in METHODS + ["pool"] if all((target, m, s) in newest for s in seeds)]
        if len(seeds) < 2 or len(methods) < 2:
            continue
        mean = {m: float(np.mean([newest[(target, m, s)]["bleu"] for s in seeds])) for m in methods}
        order = sorted(methods, key=lambda m: -mean[m])
        same = [s for s in seeds if sorted(methods, key=lambda m: -newest[(target, m, s)]["bleu"]) == order]
        def each(m):
            return " / ".join(f"{newest[(target, m, s)]['bleu']:.2f}" for s in seeds)
        cells = ", ".join(f"{m} {mean[m]:.2f} ({each(m)})" for m in order)
        out.append(f"{target}, mean BLEU over seeds {', '.join(map(str, seeds))} (each seed's): {cells}; "
                   f"{len(same)} of {len(seeds)} seeds give this order.  ")
    return ([""] + out) if out else []


def _finetune_vs_runner_up(rows: list[dict]) -> dict:
    """For each target and seed of the newest settings (``"target/seed"``): finetune against the best other
    selection (moore-lewis or cosine, by BLEU) by paired bootstrap on the judge set, from the rows' kept
    translations, in words."""
    from domainsift.nmt.significance import in_words, paired_bootstrap
    mine = {(r["target"], r["seed"], r["method"]): r for r in rows if r.get("settings") == SETTINGS
            and r["method"] in ("finetune", "moore-lewis", "cosine")}
    hyps = {k: _translations(r) for k, r in mine.items()}  # each row's translations read once
    mine = {k: r for k, r in mine.items() if hyps[k] is not None}
    out, judges = {}, {}
    for target, seed in sorted({(t, s) for t, s, _ in mine}):
        ft = mine.get((target, seed, "finetune"))
        others = [mine[(target, seed, m)] for m in ("moore-lewis", "cosine") if (target, seed, m) in mine]
        if ft is None or not others:
            continue
        runner = max(others, key=lambda r: r["bleu"])
        if target not in judges:
            en, de = pool_files()
            judges[target] = [e for _, e in judge_sets(target, [x for f in en for x in read_lines(f)],
                                                         [x for f in de for x in read_lines(f)])[1]]
        test = paired_bootstrap(hyps[(target, seed, runner["method"])], hyps[(target, seed, "finetune")],
                                judges[target])
        out[f"{target}/{seed}"] = (f"{target}, seed {seed}: finetune against its runner-up {runner['method']}: "
                                   f"{in_words(test)}.  ")
    return out


def _verdicts(rows: list[dict]) -> list[str]:
    """Paper 000's claims on each target, over its seeds, in the three words docs/papers.md uses: every
    selection against random, finetune against moore-lewis and cosine (its runner-up first: the better of the
    two by mean BLEU over the seeds that made both), and every selection against the whole pool. On each seed
    the two rows of the newest version that made both (at these settings) are tested by paired bootstrap on the
    judge set (its sampling), or, where their translations are lost, the test recorded when the rows were made;
    the seeds are training runs (the training's noise): a claim **holds** when every seed's test is significant
    in the paper's direction, **does not hold** when every seed's is significant the other way, and is **not
    decided** otherwise (or with fewer than three seeds: `_common.over_seeds`), given with the mean difference
    and its 95% t-interval over the seeds."""
    import json
    import re

    from _common import over_seeds, version_key

    from domainsift.nmt.significance import paired_bootstrap
    made: dict = {}  # (target, method, seed) -> {version: row}
    for r in rows:
        if r.get("settings") == SETTINGS:
            made.setdefault((r["target"], r["method"], r["seed"]), {})[r["version"]] = r
    hyps = {id(r): _translations(r) for v in made.values() for r in v.values()}
    path = RESULTS / "nmt_judge.json"  # the tests of finetune against its runner-up as they were recorded
    recorded = (json.loads(path.read_text()).get("runner_up_tests") or {}) if path.exists() else {}

    def test(target, system, baseline, seed, refs):
        """The seed's paired bootstrap of system against baseline: on the translations of the newest version that
        made both; else, against random, the one its row recorded when it was made; else None."""
        a, b = made.get((target, system, seed), {}), made.get((target, baseline, seed), {})
        both = [v for v in set(a) & set(b) if hyps[id(a[v])] is not None and hyps[id(b[v])] is not None]
        if both:
            v = max(both, key=version_key)
            return v, paired_bootstrap(hyps[id(b[v])], hyps[id(a[v])], refs())["bleu"]
        kept = [v for v in a if baseline == "random" and a[v].get("vs_random")]
        if kept:
            return max(kept, key=version_key), a[max(kept, key=version_key)]["vs_random"]["bleu"]
        said = re.search(rf"finetune against its runner-up {re.escape(baseline)}: ([-+.\d]+) \[([-+.\d]+), "
                         r"([-+.\d]+)\], p = ([.\d]+): (better|worse|not decided)", recorded.get(f"{target}/{seed}", ""))
        if system == "finetune" and said and a:
            d, lo, hi, p = (float(x) for x in said.groups()[:4])
            return max(a, key=version_key), {"difference": d, "ci95": [lo, hi], "p": p,
                                             "decided": said[5] != "not decided"}
        return None
    out = []
    for target in sorted({t for t, _, _ in made}):
        seeds = sorted({s for t, _, s in made if t == target})
        def bleu(m, s):  # the newest row's
            return made[(target, m, s)][max(made[(target, m, s)], key=version_key)]["bleu"]
        have = {m: [s for s in seeds if (target, m, s) in made] for m in METHODS + ["pool"]}
        others = [m for m in ("moore-lewis", "cosine") if have[m]]
        common = [s for s in seeds if all(s in have[m] for m in others)]  # the runner-up by its mean over them
        claims = [(m, "random") for m in ("moore-lewis", "cosine", "finetune", "oracle") if have[m]]
        runner_up = max(others, key=lambda m: np.mean([bleu(m, s) for s in common or have[m]])) if others else None
        if have["finetune"]:  # the paper: Domain-Finetune above both; the runner-up first
            claims += [("finetune", m) for m in sorted(others, key=lambda m: m != runner_up)]
        if have["pool"]:  # the paper (4.3): every selection above the model trained on all the domains
            claims += [(m, "pool") for m in ("moore-lewis", "cosine", "finetune") if have[m]]
        judge: list = []

        def refs():
            judge[:] = judge or [e for _, e in judge_sets(target, *_pool_lines())[1]]
            return judge
        for system, baseline in claims:
            pairs = {s: test(target, system, baseline, s, refs) for s in seeds}
            pairs = {s: p for s, p in pairs.items() if p is not None}
            if not pairs:
                continue
            up = " (its runner-up)" if system == "finetune" and baseline == runner_up else ""
            out.append(f"{target}: {system} above {baseline}{up}: {over_seeds(pairs)}.  ")
    return out


def _pool_lines() -> tuple[list[str], list[str]]:
    en, de = pool_files()
    return [x for f in en for x in read_lines(f)], [x for f in de for x in read_lines(f)]


def _tests(rows: list[dict]) -> dict:
    """Each target and seed's test of finetune against its runner-up, in words: made again where the rows'
    translations are at hand, else as the results file holds it (tests made before the translations were kept
    in the repository: taken once, when the results file holds none yet, from the table of the commit that
    made them, RECOVERED)."""
    import json
    path = RESULTS / "nmt_judge.json"
    held = json.loads(path.read_text()).get("runner_up_tests") if path.exists() else None
    if held is None:
        import re
        import subprocess
        held = {}
        for commit in RECOVERED:
            old = subprocess.run(["git", "show", f"{commit}:bench/results/nmt_judge.md"], cwd=ROOT,
                                 capture_output=True, text=True).stdout
            for line in old.splitlines():
                found = re.match(r"(\S+), seed (\d+): finetune against its runner-up", line)
                if found:
                    held.setdefault(f"{found[1]}/{found[2]}", line.rstrip() + "  ")
    held.update(_finetune_vs_runner_up(rows))
    return dict(sorted(held.items()))


def _versus(vs: dict | None) -> str:
    """A row's paired bootstrap against random in words; rows made before 0.37.0 kept no translations."""
    from domainsift.nmt.significance import in_words
    return in_words(vs)


# the commits whose tables held tests of rows whose translations were not kept in the repository
RECOVERED = ("7f0311c",)


def _write(rows: list[dict]) -> None:
    _keep(rows)
    tests = _tests(rows)
    lines = ["# The translation model trained on each selection (paper 000's question in BLEU)", "",
             f"de->en, N = {N} pairs selected from the 31,700-pair pool of seven domains (each judged target's last "
             f"{HELD_OUT} train pairs held out of it: the judge set) by their English side with the target's test "
             "set; a `proxy` model (domainsift nmt: d_model 128, 2+2 layers, a 4k sentencepiece vocabulary; batches "
             f"of {MAX_TOKENS} target tokens, warm-up {WARMUP} steps) trained from scratch, at most {EPOCHS} epochs, "
             f"early stopping on the test set's pairs (patience {PATIENCE}); BLEU and chrF (sacrebleu) on the judge "
             f"set, beam {BEAM}. Rows before 0.38.0: N = 5,000 of the 35,000 pairs, judged on half of the test file "
             "(their settings say so). A proxy model this small ranks data; its absolute BLEU says little about a "
             "full-size model.", "",
             "| target | method | seed | version | precision | BLEU | chrF | pairs | best epoch | train s | tokens/s "
             "| BLEU vs random (95% interval, p) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["target"], r["seed"], -r["bleu"])):
        lines.append(f"| {r['target']} | {r['method']} | {r['seed']} | {r['version']} | "
                     f"{'-' if r['precision'] is None else r['precision']} | {r['bleu']:.2f} | {r['chrf']:.2f} | "
                     f"{r['n_train']} | {r['best_epoch']}/{r['epochs_run']} | {r['train_seconds']:.0f} | "
                     f"{r['target_tokens_per_second'] or 0:,.0f} | {_versus(r.get('vs_random'))} |")
    lines.append("")
    for target, seed in sorted({(r["target"], r["seed"]) for r in rows}):  # within a target: BLEU's scale is its own
        both = [r for r in rows if (r["target"], r["seed"]) == (target, seed) and r["precision"] is not None
                and r["method"] != "oracle"]
        if len(both) >= 3:
            p, b = np.array([r["precision"] for r in both]), np.array([r["bleu"] for r in both])
            lines.append(f"Pearson correlation of precision and BLEU over {target}'s {len(both)} selection rows "
                         f"(seed {seed}): {np.corrcoef(p, b)[0, 1]:.3f}.  ")
    lines += _over_seeds(rows)
    lines += ([""] + list(tests.values())) if tests else []
    verdicts = _verdicts(rows)
    lines += (["", "Paper 000's claims over the seeds (`_verdicts`: holds when every seed's paired bootstrap is "
               "significant in the paper's direction):", ""] + verdicts) if verdicts else []
    write_results("nmt_judge", {"rows": rows, "runner_up_tests": tests, "verdicts": verdicts, "n": N, "epochs": EPOCHS, "patience": PATIENCE, "beam": BEAM,
                                "max_tokens": MAX_TOKENS, "warmup": WARMUP},
                  "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
