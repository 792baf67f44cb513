"""Does the selection help? A cheap downstream check on held-out in-domain text.

For each selection (and each reference corpus) an n-gram language model is
trained on the selected sentences (VariKN, Kneser–Ney, the same library as
``moore-lewis``) and measured by perplexity and OOV rate on a held-out
in-domain test file: lower perplexity means the data fits the target better.
This is Moore & Lewis's own criterion and far cheaper than training MT.

:func:`judge_nmt` is the judge of the papers (``downstream --judge nmt``): the same translation model
(``domainsift nmt``, the ``proxy`` preset unless told) trained from scratch on each selection of a bitext
pool, every row's epoch chosen on one dev bitext, and scored by BLEU and chrF (sacrebleu) on a test bitext
that no row trained on.

:func:`cross_domain` gives the analog of paper 000's Table 4 (each domain's LM
on each domain's test) and Figure 4 (its link to the cosine similarity of the
domains' encoder centroids).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import rundir
from ..io.corpus import read_corpus
from .._internal.errors import DomainsiftError
from .._internal.options import option, positive_int
from ..lm import NgramLM


def selection_texts(run_dir: str | os.PathLike) -> list[str]:
    """The selected sentences of a run directory (the scored side), in pool order, read from pool
    files verified to be the ones that were scored."""
    return [text for text, _ in rundir.selection_records(run_dir)]


def run_names(run_dirs: Sequence[str]) -> list[str]:
    """A run's name is its method; its directory name when two runs share a method."""
    methods = [rundir.read_signature(d)["method"] for d in run_dirs]
    return [m if methods.count(m) == 1 else Path(d).name for m, d in zip(methods, run_dirs)]


def parse_named(items: Sequence[str], option: str) -> list[tuple[str, str]]:
    out = []
    for it in items or []:
        if "=" not in it:
            raise DomainsiftError(f"{option} expects NAME=FILE, got '{it}'")
        name, path = it.split("=", 1)
        out.append((name, path))
    return out


def lm_row(name: str, train_texts: Sequence[str], test_texts: Sequence[str], order: int) -> dict:
    lm = NgramLM(order=order).fit(train_texts)
    r = lm.perplexity(test_texts)
    return {"name": name, "perplexity": r["perplexity"], "oov_rate": r["oov_rate"],
            "n_sentences": len(train_texts), "n_test_tokens": r["n_tokens"]}


def run_downstream(run_dirs: Sequence[str], test_file: str, references: Sequence[tuple[str, str]] = (),
                   order: int = 4, out_dir: str | os.PathLike | None = None) -> dict:
    """Perplexity of an LM trained on each selection and reference, on ``test_file``."""
    test = read_corpus(test_file).texts
    rows = []
    for name, d in zip(run_names(run_dirs), run_dirs):
        texts = selection_texts(d)
        if not texts:
            raise DomainsiftError(f"{d}: the selection is empty")
        rows.append({**lm_row(name, texts, test, order), "run_dir": str(d)})
    for name, path in references:
        rows.append({**lm_row(name, read_corpus(path).texts, test, order), "file": str(path)})
    from .._internal.signature import make_signature
    result = {"test": str(test_file), "order": order, "rows": rows,
              "signature": make_signature("downstream", model="n-gram (VariKN)", order=order)}
    if out_dir:
        rundir.write_json(out_dir, rundir.DOWNSTREAM, result)
    return result


def format_rows(rows: Sequence[dict]) -> str:
    w = max(len(r["name"]) for r in rows)
    lines = [f"{'name':<{w}}  perplexity  OOV rate  sentences", f"{'-' * w}  ----------  --------  ---------"]
    for r in rows:
        lines.append(f"{r['name']:<{w}}  {r['perplexity']:>10.1f}  {r['oov_rate']:>8.3f}  {r['n_sentences']:>9}")
    return "\n".join(lines)


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    from scipy.stats import pearsonr
    return float(pearsonr(np.asarray(x, float), np.asarray(y, float))[0])


def cross_domain(train: Sequence[tuple[str, str]], test: Sequence[tuple[str, str]], order: int = 4,
                 embedder=None, max_centroid: int = 2000, out_dir: str | os.PathLike | None = None,
                 plot: bool = True) -> dict:
    """The matrix of perplexities of each domain's LM (rows) on each domain's test (columns),
    the cosine similarity of the domains' train centroids, and their Pearson correlation.

    The correlation is taken over the off-diagonal pairs, between centroid similarity
    and log perplexity (similar domains should give lower perplexity: a negative r).
    """
    train, test = dict(train), dict(test)
    domains = list(train)
    if set(domains) != set(test):
        raise DomainsiftError(f"--train and --test name different domains: {sorted(train)} vs {sorted(test)}")
    if len(domains) < 2:
        raise DomainsiftError("a cross-domain matrix needs at least two domains")
    train_texts = {d: read_corpus(train[d]).texts for d in domains}
    test_texts = {d: read_corpus(test[d]).texts for d in domains}
    ppl = np.zeros((len(domains), len(domains)))
    for i, a in enumerate(domains):
        lm = NgramLM(order=order).fit(train_texts[a])
        for j, b in enumerate(domains):
            ppl[i, j] = lm.perplexity(test_texts[b])["perplexity"]
    sim = None
    r = None
    if embedder is not None:
        cents = []
        for d in domains:
            v = np.asarray(embedder.encode(train_texts[d][:max_centroid]), dtype=np.float64)
            v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
            c = v.mean(0)
            cents.append(c / np.linalg.norm(c))
        cents = np.array(cents)
        sim = cents @ cents.T
        off = ~np.eye(len(domains), dtype=bool)
        r = pearson(sim[off], np.log(ppl[off]))
    result = {"domains": domains, "order": order, "perplexity": ppl.tolist(),
              "centroid_similarity": sim.tolist() if sim is not None else None,
              "pearson_similarity_vs_log_perplexity": r,
              "model": getattr(embedder, "name", None)}
    if out_dir:
        out = Path(out_dir)
        if plot and sim is not None:
            from ..report.plots import scatter_plot
            off = ~np.eye(len(domains), dtype=bool)
            labels = [f"{domains[i]}→{domains[j]}" for i in range(len(domains)) for j in range(len(domains)) if i != j]
            result["plot"] = scatter_plot(sim[off], np.log(ppl[off]), labels, rundir.path(out, rundir.CROSSDOMAIN_PNG),
                                          "centroid cosine similarity (train LM domain, test domain)",
                                          "log perplexity", title=f"Pearson r = {r:.2f}")
        rundir.write_json(out, rundir.CROSSDOMAIN, result)
    return result


def format_matrix(result: dict) -> str:
    doms = result["domains"]
    w = max(8, max(len(d) for d in doms))
    lines = ["LM trained on (rows), perplexity on test of (columns):",
             " " * w + "".join(f"{d[:10]:>12}" for d in doms)]
    for d, row in zip(doms, result["perplexity"]):
        lines.append(f"{d:<{w}}" + "".join(f"{v:>12.1f}" for v in row))
    if result["pearson_similarity_vs_log_perplexity"] is not None:
        lines.append(f"Pearson r (centroid similarity vs log perplexity, off-diagonal): "
                     f"{result['pearson_similarity_vs_log_perplexity']:.3f}")
    return "\n".join(lines)


# ---------------------------------------------------------------- the translation model as the judge

JUDGE_MODELS, JUDGE_ROW = rundir.JUDGE_MODELS, rundir.JUDGE_ROW
BOOTSTRAP_SEED = 12345


def _train_settings():
    from ..nmt.trainer import TrainSettings
    return TrainSettings()


@dataclass(frozen=True)
class JudgeSettings:
    """How ``downstream --judge nmt`` judges, declared once: its command-line options are generated from
    these fields (:mod:`domainsift._internal.options`); ``train``: the
    :class:`~domainsift.nmt.trainer.TrainSettings` of every row (``--nmt-*``; the ``proxy`` preset by
    default)."""

    whole_pool: bool = option(False, "a row trained on every pair of the selections' pool")
    baseline: str | None = option(None, "the row every other is compared with by paired bootstrap (default: "
                                        "'random' when a row is named so, else the whole pool's)", metavar="NAME")
    init: str | None = option(None, "a model folder of 'nmt train' every row is trained on from (its weights and "
                                    "vocabulary): the rows differ by their data alone", metavar="DIR")
    init_bitext: tuple | None = option(None, "train the rows' start model once on this bitext (OUT/init), then "
                                             "every row on from it", nargs=2, metavar=("SRC", "TGT"))
    bootstrap_seed: int = option(BOOTSTRAP_SEED, f"the paired bootstrap's seed ({BOOTSTRAP_SEED})", type=int)
    reverse: bool = option(False, "the model translates the scored side (--pool) into the other (--pool-target); "
                                  "by default it translates the other side into the scored side")
    beam: int = option(5, "beam size of the test's translation (5)", type=positive_int)
    backend: str = option("generate", "generate: transformers' beam search (default); ctranslate2: the model "
                                      "converted to int8 once (extra ct2), faster on a CPU "
                                      "(bench/results/nmt_speed.md)", flag="--nmt-backend",
                          choices=("generate", "ctranslate2"))
    train: object = field(default_factory=_train_settings)


def selection_bitext(run_dir: str | os.PathLike, reverse: bool = False):
    """The selected pairs of a selection of a bitext pool (``--pool-target``), in pool order: the other side
    (``--pool-target``) is the source and the scored side the target; ``reverse``: the other way. A pair with
    an empty side is left out (nothing to learn from)."""
    from ..nmt.data import Bitext
    recs = rundir.selection_records(run_dir)
    if not recs:
        raise DomainsiftError(f"{run_dir}: the selection is empty")
    if any(other is None for _, other in recs):
        raise DomainsiftError(f"{run_dir}: not a selection of a bitext pool (select with --pool-target); the NMT "
                              "judge trains on pairs")
    pairs = [(o.strip(), t.strip()) for t, o in recs if t.strip() and o.strip()]
    src, tgt = tuple(a for a, _ in pairs), tuple(b for _, b in pairs)
    files = (f"{Path(run_dir).name}:other-side", f"{Path(run_dir).name}:selected")
    return Bitext(tgt, src, files[::-1]) if reverse else Bitext(src, tgt, files)


def pool_bitext(run_dir: str | os.PathLike, reverse: bool = False):
    """Every pair of the bitext pool a selection was made from (the whole-pool row), oriented as
    :func:`selection_bitext`'s: read as the run read it (its recorded reader options), from files verified
    against the fingerprints the run recorded. A pair with an empty side is left out."""
    from ..nmt.data import Bitext
    pool = rundir.read_pool(run_dir)
    if not pool.get("target_files"):
        raise DomainsiftError(f"{run_dir}: its pool has no other side (--pool-target); the whole-pool row needs pairs")
    files = pool["files"]
    wanted = [(files[int(f)], int(line)) for f, line in rundir.read_ids(run_dir, pool)]
    got = rundir.records(pool, wanted, where=run_dir)
    pairs = [(o.strip(), t.strip()) for t, o in (got[w] for w in wanted if w in got) if t.strip() and o and o.strip()]
    src, tgt = tuple(a for a, _ in pairs), tuple(b for _, b in pairs)
    if reverse:
        src, tgt = tgt, src
    return Bitext(src, tgt, ("pool:source", "pool:target"))


def _without(dev, train):
    """``dev`` minus the pairs that ``train`` holds a sentence of (either side, compared as ``--exclude``
    compares lines): a row's epoch is never chosen on what it learnt from."""
    from ..nmt.data import held
    return dev.take([k for k, h in enumerate(held(train, dev)) if h is None])


def judge_nmt(run_dirs: Sequence[str], test, dev, out_dir: str | os.PathLike, references: Sequence = (),
              settings: JudgeSettings | None = None, progress: bool = False) -> dict:
    """BLEU and chrF of the translation model trained on each selection (and reference bitext), on ``test``.

    ``run_dirs``: selections of a bitext pool; ``test``, ``dev``: ``(source file, target file)`` or a
    :class:`~domainsift.nmt.Bitext`, in the model's direction (the other side into the scored side, or the
    scored side into the other with ``reverse``); ``references``: ``(name, bitext)`` rows, each bitext
    ``(source file, target file)`` or a ``Bitext`` (an oracle: the domain's own training pairs);
    ``settings``: a :class:`JudgeSettings` (below; ``settings.train``: the
    :class:`~domainsift.nmt.trainer.TrainSettings` of every row, the ``proxy`` preset by default).
    ``whole_pool``: a row trained on every pair of the selections' pool; ``backend``: the test's
    decoding, ``generate`` or ``ctranslate2`` (int8, the extra ``ct2``).

    Every row's training data is checked against ``test`` before anything is trained (a model is never
    judged on sentences it learnt from: one line naming the file), and ``dev`` against ``test``; a row's dev
    is ``dev`` minus the pairs its training data holds. Each model is kept under ``OUT/models/<name>`` with
    its test translations (``test.hyp``) and reused, or resumed, when the command runs again.

    Each row reports BLEU, chrF, chrF++ and the reference's cross-entropy per character (nats: comparable
    across the rows' vocabularies); every row but ``baseline`` (a row's name; by default the selection of a
    method whose scores do not follow the text, ``random``, else the whole pool's) is compared with it by paired bootstrap
    (:func:`domainsift.nmt.significance.paired_bootstrap`, 1,000 samples, ``bootstrap_seed``): the
    difference, its 95% interval, p, and whether it is decided. ``init``: a model folder every row is
    trained on from (its weights and vocabulary), so that the rows differ by their data alone; or
    ``init_bitext`` (``(source file, target file)`` or a Bitext): the model every row starts from, trained once
    on it into ``OUT/init`` (checked against dev and test like every row's data).
    Writes and returns ``OUT/downstream.json``."""
    from .._internal.signature import make_signature
    from ..nmt import check_disjoint, read_bitext
    from ..nmt.data import Bitext
    from ..nmt.decode import check_backend
    judge = settings or JudgeSettings()
    settings = judge.train.resolved()  # a bad setting stops before any reading
    whole_pool, reverse, beam, backend = judge.whole_pool, judge.reverse, judge.beam, judge.backend
    init, init_bitext, bootstrap_seed = judge.init, judge.init_bitext, judge.bootstrap_seed
    if beam < 1:
        raise DomainsiftError(f"--beam must be at least 1, got {beam}")
    check_backend(backend)  # before any training

    def bitext(b):
        return b if isinstance(b, Bitext) else read_bitext(*b)

    test_b, dev_b = bitext(test), bitext(dev)
    check_disjoint(dev_b, test_b, "the test set", "the dev set", "a row's epoch is never chosen on its test set")
    rows = _rows(run_dirs, references, whole_pool, reverse, bitext)
    baseline = _baseline(rows, judge.baseline, whole_pool)
    start = _start(init, init_bitext, bitext, test_b, dev_b)
    for r in rows:  # every refusal before the first training
        if not len(r["train"]):
            raise DomainsiftError(f"{r.get('run_dir', r['name'])}: no pair to train on")
        check_disjoint(r["train"], test_b, "the test set")
        r["dev"] = _without(dev_b, r["train"])
        if not len(r["dev"]):
            raise DomainsiftError(f"{dev_b.files[0]}: every dev pair is in the training data of {r['name']}; "
                                  "give a dev set the selections do not hold")
    out = Path(out_dir)
    if start is not None:  # the one model every row starts from, trained once (kept when the same)
        from ..pipeline.nmt import trained
        trained(out / rundir.JUDGE_INIT, *start, settings, progress=progress)
        init = out / rundir.JUDGE_INIT
    for r in rows:
        r["result"] = _judged_row(out / JUDGE_MODELS / r["name"], r, test_b, settings, beam, backend, progress,
                                  init)
    tests = _against(out, rows, baseline, test_b, bootstrap_seed)
    sig = make_signature("downstream", model="marian", seed=settings.seed, judge="nmt", preset=settings.preset,
                         **settings.arch, vocab=settings.vocab, max_tokens=settings.max_tokens, lr=settings.lr,
                         warmup=settings.warmup, epochs=settings.epochs, patience=settings.patience, beam=beam,
                         backend=backend, direction="scored->other" if reverse else "other->scored",
                         bleu=rows[0]["result"]["bleu_signature"],
                         **({"init": rundir.model_identity(init)} if init is not None else {}))
    result = {"judge": "nmt", "test": list(test_b.files), "dev": list(dev_b.files), "n_test": len(test_b),
              "baseline": baseline, "bootstrap": {"n_samples": 1000, "seed": bootstrap_seed},
              **({"init": str(init)} if init is not None else {}), "beam": beam, "backend": backend,
              "direction": sig["direction"], "rows": [_table_row(out, r, tests) for r in rows], "signature": sig}
    rundir.write_json(out, rundir.DOWNSTREAM, result)
    return result


def _baseline(rows: list, baseline: str | None, whole_pool: bool) -> str | None:
    """The row every other is tested against: the one named, or a selection whose scores do not follow the
    text (random), else the whole pool's; None when there is none."""
    names = [r["name"] for r in rows]
    if baseline is None:
        return next((r["name"] for r in rows if r["kind"] == "selection" and _contentless(r["run_dir"])),
                    "pool" if whole_pool else None)
    if baseline not in names:
        raise DomainsiftError(f"--baseline {baseline!r} names no row (the rows: {', '.join(names)})")
    return baseline


def _start(init, init_bitext, bitext, test_b, dev_b):
    """The rows' start model: ``init`` checked, or ``(bitext, dev)`` to train it on (refused when it holds a
    test sentence or every dev pair); None when the rows train from scratch or from ``init``."""
    from ..nmt import check_disjoint
    if init is not None and init_bitext is not None:
        raise DomainsiftError("give the rows' start model as --init DIR or --init-bitext SRC TGT, not both")
    if init is not None:
        from ..nmt.decode import model_folder
        model_folder(init)
    if init_bitext is None:
        return None
    start = bitext(init_bitext)
    check_disjoint(start, test_b, "the test set", "the start model's bitext")
    start_dev = _without(dev_b, start)
    if not len(start_dev):
        raise DomainsiftError(f"{dev_b.files[0]}: every dev pair is in the start model's bitext")
    return start, start_dev


def _rows(run_dirs, references, whole_pool: bool, reverse: bool, bitext) -> list[dict]:
    """The judge's rows, each with its training bitext, and the refusals of their names."""
    rows = []
    for name, d in zip(run_names(run_dirs), run_dirs):
        rows.append({"name": name, "kind": "selection", "run_dir": str(d), "train": selection_bitext(d, reverse)})
    for name, b in references:
        rows.append({"name": name, "kind": "reference", "train": bitext(b)})
    if whole_pool:
        if not run_dirs:
            raise DomainsiftError("the whole-pool row reads the pool of the selections; give at least one")
        pools = {json.dumps(rundir.read_pool(d), sort_keys=True) for d in run_dirs}
        if len(pools) > 1:
            raise DomainsiftError("the selections were made from different pools; the whole-pool row needs one")
        rows.append({"name": "pool", "kind": "whole pool", "run_dir": str(run_dirs[0]),
                     "train": pool_bitext(run_dirs[0], reverse)})
    if not rows:
        raise DomainsiftError("give at least one selection run directory or reference bitext to judge")
    names = [r["name"] for r in rows]
    bad = next((n for n in names if not n or n.startswith(".") or "/" in n or "\\" in n), None)
    if bad is not None:
        raise DomainsiftError(f"{bad!r} cannot name a row: its model is kept in OUT/models/<name>")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DomainsiftError(f"two rows are named {twice[0]!r}; give each reference its own name")
    return rows


def _table_row(out: Path, r: dict, tests: dict) -> dict:
    """A row of ``downstream.json``'s table."""
    res, folder = r["result"], out / JUDGE_MODELS / r["name"]
    return {"name": r["name"], "kind": r["kind"], **({"run_dir": r["run_dir"]} if "run_dir" in r else {}),
            "n_pairs": len(r["train"]), "n_dev": len(r["dev"]), "bleu": res["bleu"], "chrf": res["chrf"],
            "chrfpp": res["chrfpp"], "xent_per_char": res["xent_per_char"],
            **({"vs_baseline": tests[r["name"]]} if r["name"] in tests else {}),
            "translations": str(folder / rundir.JUDGE_HYP),
            "best_epoch": res["best_epoch"], "epochs_run": res["epochs_run"], "dev_loss": res["dev_loss"],
            "train_seconds": res["train_seconds"], "target_tokens_per_second": res["target_tokens_per_second"],
            "model": str(folder)}


def _contentless(run_dir) -> bool:
    """Whether a selection was made by a method whose scores do not follow the lines' text (its declaration)."""
    from ..select import selector_class
    return not selector_class(rundir.read_signature(run_dir)["method"]).reads_content


def _against(out: Path, rows: list, baseline: str | None, test_b, seed: int) -> dict:
    """Every row's test translations against the baseline row's, by paired bootstrap: ``{row: test}``."""
    from ..nmt.significance import paired_bootstrap
    if baseline is None:
        return {}

    def hyps(name):
        return (out / JUDGE_MODELS / name / rundir.JUDGE_HYP).read_text(encoding="utf-8").split("\n")[:len(test_b)]
    base = hyps(baseline)
    return {r["name"]: {"baseline": baseline, **paired_bootstrap(base, hyps(r["name"]), test_b.tgt, seed=seed)}
            for r in rows if r["name"] != baseline}


def _judged_row(folder: Path, r: dict, test_b, settings, beam: int, backend: str, progress: bool,
                init=None) -> dict:
    """One row of the judge as a step: its model (trained, resumed or kept: :func:`domainsift.jobs.nmt.trained`),
    the test set's translations (``test.hyp``, kept beside the score) and the score; the row is kept while made
    by the same model (its own weights), test set and decoding, and its translations are as written."""
    from .._internal.atomic import atomic_open
    from ..nmt import score_translation, translate
    from ..nmt.trainer import training_identity
    from ..pipeline.nmt import trained
    identity = training_identity(r["train"], r["dev"], settings, init)
    test_digest = _digest(test_b)

    def step():  # the row as made by the model in the folder now
        return rundir.Step(folder / JUDGE_ROW, rundir.identity(rundir.model_identity(folder), test_digest, beam,
                                                               backend))
    if (rundir.read_json(folder, rundir.NMT_RECORD) or {}).get("identity") == identity:
        kept = step().kept()
        if kept is not None:
            return kept
    rec = trained(folder, r["train"], r["dev"], settings, init_from=init, progress=progress)
    row = step()
    row.start()
    hyp = translate(folder, test_b.src, beam=beam, progress=progress, backend=backend)
    with atomic_open(folder / rundir.JUDGE_HYP) as fh:
        fh.write("".join(h + "\n" for h in hyp))
    scores = score_translation(hyp, test_b.tgt, test_b.files[0])
    from ..nmt.decode import reference_xent
    xent = reference_xent(folder, test_b.src, test_b.tgt)
    return row.done([rundir.JUDGE_HYP], test=test_digest, beam=beam, backend=backend, bleu=scores["bleu"],
                     chrf=scores["chrf"], chrfpp=scores["chrfpp"], xent_per_char=round(xent, 6),
                     bleu_signature=scores["signature"]["bleu"], best_epoch=rec["best_epoch"],
                     epochs_run=rec["epochs_run"], dev_loss=min(rec["dev_loss"]), train_seconds=rec["train_seconds"],
                     target_tokens_per_second=rec["target_tokens_per_second"], nmt_signature=rec["signature"],
                     translations=rundir.JUDGE_HYP, training=identity)


def _digest(b) -> str:
    import hashlib

    from .._internal.checksums import hash_texts
    h = hashlib.sha256()
    hash_texts(h, b.src)
    hash_texts(h, b.tgt)
    return h.hexdigest()[:20]


def format_nmt_rows(rows: Sequence[dict]) -> str:
    from ..nmt.significance import in_words
    w = max(4, max(len(r["name"]) for r in rows))
    lines = [f"{'name':<{w}}   BLEU   chrF  chrF++  xent/char   pairs  best epoch  BLEU vs baseline (95% interval, p)",
             f"{'-' * w}  -----  -----  ------  ---------  ------  ----------  -------------------------------------"]
    for r in rows:
        vs = r.get("vs_baseline")
        against = "" if vs is None else f"vs {vs['baseline']}: {in_words(vs)}"
        lines.append(f"{r['name']:<{w}}  {r['bleu']:>5.2f}  {r['chrf']:>5.2f}  {r.get('chrfpp', float('nan')):>6.2f}  "
                     f"{r.get('xent_per_char', float('nan')):>9.4f}  {r['n_pairs']:>6}  "
                     f"{r['best_epoch']:>5}/{r['epochs_run']:<4}  {against}")
    return "\n".join(lines)
