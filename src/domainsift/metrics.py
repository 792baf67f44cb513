"""Precision, recall and F1: of a selection against an oracle's ids, and of a classifier's decisions."""

from __future__ import annotations

import os
from typing import Iterable


def f1_score(precision: float, recall: float) -> float:
    """The harmonic mean of precision and recall (0 when both are 0)."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def precision_recall(selected: Iterable[tuple[str, int]], gold: Iterable[tuple[str, int]]) -> dict:
    """Precision, recall and F1 of selected ids against gold ids (paths compared resolved)."""
    sel = {(os.path.realpath(f), int(n)) for f, n in selected}
    gold_set = {(os.path.realpath(f), int(n)) for f, n in gold}
    hit = len(sel & gold_set)
    p = hit / len(sel) if sel else 0.0
    r = hit / len(gold_set) if gold_set else 0.0
    return {"precision": p, "recall": r, "f1": f1_score(p, r),
            "n_selected": len(sel), "n_gold": len(gold_set), "n_correct": hit}
