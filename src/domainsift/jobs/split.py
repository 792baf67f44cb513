"""Clean multi-domain splits (paper 000, section 3.1 and appendix A.2).

The multi-domain benchmark the paper started from repeats sentence pairs and
leaks dev/test sentences into training. :func:`clean_split` builds an
overlap-free split of a parallel multi-domain corpus:

1. drop from dev every pair that shares a side with that domain's test;
2. within a domain's train set, keep at most one translation of any source
   sentence and of any target sentence (the first pair wins);
3. drop from train every pair whose source or target occurs in that domain's
   dev or test (``across_domains``: in any domain's dev or test);
4. a domain without dev or test gets them carved out of its clean train set,
   seeded (``dev_size``, ``test_size``);
5. cap a domain's train set with a seeded sample (``cap``).

Sentences match exactly after stripping surrounding whitespace, or after the
chosen normalisations (``case``, ``punct``, ``space``). The report counts,
for each domain and split, before and after: pairs, distinct sources, distinct
targets, and the distinct sentences shared by train/dev, train/test and
dev/test on each side (the paper's Tables 3 and 8).
"""

from __future__ import annotations

import logging
import os
import re
import unicodedata

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from .._internal.atomic import atomic_open, save_json
from ..io.split import SPLITS, MultiDomainCorpus, Pair
from .._internal.errors import InputError
from .._internal.safety import check_name, refuse_overwriting_inputs

log = logging.getLogger(__name__)

NORMALISATIONS = ("case", "punct", "space")

def make_normaliser(options: Iterable[str] = ()) -> Callable[[str], str]:
    """A key function: strip, then the chosen normalisations."""
    opts = set(options)
    bad = opts - set(NORMALISATIONS)
    if bad:
        raise InputError(f"unknown normalisation {', '.join(sorted(bad))} (choose from {', '.join(NORMALISATIONS)})")

    def norm(s: str) -> str:
        s = s.strip()
        if "punct" in opts:
            s = "".join(ch for ch in s if not unicodedata.category(ch).startswith("P"))
        if "space" in opts or "punct" in opts:
            s = re.sub(r"\s+", " ", s).strip()
        if "case" in opts:
            s = s.casefold()
        return s
    return norm


# ---------------------------------------------------------------- statistics

def split_stats(corpus: MultiDomainCorpus, norm: Callable[[str], str]) -> dict:
    """Per domain: per split pairs/distinct sources/targets; overlaps per side."""
    out = {}
    for domain in corpus.domains:
        splits = corpus.data[domain]
        keys = {sp: ({norm(s) for s, _ in pairs}, {norm(t) for _, t in pairs}) for sp, pairs in splits.items()}
        row = {sp: {"pairs": len(pairs), "distinct_src": len(keys[sp][0]), "distinct_tgt": len(keys[sp][1])}
               for sp, pairs in splits.items()}
        overlaps = {}
        for a, b in (("train", "dev"), ("train", "test"), ("dev", "test")):
            if a in keys and b in keys:
                overlaps[f"{a}&{b}"] = {"src": len(keys[a][0] & keys[b][0]), "tgt": len(keys[a][1] & keys[b][1])}
            else:
                overlaps[f"{a}&{b}"] = None
        out[domain] = {"splits": row, "overlaps": overlaps}
    return out


# ---------------------------------------------------------------- cleaning

def dedup_pairs(pairs: Sequence[Pair], norm) -> list[Pair]:
    """Keep the first pair of any source and of any target sentence."""
    seen_s, seen_t, kept = set(), set(), []
    for s, t in pairs:
        ks, kt = norm(s), norm(t)
        if ks in seen_s or kt in seen_t:
            continue
        seen_s.add(ks)
        seen_t.add(kt)
        kept.append((s, t))
    return kept


def drop_overlapping(pairs: Sequence[Pair], src_keys: set, tgt_keys: set, norm) -> list[Pair]:
    return [(s, t) for s, t in pairs if norm(s) not in src_keys and norm(t) not in tgt_keys]


def _sample(pairs: list[Pair], n: int, rng: np.random.Generator) -> tuple[list[Pair], list[Pair]]:
    """A seeded sample of n pairs (in original order) and the rest."""
    n = min(n, len(pairs))
    idx = set(rng.choice(len(pairs), size=n, replace=False).tolist())
    return [p for i, p in enumerate(pairs) if i in idx], [p for i, p in enumerate(pairs) if i not in idx]


def clean_split(corpus: MultiDomainCorpus, normalise: Iterable[str] = (), across_domains: bool = False,
                dev_size: int = 0, test_size: int = 0, cap: int | None = None,
                seed: int = 0) -> MultiDomainCorpus:
    """Return the cleaned corpus (see the module docstring for the rules)."""
    norm = make_normaliser(normalise)
    rng = np.random.default_rng(seed)
    out = MultiDomainCorpus(n_empty=corpus.n_empty)
    for domain in corpus.domains:
        splits = {sp: list(p) for sp, p in corpus.data[domain].items()}
        if "dev" in splits and "test" in splits:
            splits["dev"] = drop_overlapping(splits["dev"], {norm(s) for s, _ in splits["test"]},
                                             {norm(t) for _, t in splits["test"]}, norm)
        train = dedup_pairs(splits["train"], norm)
        given = [p for sp in ("dev", "test") for p in splits.get(sp, [])]
        train = drop_overlapping(train, {norm(s) for s, _ in given}, {norm(t) for _, t in given}, norm)
        # carve missing held-out sets from the clean train set (unique sides: disjoint by construction)
        for sp, size in (("test", test_size), ("dev", dev_size)):
            if sp not in splits and size > 0:
                splits[sp], train = _sample(train, size, rng)
        splits["train"] = train
        out.data[domain] = splits
    # held-out keys: per domain, or of all domains together
    held = {d: (set(), set()) for d in out.domains}
    for d in out.domains:
        for sp in ("dev", "test"):
            for s, t in out.data[d].get(sp, []):
                held[d][0].add(norm(s))
                held[d][1].add(norm(t))
    if across_domains:
        all_s = set().union(*(h[0] for h in held.values()))
        all_t = set().union(*(h[1] for h in held.values()))
        held = {d: (all_s, all_t) for d in held}
    for d in out.domains:
        train = drop_overlapping(out.data[d]["train"], held[d][0], held[d][1], norm)
        if cap is not None and len(train) > cap:
            train, _ = _sample(train, cap, rng)
        out.data[d]["train"] = train
    return out


# ---------------------------------------------------------------- writing and the report

def write_corpus(corpus: MultiDomainCorpus, out_dir: str | os.PathLike, src: str, tgt: str) -> list[str]:
    out = Path(out_dir)
    written = []
    for d in corpus.domains:
        for sp, pairs in corpus.data[d].items():
            for lang, side in ((src, 0), (tgt, 1)):
                path = out / f"{d}.{sp}.{lang}"
                with atomic_open(path) as fh:
                    for pair in pairs:
                        fh.write(pair[side].replace("\n", " ") + "\n")
                written.append(str(path))
    return written


def _fmt_overlap(o) -> str:
    return "-" if o is None else f"{o['src']}/{o['tgt']}"


def report_markdown(before: dict, after: dict, src: str, tgt: str, settings: dict) -> str:
    lines = ["# Split report", "",
             "Settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()), "",
             f"Counts before → after. Overlaps are distinct sentences shared by two splits, {src}/{tgt}.", "",
             "| domain | split | pairs | distinct " + src + " | distinct " + tgt + " |", "|---|---|---|---|---|"]
    for d in sorted(set(before) | set(after)):
        for sp in SPLITS:
            b = before.get(d, {}).get("splits", {}).get(sp)
            a = after.get(d, {}).get("splits", {}).get(sp)
            if not b and not a:
                continue
            def cell(key):
                return f"{b[key] if b else '-'} → {a[key] if a else '-'}"
            lines.append(f"| {d} | {sp} | {cell('pairs')} | {cell('distinct_src')} | {cell('distinct_tgt')} |")
    lines += ["", "| domain | train∩dev | train∩test | dev∩test |", "|---|---|---|---|"]
    for d in sorted(set(before) | set(after)):
        ob, oa = before.get(d, {}).get("overlaps", {}), after.get(d, {}).get("overlaps", {})
        cells = [f"{_fmt_overlap(ob.get(k))} → {_fmt_overlap(oa.get(k))}" for k in ("train&dev", "train&test", "dev&test")]
        lines.append(f"| {d} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SplitSettings:
    """How ``split`` cleans (``--normalize``, ``--across-domains``, ``--dev-size``, ``--test-size``,
    ``--cap``, ``--seed``): see :func:`clean_split`."""

    normalise: Sequence[str] = ()
    across_domains: bool = False
    dev_size: int = 0
    test_size: int = 0
    cap: int | None = None
    seed: int = 0


def split_corpus(corpus_path: str | os.PathLike, out_dir: str | os.PathLike, src: str, tgt: str,
                 settings: SplitSettings = SplitSettings()) -> dict:
    """``domainsift split``: read a directory of ``<domain>.<split>.<lang>`` files or one TSV of domain,
    split, source and target, then :func:`run_split`."""
    from ..io.split import read_directory, read_tsv
    corpus = read_directory(corpus_path, src, tgt) if Path(corpus_path).is_dir() else read_tsv(corpus_path)
    return run_split(corpus, out_dir, src, tgt, settings, source=str(corpus_path))


def run_split(corpus: MultiDomainCorpus, out_dir: str | os.PathLike, src: str, tgt: str,
              settings: SplitSettings = SplitSettings(), source: str = "") -> dict:
    """Clean, write ``OUT/<domain>.<split>.<lang>``, ``report.md`` and ``report.json``."""
    from .._internal.signature import make_signature
    normalise, across_domains, seed = settings.normalise, settings.across_domains, settings.seed
    dev_size, test_size, cap = settings.dev_size, settings.test_size, settings.cap
    check_name(src, "language", "--src")
    check_name(tgt, "language", "--tgt")
    if source:
        inputs = [p for p in Path(source).iterdir()] if Path(source).is_dir() else [source]
        refuse_overwriting_inputs(inputs, out_dir, ("*.train.*", "*.dev.*", "*.test.*", "report.json", "report.md"))
    norm = make_normaliser(normalise)
    before = split_stats(corpus, norm)
    cleaned = clean_split(corpus, normalise, across_domains, dev_size, test_size, cap, seed)
    after = split_stats(cleaned, norm)
    settings = {"normalise": ",".join(normalise) or "strip", "across_domains": across_domains,
                "dev_size": dev_size, "test_size": test_size, "cap": cap, "seed": seed}
    files = write_corpus(cleaned, out_dir, src, tgt)
    sig = make_signature("split", seed=seed, corpus=source, src=src, tgt=tgt,
                         **{k: v for k, v in settings.items() if k != "seed"})
    report = {"signature": sig, "src": src, "tgt": tgt, "settings": settings, "empty_pairs_skipped": corpus.n_empty,
              "before": before, "after": after, "files": files}
    md = report_markdown(before, after, src, tgt, settings)
    save_json(Path(out_dir) / "report.json", report)
    with atomic_open(Path(out_dir) / "report.md") as fh:
        fh.write(md)
    report["markdown"] = md
    return report
