"""The pool as a stream of records, read again as often as a job needs, never held whole.

A :class:`PoolSource` names the pool's files and how to read them (format, column or
field, the other side of a parallel pool); :meth:`PoolSource.records` yields its
records in the same order and with the same ids as :func:`~domainsift.io.corpus.read_corpus`,
:func:`~domainsift.io.corpus.read_parallel` or :func:`~domainsift.io.corpus.read_columns_parallel`
would hold them, and :meth:`PoolSource.shards` cuts that stream into :class:`Corpus`
pieces of a fixed size. A pool already in memory (a Python user's ``Corpus``) is a
:class:`MemorySource` with the same interface, so the scoring engine has one path.

Ids leave the stream as two integer arrays per shard (the file's position in
``files`` and the 1-based line or row), never as one Python object per record of
the whole pool.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from .corpus import (Corpus, Digest, InputError, check_one_format, detect_format, expand_paths, file_digest,
                     iter_aligned, iter_text_blocks, iter_texts, strip_line_id)


class Reservoir:
    """A seeded uniform sample of ``k`` items of a stream of unknown length (Li's Algorithm L: a few
    random draws per replacement, none per item), returned in stream order. A stream of at most ``k``
    items is kept whole."""

    def __init__(self, k: int, seed):
        self.k = int(k)
        self.rng = np.random.default_rng(seed)
        self.items: list = []
        self.pos: list[int] = []
        self._w = float(np.exp(np.log(self.rng.random()) / self.k)) if self.k > 0 else 0.0
        self._next = self.k + self._skip()

    def _skip(self) -> int:
        return int(np.floor(np.log(self.rng.random()) / np.log1p(-self._w))) if 0 < self._w < 1 else 0

    def offer(self, position: int, item) -> None:
        if position < self.k:
            self.items.append(item)
            self.pos.append(position)
        elif position == self._next:
            slot = int(self.rng.integers(self.k))
            self.items[slot], self.pos[slot] = item, position
            self._w *= float(np.exp(np.log(self.rng.random()) / self.k))
            self._next += 1 + self._skip()

    def offer_block(self, start: int, n: int, item) -> None:
        """:meth:`offer` for the positions ``start .. start + n - 1`` of the stream (``item(i)``: the
        block's ``i``-th item), calling ``item`` only for the positions the sample takes."""
        end = start + n
        for pos in range(start, min(end, self.k)):
            self.offer(pos, item(pos - start))
        while self.k <= self._next < end:
            self.offer(self._next, item(self._next - start))

    def result(self) -> list:
        order = np.argsort(np.asarray(self.pos, dtype=np.int64), kind="stable")
        return [self.items[i] for i in order]


def sample_positions(n: int, k: int, seed) -> np.ndarray:
    """The positions, sorted, that a :class:`Reservoir` ``(k, seed)`` keeps of a stream of ``n`` items,
    drawn without the items: which positions a reservoir keeps depends only on its seed and the
    stream's length (a pool read by workers is sampled as one read here would sample it)."""
    box = Reservoir(k, seed)
    for pos in range(min(box.k, n)):
        box.offer(pos, pos)
    while box.k > 0 and box._next < n:
        box.offer(box._next, box._next)
    return np.sort(np.asarray(box.pos, dtype=np.int64))


ITEM_BLOCK = 8192  # records gathered into one Block where a file is read record by record


@dataclass
class Block:
    """Consecutive records of one file: ``k`` (the file's index), their line or row numbers, texts, other
    sides (None for a one-sided pool) and, when asked for, each record's bytes as read (None for a
    columnar row)."""

    k: int
    lines: np.ndarray
    texts: list
    targets: list | None
    raws: list | None
    target_raws: list | None

    @classmethod
    def of(cls, k: int, items: list, raw: bool) -> "Block":
        """From :meth:`PoolSource._file_items`' ``(line, text, other side, raw, other side's raw)``."""
        lines, texts, targets, raws, traws = (list(c) for c in zip(*items))
        paired = any(t is not None for t in targets)
        return cls(k, np.asarray(lines, dtype=np.int64), texts, targets if paired else None,
                   raws if raw else None, traws if raw and paired else None)

    def item(self, i: int) -> tuple:
        """``(file index, line, text, other side or None)`` of the block's ``i``-th record."""
        return (self.k, int(self.lines[i]), self.texts[i], self.targets[i] if self.targets is not None else None)


class KeptLines(Mapping):
    """The bytes of lines read once, as ``{(file, line): (the line's bytes, the other side's)}`` (either
    None where the reader keeps none, as for a columnar row): one buffer and one end offset a line per
    side, where a dict would hold five Python objects a line (a cascade keeps hundreds of thousands).
    Lines are added in pool order (files in order, lines rising within a file)."""

    _SHIFT = 40  # a line number takes the low 40 bits of a key, the file's index the rest

    def __init__(self, files: Sequence[str]):
        self.files = list(files)
        self._index = {f: k for k, f in enumerate(self.files)}
        self._keys = array("q")
        self._buf = (bytearray(), bytearray())
        self._ends = (array("q"), array("q"))  # each line's end in its side's buffer
        self._none = (array("b"), array("b"))  # 1: no bytes (None)
        self._sorted = None

    def add(self, k: int, line: int, raw, other) -> None:
        self._keys.append((k << self._SHIFT) | line)
        for side, value in enumerate((raw, other)):
            self._none[side].append(value is None)
            if value is not None:
                self._buf[side].extend(value)
            self._ends[side].append(len(self._buf[side]))
        self._sorted = None

    def _keys_np(self) -> np.ndarray:
        if self._sorted is None:
            keys = np.array(self._keys, dtype=np.int64)  # a copy: the array keeps growing
            if len(keys) > 1 and (np.diff(keys) <= 0).any():
                raise ValueError("KeptLines: lines added out of pool order")
            self._sorted = keys
        return self._sorted

    def _value(self, side: int, i: int):
        if self._none[side][i]:
            return None
        ends = self._ends[side]
        return bytes(self._buf[side][ends[i - 1] if i else 0:ends[i]])

    def __getitem__(self, key):
        f, line = key
        k = self._index.get(f)
        if k is None:
            raise KeyError(key)
        keys = self._keys_np()
        want = (k << self._SHIFT) | int(line)
        i = int(np.searchsorted(keys, want))
        if i == len(keys) or keys[i] != want:
            raise KeyError(key)
        return self._value(0, i), self._value(1, i)

    def __iter__(self):
        mask = (1 << self._SHIFT) - 1
        for key in self._keys:
            yield self.files[key >> self._SHIFT], key & mask

    def __len__(self) -> int:
        return len(self._keys)

    def renamed(self, names: dict) -> "KeptLines":
        """The same lines under other file names (``names``: old to new; a name not in it stays): no copy
        of the bytes."""
        out = KeptLines.__new__(KeptLines)
        out.__dict__.update(self.__dict__)
        out.files = [names.get(f, f) for f in self.files]
        out._index = {f: k for k, f in enumerate(out.files)}
        return out


@dataclass
class Scan:
    """What one pass over the pool found: its number of records, each file's size and SHA-256 (by the
    path as given), each file's size and modification time then (a later stat tells a changed file
    without reading it again), and the seeded samples asked for (:class:`Corpus`, pool order)."""

    n: int
    fingerprints: dict
    stats: dict
    samples: dict


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
    strip_id: bool = False  # each text without a leading line number or ID (corpus.strip_line_id)

    @classmethod
    def open(cls, paths: Sequence[str | os.PathLike], targets: Sequence[str | os.PathLike] | None = None,
             fmt: str | None = None, column: int = 0, field: str = "text",
             field_target: str | None = None, strip_id: bool = False) -> "PoolSource":
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
        return cls([str(f) for f in files], [str(t) for t in tfiles], fmt, column, field, field_target,
                   strip_id=bool(strip_id))

    def reader(self) -> dict:
        """How the files are read (format, column, field, the other side's field): what a run records
        in ``pool.json``, so every later read of the pool's records reads them the same way."""
        out = {"format": self.fmt, "column": self.column, "field": self.field}
        if self.field_target:
            out["field_target"] = self.field_target
        if self.strip_id:  # only when on: a run made before the option reads as it did
            out["strip_id"] = True
        return out

    def clean(self, text: str) -> str:
        """A record's text as this pool's reader gives it (``strip_id``: no leading line number or ID);
        never empties a record."""
        return strip_line_id(text) if self.strip_id else text

    # ------------------------------------------------------------------ the stream
    def file_records(self, k: int, raw: bool = False) -> Iterator[tuple]:
        """``(line, text, other side or None)`` for the records of file ``k`` alone; with ``raw`` also the
        line's bytes and the other side's (None for a columnar row)."""
        for line, text, target, data, other in self._file_items(k, raw=raw):
            yield (line, text, target, data, other) if raw else (line, text, target)

    def _file_items(self, k: int, taps: dict | None = None, raw: bool = False):
        """``(line, text, other side or None, raw, other side's raw)`` for the records of file ``k``:
        the raw bytes of each line (None for columnar rows, and without ``raw``); ``taps``: a
        :class:`Digest` per path, fed as the files are read."""
        path = self.files[k]
        taps = taps or {}
        if self.field_target:
            from .columnar import iter_rows
            from .corpus import detect_format
            f = self.fmt or detect_format(path)
            if f not in ("parquet", "arrow"):
                raise InputError(f"{path}: --field-target needs a Parquet file or a save_to_disk folder "
                                 "(for text files, give the other side with --pool-target)")
            if path in taps:  # a columnar file is hashed in a read of its own
                taps[path].finished = file_digest(path)
            for row, s, t in iter_rows(path, f, self.field, self.field_target):
                s, t = self.clean(s or ""), self.clean(t or "")
                if s and t:
                    yield row, s, t, None, None
            return
        src = iter_texts(path, self.fmt, self.column, self.field, tap=taps.get(path), raw=True)
        if self.target_files:
            target = self.target_files[k]
            tgt = iter_texts(target, self.fmt, self.column, self.field, tap=taps.get(target), raw=True)
            pairs = iter_aligned(((a, (b, c)) for a, b, c in src), ((a, (b, c)) for a, b, c in tgt), path, target)
            for line, (s, s_raw), (t, t_raw) in pairs:
                s, t = self.clean(s or ""), self.clean(t or "")
                if s and t:
                    yield line, s, t, (s_raw if raw else None), (t_raw if raw else None)
            return
        for lineno, text, data in src:
            text = self.clean(text or "")
            if text:
                yield lineno, text, None, (data if raw else None), None

    def _file_blocks(self, k: int, taps: dict | None = None, raw: bool = False) -> Iterator[Block]:
        """The records of file ``k`` as :class:`Block` s: a plain text file read a block of bytes at a time
        (:func:`~domainsift.io.corpus.iter_text_blocks`), any other file record by record
        (:meth:`_file_items`) gathered into blocks. Empty lines are left out, as ever."""
        path = self.files[k]
        if not self.target_files and not self.field_target and (self.fmt or detect_format(path)) == "text":
            for first, texts, raws in iter_text_blocks(path, (taps or {}).get(path), raw):
                if self.strip_id:  # a line that is an ID alone is then empty, and left out
                    texts = [strip_line_id(t) for t in texts]
                keep = [i for i, t in enumerate(texts) if t]
                if len(keep) < len(texts):
                    texts = [texts[i] for i in keep]
                    raws = [raws[i] for i in keep] if raws is not None else None
                    lines = first + np.asarray(keep, dtype=np.int64)
                else:
                    lines = np.arange(first, first + len(texts), dtype=np.int64)
                if texts:
                    yield Block(k, lines, texts, None, raws, None)
            return
        items = []
        for item in self._file_items(k, taps, raw):
            items.append(item)
            if len(items) == ITEM_BLOCK:
                yield Block.of(k, items, raw)
                items = []
        if items:
            yield Block.of(k, items, raw)

    def _blocks(self, taps: dict | None = None, raw: bool = False) -> Iterator[Block]:
        for k, path in enumerate(self.files):
            any_record = False
            for block in self._file_blocks(k, taps, raw):
                any_record = True
                yield block
            if not any_record:
                raise InputError(f"{path}: no non-empty {'pairs' if self.paired else 'lines'}")

    def _items(self, taps: dict | None = None, raw: bool = False):
        for k, path in enumerate(self.files):
            any_record = False
            for item in self._file_items(k, taps, raw):
                any_record = True
                yield (k, *item)
            if not any_record:
                raise InputError(f"{path}: no non-empty {'pairs' if self.paired else 'lines'}")

    def records(self) -> Iterator[tuple[int, int, str, str | None]]:
        """``(file index, line, text, other side or None)`` for every record, in pool order."""
        for b in self._blocks():
            targets = b.targets if b.targets is not None else [None] * len(b.texts)
            for line, text, target in zip(b.lines.tolist(), b.texts, targets):
                yield b.k, line, text, target

    def scan(self, samples: dict | None = None) -> Scan:
        """One pass over the pool: count its records, hash every file as it is read, and draw the seeded
        samples asked for (``{name: (size, seed)}``, each a :class:`Reservoir`)."""
        taps = {f: Digest() for f in list(self.files) + list(self.target_files)}
        boxes = {name: Reservoir(k, seed) for name, (k, seed) in (samples or {}).items()}
        n = 0
        for b in self._blocks(taps):
            for box in boxes.values():
                box.offer_block(n, len(b.texts), b.item)
            n += len(b.texts)
        self._n = n
        from .urls import stat
        stats = {f: stat(f) for f in taps}
        return Scan(n, {f: t.result() for f, t in taps.items()}, stats,
                    {name: self._sample_corpus(box.result())
                     for name, box in boxes.items()})

    @property
    def paired(self) -> bool:
        return bool(self.target_files or self.field_target)

    def __len__(self) -> int:
        """The number of records (one pass over the files, counted once)."""
        if self._n is None:
            self._n = sum(len(b.texts) for b in self._blocks())
        return self._n

    def shards(self, size: int, done: frozenset | set = frozenset()
               ) -> Iterator[tuple[int, Corpus, np.ndarray, np.ndarray]]:
        """``(shard number, records as a Corpus, file indices, lines)`` for consecutive pieces of
        ``size`` records; the shards in ``done`` are read past, not built."""
        texts, targets, fidx, lines = [], [], [], []
        pos = 0  # the pool position of the block's first record
        for b in self._blocks():
            at = 0
            while at < len(b.texts):
                shard = (pos + at) // size
                take = min(len(b.texts) - at, (shard + 1) * size - (pos + at))  # to the shard's end
                if shard not in done:
                    texts += b.texts[at:at + take]
                    targets += b.targets[at:at + take] if b.targets is not None else [None] * take
                    fidx.append(np.full(take, b.k, np.int32))
                    lines.append(b.lines[at:at + take])
                    if len(texts) == size:
                        yield shard, *self._shard(texts, targets, fidx, lines)
                        texts, targets, fidx, lines = [], [], [], []
                at += take
            pos += len(b.texts)
        if texts:
            yield (pos - 1) // size, *self._shard(texts, targets, fidx, lines)

    def _shard(self, texts, targets, fidx, lines) -> tuple[Corpus, np.ndarray, np.ndarray]:
        fidx, lines = np.concatenate(fidx), np.concatenate(lines)
        return self._corpus(texts, targets, fidx.tolist(), lines.tolist()), fidx, lines

    def _sample_corpus(self, items: list) -> Corpus:
        return self._corpus([t for _, _, t, _ in items], [g for _, _, _, g in items], [k for k, _, _, _ in items],
                            [n for _, n, _, _ in items])

    def _corpus(self, texts, targets, fidx, lines) -> Corpus:
        return Corpus(texts=list(texts), ids=[(self.files[k], n) for k, n in zip(fidx, lines)], files=self.files,
                      targets=list(targets) if self.paired else None, target_files=self.target_files,
                      strip_id=self.strip_id)

    def take(self, positions: np.ndarray, raw: bool = False):
        """The records at sorted ``positions`` (pool order), read in one pass; with ``raw`` also
        ``{(file, line): (the line's bytes, the other side's or None)}`` for them (None for columnar
        rows; a :class:`KeptLines`), so that the selection among them is written without reading the
        pool again."""
        positions = np.asarray(positions, dtype=np.int64)
        texts, targets, fidx, lines, kept = [], [], [], [], KeptLines(self.files)
        pos, j = 0, 0  # the block's first pool position; the next position wanted
        for b in self._blocks(raw=raw):
            if j == len(positions):
                break
            end = pos + len(b.texts)
            stop = int(np.searchsorted(positions, end))
            for i in (positions[j:stop] - pos).tolist():
                line = int(b.lines[i])
                texts.append(b.texts[i])
                targets.append(b.targets[i] if b.targets is not None else None)
                fidx.append(b.k)
                lines.append(line)
                if raw:
                    kept.add(b.k, line, b.raws[i] if b.raws is not None else None,
                             b.target_raws[i] if b.target_raws is not None else None)
            j, pos = stop, end
        corpus = self._corpus(texts, targets, fidx, lines)
        return (corpus, kept) if raw else corpus

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
        self.strip_id = pool.strip_id  # recorded in reader(); the texts are used as read (read_corpus(strip_id=))
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

    def scan(self, samples: dict | None = None) -> Scan:
        """As :meth:`PoolSource.scan`; the files the records name are hashed where they exist."""
        import os
        boxes = {name: Reservoir(k, seed) for name, (k, seed) in (samples or {}).items()}
        for pos in range(len(self.pool)):
            for box in boxes.values():
                box.offer(pos, pos)
        real = [f for f in list(self.files) + list(self.target_files) if os.path.isfile(f)]
        stats = {f: (st.st_size, st.st_mtime_ns) for f, st in ((f, os.stat(f)) for f in real)}
        return Scan(len(self.pool), {f: file_digest(f) for f in real}, stats,
                    {name: self._sample(box.result()) for name, box in boxes.items()})

    def _sample(self, positions: list) -> Corpus:
        return self.pool if len(positions) == len(self.pool) else self.pool[[int(p) for p in positions]]

    def take(self, positions: np.ndarray, raw: bool = False):
        corpus = self.pool[[int(p) for p in positions]]
        return (corpus, None) if raw else corpus

    def corpus(self) -> Corpus:
        return self.pool
