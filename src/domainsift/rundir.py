"""The run directory: the one module that writes and reads it.

A *score directory* (``domainsift score``, ``combine``):

- ``scores.npy``      float64 scores (n,), in pool order;
- ``ids.npy``         int64 (n, 2): every record's id, as its file's position in ``pool.json``'s
                      ``files`` and its 1-based line (or row);
- ``scores.tsv``      ``file<TAB>line<TAB>score`` for every pool record;
- ``pool.json``       the pool: resolved file paths (and the other side's for a parallel pool),
                      how they were read, the number of records, and each file's size and SHA-256;
- ``signature.json``  what determines the scores (method, parameters, model, seed, inputs, version);
- ``run.json``        what varies from run to run (timings).

A *selection* (``domainsift select``) adds ``selected.<ext>`` (the pool's own format; both sides
of a parallel pool), ``selected.ids.tsv`` and ``selection.json``; ``evaluate`` adds ``eval.json``.

Every file is written under a temporary name and renamed. Writing new scores first removes
``signature.json`` (which marks a finished score directory) and every output derived from
earlier scores, and writes ``signature.json`` last, so a run that dies midway never leaves
new scores beside an old signature or an old selection beside new scores.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ._atomic import atomic_open, save_json
from .corpus import Corpus, file_suffix
from .errors import DomainsiftError

# ------------------------------------------------------------------------------ names
# Every file name of a run directory; no other module spells one (tests/test_rundir_owner.py).
SCORES, IDS, SCORES_TSV, POOL = "scores.npy", "ids.npy", "scores.tsv", "pool.json"
SIGNATURE, RUN = "signature.json", "run.json"
SELECTION, SELECTED_IDS, SELECTED = "selection.json", "selected.ids.tsv", "selected"
EVAL = "eval.json"
ALIGNMENT, ALIGNMENT_PNG = "alignment.json", "alignment.png"
EMBEDDINGS, EMBED_IDS = "embeddings.npy", "ids.tsv"
CLUSTERING, CLUSTERS, OUTLIERS, MAP = "clustering.json", "clusters.tsv", "outliers.tsv", "map.json"
DOWNSTREAM, CROSSDOMAIN, CROSSDOMAIN_PNG = "downstream.json", "crossdomain.json", "crossdomain.png"
SAMPLING, REPORT = "sampling.json", "report.html"
STUDENT = "student"  # a student's saved fit (the student method and --cascade): reusable with --student-from
LOCK, RESUME = ".lock", ".resume"

SCORE_FILES = (SCORES, IDS, POOL, SIGNATURE)
# outputs computed from a directory's scores: stale once the scores are rewritten
DERIVED = (SELECTED_IDS, SELECTION, EVAL)
# every name a score or selection run writes or replaces in its directory
OUTPUTS = SCORE_FILES + (SCORES_TSV, RUN, STUDENT) + DERIVED + (SELECTED + ".*",)
EMBED_OUTPUTS = (EMBEDDINGS, SIGNATURE, EMBED_IDS)
CLUSTER_OUTPUTS = (CLUSTERING, OUTLIERS, CLUSTERS, MAP, "*.png")

# what a directory holds, told by the file that only that kind of run writes
KINDS = {"score": SCORES, "selection": SELECTED_IDS, "embed": EMBEDDINGS, "cluster": CLUSTERING}


def path(run_dir: str | os.PathLike, name: str) -> Path:
    """Where artifact ``name`` (one of this module's names) lives in ``run_dir``."""
    return Path(run_dir) / name


def has(run_dir: str | os.PathLike, name: str) -> bool:
    return (Path(run_dir) / name).is_file()


def read_json(run_dir: str | os.PathLike, name: str) -> dict | None:
    """A JSON artifact of ``run_dir``, or None when it is not there; unreadable is a one-line error."""
    p = Path(run_dir) / name
    if not p.is_file():
        return None
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DomainsiftError(f"{p}: unreadable ({exc}); run the command that wrote it again") from None


def write_json(run_dir: str | os.PathLike, name: str, obj) -> Path:
    """Write a JSON artifact atomically; returns its path."""
    p = Path(run_dir) / name
    p.parent.mkdir(parents=True, exist_ok=True)
    save_json(p, obj)
    return p


def kind(run_dir: str | os.PathLike) -> str | None:
    """What finished run ``run_dir`` holds: ``score`` (scores, maybe with a selection in place),
    ``selection`` (a selection from a score directory elsewhere), ``embed``, ``cluster``; None
    when it holds no domainsift run."""
    d = Path(run_dir)
    for k, marker in KINDS.items():
        if (d / marker).is_file():
            return k
    return None


class _Claim:
    """A run's hold on its output directory: an exclusive lock on ``DIR/.lock`` for as long as the
    run writes (a second run into the same directory fails at once), released on exit."""

    def __init__(self, out: Path, fh, created: bool):
        self.out, self.fh, self.created = out, fh, created

    def release(self) -> None:
        if self.fh is not None:
            import fcntl
            fcntl.flock(self.fh, fcntl.LOCK_UN)
            self.fh.close()
            self.fh = None

    def __enter__(self):
        return self

    def __exit__(self, kind, *exc):
        self.release()
        if kind is not None and self.created:  # a run that failed in a directory it made leaves nothing
            try:
                (self.out / LOCK).unlink(missing_ok=True)
                self.out.rmdir()
            except OSError:  # it wrote something (a resumable state): keep it
                pass


def claim(out_dir: str | os.PathLike, writes: str, overwrite: bool = False, source: str | os.PathLike | None = None):
    """Take ``out_dir`` for a run that writes a ``writes`` run (a kind of :data:`KINDS`); use as a
    context manager.

    Refused with one line: a directory another domainsift process is writing to; a directory that
    holds a finished run of another kind (a score run's scores, an embedding), unless ``overwrite``.
    A selection may go into the score directory it reads (``source``) or replace another selection."""
    import fcntl
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise DomainsiftError(f"{out}: exists and is not a directory; choose another --out")
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    fh = open(out / LOCK, "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise DomainsiftError(f"{out}: another domainsift run is writing to this directory; wait for it to "
                              "finish or choose another --out") from None
    held_claim = _Claim(out, fh, created)
    try:
        held = kind(out)
        same_source = source is not None and out.resolve() == Path(source).resolve()
        if held and held != writes and not overwrite and not (writes == "selection" and same_source):
            raise DomainsiftError(f"{out}: holds a finished {held} run; a {writes} run would replace it. "
                                  f"Choose another --out (or pass --overwrite to replace it)")
    except BaseException as exc:
        held_claim.__exit__(type(exc), exc, None)
        raise
    return held_claim


def resolve(path: str | os.PathLike) -> str:
    return os.path.realpath(str(path))


def file_fingerprint(path: str | os.PathLike) -> dict:
    """Size and SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return {"size": os.path.getsize(path), "sha256": h.hexdigest()}


def check_recordable(paths) -> None:
    """Every path can be written into the run's JSON and TSV files: valid UTF-8, no tab or line break
    (checked before any work, so a run never fails after scoring on a file's name)."""
    for f in paths:
        f = str(f)
        try:
            f.encode("utf-8")
        except UnicodeEncodeError:
            shown = f.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            raise DomainsiftError(f"{shown!r}: the file name is not valid UTF-8, so it cannot be recorded in "
                                  f"{POOL} and {SELECTED_IDS}; rename the file") from None
        if "\t" in f or "\n" in f or "\r" in f:
            raise DomainsiftError(f"{f!r}: a file name with a tab or line break cannot be recorded in "
                                  f"{SCORES_TSV} and {SELECTED_IDS}; rename the file")


def source_manifest(files: Sequence[str], target_files: Sequence[str], n: int, reader: dict | None = None) -> dict:
    """The pool as ``pool.json`` records it: resolved paths, reader, size and file fingerprints."""
    from .corpus import check_one_format
    real = {f: resolve(f) for f in list(files) + list(target_files)}
    check_one_format([f for f in files if os.path.exists(f)], (reader or {}).get("format"))
    check_one_format([f for f in target_files if os.path.exists(f)], (reader or {}).get("format"), "the other side")
    check_recordable(real.values())
    fingerprints = {real[f]: file_fingerprint(f) for f in real if os.path.isfile(f)}
    return {"files": [real[f] for f in files], "target_files": [real[f] for f in target_files], "n": int(n),
            "reader": dict(reader or {}), "fingerprints": fingerprints}


def pool_manifest(pool: Corpus, reader: dict | None = None) -> tuple[dict, np.ndarray]:
    """``pool.json``'s content and the ids array of a pool held in memory."""
    files = list(dict.fromkeys(list(pool.files) + [f for f, _ in pool.ids]))
    index = {f: k for k, f in enumerate(files)}
    ids = np.array([[index[f], n] for f, n in pool.ids], dtype=np.int64).reshape(-1, 2)
    return source_manifest(files, pool.target_files, len(pool), reader), ids


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
    return [out / n for n in DERIVED] + [p for p in out.glob("selected.*") if p.is_file()]


def _part(p) -> np.ndarray:
    """A part of a streamed array: an array, or the .npy file that holds it (read when needed)."""
    return np.load(p) if isinstance(p, (str, os.PathLike)) else p


def _length(p) -> int:
    """A part's number of rows, from its .npy header when it is a file."""
    return len(np.load(p, mmap_mode="r")) if isinstance(p, (str, os.PathLike)) else len(p)


def _stream_npy(path: Path, parts: Sequence, shape: tuple, dtype) -> None:
    """Write ``parts`` (arrays or .npy files, stacked along axis 0) into one .npy file, part by part
    (appended to the file, not through a memory map: the process holds one part at a time)."""
    from numpy.lib import format as npy
    from ._atomic import atomic_path
    dtype = np.dtype(dtype)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            npy.write_array_header_1_0(fh, {"descr": npy.dtype_to_descr(dtype), "fortran_order": False,
                                            "shape": tuple(shape)})
            for p in parts:
                fh.write(np.ascontiguousarray(_part(p), dtype=dtype).tobytes())


def write_scores(out_dir: str | os.PathLike, scores, ids, pool: dict, sig: dict,
                 timings: dict | None = None, run: dict | None = None) -> None:
    """Write a score directory (see the module docstring); ``signature.json`` comes last.

    ``scores`` and ``ids`` are arrays, or lists of per-shard arrays or .npy files (written shard by
    shard, so memory stays bounded by a shard). ``run``: more of what ``run.json`` records (a cascade's plan)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s_parts = scores if isinstance(scores, list) else [np.asarray(scores, dtype=np.float64)]
    i_parts = ids if isinstance(ids, list) else [np.asarray(ids, dtype=np.int64).reshape(-1, 2)]
    n = sum(_length(p) for p in s_parts)
    n_ids = sum(_length(p) for p in i_parts)
    if n != pool["n"] or n_ids != n:
        raise RuntimeError(f"{n} scores and {n_ids} ids for {pool['n']} pool records")
    _remove([out / "signature.json", out / "alignment.json", out / "alignment.png"] + _derived_files(out))
    _stream_npy(out / "scores.npy", s_parts, (n,), np.float64)
    _stream_npy(out / "ids.npy", i_parts, (n, 2), np.int64)
    files = pool["files"]
    with atomic_open(out / "scores.tsv") as fh:
        fh.write("file\tline\tscore\n")
        for sp, ip in zip(s_parts, i_parts):
            # exact scores: re-read, they order as scores.npy does
            fh.writelines(f"{files[k]}\t{line}\t{float(v)!r}\n"
                          for (k, line), v in zip(_part(ip).tolist(), _part(sp).tolist()))
    save_json(out / "pool.json", pool)
    save_json(out / "run.json", {"timings": timings or {}, **(run or {})})
    save_json(out / "signature.json", sig)


def _legacy_ids(pool: dict) -> np.ndarray:
    """ids.npy's array from an earlier version's ``pool.json`` (which listed every id)."""
    index = {f: k for k, f in enumerate(pool["files"])}
    return np.array([[index.get(f, -1), n] for f, n in pool["ids"]], dtype=np.int64).reshape(-1, 2)


def read_ids(run_dir: str | os.PathLike, pool: dict | None = None) -> np.ndarray:
    """A run directory's ids (n, 2): file index into ``pool.json``'s files, line."""
    d = Path(run_dir)
    pool = pool if pool is not None else read_pool(d)
    if (d / "ids.npy").exists():
        return np.load(d / "ids.npy", mmap_mode="r")
    if "ids" in pool:
        return _legacy_ids(pool)
    raise DomainsiftError(f"{d}: no ids.npy; not a complete domainsift run directory")


def load_scores(score_dir: str | os.PathLike) -> ScoreRun:
    """Read a score directory; a missing file or scores that do not match the pool is an error."""
    d = Path(score_dir)
    for name in SCORE_FILES:
        if name == "ids.npy":
            continue  # read_ids below: ids.npy, or an earlier version's list in pool.json
        if not (d / name).exists():
            raise DomainsiftError(f"{d}: not a score directory (no {name}); run 'domainsift score' first")
    try:
        scores = np.load(d / "scores.npy", mmap_mode="r")
        pool = _read_json(d / "pool.json", d)
        sig = _read_json(d / "signature.json", d)
        ids = read_ids(d, pool)
    except (OSError, ValueError) as exc:
        raise DomainsiftError(f"{d}: unreadable score directory: {exc}") from None
    n = pool.get("n", len(pool.get("ids", [])))
    if scores.shape != (n,) or ids.shape != (n, 2):
        raise DomainsiftError(f"{d}: {scores.shape[0] if scores.ndim else 0} scores and {len(ids)} ids for "
                              f"{n} pool records")
    return ScoreRun(d, scores, pool, sig, ids)


def _read_json(path: Path, d: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DomainsiftError(f"{d}: unreadable score directory: {exc}") from None


def verify_inputs(run: ScoreRun | dict, where: str | os.PathLike | None = None) -> None:
    """Every pool file is where it was and holds the same bytes; otherwise a one-line error.

    A pool without fingerprints (an earlier version's, or a planted ``pool.json``) is refused."""
    pool = run.pool if isinstance(run, ScoreRun) else run
    where = run.dir if isinstance(run, ScoreRun) else where
    fingerprints = pool.get("fingerprints") or {}
    missing = [f for f in list(pool.get("files", [])) + list(pool.get("target_files") or []) if f not in fingerprints]
    if missing:
        raise DomainsiftError(f"{where}: pool.json has no fingerprint for {missing[0]}; score the pool again")
    for path, fp in fingerprints.items():
        if not os.path.isfile(path):
            raise DomainsiftError(f"{where}: pool file {path} is gone")
        if os.path.getsize(path) != fp["size"] or file_fingerprint(path)["sha256"] != fp["sha256"]:
            raise DomainsiftError(f"{where}: pool file {path} changed since it was scored; score it again")


def pool_source(pool: dict):
    """The pool a run scored, as a :class:`~domainsift.source.PoolSource` that reads its files the
    way the run read them (``pool.json``'s reader)."""
    from .source import PoolSource
    reader = pool.get("reader") or {}
    return PoolSource(list(pool["files"]), list(pool.get("target_files") or []), reader.get("format"),
                      reader.get("column", 0), reader.get("field", "text"), reader.get("field_target"))


def records(run: ScoreRun | dict, wanted, where: str | os.PathLike | None = None,
            verify: bool = True) -> dict:
    """``{(file, line): (text, other side or None)}`` for the ``wanted`` ids of a run's pool, read
    as the run read them; with ``verify`` (the default) the pool files must hold the bytes that were
    scored, or it is a one-line error. Only the files that hold a wanted id are read."""
    pool = run.pool if isinstance(run, ScoreRun) else run
    where = run.dir if isinstance(run, ScoreRun) else where
    if verify:
        verify_inputs(pool, where)
    wanted = set(wanted)
    src = pool_source(pool)
    need = {f for f, _ in wanted}
    out = {}
    for k, f in enumerate(src.files):
        if f not in need:
            continue
        for line, text, target in src.file_records(k):
            if (f, line) in wanted:
                out[(f, line)] = (text, target)
    return out


def selection_records(run_dir: str | os.PathLike) -> list[tuple[str, str | None]]:
    """The selected records of a selection directory, ``(text, other side or None)`` in pool order,
    read from the pool files after verifying that they are the ones scored."""
    ids = read_selected_ids(run_dir)
    pool = read_pool(run_dir)
    got = records(pool, ids, where=run_dir)
    index = {f: k for k, f in enumerate(pool["files"])}
    return [got[i] for i in sorted(set(ids), key=lambda i: (index.get(i[0], -1), i[1])) if i in got]


def output_names(files: Sequence[str], target_files: Sequence[str]) -> tuple[str, str | None]:
    """Names of the selected lines' files: ``selected.<suffix>`` of the pool's own format."""
    src = "selected" + file_suffix(files[0])
    if not target_files:
        return src, None
    tgt = "selected" + file_suffix(target_files[0])
    if tgt == src:
        src, tgt = "selected.src" + file_suffix(files[0]), "selected.tgt" + file_suffix(target_files[0])
    return src, tgt


OUT_FORMATS = ("text", "jsonl", "parquet")


def _pool_format(pool: dict) -> str:
    from .corpus import detect_format
    return (pool.get("reader") or {}).get("format") or detect_format(pool["files"][0])


def _write_converted(out: Path, run: ScoreRun, idx: np.ndarray, out_format: str) -> tuple[int, list[str]]:
    """The selected records in another format than the pool's (``--out-format``): their text (and the
    other side's) with file, line and score; text: one text per line (the other side in a second file)."""
    wanted = {run.id_at(i): float(run.scores[i]) for i in idx}
    got = records(run, wanted, verify=False)  # run_select verified the pool files
    text = {i: t for i, (t, _) in got.items()}
    target = {i: g for i, (_, g) in got.items() if g is not None}
    if out_format == "text":
        broken = next((i for i, t in sorted(text.items()) if "\n" in t or "\r" in t), None)
        if broken is None:
            broken = next((i for i, t in sorted(target.items()) if "\n" in t or "\r" in t), None)
        if broken is not None:
            raise DomainsiftError(f"{broken[0]}:{broken[1]}: the record holds a line break, so --out-format text "
                                  "would split it over two lines; use --out-format jsonl or parquet")
    order = [run.id_at(i) for i in np.sort(np.asarray(idx, dtype=np.int64))]  # pool order, as the in-kind outputs
    if out_format == "parquet":
        from .columnar import _pa
        from ._atomic import atomic_path
        pa = _pa()
        cols = {"file": [f for f, _ in order], "line": [n for _, n in order], "text": [text[i] for i in order]}
        if target:
            cols["target"] = [target.get(i, "") for i in order]
        cols["score"] = [wanted[i] for i in order]
        with atomic_path(out / "selected.parquet") as tmp:
            pa.parquet.write_table(pa.table(cols), str(tmp))
        return len(order), [str(out / "selected.parquet")]
    if out_format == "jsonl":
        with atomic_open(out / "selected.jsonl") as fh:
            for i in order:
                rec = {"file": i[0], "line": i[1], "text": text[i], **({"target": target[i]} if i in target else {}),
                       "score": wanted[i]}
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        return len(order), [str(out / "selected.jsonl")]
    outputs = [str(out / "selected.txt")]
    with atomic_open(out / "selected.txt") as fh:
        fh.writelines(text[i] + "\n" for i in order)
    if target:
        with atomic_open(out / "selected.target.txt") as fh:
            fh.writelines(target.get(i, "") + "\n" for i in order)
        outputs.append(str(out / "selected.target.txt"))
    return len(order), outputs


def write_selection(out_dir: str | os.PathLike, run: ScoreRun, idx: np.ndarray, rule: dict,
                    out_format: str | None = None) -> dict:
    """Write the selected records (``idx``, best first) of a score run into ``out_dir``: in the pool's
    own format (text in, text out; JSONL, TSV and CRLF byte for byte; Parquet or a save_to_disk folder
    in, Parquet out with every column and a ``score``), or in ``out_format``."""
    from .columnar import COLUMNAR, write_selected_rows
    from .corpus import write_selected_lines
    from .signature import signature_string
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    same = out.resolve() == run.dir.resolve()
    _remove(_derived_files(out))
    if not same:  # not a score directory of its own: no scores from an earlier run stay beside it
        _remove([out / "scores.npy", out / "scores.tsv", out / "run.json"])
    chosen = [run.id_at(i) for i in idx]
    selected = set(chosen)
    fmt = _pool_format(run.pool)
    kind = "parquet" if fmt in COLUMNAR else ("jsonl" if fmt == "jsonl" else "text")
    if out_format is not None and out_format not in OUT_FORMATS:
        raise DomainsiftError(f"unknown --out-format '{out_format}' (one of: {', '.join(OUT_FORMATS)})")
    if out_format not in (None, kind):
        n, outputs = _write_converted(out, run, idx, out_format)
    elif fmt in COLUMNAR:
        n = write_selected_rows(out / "selected.parquet", run.pool["files"], fmt,
                                {c: float(run.scores[i]) for c, i in zip(chosen, idx)})
        outputs = [str(out / "selected.parquet")]
    else:
        src_name, tgt_name = output_names(run.pool["files"], run.pool["target_files"])
        n = write_selected_lines(out / src_name, run.pool["files"], selected)
        outputs = [str(out / src_name)]
        if tgt_name:  # the other side: the same line numbers in the aligned files
            tmap = dict(zip(run.pool["files"], run.pool["target_files"]))
            write_selected_lines(out / tgt_name, run.pool["target_files"], {(tmap[f], ln) for f, ln in selected})
            outputs.append(str(out / tgt_name))
    with atomic_open(out / "selected.ids.tsv") as fh:
        fh.write("file\tline\tscore\trank\n")
        for rank, (i, (f, ln)) in enumerate(zip(idx, chosen), 1):
            fh.write(f"{f}\t{ln}\t{float(run.scores[i])!r}\t{rank}\n")
    if not same:  # a selection elsewhere carries its pool, so evaluate and downstream read it alone
        _stream_npy(out / "ids.npy", [run.id_array], run.id_array.shape, np.int64)
        save_json(out / "pool.json", run.pool)
    selection = {"n_selected": int(n), "n_pool": int(len(run.scores)), "rule": rule, "outputs": outputs,
                 "score_dir": resolve(run.dir),
                 "min_selected_score": float(run.scores[idx].min()) if len(idx) else None}
    save_json(out / "selection.json", selection)
    sig = dict(run.signature)
    sig["selection"] = {**rule, **({"out_format": out_format} if out_format else {})}
    sig["signature"] = signature_string({**run.signature, **{f"select_{k}": v for k, v in rule.items()}})
    save_json(out / "signature.json", sig)
    return selection


def read_selected_ids(run_dir: str | os.PathLike) -> list[tuple[str, int]]:
    p = Path(run_dir) / "selected.ids.tsv"
    if not p.exists():
        raise DomainsiftError(f"{run_dir}: no selection (selected.ids.tsv); run 'domainsift select' first")
    rows = []
    with open(p, encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            f, ln, *_ = line.rstrip("\n").split("\t")
            rows.append((f, int(ln)))
    return rows


def read_pool(run_dir: str | os.PathLike) -> dict:
    """The pool a run directory's selection was made from."""
    p = Path(run_dir) / "pool.json"
    if not p.exists():
        raise DomainsiftError(f"{run_dir}: no pool.json; not a domainsift run directory")
    return json.loads(p.read_text(encoding="utf-8"))


def read_signature(run_dir: str | os.PathLike) -> dict:
    p = Path(run_dir) / "signature.json"
    if not p.exists():
        raise DomainsiftError(f"{run_dir}: not a domainsift run directory (no signature.json)")
    return json.loads(p.read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------ embed and cluster

def write_embedding(out_dir: str | os.PathLike, vectors: np.ndarray, ids, sig: dict) -> Path:
    """An embed run: ``embeddings.npy`` (one row per kept line), ``ids.tsv`` (``file<TAB>line``)
    and ``signature.json`` last."""
    from ._atomic import save_npy
    from .corpus import write_lines
    out = Path(out_dir)
    (out / SIGNATURE).unlink(missing_ok=True)
    save_npy(out / EMBEDDINGS, vectors)
    write_lines(out / EMBED_IDS, (f"{f}\t{n}" for f, n in ids))
    save_json(out / SIGNATURE, sig)
    return out / EMBEDDINGS


def write_clustering(out_dir: str | os.PathLike, result: dict, ids, labels, outliers: list | None,
                     sentence_map: dict) -> Path:
    """A cluster run: ``clusters.tsv`` (the cluster of every line), ``outliers.tsv``, ``map.json``
    (the report's sentence map) and ``clustering.json`` last."""
    from .corpus import write_lines
    out = Path(out_dir)
    (out / CLUSTERING).unlink(missing_ok=True)
    write_lines(out / CLUSTERS, ["file\tline\tcluster"] + [f"{f}\t{line}\t{int(c)}" for (f, line), c in zip(ids, labels)])
    result["assignments"] = {**result.get("assignments", {}), "file": CLUSTERS}
    if outliers is not None:
        write_lines(out / OUTLIERS, ["gold\tcluster_domain\tlength\ttext"] +
                    [f"{o['gold']}\t{o['cluster_domain']}\t{o['length']}\t{o['text']}" for o in outliers])
    save_json(out / MAP, sentence_map)
    save_json(out / CLUSTERING, result)
    return out / CLUSTERING


def read_clusters(run_dir: str | os.PathLike) -> list[str]:
    """The cluster id of every line of a ``domainsift cluster`` run (its ``clusters.tsv``), in order."""
    from .corpus import iter_raw_lines
    from .errors import InputError
    tsv = Path(run_dir) / CLUSTERS
    if not tsv.exists():
        raise InputError(f"{run_dir}: no {CLUSTERS} (is this a `domainsift cluster` output directory "
                         f"of version 0.4.0 or later?)")
    labels, header = [], None
    for n, line in iter_raw_lines(tsv):
        fields = line.split("\t")
        if header is None:
            header = fields
            if header[-1:] != ["cluster"]:
                raise InputError(f"{tsv}:1: expected a header ending in 'cluster', got {header}")
            continue
        if len(fields) != len(header) or not fields[-1].lstrip("-").isdigit():
            raise InputError(f"{tsv}:{n}: expected {len(header)} tab-separated fields ending in a cluster id")
        labels.append(fields[-1])
    return labels


def write_eval(run_dir: str | os.PathLike, result: dict) -> None:
    save_json(Path(run_dir) / "eval.json", result)
