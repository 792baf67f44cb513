"""Selection subcommands: score, select, evaluate. Added to the parser by cli.py."""

from __future__ import annotations

import time
from pathlib import Path

from .errors import DomainsiftError


def _share(text: str) -> float:
    """A share of the ranking, as a decimal or a fraction ('0.2', '1/3')."""
    import argparse
    from fractions import Fraction
    try:
        return float(Fraction(text))
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"not a number or fraction: '{text}'") from None


def _add_method_opts(p, add_reader_opts) -> None:
    import inspect

    from .select import SELECTORS, selector_class
    # finetune's defaults are the selector's own, so the CLI and the Python API cannot drift apart
    ft = {k: v.default for k, v in inspect.signature(selector_class("finetune").__init__).parameters.items()}
    p.add_argument("--method", required=False, choices=list(SELECTORS), help="selection method")
    p.add_argument("--in-domain", nargs="+", metavar="FILE", help="the in-domain sentences")
    p.add_argument("--pool", nargs="+", metavar="FILE", help="the pool to select from")
    p.add_argument("--pool-target", nargs="+", metavar="FILE",
                   help="the other side of a parallel pool, aligned line by line with --pool; "
                        "--pool must be the side in the in-domain set's language")
    p.add_argument("--seed", type=int, default=0)
    g = p.add_argument_group("method parameters")
    g.add_argument("--model", default="minilm",
                   help="encoder for cosine/finetune: minilm (default) or a HF name or path")
    g.add_argument("--epochs", type=int, default=ft["epochs"],
                   help="finetune: epochs, each with a fresh draw of negatives (default %(default)s)")
    g.add_argument("--lr", type=float, default=ft["lr"],
                   help="finetune: encoder learning rate (%(default)s)")
    g.add_argument("--batch-size", type=int, default=ft["batch_size"],
                   help="finetune: training batch size (%(default)s)")
    g.add_argument("--bucket", type=int, default=ft["bucket"],
                   help="finetune: batch sentences of similar length within windows of this many batches "
                        "(default %(default)s; 0 = plain random batches)")
    g.add_argument("--head-init", choices=["random", "probe"], default=ft["head_init"],
                   help="finetune: a fresh head (default) or one started from a linear probe of the frozen "
                        "vectors (LP-FT)")
    g.add_argument("--negatives", choices=["preranked", "random"], default=ft["negatives"],
                   help="finetune: negatives from below --neg-cut in the cosine ranking (default) or random")
    g.add_argument("--neg-ratio", type=float, default=ft["neg_ratio"],
                   help="finetune: negatives per positive in each epoch (default 1: as many as positives)")
    g.add_argument("--neg-hardness", type=float, default=ft["neg_hardness"],
                   help="finetune: weight pre-ranked negatives by (1-u)^K at position u below the cut "
                        "(default %(default)s: uniform)")
    g.add_argument("--neg-cut", type=_share, default=ft["neg_cut"], metavar="C",
                   help="finetune: pre-ranked negatives never come from the top C of the ranking "
                        "(default %(default)s: the bottom 80%%; the paper's bottom two thirds is 1/3; "
                        "0: anywhere)")
    g.add_argument("--rerank-every", type=int, default=ft["rerank_every"], metavar="K",
                   help="finetune: after every K epochs, re-rank a pool sample with the classifier in training "
                        "and draw the next negatives from below the cut in that ranking "
                        "(default %(default)s; 0 = the cosine pre-ranking throughout)")
    g.add_argument("--rerank-sample", type=int, default=ft["rerank_sample"], metavar="M",
                   help="finetune: pool lines each re-rank scores (default %(default)s; 0 = the whole pool)")
    g.add_argument("--ema", type=float, default=ft["ema"], metavar="D",
                   help="finetune: keep an exponential moving average of the weights over the training "
                        "steps, decay D per step (default %(default)s: the last step's weights)")
    g.add_argument("--rounds", type=int, default=ft["rounds"],
                   help="finetune: training rounds; each further round adds the previous classifier's most "
                        "confident pool lines as positives (self-training; default 1)")
    g.add_argument("--expand", type=float, default=ft["expand"],
                   help="finetune: pseudo-positives per positive in rounds after the first (default 1)")
    from .select.finetune import POOLINGS
    g.add_argument("--pooling", choices=POOLINGS, default=ft["pooling"],
                   help="finetune: what the head reads: the mean of the last layer (default %(default)s), "
                        "with the token-wise max (mean-max) or with the middle layer's mean (mean+mid), or the "
                        "middle layer's mean alone (mid)")
    g.add_argument("--order", type=int, default=3, help="moore-lewis: n-gram order (3)")
    g.add_argument("--max-length", type=int, default=128)
    g.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    g.add_argument("--cache", default=None, help="embedding cache directory")
    add_reader_opts(p)


def _add_choose_opts(p, positive_int) -> None:
    g = p.add_argument_group("what to select (exactly one)")
    g.add_argument("--top", type=positive_int, help="the N best lines")
    g.add_argument("--fraction", type=float, help="the best fraction of the pool (0-1]")
    g.add_argument("--threshold", type=float, help="every line scoring at least this")
    g.add_argument("--positive", action="store_true",
                   help="finetune only: lines the classifier calls in-domain (p > 0.5)")


def _method_params(args) -> dict:
    progress = not args.quiet
    m = args.method
    if m == "cosine":
        return dict(embedder=args.model, max_length=args.max_length, device=args.device,
                    cache_dir=args.cache, progress=progress)
    if m == "finetune":
        return dict(model=args.model, epochs=args.epochs, lr=args.lr, batch_size=args.batch_size,
                    bucket=args.bucket, head_init=args.head_init, negatives=args.negatives,
                    neg_ratio=args.neg_ratio, neg_hardness=args.neg_hardness, neg_cut=args.neg_cut,
                    rerank_every=args.rerank_every, rerank_sample=args.rerank_sample, ema=args.ema,
                    rounds=args.rounds, expand=args.expand, pooling=args.pooling,
                    max_length=args.max_length, device=args.device,
                    cache_dir=args.cache, progress=progress)
    if m == "moore-lewis":
        return dict(order=args.order, progress=progress)
    return {}


def _reader(args) -> dict:
    return {"format": args.format, "column": args.column, "field": args.field}


def _read_inputs(args):
    from .corpus import read_corpus, read_parallel, Corpus
    if not args.method:
        raise DomainsiftError("--method is required (or --from-scores DIR)")
    if not args.in_domain or not args.pool:
        raise DomainsiftError("--in-domain and --pool are required")
    kw = dict(fmt=args.format, column=args.column, field=args.field)
    in_domain = read_corpus(args.in_domain, **kw)
    if args.pool_target:
        if len(args.pool_target) != len(args.pool):
            raise DomainsiftError(f"{len(args.pool)} --pool files but {len(args.pool_target)} --pool-target files")
        parts = [read_parallel(s, t, **kw) for s, t in zip(args.pool, args.pool_target)]
        pool = Corpus(texts=[t for c in parts for t in c.texts], ids=[i for c in parts for i in c.ids],
                      files=[f for c in parts for f in c.files], n_empty=sum(c.n_empty for c in parts),
                      targets=[t for c in parts for t in c.targets],
                      target_files=[f for c in parts for f in c.target_files])
    else:
        pool = read_corpus(args.pool, **kw)
    return in_domain, pool


def _print_score(sig, out) -> None:
    print(f"scored {sig['n_pool']} pool lines with {sig['method']} in {sig['score_seconds']} s -> {out}")
    if sig.get("classifier_holdout"):
        m = sig["classifier_holdout"]
        print(f"classifier on held-out data: precision {m['precision']:.3f}  recall {m['recall']:.3f}  "
              f"F1 {m['f1']:.3f}  (n={m['n']})")
    print(f"signature: {sig['signature']}")


def cmd_score(args) -> int:
    from .select.run import run_score
    in_domain, pool = _read_inputs(args)
    sig = run_score(args.method, in_domain, pool, args.out, _method_params(args), seed=args.seed,
                    reader=_reader(args))
    _print_score(sig, args.out)
    return 0


def cmd_select(args) -> int:
    from .select.base import check_n_against_pool
    from .select.run import run_score, run_select
    rules = sum(x is not None for x in (args.top, args.fraction, args.threshold)) + bool(args.positive)
    if rules != 1:
        raise DomainsiftError("give exactly one of --top, --fraction, --threshold, --positive")
    t0 = time.time()
    if args.from_scores:
        score_dir = args.from_scores
        out = args.out or score_dir
    else:
        if not args.out:
            raise DomainsiftError("--out is required")
        in_domain, pool = _read_inputs(args)
        check_n_against_pool(len(pool), args.top, args.fraction)  # fail before any work or output
        if args.positive and args.method != "finetune":
            raise DomainsiftError("--positive needs probability scores (method finetune)")
        sig = run_score(args.method, in_domain, pool, args.out, _method_params(args), seed=args.seed,
                        reader=_reader(args))
        _print_score(sig, args.out)
        score_dir = out = args.out
    sel = run_select(score_dir, out, top=args.top, fraction=args.fraction, threshold=args.threshold,
                     positive=args.positive)
    print(f"selected {sel['n_selected']} / {sel['n_pool']} lines in {time.time() - t0:.1f} s -> "
          + ", ".join(sel["outputs"]))
    return 0


def cmd_combine(args) -> int:
    from .select.base import check_n_against_pool
    from .select.combine import combine_scores
    from .select.run import run_select, write_score_dir
    rules = sum(x is not None for x in (args.top, args.fraction, args.threshold))
    if rules > 1:
        raise DomainsiftError("give at most one of --top, --fraction, --threshold")
    t0 = time.time()
    scores, pool, sig = combine_scores(args.score_dirs, weights=args.weights, how=args.how, out_dir=args.out)
    check_n_against_pool(len(scores), args.top, args.fraction)  # before anything is written
    write_score_dir(args.out, scores, pool, sig)
    print(f"combined {len(args.score_dirs)} runs ({sig['combined']}, {args.how}) over {sig['n_pool']} pool lines "
          f"-> {args.out}")
    print(f"signature: {sig['signature']}")
    if rules:
        sel = run_select(args.out, args.out, top=args.top, fraction=args.fraction, threshold=args.threshold)
        print(f"selected {sel['n_selected']} / {sel['n_pool']} lines in {time.time() - t0:.1f} s -> "
              + ", ".join(sel["outputs"]))
    return 0


def cmd_evaluate(args) -> int:
    from .evaluate import evaluate_run
    r = evaluate_run(args.run_dir, args.gold)
    print(f"precision {r['precision']:.4f}  recall {r['recall']:.4f}  F1 {r['f1']:.4f}  "
          f"({r['n_correct']} of {r['n_selected']} selected are in the {r['n_gold']} gold lines)")
    print(f"-> {Path(args.run_dir) / 'eval.json'}")
    return 0


def cmd_downstream(args) -> int:
    from .downstream import format_rows, parse_named, run_downstream
    refs = parse_named(args.reference, "--reference")
    if not args.run_dirs and not refs:
        raise DomainsiftError("give at least one run directory or --reference NAME=FILE")
    result = run_downstream(args.run_dirs, args.test, refs, order=args.order, out_dir=args.out)
    print(f"{args.order}-gram LMs (VariKN, Kneser-Ney) on {args.test}:")
    print(format_rows(result["rows"]))
    print(f"-> {Path(args.out) / 'downstream.json'}")
    return 0


def cmd_crossdomain(args) -> int:
    from .downstream import cross_domain, format_matrix, parse_named
    from .pipeline import EmbedConfig
    emb = None if args.no_similarity else EmbedConfig(embedder=args.model, cache_dir=args.cache,
                                                      progress=not args.quiet).build()
    result = cross_domain(parse_named(args.train, "--train"), parse_named(args.test, "--test"),
                          order=args.order, embedder=emb, max_centroid=args.max_centroid, out_dir=args.out)
    print(format_matrix(result))
    print(f"-> {Path(args.out) / 'crossdomain.json'}" + (f", {result['plot']}" if result.get("plot") else ""))
    return 0


def add_commands(sub, add_reader_opts, add_embed_opts, positive_int) -> None:
    s = sub.add_parser("score", help="score a pool by how in-domain each line is (no selection)")
    _add_method_opts(s, add_reader_opts)
    s.add_argument("--out", required=True, help="run directory")
    s.set_defaults(func=cmd_score)

    s = sub.add_parser("select", help="score and select in one go, or re-select from saved scores")
    _add_method_opts(s, add_reader_opts)
    s.add_argument("--from-scores", metavar="DIR", help="re-select from a score directory (no re-scoring)")
    s.add_argument("--out", help="output directory (default with --from-scores: DIR itself)")
    _add_choose_opts(s, positive_int)
    s.set_defaults(func=cmd_select)

    s = sub.add_parser("combine", help="combine saved score runs of one pool (weighted sum of standardised scores)")
    s.add_argument("score_dirs", nargs="+", metavar="DIR", help="score directories (domainsift score/select)")
    s.add_argument("--out", required=True, help="the combined score directory")
    s.add_argument("--weights", nargs="+", type=float, metavar="W", help="one weight per run (default: all 1)")
    s.add_argument("--how", choices=["zscore", "rank"], default="zscore",
                   help="standardise each run by z-score (probabilities via their logit; default) or by rank")
    g = s.add_argument_group("what to select (optional; or later with select --from-scores)")
    g.add_argument("--top", type=positive_int, help="the N best lines")
    g.add_argument("--fraction", type=float, help="the best fraction of the pool (0-1]")
    g.add_argument("--threshold", type=float, help="every line whose combined score is at least this")
    s.set_defaults(func=cmd_combine)

    s = sub.add_parser("evaluate", help="precision and recall of a selection against an oracle")
    s.add_argument("run_dir", metavar="DIR")
    s.add_argument("--gold", nargs="+", required=True, metavar="FILE",
                   help="pool file(s) whose every line is in-domain (the oracle)")
    s.set_defaults(func=cmd_evaluate)

    s = sub.add_parser("downstream", help="perplexity of an n-gram LM trained on each selection, on held-out text")
    s.add_argument("run_dirs", nargs="*", metavar="RUN_DIR", help="selection run directories")
    s.add_argument("--test", required=True, help="held-out in-domain text")
    s.add_argument("--reference", nargs="+", default=[], metavar="NAME=FILE",
                   help="reference corpora, e.g. all=pool.txt oracle=in-domain-train.txt")
    s.add_argument("--order", type=positive_int, default=4, help="n-gram order (4)")
    s.add_argument("--out", required=True, help="output directory")
    s.set_defaults(func=cmd_downstream)

    s = sub.add_parser("crossdomain", help="cross-domain LM perplexity matrix and its link to centroid similarity")
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
