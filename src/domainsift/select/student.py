"""The student: a scorer that costs microseconds a line, trained to reproduce a teacher method's ranking.

A teacher (any other method: cosine by default, finetune, crosslingual, ...) is fitted as usual and
scores a seeded sample of the pool (``sample`` lines). The student learns from that sample and the
in-domain set:

* **features** with no transformer pass: the mean of static token vectors distilled from an
  encoder (:mod:`domainsift.embed.static`, Model2Vec's recipe): the teacher's own fitted encoder where
  it has one (``vectors='teacher'``, the default: finetune's fine-tuned encoder, whose tokens carry what
  it learnt to separate), else ``model``'s (``vectors='base'``). For a 1% selection of the shared pool
  with a ``finetune --layers 3`` teacher, the fine-tuned vectors need 6.4% of the lines as candidates
  where the base vectors need 7.1% (bench/results/student_source.md, also the 2% and 29% pools);
  and, since 0.23.0, the line's **token bigrams**, hashed into :data:`BIGRAM_BUCKETS` buckets, each worth
  1 / the line's token count (a bigram's weight adds to the line's mean as a token's does). A mean of
  token vectors cannot see word order or which words stand together; the fine-tuned teacher does. With a
  ``finetune --layers 3`` teacher, the fewest candidates that hold the plan's guarantee on lines the
  student never saw fell 6-26% on every pool and share measured (shared 1%: 6.4% -> 5.8% of the lines;
  29% pool at 1%: 14.8% -> 11.0%), for a few more seconds of fitting (bench/results/student_source.md);
* **head**: a logistic regression (scikit-learn, a strong L2 penalty since 0.26.0: :data:`HEAD_C`) of the
  in-domain set and the teacher's top share of the sample against every other line of the sample. The
  lines just below the teacher's top are the ones the student must rank below it; paper 000's rule
  (negatives from the bottom two thirds, which protects an in-domain classifier from in-domain
  negatives) left them out of the fit, and measured
  worse: for a 1% selection of the shared pool, with finetune teaching, the plan handed the teacher
  11.7% of the pool with it and 10.7% with this head, and the guarantee held for 4 of 5 targets with
  it and 5 of 5 with this head (bench/results/candidates.md, which also holds the 2% and 29% pools).

* **its lines**: a seeded uniform ``sample`` of the pool, and since 0.28.0 an **enrichment**: the student
  fitted on the sample ranks a further seeded draw of the pool, and the teacher scores the top fifth of
  it (half the sample's size more lines, 10,000 at the default; :func:`enrichment`). The draw's
  teacher top is mostly in that fifth, so the head gets several times more of the lines it must learn,
  and their near misses, for the teacher's time of half its sample (StudentSelector._enrich). The plan
  still reads the uniform sample's out-of-fold scores, so the enrichment changes how many candidates
  the plan asks for, not what its guarantee means.

Its score is the head's logit. A linear head over mean token vectors is a per-token weight, so the
student scores a line as the mean of its tokens' weights, plus its bigrams' weights over its token count:
tokenizing is most of the cost.
Measured against hashed word n-grams alone, other heads (ridge regression on the teacher's rank; no teacher)
and a smaller sample, in bench/results/student_choices.md: this one keeps the most of the teacher's
top in the fewest candidates.

Two uses: ``--method student --teacher METHOD`` (the student alone, the fastest first cut), and
``--cascade`` on any method (:mod:`domainsift.pipeline.cascade`): the student scores the whole pool and
the teacher only the student's top candidates. How many candidates the teacher needs is estimated on
the teacher-scored sample, each quarter of it scored by a student fitted on the other three (the
student keeps those out-of-fold scores; :func:`domainsift.pipeline.cascade.candidates_for` plans with them). A fitted
student is saved with the run (``student/`` in the run directory) and reused on another pool with
``--student-from DIR``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from .._internal.errors import DomainsiftError
from .base import CACHE_DIR, PROGRESS, SEED, BaseSelector, Param, at_least

log = logging.getLogger(__name__)

HEAD_C = 0.01  # the head's inverse L2 penalty (scikit-learn's C; 1.0 before 0.26.0: Student.fit_head)
HEAD = f"top vs rest, C={HEAD_C:g}"  # the teacher's top share of the sample against the rest of it (the
# signature says so; 0.18.0-0.25.0: "top vs rest", at C = 1;
# 0.17.0 and earlier: against the bottom two thirds, bench/results/candidates.md)
FOLDS = 4  # the sample's folds: each is scored by a student fitted on the others, to plan the candidates
ENRICH = 0.5  # the enrichment: the teacher also scores this share of the sample's size more lines (10,000 at the
ENRICH_TOP = 0.2  # default 20,000), the top ENRICH_TOP of a further draw by the student fitted on the sample
# (StudentSelector._enrich says why; enrichment() how many)
NO_TEACHER = ("student", "random")
FEATURES = "static+bigrams"  # what the signature records of a student fitted now (0.22.0 and earlier: "static";
# hashed word n-grams alone measured worse: bench/archive/student_choices.py)


BIGRAM_BUCKETS = 1 << 18  # the hashed token bigrams' table (2 MB of float64 weights)
BIGRAM_HASH = "fib64-pair"  # how a bigram finds its bucket (bigram_slots); recorded with a saved student


def bigram_slots(first: np.ndarray, second: np.ndarray, buckets: int = BIGRAM_BUCKETS) -> np.ndarray:
    """The bucket of each token bigram (``first[k]``, ``second[k]``): the pair as one 64-bit key,
    Fibonacci hashing (times 2^64 / golden ratio, modulo 2^64, the top bits): integer arithmetic, the same
    buckets on every CPU."""
    bits = int(buckets).bit_length() - 1
    key = (first.astype(np.uint64) << np.uint64(32)) | second.astype(np.uint64)
    return ((key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits)).astype(np.int64)


def line_bigrams(flat: np.ndarray, counts: np.ndarray, line: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each token bigram inside a line (none across lines): its line and its bucket. ``line``: each
    token's line, when the caller has it."""
    if line is None:
        line = np.repeat(np.arange(len(counts)), counts)
    at = np.flatnonzero(line[1:] == line[:-1])
    return line[at], bigram_slots(flat[at], flat[at + 1])


def _design(z: np.ndarray, bigrams, scale: float):
    """The head's design matrix, ``[z | bigrams * scale]`` as one CSR matrix (each row: its dense values,
    every one stored, then its bigrams), built in place: ``scipy.sparse.csr_matrix(z)`` and
    ``scipy.sparse.hstack`` (0.27.0) held coordinate arrays and a second copy on the way, some 150 MB
    more at the head's 30,000 lines, during a cascade's student fit, its peak of memory."""
    import scipy.sparse as sp
    n, d = z.shape
    b = bigrams.tocsr()
    total = n * d + b.nnz
    idx = np.int32 if total < 2 ** 31 else np.int64
    indptr = (np.arange(n + 1, dtype=idx) * d + b.indptr).astype(idx, copy=False)
    data, indices = np.empty(total), np.empty(total, dtype=idx)
    at = np.arange(b.nnz, dtype=np.int64) + d * (np.repeat(np.arange(n, dtype=np.int64), np.diff(b.indptr)) + 1)
    data[at], indices[at] = b.data * scale, b.indices + d
    dense = np.ones(total, dtype=bool)
    dense[at] = False
    del at
    data[dense] = z.reshape(-1)
    indices[dense] = np.tile(np.arange(d, dtype=idx), n)
    return sp.csr_matrix((data, indices, indptr), shape=(n, d + b.shape[1]))


class Features:
    """A sample's features: the mean static vector of each line (``dense``, (lines, dim)) and its hashed
    token bigrams (``bigrams``: a sparse (lines, buckets) matrix, each bigram 1 / the line's token count,
    so a linear weight on it adds to the line's mean as a token's weight does)."""

    def __init__(self, dense: np.ndarray, bigrams):
        self.dense, self.bigrams = dense, bigrams

    def __len__(self) -> int:
        return len(self.dense)

    def __getitem__(self, rows) -> "Features":
        return Features(self.dense[rows], self.bigrams[rows])

    @staticmethod
    def stack(parts: list["Features"]) -> "Features":
        import scipy.sparse as sp
        return Features(np.vstack([p.dense for p in parts]), sp.vstack([p.bigrams for p in parts]).tocsr())


class Student:
    """Static sentence vectors, hashed token bigrams and a linear head: :meth:`featurize`, :meth:`fit_head`,
    :meth:`score_features`, and :meth:`score` (the same scores from per-token and per-bigram weights,
    without the feature matrix)."""

    def __init__(self, static):
        self.static = static
        self.coef_ = self.intercept_ = self.scale_ = None
        self.bigram_ = None  # a weight per bigram bucket (None: a student of mean static vectors alone, <= 0.22.0)

    @property
    def features(self) -> str:
        """What the head reads (the signature's ``features``)."""
        return "static" if self.bigram_ is None else "static+bigrams"

    def featurize(self, texts) -> Features:
        """Every line's mean static vector (float64, as ``static.encode``) and hashed bigrams, from one
        tokenization."""
        import scipy.sparse as sp
        texts = list(texts)
        dense, rows, cols, vals = np.zeros((len(texts), self.static.dim)), [], [], []
        for start, flat, counts in self.static.token_chunks(texts):
            dense[start:start + len(counts)] = self.static.pool(self.static.vectors, flat, counts)
            line, slot = line_bigrams(flat, counts)
            rows.append(line + start)
            cols.append(slot)
            vals.append(1.0 / np.maximum(counts, 1)[line])
        cat = lambda parts, dt: np.concatenate(parts) if parts else np.zeros(0, dt)  # noqa: E731
        big = sp.csr_matrix((cat(vals, np.float64), (cat(rows, np.int64), cat(cols, np.int64))),
                            shape=(len(texts), BIGRAM_BUCKETS))
        big.sum_duplicates()
        return Features(dense, big)

    def training_set(self, x_in, x_sample, t_sample: np.ndarray, share: float, extra=None):
        """In-domain set and the teacher's top ``share`` of the sample (positives) against the rest of the
        sample (negatives); ``extra`` (features, teacher scores): more lines, positive where the teacher
        scores them at least as high as the sample's last positive."""
        n = len(t_sample)
        order = np.argsort(-np.asarray(t_sample, dtype=np.float64), kind="stable")
        n_top = max(1, min(n - 1, int(round(share * n))))
        pos, neg = order[:n_top], order[n_top:]
        parts = [x_in, x_sample[pos], x_sample[neg]]
        y = [np.ones(len(x_in) + len(pos)), np.zeros(len(neg))]
        if extra is not None:
            parts.append(extra[0])
            y.append((np.asarray(extra[1], dtype=np.float64) >= float(t_sample[order[n_top - 1]])).astype(float))
        x = Features.stack(parts) if isinstance(x_in, Features) else np.vstack(parts)
        return x, np.concatenate(y)

    def fit_head(self, x_in: Features, x_sample: Features, t_sample: np.ndarray, share: float,
                 seed: int = 0, extra=None) -> "Student":
        """A logistic regression (balanced classes) on the standardised mean vectors and the bigrams.

        The bigram block is scaled so that its rows' mean squared norm equals the standardised block's
        (its width): one L2 penalty then weighs the two alike, rather than by the bigrams' 1/length
        values, which would leave their weights nearly unused.

        The penalty is strong (:data:`HEAD_C`): some 260,000 weights learn from a few hundred of the
        teacher's top lines (250 at a 1% selection of a 20,000-line sample) and the in-domain set, and a
        weak penalty lets the head fit the rare bigrams of those few lines, which lines it never saw do
        not share. On lines outside the sample (``finetune --layers 3`` teacher), C = 1 -> 0.01 took the
        fewest candidates that hold the plan's guarantee from 5.8% to 4.7% of the shared pool at a 1%
        selection (the plan 6.6% -> 5.1%), 11.0% -> 8.6% on the 29% pool, 1.8% -> 1.6% on the 2% pool, and
        no pool or share needed more (bench/results/student_source.md). A sweep of C on three targets
        (git show 2fcdd91:docs/experiments.md "0.26.0") improves from 1 down to 0.003-0.01 and degrades below 0.001, towards
        the difference of the two classes' means."""
        from sklearn.linear_model import LogisticRegression
        x, y = self.training_set(x_in, x_sample, t_sample, share, extra)
        self.scale_ = (x.dense.mean(0), np.maximum(x.dense.std(0), 1e-8))
        z, bigrams = (x.dense - self.scale_[0]) / self.scale_[1], x.bigrams
        del x  # the design below holds what the fit needs (the head's peak memory is the fit's)
        dim = z.shape[1]
        norm = float(bigrams.multiply(bigrams).sum()) / len(y)
        scale = float(np.sqrt(dim / norm)) if norm > 0 else 0.0
        design = _design(z, bigrams, scale) if scale else z
        del z, bigrams
        lr = LogisticRegression(C=HEAD_C, class_weight="balanced", max_iter=2000, random_state=seed)
        lr.fit(design, y)
        del design
        w = lr.coef_[0].astype(np.float64)
        self.coef_, self.intercept_ = w[:dim], float(lr.intercept_[0])
        self.bigram_ = w[dim:] * scale if scale else np.zeros(BIGRAM_BUCKETS)
        self._u = None  # the per-token weights of a new head
        return self

    def score_features(self, x) -> np.ndarray:
        dense = x.dense if isinstance(x, Features) else x
        out = ((dense - self.scale_[0]) / self.scale_[1]) @ self.coef_ + self.intercept_
        if self.bigram_ is not None:
            out = out + x.bigrams @ self.bigram_
        return out

    def token_weights(self) -> tuple[np.ndarray, float]:
        """The head's mean-vector part as one weight per token, and the constant it adds: a line's score
        is the mean of its tokens' weights (plus its bigrams' weights over its token count) plus the
        constant."""
        if getattr(self, "_u", None) is None:
            mu, sd = self.scale_
            w = self.coef_ / sd
            self._u = (self.static.vectors.astype(np.float64) @ w, self.intercept_ - float(mu @ w))
        return self._u

    def score(self, texts) -> np.ndarray:
        return self.score_tokens(*self.static.token_ids(list(texts)))

    def score_tokens(self, flat: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """:meth:`score` of lines tokenized already (``static.token_ids``): the heads of a student of several
        targets share one tokenization."""
        u, b = self.token_weights()
        if self.bigram_ is None:
            return self.static.pool(u, flat, counts) + b
        n = len(counts)
        line = np.repeat(np.arange(n), counts)
        owner, slot = line_bigrams(flat, counts, line)
        total = (np.bincount(line, weights=u[flat], minlength=n)
                 + np.bincount(owner, weights=self.bigram_[slot], minlength=n))
        return total / np.maximum(counts, 1) + b

    def state(self) -> dict:
        out = {"coef": self.coef_, "intercept": self.intercept_, "mu": self.scale_[0], "sd": self.scale_[1]}
        if self.bigram_ is not None:
            out["bigrams"] = self.bigram_
        return out

    @classmethod
    def from_state(cls, state: dict, static) -> "Student":
        st = cls(static)
        st.coef_, st.intercept_ = np.asarray(state["coef"], dtype=np.float64), float(state["intercept"])
        st.scale_ = (np.asarray(state["mu"], dtype=np.float64), np.asarray(state["sd"], dtype=np.float64))
        if state.get("bigrams") is not None:
            st.bigram_ = np.asarray(state["bigrams"], dtype=np.float64)
        return st


def _folder_digest(path: Path) -> str:
    """One SHA-256 over a saved student's files: of its ``SHA256SUMS`` (which names and hashes every file,
    checked on load), or, for a student saved before 0.12.0, of the files' names and bytes in name order."""
    import hashlib
    from .._internal.checksums import SUMS, is_sealed
    if is_sealed(path):
        return hashlib.sha256((Path(path) / SUMS).read_bytes()).hexdigest()[:16]
    h = hashlib.sha256()
    for f in sorted(p for p in Path(path).rglob("*") if p.is_file()):
        h.update(str(f.relative_to(path)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def _check_student(st: "Student") -> None:
    """A loaded student scores: its head has one finite weight per static dimension, its static vectors
    one finite row per token of its tokenizer."""
    dim = st.static.vectors.shape[1] if st.static.vectors.ndim == 2 else -1
    for name, v in (("coef", st.coef_), ("mu", st.scale_[0]), ("sd", st.scale_[1])):
        if np.shape(v) != (dim,):
            raise DomainsiftError(f"head.npz: {name} holds {np.shape(v)} values for {dim}-d static vectors")
        if not np.isfinite(v).all():
            raise DomainsiftError(f"head.npz: {name} holds values that are not finite")
    if st.bigram_ is not None:
        if np.shape(st.bigram_) != (BIGRAM_BUCKETS,):
            raise DomainsiftError(f"head.npz: bigrams holds {np.shape(st.bigram_)} values for {BIGRAM_BUCKETS} "
                                  "buckets")
        if not np.isfinite(st.bigram_).all():
            raise DomainsiftError("head.npz: bigrams holds values that are not finite")
    if not np.isfinite(st.intercept_):
        raise DomainsiftError("student.json: the intercept is not finite")
    vocab = st.static.tokenizer.get_vocab_size()
    if st.static.vectors.shape[0] < vocab:  # token ids index the rows
        raise DomainsiftError(f"static/vectors.npy: {st.static.vectors.shape[0]} rows for a tokenizer of {vocab} tokens")
    if not np.isfinite(st.static.vectors).all():
        raise DomainsiftError("static/vectors.npy: values that are not finite")


def enrichment(sample: int, rest: int | None = None) -> tuple[int, int]:
    """The enrichment of a ``sample``-line teacher-scored sample: ``(draw, scored)``, the further pool
    lines drawn and how many of them (the student's top :data:`ENRICH_TOP` of the draw) the teacher
    scores; ``rest``: the lines there are to draw from (None: as many as asked)."""
    draw = int(np.ceil(ENRICH * sample / ENRICH_TOP))
    if rest is not None:
        draw = min(draw, max(0, int(rest)))
    scored = int(round(ENRICH_TOP * draw))
    return (draw, scored) if scored >= 20 else (0, 0)


class StudentSelector(BaseSelector):
    """A fast linear scorer trained on a teacher method's scores of a pool sample (module docstring)."""

    name = "student"
    needs_pool = True
    cascade_teacher = False  # the cascade's own first stage
    held_out_ = None  # the out-of-fold student and teacher scores of its sample, once fitted
    heads_ = None  # a student of several targets (joined): each target's student, by name
    params = (
        Param("teacher", str, "cosine", "the method the student learns from (fitted with its defaults and "
              "this run's seed; any method but random)"),
        Param("sample", int, 20000, "pool lines the teacher scores for the student to learn from (a seeded "
              "sample)", check=at_least(100)),
        Param("share", float, 0.1, "the teacher's top share of the sample that the student learns as in-domain "
              "(select --top N / --fraction sets it, unless given, to 1.25 times the selection's share: the "
              "teacher's top that a cascade's candidates must hold)",
              check=lambda v: None if 0 < v < 1 else f"must be in (0, 1), got {v}"),
        Param("vectors", str, "teacher", "the static vectors' source: 'teacher', the teacher's own fitted encoder "
              "where it has one (finetune's fine-tuned encoder; otherwise --model), or 'base', --model's encoder",
              choices=("teacher", "base")),
        Param("model", str, "minilm", "the encoder the static vectors are distilled from (the teacher's own "
              "encoder when a cascade builds the student)"),
        Param("student_from", str, None, "a saved student (a run directory's student/ folder) to score with: "
              "no teacher runs, no training"),
        Param("teacher_params", dict, None, "the teacher's parameters (library use; a cascade passes its own)",
              cli=False),
        SEED, CACHE_DIR, PROGRESS,
    )

    learned = ("student_",)
    saves_state = True
    python_bound = True  # its scoring is tokenizing in Python: the local engine forks a process a core

    def prepare_fork(self) -> None:
        """The per-token weights, computed before the local engine forks (a matrix product in the parent,
        none in the children)."""
        for head in (self.heads_ or {"": self}).values():
            if head.is_fitted:
                head.student_.token_weights()

    def check_params(self):
        super().check_params()
        if self.teacher in NO_TEACHER:
            raise DomainsiftError(f"student: --teacher {self.teacher} has nothing to teach; choose a method "
                                  "that ranks by content (cosine, finetune, moore-lewis, crosslingual)")
        from . import SELECTORS
        if self.teacher not in SELECTORS:
            raise DomainsiftError(f"student: unknown teacher '{self.teacher}' (choose from "
                                  f"{', '.join(m for m in SELECTORS if m not in NO_TEACHER)})")
        return self

    @property
    def fit_uses_pool(self) -> bool:
        return self.student_from is None

    @property
    def draw(self) -> int:
        """The pool lines a fit asks for: the sample and its enrichment's draw (:func:`enrichment`)."""
        return self.sample + enrichment(self.sample)[0]

    def input_files(self) -> list[str]:
        """A saved student's files (``--student-from``): a student swapped between a kill and a resume is
        loaded anew, not taken from the resumed run's copy."""
        if self.student_from is None or not Path(self.student_from).is_dir():
            return []
        return [str(p) for p in sorted(Path(self.student_from).rglob("*")) if p.is_file()]

    # ------------------------------------------------------------------ fit
    def static_vectors(self, teacher=None) -> tuple:
        """The static vectors and where they come from (``"teacher"`` or ``"base"``): distilled from the
        fitted ``teacher``'s own encoder (``vectors='teacher'``, when it has one: no cache, each fit's
        encoder is its own) or from ``model`` (cached). A student of several targets (:meth:`joined`) distils
        them once for all its heads."""
        from ..embed import model_path
        from ..embed.static import distill_encoder, distilled
        source = teacher.distil_source() if self.vectors == "teacher" else None  # declared by every selector
        if source is None:
            return distilled(model_path(self.model), self.cache_dir, progress=self.progress), "base"
        tok, net, name = source
        return distill_encoder(tok, net, name, None, progress=self.progress), "teacher"  # named by its digest

    def build_teacher(self):
        from . import get_selector, selector_class
        params = {"seed": self.seed, "progress": self.progress, **(self.teacher_params or {})}
        names = {p.name for p in selector_class(self.teacher).params}
        if "cache_dir" in names:
            params.setdefault("cache_dir", self.cache_dir)
        return get_selector(self.teacher, **{k: v for k, v in params.items() if k in names})

    def fit(self, in_domain, pool=None, teacher=None) -> "StudentSelector":
        """Fit the student: ``teacher`` (a fitted selector) scores a seeded sample of ``pool``; without
        one, the teacher method is built and fitted here. With ``student_from``, load it instead."""
        if self.student_from is not None:
            self.reset()
            self.load_state(self.student_from)
            saved = (getattr(self, "teacher_signature_", None) or {}).get("method")
            if saved and self.teacher != saved and self.teacher != "cosine":
                log.warning("--student-from %s: the saved student learnt from %s; --teacher %s is not used",
                            self.student_from, saved, self.teacher)
            return self
        in_domain, pool = self._fit_input(in_domain, pool)
        if teacher is None:
            teacher = self.build_teacher()
            teacher.fit(in_domain, pool if teacher.fit_uses_pool else None)
        self._fit_heads({"": self}, {"": in_domain}, pool, {"": teacher}, None)
        return self

    # ------------------------------------------------------------------ several targets, one student
    @classmethod
    def joined(cls, heads: dict) -> "StudentSelector":
        """One student of several targets from each target's (``{name: StudentSelector}``, built with the
        same parameters but its own ``share``): :meth:`fit_heads` fits them all (or they come fitted, saved
        by a killed run), and :meth:`score_targets` scores every head from one tokenization of the lines."""
        first = next(iter(heads.values()))
        joint = cls(**first.param_values())
        joint.heads_ = dict(heads)
        return joint

    def fit_heads(self, in_domains: dict, pool, teachers: dict, block=None) -> "StudentSelector":
        """Fit every head of :meth:`joined` (``{name: Corpus}`` in-domain sets, ``{name: fitted selector}``
        teachers that distil one encoder, or none): one seeded sample of ``pool``, scored by the teachers
        once (``block(records)``: every target's scores as ``(n, T)``, a fit of several targets'; without
        it each teacher scores the sample), featurized once; one enrichment draw, tokenized once. Each head
        is then the student a run of its own target would fit, bit for bit: the same sample, draw and
        folds (one random stream, seeded alike), its own teacher's scores and share."""
        from ..io.corpus import as_corpus
        if self.heads_ is None or set(self.heads_) != set(in_domains) or set(teachers) != set(in_domains):
            raise DomainsiftError("student: fit_heads needs an in-domain set and a teacher for each head of joined()")
        self._fit_heads(self.heads_, {n: as_corpus(c) for n, c in in_domains.items()}, as_corpus(pool), teachers,
                        block)
        return self

    def _fit_heads(self, heads: dict, in_domains: dict, pool, teachers: dict, block) -> None:
        names = list(heads)
        rng = np.random.default_rng(self.seed)
        n = len(pool)
        pick = np.sort(rng.choice(n, size=min(self.sample, n), replace=False))
        sample = pool[[int(i) for i in pick]]
        scores = (np.asarray(block(sample), dtype=np.float64) if block is not None else
                  np.stack([np.asarray(teachers[k].score(sample), dtype=np.float64) for k in names], axis=1))
        static, vectors_from = self.static_vectors(teachers[names[0]])  # once for every head
        x_s = Student(static).featurize(sample.texts)
        drawn = self._draw(pool, pick, rng, static)
        # out-of-fold scores: each quarter of the sample scored by a student fitted on the other three (and
        # the enrichment); they plan the cascade (domainsift.pipeline.cascade.candidates_for)
        folds = np.array_split(rng.permutation(len(pick)), FOLDS)
        for j, name in enumerate(names):
            head = heads[name]
            head._fit_head(in_domains[name], x_s, np.ascontiguousarray(scores[:, j]), teachers[name], static,
                           drawn, folds)
            head.vectors_from_, head.n_sample_, head.head_ = vectors_from, int(len(pick)), HEAD

    def _fit_head(self, in_domain, x_s: Features, t: np.ndarray, teacher, static, drawn, folds: list) -> None:
        """This student's head (its share) on the sample's features ``x_s`` and its teacher's scores ``t``,
        enriched from the ``drawn`` lines (:meth:`_draw`)."""
        self.teacher_signature_ = {"method": teacher.name, **teacher.signature_params()}
        x_in = Student(static).featurize(in_domain.texts)
        st = Student(static).fit_head(x_in, x_s, t, self.share, self.seed)
        extra = None
        if drawn is not None:
            lines, tokens, k = drawn
            top = np.sort(np.argsort(-st.score_tokens(*tokens), kind="stable")[:k])
            chosen = lines[[int(i) for i in top]]
            extra = st.featurize(chosen.texts), np.asarray(teacher.score(chosen), dtype=np.float64)
        if len(t) >= 20 * FOLDS:
            oof = np.empty(len(t))
            for held in folds:
                train = np.setdiff1d(np.arange(len(t)), held)
                oof[held] = Student(static).fit_head(x_in, x_s[train], t[train], self.share, self.seed,
                                                     extra=extra).score_features(x_s[held])
            self.held_out_ = {"teacher": t, "student": oof}
        else:
            self.held_out_ = None
        self.student_ = st if extra is None else Student(static).fit_head(x_in, x_s, t, self.share, self.seed,
                                                                          extra=extra)
        self.n_enriched_ = 0 if extra is None else len(extra[1])

    def _draw(self, pool, pick: np.ndarray, rng, static):
        """The enrichment's draw (``(lines, their tokens, how many the teacher scores)``, or None): a seeded
        draw of the pool lines outside the sample; each head's student fitted on the sample ranks it, and
        its teacher scores the top :data:`ENRICH_TOP`.

        At a 1% selection the sample gives the head 250 of the teacher's top lines; a uniform draw adds as
        few per line the teacher scores. The student's top fifth of a draw holds most of the draw's teacher
        top, so the same teacher time adds several times more of the lines the head must learn, and the
        near misses it must rank below them. Measured on 12,500 shared-pool lines outside every sample
        (a 10,000-line sample; for a 1% selection, the fewest of the student's top lines that hold the
        plan's guarantee, mean of five targets; bench/results/enrichment.md): 8.6% of the lines; with
        2,500 more uniform lines 8.3%; with the top 2,500 of a 12,500-line draw 7.6%, as with all 22,500
        lines scored (7.6%) at 56% of the teacher's lines; at 5%: 9.7%, 9.5%, 9.1%, 9.1%. A narrower net (a
        one-off probe, not kept: the top 2.5% of a draw, twice its expected teacher top) measured worse
        than none, as it adds only lines the student already ranks high."""
        rest = np.setdiff1d(np.arange(len(pool)), pick)
        n_draw, k = enrichment(len(pick), len(rest))
        if k == 0:
            return None
        drawn = np.sort(rng.choice(rest, size=n_draw, replace=False))
        lines = pool[[int(i) for i in drawn]]
        log.info("student: the teacher scores %d more lines, the student's top of %d more drawn", k, n_draw)
        return lines, static.token_ids(list(lines.texts)), k

    # ------------------------------------------------------------------ score
    def score(self, records) -> np.ndarray:
        from ..io.corpus import as_corpus
        self.require_fitted()
        return self.student_.score(as_corpus(records).texts)

    @property
    def is_fitted(self) -> bool:
        return super().is_fitted or bool(self.heads_) and all(h.is_fitted for h in self.heads_.values())

    def score_targets(self, records) -> np.ndarray:
        """Every head's scores, ``(n, T)`` (a student of :meth:`joined`): the lines tokenized once, column
        ``j`` head ``j``'s :meth:`score`, bit for bit."""
        from ..io.corpus import as_corpus
        if not self.heads_:
            raise DomainsiftError("student: a student of one target has no targets' block; score it")
        self.require_fitted()
        heads = [h.student_ for h in self.heads_.values()]
        tokens = heads[0].static.token_ids(list(as_corpus(records).texts))
        return np.stack([h.score_tokens(*tokens) for h in heads], axis=1)

    def target(self, name: str) -> "StudentSelector":
        """Head ``name`` of a student of :meth:`joined`: the one-target student its run saves and reports."""
        if not self.heads_ or name not in self.heads_:
            raise DomainsiftError(f"student: no head '{name}' (it has: {', '.join(self.heads_ or [])})")
        return self.heads_[name]

    # ------------------------------------------------------------------ state
    def fitted_state(self) -> dict:
        if self.heads_:
            return {"heads": {name: head.fitted_state() for name, head in self.heads_.items()}}
        return {"student": self.student_.state(), "static": self.student_.static,
                "teacher": getattr(self, "teacher_signature_", None), "vectors": getattr(self, "vectors_from_", None)}

    def set_fitted(self, state: dict) -> "StudentSelector":
        if "heads" in state:
            self.heads_ = {name: type(self)(**self.param_values()).set_fitted(head)
                           for name, head in state["heads"].items()}
            return self
        self.student_ = Student.from_state(state["student"], state["static"])
        self.teacher_signature_ = state.get("teacher")
        self.vectors_from_ = state.get("vectors")
        return self

    def save_state(self, path) -> None:
        """The student as a folder: its head (``student.json``) and static vectors (``static/``); the
        sample's out-of-fold scores (what plans a cascade) travel with it."""
        from .._internal.atomic import atomic_dir
        with atomic_dir(path) as tmp:
            st = self.student_.state()
            meta = {"features": self.student_.features, "head": getattr(self, "head_", None) or HEAD, "intercept": st["intercept"],
                    "teacher": self.teacher_signature_,
                    "n_sample": getattr(self, "n_sample_", None), "folds": FOLDS,
                    "n_enriched": getattr(self, "n_enriched_", None),
                    "vectors": getattr(self, "vectors_from_", None) or "base"}
            arrays = {"coef": st["coef"], "mu": st["mu"], "sd": st["sd"]}
            if "bigrams" in st:
                meta.update(bigram_buckets=BIGRAM_BUCKETS, bigram_hash=BIGRAM_HASH)
                arrays["bigrams"] = st["bigrams"]
            if getattr(self, "held_out_", None):
                arrays.update(held_teacher=self.held_out_["teacher"], held_student=self.held_out_["student"])
            np.savez(tmp / "head.npz", **arrays)
            (tmp / "student.json").write_text(json.dumps(meta, indent=1, default=str), encoding="utf-8")
            self.student_.static.save(tmp / "static")

    def load_state(self, path) -> "StudentSelector":
        from .._internal.checksums import is_sealed, verify
        path = Path(path)
        sealed = is_sealed(path)
        if not sealed and path.is_dir():
            log.warning("%s has no checksums (saved before 0.12.0): its files are checked for shape and "
                        "finite values only", path)
        try:
            from ..embed.static import StaticEmbedder
            if sealed:
                verify(path)
            meta = json.loads((path / "student.json").read_text(encoding="utf-8"))
            with np.load(path / "head.npz", allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
            static = StaticEmbedder.load(path / "static", verify=False)  # checked with the folder
            self.student_ = Student.from_state({**arrays, "intercept": meta["intercept"]}, static)
            hashed = (meta.get("bigram_hash"), meta.get("bigram_buckets"))
            if "bigrams" in arrays and hashed != (BIGRAM_HASH, BIGRAM_BUCKETS):
                raise DomainsiftError(f"student.json: its bigrams are hashed by {hashed[0]} into {hashed[1]} buckets; "
                                      f"this version hashes by {BIGRAM_HASH} into {BIGRAM_BUCKETS}")
            _check_student(self.student_)
        except DomainsiftError as exc:
            raise DomainsiftError(f"{path}: not a usable saved student ({exc})") from None
        except Exception as exc:  # noqa: BLE001: a damaged folder of any kind (truncated zip, bad JSON, a
            # tokenizer file tokenizers cannot read) is one line naming it, never a traceback
            raise DomainsiftError(f"{path}: not a saved student ({type(exc).__name__}: "
                                  f"{str(exc).splitlines()[0] if str(exc) else 'unreadable'})") from None
        self.teacher_signature_ = meta.get("teacher")
        self.head_ = meta.get("head", "top vs bottom two thirds")  # what a student saved before 0.18.0 learnt
        self.n_sample_ = meta.get("n_sample")
        self.n_enriched_ = meta.get("n_enriched")  # a student saved before 0.28.0: none recorded (none ran)
        self.vectors_from_ = meta.get("vectors", "base")  # a student saved before 0.21.0: the base encoder's
        self.student_digest_ = _folder_digest(path)
        self.held_out_ = ({"teacher": arrays["held_teacher"], "student": arrays["held_student"]}
                          if "held_teacher" in arrays else None)
        return self

    def write_artifacts(self, out_dir) -> list[str]:
        from .. import rundir
        folder = rundir.path(out_dir, rundir.STUDENT)
        self.save_state(folder)
        return [str(folder)]

    def signature_params(self) -> dict:
        p = super().signature_params()
        p.pop("teacher_params", None)
        from ..embed.static import RECIPE
        p["features"], p["static"] = (self.student_.features if self.is_fitted else FEATURES), RECIPE
        p["head"] = getattr(self, "head_", None) or HEAD  # a saved student's own (before 0.18.0: none saved)
        if self.is_fitted:
            p["teacher_signature"] = getattr(self, "teacher_signature_", None)
            if getattr(self, "n_sample_", None) is not None:
                p["n_sample"] = self.n_sample_
            if getattr(self, "n_enriched_", None) is not None:
                p["n_enriched"] = self.n_enriched_
            p["static_source_fingerprint"] = self.student_.static.source_fingerprint
            p["vectors"] = getattr(self, "vectors_from_", None) or "base"  # what ran: the teacher may have none
            if p["vectors"] == "teacher":
                p["static_encoder"] = self.student_.static.name
        if self.student_from is not None:
            # what ran is the saved student: its teacher and encoder, not the flags (which it cannot honour),
            # and the digest of its files, so a student swapped at the same path changes the signature
            teacher = (getattr(self, "teacher_signature_", None) or {}).get("method")
            p["teacher"] = teacher
            p["model"] = self.student_.static.name if self.is_fitted else None
            p["student_digest"] = getattr(self, "student_digest_", None)
        return p

