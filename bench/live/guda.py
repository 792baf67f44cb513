"""Benchmark "guda": paper 003's adaptation (Table 2 and Table 5) at proxy size, through ``domainsift adapt``.

The new domain D (EMEA by default) has no bitext: its German in-domain set is the query half of <D>.test
(cut by a seeded hash of the English line, as bench/live/nmt_judge.py cuts it); the judge half's pairs
measure the result (BLEU and chrF, beam 5). The old domain is the bitext of the other classic domains
(the first OLD_PER pairs of each one's train files); its dev set (early stopping) is the first DEV_PER pairs
of each one's test files. The generic English pool is the seven domains' train.en (35,000 lines). One
reverse model (en->de) and one old-domain model (de->en, the warm start) are trained once and shared.

Rows (each a ``domainsift.jobs.adapt.adapt`` run; the selection through a ``RunSpec``):
- ``base``: the old-domain model as it is;
- ``guda``: N English lines selected by a method (``crosslingual``: the German in-domain set against the
  English pool over USE-m; ``random``; ``moore-lewis`` and ``finetune``, Table 2's CED and DF, which compare
  one language: they select with the in-domain set translated into English by the old-domain model,
  ``adapt(select_on="translated")``, as the paper's CED crosses languages through the old bitext;
  ``cosine``: Domain-Cosine over USE-m, the German set against the English pool in the encoder's shared
  space, with no classifier: what crosslingual's trained layer adds),
  back-translated, and trained on with the old bitext and ``--losses`` (``bi``, ``bi+s``, ``bi+t``,
  ``bi+s+t``), warm or cold start;
- ``sup``: the true bitext of D's training file (N pairs) in place of the pseudo-bitext (the upper bound);
- ``trans:bi:warm``: Table 2's ``trans`` baseline: D's German sentences forward-translated by the old-domain
  model, trained on with the old bitext (the bitext loss alone);
- ``control:warm``: the old-domain model trained the adaptation's epochs more on the old bitext alone (how
  much of base -> GUDA is only more training).

Every model is a proxy (d 128, 2+2 layers, 4k vocabulary): it ranks the choices; its absolute BLEU says little
of a full-size model. A finished row is written to bench/results/guda.json as it lands (resumable; one
benchmark at a time: a row's seconds are timings).

    python bench/live/guda.py [--new EMEA] [--rows base guda:crosslingual:bi+s+t:warm ...] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from _common import CLASSIC, ROOT, SEVEN, apply_threads, command_line, data_file, earlier_rows, merge_rows, \
    read_lines, threads_option, write_results
from nmt_judge import halves

WORK = ROOT / "bench" / "work" / "guda"
N, OLD_PER, DEV_PER = 4000, 2000, 100
BASE_EPOCHS, ADAPT_EPOCHS, PATIENCE, MAX_TOKENS, WARMUP, BEAM, BT_BEAM = 8, 5, 3, 800, 200, 5, 2
SETTINGS = (f"N {N}, old {OLD_PER}/domain, base epochs {BASE_EPOCHS}, adapt epochs {ADAPT_EPOCHS}, patience "
            f"{PATIENCE}, max_tokens {MAX_TOKENS}, warmup {WARMUP}, beam {BEAM}, back-translation beam {BT_BEAM}")
ONE_LANGUAGE = ("moore-lewis", "finetune")  # methods that compare one language: they select on a translation
PARAMS = {"cosine": {"embedder": "multilingual"}}  # cosine in USE-m's shared space, across the languages
ROWS = ["base", "guda:crosslingual:bi+s+t:warm", "guda:crosslingual:bi:warm", "guda:random:bi+s+t:warm",
        "sup:bi+s+t:warm"]


def _write_pair(folder: Path, name: str, pairs) -> tuple[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    de, en = folder / f"{name}.de", folder / f"{name}.en"
    de.write_text("".join(d + "\n" for d, _ in pairs), encoding="utf-8")
    en.write_text("".join(e + "\n" for _, e in pairs), encoding="utf-8")
    return str(de), str(en)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--new", default="EMEA", choices=CLASSIC)
    ap.add_argument("--rows", nargs="+", default=ROWS)
    ap.add_argument("--seed", type=int, default=0)
    threads_option(ap)
    args = ap.parse_args()
    apply_threads(args)
    from domainsift import PoolSource, Rule, RunSpec, __version__, read_corpus
    from domainsift.jobs.adapt import AdaptSettings, adapt
    from domainsift.nmt import read_bitext, score_translation, train_nmt, translate
    from domainsift.nmt.trainer import TrainSettings
    new, seed = args.new, args.seed
    work = WORK / new / f"s{seed}"
    pool_files = [data_file(d, "train", "en") for d in SEVEN]
    pool_en = {x for f in pool_files for x in read_lines(f)}
    pool_de = {x for d in SEVEN for x in read_lines(data_file(d, "train", "de"))}
    query, judge = halves(new, pool_en, pool_de, seed)
    olds = [d for d in CLASSIC if d != new]
    old_pairs, dev_pairs = [], []
    for d in olds:
        pairs = list(zip(read_lines(data_file(d, "train", "de")), read_lines(data_file(d, "train", "en"))))
        old_pairs += [p for p in pairs if p[0].strip() and p[1].strip()][:OLD_PER]
        tests = list(zip(read_lines(data_file(d, "test", "de")), read_lines(data_file(d, "test", "en"))))
        dev_pairs += [p for p in tests if p[0].strip() and p[1].strip()][:DEV_PER]
    # a dev pair the old bitext holds (either side, as adapt compares them) is not a dev pair: adapt refuses it
    from domainsift.dedup import normalise
    seen = {normalise(x) for p in old_pairs for x in p}
    dev_pairs = [p for p in dev_pairs if normalise(p[0]) not in seen and normalise(p[1]) not in seen]
    old = _write_pair(work, "old", old_pairs)
    dev = _write_pair(work, "dev", dev_pairs)
    source = work / "query.de"
    source.write_text("".join(d + "\n" for d, _ in query), encoding="utf-8")
    base_settings = TrainSettings(preset="proxy", epochs=BASE_EPOCHS, patience=PATIENCE, seed=seed,
                                  max_tokens=MAX_TOKENS, warmup=WARMUP)
    adapt_settings = TrainSettings(preset="proxy", epochs=ADAPT_EPOCHS, patience=PATIENCE, seed=seed,
                                   max_tokens=MAX_TOKENS, warmup=WARMUP)
    t0 = time.time()
    models = {}
    for name, pair in (("reverse", (old[1], old[0], dev[1], dev[0])), ("base", (old[0], old[1], dev[0], dev[1]))):
        models[name] = work / name
        if not (models[name] / "nmt.json").exists():
            train_nmt(read_bitext(pair[0], pair[1]), read_bitext(pair[2], pair[3]), models[name], base_settings,
                      overwrite=True)
    shared_seconds = round(time.time() - t0, 1)
    rows = earlier_rows("guda")
    for r in rows:  # rows made before the query's BLEU was recorded (0.36.0's first): from the run's own files
        if (r["new"], r["seed"]) == (new, seed) and r["row"].startswith("guda:") and "query_bleu" not in r:
            r.update(_query_bleu(work / r["row"].replace(":", "-").replace("+", ""), query, score_translation))
    for spec in args.rows:
        key = (new, spec, seed, __version__, SETTINGS)
        if any(_key(r) == key for r in rows):
            continue
        t0 = time.time()
        parts = spec.split(":")
        row = {"new": new, "row": spec, "seed": seed, "version": __version__, "settings": SETTINGS,
               "n_old": len(old_pairs), "n_judge": len(judge), "n_source": len(query)}
        if parts[0] == "base":
            hyp = translate(models["base"], [d for d, _ in judge], beam=BEAM)
            scores = score_translation(hyp, [e for _, e in judge])
            row.update(bleu=scores["bleu"], chrf=scores["chrf"], bleu_signature=scores["signature"]["bleu"])
        else:
            losses, start = parts[-2], parts[-1]
            out = work / spec.replace(":", "-").replace("+", "")
            kw = dict(losses=losses, start=start, reverse=models["reverse"], settings=adapt_settings,
                      base=models["base"] if start == "warm" else None)
            if parts[0] in ("trans", "control"):
                rec = _trans_or_control(parts[0], models["base"], old, dev, str(source), out, kw, train_nmt,
                                        read_bitext, translate)
                hyp = translate(out, [d for d, _ in judge], beam=BEAM)
                rec["test"] = score_translation(hyp, [e for _, e in judge])
            elif parts[0] == "sup":  # the true bitext of the new domain in place of the pseudo-bitext
                rec = _sup(new, old, dev, str(source), out, kw, train_nmt, read_bitext)
                hyp = translate(out, [d for d, _ in judge], beam=BEAM)
                rec["test"] = score_translation(hyp, [e for _, e in judge])
            else:
                method = parts[1]
                selection = RunSpec.single(method, read_corpus([str(source)]), PoolSource.open(pool_files),
                                           rule=Rule(top=N), seed=seed, params=PARAMS.get(method, {}))
                if method in ONE_LANGUAGE:  # the old-domain model translates the in-domain set first
                    kw.update(select_on="translated", base=models["base"])
                how = AdaptSettings(train=kw["settings"], beam=BT_BEAM, **{k: v for k, v in kw.items() if k != "settings"})
                rec = adapt(old, dev, str(source), out, selection=selection, settings=how) \
                    if not (out / "adapt.json").exists() else json.loads((out / "adapt.json").read_text())
                hyp = translate(out / "model", [d for d, _ in judge], beam=BEAM)  # the judge half, beam 5
                rec["test"] = score_translation(hyp, [e for _, e in judge])
                row["precision"] = _precision(out, new)
                row.update(_query_bleu(out, query, score_translation))
            row.update(bleu=rec["test"]["bleu"], chrf=rec["test"]["chrf"], best_epoch=rec.get("best_epoch"),
                       signature=rec.get("signature"))
        row.update(seconds=round(time.time() - t0, 1), shared_model_seconds=shared_seconds, command=command_line())
        rows = merge_rows(rows, [row], _key)
        print(f"{new} {spec}: BLEU {row['bleu']:.2f} chrF {row['chrf']:.2f} ({row['seconds']:.0f} s)", flush=True)
        _write(rows)
    _write(rows)


def _sup(new, old, dev, source, out, kw, train_nmt, read_bitext) -> dict:
    """GUDA's training on the true bitext of the new domain (N pairs of <new>.train) instead of a
    back-translated selection (the paper's 'true bitext' rows)."""
    from domainsift.nmt.guda import Mixing
    from domainsift.io.corpus import read_lines as lines_of
    if (out / "nmt.json").exists():
        rec = json.loads((out / "nmt.json").read_text())
    else:
        true = read_bitext(data_file(new, "train", "de"), data_file(new, "train", "en"), limit=N)
        mixing = Mixing(read_bitext(*old), tuple(lines_of(source)), kw["losses"])
        rec = train_nmt(true, read_bitext(*dev), out, kw["settings"], init_from=kw["base"], overwrite=True,
                        mixing=mixing)
    return rec


def _trans_or_control(kind, base, old, dev, source, out, kw, train_nmt, read_bitext, translate) -> dict:
    """``trans`` (Table 2's baseline): the new domain's source sentences forward-translated by the old-domain
    model, that pseudo-bitext trained on with the old bitext (the bitext loss alone), warm; ``control``: the
    old-domain model trained the adaptation's epochs more on the old bitext alone (what the adapted rows'
    extra training gives without the new domain)."""
    from domainsift.io.corpus import read_lines as lines_of
    from domainsift.nmt import Bitext
    from domainsift.nmt.guda import Mixing
    if (out / "nmt.json").exists():
        return json.loads((out / "nmt.json").read_text())
    old_b, dev_b = read_bitext(*old), read_bitext(*dev)
    if kind == "control":
        return train_nmt(old_b, dev_b, out, kw["settings"], init_from=base, overwrite=True)
    src = [x.strip() for x in lines_of(source) if x.strip()]
    fwd = translate(base, src, beam=BT_BEAM)
    keep = [k for k, t in enumerate(fwd) if t.strip()]
    pseudo = Bitext(tuple(src[k] for k in keep), tuple(fwd[k] for k in keep), ("query.de", "forward.en"))
    return train_nmt(pseudo, dev_b, out, kw["settings"], init_from=base, overwrite=True,
                     mixing=Mixing(old_b, tuple(src), "bi"))


def _query_bleu(out: Path, query, score_translation) -> dict:
    """A row that selected on the in-domain set translated by the old-domain model (``query.tgt``): that
    translation's BLEU against the query half's own English lines."""
    if not (out / "query.tgt").is_file():
        return {}
    made = (out / "query.tgt").read_text(encoding="utf-8").splitlines()
    return {"query_bleu": score_translation(made, [e for _, e in query])["bleu"]}


def _precision(out: Path, new: str) -> float | None:
    from domainsift.jobs.evaluate import evaluate_run
    sel = out / "select"
    if not (sel / "selection.json").exists():
        return None
    return round(evaluate_run(sel, [data_file(new, "train", "en")])["precision"], 4)


def _key(r: dict) -> tuple:
    return r["new"], r["row"], r["seed"], r["version"], r.get("settings")


def _write(rows: list[dict]) -> None:
    lines = ["# Paper 003's adaptation (GUDA) at proxy size", "",
             f"de->en; the new domain has no bitext. Old domain: the other classic domains' bitext ({OLD_PER} pairs "
             f"each); X_new: the German query half of the new domain's test set; the pool: the seven domains' "
             f"train.en; N = {N} selected lines back-translated by a reverse model (beam {BT_BEAM}); the forward model "
             f"warm-started from the old-domain model ({BASE_EPOCHS} epochs at most) and adapted for at most "
             f"{ADAPT_EPOCHS} epochs (early stopping on the old domain's dev set); BLEU and chrF (sacrebleu) on the "
             f"judge half, beam {BEAM}. Proxy models (d 128, 2+2 layers) rank choices; absolute BLEU is low.", "",
             "Query BLEU: a row that selects with the in-domain set translated into English by the old-domain "
             "model (moore-lewis, finetune: `select_on=\"translated\"`), that translation's BLEU against the query "
             "half's own English lines.", "",
             "| new | row | seed | version | selection precision | query BLEU | BLEU | chrF | best epoch | seconds |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["new"], r["seed"], -r["bleu"])):
        qb = f"{r['query_bleu']:.2f}" if "query_bleu" in r else "-"
        lines.append(f"| {r['new']} | {r['row']} | {r['seed']} | {r['version']} | {r.get('precision', '-')} | {qb} | "
                     f"{r['bleu']:.2f} | {r['chrf']:.2f} | {r.get('best_epoch') or '-'} | {r['seconds']:.0f} |")
    write_results("guda", {"rows": rows, "n": N, "old_per_domain": OLD_PER, "settings": SETTINGS},
                  "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
