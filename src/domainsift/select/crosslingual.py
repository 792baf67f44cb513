"""Cross-lingual selection (paper 003): a domain classifier trained in one language selects in another.

The in-domain set is in language A (German leaflets); the pool is in language B (an
English crawl). Ordinary bitext of A and B from *other* domains (``--bitext A_FILE B_FILE``)
teaches an adaptive layer over the frozen encoder that carries A's vectors into B's space:

1. encode everything with the chosen encoder, frozen (vectors through the cache);
2. the adaptive layer: each language centred at its bitext side's mean, and a linear map from A's
   vectors to their translations' B vectors, fitted in closed form (ridge regression, penalty chosen
   by leave-one-out on the bitext: scikit-learn's ``RidgeCV``); B's vectors stay where the encoder
   put them. ``alignment="contrastive"`` (``--alignment contrastive``) trains paper 003's adaptive
   layer instead, with the paper's settings (:func:`train_contrastive`): over the English default
   encoder it measured worse than no alignment at all (it learns to tell the bitext's domains apart
   and loses the translations of a domain it never saw: retrieval of unseen-domain translations fell
   from 0.27 to 0.10; rows in bench/results/crosslingual.md), so the ridge map is the default;
3. a domain classifier (2-layer feed-forward, :func:`domainsift.select.train.train_classifier`) on the
   adapted in-domain vectors against negatives in the *same* language A: the bitext's A side least
   similar to the in-domain mean (the bottom two thirds, paper 000's rule);
4. ``refine`` (default on): the classifier scores the pool; its top ``len(in_domain)`` lines join the
   in-domain set as positives and the pool's bottom two thirds join the negatives, and a second
   classifier of the same shape, trained on both, gives the scores. The first classifier has seen
   only mapped A vectors, and a linear map is never exact; the second also learns from real B
   vectors, where the scores are taken, and still from the user's in-domain set;
5. score the pool (language B).

``align=False`` (``--no-align``) trains the same classifiers in the raw encoder space: paper 003's
baseline. Scores are probabilities of being in-domain.
"""

from __future__ import annotations

import os

import numpy as np

from ..io.corpus import as_corpus, read_parallel
from .._internal.errors import DomainsiftError
from .base import BACKEND, CACHE_DIR, DEVICE, MAX_LENGTH, PROGRESS, SEED, EncoderSelector, Param, at_least, in_range


HEAD_BATCH = 64  # the classifiers' training batch (in defaults.current_defaults)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def _mlp(torch, d_in: int, hidden: int, d_out: int):
    return torch.nn.Sequential(torch.nn.Linear(d_in, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, d_out))


class LinearAlignment:
    """The adaptive layer: A's vectors mapped into B's space by ridge regression on the bitext's pairs,
    both languages centred at their bitext side's mean (the classifiers' inputs are centred)."""

    ALPHAS = (0.1, 1.0, 10.0, 100.0, 1000.0)

    def __init__(self, xa: np.ndarray, xb: np.ndarray):
        from sklearn.linear_model import RidgeCV
        self.mean_b = xb.mean(0)
        self.ridge = RidgeCV(alphas=self.ALPHAS).fit(xa, xb - self.mean_b)

    @property
    def alpha_(self) -> float:
        """The ridge penalty that leave-one-out chose."""
        return float(self.ridge.alpha_)

    def a(self, x: np.ndarray) -> np.ndarray:
        return self.ridge.predict(x).astype(np.float32)

    def b(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean_b).astype(np.float32)


class LoadedLinearAlignment:
    """A saved ridge alignment as scoring needs it: the pool language's side, centred at its bitext mean."""

    def __init__(self, mean_b: np.ndarray):
        self.mean_b = np.asarray(mean_b)

    def b(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean_b).astype(np.float32)


class ContrastiveAlignment:
    """Paper 003's adaptive layer: one feed-forward network ``g`` applied to both languages."""

    def __init__(self, torch, g):
        self.torch, self.g = torch, g

    def a(self, x: np.ndarray) -> np.ndarray:
        with self.torch.inference_mode():
            return self.g(self.torch.as_tensor(x, dtype=self.torch.float32)).numpy()

    b = a


def contrastive_loss(torch, za, zb, clusters, temperature: float):
    """Paper 003's eq. 1 in both directions: a pair's positive is its own translation, its negatives
    the other side of the batch's pairs from *other* clusters (one cluster: every other pair)."""
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


def adapter(torch, dim: int, hidden: int):
    """The adaptive layer's network (paper 003's): 2 layers, ``hidden`` wide, replacing a vector by its
    ``hidden``-d output."""
    return _mlp(torch, dim, hidden, hidden)


# paper 003, section 5.1 and appendix A
CONTRASTIVE = {"k": 5, "hidden": 128, "temperature": 0.2, "lr": 1e-5, "batch": 64, "epochs": 20, "patience": 5,
               "dev_share": 0.1}


def train_contrastive(torch, xa: np.ndarray, xb: np.ndarray, rng: np.random.Generator, seed: int,
                      k: int = CONTRASTIVE["k"], hidden: int = CONTRASTIVE["hidden"],
                      temperature: float = CONTRASTIVE["temperature"], lr: float = CONTRASTIVE["lr"],
                      epochs: int = CONTRASTIVE["epochs"]) -> ContrastiveAlignment:
    """Paper 003's adaptive layer trained on the bitext's vectors: the A side clustered into ``k``
    clusters (GMM) for the negatives, Adam, batches of 64 pairs, early stopping (patience 5) on the
    loss over a held-out 10% of the pairs; the best epoch's weights are kept."""
    from sklearn.mixture import GaussianMixture
    k = min(k, len(xa))
    clusters = GaussianMixture(k, covariance_type="diag", random_state=seed).fit_predict(xa) \
        if k > 1 else np.zeros(len(xa), dtype=int)
    order = rng.permutation(len(xa))
    n_dev = max(1, int(round(CONTRASTIVE["dev_share"] * len(xa))))
    dev, train = order[:n_dev], order[n_dev:]
    if len(train) == 0:
        train = dev
    ta, tb, tc = (torch.as_tensor(v) for v in (xa, xb, clusters))
    g = adapter(torch, xa.shape[1], hidden)
    opt = torch.optim.Adam(g.parameters(), lr=lr)
    batch, patience = CONTRASTIVE["batch"], CONTRASTIVE["patience"]
    best, best_state, waited = float("inf"), None, 0
    for _epoch in range(epochs):
        g.train()
        for b in np.array_split(rng.permutation(train), max(1, len(train) // batch)):
            b = torch.as_tensor(b)
            loss = contrastive_loss(torch, g(ta[b]), g(tb[b]), tc[b], temperature)
            opt.zero_grad()
            loss.backward()
            opt.step()
        g.eval()
        with torch.no_grad():
            chunks = [torch.as_tensor(c) for c in np.array_split(dev, max(1, len(dev) // batch))]
            dev_loss = float(np.mean([contrastive_loss(torch, g(ta[c]), g(tb[c]), tc[c], temperature).item()
                                      for c in chunks]))
        if best_state is None or dev_loss < best - 1e-6:
            best, waited = dev_loss, 0
            best_state = {n: p.detach().clone() for n, p in g.state_dict().items()}
        else:
            waited += 1
            if waited >= patience:
                break
    g.load_state_dict(best_state)
    g.eval()
    return ContrastiveAlignment(torch, g)


class NoAlignment:
    """``--no-align``: both languages as the encoder gives them (with ``--no-refine``, paper 003's baseline)."""

    def a(self, x: np.ndarray) -> np.ndarray:
        return x

    b = a


class VectorClassifier:
    """A 2-layer feed-forward head over fixed vectors, in the shape :func:`train_classifier` trains."""

    def __init__(self, torch, dim: int, hidden: int):
        self.torch, self.device, self.dim, self.hidden = torch, "cpu", dim, hidden
        self.head = None

    def new_head(self) -> None:
        self.head = _mlp(self.torch, self.dim, self.hidden, 1)

    def param_groups(self, cfg) -> list[dict]:
        return [{"params": self.head.parameters(), "lr": cfg.lr}]

    def train(self, flag: bool = True) -> None:
        self.head.train(flag)

    def forward(self, rows):
        return self.head(self.torch.as_tensor(np.stack(rows), dtype=self.torch.float32)).squeeze(-1)

    def predict(self, x: np.ndarray) -> np.ndarray:
        torch = self.torch
        self.train(False)
        with torch.inference_mode():
            logits = self.head(torch.as_tensor(x, dtype=torch.float32)).squeeze(-1)
        from .._internal.rows import sigmoid
        return sigmoid(logits.double().numpy())


class CrosslingualSelector(EncoderSelector):
    """Selects pool records in one language with a domain classifier trained in another."""

    name = "crosslingual"
    probabilistic = True
    needs_pool = True
    frozen_vectors = True
    crosses_languages = True
    params = (
        Param("model", str, "multilingual", "encoder, frozen: multilingual (the default since 0.10.0: USE-m, both "
              "languages in one space, so no --bitext is needed; measured best, bench/results/crosslingual.md), "
              "minilm (English-trained: needs --bitext), or a Hugging Face name or local path"),
        Param("bitext", str, (), "a bitext of other domains: the in-domain set's language file, then the pool "
              "language's file, aligned line by line (repeatable); optional with a multilingual encoder (the "
              "negatives then come from the pool's bottom two thirds by cosine)", metavar=("IN_LANG", "POOL_LANG"),
              nargs=2, action="append"),
        Param("align", bool, True, "--align (the default) maps the in-domain language into the pool language's "
              "space, fitted on the bitext; --no-align trains the classifier in the raw encoder space "
              "(with --no-refine, paper 003's baseline)"),
        Param("alignment", str, "auto", "how --align uses a --bitext: auto (the default: ridge on an encoder of "
              "one language; on one that puts both languages in one space, such as multilingual, the bitext is "
              "not used, with a notice: every way of using it measured no better, bench/results/crosslingual.md), "
              "ridge (a linear map fitted in closed form, on any encoder) or contrastive (paper 003's adaptive "
              "layer with the paper's settings; measured worse, bench/results/crosslingual.md)",
              choices=("auto", "ridge", "contrastive")),
        Param("refine", bool, True, "--refine (the default): a second classifier gives the scores, trained on "
              "the first one's examples plus the pool language's own vectors (the first classifier's top pool "
              "lines as positives, the pool's bottom two thirds as negatives); --no-refine scores with the first"),
        Param("hidden", int, 128, "hidden size of the classifiers", check=at_least(1)),
        Param("lr", float, 1e-3, "learning rate of the classifiers", check=at_least(0)),
        Param("epochs", int, 20, "epochs of each classifier", check=at_least(1)),
        Param("neg_share", float, 2 / 3, "negatives: this share of the bitext's in-domain-language side least "
              "similar to the in-domain mean", check=in_range(0, 1)),
        MAX_LENGTH, BACKEND, SEED, DEVICE, CACHE_DIR, PROGRESS,
    )

    learned = ("alignment_", "classifier_", "refined_")
    saves_state = True  # the base class's folder: state.npz (the head, the map) and state.json

    def input_files(self) -> list[str]:
        return [f for pair in self.bitext for f in pair]

    def fitted_state(self) -> dict:
        """What scoring needs: the pool language's side of the alignment, the classifier's head, and the
        picture of the alignment the run directory gets (computed at fit time)."""
        al = self.alignment_
        if isinstance(al, (LinearAlignment, LoadedLinearAlignment)):
            align = {"kind": "linear", "mean_b": np.asarray(al.mean_b)}
        elif isinstance(al, ContrastiveAlignment):
            align = {"kind": "contrastive", "g": {k: v.detach().cpu().numpy() for k, v in al.g.state_dict().items()},
                     "dim": int(al.g[0].in_features), "hidden": int(al.g[0].out_features)}
        else:
            align = {"kind": "none"}
        head = self.classifier_
        return {"alignment": align, "dim": int(head.dim), "hidden": int(head.hidden), "refined": bool(self.refined_),
                "head": {k: v.detach().cpu().numpy() for k, v in head.head.state_dict().items()},
                "views": getattr(self, "alignment_views_", None)}

    def set_fitted(self, state: dict) -> "CrosslingualSelector":
        from ..embed.transformers import _torch
        self._torch = torch = _torch()
        al = state["alignment"]
        if al["kind"] == "linear":
            self.alignment_ = LoadedLinearAlignment(al["mean_b"])
        elif al["kind"] == "contrastive":
            g = adapter(torch, int(al["dim"]), int(al["hidden"]))
            g.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in al["g"].items()})
            g.eval()
            self.alignment_ = ContrastiveAlignment(torch, g)
        else:
            self.alignment_ = NoAlignment()
        clf = VectorClassifier(torch, int(state["dim"]), int(state["hidden"]))
        clf.new_head()
        clf.head.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state["head"].items()})
        self.classifier_, self.refined_ = clf, bool(state["refined"])
        self.alignment_views_ = state.get("views")
        return self

    def bitext_unused(self) -> bool:
        """The rule for a --bitext on an encoder that already puts both languages in one space (issue 46,
        item 3): with the default ``alignment="auto"`` it is not used. On the shared German benchmark
        (seeds 0-1) the ridge map over it and its lines as negatives without a map both scored below no
        bitext at all (bench/results/crosslingual.md), so more input would make the selection worse.
        An explicit ``--alignment ridge|contrastive`` or ``--no-align`` still uses it (paper 003's systems
        stay runnable)."""
        from ..embed import abilities
        return bool(self.bitext) and self.align and self.alignment == "auto" and abilities(self.model).shared_space

    def signature_params(self) -> dict:
        p = super().signature_params()
        unused = self.bitext_unused()
        used = [] if unused else self.bitext
        p["bitext"] = [[os.path.realpath(a), os.path.realpath(b)] for a, b in used]
        if unused:
            p["bitext_not_used"] = [[os.path.realpath(a), os.path.realpath(b)] for a, b in self.bitext]
        p["negatives_from"] = "bitext" if used else "pool"
        if p.get("alignment") == "auto":
            p["alignment"] = "ridge"  # what auto runs when the bitext is used
        if not self.align or not used:
            p["alignment"] = None  # no map ran
        elif self.alignment == "contrastive":
            p["contrastive"] = dict(CONTRASTIVE)  # the layer's settings, as they ran
        return p

    def _encode(self, texts) -> np.ndarray:
        if not hasattr(self, "_enc"):
            from ..embed import EmbedConfig
            self._enc = EmbedConfig(embedder=self.model, max_length=self.max_length, device=self.device,
                                    seed=self.seed, cache_dir=self.cache_dir, progress=self.progress,
                                    backend=self.backend).build()
        return np.asarray(self._enc.encode(list(texts)), dtype=np.float32)

    def fit_alignment(self, xa: np.ndarray, xb: np.ndarray, rng: np.random.Generator):
        """The adaptive layer fitted on the bitext's vectors (xa: in-domain language, xb: pool language):
        an object whose ``a(x)`` and ``b(x)`` put either language's vectors into the shared space.
        ``alignment`` picks the ridge map or paper 003's contrastive layer."""
        if self.alignment == "contrastive":
            return train_contrastive(self._torch, xa, xb, rng, self.seed)
        return LinearAlignment(xa, xb)

    def _classifier(self, pos: np.ndarray, neg: np.ndarray, rng: np.random.Generator, desc: str) -> VectorClassifier:
        """A 2-layer feed-forward classifier; every epoch sees the positives and as many fresh negatives."""
        from .train import TrainConfig, train_classifier
        n_pos = len(pos)

        def epoch_data(epoch: int):
            pick = rng.choice(len(neg), size=min(len(neg), n_pos), replace=False)
            rows = list(pos) + list(neg[pick])
            return rows, np.r_[np.ones(n_pos), np.zeros(len(pick))].astype(np.float32)

        clf = VectorClassifier(self._torch, pos.shape[1], self.hidden)
        cfg = TrainConfig(epochs=self.epochs, lr=self.lr, batch_size=HEAD_BATCH, bucket=0, warmup=0.0,
                          weight_decay=0.0, seed=self.seed, progress=False)
        steps = int(np.ceil(2 * n_pos / HEAD_BATCH))
        clf.losses_ = train_classifier(clf, epoch_data, steps, cfg, rng, desc=desc)
        return clf

    # ------------------------------------------------------------------ fit and score
    def fit(self, in_domain, pool=None) -> "CrosslingualSelector":
        from ..embed.transformers import _torch
        in_domain, pool = self._fit_input(in_domain, pool)
        if self.bitext_unused():
            import logging
            logging.getLogger(__name__).warning(
                "crosslingual: --model %s puts both languages in one space, so the --bitext is not used (using it "
                "measured worse; --alignment ridge fits a map on it anyway)", self.model)
            return self._fit_without_bitext(in_domain, pool)
        if not self.bitext:
            return self._fit_without_bitext(in_domain, pool)
        parts = [read_parallel(a, b) for a, b in self.bitext]
        self._torch = torch = _torch()
        rng = np.random.default_rng(self.seed)
        xin = self._encode(in_domain.texts)
        # each file on its own, so that its cached vectors serve any other combination of bitexts
        xa = np.concatenate([self._encode(c.texts) for c in parts])
        xb = np.concatenate([self._encode(c.targets) for c in parts])
        self._check_order(xin, xa, xb, pool)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.alignment_ = al = self.fit_alignment(xa, xb, rng) if self.align else NoAlignment()
            # negatives in the in-domain language: the bitext's side least similar to the in-domain mean
            pos, neg = al.a(xin), al.a(self._least_similar(xa, xin))
            self.classifier_ = self._classifier(pos, neg, rng, "classifier")
            self.refined_ = False
            if self.refine:
                self._refine(pos, neg, pool, rng)
        self.alignment_views_ = self._alignment_views(xa, xb)
        return self

    def _least_similar(self, x: np.ndarray, xin: np.ndarray) -> np.ndarray:
        """The ``neg_share`` of ``x`` least similar to the in-domain mean (paper 000's negatives rule)."""
        sim = _unit(x) @ _unit(_unit(xin).mean(0))
        return x[np.argsort(sim, kind="stable")[:max(1, int(round(self.neg_share * len(x))))]]

    def _fit_without_bitext(self, in_domain, pool) -> "CrosslingualSelector":
        """No bitext: the encoder must put both languages in one space already (``--model multilingual``).
        No map; the negatives are the pool's own lines least similar to the in-domain mean (its bottom
        ``neg_share``, paper 000's rule), then the classifier and refining as with a bitext."""
        from ..embed.transformers import _torch
        self._check_shared_space()
        if self.align and self.alignment == "contrastive":
            raise DomainsiftError("--alignment contrastive trains on a bitext: give --bitext IN_LANG_FILE POOL_LANG_FILE")
        self._torch = torch = _torch()
        rng = np.random.default_rng(self.seed)
        xin = self._encode(in_domain.texts)
        xp = self._encode(pool.texts)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.alignment_ = NoAlignment()
            neg = self._least_similar(xp, xin)
            self.classifier_ = self._classifier(xin, neg, rng, "classifier")
            self.refined_ = False
            if self.refine:
                self._refine(xin, neg, pool, rng)
        self.alignment_views_ = None
        return self

    def _check_shared_space(self) -> None:
        """Without a bitext the encoder must put both languages in one space: a monolingual one stops here."""
        from ..embed import abilities
        if abilities(self.model).monolingual:
            raise DomainsiftError(f"crosslingual without --bitext needs an encoder that puts both languages in one "
                                  f"space, and '{self.model}' is monolingual: add --model multilingual (pip install "
                                  "'domainsift[multilingual]'), or give --bitext IN_LANG_FILE POOL_LANG_FILE (bitext "
                                  "of other domains) to align the languages")

    def _refine(self, pos: np.ndarray, neg: np.ndarray, pool, rng: np.random.Generator) -> None:
        """Train the second classifier on the first one's examples (``pos``, ``neg``: in-domain-language
        vectors in the shared space) and the pool language's own vectors: the first classifier's top
        ``len(in_domain)`` pool lines (at most a third of the pool) as positives, the pool's bottom
        two thirds as negatives."""
        xp = self.alignment_.b(self._encode(pool.texts))
        n_neg = (2 * len(xp)) // 3
        m = min(len(pos), len(xp) - n_neg)
        if m < 1 or n_neg < 1:
            return  # a pool of one or two lines: nothing to refine on
        order = np.argsort(-self.classifier_.predict(xp), kind="stable")
        self.classifier_ = self._classifier(np.concatenate([pos, xp[order[:m]]]),
                                            np.concatenate([neg, xp[order[len(xp) - n_neg:]]]), rng, "refine")
        self.refined_ = True

    def _check_order(self, xin, xa, xb, pool) -> None:
        """The bitext's first file must be in the in-domain set's language, its second in the pool's:
        the in-domain mean sits nearer the A side's mean, and a pool sample's mean nearer the B side's."""
        ma, mb = _unit(xa.mean(0)), _unit(xb.mean(0))
        if np.allclose(ma, mb, atol=1e-3):
            return  # one language on both sides: nothing to check
        sample = pool.texts[:: max(1, len(pool) // 500)][:500]
        mp = _unit(self._encode(sample).mean(0))
        mi = _unit(xin.mean(0))
        if (mi @ ma - mi @ mb) < 0 and (mp @ mb - mp @ ma) < 0:
            raise DomainsiftError("the --bitext files look reversed: give the in-domain set's language first, "
                                  "then the pool's (--bitext dev-domains.de dev-domains.en for a German in-domain "
                                  "set and an English pool)")

    def score(self, records) -> np.ndarray:
        self.require_fitted()
        return self.classifier_.predict(self.alignment_.b(self._encode(as_corpus(records).texts)))

    def _alignment_views(self, xa: np.ndarray, xb: np.ndarray) -> dict:
        """A 2-D picture (PCA) of both languages' bitext vectors before and after alignment (paper 003,
        Figure 3): up to 500 pairs, the vectors the classifiers see (a norm-shrinking map stays visible)."""
        from sklearn.decomposition import PCA
        rng = np.random.default_rng(self.seed)
        pick = np.sort(rng.choice(len(xa), size=min(500, len(xa)), replace=False))
        views = {"before": (xa[pick], xb[pick])}
        if self.align:
            views["after"] = (self.alignment_.a(xa[pick]), self.alignment_.b(xb[pick]))
        out = {}
        for name, (a, b) in views.items():
            xy = PCA(n_components=2, random_state=0).fit_transform(np.vstack([a, b]))
            out[name] = {"a": np.round(xy[:len(a)], 4).tolist(), "b": np.round(xy[len(a):], 4).tolist()}
        return {"n_pairs_shown": int(len(pick)), "seed": self.seed, **out}

    def write_artifacts(self, out_dir) -> list[str]:
        """The alignment's picture (:meth:`_alignment_views`) as a JSON artifact for the HTML report, and
        as a PNG when matplotlib is there."""
        from .. import rundir
        views = getattr(self, "alignment_views_", None)
        if views is None:
            return []   # no bitext (a multilingual encoder): no alignment to picture
        out = {k: v for k, v in views.items() if k not in ("n_pairs_shown", "seed")}
        files = [str(rundir.write_json(out_dir, rundir.ALIGNMENT, views))]
        try:
            from ..report.plots import _plt, _save
        except ImportError:
            return files
        try:
            plt = _plt()
        except DomainsiftError:
            return files
        fig, axes = plt.subplots(1, len(out), figsize=(6 * len(out), 5), squeeze=False)
        for ax, (name, v) in zip(axes[0], out.items()):
            a, b = np.asarray(v["a"]), np.asarray(v["b"])
            ax.scatter(a[:, 0], a[:, 1], s=5, alpha=0.6, label="in-domain language")
            ax.scatter(b[:, 0], b[:, 1], s=5, alpha=0.6, label="pool language")
            ax.set_title(f"bitext vectors {name} alignment")
            ax.legend(fontsize=8)
        files.append(_save(fig, rundir.path(out_dir, rundir.ALIGNMENT_PNG)))
        return files
