"""MDAC, the Multi-Domain Automated Curriculum (paper 004, §3–4.4).

After each training session: for every domain d, copy the model (and the
optimizer's state), take k training steps on batches of d alone (clipped as
training clips: ``Learner.max_grad_norm``), and measure how
much the target dev loss dropped: ``R(d) = J(θ_t) − J(θ_{t+k}^d)``. ψ then moves
along the gradient of the expected reward; λ(ψ) is the spherical softmax
``ψ_d^β / Σ ψ_i^β`` (β = 2), which avoids softmax's rich-get-richer drift.

Cost: k·n_d extra training steps and n_d + 1 dev evaluations per session, about
``1 + k·n_d / S`` times plain training for sessions of S steps (paper 004, §4.4).
"""

from __future__ import annotations

import numpy as np

from .._internal.errors import DomainsiftError
from ._learned import LearnedPolicy
from .policy import Learner, clone_for_simulation, finite_number, spherical


class MDAC(LearnedPolicy):
    """Parameters (paper 004's settings as defaults)
    ----------
    k : simulated training steps per domain (10).
    lr_data : learning rate of ψ (0.001).
    iterations : gradient iterations per update (100; the paper takes 20 with
        automatic clusters to keep the distribution from collapsing).
    beta : exponent of the spherical softmax (2).
    init_alpha : the starting mixture λ_α (0 = uniform, the paper's best start).
    """

    name = "mdac"

    def __init__(self, k: int = 10, lr_data: float = 0.001, iterations: int = 100,
                 beta: float = 2.0, init_alpha: float = 0.0):
        super().__init__(lr_data, iterations, init_alpha)
        if not isinstance(k, int) or k < 1:
            raise DomainsiftError(f"MDAC: k must be an integer >= 1, got {k!r}")
        self.k = k
        self.beta = finite_number("MDAC", "beta", beta)

    def _weights(self, psi):
        return spherical(psi, self.beta)

    def _psi_for(self, weights: np.ndarray) -> np.ndarray:
        return np.asarray(weights, dtype=np.float64) ** (1.0 / self.beta)

    def rewards(self, learner: Learner) -> tuple[np.ndarray, dict]:
        import torch
        if learner.optimizer is None:
            raise DomainsiftError("MDAC needs the training optimizer (Learner.optimizer): its simulated "
                                  "steps continue from a copy of its state")
        model = learner.model
        was_training = model.training
        model.eval()
        with torch.no_grad():
            j0 = float(learner.dev_loss(model))
        model.train(was_training)
        gains = np.zeros(self.sampler.n_domains)
        for d in range(self.sampler.n_domains):
            twin, opt = clone_for_simulation(model, learner.optimizer)
            twin.train()
            for j in range(self.k):
                opt.zero_grad()
                learner.train_loss(twin, self.sampler.domain_batch(d, self.updates, j)).backward()
                if learner.max_grad_norm is not None:   # as training clips
                    torch.nn.utils.clip_grad_norm_(twin.parameters(), learner.max_grad_norm)
                opt.step()
            twin.eval()
            with torch.no_grad():
                gains[d] = j0 - float(learner.dev_loss(twin))
            del twin, opt
        return gains, {"dev_loss": j0}

    def params(self) -> dict:
        return {"k": self.k, "lr_data": self.lr_data, "iterations": self.iterations, "beta": self.beta,
                "init_alpha": self.init_alpha}
