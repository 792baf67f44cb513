"""``domainsift select --target NAME=FILE ... [--mix NAME=W,...]``: several targets in one run.

Every pool line is scored against every target (one score run per target under ``DIR/targets/NAME``,
each a full score directory). A method that ``fits_targets`` fits them all at once (finetune: one
encoder, a head per target; cosine: a centroid per target) and scores each shard once into an ``(n, T)``
block, one column a target (:class:`~domainsift.engine.config.Column`); any other
method fits each target alone, on the same samples. The pool is counted, hashed and sampled once for all
of them (:func:`_read_once`), every target is prepared and fitted, and one pass reads each shard once for
every target (:func:`domainsift.pipeline.score.score_prepared`): at most three reads of the pool for any
number of targets, the selected lines' bytes kept from the last. Then each
line goes to at most one target: every target ranks the pool, a line's claim on a target is its rank
percentile there (1 = that target's best line), and the
claims are granted from the strongest down until each target has its quota. Quotas: ``top`` N or
``fraction`` F of the pool split by the ``mix`` weights (equal by default; largest remainders), or
``"auto"``: each target's estimated in-domain share (:mod:`domainsift.share`). Each target's selection
is written into its own directory, as ``select`` writes one; ``DIR/selected.mix.tsv`` lists every
selected line once with its ``domain``; ``DIR/mix.json`` says what ran. ``exclude`` (``select --exclude``,
:class:`domainsift.dedup.Exclusion`): a line that repeats one of its lines goes to no target; the
assignment is made again without the excluded lines it granted until it grants none, so each target still
gets its quota. ``dedup`` (``select --dedup exact|near`` with ``--target``): no two lines of the mixture, of
one target or of two, duplicate each other. The granted lines are walked in the order they were granted
(strongest claim first); a line that duplicates one walked before it goes to no target, and the assignment
is made again without it, so of each group of duplicates the line with the strongest claim stays and each
target still gets its quota.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import rundir
from .._internal.errors import DomainsiftError
from ..engine.config import Column
from ..select.base import check_n_against_pool, choose


MAX_NAME = 64  # a target's name: a folder's name and the domain column's value


def parse_targets(items) -> dict:
    """``NAME=FILE`` items (a name may come back to add files) as ``{name: [files]}``, in order."""
    out: dict = {}
    for item in items:
        name, sep, path = str(item).partition("=")
        if not sep or not name or not path:
            raise DomainsiftError(f"--target takes NAME=FILE, got {item!r}")
        if not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise DomainsiftError(f"--target {item!r}: a name of letters, digits, '-', '_' or '.', please "
                                  "(it names the target's folder and the domain column)")
        if len(name) > MAX_NAME or name in (".", ".."):
            raise DomainsiftError(f"--target {name[:20]}...: a name of at most {MAX_NAME} characters, please (it names "
                                  "the target's folder)" if len(name) > MAX_NAME else
                                  f"--target {item!r}: '{name}' cannot name a folder")
        if name in out:
            import logging
            logging.getLogger("domainsift").warning("--target %s is given twice: its files are read as one "
                                                    "in-domain set", name)
        out.setdefault(name, []).append(path)
    return out


def parse_mix(text: str | None, names) -> dict:
    """``NAME=W,...`` as weights summing to 1 over ``names`` (every target named once); None: equal."""
    names = list(names)
    if text is None:
        return {n: 1 / len(names) for n in names}
    weights = {}
    for part in str(text).split(","):
        name, sep, w = part.strip().partition("=")
        try:
            value = float(w)
        except ValueError:
            value = float("nan")
        if not sep or not value > 0 or value == float("inf"):
            raise DomainsiftError(f"--mix takes NAME=W,... with positive weights, got {part.strip()!r}")
        if name in weights:
            raise DomainsiftError(f"--mix names '{name}' twice")
        weights[name] = value
    if set(weights) != set(names):
        missing, extra = sorted(set(names) - set(weights)), sorted(set(weights) - set(names))
        raise DomainsiftError("--mix must weigh every --target once" + (f"; missing: {', '.join(missing)}" if missing
                              else "") + (f"; not a target: {', '.join(extra)}" if extra else ""))
    total = sum(weights.values())
    if total == float("inf"):  # weights near the float limit: scaled down first
        top = max(weights.values())
        weights = {n: w / top for n, w in weights.items()}
        total = sum(weights.values())
    return {n: weights[n] / total for n in names}


def _normalised(mix: dict, targets) -> dict:
    """Weights summing to 1, in the targets' order (``--mix a=3,b=1`` and ``mix={'a': 3, 'b': 1}`` alike)."""
    top = max(mix.values())
    scaled = {n: mix[n] / top for n in targets}  # scaled first: weights near the float limit
    total = sum(scaled.values())
    return {n: w / total for n, w in scaled.items()}


def quotas(weights: dict, total: int) -> dict:
    """``total`` lines split by ``weights`` (largest remainders; ties to the earlier target)."""
    raw = {n: w * total for n, w in weights.items()}
    q = {n: int(np.floor(v)) for n, v in raw.items()}
    order = sorted(raw, key=lambda n: (-(raw[n] - q[n]), list(raw).index(n)))
    for n in order[:total - sum(q.values())]:
        q[n] += 1
    return q


def assign(scores: dict, want: dict, barred: np.ndarray | None = None, order: bool = False):
    """Each pool position to at most one target: ``{name: positions, best first}`` with ``want[name]``
    each (fewer only when the pool runs out). A line's claim on a target is its rank percentile there;
    claims are granted strongest first (ties: the earlier target, then the earlier line). ``barred``: a
    mask of positions granted to none (excluded lines, duplicates). With ``order``, also every granted
    position in the order granted (strongest claim first)."""
    names = list(scores)
    n = len(next(iter(scores.values())))
    depth = {t: min(n, 2 * want[t] + 100) for t in names}
    while True:
        claims = []
        for k, t in enumerate(names):
            if want[t] == 0:
                continue
            idx = choose(scores[t], top=depth[t]) if depth[t] > 0 else np.zeros(0, dtype=np.int64)
            claims.append((1 - np.arange(len(idx)) / n, np.full(len(idx), k), idx))
        if not claims:
            none = {t: np.zeros(0, dtype=np.int64) for t in names}
            return (none, np.zeros(0, dtype=np.int64)) if order else none
        strength, who, pos = (np.concatenate(c) for c in zip(*claims))
        taken = np.zeros(n, dtype=bool) if barred is None else barred.copy()
        got, granted = {t: [] for t in names}, []
        rank = np.lexsort((pos, who, -strength))
        for k, p in zip(who[rank].tolist(), pos[rank].tolist()):
            t = names[k]
            if not taken[p] and len(got[t]) < want[t]:
                taken[p] = True
                got[t].append(p)
                granted.append(p)
        short = [t for t in names if len(got[t]) < want[t] and depth[t] < n]
        if not short:
            got = {t: np.asarray(got[t], dtype=np.int64) for t in names}
            return (got, np.asarray(granted, dtype=np.int64)) if order else got
        for t in short:
            depth[t] = min(n, 2 * depth[t])


def mix_targets(spec) -> dict:
    """Run a mixture (a checked :class:`~domainsift.spec.RunSpec` of several targets): score its pool
    against every target and select; see the module docstring. ``spec.mix``: ``{name: weight}`` (default
    equal); the rule's ``top`` / ``fraction`` (a number, or ``"auto"``: each target its estimated share),
    ``dedup`` (no two lines of the mixture duplicate each other, of each group the line with the
    strongest claim kept), ``exclude`` (lines no target gets) and pair checks (a bitext pool's pairs
    that are not translations go to no target). Returns ``mix.json``'s contents."""
    from ..dedup import deduplicator, exclusion
    rule = spec.rule
    index = deduplicator(rule.dedup, rule.dedup_threshold)  # checked, and the exclusion read, before any work
    left_out = exclusion(rule.exclude, rule.dedup, rule.dedup_threshold)
    out = Path(spec.out)
    _refuse_inputs(spec, out, left_out)  # before the folder is claimed
    from contextlib import ExitStack
    held = rundir.claim(out, "mix", overwrite=spec.overwrite)
    try:
        with held, ExitStack() as stack:  # Ray stays up for the reads
            jobs, shared = _score_targets(spec, out, left_out, stack)
            runs = {name: job.run for name, job in jobs.items()}  # in memory: no scores.npy is read back
            first = next(iter(runs.values()))
            for name, run in runs.items():
                if not np.array_equal(run.id_array, first.id_array):
                    raise DomainsiftError(f"{run.dir}: the pool's lines came in another order for target "
                                          f"'{name}'; score again")
            rundir.verify_stats(first, next(iter(jobs.values())).stats)  # the files still hold the bytes scored
            want = _quotas(spec, jobs, len(first.scores))
            checks = rule.pair_filter()
            if checks is not None and not first.pool.get("target_files") \
                    and not (first.pool.get("reader") or {}).get("field_target"):
                checks = None  # a pool of one side: no pair to check
            grant = _Grant(runs, jobs, want, index, left_out, checks)
            got = grant.run()
            chosen = _write_targets(spec, runs, got, want, grant)
            meta = _meta(spec, jobs, runs, got, want, grant, shared)
            rundir.write_mix(out, chosen, grant.texts, meta, grant.sides)
    except DomainsiftError:  # refused on the way: what this run made and nothing can resume from goes
        _tidy(out, held.created)
        raise
    shutil.rmtree(out / rundir.RESUME, ignore_errors=True)  # the shared fit lives on in every target's scores
    return meta


def _refuse_inputs(spec, out: Path, left_out) -> None:
    """No input file (an in-domain set, the pool, the exclusion) is a file the mixture would write."""
    from .._internal.safety import refuse_overwriting_inputs
    pool = spec.pool
    inputs = [f for corpus in spec.targets.values() for f in corpus.files]
    inputs += list(getattr(pool, "files", None) or []) + list(getattr(pool, "target_files", None) or [])
    inputs += [f for f in (left_out.files if left_out is not None else []) if "://" not in f]
    refuse_overwriting_inputs(inputs, out, (rundir.MIX, rundir.MIX_TSV))
    for name in spec.targets:
        refuse_overwriting_inputs(inputs, out / rundir.MIX_TARGETS / name, rundir.OUTPUTS)


def _score_targets(spec, out: Path, left_out, stack) -> tuple[dict, "SharedFit | None"]:
    """Every target scored in one run: the selector built once, the pool counted, hashed and sampled
    once, one fingerprint, the shared fit (a method whose targets share one), then one pass over the
    pool for every target. Returns each target's :class:`~domainsift.pipeline.score.ScoreJob` and the
    shared fit (None: each target fitted alone)."""
    from .score import prepare, score_prepared
    rule, targets = spec.rule, dict(spec.targets)
    reader = None if spec.reader is None else dict(spec.reader)
    teacher, params = _teacher(spec.method, dict(spec.params), spec.seed)  # the one selector a shared fit is
    scanned, execution = _read_once(teacher, params, spec.pool, spec.execution, spec.cascade, rule.auto, stack)

    def fits(n: int) -> None:
        check_n_against_pool(n, rule.top, rule.fraction)
    if not rule.auto:  # before any fit
        fits(scanned.scan.n)
    run_id = _identity(spec.method, teacher, params, targets, scanned, reader, execution, spec.cascade)  # one
    shared = _shared_fit(teacher, targets, scanned, out, run_id) if teacher.fits_targets else None
    from dataclasses import replace

    def target(name: str):  # a target's run: the mixture's spec, for its in-domain set and folder
        return replace(spec, targets={"": targets[name]}, pool=scanned, out=out / rundir.MIX_TARGETS / name,
                       rule=None, mix=None, params=params, execution=execution, estimate_share=rule.auto)
    prepared = [prepare(target(name), stack, None if rule.auto else fits, exclude=left_out,
                        column=None if shared is None else Column(shared.fit, j, shared.folder),
                        identity=rundir.identity(run_id, name))
                for j, name in enumerate(targets)]
    # one pass over the pool for every target (a shared fit: one block a shard); the mixture's claim holds
    # every target's folder
    return dict(zip(targets, score_prepared(prepared, spec.overwrite, claim=False))), shared


def _weights(spec) -> dict | None:
    """The mixture's weights summing to 1 in the targets' order (None: each target its estimated share)."""
    if spec.rule.auto:
        return None
    return _normalised(dict(spec.mix) if spec.mix else {n: 1.0 for n in spec.targets}, list(spec.targets))


def _quotas(spec, jobs: dict, n: int) -> dict:
    """Each target's lines: its estimated share of the pool (``auto``), or the rule's total split by the
    weights."""
    rule = spec.rule
    if rule.auto:
        from ..share import ShareEstimate
        return {name: ShareEstimate.from_dict(job.share).lines(n) for name, job in jobs.items()}
    return quotas(_weights(spec), rule.top if rule.top is not None else max(1, int(round(rule.fraction * n))))


class _Grant:
    """The assignment of pool lines to targets (:func:`assign`), made again without the lines it must not
    grant (pairs that fail a check, excluded lines, duplicates of a line granted before) until it grants
    none; the granted lines' texts and bytes are read once (from the Ray workers, from what a cascade
    read already, else from the pool's files) and kept for the writing."""

    def __init__(self, runs: dict, jobs: dict, want: dict, index, left_out, checks):
        self.runs, self.jobs, self.want = runs, jobs, want
        self.index, self.left_out, self.checks = index, left_out, checks
        self.first = next(iter(runs.values()))
        n = len(self.first.scores)
        # the selected lines: read by the Ray workers (the driver reads no pool line), else from the files
        self.fetch = next((job.fetch for job in jobs.values() if job.fetch is not None), None)
        self.fetched = {} if self.fetch is not None else None
        self.texts, self.sides, self.raws = {}, {}, {}
        self.barred = np.zeros(n, dtype=bool)  # granted to no target: excluded lines and duplicates
        self.passed = {"exclude": dict.fromkeys(runs, 0), "dedup": dict.fromkeys(runs, 0),  # by the target left
                       "checks": dict.fromkeys(runs, 0)}
        self.failed, self.ready, self.excluded = {}, {}, {}  # per position: check failed, dedup key, excluded

    def run(self) -> dict:
        while True:
            got, granted = assign({name: run.scores for name, run in self.runs.items()}, self.want,
                                  self.barred if self.barred.any() else None, order=True)
            self._read(granted)
            owner = {p: name for name, ps in got.items() for p in ps.tolist()}
            hit = self._passed_over(granted)
            if not hit:
                if self.fetched is not None and not self.fetched:
                    self.fetched = None
                return got
            for i, why in hit:
                self.barred[i] = True
                self.passed[why][owner[i]] += 1

    def _read(self, granted: np.ndarray) -> None:
        """The texts and bytes of the granted lines not read yet."""
        first = self.first
        new = np.asarray(sorted(i for i in granted.tolist() if first.id_at(i) not in self.texts), dtype=np.int64)
        if not len(new):
            return
        if self.fetch is not None:
            more = self.fetch(new)
            self.fetched.update(more)
            self.texts.update({i: v[0] for i, v in more.items()})
            self.sides.update({i: v[1] for i, v in more.items()})
            return
        for job in self.jobs.values():  # a cascade's candidates were read once already, bytes and texts
            if job.read is not None and job.kept is not None:
                for i in new.tolist():
                    key = first.id_at(i)
                    if key in job.read and (job.kept.get(key) or (None,))[0] is not None:
                        self.texts[key], self.sides[key] = job.read[key]
                        self.raws[key] = job.kept[key]
                new = np.asarray([i for i in new.tolist() if first.id_at(i) not in self.texts], dtype=np.int64)
                break
        if len(new):  # their bytes kept too: each target's selection is written without another read
            read = rundir.records(first, {first.id_at(i): None for i in new.tolist()}, verify=False, raw=True)
            self.texts.update({i: v[0] for i, v in read.items()})
            self.sides.update({i: v[1] for i, v in read.items()})
            self.raws.update({i: (v[2], v[3]) for i, v in read.items()})

    def _passed_over(self, granted: np.ndarray) -> list:
        """The granted lines walked strongest claim first: a pair that fails a check, an excluded line, or
        one that duplicates a line kept before it, with why (it goes to no target)."""
        from ..dedup import Deduplicator
        first, checks, left_out = self.first, self.checks, self.left_out
        texts, sides = self.texts, self.sides
        seen = None if self.index is None else Deduplicator(self.index.mode, self.index.threshold)
        if checks is not None:  # every granted pair not yet checked, in one batch
            todo = [i for i in granted.tolist() if i not in self.failed]
            pairs = [(texts[first.id_at(i)], sides[first.id_at(i)]) for i in todo]
            self.failed.update(zip(todo, checks.failing(pairs)))
        hit = []
        for i in granted.tolist():
            key = first.id_at(i)
            if checks is not None and self.failed[i] is not None:
                hit.append((i, "checks"))
                checks.record(self.failed[i], (texts[key], sides[key]))
                continue
            if left_out is not None:
                if i not in self.excluded:
                    self.excluded[i] = left_out.matches(texts[key], sides[key])
                if self.excluded[i]:
                    hit.append((i, "exclude"))
                    continue
            if seen is not None:
                if i not in self.ready:
                    self.ready[i] = seen.prepare(texts[key] if sides[key] is None else f"{texts[key]}\t{sides[key]}")
                if seen.seen(self.ready[i], keep=True):
                    hit.append((i, "dedup"))
        return hit

    def extra(self, name: str) -> dict | None:
        """What ``selection.json`` of target ``name`` records of the lines passed over."""
        index, left_out, checks, passed = self.index, self.left_out, self.checks, self.passed
        out = {**({"dedup": {**index.describe(), "duplicates_removed": passed["dedup"][name]}}
                  if index is not None else {}),
               **({"exclude": {**left_out.describe(), "lines_excluded": passed["exclude"][name]}}
                  if left_out is not None else {}),
               **({"pair_checks": {**checks.describe(), "pairs_removed": passed["checks"][name]}}
                  if checks is not None else {})}
        return out or None


def _write_targets(spec, runs: dict, got: dict, want: dict, grant: _Grant) -> list:
    """Each target's selection written into its folder; returns every selected line as ``(target, file,
    line, score)``."""
    rule = spec.rule
    chosen = []
    kept = ({i: (v[2], v[3]) for i, v in grant.fetched.items()} if grant.fetched is not None else grant.raws)
    for name, run in runs.items():
        recorded = {"mix": name, **({"top": rule.top} if rule.top is not None else {"fraction": rule.fraction}),
                    "n_quota": want[name]}
        rundir.write_selection(run.dir, run, got[name], recorded, kept=kept, extra=grant.extra(name))
        for i in got[name].tolist():
            f, ln = run.id_at(i)
            chosen.append((name, f, ln, float(run.scores[i])))
    return chosen


def _meta(spec, jobs: dict, runs: dict, got: dict, want: dict, grant: _Grant, shared) -> dict:
    """``mix.json``: what ran, each target's weight, quota and selection, what was passed over."""
    from .._internal.signature import make_signature, signature_string
    rule, targets, weights = spec.rule, spec.targets, _weights(spec)
    index, left_out, checks, passed = grant.index, grant.left_out, grant.checks, grant.passed
    n = len(grant.first.scores)
    by = {"top": rule.top} if rule.top is not None else {"fraction": rule.fraction}
    sig = make_signature(spec.method, model=jobs[next(iter(jobs))].signature.get("model"), seed=spec.seed,
                         targets=list(targets), n_pool=n)
    words = {**sig, "select_" + next(iter(by)): next(iter(by.values())),
             "mix": ",".join(f"{k}={v:g}" for k, v in (weights or {}).items()) or "auto",
             **({"select_dedup": rundir.dedup_word(index.describe())} if index is not None else {}),
             **({"select_exclude": rundir.exclude_word(left_out.describe())} if left_out is not None else {})}
    meta = {"method": spec.method, "n_pool": n, "rule": by,
            "assignment": "rank percentile in each target's ranking; strongest claim first; one target a line",
            "targets": {name: {"in_domain": [rundir.resolve(f) for f in targets[name].files],
                               "weight": None if weights is None else round(weights[name], 6),
                               "quota": want[name], "n_selected": int(len(got[name])),
                               "dir": str(jobs[name].out_dir),
                               **({"share": jobs[name].share} if jobs[name].share else {})}
                        for name in targets},
            "signature": signature_string(words)}
    if index is not None:
        meta["dedup"] = {**index.describe(), "duplicates_removed": sum(passed["dedup"].values())}
    if left_out is not None:
        meta["exclude"] = {**left_out.describe(), "lines_excluded": sum(passed["exclude"].values())}
    if checks is not None:
        meta["pair_checks"] = checks.describe()
    if shared is not None:
        meta["shared_fit"] = shared.identity
    return meta


@dataclass(frozen=True)
class SharedFit:
    """A fit of every target at once (:meth:`~domainsift.select.base.BaseSelector.fit_targets`), what it
    was made from (``identity``) and the folder it is saved in while the mixture runs."""

    fit: object
    identity: str
    folder: Path


def _tidy(out: Path, created: bool) -> None:
    """After a refusal: each target's folder and the shared folder that hold nothing a rerun resumes from
    (no saved fit, checkpoint or scored shard) are removed, and the mixture's folder when this run made
    it and nothing is left in it."""
    resumable = rundir.resumable
    targets = out / rundir.MIX_TARGETS
    if targets.is_dir():
        for t in targets.iterdir():
            if t.is_dir() and not (t / rundir.SIGNATURE).exists() and not resumable(t / rundir.RESUME):
                shutil.rmtree(t, ignore_errors=True)
        if not any(targets.iterdir()):
            targets.rmdir()
    if (out / rundir.RESUME).is_dir() and not resumable(out / rundir.RESUME):
        shutil.rmtree(out / rundir.RESUME, ignore_errors=True)
    if created and out.is_dir() and all(p.name == ".lock" for p in out.iterdir()):
        shutil.rmtree(out, ignore_errors=True)


def _teacher(method: str, params: dict | None, seed: int) -> tuple:
    """The mixture's selector, built once, and the parameters it runs with: for a method whose targets
    share one fit (``fits_targets``), that fit, with the method's ``shared_defaults`` for the parameters
    not given (each target's selector is then its view, :meth:`~domainsift.select.base.BaseSelector.target`);
    otherwise one target's, which asks the counting pass for what each target's own fit needs."""
    from ..select import get_selector, selector_class
    params = {**(params or {})}
    params.setdefault("seed", seed)
    defaults = selector_class(method).shared_defaults
    selector = get_selector(method, **{**defaults, **params})
    if selector.fits_targets:
        return selector, {**defaults, **params}
    return (get_selector(method, **params) if defaults else selector), params


def _read_once(selector, params: dict, pool, execution, cascade, auto: bool, stack):
    """The pool's one counting pass for every target's run (and the shared fit's sample): the samples a
    target's run draws, as :func:`~domainsift.pipeline.score.score` asks for them (the method's fit sample
    included, which a shared fit trains on). Returns the :class:`~domainsift.pipeline.score.ScannedPool`
    and the execution with its Ray workers planned."""
    from ..engine.config import Execution
    from .score import ScannedPool, counting_pass, open_pool
    execution = execution or Execution()
    execution.check()
    execution = execution.planned(selector)
    if cascade is not None:
        cascade.check()
    _, asked = counting_pass(selector, params, execution, cascade, auto)
    source = open_pool(pool, execution, stack)
    scan = source.scan(asked)
    if scan.n == 0:
        raise DomainsiftError("the pool is empty")
    return ScannedPool(source, scan, asked), execution


def _identity(method: str, selector, params: dict, targets: dict, scanned, reader: dict | None, execution,
              cascade) -> str:
    """The mixture's one fingerprint (:func:`~domainsift.pipeline.score.run_identity`): every target's
    in-domain lines with its name, the pool's manifest, the selector and how the run is sharded and
    cascaded; each target's resume identity and the shared fit's folder derive from it."""
    from .score import _reader, run_identity
    source, scan = scanned.source, scanned.scan
    manifest = rundir.source_manifest(source.files, source.target_files, scan.n, _reader(source, reader),
                                      fingerprints=scan.fingerprints)
    texts = [f"{name}\t{t}" for name, corpus in targets.items() for t in corpus.texts]
    return run_identity(method, selector, params, texts, manifest, execution, cascade)


def _shared_fit(multi, targets: dict, scanned, out: Path, identity: str) -> SharedFit:
    """For a method that fits every target at once (finetune: one encoder, a head per target; cosine: a
    centroid per target), that fit (``multi``, the mixture's one selector), trained here (or loaded,
    when a killed mixture saved it) on the fit sample of the pool's one counting pass (``scanned``;
    cosine: on none, unless its embedder learns its space from the pool). Saved under the mixture's
    ``.resume`` while the run lasts, with each finished epoch: a killed mixture loads it, or goes on
    from its last epoch."""
    import logging
    from .stages import FIT
    folder = out / rundir.RESUME / rundir.shared_fit(identity)
    if folder.is_dir():
        try:
            multi.load_state(folder)
        except Exception as exc:  # noqa: BLE001: a damaged saved fit costs the fit, never the run
            logging.getLogger(__name__).warning("the saved shared fit in %s cannot be loaded (%s); fitting again",
                                                folder, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            shutil.rmtree(folder, ignore_errors=True)
    if not folder.is_dir():
        checkpoint = out / rundir.RESUME / rundir.shared_checkpoint(identity)
        multi.checkpoint_dir = checkpoint  # each finished epoch kept: a killed fit goes on from there
        multi.fit_targets(targets, scanned.scan.samples.get(FIT))
        multi.checkpoint_dir = None
        multi.save_state(folder)
        shutil.rmtree(checkpoint, ignore_errors=True)
    return SharedFit(multi, identity, folder)
