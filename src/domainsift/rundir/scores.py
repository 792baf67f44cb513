"""A score directory: ``scores.npy``, ``ids.npy``, ``scores.tsv``, ``pool.json``, ``run.json`` and
``signature.json`` (last), written shard by shard and read back memory-mapped."""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from .._internal.atomic import atomic_open, save_json
from .._internal.errors import DomainsiftError
from .layout import CHECKSUMS, ALIGNMENT, ALIGNMENT_PNG, DERIVED, IDS, POOL, RUN, SCORES, SCORES_TSV, SCORE_FILES, SELECTED, SHARE, SIGNATURE, STUDENT, MIX, MIX_TARGETS, read_json
from .manifest import read_pool


@dataclass
class ScoreRun:
    """What a score directory holds (``scores`` and ``id_array`` memory-mapped)."""

    dir: Path
    scores: np.ndarray
    pool: dict
    signature: dict
    id_array: np.ndarray

    def id_at(self, i: int) -> tuple[str, int]:
        k, line = self.id_array[int(i)]
        return self.pool["files"][int(k)], int(line)

    @property
    def ids(self) -> list[tuple[str, int]]:
        """Every record's (file, line): a list for the whole pool; prefer :meth:`id_at`."""
        files = self.pool["files"]
        return [(files[int(k)], int(n)) for k, n in self.id_array]

    @property
    def probabilistic(self) -> bool:
        return bool(self.signature.get("probabilistic"))


def _remove(paths) -> None:
    for p in paths:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def _derived_files(out: Path) -> list[Path]:
    return [out / n for n in DERIVED] + [p for p in out.glob(SELECTED + ".*") if p.is_file()]


def _part(p) -> np.ndarray:
    """A part of a streamed array: an array, or the .npy file that holds it (read when needed)."""
    return np.load(p) if isinstance(p, (str, os.PathLike)) else p


def _tsv_rows(files: list, ids: np.ndarray, scores: np.ndarray) -> str:
    """scores.tsv's rows of one part: file, line and the exact score (``repr``: re-read, the scores order
    as scores.npy does). One string a part, the file's name looked up once when the part holds one file
    (10M rows: 14 s -> 7 s, the same bytes)."""
    heads = [f"{f}\t" for f in files]
    ks = ids[:, 0]
    if len(ks) and ks.min() == ks.max():
        per_row = itertools.repeat(heads[int(ks[0])], len(ks))
    else:
        per_row = map(heads.__getitem__, ks.tolist())
    return "".join([f"{h}{line}\t{v!r}\n" for h, line, v in zip(per_row, ids[:, 1].tolist(),
                                                               np.asarray(scores, dtype=np.float64).tolist())])


def _length(p) -> int:
    """A part's number of rows, from its .npy header when it is a file."""
    return len(np.load(p, mmap_mode="r")) if isinstance(p, (str, os.PathLike)) else len(p)


class _Hashing:
    """A binary file that hashes what is written to it."""

    def __init__(self, fh):
        import hashlib
        self.fh, self.sha = fh, hashlib.sha256()

    def write(self, b) -> int:
        self.sha.update(b)
        return self.fh.write(b)


def _stream_npy(path: Path, parts: Sequence, shape: tuple, dtype) -> str:
    """Write ``parts`` (arrays or .npy files, stacked along axis 0) into one .npy file, part by part
    (appended to the file, not through a memory map: the process holds one part at a time); returns
    the file's SHA-256."""
    from numpy.lib import format as npy
    from .._internal.atomic import atomic_path
    dtype = np.dtype(dtype)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as raw:
            fh = _Hashing(raw)
            npy.write_array_header_1_0(fh, {"descr": npy.dtype_to_descr(dtype), "fortran_order": False,
                                            "shape": tuple(shape)})
            for p in parts:
                fh.write(np.ascontiguousarray(_part(p), dtype=dtype).tobytes())
    return fh.sha.hexdigest()


def write_scores(out_dir: str | os.PathLike, scores, ids, pool: dict, sig: dict,
                 timings: dict | None = None, run: dict | None = None, artifacts=None,
                 share: dict | None = None) -> None:
    """Write a score directory (see the module docstring); ``signature.json`` comes last.

    ``scores`` and ``ids`` are arrays, or lists of per-shard arrays or .npy files (written shard by
    shard, so memory stays bounded by a shard). ``run``: more of what ``run.json`` records (a cascade's
    plan). ``artifacts(out)`` writes the fit's own files (the alignment's picture, a cascade's student)
    before the signature, so a run that dies writing them never looks finished. ``share``: the pool's
    estimated in-domain share (:class:`domainsift.share.ShareEstimate` as a dict), kept in ``share.json``
    for ``select --fraction auto``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s_parts = scores if isinstance(scores, list) else [np.asarray(scores, dtype=np.float64)]
    i_parts = ids if isinstance(ids, list) else [np.asarray(ids, dtype=np.int64).reshape(-1, 2)]
    n = sum(_length(p) for p in s_parts)
    n_ids = sum(_length(p) for p in i_parts)
    if n != pool["n"] or n_ids != n:
        raise RuntimeError(f"{n} scores and {n_ids} ids for {pool['n']} pool records")
    _remove([out / SIGNATURE, out / ALIGNMENT, out / ALIGNMENT_PNG, out / SHARE] + _derived_files(out))
    import shutil
    shutil.rmtree(out / STUDENT, ignore_errors=True)  # an earlier run's student is not this run's
    sums = {SCORES: _stream_npy(out / SCORES, s_parts, (n,), np.float64),
            IDS: _stream_npy(out / IDS, i_parts, (n, 2), np.int64)}
    files = pool["files"]
    with atomic_open(out / SCORES_TSV) as fh:
        fh.write("file\tline\tscore\n")
        for sp, ip in zip(s_parts, i_parts):
            fh.write(_tsv_rows(files, _part(ip), _part(sp)))
    save_json(out / POOL, pool)
    save_json(out / RUN, {"timings": timings or {}, **(run or {}), CHECKSUMS: sums})
    if share is not None:
        save_json(out / SHARE, share)
    if artifacts is not None:
        artifacts(out)
    save_json(out / SIGNATURE, sig)


def _legacy_ids(pool: dict) -> np.ndarray:
    """ids.npy's array from an earlier version's ``pool.json`` (which listed every id)."""
    index = {f: k for k, f in enumerate(pool["files"])}
    return np.array([[index.get(f, -1), n] for f, n in pool["ids"]], dtype=np.int64).reshape(-1, 2)


def read_ids(run_dir: str | os.PathLike, pool: dict | None = None) -> np.ndarray:
    """A run directory's ids (n, 2): file index into ``pool.json``'s files, line."""
    d = Path(run_dir)
    pool = pool if pool is not None else read_pool(d)
    if (d / IDS).exists():
        try:
            ids = np.load(d / IDS, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as exc:  # an object array (never unpickled), a damaged header
            raise DomainsiftError(f"{d / IDS}: not an array of line ids domainsift wrote ({str(exc).splitlines()[0]}); "
                                  "score the pool again") from None
        if ids.dtype.kind not in "iu" or ids.ndim != 2 or (ids.ndim == 2 and ids.shape[1] != 2):
            raise DomainsiftError(f"{d / IDS}: not an array of line ids domainsift wrote ({ids.dtype} {ids.shape}); "
                                  "score the pool again")
        return ids
    if "ids" in pool:
        return _legacy_ids(pool)
    raise DomainsiftError(f"{d}: no ids.npy; not a complete domainsift run directory")


def load_scores(score_dir: str | os.PathLike, check: bool = True) -> ScoreRun:
    """Read a score directory; a missing file or scores that do not match the pool is an error.
    ``check``: compare the arrays with the SHA-256s in ``run.json`` (False only for arrays this process
    has just written)."""
    d = Path(score_dir)
    for name in SCORE_FILES:
        if name == IDS:
            continue  # read_ids below: ids.npy, or an earlier version's list in pool.json
        if not (d / name).exists():
            if (d / MIX).is_file():
                raise DomainsiftError(f"{d}: several targets in one run ({MIX}); give one target's folder, "
                                      f"{d / MIX_TARGETS}/NAME")
            raise DomainsiftError(f"{d}: not a score directory (no {name}); run 'domainsift score' first")
    try:
        scores = np.load(d / SCORES, mmap_mode="r")
        pool = _read_json(d / POOL, d)
        sig = _read_json(d / SIGNATURE, d)
        ids = read_ids(d, pool)
    except (OSError, ValueError) as exc:
        raise DomainsiftError(f"{d}: unreadable score directory: {exc}") from None
    if check:
        check_arrays(d)
    n = pool.get("n", len(pool.get("ids", [])))
    if scores.shape != (n,) or ids.shape != (n, 2):
        raise DomainsiftError(f"{d}: {scores.shape[0] if scores.ndim else 0} scores and {len(ids)} ids for "
                              f"{n} pool records")
    return ScoreRun(d, scores, pool, sig, ids)


def check_arrays(run_dir: str | os.PathLike) -> None:
    """``scores.npy`` and ``ids.npy`` against the SHA-256s that ``run.json`` recorded when they were
    written (a run of a version before 0.12.0 recorded none: nothing to check)."""
    from .._internal.checksums import DamagedError, file_sha256
    d = Path(run_dir)
    run = _read_json(d / RUN, d) if (d / RUN).is_file() else {}
    if not isinstance(run, dict):
        raise DomainsiftError(f"{d / RUN}: not a JSON object; not a run record domainsift wrote")
    sums = run.get(CHECKSUMS)
    if sums is None:  # a run of 0.12.0 or later always records them: say that they are gone
        import logging
        logging.getLogger("domainsift").warning(
            "%s records no checksums for %s and %s (written before 0.12.0, or removed since): they are checked "
            "for shapes, finite scores and ids within the pool only", d / RUN, SCORES, IDS)
        return
    if not isinstance(sums, dict):
        raise DamagedError(f"{d / RUN}: '{CHECKSUMS}' is not a table of file names and SHA-256s")
    for name in (SCORES, IDS):
        if name in sums and (d / name).is_file() and file_sha256(d / name) != sums[name]:
            raise DamagedError(f"{d / name}: damaged (its SHA-256 differs from the one {RUN} recorded); "
                               "run the command that wrote it again")


def _read_json(path: Path, d: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DomainsiftError(f"{d}: unreadable score directory: {exc}") from None


def read_share(run_dir: str | os.PathLike) -> dict:
    """The pool's estimated in-domain share a score run saved (``share.json``); a run without one is a
    one-line error that says how to get it."""
    share = read_json(run_dir, SHARE)
    if share is None:
        raise DomainsiftError(f"{run_dir}: no estimate of the pool's in-domain share ({SHARE}); score with "
                              "--estimate-share, or select with --method ... --fraction auto")
    if not isinstance(share, dict) or not isinstance(share.get("share"), (int, float)) \
            or not 0 <= share["share"] <= 1:
        raise DomainsiftError(f"{Path(run_dir) / SHARE}: not a share estimate domainsift wrote; score again")
    return share


def read_signature(run_dir: str | os.PathLike) -> dict:
    p = Path(run_dir) / SIGNATURE
    if not p.exists():
        raise DomainsiftError(f"{run_dir}: not a domainsift run directory (no signature.json)")
    return json.loads(p.read_text(encoding="utf-8"))
