"""Corpus reading and writing.

Every kept line carries its id, ``(file, line number)`` with 1-based line
numbers, so that duplicate texts in different places are never confused.
Empty lines are skipped and counted, never embedded.

Formats (chosen from the file name, ``.gz`` allowed on any of them, or forced):

- ``text``: one sentence per line;
- ``tsv``: tab-separated, one chosen column (0-based index);
- ``jsonl``: one JSON object per line, one chosen field.

Bad input raises :class:`~domainsift._internal.errors.InputError` with one line naming the
file and line: invalid UTF-8, a NUL byte (UTF-16 without its mark, or a binary file), a
UTF-16 file, a missing column or field, invalid JSON, an empty file, or aligned files of
different lengths. A UTF-8 byte-order mark at the start of a file is not text.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from .._internal.atomic import atomic_open
from .._internal.errors import InputError, missing_extra

FORMATS = ("text", "tsv", "jsonl", "parquet", "arrow")
COMPRESSED = (".gz", ".zst", ".zstd")

#: a leading line number or ID, as ``--strip-id`` removes it: ``123: ``, ``123 | ``, ``[123] `` (a number alone,
#: "2. For the years ...", is text: 35% of JRC-Acquis's lines start with one; domainsift.surface warns of these)
LINE_ID = re.compile(r"^\s*(?:\[\d+\]|\d+ *[:|])\s*")


def strip_line_id(text: str) -> str:
    """``text`` without a leading line number or ID (:data:`LINE_ID`). A line that is an ID and nothing else
    becomes empty, and every reader of the pool leaves it out as it leaves out an empty line (an ID alone
    holds no text of any domain; kept, such lines took 21 of a top 40)."""
    m = LINE_ID.match(text)
    return text[m.end():] if m else text


def _strip_compression(name: str) -> tuple[str, str]:
    for ext in COMPRESSED:
        if name.endswith(ext):
            return name[:-len(ext)], ext
    return name, ""


def expand_paths(paths: Sequence[str | os.PathLike]) -> list[str]:
    """Files from what the user named: a file as it is; a glob pattern (``data/*.parquet``) and a
    directory as their files, sorted; a ``datasets.save_to_disk`` folder as its Arrow files."""
    import glob
    from .columnar import hf_disk_files, is_hf_disk
    out: list[str] = []
    from .urls import expand as expand_url, is_url, local
    for p in paths:
        p = local(p)
        if is_url(p):
            if detect_format(p) in ("parquet", "arrow"):
                raise InputError(f"{p}: Parquet and Arrow pools are read from local paths; copy the file here "
                                 "or give a text, TSV or JSONL file by URL")
            out += expand_url(p)
        elif any(ch in p for ch in "*?[") and not os.path.exists(p):
            hits = sorted(glob.glob(p))
            if not hits:
                raise InputError(f"{p}: no file matches this pattern")
            out += expand_paths(hits)
        elif is_hf_disk(p):
            out += hf_disk_files(p)
        elif os.path.isdir(p):
            from ..rundir.layout import SIGNATURE
            if os.path.isfile(os.path.join(p, SIGNATURE)):  # what every domainsift output folder holds
                raise InputError(f"{p}: a domainsift output folder, not text to read; leave it out (a glob such "
                                 "as data/*.txt names the data alone)")
            files = sorted(str(f) for f in Path(p).iterdir() if f.is_file() and not f.name.startswith("."))
            if not files:
                raise InputError(f"{p}: an empty directory")
            out += files
        else:
            out.append(p)
    return out


@dataclass
class Corpus:
    """Sentences with their ids.

    Attributes
    ----------
    texts : list of str, (n,)
    ids : list of (file, line), (n,)  — 1-based line numbers
    files : the input files, in order
    n_empty : number of empty lines skipped
    targets : for a parallel corpus, the other side's texts, aligned with ``texts``
    strip_id : the texts were read without a leading line number or ID (:func:`strip_line_id`)
    """

    texts: list[str]
    ids: list[tuple[str, int]]
    files: list[str]
    n_empty: int = 0
    n_duplicates_dropped: int = 0
    targets: list[str] | None = None
    target_files: list[str] = field(default_factory=list)
    strip_id: bool = False

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def labels(self) -> list[str]:
        """The file each line came from (a gold domain when each file is one domain)."""
        return [f for f, _ in self.ids]

    def __getitem__(self, index) -> "Corpus":
        """The records at ``index`` (a slice or a sequence of positions), as a corpus."""
        if isinstance(index, int):
            raise TypeError("index a Corpus with a slice or a sequence of positions; its texts are .texts")
        if isinstance(index, slice):
            pick = lambda xs: xs[index]  # noqa: E731
        else:
            pos = [int(i) for i in index]
            pick = lambda xs: [xs[i] for i in pos]  # noqa: E731
        return Corpus(texts=pick(self.texts), ids=pick(self.ids), files=self.files,
                      targets=pick(self.targets) if self.targets is not None else None,
                      target_files=self.target_files, strip_id=self.strip_id)


def as_corpus(records) -> Corpus:
    """Records for a selector: a :class:`Corpus` as it is, or a plain sequence of strings
    (ids ``("<memory>", 1..n)``) for Python users who hold texts in memory."""
    if isinstance(records, Corpus):
        return records
    if isinstance(records, str):
        raise TypeError("expected a Corpus or a sequence of strings, got one string")
    texts = list(records)
    return Corpus(texts=texts, ids=[("<memory>", i) for i in range(1, len(texts) + 1)], files=["<memory>"])


def concat(parts: Sequence[Corpus]) -> Corpus:
    """One corpus from several, in order (ids keep their own files)."""
    targets = [t for c in parts for t in (c.targets or [])] if all(c.targets is not None for c in parts) else None
    return Corpus(texts=[t for c in parts for t in c.texts], ids=[i for c in parts for i in c.ids],
                  files=[f for c in parts for f in c.files], n_empty=sum(c.n_empty for c in parts),
                  n_duplicates_dropped=sum(c.n_duplicates_dropped for c in parts), targets=targets,
                  target_files=[f for c in parts for f in c.target_files],
                  strip_id=bool(parts) and all(c.strip_id for c in parts))


def detect_format(path: str | os.PathLike) -> str:
    name, _ = _strip_compression(str(path).lower())
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(".arrow"):
        return "arrow"
    if name.endswith(".tsv"):
        return "tsv"
    if name.endswith(".jsonl") or name.endswith(".json"):
        return "jsonl"
    return "text"


def check_one_format(files: Sequence[str | os.PathLike], fmt: str | None = None, what: str = "the pool") -> None:
    """A pool is written back in its own format, so its files must share one: a directory or glob
    that mixes text and Parquet (or JSONL) files is refused up front, naming two that differ."""
    if fmt is not None or not files:
        return
    first = str(files[0])
    for f in files[1:]:
        if detect_format(f) != detect_format(first):
            raise InputError(f"{f}: {what} mixes formats ({first} is {detect_format(first)}, {f} is "
                             f"{detect_format(f)}); give files of one format, or force one with --format")


def file_suffix(path: str | os.PathLike) -> str:
    """The suffix an output in the same format should carry (``.en``, ``.jsonl.gz``)."""
    name, comp = _strip_compression(Path(path).name)
    suffix = Path(name).suffix or ".txt"
    if suffix == ".arrow":  # a save_to_disk folder's rows come back as Parquet
        return ".parquet"
    return suffix + comp


def open_file(path: str | os.PathLike):
    """The one place a data file's bytes are opened (binary, unbuffered reads by the callers' own
    buffers); tests count the passes over a pool by wrapping it. A URL is opened through fsspec
    (:mod:`domainsift.io.urls`)."""
    from .urls import is_url, open_url
    if is_url(path):
        return open_url(path)
    check_regular(path)
    return open(path, "rb")


def check_regular(path: str | os.PathLike) -> None:
    """A data file must be a regular file (a link to one is fine): a FIFO would wait for a writer forever,
    a device (``/dev/zero``, ``/dev/urandom``) read forever, and a run reads its pool more than once."""
    import stat as st
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # opening it says what is wrong (no such file, no permission) in the caller's words
    if not st.S_ISREG(mode):
        kind = ("a named pipe (FIFO)" if st.S_ISFIFO(mode) else "a device" if st.S_ISCHR(mode) or st.S_ISBLK(mode)
                else "a folder" if st.S_ISDIR(mode) else "a socket" if st.S_ISSOCK(mode) else "not a regular file")
        raise InputError(f"{path}: {kind}, not a regular file; give a file (a run reads its inputs more than "
                         "once, and a pipe or a device never ends)")


class Digest:
    """Size and SHA-256 of the bytes read through it: a file hashed in the pass that reads its records
    (:func:`iter_texts` with ``tap=``), so a pool is read once to be counted and fingerprinted."""

    def __init__(self):
        self.sha = hashlib.sha256()
        self.size = 0
        self.finished: dict | None = None  # a file hashed in a read of its own (columnar)

    def update(self, block) -> None:
        self.sha.update(block)
        self.size += len(block)

    def result(self) -> dict:
        return self.finished or {"size": self.size, "sha256": self.sha.hexdigest()}


class _Tapped(io.RawIOBase):
    """A raw file whose every byte read feeds a :class:`Digest`; closing it reads what was left
    unread, so the digest covers the whole file."""

    def __init__(self, fh, tap: Digest):
        self.fh, self.tap = fh, tap

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        n = self.fh.readinto(buf)
        if n:
            self.tap.update(memoryview(buf)[:n])
        return n

    def close(self) -> None:
        if not self.closed:
            for block in iter(lambda: self.fh.read(1 << 20), b""):
                self.tap.update(block)
            self.fh.close()
        super().close()


class _GzipReader(gzip.GzipFile):
    """gzip over a file object that it closes with itself."""

    def __init__(self, under):
        super().__init__(fileobj=under, mode="rb")
        self._under = under

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._under.close()


def file_digest(path: str | os.PathLike) -> dict:
    """Size and SHA-256 of a file's bytes (one read of it)."""
    tap = Digest()
    with open_file(path) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            tap.update(block)
    return tap.result()


def _open_bytes(path: str | os.PathLike, tap: Digest | None = None):
    path = str(path)
    from .urls import is_url
    if is_url(path):
        pass  # open_file names a missing URL
    elif not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    elif os.path.isdir(path):
        raise InputError(f"{path}: is a directory, expected a file")
    raw = open_file(path)
    if tap is not None:
        raw = _Tapped(raw, tap)
    if path.endswith(".gz"):
        return _GzipReader(io.BufferedReader(raw, 1 << 16) if tap is not None else raw)
    if path.endswith((".zst", ".zstd")):
        try:
            import zstandard
        except ImportError:
            raw.close()
            raise missing_extra("zstandard", "io") from None
        return io.BufferedReader(_ZstdFrames(raw, zstandard), buffer_size=1 << 16)
    return io.BufferedReader(raw, 1 << 16) if tap is not None else raw


class _ZstdFrames(io.RawIOBase):
    """A raw reader of a Zstandard file, frame after frame, that fails on a frame cut short.

    ``zstandard.open`` returns what it decoded and stops silently at a truncated frame (a file cut
    at 90% read as 72% of its lines); this reader raises :class:`EOFError` there, as ``gzip`` does."""

    def __init__(self, fh, zstandard):
        self.zstd = zstandard
        self.fh = fh
        self.dctx = zstandard.ZstdDecompressor()
        self.dobj = None      # the frame being decoded; None between frames
        self.pending = b""    # decoded bytes, handed out from ``self.at``
        self.at = 0
        self.input = b""      # compressed bytes not yet fed

    def readable(self) -> bool:
        return True

    def _fill(self) -> bool:
        while self.at == len(self.pending):
            if not self.input:
                self.input = self.fh.read(1 << 16)
                if not self.input:
                    if self.dobj is not None:
                        raise EOFError("compressed file ended before the end-of-stream marker was reached")
                    return False
            if self.dobj is None:
                self.dobj = self.dctx.decompressobj()
            try:
                self.pending, self.at = self.dobj.decompress(self.input), 0
            except self.zstd.ZstdError as exc:
                raise ValueError(f"invalid Zstandard data: {exc}") from None
            self.input = b""
            if self.dobj.eof:  # the frame ended; what follows it starts the next one
                self.input, self.dobj = self.dobj.unused_data, None
        return True

    def readinto(self, buf) -> int:
        if not self._fill():
            return 0
        n = min(len(buf), len(self.pending) - self.at)
        buf[:n] = self.pending[self.at:self.at + n]
        self.at += n
        return n

    def close(self) -> None:
        self.fh.close()
        super().close()


def _raw_lines(path: str | os.PathLike) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw bytes with their line ending)``; a read error names the file."""
    with _open_bytes(path) as fh:
        lines = enumerate(fh, start=1)
        while True:
            try:
                item = next(lines)
            except StopIteration:
                return
            except (OSError, EOFError, ValueError) as exc:  # corrupt gzip or zstd, I/O error
                raise InputError(f"{path}: cannot read: {exc}") from None
            yield item


BOM = "\ufeff"  # a byte-order mark: at the start of a file (line 1) it marks the encoding and is no text


def decode_line(path, lineno: int, data: bytes) -> str:
    """A line's bytes as text, without its line ending (strict UTF-8; an error names the file and line),
    and, on line 1, without a byte-order mark (UTF-8 as Windows tools save it: a JSONL file parses)."""
    try:
        line = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if lineno == 1 and data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise InputError(f"{path}: UTF-16 (it starts with UTF-16's byte-order mark), not UTF-8; convert it, "
                             f"e.g. iconv -f UTF-16 -t UTF-8") from None
        raise InputError(
            f"{path}:{lineno}: invalid UTF-8 (byte {exc.start}: {data[exc.start:exc.start + 1]!r})") from None
    if "\x00" in line:  # valid UTF-8, but no text has it: UTF-16 without its mark, or a binary file
        raise InputError(f"{path}:{lineno}: a NUL byte (byte {data.index(0)}): not text (UTF-16, or a "
                         f"binary file?)")
    if lineno == 1 and line.startswith(BOM):
        line = line[1:]
    return line.rstrip("\r\n")


def extract_text(path, lineno: int, data: bytes, fmt: str, column: int = 0, field_name: str = "text") -> str:
    """A line's record text, as :func:`iter_texts` gives it ('' for a line that holds none)."""
    return _extract(path, lineno, decode_line(path, lineno, data), fmt, column, field_name).strip()


def iter_raw_lines(path: str | os.PathLike, tap: Digest | None = None, raw: bool = False):
    """Yield ``(line_number, decoded line without newline)``, or with ``raw`` ``(line_number, line,
    its bytes as read)``; strict UTF-8. ``tap``: a :class:`Digest` of the file's bytes."""
    with _open_bytes(path, tap) as fh:
        try:
            for lineno, data in enumerate(fh, start=1):
                line = decode_line(path, lineno, data)
                yield (lineno, line, data) if raw else (lineno, line)
        except (OSError, EOFError, ValueError) as exc:  # corrupt gzip or zstd
            raise InputError(f"{path}: cannot read: {exc}") from None


def _extract(path, lineno: int, line: str, fmt: str, column: int, field_name: str) -> str:
    if fmt == "text":
        return line
    if fmt == "tsv":
        cols = line.split("\t")
        if column >= len(cols):
            raise InputError(f"{path}:{lineno}: no column {column} (line has {len(cols)} columns)")
        return cols[column]
    if fmt == "jsonl":
        if not line.strip():
            return ""
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if lineno == 1 and line.strip() in ("[", "{"):  # a JSON document pretty-printed over many lines
                raise InputError(f"{path}:1: a JSON document over several lines, not JSON Lines; "
                                 f"{_jsonl_hint(path)}") from None
            raise InputError(f"{path}:{lineno}: invalid JSON: {exc.msg}") from None
        if isinstance(obj, list):
            raise InputError(f"{path}:{lineno}: a JSON array, not an object; {_jsonl_hint(path)}")
        if not isinstance(obj, dict) or field_name not in obj:
            raise InputError(f"{path}:{lineno}: no field '{field_name}'")
        value = obj[field_name]
        if not isinstance(value, str):
            raise InputError(f"{path}:{lineno}: field '{field_name}' is not a string")
        return value
    raise InputError(f"unknown format '{fmt}' (choose from {', '.join(FORMATS)})")


def _jsonl_hint(path) -> str:
    return f"JSON Lines holds one object per line (e.g. jq -c '.[]' {path} > lines.jsonl)"


def iter_texts(path, fmt: str | None = None, column: int = 0, field: str = "text",
               tap: Digest | None = None, raw: bool = False):
    """Yield ``(line_number, text)`` for every line, empty ones included (as ''); with ``raw``,
    ``(line_number, text, the line's bytes)`` (None for a columnar row). ``tap``: a :class:`Digest`
    fed with the file's bytes as they are read (a columnar file is hashed in a read of its own)."""
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise InputError(f"unknown format '{fmt}' (choose from {', '.join(FORMATS)})")
    if fmt in ("parquet", "arrow"):
        from .columnar import iter_rows
        if not os.path.isfile(str(path)):
            raise InputError(f"{path}: no such file")
        if tap is not None:
            tap.finished = file_digest(path)
        any_row = False
        for row, text in iter_rows(str(path), fmt, field):
            any_row = True
            yield (row, text, None) if raw else (row, text)
        if not any_row:
            raise InputError(f"{path}: empty file")
        return
    any_line = False
    for item in iter_raw_lines(path, tap, raw):
        any_line = True
        text = _extract(path, item[0], item[1], fmt, column, field).strip()
        yield (item[0], text, item[2]) if raw else (item[0], text)
    if not any_line:
        raise InputError(f"{path}: empty file")


TEXT_BLOCK = 1 << 22  # bytes read at a time by iter_text_blocks


def iter_text_blocks(path, tap: Digest | None = None, raw: bool = False, size: int | None = None):
    """A plain text file's lines in blocks: ``(first line number, texts, raw lines or None)`` with the
    texts :func:`iter_texts` gives for ``fmt="text"`` (each line stripped; an empty one as '') and, with
    ``raw``, each line's bytes as read (its line ending included). The file is read ``size`` bytes at a
    time and each block decoded at once, so no Python code runs per line but a strip; the errors are
    :func:`iter_texts`' (invalid UTF-8 names the file, the line and the byte)."""
    size = size or TEXT_BLOCK
    lineno, rest = 1, b""
    with _open_bytes(path, tap) as fh:
        while True:
            try:
                data = fh.read(size)
            except (OSError, EOFError, ValueError) as exc:  # corrupt gzip or zstd, I/O error
                raise InputError(f"{path}: cannot read: {exc}") from None
            if not data:
                break
            if rest:
                data = rest + data
            cut = data.rfind(b"\n") + 1
            if cut == 0:  # no line ends in it yet
                rest = data
                continue
            block, rest = (data, b"") if cut == len(data) else (data[:cut], data[cut:])
            texts, raws = _text_block(path, lineno, block, raw)
            yield lineno, texts, raws
            lineno += len(texts)
    if rest:  # the last line, with no line ending
        yield lineno, *_text_block(path, lineno, rest, raw)
    elif lineno == 1:
        raise InputError(f"{path}: empty file")


def _text_block(path, lineno: int, block: bytes, raw: bool) -> tuple[list[str], list[bytes] | None]:
    """The lines of ``block`` (whole lines; the last one's ending may be missing at the end of a file)."""
    try:
        if b"\x00" in block:  # decode_line names the line
            raise UnicodeDecodeError("utf-8", block, 0, 1, "NUL")
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        for i, data in enumerate(block.split(b"\n")):  # the line that fails, for the error
            decode_line(path, lineno + i, data)
        raise
    if lineno == 1 and text.startswith(BOM):  # as decode_line: the file's mark, not line 1's text
        text = text[1:]
    pieces = text.split("\n")
    ended = block.endswith(b"\n")
    if ended:
        pieces.pop()
    texts = [p.strip() for p in pieces]
    if not raw:
        return texts, None
    raws = block.split(b"\n")
    if ended:
        raws.pop()
        return texts, [r + b"\n" for r in raws]
    return texts, [r + b"\n" for r in raws[:-1]] + [raws[-1]]


def read_corpus(paths: str | os.PathLike | Sequence[str | os.PathLike], fmt: str | None = None,
                column: int = 0, field: str = "text", max_per_file: int | None = None,
                distinct: bool = False, strip_id: bool = False) -> Corpus:
    """Read one or several files into a :class:`Corpus`.

    ``max_per_file`` keeps the first N kept lines of each file; with ``distinct``
    a text already kept from the same file is skipped (the first N *distinct*
    lines). ``strip_id``: each text without a leading line number or ID
    (:func:`strip_line_id`). A file with no non-empty line is an error.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not paths:
        raise InputError("no input files given")
    paths = expand_paths(paths)
    texts: list[str] = []
    ids: list[tuple[str, int]] = []
    n_empty = n_dup = 0
    for path in paths:
        path = str(path)
        seen: set[str] = set()
        kept = 0
        for lineno, text in iter_texts(path, fmt, column, field):
            if max_per_file is not None and kept >= max_per_file:
                break
            if not text:
                n_empty += 1
                continue
            if strip_id:
                text = strip_line_id(text)
                if not text:  # an ID and nothing else
                    n_empty += 1
                    continue
            if distinct:
                if text in seen:
                    n_dup += 1
                    continue
                seen.add(text)
            texts.append(text)
            ids.append((path, lineno))
            kept += 1
        if kept == 0:
            raise InputError(f"{path}: no non-empty lines")
    return Corpus(texts=texts, ids=ids, files=[str(p) for p in paths], n_empty=n_empty,
                  n_duplicates_dropped=n_dup, strip_id=bool(strip_id))


def iter_aligned(src_it, tgt_it, source, target):
    """Walk two ``(line, text)`` streams in step, yielding ``(line, source text, target text)``;
    streams of different lengths are an error naming the shorter file and its last line."""
    end = (None, None)
    while True:
        s, t = next(src_it, end), next(tgt_it, end)
        if s is end and t is end:
            return
        if s is end or t is end:
            short, other, last = (source, target, t[0] - 1) if s is end else (target, source, s[0] - 1)
            raise InputError(f"{short}:{last}: aligned files differ in length: {short} ends at line {last}, "
                             f"{other} goes on")
        yield s[0], s[1], t[1]


def read_lines(path: str | os.PathLike) -> list[str]:
    """Every line of a text file, the empty ones too, in order (a file of translations, one a line)."""
    return [text for _, text in iter_texts(str(path))]


def read_parallel(source: str | os.PathLike, target: str | os.PathLike, fmt: str | None = None,
                  column: int = 0, field: str = "text", one_sided: str = "skip") -> Corpus:
    """Read two aligned files: line i of ``target`` translates line i of ``source``.

    A pair is skipped (and counted as empty) when either side is empty; with ``one_sided="error"``, a line
    empty on one side only is an error naming that file and line (a pair with nothing to learn from, or
    files out of step), and only lines empty on both sides are skipped. Files of different lengths are an
    error naming the shorter file and its last line.
    """
    texts, targets, ids = [], [], []
    n_empty = 0
    for lineno, s_text, t_text in iter_aligned(iter_texts(source, fmt, column, field),
                                               iter_texts(target, fmt, column, field), source, target):
        if not s_text or not t_text:
            if one_sided == "error" and (s_text or t_text):
                empty, full = (source, target) if not s_text else (target, source)
                raise InputError(f"{empty}:{lineno}: an empty line where {full} has a sentence; a pair needs "
                                 "both sides (misaligned files?)")
            n_empty += 1
            continue
        texts.append(s_text)
        targets.append(t_text)
        ids.append((str(source), lineno))
    if not texts:
        raise InputError(f"{source}: no non-empty pairs")
    return Corpus(texts=texts, ids=ids, files=[str(source)], n_empty=n_empty, targets=targets,
                  target_files=[str(target)])


def read_columns_parallel(paths: Sequence[str | os.PathLike], field: str, field_target: str,
                          fmt: str | None = None) -> Corpus:
    """Pairs from columnar files (Parquet, save_to_disk folders): ``field`` is one side,
    ``field_target`` the other, row by row; a row with either side empty is skipped."""
    from .columnar import iter_rows
    texts, targets, ids, files = [], [], [], expand_paths(paths)
    n_empty = 0
    for path in files:
        f = fmt or detect_format(path)
        if f not in ("parquet", "arrow"):
            raise InputError(f"{path}: --field-target needs a Parquet file or a save_to_disk folder "
                             "(for text files, give the other side with --pool-target)")
        for row, s, t in iter_rows(path, f, field, field_target):
            if not s or not t:
                n_empty += 1
                continue
            texts.append(s)
            targets.append(t)
            ids.append((path, row))
    if not texts:
        raise InputError(f"{files[0]}: no non-empty pairs")
    return Corpus(texts=texts, ids=ids, files=files, n_empty=n_empty, targets=targets)


def domain_name(path: str | os.PathLike) -> str:
    """The gold domain of a file: its name up to the first dot (``EMEA.train.en`` -> ``EMEA``)."""
    name = Path(path).name
    return name.split(".")[0] or name


def file_labels(ids, files) -> list[str]:
    """Each record's gold domain from its file's name (:func:`domain_name`); full paths when two
    files share a name's stem."""
    names = {f: domain_name(f) for f in files}
    if len(set(names.values())) < len(names):  # two files share a stem: use full paths
        names = {f: f for f in files}
    return [names[f] for f, _ in ids]


def read_label_lines(path: str | os.PathLike) -> list[str]:
    """One label per line, none empty (strict UTF-8: a bad byte or an empty label is a one-line error
    naming file:line)."""
    labels = []
    for n, line in iter_raw_lines(path):
        label = line.strip()
        if not label:
            raise InputError(f"{path}:{n}: empty domain label")
        labels.append(label)
    if not labels:
        raise InputError(f"{path}: empty file")
    return labels


def read_labels(path: str | os.PathLike, n: int) -> list[str]:
    """One gold label per non-empty input line, in order."""
    labels = [text for _, text in iter_texts(path, "text") if text]
    if len(labels) != n:
        raise InputError(f"{path}: {len(labels)} labels for {n} sentences")
    return labels


def write_lines(path: str | os.PathLike, lines: Iterable[str]) -> int:
    """Write lines atomically (gzip when the name ends in .gz); return the count."""
    n = 0
    with atomic_open(path) as fh:
        for line in lines:
            fh.write(line.rstrip("\n") + "\n")
            n += 1
    return n


def _open_out(tmp, name: str):
    if name.endswith(".gz"):
        return gzip.open(tmp, "wb")
    if name.endswith((".zst", ".zstd")):
        import zstandard
        return zstandard.open(tmp, "wb")
    return open(tmp, "wb")


def _line_out(raw: bytes, lineno: int) -> bytes:
    """A selected line's bytes as written: its own, ended by a newline; line 1 without a file's byte-order
    mark (it would sit in the middle of the selection)."""
    mark = BOM.encode()
    if lineno == 1 and raw.startswith(mark):
        raw = raw[len(mark):]
    return raw if raw.endswith(b"\n") else raw + b"\n"


def write_selected_lines(out_path: str | os.PathLike, files: Sequence[str],
                         selected: set[tuple[str, int]], kept: dict | None = None) -> int:
    """Copy the selected lines, by id, from the original files, byte for byte (a TSV row or JSON
    object stays whole, CRLF stays CRLF), in input order; gzip when ``out_path`` ends in .gz.
    ``kept``: ``{(file, line): bytes}`` holding every selected line already (read in an earlier pass
    of the same run): the files are not read again."""
    from .._internal.atomic import atomic_path
    n = 0
    with atomic_path(out_path) as tmp:
        with _open_out(tmp, str(out_path)) as out:
            if kept is not None:
                index = {f: k for k, f in enumerate(files)}
                for i in sorted(selected, key=lambda i: (index[i[0]], i[1])):
                    out.write(_line_out(kept[i], i[1]))
                    n += 1
                return n
            for path in files:
                for lineno, raw in _raw_lines(path):
                    if (path, lineno) in selected:
                        out.write(_line_out(raw, lineno))
                        n += 1
            if n != len(selected):  # raised before the rename: no selection file is left behind
                raise InputError(f"{out_path}: {len(selected) - n} of the {len(selected)} selected ids name lines "
                                 "that the pool files do not have (damaged ids?); score the pool again")
    return n
