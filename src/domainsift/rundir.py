"""The run directory: the one module that writes and reads it.

A *score directory* (``domainsift score``, ``combine``):

- ``scores.npy``      float64 scores (n,), in pool order;
- ``scores.tsv``      ``file<TAB>line<TAB>score`` for every pool record;
- ``pool.json``       the pool: resolved file paths (and the other side's for a parallel pool),
                      how they were read, every record's id, and each file's size and SHA-256;
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

from ._atomic import atomic_open, save_json, save_npy
from .corpus import Corpus, file_suffix
from .errors import DomainsiftError

SCORE_FILES = ("scores.npy", "pool.json", "signature.json")
# outputs computed from a directory's scores: stale once the scores are rewritten
DERIVED = ("selected.ids.tsv", "selection.json", "eval.json")
# every name a score or selection run writes or replaces in its directory
OUTPUTS = SCORE_FILES + ("scores.tsv", "run.json") + DERIVED + ("selected.*",)


def resolve(path: str | os.PathLike) -> str:
    return os.path.realpath(str(path))


def file_fingerprint(path: str | os.PathLike) -> dict:
    """Size and SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return {"size": os.path.getsize(path), "sha256": h.hexdigest()}


def pool_manifest(pool: Corpus, reader: dict | None = None) -> dict:
    """The pool as ``pool.json`` records it: resolved paths, reader, ids and file fingerprints."""
    real = {f: resolve(f) for f in list(pool.files) + list(pool.target_files)}
    for f in real.values():
        if "\t" in f or "\n" in f or "\r" in f:
            raise DomainsiftError(f"{f!r}: a file name with a tab or line break cannot be recorded in "
                                  "scores.tsv and selected.ids.tsv; rename the file")
    files = [real[f] for f in pool.files]
    targets = [real[f] for f in pool.target_files]
    fingerprints = {real[f]: file_fingerprint(f) for f in real if os.path.isfile(f)}
    return {"files": files, "target_files": targets, "n": len(pool), "reader": dict(reader or {}),
            "ids": [[real.get(f, f), n] for f, n in pool.ids], "fingerprints": fingerprints}


@dataclass
class ScoreRun:
    """What a score directory holds."""

    dir: Path
    scores: np.ndarray
    pool: dict
    signature: dict

    @property
    def ids(self) -> list[tuple[str, int]]:
        return [(f, int(n)) for f, n in self.pool["ids"]]

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


def write_scores(out_dir: str | os.PathLike, scores: np.ndarray, pool: dict, sig: dict,
                 timings: dict | None = None) -> None:
    """Write a score directory (see the module docstring); ``signature.json`` comes last."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (len(pool["ids"]),):
        raise RuntimeError(f"{len(scores)} scores for {len(pool['ids'])} pool records")
    _remove([out / "signature.json", out / "alignment.json", out / "alignment.png"] + _derived_files(out))
    save_npy(out / "scores.npy", scores)
    with atomic_open(out / "scores.tsv") as fh:
        fh.write("file\tline\tscore\n")
        for (f, line), s in zip(pool["ids"], scores):
            fh.write(f"{f}\t{line}\t{float(s)!r}\n")  # exact: re-read, it orders as scores.npy does
    save_json(out / "pool.json", pool)
    save_json(out / "run.json", {"timings": timings or {}})
    save_json(out / "signature.json", sig)


def load_scores(score_dir: str | os.PathLike) -> ScoreRun:
    """Read a score directory; a missing file or scores that do not match the pool is an error."""
    d = Path(score_dir)
    for name in SCORE_FILES:
        if not (d / name).exists():
            raise DomainsiftError(f"{d}: not a score directory (no {name}); run 'domainsift score' first")
    try:
        scores = np.load(d / "scores.npy")
        pool = json.loads((d / "pool.json").read_text(encoding="utf-8"))
        sig = json.loads((d / "signature.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DomainsiftError(f"{d}: unreadable score directory: {exc}") from None
    if scores.shape != (len(pool.get("ids", [])),):
        raise DomainsiftError(f"{d}: {scores.shape[0] if scores.ndim else 0} scores for "
                              f"{len(pool.get('ids', []))} pool records")
    return ScoreRun(d, scores, pool, sig)


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
    from .corpus import iter_texts, read_columns_parallel
    reader = run.pool.get("reader") or {}
    fmt = _pool_format(run.pool)
    wanted = {run.ids[i]: float(run.scores[i]) for i in idx}
    text, target = {}, {}
    if reader.get("field_target"):
        c = read_columns_parallel(run.pool["files"], reader.get("field", "text"), reader["field_target"], fmt)
        for i, t, g in zip(c.ids, c.texts, c.targets):
            if i in wanted:
                text[i], target[i] = t, g
    else:
        for f in run.pool["files"]:
            for n, t in iter_texts(f, reader.get("format"), reader.get("column", 0), reader.get("field", "text")):
                if (f, n) in wanted:
                    text[(f, n)] = t
        tmap = dict(zip(run.pool["files"], run.pool.get("target_files") or []))
        for f, g in tmap.items():
            for n, t in iter_texts(g, reader.get("format"), reader.get("column", 0), reader.get("field", "text")):
                if (f, n) in wanted:
                    target[(f, n)] = t
    order = [i for i in run.ids if i in wanted]  # pool order, as the in-kind outputs
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
    ids = run.ids
    selected = {ids[i] for i in idx}
    fmt = _pool_format(run.pool)
    kind = "parquet" if fmt in COLUMNAR else ("jsonl" if fmt == "jsonl" else "text")
    if out_format is not None and out_format not in OUT_FORMATS:
        raise DomainsiftError(f"unknown --out-format '{out_format}' (one of: {', '.join(OUT_FORMATS)})")
    if out_format not in (None, kind):
        n, outputs = _write_converted(out, run, idx, out_format)
    elif fmt in COLUMNAR:
        n = write_selected_rows(out / "selected.parquet", run.pool["files"], fmt,
                                {ids[i]: float(run.scores[i]) for i in idx})
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
        for rank, i in enumerate(idx, 1):
            f, ln = ids[i]
            fh.write(f"{f}\t{ln}\t{float(run.scores[i])!r}\t{rank}\n")
    if not same:  # a selection elsewhere carries its pool, so evaluate and downstream read it alone
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


def write_eval(run_dir: str | os.PathLike, result: dict) -> None:
    save_json(Path(run_dir) / "eval.json", result)
