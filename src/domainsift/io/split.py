"""The readers of a multi-domain parallel corpus for ``domainsift split``: a directory of
``<domain>.<split>.<lang>`` files, or one TSV with domain, split, source and target columns."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .._internal.errors import InputError
from .._internal.safety import check_name
from .corpus import iter_aligned, iter_raw_lines

SPLITS = ("train", "dev", "test")

Pair = tuple[str, str]


@dataclass
class MultiDomainCorpus:
    """``data[domain][split]`` = list of (source, target) pairs."""

    data: dict[str, dict[str, list[Pair]]] = field(default_factory=dict)
    n_empty: int = 0

    @property
    def domains(self) -> list[str]:
        return sorted(self.data)


# ---------------------------------------------------------------- reading

def _read_aligned(src: Path, tgt: Path) -> tuple[list[Pair], int]:
    pairs, empty = [], 0
    for _, s_text, t_text in iter_aligned(iter_raw_lines(src), iter_raw_lines(tgt), src, tgt):
        if not s_text.strip() or not t_text.strip():
            empty += 1
            continue
        pairs.append((s_text, t_text))
    return pairs, empty


def read_directory(corpus_dir: str | os.PathLike, src: str, tgt: str) -> MultiDomainCorpus:
    """Read ``DIR/<domain>.<split>.<lang>`` files (split: train, dev, test)."""
    d = Path(corpus_dir)
    if not d.is_dir():
        raise InputError(f"{d}: no such directory")
    found: dict[tuple[str, str], dict[str, Path]] = {}
    pat = re.compile(r"^(?P<domain>.+)\.(?P<split>train|dev|valid|test)\.(?P<lang>[^.]+)$")
    for p in sorted(d.iterdir()):
        m = pat.match(p.name)
        if m and m["lang"] in (src, tgt):
            split = "dev" if m["split"] == "valid" else m["split"]
            found.setdefault((m["domain"], split), {})[m["lang"]] = p
    if not found:
        raise InputError(f"{d}: no files named <domain>.<train|dev|test>.{src} / .{tgt}")
    corpus = MultiDomainCorpus()
    for (domain, split), langs in sorted(found.items()):
        for lang in (src, tgt):
            if lang not in langs:
                other = next(iter(langs.values()))
                raise InputError(f"{d / f'{domain}.{split}.{lang}'}: missing (its pair {other.name} exists)")
        pairs, empty = _read_aligned(langs[src], langs[tgt])
        corpus.data.setdefault(domain, {})[split] = pairs
        corpus.n_empty += empty
    for domain, splits in corpus.data.items():
        if "train" not in splits:
            raise InputError(f"{d}: domain '{domain}' has no train files")
    return corpus


def read_tsv(path: str | os.PathLike, columns: Sequence[int] = (0, 1, 2, 3)) -> MultiDomainCorpus:
    """One TSV with domain, split, source and target columns (a header row is skipped)."""
    dc, sc, src_c, tgt_c = columns
    corpus = MultiDomainCorpus()
    need = max(columns)
    for lineno, line in iter_raw_lines(path):
        cols = line.split("\t")
        if lineno == 1 and cols[min(sc, len(cols) - 1)].strip().lower() == "split":
            continue
        if len(cols) <= need:
            raise InputError(f"{path}:{lineno}: expected at least {need + 1} tab-separated columns, got {len(cols)}")
        split = cols[sc].strip().lower()
        split = "dev" if split == "valid" else split
        if split not in SPLITS:
            raise InputError(f"{path}:{lineno}: unknown split '{cols[sc]}' (train, dev or test)")
        s, t = cols[src_c], cols[tgt_c]
        if not s.strip() or not t.strip():
            corpus.n_empty += 1
            continue
        domain = check_name(cols[dc].strip(), "domain", f"{path}:{lineno}")
        corpus.data.setdefault(domain, {}).setdefault(split, []).append((s, t))
    if not corpus.data:
        raise InputError(f"{path}: no pairs")
    return corpus
