"""``domainsift adapt``: paper 003's generalised unsupervised domain adaptation (GUDA), end to end.

Given the old domain's bitext (source -> target), the new domain's source-language sentences (the in-domain
set) and a generic target-language pool:

1. **select** the pool's lines of the new domain (any method through a :class:`~domainsift.spec.RunSpec`;
   ``crosslingual`` reads the source-language in-domain set against the target-language pool), or take
   the target-language sentences from a file (``selected``). A method that compares one language
   (moore-lewis, finetune, cosine on an English encoder) selects with ``select_on="translated"``: the
   in-domain set is first translated into the pool's language by the old-domain forward model (step 4's,
   trained first; ``query.tgt``), as paper 003's CED baseline crosses languages through the old bitext;
2. train a **reverse** model (target -> source) on the old bitext, or take one (``reverse``);
3. **back-translate** the selected sentences into a pseudo-bitext (``pseudo.src``/``pseudo.tgt``);
4. with ``start="warm"``, train (or take: ``base``) the forward model on the old bitext and start from it;
   ``cold`` starts from nothing;
5. train the forward model on the pseudo-bitext and the old bitext with the discriminators
   (:mod:`domainsift.nmt.guda`: ``losses`` bi, bi+s, bi+t, bi+s+t);
6. with a ``test`` bitext of the new domain, translate it and record BLEU and chrF.

Every step keeps its result under ``OUT`` (``select/``, ``reverse/``, ``pseudo.*``, ``base/``, ``query.*``,
``model/``)
and a run started again takes each step that holds the same result (the same selection, a model of the
same identity: settings, warm start and texts) and redoes or resumes the others (a training from its last
epoch): a changed input never reuses a stale step.
``OUT/adapt.json`` says what ran.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .._internal.errors import DomainsiftError, InputError

SELECT, REVERSE, BASE, MODEL = "select", "reverse", "base", "model"
PSEUDO_SRC, PSEUDO_TGT, PSEUDO_HOW, RECORD = "pseudo.src", "pseudo.tgt", "pseudo.json", "adapt.json"
QUERY_TGT, QUERY_HOW = "query.tgt", "query.json"
STARTS = ("warm", "cold")
SELECT_ON = ("source", "translated")


def adapt(old: tuple, dev: tuple, source, out_dir: str | os.PathLike, selection=None,
          selected: str | os.PathLike | None = None, reverse: str | os.PathLike | None = None,
          base: str | os.PathLike | None = None, start: str = "warm", losses: str = "bi+s+t",
          lambda_old: float = 1.0, lambda_src: float = 1.0, lambda_tgt: float = 1.0, settings=None,
          test: tuple | None = None, beam: int = 5, backend: str = "generate", select_on: str = "source",
          progress: bool = False) -> dict:
    """Run GUDA (the module docstring). ``old``, ``dev``, ``test``: ``(source file, target file)``; ``source``:
    the new domain's source-language sentences (a file, or a list of files); ``selection``: a :class:`~domainsift.spec.RunSpec` whose
    rule chooses the target-language lines (its ``out`` is set to ``OUT/select``), or ``selected``: a file of
    them; ``settings``: a :class:`~domainsift.nmt.trainer.TrainSettings` for every model trained here;
    ``beam``, ``backend``: the back-translation's and the test's decoding (``generate``, or ``ctranslate2``:
    int8, the extra ``ct2``); ``select_on``: ``source`` (the selection reads the in-domain set as given) or
    ``translated`` (the in-domain set translated into the pool's language by the old-domain model, ``base``
    or trained here, for a method that compares one language).
    Returns ``adapt.json``'s contents."""
    from .._internal.atomic import atomic_open, save_json
    from .._internal.signature import make_signature, signature_string
    from ..io.corpus import read_corpus
    from ..nmt import check_disjoint, read_bitext, score_translation, translate
    from ..nmt.data import Bitext
    from ..nmt.decode import check_backend, model_folder
    from ..nmt.guda import Mixing
    from ..nmt.trainer import RECORD as NMT_RECORD
    from ..nmt.trainer import TrainSettings, ensure_trained
    settings = (settings or TrainSettings()).resolved()
    check_backend(backend)
    Mixing.check_options(losses, lambda_old, lambda_src, lambda_tgt)
    if start not in STARTS:
        raise DomainsiftError(f"--start must be one of {', '.join(STARTS)}, got {start!r}")
    if (selection is None) == (selected is None):
        raise DomainsiftError("give the target-language lines to adapt to: a selection (--method ... --pool ... "
                              "--top N) or --selected FILE, not both")
    if select_on not in SELECT_ON:
        raise DomainsiftError(f"--select-on must be one of {', '.join(SELECT_ON)}, got {select_on!r}")
    if select_on == "translated" and selection is None:
        raise DomainsiftError("--select-on translated translates the in-domain set for a selection; --selected "
                              "FILE is already chosen")
    if base is not None and start == "cold" and select_on != "translated":
        raise DomainsiftError("--base is the warm start's model (or, with --select-on translated, the in-domain "
                              "set's translator); a cold start trains from nothing")
    if selection is not None:
        if selection.rule is None or selection.mixture:
            raise DomainsiftError("the selection needs one target and a rule (--top N or --fraction F)")
        selection.check()
    for folder in (reverse, base):  # a given model folder that is not one: refused before any work
        if folder is not None:
            model_folder(folder)
    old_b, dev_b = read_bitext(*old), read_bitext(*dev)
    src_lines = read_corpus([str(source)] if isinstance(source, (str, os.PathLike)) else
                            [str(f) for f in source]).texts
    test_b = read_bitext(*test) if test else None
    check_disjoint(old_b, dev_b, "the dev set")
    if test_b is not None:
        check_disjoint(old_b, test_b, "the test set")
    mixing = Mixing(old_b, tuple(s.strip() for s in src_lines), losses, lambda_old, lambda_src, lambda_tgt)
    mixing.check()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    steps = {}

    def trained(folder: Path, train, dev, init=None, mix=None) -> dict:
        return ensure_trained(folder, train, dev, settings, init, mix, progress)

    base_dir = Path(base) if base is not None else out / BASE  # the old-domain forward model

    # 1. the new domain's target-language lines
    if selection is not None:
        from dataclasses import replace

        from .. import rundir
        from .._internal.errors import LanguageMismatch
        from ..pipeline.run import run
        if select_on == "translated":  # the in-domain set in the pool's language, by the old-domain model
            if base is None:
                trained(base_dir, old_b, dev_b)
            query = _decoded(base_dir, [t.strip() for t in selection.in_domain.texts if t.strip()],
                             out / QUERY_TGT, out / QUERY_HOW, beam, backend, progress, stale=out / SELECT)
            if not any(q.strip() for q in query):
                raise InputError(f"{out / QUERY_TGT}: all {len(query)} translations of the in-domain set came out "
                                 f"empty; the old-domain model ({base_dir}) needs more training")
            selection = replace(selection, targets={"": read_corpus([str(out / QUERY_TGT)])})
            steps["query"] = {"file": str(out / QUERY_TGT), "model": str(base_dir), "n": len(query)}
        sel_dir = out / SELECT
        try:  # a finished run of the same inputs resumes in a pass; another is refused
            run(selection.with_out(sel_dir))
        except LanguageMismatch as e:
            raise LanguageMismatch(f"{e}; or, in adapt, --select-on translated (the in-domain set translated "
                                   f"into the pool's language by the old-domain model)") from None
        chosen = [text for text, _ in rundir.selection_records(sel_dir)]
        steps["select"] = {"dir": str(sel_dir), "method": selection.method,
                           "signature": rundir.read_signature(sel_dir).get("signature")}
    else:
        chosen = read_corpus([str(selected)]).texts
        steps["select"] = {"file": str(Path(selected).resolve())}
    chosen = [t.strip() for t in chosen if t.strip()]
    if not chosen:
        raise InputError("the selection holds no line to back-translate")
    steps["select"]["n"] = len(chosen)

    # 2. the reverse model (target -> source) on the old bitext
    rev_dir = Path(reverse) if reverse is not None else out / REVERSE
    if reverse is None:
        def flip(b):
            return Bitext(b.tgt, b.src, (b.files[1], b.files[0]))
        trained(rev_dir, flip(old_b), flip(dev_b))
    steps["reverse"] = str(rev_dir)

    # 3. back-translation: the pseudo-bitext, made again when the lines, the reverse model or the decoding
    # differ from the last one's
    pseudo_src, pseudo_tgt, pseudo_how = out / PSEUDO_SRC, out / PSEUDO_TGT, out / PSEUDO_HOW
    how = {"reverse": json.loads((rev_dir / NMT_RECORD).read_text(encoding="utf-8")).get("identity"),
           "beam": beam, "backend": backend}
    if not (pseudo_src.is_file() and pseudo_tgt.is_file() and pseudo_how.is_file()
            and json.loads(pseudo_how.read_text(encoding="utf-8")) == how
            and pseudo_tgt.read_text(encoding="utf-8").splitlines() == chosen):
        pseudo_how.unlink(missing_ok=True)
        back = translate(rev_dir, chosen, beam=beam, progress=progress, backend=backend)
        with atomic_open(pseudo_tgt.with_suffix(".tgt.next")) as fh:
            fh.write("".join(t + "\n" for t in chosen))
        with atomic_open(pseudo_src) as fh:
            fh.write("".join(b + "\n" for b in back))
        os.replace(pseudo_tgt.with_suffix(".tgt.next"), pseudo_tgt)
        save_json(pseudo_how, how)  # last: the pair is complete
    back = pseudo_src.read_text(encoding="utf-8").splitlines()
    keep = [k for k, b in enumerate(back) if b.strip()]  # a back-translation can come out empty
    pseudo = Bitext(tuple(back[k] for k in keep), tuple(chosen[k] for k in keep), (str(pseudo_src), str(pseudo_tgt)))
    if not len(pseudo):
        raise InputError(f"{pseudo_src}: all {len(chosen)} back-translations came out empty; the reverse model "
                         f"({rev_dir}) needs more training")
    steps["pseudo"] = {"n": len(pseudo), "empty_dropped": len(chosen) - len(pseudo)}

    # 4. the warm start's model
    init = None
    if start == "warm":
        init = base_dir
        if base is None and select_on != "translated":  # the translated selection trained it in step 1
            trained(init, old_b, dev_b)
    if start == "warm" or select_on == "translated":
        steps["base"] = str(base_dir)

    # 5. GUDA's training
    model_dir = out / MODEL
    record = trained(model_dir, pseudo, dev_b, init, mixing)
    steps["model"] = str(model_dir)
    result = {"start": start, **mixing.describe(), "steps": steps, "model": record.get("signature"),
              "best_epoch": record.get("best_epoch"), "dev_loss": record.get("dev_loss")}

    # 6. the new domain's test set
    if test_b is not None:
        hyp = translate(model_dir, test_b.src, beam=beam, progress=progress, backend=backend)
        result["test"] = {"files": list(test_b.files), "beam": beam, "backend": backend,
                          **score_translation(hyp, test_b.tgt, test_b.files[1])}
    sig = make_signature("adapt", model="marian", seed=settings.seed, start=start, **mixing.describe(),
                         preset=settings.preset, beam=beam, backend=backend, select_on=select_on,
                         selection=steps["select"].get("signature") or steps["select"].get("file"))
    result["signature"] = signature_string(sig)
    save_json(out / RECORD, result)
    return result


def _decoded(model_dir: Path, lines: list, out_file: Path, how_file: Path, beam: int, backend: str,
             progress: bool, stale: Path) -> list:
    """``lines`` translated by the model in ``model_dir``, one per line of ``out_file``: the file's lines when
    ``how_file`` says they were made from the same lines by the same model and decoding, made again
    otherwise (``how_file`` last: the pair is complete), and then the folder ``stale`` (what was made from
    the old translations) is removed first."""
    import shutil
    import hashlib

    from .._internal.atomic import atomic_open, save_json
    from .._internal.checksums import hash_texts
    from ..nmt import translate
    from ..nmt.trainer import RECORD as NMT_RECORD
    h = hashlib.sha256()
    hash_texts(h, lines)
    how = {"model": json.loads((model_dir / NMT_RECORD).read_text(encoding="utf-8")).get("identity"),
           "lines": h.hexdigest(), "beam": beam, "backend": backend}
    if out_file.is_file() and how_file.is_file() and json.loads(how_file.read_text(encoding="utf-8")) == how:
        return out_file.read_text(encoding="utf-8").splitlines()
    how_file.unlink(missing_ok=True)
    shutil.rmtree(stale, ignore_errors=True)
    done = translate(model_dir, lines, beam=beam, progress=progress, backend=backend)
    with atomic_open(out_file) as fh:
        fh.write("".join(t + "\n" for t in done))
    save_json(how_file, how)
    return done


__all__ = ["adapt"]
