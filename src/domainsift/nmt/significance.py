"""Is one system's translation better than another's? Paired bootstrap resampling (Koehn, 2004), as
sacrebleu's ``--paired-bs`` does it, with the seed given rather than read from the environment.

Both systems' sentence-level sufficient statistics (sacrebleu's BLEU and chrF++) are resampled with the same
``n_samples`` draws of the test sentences (``numpy.random.default_rng(seed)``, as sacrebleu draws them); each
draw gives both corpus scores. Reported, for each metric: the two scores, their difference (system minus
baseline), the 95% interval of the difference (the 2.5th and 97.5th percentiles of the resampled
differences), and sacrebleu's p-value (the share of resampled absolute differences, centred on their mean,
above the observed one, with +1 smoothing). With sacrebleu's default seed (12345) and 1,000 samples the
p-values are those of ``sacrebleu REF -i BASE SYS --paired-bs`` (``tests/test_significance.py``).

A difference is *decided* when its interval excludes 0 (and then p < 0.05); otherwise it is not decided.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .._internal.errors import InputError

SAMPLES, SEED = 1000, 12345  # sacrebleu's defaults for --paired-bs


def _metrics() -> dict:
    try:
        import sacrebleu
    except ImportError:
        from .._internal.errors import missing_extra
        raise missing_extra("sacrebleu", "nmt") from None
    return {"bleu": sacrebleu.metrics.BLEU(), "chrfpp": sacrebleu.metrics.CHRF(word_order=2)}


def paired_bootstrap(baseline: Sequence[str], system: Sequence[str], references: Sequence[str],
                     n_samples: int = SAMPLES, seed: int = SEED) -> dict:
    """``system`` against ``baseline`` on the same ``references`` (one each, aligned): for ``bleu`` and
    ``chrfpp``, ``{"baseline", "system", "difference", "ci95": [low, high], "p", "decided"}``; with
    ``n_samples``, ``seed`` and sacrebleu's signatures."""
    base, sys_, refs = list(baseline), list(system), list(references)
    if not (len(base) == len(sys_) == len(refs)):
        raise InputError(f"a paired test needs aligned lines: {len(base)} baseline, {len(sys_)} system and "
                         f"{len(refs)} reference lines")
    if not refs:
        raise InputError("a paired test needs at least one line")
    if n_samples < 1:
        raise InputError(f"the number of bootstrap samples must be at least 1, got {n_samples}")
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(refs), size=(n_samples, len(refs)), replace=True)
    out = {"n": len(refs), "n_samples": n_samples, "seed": seed}
    for name, metric in _metrics().items():
        stats_b = metric._extract_corpus_statistics(base, [refs])
        stats_s = metric._extract_corpus_statistics(sys_, [refs])
        score_b = metric._aggregate_and_compute(stats_b).score
        score_s = metric._aggregate_and_compute(stats_s).score
        sb, ss = np.array(stats_b, dtype="float32"), np.array(stats_s, dtype="float32")
        rb = np.array([metric._compute_score_from_stats(x.sum(0)).score for x in sb[idx]])
        rs = np.array([metric._compute_score_from_stats(x.sum(0)).score for x in ss[idx]])
        diffs = rs - rb
        centred = np.abs(diffs) - np.abs(diffs).mean()
        p = (int(np.sum(centred > abs(score_s - score_b))) + 1) / (n_samples + 1)
        low, high = (float(v) for v in np.percentile(diffs, [2.5, 97.5]))
        out[name] = {"baseline": round(score_b, 4), "system": round(score_s, 4),
                     "difference": round(score_s - score_b, 4), "ci95": [round(low, 4), round(high, 4)],
                     "p": round(p, 4), "decided": bool(low > 0 or high < 0),
                     "signature": str(metric.get_signature())}
    return out


def verdict(test: dict, metric: str = "bleu") -> str:
    """One phrase for a paired test's metric: "better", "worse" (the interval excludes 0) or "not decided"."""
    t = test[metric]
    if not t["decided"]:
        return "not decided"
    return "better" if t["difference"] > 0 else "worse"


def in_words(test: dict | None, metric: str = "bleu") -> str:
    """A paired test's metric as one phrase: the difference, its 95% interval, p and the verdict ("-": none)."""
    if not test:
        return "-"
    t = test[metric]
    return (f"{t['difference']:+.2f} [{t['ci95'][0]:+.2f}, {t['ci95'][1]:+.2f}], p = {t['p']:.3f}: "
            f"{verdict(test, metric)}")
