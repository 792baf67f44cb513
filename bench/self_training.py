"""Self-training for finetune (issue 32, item 3), benchmark-only until it measures better.

``finetune-self-train`` is the product's ``finetune`` (its defaults, or any of its parameters) fitted
twice, as ``crosslingual --refine`` refines: the first classifier scores the pool; the second, a
fresh copy of the encoder, trains on the in-domain set plus the first one's ``expand`` x |in-domain|
most confident pool lines as positives, against negatives drawn from the pool's ``neg_share`` least
confident lines (its bottom two thirds by default, paper 000's rule applied to the first classifier's
ranking instead of cosine's). The second classifier gives the scores. About three times finetune's cost
(the second round trains on twice the lines); ``first_run`` (a finished run directory of finetune at the
same parameters, seed and pool) stands for the first round, which then costs nothing: bench/recipes.py
passes its own finetune run, the same classifier the first round would train.
"""

from __future__ import annotations

import numpy as np

from domainsift.select.base import Param, at_least, in_range
from domainsift.select.finetune import FinetuneSelector


class SelfTrainFinetuneSelector(FinetuneSelector):
    """finetune, then finetune again on its own confident pool lines."""

    name = "finetune-self-train"
    params = FinetuneSelector.params + (
        Param("expand", float, 1.0, "pseudo-positives per in-domain line: the first classifier's top pool lines",
              check=at_least(0)),
        Param("st_neg_share", float, 2 / 3, "negatives of the second round: drawn from this share of the pool "
              "the first classifier ranks lowest", check=in_range(0, 1)),
        Param("st_confidence", float, None, "pseudo-positives only among pool lines the first classifier gives "
              "at least this probability (so a pool that holds few in-domain lines lends few)",
              check=lambda v: None if v is None or 0 < v < 1 else f"must be in (0, 1), got {v}"),
        Param("first_run", str, None, "a finished run directory of finetune (same parameters, seed and pool) "
              "whose scores stand for the first round"),
    )

    def fit(self, in_domain, pool=None) -> "SelfTrainFinetuneSelector":
        in_domain, pool = self._fit_input(in_domain, pool)
        if self.first_run:
            scores = self._first_scores(pool)
            self.first_holdout_metrics_ = None
        else:
            first = FinetuneSelector(**{p.name: getattr(self, p.name) for p in FinetuneSelector.params})
            first.fit(in_domain, pool)
            scores = np.asarray(first.score(pool), dtype=np.float64)
            self.first_holdout_metrics_ = first.holdout_metrics_
            del first
        return self.second_round(in_domain, pool, scores)

    def _first_scores(self, pool) -> np.ndarray:
        """The first round's scores, read from ``first_run``; its pool must be this one, line for line."""
        from domainsift._internal.errors import DomainsiftError
        from domainsift.rundir import load_scores
        run = load_scores(self.first_run)
        sig = run.signature
        mine = FinetuneSelector(**{p.name: getattr(self, p.name) for p in FinetuneSelector.params}).signature_params()
        differ = sorted(k for k, v in mine.items() if k in sig and sig[k] != v)
        if sig.get("method") != "finetune" or len(run.scores) != len(pool) or differ:
            raise DomainsiftError(f"{self.first_run}: not a finetune run of this pool at these parameters "
                                  f"({sig.get('method')}, {len(run.scores)} scores for {len(pool)} lines; "
                                  f"differ: {differ})")
        return np.asarray(run.scores, dtype=np.float64)

    def second_round(self, in_domain, pool, scores: np.ndarray) -> "SelfTrainFinetuneSelector":
        """Train the second classifier on the in-domain set plus the top of ``scores`` (the first
        classifier's, over ``pool``) against negatives from its bottom."""
        order = np.argsort(-scores, kind="stable")
        m = min(int(round(self.expand * len(in_domain))), len(pool) // 3)
        if self.st_confidence is not None:
            m = min(m, int((scores >= self.st_confidence).sum()))
        n_neg = max(1, int(round(self.st_neg_share * len(pool))))
        positives = list(in_domain.texts) + [pool.texts[i] for i in order[:m]]
        negatives = [pool.texts[i] for i in order[len(pool) - n_neg:]]
        FinetuneSelector.fit(self, positives, negatives)
        self.n_pseudo_positives_ = m
        return self


def register() -> None:
    """Make ``finetune-self-train`` a method of this process (bench/selection.py calls this)."""
    from domainsift.select import SELECTORS
    SELECTORS["finetune-self-train"] = "self_training:SelfTrainFinetuneSelector"
