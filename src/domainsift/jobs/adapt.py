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

import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import rundir
from .._internal.errors import DomainsiftError, InputError
from .._internal.options import finite, option, positive_int
from ..nmt.guda import LOSSES

SELECT, REVERSE, BASE, MODEL = rundir.ADAPT_SELECT, rundir.ADAPT_REVERSE, rundir.ADAPT_BASE, rundir.ADAPT_MODEL
PSEUDO_SRC, PSEUDO_TGT, PSEUDO_HOW, RECORD = rundir.PSEUDO_SRC, rundir.PSEUDO_TGT, rundir.PSEUDO_HOW, rundir.ADAPT
QUERY_TGT, QUERY_HOW = rundir.QUERY_TGT, rundir.QUERY_HOW
STARTS = ("warm", "cold")
SELECT_ON = ("source", "translated")
# a back-translation is degenerate when the reverse model repeats itself: warned about past these shares
MIN_DISTINCT, MAX_LOOPING = 0.8, 0.2
DEFAULT_BEAM = 5


def _train_settings():
    from ..nmt.trainer import TrainSettings
    return TrainSettings()


@dataclass(frozen=True)
class AdaptSettings:
    """How ``adapt`` runs, declared once: its command-line options are generated from these fields
    (:mod:`domainsift._internal.options`); ``train``: the :class:`~domainsift.nmt.trainer.TrainSettings`
    of every model trained here (``--nmt-*``)."""

    reverse: str | None = option(None, "a reverse (target -> source) model folder of 'nmt train' (default: trained "
                                       "on --old)", metavar="DIR")
    base: str | None = option(None, "the warm start's old-domain model, and --select-on translated's translator "
                                    "(default: trained on --old)", metavar="DIR")
    start: str = option("warm", "warm (default): train on from the old-domain model; cold: from nothing",
                        choices=STARTS)
    losses: str = option("bi+s+t", "bi: the bitext loss alone; +s: the source discriminator; +t: the target "
                                   "discriminator (paper 003's Table 5; default bi+s+t)", choices=LOSSES)
    lambda_old: float = option(1.0, "the weight of the old bitext in the NMT loss (lambda1); default 1", type=finite)
    lambda_src: float = option(1.0, "the weight of the old sources in the source discriminator's loss (lambda2); "
                                    "default 1", type=finite)
    lambda_tgt: float = option(1.0, "the weight of the old targets in the target discriminator's loss (lambda3); "
                                    "default 1", type=finite)
    select_on: str = option("source", "source (default): the selection reads --in-domain as given (crosslingual "
                                      "crosses the languages); translated: --in-domain translated into the pool's "
                                      f"language by the old-domain model first (OUT/{rundir.QUERY_TGT}), for a "
                                      "method that compares one language (moore-lewis, finetune, cosine on minilm)",
                            choices=SELECT_ON)
    beam: int = option(DEFAULT_BEAM, "beam size of the back-translation and --test", type=positive_int)
    backend: str = option("generate", "generate: transformers' beam search (default); ctranslate2: the model "
                                      "converted to int8 once (extra ct2), faster on a CPU "
                                      "(bench/results/nmt_speed.md)", flag="--nmt-backend",
                          choices=("generate", "ctranslate2"))
    train: object = field(default_factory=_train_settings)


def adapt(old: tuple, dev: tuple, source, out_dir: str | os.PathLike, selection=None,
          selected: str | os.PathLike | None = None, test: tuple | None = None,
          settings: AdaptSettings | None = None, progress: bool = False, overwrite: bool = False) -> dict:
    """Run GUDA (the module docstring). ``old``, ``dev``, ``test``: ``(source file, target file)``; ``source``:
    the new domain's source-language sentences (a file, or a list of files); ``selection``: a
    :class:`~domainsift.spec.RunSpec` whose rule chooses the target-language lines (its ``out`` is set to
    ``OUT/select``; the dev and test sets' target sentences are excluded from it), or ``selected``: a file
    of them; ``settings``: an :class:`AdaptSettings` (the models given or trained, the start, the losses
    and their weights, ``select_on``, the back-translation's and the test's decoding, and the
    :class:`~domainsift.nmt.trainer.TrainSettings` of every model trained here). ``select_on``:
    ``source`` (the selection reads the in-domain set as given) or ``translated`` (the in-domain set
    translated into the pool's language by the old-domain model, ``base`` or trained here, for a method
    that compares one language); ``backend``: ``generate``, or ``ctranslate2`` (int8, the extra ``ct2``).
    Every leak is refused before any work (one line naming the file and line): the old bitext, the new
    domain's sources and the selected lines against dev and test, and dev against test. ``out_dir`` is
    claimed for the run; a folder no domainsift run wrote is refused unless ``overwrite``.
    Returns ``adapt.json``'s contents."""
    from dataclasses import replace
    from ..nmt.guda import Mixing
    settings = settings or AdaptSettings()
    settings = replace(settings, train=settings.train.resolved())
    reverse, base = settings.reverse, settings.base
    _check_options(selection, selected, settings)
    for folder in (reverse, base):  # a given model folder that is not one: refused before any work
        if folder is not None:
            from ..nmt.decode import model_folder
            model_folder(folder)
    Mixing.check_options(settings.losses, settings.lambda_old, settings.lambda_src, settings.lambda_tgt)
    data = _read(old, dev, source, test, selected)
    _check_direction(reverse, old, flipped=True)
    _check_direction(base, old, flipped=False)
    import logging
    logging.getLogger(__name__).info("adapt: the model translates the language of %s (and of the new domain's "
                                     "sources) into that of %s (and of the selected lines)", old[0], old[1])
    mixing = Mixing(data["old"], tuple(data["source"]), settings.losses, settings.lambda_old, settings.lambda_src,
                    settings.lambda_tgt)
    mixing.check()
    if selection is not None:
        selection = _guarded(selection, data)
    with rundir.claim(out_dir, "adapt", overwrite=overwrite):
        run = _Run(Path(out_dir), data, settings.train, settings.beam, settings.backend, settings.select_on, progress)
        return _adapt(run, mixing, selection, selected, reverse, base, settings.start)


def _check_options(selection, selected, settings: AdaptSettings) -> None:
    base, start, select_on, backend, beam = (settings.base, settings.start, settings.select_on, settings.backend,
                                             settings.beam)
    from ..nmt.decode import check_backend
    check_backend(backend)
    if beam < 1:
        raise DomainsiftError(f"--beam must be at least 1, got {beam}")
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


def _read(old, dev, source, test, selected) -> dict:
    """Every input, read and checked against the others before any work: no leak of dev or test."""
    from ..io.corpus import read_corpus
    from ..nmt import check_disjoint, read_bitext
    from ..nmt.data import check_lines_disjoint
    old_b, dev_b = read_bitext(*old), read_bitext(*dev)
    files = [str(source)] if isinstance(source, (str, os.PathLike)) else [str(f) for f in source]
    src = read_corpus(files)
    test_b = read_bitext(*test) if test else None
    check_disjoint(old_b, dev_b, "the dev set", "the old bitext")
    for b, what in ((dev_b, "the dev set"), (test_b, "the test set")):
        if b is None:
            continue
        if b is test_b:
            check_disjoint(old_b, test_b, "the test set", "the old bitext")
            check_disjoint(dev_b, test_b, "the test set", "the dev set", "a model's epoch is never chosen on its "
                           "test set")
        check_lines_disjoint(src.texts, _where(files), b, 0, what,
                             "the new domain's sources must not hold the sentences the model is chosen or judged on")
    chosen = None
    if selected is not None:
        chosen = read_corpus([str(selected)]).texts
        for b, what in ((dev_b, "the dev set"), (test_b, "the test set")):
            if b is not None:
                check_lines_disjoint(chosen, str(selected), b, 1, what, "the selected lines become the training "
                                     "targets: keep the sentences the model is chosen or judged on out of them")
    return {"old": old_b, "dev": dev_b, "test": test_b, "source": [s.strip() for s in src.texts],
            "selected": chosen}


def _check_direction(folder, old, flipped: bool) -> None:
    """A given model folder trained on the old bitext's own two files the wrong way round is refused: the
    reverse model translates TGT into SRC, the base model SRC into TGT."""
    if folder is None:
        return
    rec = rundir.read_json(folder, rundir.NMT_RECORD) or {}
    files = [os.path.realpath(f) for f in _trained_on(rec) if f]
    want = [os.path.realpath(old[1]), os.path.realpath(old[0])] if flipped else [os.path.realpath(f) for f in old]
    if len(files) == 2 and files == want[::-1]:
        which = "--reverse" if flipped else "--base"
        way = "TGT into SRC" if flipped else "SRC into TGT"
        raise DomainsiftError(f"{which} {folder}: trained on {old[0]} -> {old[1]} the other way round; "
                              f"{which} must translate {way} of --old")


def _trained_on(rec: dict) -> list:
    """The training files of a model folder: its record's, or (folders of 0.36.0) its signature's."""
    if rec.get("train_files"):
        return list(rec["train_files"])
    import re
    m = re.search(r"\|train:([^|]*)\|", rec.get("signature") or "")
    return m.group(1).split(",") if m else []


def _where(files) -> str:
    return files[0] if len(files) == 1 else "the new domain's sources"


def _guarded(selection, data):
    """The selection with the dev and test sets' target sentences excluded (as ``--exclude`` excludes): the
    lines it chooses become training targets, never one the model is chosen or judged on."""
    from dataclasses import replace

    from ..io.corpus import read_corpus
    guard = [data["dev"].files[1]] + ([data["test"].files[1]] if data["test"] is not None else [])
    ex = selection.rule.exclude
    if ex is None:
        combined = read_corpus(guard)
    elif isinstance(ex, (str, os.PathLike)):
        combined = read_corpus([str(ex)] + guard)
    elif getattr(ex, "files", None):
        combined = read_corpus(list(ex.files) + guard)
    else:
        combined = list(getattr(ex, "texts", ex)) + list(read_corpus(guard).texts)
    return replace(selection, rule=replace(selection.rule, exclude=combined))


@dataclass(frozen=True)
class _Run:
    """What every step of one adapt run shares: its folder, its inputs, how models train and decode."""

    out: Path
    data: dict
    settings: object
    beam: int
    backend: str
    select_on: str
    progress: bool

    def trained(self, folder: Path, train, dev, init=None, mix=None) -> dict:
        from ..pipeline.nmt import trained as claimed
        return claimed(folder, train, dev, self.settings, init, mix, progress=self.progress)

    def translate(self, model_dir: Path, lines) -> list:
        from ..nmt import translate
        return translate(model_dir, lines, beam=self.beam, progress=self.progress, backend=self.backend)


def _adapt(run: _Run, mixing, selection, selected, reverse, base, start) -> dict:
    from .._internal.atomic import save_json
    from .._internal.signature import make_signature, signature_string
    out, data, settings, trained = run.out, run.data, run.settings, run.trained
    beam, backend, select_on = run.beam, run.backend, run.select_on
    steps = {}
    base_dir = Path(base) if base is not None else out / BASE  # the old-domain forward model

    # 1. the new domain's target-language lines
    if selection is not None:
        chosen = _select(run, selection, base, base_dir, steps)
    else:
        chosen = data["selected"]
        steps["select"] = {"file": str(Path(selected).resolve())}
    chosen = [t.strip() for t in chosen if t.strip()]
    if not chosen:
        raise InputError("the selection holds no line to back-translate")
    steps["select"]["n"] = len(chosen)

    # 2. the reverse model (target -> source) on the old bitext
    rev_dir = Path(reverse) if reverse is not None else out / REVERSE
    if reverse is None:
        trained(rev_dir, _flip(data["old"]), _flip(data["dev"]))
    steps["reverse"] = str(rev_dir)

    # 3. back-translation: the pseudo-bitext
    pseudo = _pseudo(run, rev_dir, chosen, steps)

    # 4. the warm start's model
    init = None
    if start == "warm":
        init = base_dir
        if base is None and select_on != "translated":  # the translated selection trained it in step 1
            trained(init, data["old"], data["dev"])
    if start == "warm" or select_on == "translated":
        steps["base"] = str(base_dir)

    # 5. GUDA's training (its identity holds the warm start's own weights: another model there trains again)
    model_dir = out / MODEL
    record = trained(model_dir, pseudo, data["dev"], init, mixing)
    steps["model"] = str(model_dir)
    result = {"start": start, **mixing.describe(), "steps": steps, "model": record.get("signature"),
              "best_epoch": record.get("best_epoch"), "dev_loss": record.get("dev_loss")}

    # 6. the new domain's test set
    if data["test"] is not None:
        result["test"] = _test(run, model_dir)
    sig = make_signature("adapt", model="marian", seed=settings.seed, start=start, **mixing.describe(),
                         preset=settings.preset, beam=beam, backend=backend, select_on=select_on,
                         selection=steps["select"].get("signature") or steps["select"].get("file"))
    result["signature"] = signature_string(sig)
    save_json(out / RECORD, result)
    return result


def _flip(b):
    from ..nmt.data import Bitext
    return Bitext(b.tgt, b.src, (b.files[1], b.files[0]))


def _select(run: _Run, selection, base, base_dir: Path, steps) -> list:
    """Step 1 with a selection: the in-domain set translated first when ``select_on`` says so, then the run."""
    from dataclasses import replace

    from .._internal.errors import LanguageMismatch
    from ..io.corpus import read_corpus
    from ..pipeline.run import run as run_spec
    from ..nmt.data import check_lines_disjoint
    out, data = run.out, run.data
    if run.select_on == "translated":  # the in-domain set in the pool's language, by the old-domain model
        if base is None:
            run.trained(base_dir, data["old"], data["dev"])
        lines = [t.strip() for t in selection.in_domain.texts if t.strip()]
        query = _decoded(run, base_dir, lines, out / QUERY_TGT, out / QUERY_HOW, stale=out / SELECT)
        if not any(q.strip() for q in query):
            raise InputError(f"{out / QUERY_TGT}: all {len(query)} translations of the in-domain set came out "
                             f"empty; the old-domain model ({base_dir}) needs more training")
        selection = replace(selection, targets={"": read_corpus([str(out / QUERY_TGT)])})
        steps["query"] = {"file": str(out / QUERY_TGT), "model": str(base_dir), "n": len(query)}
    sel_dir = out / SELECT
    try:  # a finished run of the same inputs resumes in a pass; another is refused
        run_spec(selection.with_out(sel_dir))
    except LanguageMismatch as e:
        raise LanguageMismatch(f"{e}; or, in adapt, --select-on translated (the in-domain set translated "
                               f"into the pool's language by the old-domain model)") from None
    chosen = [text for text, _ in rundir.selection_records(sel_dir)]
    for b, what in ((data["dev"], "the dev set"), (data["test"], "the test set")):  # excluded: a guard only
        if b is not None:
            check_lines_disjoint(chosen, str(sel_dir / rundir.SELECTED_IDS), b, 1, what, "select again")
    steps["select"] = {"dir": str(sel_dir), "method": selection.method,
                       "signature": rundir.read_signature(sel_dir).get("signature")}
    return chosen


def _pseudo(run: _Run, rev_dir: Path, chosen: list, steps: dict):
    """Step 3: the selected lines back-translated by the reverse model (``pseudo.src``/``pseudo.tgt``), kept
    while made from the same lines by the same model (its own weights) and decoding, and the files are as
    written; a back-translation that came out empty is left out; a degenerate one is warned about."""
    from .._internal.atomic import atomic_open
    from ..nmt.data import Bitext
    out, beam, backend = run.out, run.beam, run.backend
    src_file, tgt_file = out / PSEUDO_SRC, out / PSEUDO_TGT
    step = rundir.Step(out / PSEUDO_HOW, rundir.identity(rundir.model_identity(rev_dir), beam, backend,
                                                         texts=(chosen,)))
    if step.kept() is None:
        step.start()
        back = run.translate(rev_dir, chosen)
        with atomic_open(tgt_file) as fh:
            fh.write("".join(t + "\n" for t in chosen))
        with atomic_open(src_file) as fh:
            fh.write("".join(b + "\n" for b in back))
        nmt_id = (rundir.read_json(rev_dir, rundir.NMT_RECORD) or {}).get("identity")
        step.done([PSEUDO_SRC, PSEUDO_TGT], reverse=nmt_id, beam=beam, backend=backend)  # last: the pair is whole
    back = src_file.read_text(encoding="utf-8").split("\n")[:len(chosen)]
    keep = [k for k, b in enumerate(back) if b.strip()]  # a back-translation can come out empty
    pseudo = Bitext(tuple(back[k] for k in keep), tuple(chosen[k] for k in keep), (str(src_file), str(tgt_file)))
    if not len(pseudo):
        raise InputError(f"{src_file}: all {len(chosen)} back-translations came out empty; the reverse model "
                         f"({rev_dir}) needs more training")
    health = degeneracy(pseudo.src)
    if health["distinct"] < MIN_DISTINCT or health["looping"] > MAX_LOOPING:
        import logging
        logging.getLogger(__name__).warning(
            "%s: the back-translations look degenerate (%.0f%% distinct, %.0f%% repeat a phrase within the line); "
            "the reverse model (%s) needs more training or data: GUDA learns from these sources",
            src_file, 100 * health["distinct"], 100 * health["looping"], rev_dir)
    steps["pseudo"] = {"n": len(pseudo), "empty_dropped": len(chosen) - len(pseudo), **health}
    return pseudo


def degeneracy(lines) -> dict:
    """How much a set of translations repeats itself: ``distinct``, the share of distinct lines; ``looping``,
    the share of lines where a word pair comes back three times or more (a decoder caught in a loop)."""
    from collections import Counter
    lines = list(lines)
    if not lines:
        return {"distinct": 1.0, "looping": 0.0}
    looping = 0
    for line in lines:
        words = line.split()
        pairs = Counter(zip(words, words[1:]))
        looping += bool(pairs) and max(pairs.values()) >= 3
    return {"distinct": round(len(set(lines)) / len(lines), 4), "looping": round(looping / len(lines), 4)}


def _test(run: _Run, model_dir: Path) -> dict:
    """Step 6: the test set translated (the translations kept in ``test.hyp``) and scored."""
    from .._internal.atomic import atomic_open
    from .._internal.checksums import file_sha256
    from ..nmt import score_translation
    out, test_b, beam, backend = run.out, run.data["test"], run.beam, run.backend
    hyp = run.translate(model_dir, test_b.src)
    with atomic_open(out / rundir.JUDGE_HYP) as fh:
        fh.write("".join(h + "\n" for h in hyp))
    return {"files": list(test_b.files), "beam": beam, "backend": backend,
            **score_translation(hyp, test_b.tgt, test_b.files[1]), "translations": rundir.JUDGE_HYP,
            "sha256": file_sha256(out / rundir.JUDGE_HYP)}


def _decoded(run: _Run, model_dir: Path, lines: list, out_file: Path, how_file: Path, stale: Path) -> list:
    """``lines`` translated by the model in ``model_dir``, one per line of ``out_file``: kept while made from
    the same lines by the same model (its own weights) and decoding, and the file is as written; made again
    otherwise, and then the folder ``stale`` (what was made from the old translations) is removed first."""
    import shutil

    from .._internal.atomic import atomic_open
    beam, backend = run.beam, run.backend
    step = rundir.Step(how_file, rundir.identity(rundir.model_identity(model_dir), beam, backend, texts=(lines,)))
    if step.kept() is not None:
        return out_file.read_text(encoding="utf-8").split("\n")[:len(lines)]
    step.start()
    shutil.rmtree(stale, ignore_errors=True)
    done = run.translate(model_dir, lines)
    with atomic_open(out_file) as fh:
        fh.write("".join(t + "\n" for t in done))
    nmt_id = (rundir.read_json(model_dir, rundir.NMT_RECORD) or {}).get("identity")
    step.done([out_file.name], model=nmt_id, beam=beam, backend=backend)
    return done


__all__ = ["adapt", "degeneracy"]
