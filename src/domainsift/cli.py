"""The command-line interface: one subcommand per task, each a call into the library.

Errors the user can fix print one line (``domainsift: error: ...``) and exit 2.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from . import __version__
from .errors import DomainsiftError

log = logging.getLogger("domainsift")


def domain_name(path: str) -> str:
    """The gold domain of a file: its name up to the first dot (``EMEA.train.en`` -> ``EMEA``)."""
    name = Path(path).name
    return name.split(".")[0] or name


def file_labels(ids, files) -> list[str]:
    names = {f: domain_name(f) for f in files}
    if len(set(names.values())) < len(names):  # two files share a stem: use full paths
        names = {f: f for f in files}
    return [names[f] for f, _ in ids]


# ---------------------------------------------------------------- shared options

def _add_reader_opts(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("input format")
    g.add_argument("--format", choices=["text", "tsv", "jsonl"], default=None,
                   help="input format (default: from the file name; .gz allowed)")
    g.add_argument("--column", type=int, default=0, help="TSV column holding the text (0-based)")
    g.add_argument("--field", default="text", help="JSONL field holding the text")


def _add_embed_opts(p: argparse.ArgumentParser, default: str = "minilm") -> None:
    g = p.add_argument_group("encoder")
    g.add_argument("--model", "--embedder", dest="embedder", default=default,
                   help="minilm (default), tfidf, word2vec, lda, random, or a Hugging Face "
                        "model name or local path")
    g.add_argument("--layer", type=int, default=-1, help="hidden layer to pool (default: last)")
    g.add_argument("--max-length", type=int, default=128, help="tokens per sentence")
    g.add_argument("--batch-size", type=int, default=64)
    g.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    g.add_argument("--normalize", choices=["auto", "yes", "no"], default="auto",
                   help="L2-normalise sentence vectors (auto: as the model's sentence-transformers "
                        "config says; all-MiniLM-L6-v2 normalises)")
    g.add_argument("--cache", default=None,
                   help="embedding cache directory (default: $DOMAINSIFT_CACHE or "
                        "~/.cache/domainsift; '' disables)")


def _embed_config(args, seed: int = 0):
    from .pipeline import EmbedConfig
    return EmbedConfig(embedder=args.embedder, layer=args.layer, max_length=args.max_length,
                       batch_size=args.batch_size, device=args.device, seed=seed,
                       cache_dir=args.cache, progress=not args.quiet,
                       normalize={"auto": None, "yes": True, "no": False}[args.normalize])


def _positive_int(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {s}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {v}")
    return v


# ---------------------------------------------------------------- subcommands

def cmd_embed(args) -> int:
    from .corpus import read_corpus
    from .pipeline import run_embed
    corpus = read_corpus(args.files, fmt=args.format, column=args.column, field=args.field)
    sig = run_embed(corpus, args.out, _embed_config(args))
    print(f"embedded {sig['n_sentences']} sentences ({sig['dim']} dims; {corpus.n_empty} empty lines "
          f"skipped) -> {Path(args.out) / 'embeddings.npy'}")
    print(f"signature: {sig['signature']}")
    return 0


def cmd_cluster(args) -> int:
    from .corpus import read_corpus, read_labels
    from .pipeline import format_summary_table, run_cluster
    corpus = read_corpus(args.files, fmt=args.format, column=args.column, field=args.field,
                         max_per_file=args.max_per_file, distinct=args.distinct)
    gold = read_labels(args.labels, len(corpus)) if args.labels else file_labels(corpus.ids, corpus.files)
    if args.no_gold:
        gold = None
    pcas = [None if p == 0 else p for p in args.pca]
    seeds = list(range(args.seeds))
    result = run_cluster(corpus, gold, args.out, ks=args.k, pcas=pcas, seeds=seeds,
                         algorithm=args.algorithm, n_init=args.n_init, config=_embed_config(args),
                         plots=not args.no_plots)
    print(f"{len(corpus)} sentences, {len(set(gold)) if gold else '?'} gold domains, "
          f"model {result['signature']['model']}")
    if gold is not None:
        print(format_summary_table(result["summary"]))
        print(f"outliers (k={args.k[0]}, seed 0): {result['outliers']['count']}")
    print(f"results: {Path(args.out) / 'clustering.json'}")
    for p in result["pictures"]:
        print(f"picture: {p}")
    return 0


def cmd_split(args) -> int:
    from .split import read_directory, read_tsv, run_split
    norms = [x for x in (args.normalize or "").split(",") if x]
    if Path(args.corpus).is_dir():
        corpus = read_directory(args.corpus, args.src, args.tgt)
    else:
        corpus = read_tsv(args.corpus)
    report = run_split(corpus, args.out, args.src, args.tgt, normalise=norms, across_domains=args.across_domains,
                       dev_size=args.dev_size, test_size=args.test_size, cap=args.cap, seed=args.seed,
                       source=str(args.corpus))
    print(report["markdown"])
    print(f"wrote {len(report['files'])} files, {Path(args.out) / 'report.md'} and report.json")
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo
    run_demo(args.out, progress=not args.quiet)
    return 0


# ---------------------------------------------------------------- parser

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="domainsift", description=(
        "Find the domains hidden in a corpus and select the sentences that belong to yours."))
    p.add_argument("--version", action="version", version=f"domainsift {__version__}")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars, warnings only")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    s = sub.add_parser("embed", help="encode sentences into mean-pooled vectors")
    s.add_argument("files", nargs="+", metavar="FILE")
    s.add_argument("--out", required=True, help="output directory")
    _add_reader_opts(s)
    _add_embed_opts(s)
    s.set_defaults(func=cmd_embed)

    s = sub.add_parser("cluster", help="cluster sentences by domain (PCA + GMM) and score purity")
    s.add_argument("files", nargs="+", metavar="FILE", help="each file is one gold domain unless --labels")
    s.add_argument("--k", type=_positive_int, nargs="+", default=[5], help="numbers of clusters")
    s.add_argument("--pca", type=int, nargs="+", default=[50], help="PCA dims; 0 = no PCA")
    s.add_argument("--seeds", type=_positive_int, default=5, help="number of seeds (0..N-1)")
    s.add_argument("--algorithm", choices=["gmm", "kmeans"], default="gmm")
    s.add_argument("--n-init", type=_positive_int, default=3,
                   help="EM restarts per seed, best likelihood kept (default 3)")
    s.add_argument("--labels", help="a file with one gold label per non-empty input line")
    s.add_argument("--no-gold", action="store_true", help="no gold labels: cluster only")
    s.add_argument("--max-per-file", type=_positive_int, default=None, help="first N lines of each file")
    s.add_argument("--distinct", action="store_true", help="with --max-per-file: first N distinct lines")
    s.add_argument("--no-plots", action="store_true")
    s.add_argument("--out", required=True, help="output directory")
    _add_reader_opts(s)
    _add_embed_opts(s)
    s.set_defaults(func=cmd_cluster)

    s = sub.add_parser("split", help="deduplicate and make overlap-free train/dev/test splits")
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
    s.add_argument("--cap", type=_positive_int, default=None, help="at most N train pairs per domain (seeded sample)")
    s.add_argument("--normalize", default="",
                   help="comma-separated extra normalisations for matching: case,punct,space "
                        "(default: exact match after stripping whitespace)")
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(func=cmd_split)

    s = sub.add_parser("demo", help="run offline on the built-in multi-domain sample")
    s.add_argument("--out", default="demo-out", help="output directory (default: demo-out)")
    s.set_defaults(func=cmd_demo)

    from . import cli_select
    cli_select.add_commands(sub, _add_reader_opts, _add_embed_opts, _positive_int)
    return p


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else (logging.WARNING if args.quiet else logging.INFO),
                        format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("transformers", "gensim", "urllib3", "matplotlib", "huggingface_hub"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    try:
        return args.func(args) or 0
    except DomainsiftError as exc:
        print(f"domainsift: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("domainsift: interrupted (finished cache chunks are kept; rerun to resume)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
