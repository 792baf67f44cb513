"""A bitext as a translation model reads it: two aligned files, one sentence a line.

Bad input is one line naming the file and the line: unequal line counts, a line empty on one side only
(a pair with nothing to learn from, or a misalignment), a file with no pair at all. Lines empty on both
sides are left out (a blank line between paragraphs). :func:`check_disjoint` refuses a test set whose
pairs the training data holds (a model judged on sentences it was trained on)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from .._internal.errors import InputError


@dataclass(frozen=True)
class Bitext:
    """Aligned sentence pairs: ``src[i]`` translates to ``tgt[i]``; ``files`` the two paths (or names)."""

    src: tuple
    tgt: tuple
    files: tuple = ("", "")

    def __len__(self) -> int:
        return len(self.src)

    def take(self, idx) -> "Bitext":
        return Bitext(tuple(self.src[i] for i in idx), tuple(self.tgt[i] for i in idx), self.files)

    @classmethod
    def of(cls, src, tgt, files=("", "")) -> "Bitext":
        src, tgt = tuple(src), tuple(tgt)
        if len(src) != len(tgt):
            raise InputError(f"{files[0] or 'the source side'}: {len(src)} sentences, but {files[1] or 'the target side'} "
                             f"has {len(tgt)}; a bitext's two sides must align line by line")
        return cls(src, tgt, tuple(files))


def read_bitext(src_path: str | os.PathLike, tgt_path: str | os.PathLike, limit: int | None = None) -> Bitext:
    """The pairs of two aligned files (at most ``limit``), read by :func:`domainsift.io.corpus.read_parallel`
    (text, TSV, JSONL, .gz, .zst), checked as the module docstring says."""
    from ..io.corpus import read_parallel
    src_path, tgt_path = str(src_path), str(tgt_path)
    for p in (src_path, tgt_path):
        if not os.path.exists(p):
            raise InputError(f"{p}: no such file")
    if os.path.realpath(src_path) == os.path.realpath(tgt_path):
        raise InputError(f"{src_path}: given as both sides of the bitext")
    c = read_parallel(src_path, tgt_path, one_sided="error")
    src, tgt = c.texts, c.targets
    if limit is not None:
        src, tgt = src[:limit], tgt[:limit]
    return Bitext(tuple(s.strip() for s in src), tuple(t.strip() for t in tgt), (src_path, tgt_path))


def _key(s: str) -> str:
    from ..dedup import normalise
    return normalise(s)


def held(train: Bitext, other: Bitext) -> list[str | None]:
    """For each pair of ``other``: the side of it that ``train`` holds (``"src"``, else ``"tgt"``; compared
    as ``--exclude`` compares lines), or None."""
    seen_src = {_key(s) for s in train.src}
    seen_tgt = {_key(t) for t in train.tgt}
    out = []
    for s, t in zip(other.src, other.tgt):
        ks, kt = _key(s), _key(t)
        out.append("src" if ks and ks in seen_src else "tgt" if kt and kt in seen_tgt else None)
    return out


def check_disjoint(train: Bitext, test: Bitext, what: str = "the test set", train_what: str = "the training data",
                   hint: str = "select with --exclude") -> None:
    """Refuse ``test`` when the ``train`` pairs hold any of its sentences (either side, compared as
    ``--exclude`` compares lines): a model is never judged on what it learnt from (nor its epoch chosen on
    its test set). The error names the file and line of ``test`` and the file of ``train`` that hold it."""
    for n, side in enumerate(held(train, test), 1):
        if side is not None:
            k = 0 if side == "src" else 1
            name, source = test.files[k], train.files[k]
            raise InputError(f"{name or what}:{n}: repeats a sentence of {train_what} "
                             f"({source or 'the training bitext'}); keep {what} out of {train_what} ({hint})")


def check_lines_disjoint(lines, where: str, test: Bitext, side: int, what: str, hint: str) -> None:
    """Refuse ``lines`` (one side's sentences, read from ``where``) when any is a sentence of ``test``'s
    ``side`` (0: source, 1: target), compared as ``--exclude`` compares lines: one line naming both files."""
    seen = {_key(t): n for n, t in enumerate(test.src if side == 0 else test.tgt, 1) if _key(t)}
    for n, line in enumerate(lines, 1):
        k = _key(line)
        if k and k in seen:
            raise InputError(f"{where}:{n}: is line {seen[k]} of {what} ({test.files[side]}); {hint}")
