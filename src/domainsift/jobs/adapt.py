"""``domainsift adapt``: paper 003's generalised unsupervised domain adaptation (GUDA), end to end.

Given the old domain's bitext (source -> target), the new domain's source-language sentences (the in-domain
set) and a generic target-language pool:

1. **select** the pool's lines of the new domain (any method through a :class:`~domainsift.spec.RunSpec`;
   ``crosslingual`` reads the source-language in-domain set against the target-language pool), or take
   the target-language sentences from a file (``selected``);
2. train a **reverse** model (target -> source) on the old bitext, or take one (``reverse``);
3. **back-translate** the selected sentences into a pseudo-bitext (``pseudo.src``/``pseudo.tgt``);
4. with ``start="warm"``, train (or take: ``base``) the forward model on the old bitext and start from it;
   ``cold`` starts from nothing;
5. train the forward model on the pseudo-bitext and the old bitext with the discriminators
   (:mod:`domainsift.nmt.guda`: ``losses`` bi, bi+s, bi+t, bi+s+t);
6. with a ``test`` bitext of the new domain, translate it and record BLEU and chrF.

Every step keeps its result under ``OUT`` (``select/``, ``reverse/``, ``pseudo.*``, ``base/``, ``model/``)
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
STARTS = ("warm", "cold")


def adapt(old: tuple, dev: tuple, source, out_dir: str | os.PathLike, selection=None,
          selected: str | os.PathLike | None = None, reverse: str | os.PathLike | None = None,
          base: str | os.PathLike | None = None, start: str = "warm", losses: str = "bi+s+t",
          lambda_old: float = 1.0, lambda_src: float = 1.0, lambda_tgt: float = 1.0, settings=None,
          test: tuple | None = None, beam: int = 5, backend: str = "generate", progress: bool = False) -> dict:
    """Run GUDA (the module docstring). ``old``, ``dev``, ``test``: ``(source file, target file)``; ``source``:
    the new domain's source-language sentences (a file, or a list of files); ``selection``: a :class:`~domainsift.spec.RunSpec` whose
    rule chooses the target-language lines (its ``out`` is set to ``OUT/select``), or ``selected``: a file of
    them; ``settings``: a :class:`~domainsift.nmt.trainer.TrainSettings` for every model trained here;
    ``beam``, ``backend``: the back-translation's and the test's decoding (``generate``, or ``ctranslate2``:
    int8, the extra ``ct2``).
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
    if base is not None and start == "cold":
        raise DomainsiftError("--base is the warm start's model; a cold start trains from nothing")
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

    # 1. the new domain's target-language lines
    if selection is not None:
        from .. import rundir
        from ..pipeline.run import run
        sel_dir = out / SELECT
        run(selection.with_out(sel_dir))  # a finished run of the same inputs resumes in a pass; another is refused
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

    def trained(folder: Path, train, dev, init=None, mix=None) -> dict:
        return ensure_trained(folder, train, dev, settings, init, mix, progress)

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
        init = Path(base) if base is not None else out / BASE
        if base is None:
            trained(init, old_b, dev_b)
        steps["base"] = str(init)

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
                         preset=settings.preset, beam=beam, backend=backend,
                         selection=steps["select"].get("signature") or steps["select"].get("file"))
    result["signature"] = signature_string(sig)
    save_json(out / RECORD, result)
    return result


__all__ = ["adapt"]
