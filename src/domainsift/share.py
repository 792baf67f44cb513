"""How much of a pool is in-domain: the pool's mixture proportion, from positive-unlabeled data.

The pool is a mixture ``p_pool = a * p_in + (1 - a) * p_rest`` of the in-domain distribution (of which
the user's in-domain set is a sample) and everything else. A classifier that tells the in-domain set
from the pool orders lines by the density ratio ``p_in / p_pool``; its scores on lines it did not train
on give ``a``:

- ``bbe`` (the default; best-bin estimation, Garg et al. 2021): above a score ``t`` the pool holds a
  share ``q_pool(t)`` of its lines and the in-domain set ``q_in(t)`` of its own; where only in-domain
  lines reach (the top bin), ``q_pool(t) = a * q_in(t)``, elsewhere ``q_pool(t) >= a * q_in(t)``. The
  estimate is the ratio at the ``t`` whose upper confidence bound (DKW, ``delta``, ``gamma`` as the
  paper's) is lowest.
- ``elkan-noto`` (Elkan & Noto 2008, their e1): with the in-domain set labelled and the pool not, a
  calibrated classifier's mean probability on held-out in-domain lines is ``c = n_in / (n_in + a n_pool)``.

The classifier is a logistic regression over the frozen vectors of an encoder (the default MiniLM),
cross-fitted: every line, in-domain or pool, is scored by a fold that did not train on it. The pool
enters as a seeded sample (at most :data:`SAMPLE_LINES` lines; the binomial error of a share measured
on 20,000 lines is 0.003 at most), so the estimate costs the same on a billion lines as on a million.
The interval is a percentile bootstrap over both sets' cross-fitted scores: the sample's noise only (it
says "sampling interval"), not the bias of a pool whose other domains hold lines like the in-domain set
(bench/results/share.md, bench/results/share_ceiling.md).
What each estimator measured: bench/results/share.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np

from ._internal.errors import DomainsiftError

ESTIMATORS = ("bbe", "elkan-noto")
DEFAULT_ESTIMATOR = "bbe"
SAMPLE_LINES = 20_000   # pool lines the estimate reads (a seeded sample of a larger pool)
FOLDS = 5
BOOTSTRAP = 200
LEVEL = 0.95
MIN_IN_DOMAIN = 20       # fewer in-domain lines than this cannot give held-out folds worth a share


@dataclass
class ShareEstimate:
    """The in-domain share of a pool: the estimate, its interval, how it was made."""

    share: float
    low: float
    high: float
    estimator: str
    n_in_domain: int
    n_pool_sample: int
    level: float = LEVEL
    model: str | None = None
    seed: int = 0
    details: dict = field(default_factory=dict)

    def lines(self, n_pool: int) -> int:
        """The number of pool lines the share stands for (at least one)."""
        return max(1, int(round(self.share * n_pool)))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ShareEstimate":
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)

    def describe(self) -> str:
        return (f"{self.share:.1%} in-domain ({self.level:.0%} sampling interval {self.low:.1%}-{self.high:.1%}; "
                f"{self.estimator} over {self.n_pool_sample:,} pool lines)")


# ------------------------------------------------------------------ estimators on held-out scores
def best_bin(in_scores: np.ndarray, pool_scores: np.ndarray, delta: float = 0.1, gamma: float = 0.01) -> float:
    """Best-bin estimation (Garg et al. 2021): ``q_pool(t) / q_in(t)`` at the threshold whose upper
    confidence bound is lowest; thresholds are the in-domain scores themselves."""
    p = np.sort(np.asarray(in_scores, dtype=np.float64))
    u = np.sort(np.asarray(pool_scores, dtype=np.float64))
    n_p, n_u = len(p), len(u)
    q_p = (n_p - np.arange(n_p)) / n_p                              # share of in-domain scores >= p[i]
    q_u = (n_u - np.searchsorted(u, p, side="left")) / n_u          # share of pool scores >= p[i]
    eps_p = np.sqrt(np.log(4 / delta) / (2 * n_p))
    eps_u = np.sqrt(np.log(4 / delta) / (2 * n_u))
    ok = q_p - eps_p > 0
    if not ok.any():
        return float(min(1.0, q_u[0] / q_p[0]))
    bound = np.full(n_p, np.inf)
    bound[ok] = (q_u[ok] + (1 + gamma) * eps_u) / (q_p[ok] - eps_p)
    i = int(np.argmin(bound))
    return float(min(1.0, q_u[i] / q_p[i]))


def elkan_noto(in_scores: np.ndarray, n_in: int, n_pool: int) -> float:
    """Elkan & Noto's e1: ``c`` = the mean held-out probability of the in-domain lines (a classifier
    trained without class weights on ``n_in`` labelled lines against ``n_pool`` unlabelled ones), and
    the share ``n_in (1/c - 1) / n_pool``."""
    c = float(np.mean(in_scores))
    if c <= 0:
        return 1.0
    return float(np.clip(n_in * (1 / c - 1) / n_pool, 0.0, 1.0))


def _point(estimator: str, in_scores, pool_scores) -> float:
    if estimator == "bbe":
        return best_bin(in_scores, pool_scores)
    if estimator == "elkan-noto":
        return elkan_noto(in_scores, len(in_scores), len(pool_scores))
    raise DomainsiftError(f"unknown share estimator '{estimator}' (one of: {', '.join(ESTIMATORS)})")


# ------------------------------------------------------------------ the cross-fitted classifier
def crossfit_scores(in_vectors: np.ndarray, pool_vectors: np.ndarray, folds: int = FOLDS, seed: int = 0
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Every in-domain and pool vector's probability of being from the in-domain set, each from a
    logistic regression (no class weights: Elkan & Noto need its probabilities as they are) trained on
    the other ``folds - 1`` folds of both sets."""
    from sklearn.linear_model import LogisticRegression
    x_in = np.asarray(in_vectors, dtype=np.float64)
    x_pool = np.asarray(pool_vectors, dtype=np.float64)
    n_in, n_pool = len(x_in), len(x_pool)
    if n_in < max(MIN_IN_DOMAIN, folds):
        raise DomainsiftError(f"estimating the in-domain share needs at least {max(MIN_IN_DOMAIN, folds)} "
                              f"in-domain lines, got {n_in}")
    if n_pool < folds:
        raise DomainsiftError(f"estimating the in-domain share needs at least {folds} pool lines, got {n_pool}")
    rng = np.random.default_rng(seed)
    fold_in = rng.permutation(n_in) % folds
    fold_pool = rng.permutation(n_pool) % folds
    s_in, s_pool = np.empty(n_in), np.empty(n_pool)
    for k in range(folds):
        tr_in, tr_pool = fold_in != k, fold_pool != k
        x = np.concatenate([x_in[tr_in], x_pool[tr_pool]])
        y = np.concatenate([np.ones(int(tr_in.sum())), np.zeros(int(tr_pool.sum()))])
        clf = LogisticRegression(C=1.0, max_iter=2000, random_state=seed).fit(x, y)
        s_in[~tr_in] = clf.predict_proba(x_in[~tr_in])[:, 1]
        s_pool[~tr_pool] = clf.predict_proba(x_pool[~tr_pool])[:, 1]
    return s_in, s_pool


def estimate_from_scores(in_scores: np.ndarray, pool_scores: np.ndarray, estimator: str = DEFAULT_ESTIMATOR,
                         seed: int = 0, bootstrap: int = BOOTSTRAP, level: float = LEVEL) -> ShareEstimate:
    """The share from held-out scores of the in-domain set and of the pool, with a percentile bootstrap
    interval (both sets resampled, ``bootstrap`` times, from ``seed``)."""
    in_scores = np.asarray(in_scores, dtype=np.float64)
    pool_scores = np.asarray(pool_scores, dtype=np.float64)
    point = _point(estimator, in_scores, pool_scores)
    rng = np.random.default_rng([seed, 77])
    draws = np.array([_point(estimator, in_scores[rng.integers(0, len(in_scores), len(in_scores))],
                             pool_scores[rng.integers(0, len(pool_scores), len(pool_scores))])
                      for _ in range(bootstrap)])
    tail = (1 - level) / 2
    low, high = (np.quantile(draws, [tail, 1 - tail]) if bootstrap else (point, point))
    return ShareEstimate(share=point, low=float(min(low, point)), high=float(max(high, point)), estimator=estimator,
                         n_in_domain=len(in_scores), n_pool_sample=len(pool_scores), level=level, seed=seed,
                         details={"bootstrap": bootstrap})


def estimate_share(in_domain: Sequence[str], pool_sample: Sequence[str], model: str = "minilm",
                   estimator: str = DEFAULT_ESTIMATOR, seed: int = 0, bootstrap: int = BOOTSTRAP,
                   cache_dir: str | None = None, progress: bool = True, encode=None,
                   pool_vectors: np.ndarray | None = None) -> ShareEstimate:
    """The in-domain share of the pool that ``pool_sample`` (a seeded sample, or the whole pool) was
    drawn from: frozen vectors of ``model``, a cross-fitted classifier, ``estimator`` on its held-out
    scores (:data:`FOLDS` folds). ``encode(texts) -> vectors`` replaces the encoder (vectors already at hand);
    ``pool_vectors``: ``pool_sample``'s vectors, already encoded (several targets estimated on one
    pool sample encode it once)."""
    if estimator not in ESTIMATORS:
        raise DomainsiftError(f"unknown share estimator '{estimator}' (one of: {', '.join(ESTIMATORS)})")
    in_texts, pool_texts = list(in_domain), list(pool_sample)
    if pool_vectors is not None and len(pool_vectors) != len(pool_texts):
        raise ValueError(f"{len(pool_vectors)} pool vectors for {len(pool_texts)} pool lines")
    if encode is None:
        from .embed import EmbedConfig
        encode = EmbedConfig(embedder=model, cache_dir=cache_dir, progress=progress).build().encode
    s_in, s_pool = crossfit_scores(encode(in_texts), encode(pool_texts) if pool_vectors is None else pool_vectors,
                                   FOLDS, seed)
    est = estimate_from_scores(s_in, s_pool, estimator, seed, bootstrap)
    est.model = model
    est.details.update(folds=FOLDS, classifier="logistic regression on frozen vectors")
    return est


__all__ = ["ShareEstimate", "estimate_share", "estimate_from_scores", "crossfit_scores", "best_bin",
           "elkan_noto", "ESTIMATORS", "DEFAULT_ESTIMATOR", "SAMPLE_LINES"]
