"""Mixed-α: a fixed temperature mixture (paper 004, eq. 2)."""

from __future__ import annotations

import numpy as np

from .policy import Learner, Policy, finite_number, mixed_weights


class MixedAlpha(Policy):
    """Weight of a domain ∝ (its share of the data)^α, fixed for the whole training:
    α = 0 is uniform over domains, α = 1 the natural proportions, between the two a
    temperature. :meth:`update` keeps the weights (the model is not looked at)."""

    name = "mixed"

    def __init__(self, alpha: float = 1.0):
        self.alpha = finite_number("MixedAlpha", "alpha", alpha, strict=False)

    def initial_weights(self, sizes) -> np.ndarray:
        return mixed_weights(sizes, self.alpha)

    def update(self, learner: Learner | None = None) -> tuple[np.ndarray, dict]:
        return mixed_weights(self.sampler.sizes, self.alpha), {}

    def params(self) -> dict:
        return {"alpha": self.alpha}

