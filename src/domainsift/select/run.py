"""Score once, select many: the run directory of a selection.

Scoring is resumable: the pool is scored in chunks kept under ``DIR/.resume/``
(with the fitted model, for selectors that can save one), so a killed run,
started again with the same inputs and parameters, neither refits nor rescores
what it had finished. The folder is removed when the run completes.

``run_score`` writes to a run directory:

- ``scores.npy``  float64 scores (n,), in pool order;
- ``scores.tsv``  ``file<TAB>line<TAB>score`` for every pool line;
- ``pool.json``   the pool's files (and target files for a parallel pool);
- ``signature.json`` method, parameters, model, seed, version, inputs.

``run_select`` reads those (no re-encoding) and writes ``selected.<suffix>``
(the pool's own format; both sides for a parallel pool), ``selected.ids.tsv``
and ``selection.json``; the signature gains the selection rule.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from .._atomic import atomic_open, save_json, save_npy
from ..corpus import Corpus, file_suffix, write_selected_lines
from ..errors import DomainsiftError
from ..signature import make_signature, signature_string
from . import get_selector
from .base import choose

log = logging.getLogger(__name__)


RESUME_DIR = ".resume"


def _fingerprint(method: str, params: dict, in_domain: Corpus, pool: Corpus) -> str:
    """Identifies a scoring job: method, parameters, in-domain texts, pool ids and texts."""
    h = hashlib.sha256()
    keep = {k: repr(v) for k, v in sorted(params.items()) if k not in ("progress", "cache_dir")}
    h.update(json.dumps([method, keep], sort_keys=True).encode())
    for t in in_domain.texts:
        h.update(b"\x00" + t.encode())
    h.update(b"\x01")
    for (f, n), t in zip(pool.ids, pool.texts):
        h.update(f"\x00{f}:{n}:".encode() + t.encode())
    return h.hexdigest()[:24]


def score_resumable(selector, in_domain: Corpus, pool: Corpus, state: Path, chunk_size: int = 8192,
                    progress: bool = False) -> np.ndarray:
    """Fit (or load the saved fit) and score the pool chunk by chunk, keeping each finished chunk."""
    model_dir = state / "model"
    if hasattr(selector, "load_state") and model_dir.exists():  # save_state renames a finished folder
        log.info("resuming: loading the fitted %s model from %s", selector.name, model_dir)
        selector.load_state(model_dir)
    else:
        selector.fit(in_domain.texts, pool.texts)
        if hasattr(selector, "save_state"):
            selector.save_state(model_dir)
    if not getattr(selector, "per_sentence", True):  # e.g. a random stream: score in one go
        return np.asarray(selector.score(pool.texts), dtype=np.float64)
    parts = []
    from tqdm.auto import tqdm
    starts = range(0, len(pool), chunk_size)
    for i, start in enumerate(tqdm(starts, desc="score chunks", disable=not progress or len(starts) < 2,
                                   leave=False)):
        path = state / f"scores-{i:06d}.npy"
        if path.exists():
            parts.append(np.load(path))
            continue
        part = np.asarray(selector.score(pool.texts[start:start + chunk_size]), dtype=np.float64)
        save_npy(path, part)
        parts.append(part)
    return np.concatenate(parts) if parts else np.zeros(0)


def run_score(method: str, in_domain: Corpus, pool: Corpus, out_dir: str | os.PathLike,
              params: dict | None = None, seed: int = 0, reader: dict | None = None,
              chunk_size: int = 8192) -> dict:
    """Fit ``method`` on the in-domain set and the pool, score the pool, write the run directory.

    ``reader`` (format, column, field) records how the pool files were read. A killed
    run resumes from its finished chunks (see the module docstring).
    """
    params = dict(params or {})
    params.setdefault("seed", seed)
    t0 = time.time()
    selector = get_selector(method, **params)
    state = Path(out_dir) / RESUME_DIR / _fingerprint(method, params, in_domain, pool)
    scores = score_resumable(selector, in_domain, pool, state, chunk_size,
                             progress=bool(params.get("progress")))
    elapsed = time.time() - t0
    if scores.shape != (len(pool),):
        raise RuntimeError(f"{method} returned scores of shape {scores.shape} for {len(pool)} lines")
    out = Path(out_dir)
    sp = selector.signature_params()
    model = sp.pop("model", None) or sp.pop("embedder", None) or getattr(selector, "model_name", None)
    sp.pop("seed", None)
    sig = make_signature(method, model=model, seed=seed, **sp, in_domain=in_domain.files,
                         n_in_domain=len(in_domain), pool=pool.files, pool_target=pool.target_files or None,
                         n_pool=len(pool), probabilistic=bool(selector.probabilistic),
                         score_seconds=round(elapsed, 1))
    metrics = getattr(selector, "holdout_metrics_", None)
    if metrics is not None:
        sig["classifier_holdout"] = metrics
    write_score_dir(out, scores, {"files": pool.files, "target_files": pool.target_files,
                                  "n": len(pool), "reader": reader or {},
                                  "ids": [[f, n] for f, n in pool.ids]}, sig)
    shutil.rmtree(out / RESUME_DIR, ignore_errors=True)
    return sig


def write_score_dir(out: Path, scores: np.ndarray, pool: dict, sig: dict) -> None:
    """Write a score directory: scores.npy, scores.tsv, pool.json (files, ids, ...), signature.json.

    Each file is written under a temporary name and renamed; signature.json, which
    marks the directory as a score directory, comes last."""
    out = Path(out)
    save_npy(out / "scores.npy", scores)
    with atomic_open(out / "scores.tsv") as fh:
        fh.write("file\tline\tscore\n")
        for (f, line), s in zip(pool["ids"], scores):
            fh.write(f"{f}\t{line}\t{float(s)!r}\n")  # exact: re-read, it orders as scores.npy does
    save_json(out / "pool.json", pool)
    save_json(out / "signature.json", sig)


def _output_names(files: Sequence[str], target_files: Sequence[str]) -> tuple[str, str | None]:
    src = "selected" + file_suffix(files[0])
    if not target_files:
        return src, None
    tgt = "selected" + file_suffix(target_files[0])
    if tgt == src:
        src, tgt = "selected.src" + file_suffix(files[0]), "selected.tgt" + file_suffix(target_files[0])
    return src, tgt


def load_scores(score_dir: str | os.PathLike):
    d = Path(score_dir)
    for name in ("scores.npy", "pool.json", "signature.json"):
        if not (d / name).exists():
            raise DomainsiftError(f"{d}: not a score directory (no {name}); run 'domainsift score' first")
    scores = np.load(d / "scores.npy")
    pool = json.loads((d / "pool.json").read_text())
    sig = json.loads((d / "signature.json").read_text())
    return scores, pool, sig


def run_select(score_dir: str | os.PathLike, out_dir: str | os.PathLike | None = None,
               top: int | None = None, fraction: float | None = None, threshold: float | None = None,
               positive: bool = False) -> dict:
    """Choose from saved scores and write the selected lines (no re-scoring)."""
    scores, pool, sig = load_scores(score_dir)
    idx = choose(scores, top=top, fraction=fraction, threshold=threshold, positive=positive,
                 probabilistic=bool(sig.get("probabilistic")))
    out = Path(out_dir or score_dir)
    ids = [tuple(pool["ids"][i]) for i in idx]
    selected = set(ids)
    src_name, tgt_name = _output_names(pool["files"], pool["target_files"])
    n = write_selected_lines(out / src_name, pool["files"], selected)
    outputs = [str(out / src_name)]
    if tgt_name:
        # the target side: same line numbers in the aligned target files
        tmap = dict(zip(pool["files"], pool["target_files"]))
        write_selected_lines(out / tgt_name, pool["target_files"], {(tmap[f], ln) for f, ln in selected})
        outputs.append(str(out / tgt_name))
    with atomic_open(out / "selected.ids.tsv") as fh:
        fh.write("file\tline\tscore\trank\n")
        for rank, i in enumerate(idx, 1):
            f, ln = pool["ids"][i]
            fh.write(f"{f}\t{ln}\t{float(scores[i])!r}\t{rank}\n")
    rule = {"top": top, "fraction": fraction, "threshold": threshold, "positive": positive or None}
    rule = {k: v for k, v in rule.items() if v is not None}
    selection = {"n_selected": int(n), "n_pool": int(len(scores)), "rule": rule, "outputs": outputs,
                 "score_dir": str(score_dir),
                 "min_selected_score": float(scores[idx].min()) if len(idx) else None}
    save_json(out / "selection.json", selection)
    new_sig = dict(sig)
    new_sig["selection"] = rule
    new_sig["signature"] = signature_string({**sig, **{f"select_{k}": v for k, v in rule.items()}})
    save_json(out / "signature.json", new_sig)
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
