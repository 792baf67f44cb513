"""The pool a run read, as ``pool.json`` records it: resolved paths, reader, size, each file's SHA-256;
the checks that the files are still those, and the records of a run's pool read back by id."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from .._internal.errors import DomainsiftError
from ..io.corpus import Corpus
from .layout import MIX, MIX_TARGETS, POOL, check_recordable, resolve


def file_fingerprint(path: str | os.PathLike) -> dict:
    """Size and SHA-256 of a file's bytes."""
    from ..io.corpus import file_digest
    return file_digest(path)


def source_manifest(files: Sequence[str], target_files: Sequence[str], n: int, reader: dict | None = None,
                    fingerprints: dict | None = None) -> dict:
    """The pool as ``pool.json`` records it: resolved paths, reader, size and file fingerprints
    (``fingerprints``: those computed as the pool was read, by the path as given; a file without one
    is hashed here)."""
    from ..io.corpus import check_one_format
    real = {f: resolve(f) for f in list(files) + list(target_files)}
    check_one_format([f for f in files if os.path.exists(f)], (reader or {}).get("format"))
    check_one_format([f for f in target_files if os.path.exists(f)], (reader or {}).get("format"), "the other side")
    check_recordable(real.values())
    given = fingerprints or {}
    from ..io.urls import is_file
    fingerprints = {real[f]: given.get(f) or file_fingerprint(f) for f in real if is_file(f)}
    return {"files": [real[f] for f in files], "target_files": [real[f] for f in target_files], "n": int(n),
            "reader": dict(reader or {}), "fingerprints": fingerprints}


def pool_manifest(pool: Corpus, reader: dict | None = None) -> tuple[dict, np.ndarray]:
    """``pool.json``'s content and the ids array of a pool held in memory."""
    files = list(dict.fromkeys(list(pool.files) + [f for f, _ in pool.ids]))
    index = {f: k for k, f in enumerate(files)}
    ids = np.array([[index[f], n] for f, n in pool.ids], dtype=np.int64).reshape(-1, 2)
    return source_manifest(files, pool.target_files, len(pool), reader), ids


def verify_inputs(run, where: str | os.PathLike | None = None) -> None:
    """Every pool file is where it was and holds the same bytes; otherwise a one-line error.

    A pool without fingerprints (an earlier version's, or a planted ``pool.json``) is refused. A file a
    Ray run cut into parts is checked part by part (:func:`~domainsift.io.parts.fingerprint_matches`)."""
    from ..io.parts import fingerprint_matches
    from ..io.urls import is_file
    pool = run.pool if not isinstance(run, dict) else run
    where = run.dir if not isinstance(run, dict) else where
    fingerprints = pool.get("fingerprints") or {}
    missing = [f for f in list(pool.get("files", [])) + list(pool.get("target_files") or []) if f not in fingerprints]
    if missing:
        raise DomainsiftError(f"{where}: pool.json has no fingerprint for {missing[0]}; score the pool again")
    for path, fp in fingerprints.items():
        if not is_file(path):
            raise DomainsiftError(f"{where}: pool file {path} is gone")
        if not fingerprint_matches(path, fp):
            raise DomainsiftError(f"{where}: pool file {path} changed since it was scored; score it again")


def verify_stats(run, stats: dict) -> None:
    """Every pool file has the size and modification time it had when this process read and hashed it
    (a selection written right after its scoring: the files are not hashed a second time). A URL whose
    server gives neither an ETag nor a modification time can change under the same size unseen: its
    bytes are hashed again and compared with the SHA-256 of the bytes that were scored."""
    from ..io.parts import fingerprint_matches
    from ..io.urls import stat
    fingerprints = run.pool.get("fingerprints") or {}
    for path in list(run.pool["files"]) + list(run.pool.get("target_files") or []):
        if path not in stats:
            continue
        try:
            now = stat(path)
        except OSError:
            raise DomainsiftError(f"{run.dir}: pool file {path} is gone") from None
        changed = tuple(now) != tuple(stats[path])
        if not changed and now[1] is None and path in fingerprints:  # no validator: only the bytes can tell
            changed = not fingerprint_matches(path, fingerprints[path])
        if changed:
            raise DomainsiftError(f"{run.dir}: pool file {path} changed since it was scored; score it again")


def pool_source(pool: dict):
    """The pool a run scored, as a :class:`~domainsift.io.source.PoolSource` that reads its files the
    way the run read them (``pool.json``'s reader)."""
    from ..io.source import PoolSource
    reader = pool.get("reader") or {}
    return PoolSource(list(pool["files"]), list(pool.get("target_files") or []), reader.get("format"),
                      reader.get("column", 0), reader.get("field", "text"), reader.get("field_target"),
                      strip_id=bool(reader.get("strip_id", False)))


def records(run, wanted, where: str | os.PathLike | None = None,
            verify: bool = True, raw: bool = False) -> dict:
    """``{(file, line): (text, other side or None)}`` for the ``wanted`` ids of a run's pool, read
    as the run read them; with ``verify`` (the default) the pool files must hold the bytes that were
    scored, or it is a one-line error. Only the files that hold a wanted id are read. With ``raw``, each
    value also holds the line's bytes and the other side's (None for a columnar row)."""
    pool = run.pool if not isinstance(run, dict) else run
    where = run.dir if not isinstance(run, dict) else where
    if verify:
        verify_inputs(pool, where)
    wanted = set(wanted)
    src = pool_source(pool)
    need = {f for f, _ in wanted}
    out = {}
    for k, f in enumerate(src.files):
        if f not in need:
            continue
        for line, *record in src.file_records(k, raw=raw):
            if (f, line) in wanted:
                out[(f, line)] = tuple(record)
    return out


def read_pool(run_dir: str | os.PathLike) -> dict:
    """The pool a run directory's selection was made from."""
    p = Path(run_dir) / POOL
    if not p.exists():
        if (Path(run_dir) / MIX).is_file():
            raise DomainsiftError(f"{run_dir}: several targets in one run ({MIX}); give one target's folder, "
                                  f"{Path(run_dir) / MIX_TARGETS}/NAME")
        raise DomainsiftError(f"{run_dir}: no pool.json; not a domainsift run directory")
    return json.loads(p.read_text(encoding="utf-8"))
