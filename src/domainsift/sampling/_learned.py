"""The part MDAC and DDS share: ψ, its map onto the simplex, the update counter,
and the REINFORCE step after the rewards are measured."""

from __future__ import annotations

import contextlib
import zlib

import numpy as np

from .._internal.errors import DomainsiftError
from .policy import Learner, Policy, as_list, check_policy_state, finite_number, mixed_weights, reinforce_step


class LearnedPolicy(Policy):
    name = "learned"

    def __init__(self, lr_data: float, iterations: int, init_alpha: float):
        owner = type(self).__name__
        self.lr_data = finite_number(owner, "lr_data", lr_data)
        if not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < 1:
            raise DomainsiftError(f"{owner}: iterations must be an integer >= 1, got {iterations!r}")
        self.iterations = iterations
        self.init_alpha = finite_number(owner, "init_alpha", init_alpha, strict=False)
        self.psi: np.ndarray | None = None
        self.updates = 0

    # ψ <-> λ, one pair per policy
    def _weights(self, psi):
        raise NotImplementedError

    def _psi_for(self, weights: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def rewards(self, learner: Learner) -> tuple[np.ndarray, dict]:
        raise NotImplementedError

    def initial_weights(self, sizes) -> np.ndarray:
        w = mixed_weights(sizes, self.init_alpha)
        self.psi = self._psi_for(w)
        return self.lambda_()

    def lambda_(self) -> np.ndarray:
        import torch
        return self._weights(torch.tensor(self.psi, dtype=torch.float64)).numpy()

    def update(self, learner: Learner) -> tuple[np.ndarray, dict]:
        if learner is None:
            raise DomainsiftError(f"{self.name}: update needs a Learner (model, train_loss, dev_loss)")
        with self._own_rng(learner.model):
            r, info = self.rewards(learner)
        self.psi = self._step(self.psi, r)
        self.updates += 1
        return self.lambda_(), {"rewards": as_list(r), **info}

    def _step(self, psi: np.ndarray, rewards: np.ndarray) -> np.ndarray:
        return reinforce_step(psi, rewards, self._weights, self.lr_data, self.iterations)

    @contextlib.contextmanager
    def _own_rng(self, model):
        """Dropout in the simulated steps draws from a generator seeded by (seed, update),
        and the caller's global torch generator is left as it was."""
        import torch
        devices = sorted({p.device.index or 0 for p in model.parameters() if p.is_cuda})
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(zlib.crc32(f"{self.sampler.seed}:{self.name}:{self.updates}".encode()))
            yield

    def state_dict(self) -> dict:
        return {"name": self.name, "psi": as_list(self.psi), "updates": self.updates, **self.params()}

    def load_state_dict(self, state: dict) -> None:
        check_policy_state(self, state)
        psi, updates = state.get("psi"), state.get("updates")
        try:
            psi = np.asarray(psi, dtype=np.float64)
        except (TypeError, ValueError):
            psi = None
        n = self.sampler.n_domains
        if psi is None or psi.shape != (n,) or not np.all(np.isfinite(psi)) or not np.any(psi != 0):
            raise DomainsiftError(f"sampler state: {self.name} psi must be {n} finite numbers, not all 0, "
                                  f"got {state.get('psi')!r}")
        if not isinstance(updates, int) or isinstance(updates, bool) or updates < 0:
            raise DomainsiftError(f"sampler state: {self.name} updates must be an integer >= 0, got {updates!r}")
        self.psi, self.updates = psi, updates
