"""Variants of cross-lingual selection that measured worse than the product's, kept for their benchmark rows.

``PoolOnlyRefine``: the refining classifier trained on the pool language's pseudo-labels alone (the
first classifier's top pool lines against the pool's bottom two thirds), without the in-domain set
and the bitext negatives that the product's refining keeps.

``ProcrustesSelector``: an orthogonal map (Procrustes, after centring each language) in place of the
product's ridge map; it keeps translations closer (bench/results/crosslingual_retrieval.md) but
selects worse.

``ContrastiveSelector``: paper 003's contrastive adaptive layer. It measured worse than no alignment with the default English encoder (bench/results/crosslingual.md),
so the product aligns with a closed-form linear map instead (domainsift.select.crosslingual). This
module plugs the paper's layer into the product's selector through ``fit_alignment``:

* cluster the bitext's in-domain-language vectors into ``k`` clusters (GMM, k = 5);
* a 2-layer feed-forward layer ``g`` (hidden 128), applied to both languages: ``residual`` adds its
  output to the vector (its last layer starts at zero, so training starts from the encoder's space);
  ``mlp`` replaces the vector by its 128-d output, as in the paper;
* paper 003's contrastive loss (eq. 1) at temperature 0.2 in both directions, batch 64: a pair's
  positive is its own translation, its negatives the other side of the batch's pairs from *other*
  clusters (k = 1: every other pair of the batch, the paper's "no pre-clustering");
* Adam (lr 1e-3), early stopping (patience 5) on the loss over a held-out 10% of the bitext.
"""

from __future__ import annotations

import numpy as np

from domainsift.select.crosslingual import CrosslingualSelector, _mlp


def contrastive_loss(torch, za, zb, clusters, temperature: float):
    za = torch.nn.functional.normalize(za, dim=-1)
    zb = torch.nn.functional.normalize(zb, dim=-1)
    logits = za @ zb.T / temperature
    if len(torch.unique(clusters)) > 1:
        same = clusters[:, None] == clusters[None, :]
        eye = torch.eye(len(za), dtype=torch.bool)
        logits = logits.masked_fill(same & ~eye, float("-inf"))  # keep the positive, drop same-cluster pairs
    target = torch.arange(len(za))
    return 0.5 * (torch.nn.functional.cross_entropy(logits, target)
                  + torch.nn.functional.cross_entropy(logits.T, target))


def adapter(torch, dim: int, hidden: int, residual: bool):
    net = _mlp(torch, dim, hidden, dim if residual else hidden)
    if not residual:
        return net
    torch.nn.init.zeros_(net[2].weight)
    torch.nn.init.zeros_(net[2].bias)

    class Residual(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, x):
            return x + self.net(x)
    return Residual()


class ContrastiveAlignment:
    def __init__(self, torch, g):
        self.torch, self.g = torch, g

    def a(self, x: np.ndarray) -> np.ndarray:
        with self.torch.inference_mode():
            return self.g(self.torch.as_tensor(x, dtype=self.torch.float32)).numpy()

    b = a


def train_contrastive(torch, xa, xb, rng, seed: int, residual: bool, k: int = 5, hidden: int = 128,
                      temperature: float = 0.2, lr: float = 1e-3, epochs: int = 20) -> ContrastiveAlignment:
    from sklearn.mixture import GaussianMixture
    k = min(k, len(xa))
    clusters = GaussianMixture(k, covariance_type="diag", random_state=seed).fit_predict(xa) \
        if k > 1 else np.zeros(len(xa), dtype=int)
    order = rng.permutation(len(xa))
    n_dev = max(1, int(round(0.1 * len(xa))))
    dev, train = order[:n_dev], order[n_dev:]
    ta, tb, tc = (torch.as_tensor(v) for v in (xa, xb, clusters))
    g = adapter(torch, xa.shape[1], hidden, residual)
    opt = torch.optim.Adam(g.parameters(), lr=lr)
    best, best_state, waited = float("inf"), None, 0
    for _epoch in range(epochs):
        g.train()
        for b in np.array_split(rng.permutation(train), max(1, len(train) // 64)):
            b = torch.as_tensor(b)
            loss = contrastive_loss(torch, g(ta[b]), g(tb[b]), tc[b], temperature)
            opt.zero_grad()
            loss.backward()
            opt.step()
        g.eval()
        with torch.no_grad():
            chunks = [torch.as_tensor(c) for c in np.array_split(dev, max(1, len(dev) // 64))]
            dev_loss = float(np.mean([contrastive_loss(torch, g(ta[c]), g(tb[c]), tc[c], temperature).item()
                                      for c in chunks]))
        if dev_loss < best - 1e-6:
            best, waited = dev_loss, 0
            best_state = {n: p.detach().clone() for n, p in g.state_dict().items()}
        else:
            waited += 1
            if waited >= 5:
                break
    g.load_state_dict(best_state)
    g.eval()
    return ContrastiveAlignment(torch, g)


class ContrastiveSelector(CrosslingualSelector):
    """The product's cross-lingual selector with paper 003's contrastive layer as its alignment."""

    def __init__(self, residual: bool = True, k: int = 5, **kwargs):
        super().__init__(**kwargs)
        self.residual, self.k = residual, k

    def fit_alignment(self, xa, xb, rng):
        return train_contrastive(self._torch, xa, xb, rng, self.seed, self.residual, self.k)

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
