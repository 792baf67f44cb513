"""The pool as a stream of records, read again as often as a job needs, never held whole.

A :class:`PoolSource` names the pool's files and how to read them (format, column or
field, the other side of a parallel pool); :meth:`PoolSource.records` yields its
records in the same order and with the same ids as :func:`~domainsift.corpus.read_corpus`,
:func:`~domainsift.corpus.read_parallel` or :func:`~domainsift.corpus.read_columns_parallel`
would hold them, and :meth:`PoolSource.shards` cuts that stream into :class:`Corpus`
pieces of a fixed size. A pool already in memory (a Python user's ``Corpus``) is a
:class:`MemorySource` with the same interface, so the scoring engine has one path.

Ids leave the stream as two integer arrays per shard (the file's position in
``files`` and the 1-based line or row), never as one Python object per record of
the whole pool.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from .corpus import Corpus, InputError, check_one_format, expand_paths, iter_aligned, iter_texts


@dataclass
class PoolSource:
    """Pool files read as a stream (see the module docstring)."""

    files: list[str]
    target_files: list[str] = field(default_factory=list)
    fmt: str | None = None
    column: int = 0
    field: str = "text"
    field_target: str | None = None
    _n: int | None = None

    @classmethod
    def open(cls, paths: Sequence[str | os.PathLike], targets: Sequence[str | os.PathLike] | None = None,
             fmt: str | None = None, column: int = 0, field: str = "text",
             field_target: str | None = None) -> "PoolSource":
        files = expand_paths(paths)
        if not files:
            raise InputError("no input files given")
        tfiles = expand_paths(targets) if targets else []
        if targets and len(tfiles) != len(files):
            raise InputError(f"{len(files)} --pool files but {len(tfiles)} --pool-target files")
        check_one_format(files, fmt, "--pool")
        check_one_format(tfiles, fmt, "--pool-target")
        if field_target and tfiles:
            raise InputError("give the other side either as --field-target (columnar pools) or --pool-target")
        return cls([str(f) for f in files], [str(t) for t in tfiles], fmt, column, field, field_target)

    def reader(self) -> dict:
        """How the files are read (format, column, field, the other side's field): what a run records
        in ``pool.json``, so every later read of the pool's records reads them the same way."""
        out = {"format": self.fmt, "column": self.column, "field": self.field}
        if self.field_target:
            out["field_target"] = self.field_target
        return out

    # ------------------------------------------------------------------ the stream
    def file_records(self, k: int) -> Iterator[tuple[int, str, str | None]]:
        """``(line, text, other side or None)`` for the records of file ``k`` alone."""
        path = self.files[k]
        if self.field_target:
            from .columnar import iter_rows
            from .corpus import detect_format
            f = self.fmt or detect_format(path)
            if f not in ("parquet", "arrow"):
                raise InputError(f"{path}: --field-target needs a Parquet file or a save_to_disk folder "
                                 "(for text files, give the other side with --pool-target)")
            for row, s, t in iter_rows(path, f, self.field, self.field_target):
                if s and t:
                    yield row, s, t
            return
        if self.target_files:
            target = self.target_files[k]
            for line, s, t in iter_aligned(iter_texts(path, self.fmt, self.column, self.field),
                                           iter_texts(target, self.fmt, self.column, self.field), path, target):
                if s and t:
                    yield line, s, t
            return
        for lineno, text in iter_texts(path, self.fmt, self.column, self.field):
            if text:
                yield lineno, text, None

    def records(self) -> Iterator[tuple[int, int, str, str | None]]:
        """``(file index, line, text, other side or None)`` for every record, in pool order."""
        for k, path in enumerate(self.files):
            any_record = False
            for line, text, target in self.file_records(k):
                any_record = True
                yield k, line, text, target
            if not any_record:
                raise InputError(f"{path}: no non-empty {'pairs' if self.paired else 'lines'}")

    @property
    def paired(self) -> bool:
        return bool(self.target_files or self.field_target)

    def __len__(self) -> int:
        """The number of records (one pass over the files, counted once)."""
        if self._n is None:
            self._n = sum(1 for _ in self.records())
        return self._n

    def shards(self, size: int, done: frozenset | set = frozenset()
               ) -> Iterator[tuple[int, Corpus, np.ndarray, np.ndarray]]:
        """``(shard number, records as a Corpus, file indices, lines)`` for consecutive pieces of
        ``size`` records; the shards in ``done`` are read past, not built."""
        texts, targets, fidx, lines = [], [], [], []
        shard = 0
        for pos, (k, line, text, target) in enumerate(self.records()):
            shard = pos // size
            if shard in done:
                continue
            texts.append(text)
            targets.append(target)
            fidx.append(k)
            lines.append(line)
            if len(texts) == size:
                yield shard, self._corpus(texts, targets, fidx, lines), np.array(fidx, np.int32), np.array(lines, np.int64)
                texts, targets, fidx, lines = [], [], [], []
        if texts:
            yield shard, self._corpus(texts, targets, fidx, lines), np.array(fidx, np.int32), np.array(lines, np.int64)

    def _corpus(self, texts, targets, fidx, lines) -> Corpus:
        return Corpus(texts=list(texts), ids=[(self.files[k], n) for k, n in zip(fidx, lines)], files=self.files,
                      targets=list(targets) if self.paired else None, target_files=self.target_files)

    def take(self, positions: np.ndarray) -> Corpus:
        """The records at sorted ``positions`` (pool order), read in one pass."""
        positions = np.asarray(positions, dtype=np.int64)
        texts, targets, fidx, lines = [], [], [], []
        j = 0
        for pos, (k, line, text, target) in enumerate(self.records()):
            if j == len(positions):
                break
            if pos == positions[j]:
                texts.append(text)
                targets.append(target)
                fidx.append(k)
                lines.append(line)
                j += 1
        return self._corpus(texts, targets, fidx, lines)

    def corpus(self) -> Corpus:
        """The whole pool in memory (what read_corpus would give)."""
        return next(self.shards(max(1, len(self))))[1]


class MemorySource(PoolSource):
    """A pool already in memory, behind the same interface (its ids keep their own files)."""

    def __init__(self, pool: Corpus):
        self.pool = pool
        self.files = list(dict.fromkeys(list(pool.files) + [f for f, _ in pool.ids]))
        self.target_files = list(pool.target_files)
        self.fmt, self.column, self.field, self.field_target = None, 0, "text", None
        index = {f: k for k, f in enumerate(self.files)}
        self._fidx = np.fromiter((index[f] for f, _ in pool.ids), dtype=np.int32, count=len(pool))
        self._n = len(pool)

    @property
    def paired(self) -> bool:
        return self.pool.targets is not None

    def records(self):
        targets = self.pool.targets if self.pool.targets is not None else [None] * len(self.pool)
        for (f, line), k, text, target in zip(self.pool.ids, self._fidx, self.pool.texts, targets):
            yield int(k), int(line), text, target

    def shards(self, size: int, done: frozenset | set = frozenset()):
        for shard, start in enumerate(range(0, len(self.pool), size)):
            if shard in done:
                continue
            part = self.pool[start:start + size]
            lines = np.fromiter((n for _, n in part.ids), dtype=np.int64, count=len(part))
            yield shard, part, self._fidx[start:start + size], lines

    def take(self, positions: np.ndarray) -> Corpus:
        return self.pool[[int(p) for p in positions]]

    def corpus(self) -> Corpus:
        return self.pool
