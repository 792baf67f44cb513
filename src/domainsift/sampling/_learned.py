"""The part MDAC and DDS share: ψ, its map onto the simplex, the update counter,
and the REINFORCE step after the rewards are measured."""

from __future__ import annotations

import contextlib
import zlib

import numpy as np

from ..errors import DomainsiftError
from .policy import Learner, Policy, as_list, mixed_weights, reinforce_step


class LearnedPolicy(Policy):
    name = "learned"

    def __init__(self, lr_data: float, iterations: int, init_alpha: float):
        for key, value in (("lr_data", lr_data), ("iterations", iterations)):
            if not isinstance(value, (int, float)) or value <= 0:
                raise DomainsiftError(f"{type(self).__name__}: {key} must be > 0, got {value!r}")
        if not isinstance(init_alpha, (int, float)) or init_alpha < 0:
            raise DomainsiftError(f"{type(self).__name__}: init_alpha must be >= 0, got {init_alpha!r}")
        self.lr_data = float(lr_data)
        self.iterations = int(iterations)
        self.init_alpha = float(init_alpha)
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
        self.psi = np.asarray(state["psi"], dtype=np.float64)
        self.updates = int(state["updates"])
