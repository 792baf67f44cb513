"""Variants of cross-lingual selection that measured worse than the product's, kept for their benchmark rows.

``PoolOnlyRefine``: the refining classifier trained on the pool language's pseudo-labels alone (the
first classifier's top pool lines against the pool's bottom two thirds), without the in-domain set
and the bitext negatives that the product's refining keeps.

``ProcrustesSelector``: an orthogonal map (Procrustes, after centring each language) in place of the
product's ridge map; it keeps translations closer (bench/results/crosslingual_retrieval.md) but
selects worse.

``ContrastiveSelector``: paper 003's contrastive adaptive layer at lr 1e-3 (the paper: 1e-5), as a
residual layer (``residual``: its output added to the vector, the last layer starting at zero) or
as the paper's network whose 128-d output replaces the vector. The paper's own recipe is in the
product (``crosslingual --alignment contrastive``, :func:`domainsift.select.crosslingual.train_contrastive`);
these are the variants measured before it moved there.
"""

from __future__ import annotations

import numpy as np

from domainsift.select.crosslingual import CrosslingualSelector, train_contrastive


class ContrastiveSelector(CrosslingualSelector):
    """The product's cross-lingual selector with paper 003's contrastive layer as its alignment."""

    def __init__(self, residual: bool = True, k: int = 5, **kwargs):
        super().__init__(**kwargs)
        self.residual, self.k = residual, k

    def fit_alignment(self, xa, xb, rng):
        return train_contrastive(self._torch, xa, xb, rng, self.seed, self.residual, self.k, lr=1e-3)

    def signature_params(self) -> dict:
        return {**super().signature_params(), "alignment": "contrastive", "residual": self.residual, "k": self.k}


class PoolOnlyRefine(CrosslingualSelector):
    """The refining classifier on the pool's pseudo-labels alone (the first version of ``refine``)."""

    def _classifier(self, pos, neg, rng, desc):
        if desc == "refine":  # drop the first classifier's examples, which the product's _refine puts first
            pos, neg = pos[self._n_first[0]:], neg[self._n_first[1]:]
        else:
            self._n_first = (len(pos), len(neg))
        return super()._classifier(pos, neg, rng, desc)

    def signature_params(self) -> dict:
        return {**super().signature_params(), "refine_on": "pool only"}


class CentreAlignment:
    """Each language centred at its bitext side's mean, nothing more."""

    def __init__(self, xa, xb):
        self.ma, self.mb = xa.mean(0), xb.mean(0)

    def a(self, x):
        return (x - self.ma).astype(np.float32)

    def b(self, x):
        return (x - self.mb).astype(np.float32)


class ProcrustesAlignment(CentreAlignment):
    """Centred, then A rotated onto B (orthogonal Procrustes)."""

    def __init__(self, xa, xb):
        super().__init__(xa, xb)
        u, _, vt = np.linalg.svd((xa - self.ma).T.astype(np.float64) @ (xb - self.mb))
        self.r = (u @ vt).astype(np.float32)

    def a(self, x):
        return super().a(x) @ self.r


class ProcrustesSelector(CrosslingualSelector):
    def fit_alignment(self, xa, xb, rng):
        return ProcrustesAlignment(xa, xb)

    def signature_params(self) -> dict:
        return {**super().signature_params(), "alignment": "procrustes"}
