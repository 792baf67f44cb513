"""The Selector protocol and the one shared step that turns scores into a selection.

A selector only *scores* (higher = more in-domain)::

    sel = get_selector("cosine").fit(in_domain_texts, pool_texts)
    scores = sel.score(pool_texts)            # (n,) float

and :func:`choose` picks from scores: the top N, a top fraction, everything at
or above a threshold, or (for probability scores) everything above 0.5.
"""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from ..errors import DomainsiftError


@runtime_checkable
class Selector(Protocol):
    """Scores sentences by how in-domain they are."""

    name: str
    #: True when :meth:`score` returns probabilities of being in-domain (``--positive`` works)
    probabilistic: bool

    def fit(self, in_domain: Sequence[str], pool: Sequence[str] | None = None) -> "Selector":
        """Learn from the in-domain sentences (and, where the method needs it, the pool)."""

    def score(self, texts: Sequence[str]) -> np.ndarray:
        """Return float scores of shape ``(len(texts),)``; higher = more in-domain."""

    def signature_params(self) -> dict:
        """Parameters that identify this selector's scores (for the signature)."""


class BaseSelector:
    """Holds what every selector shares: a seed, a name, parameter reporting."""

    name = "base"
    probabilistic = False
    #: a sentence's score depends on that sentence alone, so the pool may be scored in chunks
    per_sentence = True

    def signature_params(self) -> dict:
        return {k: v for k, v in vars(self).items()
                if not k.startswith("_") and not k.endswith("_") and k != "progress"
                and isinstance(v, (int, float, str, bool, type(None)))}

    @staticmethod
    def _check_fit_input(in_domain: Sequence[str]) -> None:
        if len(in_domain) == 0:
            raise DomainsiftError("the in-domain set is empty")


def check_n_against_pool(n_pool: int, top: int | None, fraction: float | None = None) -> None:
    """Reject N <= 0, N larger than the pool and a fraction outside (0, 1] (called before any
    scoring or writing, and by :func:`choose`)."""
    if top is not None and top <= 0:
        raise DomainsiftError(f"N must be positive, got {top}")
    if top is not None and top > n_pool:
        raise DomainsiftError(f"cannot select {top} lines from a pool of {n_pool}")
    if fraction is not None and not 0 < fraction <= 1:
        raise DomainsiftError(f"fraction must be in (0, 1], got {fraction}")


def choose(scores: np.ndarray, top: int | None = None, fraction: float | None = None,
           threshold: float | None = None, positive: bool = False,
           probabilistic: bool = False) -> np.ndarray:
    """Indices of the selected items, best first (ties broken by position).

    Exactly one rule: ``top`` N, top ``fraction`` (0 < f <= 1), scores >= ``threshold``,
    or ``positive`` (probability > 0.5, only for probabilistic scores).
    """
    scores = np.asarray(scores, dtype=np.float64)
    n = len(scores)
    rules = sum(x is not None for x in (top, fraction, threshold)) + bool(positive)
    if rules != 1:
        raise DomainsiftError("give exactly one of --top, --fraction, --threshold, --positive")
    check_n_against_pool(n, top, fraction)
    order = np.lexsort((np.arange(n), -scores))  # by score desc, then position
    if top is not None:
        return order[:top]
    if fraction is not None:
        return order[:max(1, int(round(fraction * n)))]
    if positive:
        if not probabilistic:
            raise DomainsiftError("--positive needs probability scores (method finetune)")
        return order[scores[order] > 0.5]
    return order[scores[order] >= threshold]
