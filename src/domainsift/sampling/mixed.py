"""Mixed-α: a fixed temperature mixture (paper 004, eq. 2)."""

from __future__ import annotations

import numpy as np

from ..errors import DomainsiftError
from .policy import Learner, Policy, mixed_weights


class MixedAlpha(Policy):
    """Weight of a domain ∝ (its share of the data)^α, fixed for the whole training:
    α = 0 is uniform over domains, α = 1 the natural proportions, between the two a
    temperature. :meth:`update` keeps the weights (the model is not looked at)."""

    name = "mixed"

    def __init__(self, alpha: float = 1.0):
        if not isinstance(alpha, (int, float)) or not np.isfinite(alpha) or alpha < 0:
            raise DomainsiftError(f"MixedAlpha: alpha must be a number >= 0, got {alpha!r}")
        self.alpha = float(alpha)

    def initial_weights(self, sizes) -> np.ndarray:
        return mixed_weights(sizes, self.alpha)

    def update(self, learner: Learner | None = None) -> tuple[np.ndarray, dict]:
        return mixed_weights(self.sampler.sizes, self.alpha), {}

    def params(self) -> dict:
        return {"alpha": self.alpha}

    def state_dict(self) -> dict:
        return {"name": self.name, "alpha": self.alpha}
