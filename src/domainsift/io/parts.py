"""The pool cut into parts that a worker opens by itself, so the process that plans a run reads no text.

A :class:`Part` is a whole file (compressed, columnar or parallel files: read from their start), or,
for a plain text, TSV or JSONL file larger than ``part_bytes``, a byte range of it. A line belongs to
the part its first byte lies in: a part that starts inside a line leaves that line to the part before.

1. **Scan** (:func:`scan_part`, one per part, on any worker): the part's records and lines are
   counted, its bytes hashed, and every :data:`MARK`-th record's byte offset noted.
2. **Plan** (:class:`Layout`, in the driver, from the scans alone): where each part's records start in
   the pool and its lines in its file, so ids stay ``(file, line)`` as a reader of the whole file
   numbers them; the pool's fingerprint from the parts' digests; and, for any sorted pool positions
   (a shard, a sample, the candidates, the selection), the :class:`Segment` s that read them, each
   starting at a noted mark (at most ``MARK - 1`` records are read past).
3. **Read** (:func:`read_segments`, on a worker): the records at those positions, with their ids and,
   when asked, their bytes.

A file cut into parts is fingerprinted by the SHA-256 of its parts' SHA-256s (``sha256_parts``, with
``part_bytes``); a file read whole keeps its own SHA-256, as a local run records it. Both are checked
again by :func:`fingerprint_matches`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from .._internal.errors import InputError
from . import urls
from .corpus import COMPRESSED, Digest, detect_format, extract_text, open_file

PART_BYTES = 64 << 20  # a part of a large text file; a 1M-line pool of ~100-byte lines is ~2 parts
MARK = 1024  # a scan notes where every MARK-th record of a part starts


@dataclass(frozen=True)
class Part:
    """File ``file`` (its index in the pool's files), bytes ``[start, end)``; ``end`` None: the whole
    file, read from its start."""

    file: int
    start: int = 0
    end: int | None = None


@dataclass
class PartScan:
    """What the scan of one part found: its records, lines (split parts: the lines whose first byte is
    in it), its bytes' digests by path, the marks ``(record in the part, byte offset, line in the
    part)``; or the first bad line's error (with the part's own line number; the driver names the
    file's)."""

    records: int = 0
    lines: int = 0
    digests: dict = field(default_factory=dict)
    marks: list = field(default_factory=list)
    error: tuple | None = None  # (line in the part, message)


@dataclass(frozen=True)
class Segment:
    """Read from ``part``: from byte ``seek`` (a line start; None: the part's file from its start),
    whose line is number ``line + 1`` of its file and record is pool position ``first``; keep
    ``positions`` (sorted pool positions, all in this part)."""

    part: Part
    seek: int | None
    line: int
    first: int
    positions: np.ndarray


def splittable(source, k: int) -> bool:
    """Whether file ``k`` of ``source`` can be read from any line start: plain (uncompressed) text, TSV
    or JSONL, not one side of a parallel pool."""
    path = source.files[k]
    if source.paired or path.lower().endswith(COMPRESSED):
        return False
    return (source.fmt or detect_format(path)) in ("text", "tsv", "jsonl")


def cut(source, part_bytes: int = PART_BYTES) -> list[Part]:
    """The parts of ``source``'s files (their sizes from the file system: no byte is read)."""
    if part_bytes < 1:
        raise ValueError(f"part_bytes must be at least 1, got {part_bytes}")
    parts = []
    for k, path in enumerate(source.files):
        try:
            size = urls.size(path)
        except FileNotFoundError:
            raise InputError(f"{path}: no such file") from None
        if size > part_bytes and splittable(source, k):
            parts += [Part(k, s, min(s + part_bytes, size)) for s in range(0, size, part_bytes)]
        else:
            parts.append(Part(k))
    return parts


def _range_lines(path: str, start: int, end: int, tap: Digest | None = None):
    """``(byte offset, line number in the range, bytes)`` of every line whose first byte lies in
    ``[start, end)``; ``tap`` is fed exactly the bytes ``[start, end)``."""
    with open_file(path) as fh:
        off = start
        if start > 0:
            fh.seek(start - 1)
            if fh.read(1) != b"\n":  # the rest of a line that began in the part before
                data = fh.readline()
                if tap is not None:
                    tap.update(data[:end - off])
                off += len(data)
        n = 0
        while off < end:
            data = fh.readline()
            if not data:
                break
            if tap is not None:
                tap.update(data[:end - off])
            n += 1
            yield off, n, data
            off += len(data)


def scan_part(source, part: Part) -> PartScan:
    """Count, hash and mark one part (see the module docstring); a bad line is returned, not raised."""
    out = PartScan()
    if part.end is None:  # the whole file (and its other side), hashed as it is read
        taps = {source.files[part.file]: Digest()}
        if source.target_files:
            taps[source.target_files[part.file]] = Digest()
        try:
            for _ in source._file_items(part.file, taps):
                out.records += 1
        except InputError as exc:
            out.error = (None, str(exc))
            return out
        out.digests = {p: t.result() for p, t in taps.items()}
        return out
    path = source.files[part.file]
    fmt = source.fmt or detect_format(path)
    tap = Digest()
    try:
        for off, n, data in _range_lines(path, part.start, part.end, tap):
            out.lines = n
            if source.clean(extract_text(path, n, data, fmt, source.column, source.field) or ""):
                if out.records % MARK == 0:
                    out.marks.append((out.records, off, n))
                out.records += 1
    except InputError as exc:
        out.error = (out.lines, str(exc))  # the line being read
        return out
    out.digests = {path: tap.result()}
    return out


def parts_fingerprint(size: int, part_bytes: int, digests: list[str]) -> dict:
    """A file cut into parts: its size, the part size, and the SHA-256 of its parts' SHA-256s."""
    return {"size": int(size), "part_bytes": int(part_bytes),
            "sha256_parts": hashlib.sha256("\n".join(digests).encode()).hexdigest()}


def file_parts_fingerprint(path: str, part_bytes: int) -> dict:
    """:func:`parts_fingerprint` of a file, computed in one read of it (to check a recorded one)."""
    digests, size = [], 0
    with open_file(path) as fh:
        while True:
            h, got = hashlib.sha256(), 0
            while got < part_bytes:
                block = fh.read(min(1 << 20, part_bytes - got))
                if not block:
                    break
                h.update(block)
                got += len(block)
            if not got:
                break
            digests.append(h.hexdigest())
            size += got
    return parts_fingerprint(size, part_bytes, digests)


def fingerprint_matches(path: str, fp: dict) -> bool:
    """Whether ``path`` still holds the bytes a recorded fingerprint (either kind) describes."""
    from .corpus import file_digest
    if urls.size(path) != fp.get("size"):
        return False
    if "sha256_parts" in fp:
        return file_parts_fingerprint(path, int(fp["part_bytes"]))["sha256_parts"] == fp["sha256_parts"]
    return file_digest(path)["sha256"] == fp.get("sha256")


class Layout:
    """The pool as its parts' scans describe it (built in the driver; see the module docstring).
    A bad line or a file without records is raised here, as a reader of the whole pool would."""

    def __init__(self, source, parts: list[Part], scans: list[PartScan], part_bytes: int):
        self.source, self.parts, self.scans = source, parts, scans
        records = np.array([s.records for s in scans], dtype=np.int64)
        self.first = np.concatenate([[0], np.cumsum(records)])  # pool position of each part's first record
        self.line0 = np.zeros(len(parts), dtype=np.int64)  # lines of its file before each part
        seen: dict = {}
        for i, (p, s) in enumerate(zip(parts, scans)):
            self.line0[i] = seen.get(p.file, 0)
            seen[p.file] = seen.get(p.file, 0) + s.lines
        self._check(seen)
        self.fingerprints = self._fingerprints(part_bytes)

    def __len__(self) -> int:
        return int(self.first[-1])

    def _check(self, lines: dict) -> None:
        """The first problem in pool order: a bad line, or a file without records."""
        last = {p.file: i for i, p in enumerate(self.parts)}
        records: dict = {}
        for i, (p, s) in enumerate(zip(self.parts, self.scans)):
            path = self.source.files[p.file]
            if s.error is not None:
                rel, msg = s.error
                if rel is not None:  # a split part names its own line: the file's is the lines before it plus it
                    msg = msg.replace(f"{path}:{rel}:", f"{path}:{int(self.line0[i]) + rel}:", 1)
                raise InputError(msg)
            records[p.file] = records.get(p.file, 0) + s.records
            if last[p.file] == i and records[p.file] == 0:
                if p.end is not None and lines.get(p.file, 0) == 0:
                    raise InputError(f"{path}: empty file")
                raise InputError(f"{path}: no non-empty {'pairs' if self.source.paired else 'lines'}")

    def _fingerprints(self, part_bytes: int) -> dict:
        out, split = {}, {}
        for p, s in zip(self.parts, self.scans):
            if p.end is None:
                out.update(s.digests)
            else:
                split.setdefault(p.file, []).append((p, s))
        for k, pieces in split.items():
            path = self.source.files[k]
            out[path] = parts_fingerprint(sum(s.digests[path]["size"] for _, s in pieces), part_bytes,
                                          [s.digests[path]["sha256"] for _, s in pieces])
        return out

    def segments(self, positions) -> list[Segment]:
        """The segments that read the sorted pool ``positions``, one per part that holds any."""
        positions = np.asarray(positions, dtype=np.int64)
        if len(positions) and (positions[0] < 0 or positions[-1] >= len(self)):
            raise IndexError(f"pool positions out of range [0, {len(self)})")
        out = []
        which = np.searchsorted(self.first, positions, side="right") - 1
        for i in np.unique(which):
            mine = positions[which == i]
            part, scan = self.parts[i], self.scans[i]
            if part.end is None:
                out.append(Segment(part, None, 0, int(self.first[i]), mine))
                continue
            j = min((int(mine[0] - self.first[i])) // MARK, len(scan.marks) - 1)
            rec, off, line = scan.marks[j]
            out.append(Segment(part, int(off), int(self.line0[i]) + line - 1, int(self.first[i]) + rec, mine))
        return out


def read_segments(source, segments: list[Segment], raw: bool = False):
    """The records at the segments' positions, in order: ``(texts, targets, file indices, lines,
    bytes)``, ``bytes`` a list of ``(the line's bytes, the other side's)`` (with ``raw``) or None."""
    texts, targets, fidx, lines, kept = [], [], [], [], ([] if raw else None)
    for seg in segments:
        want = seg.positions
        j, pos = 0, seg.first
        if seg.seek is None:
            items = source._file_items(seg.part.file, raw=raw)
        else:  # from a line start: _range_lines skips nothing there
            path = source.files[seg.part.file]
            fmt = source.fmt or detect_format(path)
            items = ((seg.line + n, text, None, data, None)
                     for _, n, data in _range_lines(path, seg.seek, seg.part.end)
                     if (text := source.clean(extract_text(path, seg.line + n, data, fmt, source.column,
                                                           source.field) or "")))
        for line, text, target, s_raw, t_raw in items:
            if pos == want[j]:
                texts.append(text)
                targets.append(target)
                fidx.append(seg.part.file)
                lines.append(line)
                if raw:
                    kept.append((s_raw, t_raw))
                j += 1
                if j == len(want):
                    break
            pos += 1
        if j != len(want):
            raise InputError(f"{source.files[seg.part.file]}: holds fewer records than when it was scanned; "
                             "the file changed during the run")
    return texts, targets, fidx, lines, kept
