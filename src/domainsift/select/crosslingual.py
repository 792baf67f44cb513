"""Cross-lingual selection (paper 003): a domain classifier trained in one language selects in another.

The in-domain set is in language A (German leaflets); the pool is in language B (an
English crawl). Ordinary bitext of A and B from *other* domains (``--bitext A_FILE B_FILE``)
teaches a small adaptive layer ``g`` over the frozen encoder to map both languages into
one space:

1. encode everything with the chosen encoder, frozen (vectors through the cache);
2. cluster the bitext's A-side vectors into ``k`` clusters (GMM, k = 5 as in paper 003);
3. train ``g`` (2-layer feed-forward, hidden 128) with the paper's contrastive loss at
   temperature 0.2: for a translation pair in a batch of 64, its positive is its own
   translation, its negatives the other side of the batch's pairs from *other* clusters
   (both directions, A to B and B to A); Adam, early stopping on a held-out 10% of the bitext;
4. train a domain classifier (2-layer feed-forward) on the adapted in-domain vectors
   against negatives in the *same* language A: the bitext A-side sentences least similar to
   the in-domain mean (the bottom ``neg_share``), through :func:`domainsift.train.train_classifier`;
5. score the pool (language B) through the same ``g`` and classifier.

``align=False`` (``--no-align``, the default) trains the same classifier in the raw encoder space:
paper 003's baseline, which measured better with the default English-trained encoder (mean
precision 0.603 against 0.459 aligned, German in-domain sets and an English pool); ``--align``
runs the alignment, for encoders where it helps. Scores are probabilities of being in-domain.
"""

from __future__ import annotations

import os

import numpy as np

from ..corpus import as_corpus, read_parallel
from ..errors import DomainsiftError
from .base import BACKEND, CACHE_DIR, DEVICE, MAX_LENGTH, PROGRESS, SEED, EncoderSelector, Param, at_least, in_range


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def _mlp(torch, d_in: int, hidden: int, d_out: int):
    return torch.nn.Sequential(torch.nn.Linear(d_in, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, d_out))


def contrastive_loss(torch, za, zb, clusters, temperature: float):
    """Paper 003, eq. 1, in both directions: each pair's own translation against the other side of
    the batch's pairs from other clusters (pairs of the same cluster are not negatives)."""
    za = torch.nn.functional.normalize(za, dim=-1)
    zb = torch.nn.functional.normalize(zb, dim=-1)
    logits = za @ zb.T / temperature
    same = clusters[:, None] == clusters[None, :]
    eye = torch.eye(len(za), dtype=torch.bool)
    masked = logits.masked_fill(same & ~eye, float("-inf"))  # keep the positive, drop same-cluster pairs
    target = torch.arange(len(za))
    return 0.5 * (torch.nn.functional.cross_entropy(masked, target)
                  + torch.nn.functional.cross_entropy(masked.T, target))


def adapter(torch, dim: int, hidden: int, residual: bool = True):
    """The adaptive layer: a 2-layer feed-forward network (hidden 128). ``residual``: its output is
    added to the input vector and its last layer starts at zero, so training starts from the encoder's
    own space and learns a correction; otherwise its 128-d output replaces the vector (paper 003)."""
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
        return logits.double().sigmoid().numpy()


class CrosslingualSelector(EncoderSelector):
    """Selects pool records in one language with a domain classifier trained in another."""

    name = "crosslingual"
    probabilistic = True
    needs_pool = True
    params = (
        Param("model", str, "minilm", "encoder, frozen: minilm (default) or a Hugging Face name or local path"),
        Param("bitext", str, (), "a bitext of other domains: the in-domain set's language file, then the pool "
              "language's file, aligned line by line (repeatable)", metavar=("IN_LANG", "POOL_LANG"),
              nargs=2, action="append"),
        Param("align", bool, False, "--align trains the adaptive layer on the bitext (paper 003); the default, "
              "--no-align, trains the classifier in the raw encoder space, which measured better with the default "
              "English encoder (0.603 vs 0.459 mean; bench/results/crosslingual.md)"),
        Param("adapter", str, "residual", "the adaptive layer: 'residual' adds a 2-layer feed-forward correction to "
              "the encoder's vector (starting at the identity), 'mlp' replaces it by the layer's output (paper 003)",
              choices=("residual", "mlp")),
        Param("k", int, 5, "clusters of the bitext whose pairs are each other's negatives", check=at_least(1)),
        Param("hidden", int, 128, "hidden size of the adaptive layer and the classifier", check=at_least(1)),
        Param("temperature", float, 0.2, "temperature of the contrastive loss",
              check=lambda v: None if v > 0 else f"must be positive, got {v}"),
        Param("align_lr", float, 1e-3, "Adam learning rate of the adaptive layer", check=at_least(0)),
        Param("align_epochs", int, 20, "at most this many epochs of alignment (early stopping, patience 5)",
              check=at_least(1)),
        Param("lr", float, 1e-3, "learning rate of the domain classifier", check=at_least(0)),
        Param("epochs", int, 20, "epochs of the domain classifier", check=at_least(1)),
        Param("neg_share", float, 0.25, "negatives: this share of the bitext's in-domain-language side least "
              "similar to the in-domain mean", check=in_range(0, 1)),
        MAX_LENGTH, BACKEND, SEED, DEVICE, CACHE_DIR, PROGRESS,
    )

    def signature_params(self) -> dict:
        p = super().signature_params()
        p["bitext"] = [[os.path.realpath(a), os.path.realpath(b)] for a, b in self.bitext]
        return p

    def _encode(self, texts) -> np.ndarray:
        if not hasattr(self, "_enc"):
            from ..embed import EmbedConfig
            self._enc = EmbedConfig(embedder=self.model, max_length=self.max_length, device=self.device,
                                    seed=self.seed, cache_dir=self.cache_dir, progress=self.progress,
                                    backend=self.backend).build()
        return np.asarray(self._enc.encode(list(texts)), dtype=np.float32)

    # ------------------------------------------------------------------ alignment
    def _align(self, xa: np.ndarray, xb: np.ndarray, rng: np.random.Generator) -> None:
        """Train the adaptive layer on the bitext's vectors (xa: in-domain language, xb: pool language)."""
        torch = self._torch
        from sklearn.mixture import GaussianMixture
        k = min(self.k, len(xa))
        clusters = GaussianMixture(k, covariance_type="diag", random_state=self.seed).fit_predict(xa) \
            if k > 1 else np.zeros(len(xa), dtype=int)
        self.cluster_sizes_ = np.bincount(clusters, minlength=k).tolist()
        order = rng.permutation(len(xa))
        n_dev = max(1, int(round(0.1 * len(xa)))) if len(xa) >= 20 else 0
        dev, train = order[:n_dev], order[n_dev:]
        ta, tb, tc = (torch.as_tensor(v) for v in (xa, xb, clusters))
        g = adapter(torch, xa.shape[1], self.hidden, residual=self.adapter == "residual")
        opt = torch.optim.Adam(g.parameters(), lr=self.align_lr)
        best, best_state, waited, self.align_losses_ = float("inf"), None, 0, []
        for _epoch in range(self.align_epochs):
            g.train()
            for b in np.array_split(rng.permutation(train), max(1, len(train) // 64)):
                b = torch.as_tensor(b)
                loss = contrastive_loss(torch, g(ta[b]), g(tb[b]), tc[b], self.temperature)
                opt.zero_grad()
                loss.backward()
                opt.step()
            g.eval()
            with torch.no_grad():
                held = dev if n_dev else train
                chunks = np.array_split(held, max(1, len(held) // 64))
                dev_loss = float(np.mean([contrastive_loss(torch, g(ta[torch.as_tensor(c)]), g(tb[torch.as_tensor(c)]),
                                                           tc[torch.as_tensor(c)], self.temperature).item()
                                          for c in chunks]))
            self.align_losses_.append(dev_loss)
            if dev_loss < best - 1e-6:
                best, waited = dev_loss, 0
                best_state = {n: p.detach().clone() for n, p in g.state_dict().items()}
            else:
                waited += 1
                if waited >= 5:
                    break
        g.load_state_dict(best_state)
        g.eval()
        self._g = g

    def _adapt(self, x: np.ndarray) -> np.ndarray:
        if not self.align:
            return x
        torch = self._torch
        with torch.inference_mode():
            return self._g(torch.as_tensor(x, dtype=torch.float32)).numpy()

    # ------------------------------------------------------------------ fit and score
    def fit(self, in_domain, pool=None) -> "CrosslingualSelector":
        from ..embed.transformers import _torch
        from ..train import TrainConfig, train_classifier
        in_domain, pool = self._fit_input(in_domain, pool)
        if not self.bitext:
            raise DomainsiftError("crosslingual needs --bitext IN_LANG_FILE POOL_LANG_FILE (bitext of other domains): "
                                  "it aligns the languages, and its in-domain-language side gives the negatives "
                                  "(with --no-align too)")
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
            if self.align:
                self._align(xa, xb, rng)
            # negatives in the in-domain language: the bitext's side least similar to the in-domain mean
            sim = _unit(xa) @ _unit(_unit(xin).mean(0))
            n_neg = max(1, int(round(self.neg_share * len(xa))))
            negatives = xa[np.argsort(sim, kind="stable")[:n_neg]]
            za, zn = self._adapt(xin), self._adapt(negatives)
            # balance the classes: every epoch sees the positives and as many fresh negatives
            n_pos = len(za)

            def epoch_data(epoch: int):
                pick = rng.choice(len(zn), size=min(len(zn), n_pos), replace=False)
                rows = list(za) + list(zn[pick])
                return rows, np.r_[np.ones(n_pos), np.zeros(len(pick))].astype(np.float32)

            self.classifier_ = VectorClassifier(torch, za.shape[1], self.hidden)
            cfg = TrainConfig(epochs=self.epochs, lr=self.lr, batch_size=64, bucket=0, warmup=0.0, weight_decay=0.0,
                              seed=self.seed, progress=False)
            steps = int(np.ceil(2 * n_pos / 64))
            self.train_losses_ = train_classifier(self.classifier_, epoch_data, steps, cfg, rng, desc="classifier")
        self._bitext_vectors = (xa, xb)
        return self

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
        if not hasattr(self, "classifier_"):
            raise DomainsiftError("crosslingual selector is not fitted")
        return self.classifier_.predict(self._adapt(self._encode(as_corpus(records).texts)))

    def write_artifacts(self, out_dir) -> list[str]:
        """A 2-D picture (PCA) of both languages' bitext vectors before and after alignment (paper 003,
        Figure 3), and its points as alignment.json for the HTML report."""
        from pathlib import Path

        from sklearn.decomposition import PCA

        from .._atomic import save_json
        xa, xb = self._bitext_vectors
        rng = np.random.default_rng(self.seed)
        pick = np.sort(rng.choice(len(xa), size=min(500, len(xa)), replace=False))
        views = {"before": (xa[pick], xb[pick])}
        if self.align:
            views["after"] = (self._adapt(xa[pick]), self._adapt(xb[pick]))
        out = {}
        for name, (a, b) in views.items():
            xy = PCA(n_components=2, random_state=0).fit_transform(np.vstack([_unit(a), _unit(b)]))
            out[name] = {"a": np.round(xy[:len(a)], 4).tolist(), "b": np.round(xy[len(a):], 4).tolist()}
        save_json(Path(out_dir) / "alignment.json", {"n_pairs_shown": int(len(pick)), "seed": self.seed, **out})
        files = [str(Path(out_dir) / "alignment.json")]
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
        files.append(_save(fig, Path(out_dir) / "alignment.png"))
        return files
