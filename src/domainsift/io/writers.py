"""Records written in another format than they were read in (``select --out-format``): Parquet, JSONL or
plain text, each written under a temporary name and renamed."""

from __future__ import annotations

import json
import os
from typing import Iterable

from .._internal.atomic import atomic_open, atomic_path


def write_parquet(path: str | os.PathLike, columns: dict) -> None:
    """One Parquet file of ``columns`` (name -> list of values)."""
    from .columnar import _pa
    pa = _pa()
    with atomic_path(path) as tmp:
        pa.parquet.write_table(pa.table(columns), str(tmp))


def write_jsonl(path: str | os.PathLike, records: Iterable[dict]) -> None:
    """One JSON object per line (UTF-8, not ASCII-escaped)."""
    with atomic_open(path) as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def write_text(path: str | os.PathLike, lines: Iterable[str]) -> None:
    """One text per line."""
    with atomic_open(path) as fh:
        fh.writelines(t + "\n" for t in lines)
