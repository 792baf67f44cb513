"""Self-training for finetune (issue 32, item 3), benchmark-only until it measures better.

``finetune-self-train`` is the product's ``finetune`` (its defaults, or any of its parameters) fitted
twice, as ``crosslingual --refine`` refines: the first classifier scores the pool; the second, a
fresh copy of the encoder, trains on the in-domain set plus the first one's ``expand`` x |in-domain|
most confident pool lines as positives, against negatives drawn from the pool's ``neg_share`` least
confident lines (its bottom two thirds by default, paper 000's rule applied to the first classifier's
ranking instead of cosine's). The second classifier gives the scores. About twice finetune's cost.
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
    )

    def fit(self, in_domain, pool=None) -> "SelfTrainFinetuneSelector":
        in_domain, pool = self._fit_input(in_domain, pool)
        first = FinetuneSelector(**{p.name: getattr(self, p.name) for p in FinetuneSelector.params})
        first.fit(in_domain, pool)
        scores = np.asarray(first.score(pool), dtype=np.float64)
        order = np.argsort(-scores, kind="stable")
        m = min(int(round(self.expand * len(in_domain))), len(pool) // 3)
        n_neg = max(1, int(round(self.st_neg_share * len(pool))))
        positives = list(in_domain.texts) + [pool.texts[i] for i in order[:m]]
        negatives = [pool.texts[i] for i in order[len(pool) - n_neg:]]
        self.first_holdout_metrics_ = first.holdout_metrics_
        del first
        super().fit(positives, negatives)
        self.n_pseudo_positives_ = m
        return self


def register() -> None:
    """Make ``finetune-self-train`` a method of this process (bench/selection.py calls this)."""
    from domainsift.select import SELECTORS
    SELECTORS["finetune-self-train"] = "self_training:SelfTrainFinetuneSelector"
