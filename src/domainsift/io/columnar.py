"""Columnar pools: Parquet files and folders written by ``datasets.save_to_disk`` (Arrow files).

Read in record batches (never the whole file at once) with ``pyarrow``, an optional
extra (``io``) imported only here. A record's id is its file and its 1-based row, as a
text line's is its file and line. The selection is written back in kind: a Parquet file
with every original column of the selected rows plus a ``score`` column.

A ``save_to_disk`` folder is recognised by its ``state.json``; its Arrow files (listed
there, in order) are the files that ids name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator, Sequence

from .._internal.errors import InputError

BATCH_ROWS = 8192
COLUMNAR = ("parquet", "arrow")


def _pa():
    from .._internal.optional import require
    for sub in ("pyarrow.ipc", "pyarrow.parquet"):
        require(sub, "io", "pyarrow")
    return require("pyarrow", "io")


def is_hf_disk(path: str | os.PathLike) -> bool:
    p = Path(path)
    return p.is_dir() and (p / "state.json").exists() and (p / "dataset_info.json").exists()


def hf_disk_files(path: str | os.PathLike) -> list[str]:
    """The Arrow files of a ``save_to_disk`` folder, in the dataset's order."""
    p = Path(path)
    try:
        state = json.loads((p / "state.json").read_text(encoding="utf-8"))
        files = [str(p / f["filename"]) for f in state["_data_files"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{p}/state.json: not a datasets.save_to_disk folder ({exc})") from None
    for f in files:
        if not os.path.isfile(f):
            raise InputError(f"{f}: listed in {p}/state.json but missing")
    return files


def _batches(path: str, fmt: str, columns: Sequence[str]):
    """Record batches of ``columns`` from a Parquet or Arrow (IPC stream) file."""
    pa = _pa()
    try:
        if fmt == "parquet":
            # a buffered stream: without it a row group's column chunk is read whole (at 1M rows the
            # reader's peak grew from 111 to 184 MB; buffered, 99 to 116 MB; bench/live/scale.py)
            pf = pa.parquet.ParquetFile(path, buffer_size=1 << 20, pre_buffer=False)
            names = pf.schema_arrow.names
            _check_columns(path, names, columns)
            yield from pf.iter_batches(batch_size=BATCH_ROWS, columns=list(columns))
        else:
            with pa.memory_map(path) as src:
                reader = pa.ipc.open_stream(src)
                _check_columns(path, reader.schema.names, columns)
                for batch in reader:
                    yield batch.select(list(columns))
    except InputError:
        raise
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"{path}: cannot read {fmt}: {str(exc).splitlines()[0]}") from None


def _check_columns(path: str, names: Sequence[str], columns: Sequence[str]) -> None:
    for c in columns:
        if c not in names:
            raise InputError(f"{path}: no column '{c}' (columns: {', '.join(names)}); choose one with --field")


def iter_rows(path: str, fmt: str, field: str, field_target: str | None = None) -> Iterator[tuple]:
    """Yield ``(row, text)`` (or ``(row, text, target)``) for every row, 1-based; a null is ''."""
    columns = [field] + ([field_target] if field_target else [])
    row = 0
    for batch in _batches(path, fmt, columns):
        cols = [batch.column(i).to_pylist() for i in range(len(columns))]
        for values in zip(*cols):
            row += 1
            for name, v in zip(columns, values):
                if v is not None and not isinstance(v, str):
                    raise InputError(f"{path}:row {row}: column '{name}' is not a string ({type(v).__name__})")
            yield (row, *[(v or "").strip() for v in values])


def write_selected_rows(out_path: str | os.PathLike, files: Sequence[str], fmt: str,
                        selected: dict[tuple[str, int], float]) -> int:
    """Write the selected rows of columnar ``files`` (every column, input order) to one Parquet file
    with a ``score`` column; ``selected`` maps (file, row) to its score. Returns the row count."""
    pa = _pa()
    from .._internal.atomic import atomic_path
    n = 0
    writer = None
    with atomic_path(out_path) as tmp:
        try:
            for path in files:
                rows = sorted(r for f, r in selected if f == path)
                if not rows:
                    continue
                table = (pa.parquet.read_table(path) if fmt == "parquet"
                         else pa.ipc.open_stream(pa.memory_map(path)).read_all())
                keep = pa.array([r - 1 for r in rows], type=pa.int64())
                part = table.take(keep).append_column("score", pa.array([selected[(path, r)] for r in rows],
                                                                        type=pa.float64()))
                part = part.replace_schema_metadata(None)
                if writer is None:
                    writer = pa.parquet.ParquetWriter(str(tmp), part.schema)
                elif part.schema != writer.schema:
                    raise InputError(f"{path}: its columns differ from the other files' ({part.schema.names})")
                writer.write_table(part)
                n += len(rows)
            if writer is None:  # nothing selected: an empty file with a score column
                writer = pa.parquet.ParquetWriter(str(tmp), pa.schema([("score", pa.float64())]))
        finally:
            if writer is not None:
                writer.close()
    return n
