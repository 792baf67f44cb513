"""The frozen-vector classifier on one language (issue 34, item 3): `crosslingual`'s no-bitext path
(a classifier on the encoder's frozen vectors, the in-domain set against the pool's bottom two thirds
by cosine, then refining on the pool's own vectors) run with the in-domain set and the pool in the
same language, so that any encoder serves, MiniLM included. Benchmark-only: the product's
monolingual classifier is `finetune`, which trains the encoder itself."""

from __future__ import annotations

from domainsift.select.crosslingual import CrosslingualSelector


class FrozenClassifierSelector(CrosslingualSelector):
    """``crosslingual`` without a bitext, for an in-domain set in the pool's own language."""

    name = "frozen-classifier"

    def _check_shared_space(self) -> None:
        """One language on both sides: every encoder's space is shared with itself."""


def register() -> None:
    """Make ``frozen-classifier`` a method of this process (bench/selection.py calls this)."""
    from domainsift.select import SELECTORS
    SELECTORS["frozen-classifier"] = "frozen_classifier:FrozenClassifierSelector"
