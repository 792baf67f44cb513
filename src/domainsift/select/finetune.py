"""Domain-Finetune (paper 000, section 4): fine-tune the pretrained encoder as a
positive-unlabeled domain classifier.

Positives are the in-domain sentences. The pool is unlabeled, so negatives are
drawn from it: by default uniformly from the whole pool (``negatives="random"``:
positive-unlabeled learning, which keeps the order of p(in-domain | x));
``negatives="preranked"`` draws them from below ``neg_cut`` in the Domain-Cosine
ranking, as the paper does (its bottom two thirds is ``neg_cut=PAPER_CUT``).
Random negatives measured better on two of three pools (the target 2% and 14%
of the lines: +0.043 and +0.013) and level on the third (29%: -0.001)
(bench/results/negatives_pools.md), and need no cosine pass over the pool. Every epoch draws fresh negatives. The whole encoder is fine-tuned with a linear head
on the mean-pooled hidden states (:mod:`domainsift.select.train`). A held-out share of
the positives and negatives gives the classifier's precision, recall and F1
(the paper's Table 5). Scores are probabilities of being in-domain, so
``--positive`` (p > 0.5) is Domain-Finetune-Positive. What each default
measured: git show 2fcdd91:docs/experiments.md.
"""

from __future__ import annotations

import logging

import numpy as np

from ..embed import model_path
from .._internal.errors import DomainsiftError
from ..metrics import f1_score
from .base import BACKEND, CACHE_DIR, DEVICE, MAX_LENGTH, PROGRESS, SEED, EncoderSelector, Param, at_least, in_range

log = logging.getLogger(__name__)

# the paper's pre-ranking cut: negatives come from the bottom two thirds of the cosine ranking
PAPER_CUT = 1 / 3
# the cut of pre-ranked negatives (--negatives preranked): the bottom 80% (git show 2fcdd91:docs/experiments.md)
DEFAULT_CUT = 0.2


def _share(text) -> float:
    """A share of the ranking, as a number, a decimal or a fraction ('0.2', '1/3')."""
    from fractions import Fraction
    try:
        return float(Fraction(str(text)))
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"not a number or fraction: '{text}'") from None


def sample_negatives(cosine_scores: np.ndarray, n: int, how: str, rng: np.random.Generator,
                     exclude: np.ndarray | None = None, cut: float = DEFAULT_CUT) -> np.ndarray:
    """Indices of ``n`` pool sentences to use as negatives, sorted.

    ``how="preranked"``: uniformly from below ``cut`` in the cosine ranking (the share at the
    top that negatives never come from); ``how="random"``: uniformly from the whole pool.
    ``exclude`` marks pool items that must not be negatives (e.g. copies of in-domain sentences).
    """
    if not 0 <= cut < 1:
        raise DomainsiftError(f"the negatives' cut must be in [0, 1), got {cut}")
    m = len(cosine_scores)
    if how == "preranked":
        order = np.lexsort((np.arange(m), -cosine_scores))
        candidates = order[int(m * cut + 1e-6):]  # cut 1/3: m // 3
    elif how == "random":
        candidates = np.arange(m)
    else:
        raise DomainsiftError(f"unknown negatives sampling '{how}' (preranked or random)")
    if exclude is not None:
        candidates = candidates[~exclude[candidates]]
    if len(candidates) == 0:
        raise DomainsiftError("the pool has no candidates for negatives")
    return np.sort(rng.choice(candidates, size=min(n, len(candidates)), replace=False))


def held_out(n_pos: int, n_neg: int, share: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The stratified hold-out: masks of the positives and of the negatives held out, ``share`` of each
    (drawn in that order from ``rng``; none where the share rounds to nothing or to everything)."""
    masks = (np.zeros(n_pos, dtype=bool), np.zeros(n_neg, dtype=bool))
    for mask in masks:
        k = int(round(share * len(mask)))
        if 0 < k < len(mask):
            mask[rng.choice(len(mask), size=k, replace=False)] = True
    return masks


def prf(y_true: np.ndarray, y_pred: np.ndarray) -> dict:
    tp = int(((y_true == 1) & (y_pred == 1)).sum())
    fp = int(((y_true == 0) & (y_pred == 1)).sum())
    fn = int(((y_true == 1) & (y_pred == 0)).sum())
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": p, "recall": r, "f1": f1_score(p, r), "n": int(len(y_true))}


class FinetuneSelector(EncoderSelector):
    """Fine-tunes a transformers encoder + linear head to tell in-domain from the pool."""

    name = "finetune"
    probabilistic = True
    needs_pool = True
    cost_model = "fine-tune"
    params = (
        Param("model", str, "minilm", "encoder: minilm (default) or a Hugging Face name or local path"),
        Param("epochs", int, 10, "training epochs, each with a fresh draw of negatives", check=at_least(1)),
        Param("lr", float, 2e-5, "encoder learning rate (AdamW; the paper's)", check=at_least(0)),
        Param("head_lr", float, 1e-3, "learning rate of the new linear head", check=at_least(0)),
        Param("batch_size", int, 16, "training batch size", check=at_least(1)),
        Param("negatives", str, "random", "negatives drawn from the whole pool (random, the default) or from "
              "below --neg-cut in the cosine ranking (preranked, the paper's)", choices=("preranked", "random")),
        Param("neg_ratio", float, 1.0, "negatives per positive in each epoch", check=lambda v: None if v > 0
              else f"must be positive, got {v}"),
        Param("neg_cut", _share, DEFAULT_CUT, "with --negatives preranked: negatives never come from the top C of "
              "the cosine ranking (a decimal or a fraction; the paper's bottom two thirds is 1/3)", metavar="C",
              check=in_range(0, 1, hi_open=True)),
        Param("bucket", int, 20, "batch sentences of similar length within windows of this many batches "
              "(0: plain random batches)", check=at_least(0)),
        Param("holdout", float, 0.1, "share of positives and negatives held out to measure the classifier",
              check=in_range(0, 1, hi_open=True)),
        Param("warmup", float, 0.1, "share of steps with a linear learning-rate warm-up",
              check=in_range(0, 1)),
        Param("freeze", int, 1, "K > 0: the embeddings and the lower K-1 layers are not trained (1, the default: "
              "the embeddings, ~17% faster at equal precision); 0: train the whole encoder", check=at_least(0)),
        Param("layers", int, 0, "K > 0: fine-tune and score the encoder's lower K transformer layers only (the "
              "layers above are dropped; a line costs about K/L of the whole encoder's L layers); 0 (the default): "
              "all", check=at_least(0)),
        MAX_LENGTH, BACKEND,
        Param("score_batch_size", int, None, "sentences per batch when scoring (default: 32 on a CPU, where a "
              "larger batch only holds more memory: 128 lines cost 0.6 GB more at the same speed; 128 on a GPU)",
              check=lambda v: None if v is None or v >= 1 else f"must be at least 1, got {v}", signature=False),
        SEED, DEVICE, CACHE_DIR, PROGRESS,
    )
    #: several targets can share one fine-tuned encoder, a head each (:meth:`fit_targets`)
    fits_targets = True
    #: a shared fit's defaults where they differ from one target's: half the epochs. Every epoch of a shared
    #: fit holds every target's positives, so it costs k + 1 times one target's epoch (k targets, the
    #: negatives); five targets at 5 epochs: precision 0.8588 against five separate runs' 0.8592 in 1.37x
    #: one run's time; at 10 epochs 0.8648 in 2.35x (bench/results/mix.md)
    shared_defaults = {"epochs": 5}

    def check_params(self):
        super().check_params()
        if self.layers:  # a readable config says how many layers there are before any work (else the fit says it)
            from ..embed.transformers import model_layers
            n = model_layers(model_path(self.model))
            if n is not None and self.layers > n:
                raise DomainsiftError(f"--layers {self.layers}: the encoder has {n} layers")
        if self.negatives != "preranked" and self.neg_cut != DEFAULT_CUT:
            raise DomainsiftError("finetune: the negatives' cut refines the pre-ranking: it needs "
                                  "negatives 'preranked'")
        return self


    @property
    def fit_uses_pool(self) -> bool:
        return self.target_of is None  # a target of a shared fit reads its head; the shared fit read the pool

    def _ranking(self, in_domain, pool) -> np.ndarray:
        if self.negatives != "preranked":
            return np.zeros(len(pool))
        from .cosine import CosineSelector
        cos = CosineSelector(embedder=self.model, max_length=self.max_length, device=self.device,
                             cache_dir=self.cache_dir, progress=self.progress, backend=self.backend)
        return cos.fit(in_domain, pool).score(pool)

    def fit(self, in_domain, pool=None) -> "FinetuneSelector":
        in_domain, pool = self._fit_input(in_domain, pool)
        positives, texts = list(in_domain.texts), pool.texts
        rng = np.random.default_rng(self.seed)

        # 1. the pre-ranking that negatives are drawn from; in-domain copies are never negatives
        in_set = set(positives)
        never = np.fromiter((t in in_set for t in texts), dtype=bool, count=len(texts))
        ranking = self._ranking(in_domain, pool)
        n_neg = max(1, int(round(self.neg_ratio * len(positives))))
        neg_idx = sample_negatives(ranking, n_neg, self.negatives, rng, never, self.neg_cut)

        # 2. stratified hold-out split: a share of the positives and of the first negatives
        pos_held, neg_held = held_out(len(positives), len(neg_idx), self.holdout, rng)
        held_texts = [t for t, h in zip(positives, pos_held) if h] + [texts[i] for i in neg_idx[neg_held]]
        held_labels = np.array([1] * int(pos_held.sum()) + [0] * int(neg_held.sum()))
        train_pos = [t for t, h in zip(positives, pos_held) if not h]
        never[neg_idx[neg_held]] = True  # held-out negatives are never trained on

        # 3. train: epoch 0 on the first draw's training share, every later epoch on a fresh draw
        n_train_neg = max(1, int(round(self.neg_ratio * len(train_pos))))

        def epoch_data(epoch: int):
            negs = neg_idx[~neg_held] if epoch == 0 else sample_negatives(
                ranking, n_train_neg, self.negatives, rng, never, self.neg_cut)
            labels = np.concatenate([np.ones(len(train_pos)), np.zeros(len(negs))]).astype(np.float32)
            return train_pos + [texts[i] for i in negs], labels

        self.classifier_ = self._train(epoch_data, len(train_pos) + n_train_neg, rng)
        self.n_positives_, self.n_negatives_, self.targets_ = len(positives), int(len(neg_idx)), None
        self.holdout_metrics_ = (prf(held_labels, (self.classifier_.predict(held_texts) > 0.5).astype(int))
                                 if held_texts else None)
        return self

    # ------------------------------------------------------------------ checkpoint and scoring
    _STATE = ("n_positives_", "n_negatives_", "holdout_metrics_", "train_losses_", "targets_")
    learned = ("classifier_",) + _STATE
    saves_state = True

    def _score_batch(self) -> int:
        if self.score_batch_size is not None:
            return self.score_batch_size
        from ..embed.transformers import resolve_device
        return 128 if resolve_device(self.device).startswith("cuda") else 32

    def save_state(self, path) -> None:
        """Save the fine-tuned encoder, tokenizer, head and fit results (atomically)."""
        if self.target_of is not None:
            raise DomainsiftError("a target of a shared fit is saved as the fit it is a column of")
        self.classifier_.save(path, {k: getattr(self, k, None) for k in self._STATE})

    def load_state(self, path) -> "FinetuneSelector":
        """Load a model saved by :meth:`save_state` instead of fitting."""
        from .train import EncoderClassifier
        self.reset()
        self.classifier_, state = EncoderClassifier.load(path, self.max_length, self.device, self._score_batch(),
                                                         self.backend)
        for k, v in state.items():
            setattr(self, k, v)
        return self

    # ------------------------------------------------------------------ several targets, one encoder
    def fit_targets(self, targets: dict, pool) -> "FinetuneSelector":
        """Fine-tune one encoder with one head per target (``{name: Corpus}``): head t is the binary
        classifier of target t's in-domain lines against random pool lines *and the other targets'
        in-domain lines* (so two targets' heads learn what tells them apart). Each epoch is every target's
        training positives and a fresh draw of pool negatives, as many as a target has positives on
        average (``neg_ratio`` times). A held-out share of each target's positives, and of the first
        negatives, gives each head's precision, recall and F1. :meth:`head` then gives each target's
        selector, scoring as a one-target fit does: p(target t | line)."""
        from ..io.corpus import as_corpus
        if self.negatives != "random":
            raise DomainsiftError("finetune: several targets draw their negatives at random from the pool "
                                  "(--negatives random)")
        names = list(targets)
        if len(names) < 2:
            raise DomainsiftError("a shared fit needs at least two targets")
        self.reset()
        corpora = {n: as_corpus(c) for n, c in targets.items()}
        pool = as_corpus(pool)
        for n, c in corpora.items():
            if len(c) == 0:
                raise DomainsiftError(f"target '{n}': the in-domain set is empty")
        if not pool:
            raise DomainsiftError(f"{self.name} needs the pool")
        k, texts = len(names), pool.texts
        rng = np.random.default_rng(self.seed)
        # every target's positives, each text once with a label per head (a text two targets share is both)
        labels_of: dict = {}
        for j, n in enumerate(names):
            for t in corpora[n].texts:
                labels_of.setdefault(t, np.zeros(k, dtype=np.float32))[j] = 1.0
        positives = list(labels_of)
        pos_labels = np.stack([labels_of[t] for t in positives])
        never = np.fromiter((t in labels_of for t in texts), dtype=bool, count=len(texts))
        mean_pos = float(np.mean([len(c) for c in corpora.values()]))
        n_neg = max(1, int(round(self.neg_ratio * mean_pos)))
        neg_idx = sample_negatives(np.zeros(len(texts)), n_neg, "random", rng, never)
        pos_held, neg_held = held_out(len(positives), len(neg_idx), self.holdout, rng)
        held_texts = [t for t, h in zip(positives, pos_held) if h] + [texts[i] for i in neg_idx[neg_held]]
        held_labels = np.concatenate([pos_labels[pos_held], np.zeros((int(neg_held.sum()), k), np.float32)])
        train_pos = [t for t, h in zip(positives, pos_held) if not h]
        train_labels = pos_labels[~pos_held]
        never[neg_idx[neg_held]] = True
        n_train_neg = max(1, int(round(self.neg_ratio * mean_pos * (1 - self.holdout))))

        def epoch_data(epoch: int):
            negs = neg_idx[~neg_held] if epoch == 0 else sample_negatives(
                np.zeros(len(texts)), n_train_neg, "random", rng, never)
            return (train_pos + [texts[i] for i in negs],
                    np.concatenate([train_labels, np.zeros((len(negs), k), np.float32)]))

        self.classifier_ = clf = self._train(epoch_data, len(train_pos) + n_train_neg, rng, outputs=k)
        self.targets_ = names
        self.n_positives_ = {n: len(corpora[n]) for n in names}
        self.n_negatives_ = int(len(neg_idx))
        if held_texts:
            p = clf.predict(held_texts)
            self.holdout_metrics_ = {n: prf(held_labels[:, j].astype(int), (p[:, j] > 0.5).astype(int))
                                     for j, n in enumerate(names)}
        else:
            self.holdout_metrics_ = None
        return self

    def _train(self, epoch_data, per_epoch: int, rng: np.random.Generator, outputs: int = 1):
        """The encoder and a head of ``outputs`` trained on ``epoch_data(epoch)`` (``per_epoch`` examples an
        epoch); the losses go to ``train_losses_``."""
        from .train import EncoderClassifier, TrainConfig, train_classifier
        clf = EncoderClassifier(model_path(self.model), self.max_length, self.device, self._score_batch(),
                                self.backend, outputs=outputs)
        clf.truncate(self.layers)
        clf.freeze(self.freeze)
        cfg = TrainConfig(epochs=self.epochs, lr=self.lr, head_lr=self.head_lr, batch_size=self.batch_size,
                          bucket=self.bucket, warmup=self.warmup, seed=self.seed, progress=self.progress)
        steps = int(np.ceil(per_epoch / self.batch_size))
        self.train_losses_ = train_classifier(clf, epoch_data, steps, cfg, rng, checkpoint=self.checkpoint_dir)
        return clf

    def score_targets(self, records) -> np.ndarray:
        """Every target's probability, ``(n, T)``: one encoding of the lines, a head per target."""
        self.require_fitted()
        if not self.targets_:
            raise DomainsiftError("finetune: a fit of one target has no targets' block; score it")
        from ..io.corpus import as_corpus
        return self.classifier_.predict(as_corpus(records).texts, progress=self.progress)

    def target(self, name: str) -> "FinetuneSelector":
        """Target ``name``'s head of this fit of :meth:`fit_targets`, as a one-target fit."""
        j = self._target_index(name)
        view = type(self)(**self.param_values())
        view.classifier_ = self.classifier_.column(j)
        view.targets_ = list(self.targets_)
        view.target_of = (name, tuple(self.targets_))
        view.n_positives_ = self.n_positives_[name]
        view.n_negatives_ = self.n_negatives_
        view.holdout_metrics_ = (self.holdout_metrics_ or {}).get(name)
        view.train_losses_ = self.train_losses_
        return view

    def distil_source(self):
        """The fine-tuned encoder (every target's, for a shared fit): a cascade's student distils its static
        vectors from it (bench/results/student_source.md)."""
        self.require_fitted()
        clf = self.classifier_.encoder_classifier  # a column of a shared fit: the shared encoder
        layers = f", lower {self.layers} layers" if self.layers else ""
        return clf.tokenizer, clf.encoder, f"{self.model_name} fine-tuned{layers}"

    def score(self, records) -> np.ndarray:
        """Probability of being in-domain, (n,) float64 in [0, 1]."""
        self.require_fitted()
        from ..io.corpus import as_corpus
        return self.classifier_.predict(as_corpus(records).texts, progress=self.progress)
