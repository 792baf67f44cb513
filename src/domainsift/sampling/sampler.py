"""The domain-weighted batch sampler.

Every batch is drawn i.i.d. from the mixture of domains in force: each example's
domain from the weights λ, then an example of that domain uniformly (with
replacement: the paper's ``x ~ D̂_d``). Batch ``i`` is a pure function of
``(seed, i, the weights in force at i)``: its generator is seeded with
``SeedSequence([seed, i])``. The sampler's whole state is therefore the seed, the
position and the schedule of weights (from which batch each set of weights held),
so a resumed sampler draws exactly the batches of an uninterrupted one, and a
trainer that replays an epoch from its start (Hugging Face's ``Trainer`` skips the
batches it already saw) gets the same batches again.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from .._internal.errors import DomainsiftError, missing_extra

try:
    from torch.utils.data import Sampler
except ImportError as e:  # pragma: no cover - the hf extra is part of every install we test
    raise missing_extra("torch", "hf") from e

STATE_VERSION = 1
_TRAIN, _SIM = 0, 1


def _normalise(w, n: int, what: str) -> np.ndarray:
    try:
        w = np.asarray(w, dtype=np.float64)
    except (TypeError, ValueError):
        raise DomainsiftError(f"{what}: weights must be {n} numbers, got {w!r}") from None
    if w.shape != (n,):
        raise DomainsiftError(f"{what}: {w.shape[0] if w.ndim == 1 else w.shape} weights for {n} domains")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise DomainsiftError(f"{what}: weights must be finite, >= 0 and not all 0, got {w.tolist()}")
    return w / w.sum()


class DomainSampler(Sampler):
    """Batches of dataset indices drawn from a weighted mixture of domains.

    Parameters
    ----------
    domains : one label per example of the dataset (gold domain names, or the
        cluster ids that ``domainsift cluster`` writes; see :func:`read_domains`).
    batch_size : examples per batch.
    policy : how the weights start and change (:class:`MixedAlpha`, :class:`MDAC`,
        :class:`DDS`); default ``MixedAlpha(1.0)``, the natural proportions.
    num_batches : batches per pass (``len(sampler)``); None = draw forever.
    seed : the only source of randomness.

    Use as ``DataLoader(dataset, batch_sampler=sampler)``; between training
    sessions call :meth:`update` with a :class:`Learner` so that the policy
    re-weights the domains.
    """

    def __init__(self, domains: Sequence[Any], batch_size: int, policy=None,
                 num_batches: int | None = None, seed: int = 0):
        labels = list(domains)
        if not labels:
            raise DomainsiftError("DomainSampler: no examples (the domain label list is empty)")
        if batch_size < 1:
            raise DomainsiftError(f"DomainSampler: batch_size must be >= 1, got {batch_size}")
        if num_batches is not None and num_batches < 0:
            raise DomainsiftError(f"DomainSampler: num_batches must be >= 0, got {num_batches}")
        self.names = sorted({str(x) for x in labels}, key=_natural)
        code = {name: i for i, name in enumerate(self.names)}
        codes = np.fromiter((code[str(x)] for x in labels), dtype=np.int64, count=len(labels))
        self.members = [np.flatnonzero(codes == d) for d in range(len(self.names))]
        self.sizes = np.array([len(m) for m in self.members], dtype=np.int64)
        self.batch_size = int(batch_size)
        self.num_batches = num_batches
        self.seed = int(seed)
        if policy is None:
            from .mixed import MixedAlpha
            policy = MixedAlpha(1.0)
        self.policy = policy
        self.position = 0
        self.history: list[dict] = []
        self.policy.bind(self)
        self._set(self.policy.initial_weights(self.sizes), info={"reason": "initial"})

    # ---- weights -------------------------------------------------------------------
    @property
    def n_domains(self) -> int:
        return len(self.names)

    @property
    def weights(self) -> np.ndarray:
        """The weights now in force (for the next batch drawn)."""
        return np.array(self.history[-1]["weights"])

    def weights_at(self, batch: int) -> np.ndarray:
        """The weights batch number ``batch`` is drawn with."""
        w = self.history[0]["weights"]
        for h in self.history:
            if h["batch"] > batch:
                break
            w = h["weights"]
        return np.asarray(w, dtype=np.float64)

    def _set(self, w, info: dict | None = None) -> None:
        w = _normalise(w, self.n_domains, f"{type(self.policy).__name__} weights")
        self.history.append({"batch": int(self.position), "weights": [float(x) for x in w], **(info or {})})

    def set_weights(self, weights, **info) -> None:
        """Set the weights by hand from the next batch on (recorded in :attr:`history`)."""
        self._set(weights, info={"reason": "set", **info})

    def update(self, learner) -> np.ndarray:
        """Ask the policy for new weights given the model's progress; they hold from the next batch."""
        w, info = self.policy.update(learner)
        self._set(w, info={"reason": self.policy.name, **info})
        return self.weights

    # ---- drawing -------------------------------------------------------------------
    def _rng(self, *key: int) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence([self.seed, *key])))

    def batch(self, i: int) -> list[int]:
        """Batch number ``i`` (a pure function of the seed, ``i`` and the weights at ``i``)."""
        rng = self._rng(_TRAIN, int(i))
        doms = rng.choice(self.n_domains, size=self.batch_size, p=self.weights_at(i))
        pos = rng.random(self.batch_size)
        return [int(self.members[d][int(p * self.sizes[d])]) for d, p in zip(doms, pos)]

    def domain_batch(self, domain: int, update: int, j: int) -> list[int]:
        """The ``j``-th batch of one domain alone, drawn for the policy's update number ``update``
        (MDAC's simulated steps, DDS's gradients); independent of the training stream."""
        rng = self._rng(_SIM, int(update), int(domain), int(j))
        m = self.members[domain]
        return [int(m[k]) for k in rng.integers(0, len(m), size=self.batch_size)]

    def __iter__(self) -> Iterator[list[int]]:
        """One pass: up to the end of the current block of ``num_batches`` batches (a
        sampler restored in the middle of a pass finishes that pass), or forever."""
        end = None if self.num_batches is None else (self.position // max(self.num_batches, 1) + 1) * self.num_batches
        while end is None or self.position < end:
            b = self.batch(self.position)
            self.position += 1
            yield b

    def __len__(self) -> int:
        if self.num_batches is None:
            raise TypeError("DomainSampler(num_batches=None) draws forever and has no length")
        return self.num_batches

    def rewind(self) -> None:
        """Start the next pass at batch 0 again, keeping the schedule of weights (a trainer
        that replays and skips the batches it already trained on then gets the same ones)."""
        self.position = 0

    # ---- state ---------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Everything needed to continue exactly: JSON-serialisable."""
        return {"version": STATE_VERSION, "seed": self.seed, "batch_size": self.batch_size,
                "names": list(self.names), "sizes": [int(s) for s in self.sizes],
                "position": int(self.position), "history": [dict(h) for h in self.history],
                "policy": self.policy.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        """Continue from ``state`` (from :meth:`state_dict`); a state that does not fit this sampler
        and policy, or is damaged, is a one-line error and leaves the sampler as it was."""
        if not isinstance(state, dict):
            raise DomainsiftError(f"sampler state must be a dict (from state_dict()), got {type(state).__name__}")
        if state.get("version") != STATE_VERSION:
            raise DomainsiftError(f"sampler state version {state.get('version')!r}; this domainsift reads {STATE_VERSION}")
        missing = [k for k in ("seed", "batch_size", "names", "sizes", "position", "history", "policy")
                   if k not in state]
        if missing:
            raise DomainsiftError(f"sampler state has no '{missing[0]}'")
        mine = {"seed": self.seed, "batch_size": self.batch_size, "names": list(self.names),
                "sizes": [int(s) for s in self.sizes]}
        for key, value in mine.items():
            if state.get(key) != value:
                raise DomainsiftError(f"sampler state does not fit this sampler: {key} is {state.get(key)!r} "
                                      f"in the state, {value!r} here")
        position = state["position"]
        if not isinstance(position, int) or isinstance(position, bool) or position < 0:
            raise DomainsiftError(f"sampler state: position must be an integer >= 0, got {position!r}")
        history = state["history"]
        if not isinstance(history, list) or not history:
            raise DomainsiftError("sampler state: history must be a non-empty list of weights")
        last = 0
        for i, h in enumerate(history):
            batch = h.get("batch") if isinstance(h, dict) else None
            if not isinstance(batch, int) or isinstance(batch, bool) or batch < last:
                raise DomainsiftError(f"sampler state: history[{i}] needs a batch number >= {last}, got {batch!r}")
            try:
                _normalise(h.get("weights"), self.n_domains, f"sampler state: history[{i}]")
            except (TypeError, ValueError):
                raise DomainsiftError(f"sampler state: history[{i}] weights must be {self.n_domains} numbers, "
                                      f"got {h.get('weights')!r}") from None
            last = batch
        self.policy.load_state_dict(state["policy"])  # checks the policy's name, parameters and state
        self.position = position
        self.history = [dict(h) for h in history]

    def signature(self) -> dict:
        from .._internal.signature import make_signature
        return make_signature(f"sampling-{self.policy.name}", seed=self.seed, batch_size=self.batch_size,
                              domains=list(self.names), sizes=[int(s) for s in self.sizes],
                              **self.policy.params())


def _natural(name: str):
    """Sort cluster ids numerically ('2' before '10'), names alphabetically."""
    return (0, int(name), "") if name.lstrip("-").isdigit() else (1, 0, name)
