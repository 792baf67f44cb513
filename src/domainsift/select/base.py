"""The Selector protocol, the parameters a selector declares, and the one shared step
that turns scores into a selection.

A selector only *scores* records (higher = more in-domain)::

    sel = get_selector("cosine").fit(in_domain, pool)     # Corpus objects, or lists of strings
    scores = sel.score(pool)                               # (n,) float

and :func:`choose` picks from scores: the top N, a top fraction, everything at
or above a threshold, or (for probability scores) everything above 0.5.

A selector declares its parameters once, as :class:`Param` entries in ``params``;
:class:`BaseSelector` turns them into constructor keywords with defaults, the CLI
into ``--flags``, and the signature into its parameter list. A new method is one
file with a selector class and one line in :data:`domainsift.select.SELECTORS`.
"""

from __future__ import annotations

import json

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Protocol, Sequence, runtime_checkable

import numpy as np

from ..io.corpus import Corpus, as_corpus
from .._internal.errors import DomainsiftError


@dataclass(frozen=True)
class Param:
    """One parameter of a selector: its keyword, type, default and help.

    ``cli=False`` keeps it out of the command line (set by the run: ``progress``, ``cache_dir``).
    ``check`` returns an error message for a bad value (None when it is fine).
    ``signature=False`` leaves it out of the signature (it does not change the scores).
    """

    name: str
    type: Callable = str
    default: Any = None
    help: str = ""
    choices: tuple | None = None
    cli: bool = True
    signature: bool = True
    metavar: str | None = None
    check: Callable[[Any], str | None] | None = None
    option: str | None = None  # the CLI flag when it is not --<name> (cosine's embedder is --model)
    nargs: int | str | None = None  # with action="append": a repeatable flag of nargs values each
    action: str | None = None

    @property
    def flag(self) -> str:
        return self.option or "--" + self.name.replace("_", "-")

    @property
    def dest(self) -> str:
        return self.flag[2:].replace("-", "_")


def at_least(lo: float) -> Callable[[Any], str | None]:
    return lambda v: None if v >= lo else f"must be at least {lo:g}, got {v}"


def in_range(lo: float, hi: float, hi_open: bool = False) -> Callable[[Any], str | None]:
    def check(v):
        ok = lo <= v < hi if hi_open else lo <= v <= hi
        return None if ok else f"must be in [{lo:g}, {hi:g}{')' if hi_open else ']'}, got {v}"
    return check


# parameters that several selectors share, declared once
SEED = Param("seed", int, 0, "random seed")
PROGRESS = Param("progress", bool, True, "progress bars", cli=False, signature=False)
CACHE_DIR = Param("cache_dir", str, None, "embedding cache directory", cli=False, signature=False)
DEVICE = Param("device", str, None, "cpu or cuda (default: cuda when available)", signature=False)
MAX_LENGTH = Param("max_length", int, 128, "tokens per sentence", check=at_least(1))
BACKEND = Param("backend", str, "onnx-int8", "how a transformers encoder runs on a CPU: onnx-int8 (ONNX Runtime, "
                "int8 with per-row activations: a vector depends on its sentence alone; speeds in "
                "bench/results/int8_speed.md), onnx (fp32) or torch (fp32); a GPU runs torch",
                choices=("onnx-int8", "onnx", "torch"))


@runtime_checkable
class Selector(Protocol):
    """Scores records by how in-domain they are."""

    name: str
    #: True when :meth:`score` returns probabilities of being in-domain (``--positive`` works)
    probabilistic: bool

    def fit(self, in_domain: Corpus | Sequence[str], pool: Corpus | Sequence[str] | None = None) -> "Selector":
        """Learn from the in-domain records (and, where the method needs it, the pool)."""

    def score(self, records: Corpus | Sequence[str]) -> np.ndarray:
        """Return float scores of shape ``(len(records),)``; higher = more in-domain."""

    def signature_params(self) -> dict:
        """Parameters that identify this selector's scores (for the signature)."""


class BaseSelector:
    """What every selector shares: declared parameters, their checks, signature reporting.

    Subclasses set ``name``, ``params`` and implement ``fit`` and ``score``; records reach them
    as :class:`~domainsift.io.corpus.Corpus` objects (``.texts``, ``.ids``, ``.targets``).
    """

    name: ClassVar[str] = "base"
    probabilistic: ClassVar[bool] = False
    #: a record's score depends on that record alone, so the pool may be scored in chunks
    per_sentence: ClassVar[bool] = True
    #: fit needs the pool (to sample negatives, a general LM, ...)
    needs_pool: ClassVar[bool] = False
    #: its scores follow the lines' text (random's do not): a run compares the in-domain set with the
    #: pool on the surface first (:mod:`domainsift.surface`)
    reads_content: ClassVar[bool] = True
    #: it can be a cascade's teacher (the student cannot: it is the cascade's first stage)
    cascade_teacher: ClassVar[bool] = True
    #: how --plan models its cost: "encode" (a frozen encoder over the in-domain set and the pool: cosine),
    #: "fine-tune" (training steps, then the pool encoded: finetune), or None (no estimate)
    cost_model: ClassVar[str | None] = None
    #: what a fit shared by several targets does, in words (select --target prints it)
    shared_fit_note: ClassVar[str] = "one fit, a head per target"
    #: what its fit measured on held-out lines (finetune's classifier; None for a method that measures none)
    holdout_metrics_: ClassVar[dict | None] = None
    #: the in-domain set is meant to be in another language than the pool (crosslingual): a run does not
    #: refuse them for differing (:func:`domainsift.languages.check_same_language`)
    crosses_languages: ClassVar[bool] = False
    #: the method only reads an encoder's vectors, so it takes one that cannot be fine-tuned or
    #: distilled (``--model multilingual``)
    frozen_vectors: ClassVar[bool] = False
    params: ClassVar[tuple[Param, ...]] = (SEED,)
    #: the attributes :meth:`fit` learns; :meth:`reset` removes them, :attr:`is_fitted` looks for them
    learned: ClassVar[tuple[str, ...]] = ()
    #: :meth:`save_state` / :meth:`load_state` write and read the fit as a folder (a fine-tuned model)
    saves_state: ClassVar[bool] = False
    #: its scoring is Python code on one core (the student): the local engine scores its shards in forked
    #: processes (``--processes``), after :meth:`prepare_fork`
    python_bound: ClassVar[bool] = False
    #: several targets can share one fit (:meth:`fit_targets`, :meth:`score_targets`, :meth:`target`;
    #: finetune: one encoder, a head per target), run with ``shared_defaults`` for the parameters a user
    #: did not give
    fits_targets: ClassVar[bool] = False
    shared_defaults: ClassVar[dict] = {}
    #: on a one-target view of a fit of several targets (:meth:`target`): ``(its target, every target)``
    target_of: tuple[str, tuple[str, ...]] | None = None
    #: a folder where a fit that trains in epochs keeps its last finished epoch, and goes on from it when
    #: it finds one (finetune); the engine sets it under the run's ``.resume``; None: no checkpoints
    checkpoint_dir = None

    # The lifecycle the engine drives (every hook has a default here, so the engine never probes):
    #   fit -> (save_state | fitted_state) -> score / score_at -> write_artifacts
    # A fit starts from nothing: ``_fit_input`` calls :meth:`reset` first, so a selector fitted on a
    # second pool keeps nothing of the first.

    def __init_subclass__(cls, **kw):
        """Each selector's constructor shows its declared parameters as keywords with their defaults
        (``inspect.signature(CosineSelector)``, ``help()``): declared once, in ``params``."""
        super().__init_subclass__(**kw)
        import inspect
        cls.__signature__ = inspect.Signature(
            [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default) for p in cls.params])

    def __init__(self, **kwargs):
        """Store the parameters (a keyword it does not declare is refused); :meth:`check_params` checks
        their values, and :meth:`fit` calls it first."""
        known = {p.name: p for p in self.params}
        unknown = sorted(set(kwargs) - set(known))
        if unknown:
            raise DomainsiftError(f"{self.name}: unknown parameter(s) {', '.join(unknown)} "
                                  f"(known: {', '.join(known)})")
        for p in self.params:
            setattr(self, p.name, kwargs.get(p.name, p.default))

    def check_params(self) -> "BaseSelector":
        """Reject bad values with a one-line error, and cap a transformers encoder's ``max_length`` at what
        the model takes (reading its config). :meth:`fit` calls it first; a run calls it once it has built
        the selector, before it reads the pool."""
        self._clamp_max_length()
        for p in self.params:
            value = getattr(self, p.name)
            if value is None:
                continue
            if p.choices is not None and value not in p.choices:
                raise DomainsiftError(f"{self.name}: {p.name} must be one of {', '.join(map(str, p.choices))}, "
                                      f"got {value!r}")
            if p.check is not None:
                msg = p.check(value)
                if msg:
                    raise DomainsiftError(f"{self.name}: {p.name} {msg}")
        return self

    def _clamp_max_length(self) -> None:
        """A transformers encoder's ``max_length`` capped at what the model takes (with a warning), so
        the signature records the length that runs."""
        declared = self.param_values()  # what the selector declared, never probed
        model = declared.get("model") or declared.get("embedder")
        length = declared.get("max_length")
        if not isinstance(model, str) or not isinstance(length, int) or length < 1:
            return
        from ..embed import abilities, model_path
        can = abilities(model)
        if can.kind == "baseline":
            return
        if not can.has_max_length:
            if not self.frozen_vectors and not can.trainable:
                model_path(model)   # the one-line refusal: this method needs a Hugging Face encoder
            return              # USE-m has no length to cap
        from ..embed.transformers import clamp_max_length
        self.max_length = clamp_max_length(model_path(model), length)

    def signature_params(self) -> dict:
        out = {p.name: getattr(self, p.name) for p in self.params if p.signature}
        if self.target_of is not None:  # which head of which fit scored (a one-target fit: nothing)
            out["shared"] = f"head {self.target_of[0]} of {'+'.join(self.target_of[1])}"
        return out

    def param_values(self) -> dict:
        """Every declared parameter's value: what builds an equal selector elsewhere (a Ray worker)."""
        return {p.name: getattr(self, p.name) for p in self.params}

    @property
    def fit_uses_pool(self) -> bool:
        """Whether :meth:`fit` reads the pool (the engine then gives it the pool, or a seeded sample
        of a very large one); a selector that fits on the in-domain set alone gets ``None``."""
        return self.needs_pool

    # ---------------------------------------------------------------- lifecycle
    def reset(self) -> None:
        """Forget what :meth:`fit` learned (called at the start of every fit)."""
        for name in self.learned:
            self.__dict__.pop(name, None)

    @property
    def is_fitted(self) -> bool:
        return all(name in self.__dict__ for name in self.learned)

    def require_fitted(self) -> None:
        if not self.is_fitted:
            raise DomainsiftError(f"{self.name} selector is not fitted; call fit first")

    def score_at(self, records, start: int) -> np.ndarray:
        """The scores of ``records`` found at pool positions ``start``, ``start + 1``, ... A selector
        whose scores depend on each record alone (``per_sentence``) ignores ``start``."""
        return self.score(records)

    def fitted_state(self) -> dict | None:
        """What a copy built from the same parameters needs to score as this one does (shipped to Ray
        workers), or None when the fit cannot travel as a dict (see :attr:`saves_state`)."""
        return None

    def set_fitted(self, state: dict) -> "BaseSelector":
        raise DomainsiftError(f"{self.name}: its fit cannot be restored from a dict")

    def save_state(self, path) -> None:
        """The fit as a folder: :meth:`fitted_state`'s arrays in ``state.npz`` and the rest in
        ``state.json`` (no pickle; a selector whose fit is files of its own overrides this)."""
        state = self.fitted_state()
        if state is None:
            raise DomainsiftError(f"{self.name}: its fit cannot be saved as a folder")
        arrays: dict = {}
        meta = _flatten(state, arrays, "")
        from .._internal.atomic import atomic_dir
        with atomic_dir(path) as tmp:
            np.savez(tmp / "state.npz", **arrays)
            (tmp / "state.json").write_text(json.dumps({"method": self.name, "state": meta}), encoding="utf-8")

    def load_state(self, path) -> "BaseSelector":
        """A fit saved by :meth:`save_state`; a damaged or foreign folder is a one-line error."""
        from pathlib import Path
        from .._internal.checksums import verify
        path = Path(path)
        verify(path)  # a damaged or half-written folder is refused before anything in it is read
        try:
            doc = json.loads((path / "state.json").read_text(encoding="utf-8"))
            with np.load(path / "state.npz", allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
            if doc.get("method") != self.name:
                raise ValueError(f"a fit of {doc.get('method')!r}, not {self.name!r}")
            state = _unflatten(doc["state"], arrays)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DomainsiftError(f"{path}: not a saved {self.name} fit ({exc})") from None
        self.reset()
        return self.set_fitted(state)

    @property
    def encoder_name(self) -> str | None:
        """The encoder the method's ``model`` (or ``embedder``) parameter names, or None (no encoder)."""
        for attr in ("model", "embedder"):
            v = getattr(self, attr, None)
            if isinstance(v, str):
                return v
        return None

    @property
    def model_name(self) -> str | None:
        """The model as a signature names it (an encoder's display name); None for a method without one."""
        return None

    @property
    def shippable(self) -> bool:
        """Whether a fitted copy can score on another machine (Ray workers)."""
        return self.saves_state or type(self).fitted_state is not BaseSelector.fitted_state

    def input_files(self) -> list[str]:
        """Files the fit reads besides the in-domain set and the pool (crosslingual's bitext): their
        contents join a run's resume fingerprint, so an edited file is never mixed with a saved fit."""
        return []

    def prepare_fork(self) -> None:
        """What forked scoring processes would each compute after the fork, computed once before it."""

    def distil_source(self):
        """The fitted encoder a cascade's student distils its static token vectors from when it is the
        method's own (``(transformers tokenizer, model, name)``; a fine-tuned encoder), or None: the
        student distils the method's base encoder (:mod:`domainsift.embed.static`)."""
        return None

    def fit_targets(self, targets: dict, pool) -> "BaseSelector":
        raise DomainsiftError(f"{self.name}: its targets cannot share one fit")

    def score_targets(self, records) -> np.ndarray:
        """A fit of :meth:`fit_targets` scoring ``records`` for every target at once: ``(n, T)``, column
        ``j`` the scores :meth:`target` ``j``'s view gives, bit for bit (one encoding for all)."""
        raise DomainsiftError(f"{self.name}: its targets cannot share one fit")

    def target(self, name: str) -> "BaseSelector":
        """A fit of :meth:`fit_targets` as one target's selector (its :attr:`target_of` set): it scores
        as column ``name`` of :meth:`score_targets`, and is what a cascade's student learns from."""
        raise DomainsiftError(f"{self.name}: its targets cannot share one fit")

    def _target_index(self, name: str) -> int:
        """``name``'s place among this fit's targets (a one-line error when it is not one)."""
        self.require_fitted()
        targets = list(self.__dict__.get("targets_") or [])
        if name not in targets:
            raise DomainsiftError(f"the shared fit has no target '{name}' (it has: {', '.join(targets)})")
        return targets.index(name)

    def write_artifacts(self, out_dir) -> list[str]:
        """Pictures or data of the fit written into the run directory after scoring (none by default)."""
        return []

    def _fit_input(self, in_domain, pool) -> tuple[Corpus, Corpus | None]:
        self.check_params()
        self.reset()
        in_domain = as_corpus(in_domain)
        pool = as_corpus(pool) if pool is not None else None
        if len(in_domain) == 0:
            raise DomainsiftError("the in-domain set is empty")
        if self.needs_pool and not pool:
            raise DomainsiftError(f"{self.name} needs the pool")
        return in_domain, pool


def _flatten(obj, arrays: dict, key: str):
    """``obj`` with every array moved into ``arrays`` (by its path) and replaced by a reference; the rest
    must be JSON (a fit that holds other objects cannot be saved as a folder)."""
    if isinstance(obj, np.ndarray):
        arrays[key or "_"] = obj
        return {"__array__": key or "_"}
    if isinstance(obj, dict):
        return {str(k): _flatten(v, arrays, f"{key}/{k}" if key else str(k)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_flatten(v, arrays, f"{key}/{i}") for i, v in enumerate(obj)]
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"{type(obj).__name__} in a fit's state cannot be saved as a folder")


def _unflatten(obj, arrays: dict):
    if isinstance(obj, dict):
        if set(obj) == {"__array__"}:
            return arrays[obj["__array__"]]
        return {k: _unflatten(v, arrays) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_unflatten(v, arrays) for v in obj]
    return obj


def encoder_numerics(model: str, backend: str, device: str | None, max_length: int = 128) -> dict:
    """What an encoder contributes to a signature, as it will run: its files' fingerprint, the
    backend that runs (a GPU runs PyTorch), the graph and int8 recipe, the libraries' versions
    and the CPU's instruction-set family."""
    from ..embed import abilities, model_path
    from ..embed.transformers import TransformersEmbedder
    from .._internal.machine import cpu_isa
    if abilities(model).kind == "sentence":
        from ..embed.usem import MultilingualEncoder
        p = MultilingualEncoder(progress=False).signature_params()
        p.pop("model")
        return {**p, "isa": cpu_isa()}
    enc = TransformersEmbedder(model_path(model), backend=backend, device=device, max_length=max_length,
                               progress=False)
    return {"model_fingerprint": enc.fingerprint, **enc.numerics(), "isa": cpu_isa()}


class EncoderSelector(BaseSelector):
    """A selector over a transformers encoder named by its ``model`` parameter: the signature
    names the model as it is displayed (all-MiniLM-L6-v2 for the packaged default), its files'
    fingerprint and how it ran (:func:`encoder_numerics`)."""

    @property
    def model_name(self) -> str:
        from ..embed import abilities, model_path
        from ..embed.transformers import model_display_name
        if abilities(self.model).kind == "sentence":
            from ..embed.usem import DISPLAY_NAME
            return DISPLAY_NAME
        return model_display_name(model_path(self.model))

    def signature_params(self) -> dict:
        p = super().signature_params()
        p["model"] = self.model_name
        p.update(encoder_numerics(self.model, self.backend, self.device, self.max_length))
        from ..embed import abilities
        if not abilities(self.model).has_max_length:
            p.pop("max_length", None)   # USE-m reads every piece of a sentence
        return p


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
           probabilistic: bool = False, chunk: int = 1 << 20) -> np.ndarray:
    """Indices of the selected items, best first (ties broken by position).

    Exactly one rule: ``top`` N, top ``fraction`` (0 < f <= 1), scores >= ``threshold``,
    or ``positive`` (probability > 0.5, only for probabilistic scores).
    """
    n = len(scores)
    rules = sum(x is not None for x in (top, fraction, threshold)) + bool(positive)
    if rules != 1:
        raise DomainsiftError("give exactly one of --top, --fraction, --threshold, --positive")
    check_n_against_pool(n, top, fraction)
    if threshold is not None and not np.isfinite(threshold):
        raise DomainsiftError(f"the threshold must be a finite number, got {threshold}")
    if positive and not probabilistic:
        raise DomainsiftError("--positive needs probability scores (method finetune)")
    if top is None and fraction is not None:
        top = max(1, int(round(fraction * n)))
    # one chunk of the scores at a time (scores.npy may be memory-mapped): memory stays bounded by
    # the chunk plus the selection, never the pool
    best_s, best_i = np.zeros(0), np.zeros(0, dtype=np.int64)
    for start in range(0, n, chunk):
        s = np.asarray(scores[start:start + chunk], dtype=np.float64)
        i = np.arange(start, start + len(s), dtype=np.int64)
        if top is not None:
            s, i = np.concatenate([best_s, s]), np.concatenate([best_i, i])
            best_s, best_i = _best(s, i, top)
        else:
            mask = (s > 0.5) if positive else (s >= threshold)
            best_s, best_i = np.concatenate([best_s, s[mask]]), np.concatenate([best_i, i[mask]])
    return best_i[np.lexsort((best_i, -best_s))]


MIN_TEMPERATURE = 1e-6  # below it a draw is the top N (w / T overflows to infinity long before 1e-310)


def check_resample(temperature: float, seed: int) -> None:
    """``--temperature`` and ``--resample-seed`` as :func:`importance_sample` takes them; checked before
    any scoring."""
    if not (np.isfinite(temperature) and temperature >= MIN_TEMPERATURE):
        raise DomainsiftError(f"--temperature must be a number of at least {MIN_TEMPERATURE:g} (smaller draws the "
                              f"top N: use --top N), got {temperature}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DomainsiftError(f"--resample-seed must be a whole number of at least 0, got {seed}")


def importance_sample(scores: np.ndarray, n: int, temperature: float = 1.0, seed: int = 0,
                      probabilistic: bool = False, chunk: int = 1 << 20) -> np.ndarray:
    """``n`` records drawn without replacement with probability proportional to ``exp(w / temperature)``
    (DSIR's importance resampling), by the Gumbel-top-k trick: the ``n`` largest ``w / temperature + G``,
    ``G`` standard Gumbel noise from ``seed``, one value per record in pool order (so the draw does not
    depend on ``chunk``). ``w``, the log importance weight: a probabilistic score's logit (a classifier's
    log odds of in-domain against the pool, a density ratio up to a constant), any other score as it is
    (Moore-Lewis: a cross-entropy difference; a cosine spans about 0.3, so give it a temperature near
    0.05). Returns the indices in the order drawn (largest key first)."""
    n_pool = len(scores)
    if not 0 < n <= n_pool:
        raise DomainsiftError(f"cannot sample {n} lines from a pool of {n_pool}")
    check_resample(temperature, seed)
    rng = np.random.default_rng(seed)
    best_s, best_i = np.zeros(0), np.zeros(0, dtype=np.int64)
    for start in range(0, n_pool, chunk):
        s = np.asarray(scores[start:start + chunk], dtype=np.float64)
        if probabilistic:
            p = np.clip(s, 1e-12, 1 - 1e-12)
            s = np.log(p) - np.log1p(-p)
        keys = s / temperature + rng.gumbel(size=len(s))
        i = np.arange(start, start + len(s), dtype=np.int64)
        best_s, best_i = _best(np.concatenate([best_s, keys]), np.concatenate([best_i, i]), n)
    return best_i[np.lexsort((best_i, -best_s))]


def _best(s: np.ndarray, i: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of (score, position) pairs: highest score, then earliest position."""
    if len(s) <= k:
        return s, i
    order = np.lexsort((i, -s))[:k]
    return s[order], i[order]
