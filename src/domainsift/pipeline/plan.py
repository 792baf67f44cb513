"""``score``/``select --plan``: what a run will do and what it will cost on this machine, before it runs.

The pool is read once (counted, and a seeded sample of 256 lines drawn); nothing is fitted or written.
The cost is an estimate from per-line and per-step costs measured here on that sample (a calibration of
a few seconds, kept per machine, encoder, backend and version in ``<cache>/calibration.json``):

* ``encode``: seconds a line through the method's encoder (its backend, as a run uses it), after a
  warm-up; ``load``: loading the encoder and its first batch (a run pays it once);
* ``train_step``: one fine-tuning step of ``batch_size`` lines of similar length (finetune), and
  ``export``: exporting a freshly fine-tuned encoder to the scoring backend (a run pays it once);
* ``student``: seconds a line for the student (tokenizing; its head is a sum).

The model of a run (:func:`estimate`) multiplies them by what the run does: lines encoded, training
steps (epochs x the positives and negatives over the batch size), a cascade's teacher sample and
candidates (at least 2 N: the plan's floor; the student's own plan after its fit may take more). How
close it comes is measured (``bench/live/plan.py``, bench/results/plan.md).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

from .._internal.errors import DomainsiftError
from .stages import CALIBRATION_LINES  # the counting pass draws that sample

REPEAT = 4  # the calibration sample is encoded this many times over (calibrate's comment)
KEY_VERSION = 3  # 2: the encoder timed on the sample four times over; 3: the student by its chunk cache


def _cache_file() -> Path:
    from ..embed.cache import default_cache_dir
    return Path(default_cache_dir()) / "calibration.json"


def _key(method: str, model: str, backend: str, batch_size: int, layers: int = 0) -> str:
    from .._internal.machine import cpu_isa, cpu_model
    from .._version import __version__
    from ..embed import model_path
    from ..embed.transformers import model_fingerprint
    import torch
    return "|".join(map(str, (KEY_VERSION, __version__, cpu_model(), cpu_isa(), torch.get_num_threads(), method,
                              model_fingerprint(model_path(model)), backend, batch_size))) + (
        f"|layers:{layers}" if layers else "")


def calibrate(method: str, model: str, backend: str, sample: list[str], batch_size: int = 16,
              freeze: int = 1, max_length: int = 128, layers: int = 0) -> dict:
    """Measure (or read back) this machine's costs for ``method`` on ``model`` (module docstring);
    ``layers``: finetune's ``--layers`` (its encoder's lower layers only: training and scoring timed on them)."""
    cache = _cache_file()
    key = _key(method, model, backend, batch_size, layers)
    try:
        saved = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        saved = {}
    if not isinstance(saved, dict):  # a damaged file: measured again, and written anew
        saved = {}
    if key in saved:
        if _valid_costs(saved[key]):
            return {**saved[key], "cached": True}
        import logging
        logging.getLogger("domainsift").warning("%s: the saved costs for this machine are damaged (not positive, "
                                                "finite seconds); measuring them again", cache)
        del saved[key]
    from ..embed import transformers_encoder
    from ..embed.cache import default_cache_dir
    texts = [t for t in sample if t.strip()][:CALIBRATION_LINES] or ["a line"]
    export_dir = str(Path(default_cache_dir()) / "onnx")  # where a run keeps the encoder's export

    def encoder():  # as a run builds it: its batch size, backend and export folder; no vector cache
        return transformers_encoder(model, max_length=max_length, batch_size=32, progress=False, backend=backend,
                                    export_dir=export_dir)

    # built twice: the first may export the encoder to its backend (once per machine), the second is what
    # every later run pays
    encoder().encode(texts[:8])
    t = time.perf_counter()
    enc = encoder()
    enc.encode(texts[:8])
    load = time.perf_counter() - t
    # the sample four times over: the encoder batches texts of one token count, and a run's shards hold
    # enough of each length to fill its batches; 256 lines alone leave most batches part-empty (measured:
    # 6.8 ms a line against 5.1 with four copies and 4.9 on 4,096 distinct lines, on a 2-core EPYC)
    timed = texts * REPEAT
    t = time.perf_counter()
    enc.encode(timed)
    costs = {"load": load, "encode": (time.perf_counter() - t) / len(timed)}
    tok = enc.load()[1]
    from ..embed.static import ChunkCache, splits_at_spaces
    backend = tok.backend_tokenizer
    if splits_at_spaces(backend):  # the student's chunk cache: cold on the sample's first pass, then warm,
        # as in a run where most chunks recur (issue 48)
        tokenize, rounds = ChunkCache(backend).token_ids, REPEAT
    else:
        tokenize, rounds = (lambda lines: backend.encode_batch_fast(lines, add_special_tokens=False)), 1
    t = time.perf_counter()
    for _ in range(rounds):
        tokenize(texts)
    costs["student"] = (time.perf_counter() - t) / (rounds * len(texts))
    from ..select import selector_class
    if selector_class(method).cost_model == "fine-tune":
        costs.update(_train_costs(model, backend, texts, batch_size, freeze, max_length, costs["encode"], layers))
    saved[key] = costs
    from .._internal.atomic import save_json
    try:
        save_json(cache, saved)
    except OSError:  # a read-only cache: the estimate stands, measured again next time
        pass
    return {**costs, "cached": False}


def _valid_costs(entry) -> bool:
    """Saved costs a plan can trust: a dict whose values are finite, non-negative seconds (a damaged or
    edited ``calibration.json`` is measured again, never printed as a negative time)."""
    import math
    return (isinstance(entry, dict) and bool(entry) and "encode" in entry
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
                    for v in entry.values()))


def _train_costs(model: str, backend: str, texts: list[str], batch_size: int, freeze: int, max_length: int,
                 encode: float, layers: int = 0) -> dict:
    """Seconds a fine-tuning step (batches of similar length, as the bucketed training draws them) and the
    export of a newly trained encoder to ``backend``; with ``layers``, the encoder cut to its lower layers
    as the run cuts it, and ``encode`` measured again through it (every line a finetune run encodes goes
    through the fine-tuned encoder)."""
    import numpy as np

    from ..embed import model_path
    from ..select.train import EncoderClassifier, TrainConfig
    clf = EncoderClassifier(model_path(model), max_length=max_length, backend=backend)
    clf.truncate(layers)
    clf.freeze(freeze)
    torch = clf.torch
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        clf.new_head()
        clf.train(True)
        cfg = TrainConfig(batch_size=batch_size)
        opt = torch.optim.AdamW([{**g, "params": list(g["params"])} for g in clf.param_groups(cfg)])
        order = np.argsort([len(t) for t in texts], kind="stable")
        rng = np.random.default_rng(0)
        starts = rng.choice(max(1, len(texts) - batch_size), size=5)
        times = []
        for s in starts:
            batch = [texts[i] for i in order[s:s + batch_size]]
            t = time.perf_counter()
            loss = clf.forward(batch).float().pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            times.append(time.perf_counter() - t)
        clf.train(False)
        t = time.perf_counter()
        clf.predict(texts[:32])
        export = time.perf_counter() - t
        out = {}
        if layers:
            timed = texts * REPEAT  # as calibrate times the whole encoder
            t = time.perf_counter()
            clf.predict(timed)
            out["encode"] = encode = (time.perf_counter() - t) / len(timed)
    step = float(np.mean(times[1:]))
    return {**out, "train_step": step, "export": max(0.0, export - 32 * encode)}


def _fine_tunes(method: str) -> bool:
    from ..select import selector_class
    return selector_class(method).cost_model == "fine-tune"


def cascade_seconds(n_lines: float, candidates: float, student: float, teacher: float) -> dict:
    """A cascade's scoring cost: the student over every line and the teacher over its candidates, in the
    units of ``student`` (seconds a line) and ``teacher`` (seconds a candidate): the one model ``--plan``
    prints and the scale benchmarks extrapolate (to 10^9 lines, in core-seconds)."""
    return {"student": n_lines * student, "teacher": candidates * teacher}


def estimate(method: str, params: dict, n_pool: int, n_in: int, costs: dict, selection: int | None,
             cascade: bool, student_sample: int = 20000, share_sample: int = 0, fitted: bool = False) -> dict:
    """Seconds for each stage of the run (module docstring) and their sum; ``share_sample``: the pool lines
    an estimate of the in-domain share encodes (``--top/--fraction auto``; :mod:`domainsift.share`);
    ``fitted``: the method comes fitted (a mixture's target, whose head the shared fit trained)."""
    parts = {"load the encoder": costs["load"]}
    if share_sample:
        parts[f"estimate the in-domain share ({share_sample:,} pool lines encoded)"] = (
            (share_sample + n_in) * costs["encode"])
    if fitted:
        pass  # the fit's cost was paid once, before the targets' runs
    elif _fine_tunes(method):
        holdout, neg_ratio = params.get("holdout", 0.1), params.get("neg_ratio", 1.0)
        pos = n_in - int(round(holdout * n_in))
        steps = params.get("epochs", 10) * math.ceil((pos + max(1, round(neg_ratio * pos))) /
                                                       params.get("batch_size", 16))
        parts[f"fine-tune ({steps:,} steps)"] = steps * costs["train_step"]
        parts["export the fine-tuned encoder"] = costs["export"]
        parts["score the held-out lines"] = 2 * (n_in - pos) * costs["encode"]
    else:
        parts["encode the in-domain set"] = n_in * costs["encode"]
    if not cascade:
        parts[f"score {n_pool:,} pool lines"] = n_pool * costs["encode"]
    else:
        from ..select.student import enrichment
        k = min(student_sample, n_pool)
        more = enrichment(k, n_pool - k)[1]  # the lines the student's enrichment adds
        cand = min(n_pool, 2 * (selection or max(1, n_pool // 100)))
        parts[f"the teacher scores the student's sample ({k:,} lines"
              + (f", {more:,} more)" if more else ")")] = (k + more) * costs["encode"]
        scoring = cascade_seconds(n_pool, cand, costs["student"], costs["encode"])
        parts[f"the student scores {n_pool:,} lines"] = scoring["student"]
        parts[f"the teacher scores at least {cand:,} candidates"] = scoring["teacher"]
    return {"parts": {k: round(v, 1) for k, v in parts.items()}, "seconds": round(sum(parts.values()), 1)}


def input_warnings(selector, in_domain, samples: dict, say: bool = True, pool_files=(), n_pool: int | None = None,
                   said: set | None = None,
                   exclude=None) -> list[str]:
    """Warning lines said (logged, with ``say``) before the fit and kept in ``run.json``, for the pool samples
    drawn: the in-domain set inside the pool (:mod:`domainsift.overlap`: an in-domain file among
    ``pool_files``, or the sample repeating its lines; methods that read the text), the in-domain set or the pool in a language the
    method's encoder was not trained on (:mod:`domainsift.languages`), the in-domain set unlike the pool on
    the surface (:mod:`domainsift.surface`: a line number, a tab, markup, length; methods that read the text),
    and fewer in-domain lines than the method was measured to need (:func:`domainsift.advice.few_lines`).
    ``--plan`` prints the same. ``exclude``: the selection's ``--exclude`` (its lines are not selected)."""
    from ..embed import abilities
    from .stages import LANGUAGE, SURFACE
    from ..overlap import check_overlap
    from ..surface import check_surface, corpus_name
    out = (check_overlap(in_domain, samples.get(SURFACE), pool_files, n_pool, corpus_name(in_domain), say=say,
                         exclude=exclude)
           if selector.reads_content else [])  # a random ranking does not put them first
    pool_sample = samples.get(LANGUAGE)
    if pool_sample is not None:  # refused here when the two differ and the method has no space for both
        from ..languages import check_same_language
        out += check_same_language(selector, in_domain.texts, pool_sample.texts, pool_sample.targets,
                                   what=f"the in-domain set ({corpus_name(in_domain)})")
    if selector.encoder_name is not None and abilities(selector.encoder_name).languages and pool_sample is not None:
        from ..languages import check_coverage
        sets = {"the in-domain set": in_domain.texts, "the pool (a seeded sample)": pool_sample.texts}
        if selector.crosses_languages and selector.input_files():  # a bitext maps the in-domain language over
            sets.pop("the in-domain set")
        out += check_coverage(selector.encoder_name, sets, say=say, said=said)
    surface = samples.get(SURFACE) if selector.reads_content else None
    out += check_surface(in_domain.texts, surface.texts if surface is not None else None, corpus_name(in_domain),
                         say=say)
    from ..advice import few_lines
    few = few_lines(selector.name, len(in_domain), corpus_name(in_domain))
    if few and say:
        import logging
        logging.getLogger("domainsift").warning(few)
    return out + ([few] if few else [])


def plan_run(spec) -> dict:
    """Count the pool of a one-target :class:`~domainsift.spec.RunSpec` (one read), calibrate on a seeded
    sample, and say what the run will do and cost. The rule's ``exclude`` (a selection's ``--exclude``)
    is compared as its ``dedup`` (``--dedup``) compares."""
    from ..io.source import MemorySource, PoolSource
    from ..select import get_selector
    method, in_domain, pool, seed, cascade = spec.method, spec.in_domain, spec.pool, spec.seed, spec.cascade
    rule = spec.rule
    top, fraction = (rule.top, rule.fraction) if rule is not None else (None, None)
    selector = get_selector(method, **dict(spec.params))
    from ..dedup import deduplicator, exclusion
    if rule is not None:
        deduplicator(rule.dedup, rule.dedup_threshold)  # a bad --dedup stops the plan as it would stop the run
    exclude = exclusion(rule.exclude, rule.dedup, rule.dedup_threshold) if rule is not None else None
    source = pool if isinstance(pool, PoolSource) else MemorySource(pool)
    from .stages import CALIBRATION, LANGUAGE, SAMPLE_STREAMS, SURFACE, surface_sample
    from ..languages import SAMPLE as LANGUAGE_LINES
    scan = source.scan({CALIBRATION: (CALIBRATION_LINES, [seed, SAMPLE_STREAMS[CALIBRATION]]),
                        SURFACE: surface_sample(seed),  # the samples a run's warnings read, as the run draws them
                        LANGUAGE: (LANGUAGE_LINES, [seed, SAMPLE_STREAMS[LANGUAGE]])})
    n = scan.n
    if n == 0:
        raise DomainsiftError("the pool is empty")
    # what the run would warn about before its fit (the same sample a run draws)
    warnings = input_warnings(selector, in_domain, scan.samples, say=False, pool_files=source.files, n_pool=n,
                              exclude=exclude)
    auto = "auto" in (top, fraction)
    if auto:  # the estimated share is known once the run has estimated it
        top = fraction = None
    selection = top if top is not None else (max(1, int(round(fraction * n))) if fraction is not None else None)
    passes = 3 if cascade is not None else (3 if selection is not None else 2)
    out = {"method": method, "n_pool": n, "n_in_domain": len(in_domain), "selection": selection,
           "cascade": cascade is not None, "reads_of_the_pool": passes, "warnings": warnings}
    if exclude is not None:  # how many pool lines the selection will pass over, from the same sample
        drawn = scan.samples[SURFACE]
        sample = drawn.texts
        hits = sum(exclude.matches(t, g) for t, g in zip(sample, drawn.targets or [None] * len(sample)))
        out["exclude"] = {**exclude.describe(), "sample": len(sample), "sample_matches": hits,
                          "pool_estimate": round(hits / len(sample) * n) if sample else 0}
    if selector.cost_model is None or selector.encoder_name is None:
        out["estimate"] = None
        out["why_no_estimate"] = (f"'{method}' has no cost model yet (cosine and finetune do, with or without "
                                  "--cascade)")
        return out
    from ..embed import abilities
    if abilities(selector.encoder_name).kind != "transformers":
        out["estimate"] = None
        out["why_no_estimate"] = "this encoder has no cost model yet (a Hugging Face encoder has)"
        return out
    costs = _costs(selector, method, scan.samples[CALIBRATION].texts)
    out["costs"] = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in costs.items()}
    from ..share import SAMPLE_LINES
    out["estimate"] = _estimate_for(selector, method, n, len(in_domain), costs, selection, cascade,
                                    min(SAMPLE_LINES, n) if auto else 0)
    return out


LONG_RUN = 200_000  # pool lines from which a run prints its plan's estimate before it starts


def announce(selector, method: str, n_pool: int, n_in: int, sample, selection: int | None, cascade) -> None:
    """Log the estimated wall time at the start of a long run (``LONG_RUN`` lines or more); calibrates once
    per machine and encoder (a few seconds), from the counting pass's sample."""
    import logging
    if n_pool < LONG_RUN or sample is None or selector.cost_model is None:
        return
    from ..embed import abilities
    if selector.encoder_name is None or abilities(selector.encoder_name).kind != "transformers":
        return
    costs = _costs(selector, method, sample.texts)
    est = _estimate_for(selector, method, n_pool, n_in, costs, selection, cascade)
    logging.getLogger(__name__).info("plan: about %s on this machine (%s)", _hms(est["seconds"]),
                                     "; ".join(f"{k} {_hms(v)}" for k, v in est["parts"].items()))


def _costs(selector, method: str, texts) -> dict:
    """:func:`calibrate` for the encoder and settings ``selector`` runs with."""
    pv = selector.param_values()  # what the selector declared, never probed
    return calibrate(method, selector.encoder_name, pv.get("backend", "onnx-int8"), texts,
                     batch_size=pv.get("batch_size", 16), freeze=pv.get("freeze", 1),
                     max_length=pv.get("max_length", 128), layers=pv.get("layers", 0) or 0)


def _estimate_for(selector, method, n, n_in, costs, selection, cascade, share_sample: int = 0) -> dict:
    pv = selector.param_values()
    p = {k: pv[k] for k in ("epochs", "batch_size", "holdout", "neg_ratio") if k in pv}
    est = estimate(method, p, n, n_in, costs, selection, cascade is not None, share_sample=share_sample,
                   fitted=selector.target_of is not None)
    if cascade is not None:
        from .. import rundir
        est["note"] = ("the candidates are at least 2 N; the student's plan after its fit may take more (its "
                       f"figure is in {rundir.RUN})")
    return est


def format_plan(plan: dict) -> str:
    lines = [f"plan: {plan['method']}{' --cascade' if plan['cascade'] else ''} over {plan['n_pool']:,} pool lines "
             f"({plan['n_in_domain']:,} in-domain), the pool read {plan['reads_of_the_pool']} times"]
    lines += [f"  warning: {w}" for w in plan.get("warnings", [])]
    way = plan.get("direction")
    if way:
        lines.append(f"  a bitext pool: the scored side is {', '.join(way['scored'])}; a translation model trained on "
                     f"the selection (downstream --judge nmt) translates the other side ({', '.join(way['other'])}) "
                     "into it, or the other way with --reverse")
    ex = plan.get("exclude")
    if ex:
        near = f" (near duplicates too: Jaccard >= {ex['threshold']:g})" if ex["mode"] == "near" else ""
        lines.append(f"  --exclude{near}: {ex['lines']:,} distinct lines; {ex['sample_matches']:,} of {ex['sample']:,} sampled "
                     f"pool lines repeat one (about {ex['pool_estimate']:,} of the pool's), passed over by the selection")
    est = plan.get("estimate")
    if est is None:
        lines.append(f"  no time estimate: {plan['why_no_estimate']}")
        return "\n".join(lines)
    for what, s in est["parts"].items():
        lines.append(f"  {what:<56} {_hms(s):>9}")
    lines.append(f"  {'estimated wall time on this machine':<56} {_hms(est['seconds']):>9}"
                 f"  (calibrated{' earlier' if plan['costs'].get('cached') else ' now'}; an empty vector cache)")
    if est.get("note"):
        lines.append(f"  ({est['note']})")
    return "\n".join(lines)


def _hms(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else (f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s")
