"""``domainsift nmt train | translate | score``: the model trained on a selection, and its BLEU.

``train`` reads the training and dev bitexts (and a test bitext, refused when the training data holds any
of its sentences), trains (:func:`domainsift.nmt.train_nmt`; resumable), and with a test set translates it
and records BLEU and chrF in ``nmt.json``. ``translate`` writes one translation a line (atomically);
``score`` prints and returns BLEU and chrF of a file of hypotheses against its references."""

from __future__ import annotations

import os

from .._internal.errors import InputError


def train_job(train: tuple, dev: tuple, out_dir: str | os.PathLike, test: tuple | None = None, settings=None,
              init_from: str | None = None, beam: int = 5, progress: bool = False, overwrite: bool = False) -> dict:
    """``train``, ``dev``, ``test``: ``(source file, target file)``; returns ``nmt.json``'s contents.

    Two steps: the training (kept when the folder holds the same one) and, with a test set, its translation
    (``test.hyp``, kept beside the score) and score, kept when made from the same model, test and beam."""
    from .. import rundir
    from .._internal.atomic import atomic_open, save_json
    from ..nmt import check_disjoint, read_bitext, score_translation, translate
    from ..nmt.trainer import TrainSettings
    from ..pipeline.nmt import trained
    settings = (settings or TrainSettings()).resolved()  # a bad setting stops before any reading
    if beam < 1:
        raise InputError(f"--beam must be at least 1, got {beam}")
    tr, dv = read_bitext(*train), read_bitext(*dev)
    te = read_bitext(*test) if test else None
    check_disjoint(tr, dv, "the dev set")
    if te is not None:
        check_disjoint(tr, te, "the test set")
        check_disjoint(dv, te, "the test set", "the dev set", "a model's epoch is never chosen on its test set")
    record = trained(out_dir, tr, dv, settings, init_from=init_from, progress=progress, overwrite=overwrite)
    if te is None:
        return record
    identity = rundir.identity(record["identity"], beam, texts=(te.src, te.tgt))  # the test step's
    hyp_file = rundir.path(out_dir, rundir.JUDGE_HYP)
    with rundir.claim(out_dir, "nmt") as held:
        held.earlier = {}  # the model stays: nothing it wrote is stale
        kept = record.get("test") if record.get("test", {}).get("identity") == identity else None
        if kept is not None and hyp_file.is_file():
            from .._internal.checksums import file_sha256
            if file_sha256(hyp_file) == kept.get("sha256"):
                return record
        hyp = translate(out_dir, te.src, beam=beam, progress=progress)
        with atomic_open(hyp_file) as fh:
            fh.write("".join(h + "\n" for h in hyp))
        from .._internal.checksums import file_sha256
        record["test"] = {"files": list(te.files), "beam": beam, **score_translation(hyp, te.tgt, te.files[1]),
                          "translations": rundir.JUDGE_HYP, "sha256": file_sha256(hyp_file),
                          "identity": identity}
        save_json(rundir.path(out_dir, rundir.NMT_RECORD), record)
    return record


def translate_job(model_dir: str | os.PathLike, input_file: str | os.PathLike, out_file: str | os.PathLike,
                  beam: int = 5, progress: bool = False, backend: str = "generate") -> int:
    """Translate every line of ``input_file`` into ``out_file`` (one a line; empty lines stay empty)."""
    from .._internal.atomic import atomic_open
    from ..io.corpus import read_corpus
    from ..nmt import load_nmt, translate
    if os.path.realpath(input_file) == os.path.realpath(out_file):
        raise InputError(f"{out_file}: is the input; choose another output file")
    from ..io.corpus import read_lines
    nmt = load_nmt(model_dir)
    if os.path.realpath(out_file).startswith(os.path.realpath(model_dir) + os.sep):
        raise InputError(f"{out_file}: inside the model folder {model_dir}, whose files the model needs; choose an "
                         "output file elsewhere")
    lines = read_corpus([input_file])
    hyp = translate(nmt, lines.texts, beam=beam, progress=progress, backend=backend)
    by_line = {ln: h for (_, ln), h in zip(lines.ids, hyp)}
    n = len(read_lines(input_file))  # every line, the empty ones at the end too
    with atomic_open(out_file) as fh:
        for ln in range(1, n + 1):
            fh.write(by_line.get(ln, "") + "\n")
    return len(hyp)


def score_job(hyp_file: str | os.PathLike, ref_file: str | os.PathLike, out: str | os.PathLike | None = None,
              baseline: str | os.PathLike | None = None, seed: int = 12345) -> dict:
    """BLEU, chrF and chrF++ of the lines of ``hyp_file`` against ``ref_file`` (aligned line by line); with
    ``baseline`` (another system's file), the paired bootstrap of ``hyp_file`` against it
    (:func:`domainsift.nmt.significance.paired_bootstrap`, ``seed``) under ``vs_baseline``."""
    from .._internal.atomic import save_json
    from ..io.corpus import read_lines
    from ..nmt import score_translation
    for p in (hyp_file, ref_file) + ((baseline,) if baseline is not None else ()):
        if not os.path.isfile(p):
            raise InputError(f"{p}: no such file")
    hyp, ref = read_lines(hyp_file), read_lines(ref_file)
    result = {"hypotheses": str(hyp_file), "references": str(ref_file),
              **score_translation(hyp, ref, str(hyp_file))}
    if baseline is not None:
        from ..nmt.significance import paired_bootstrap
        base = read_lines(baseline)
        if len(base) != len(ref):
            raise InputError(f"{baseline}: {len(base)} lines against {len(ref)} references; they must align line "
                             "by line")
        result["vs_baseline"] = {"file": str(baseline), **paired_bootstrap(base, hyp, ref, seed=seed)}
    if out is not None:
        save_json(out, result)
    return result


__all__ = ["train_job", "translate_job", "score_job"]
