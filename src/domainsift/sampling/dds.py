"""DDS, Differentiable Data Selection (Wang et al. 2020, as compared in paper 004).

After each training session the reward of domain d is the cosine similarity
between the gradient of the training loss on a batch of d and the gradient of
the target dev loss, at the current parameters; λ(ψ) is a softmax. Cost: n_d + 1
gradient computations per session (no simulated steps).
"""

from __future__ import annotations

import numpy as np

from ..errors import DomainsiftError
from ._learned import LearnedPolicy
from .policy import Learner, softmax


class DDS(LearnedPolicy):
    """Parameters
    ----------
    lr_data : learning rate of ψ (0.001, as MDAC's).
    iterations : gradient iterations per update (100).
    batches : batches of each domain whose gradients are averaged for its reward (1).
    init_alpha : the starting mixture λ_α (0 = uniform).
    """

    name = "dds"

    def __init__(self, lr_data: float = 0.001, iterations: int = 100, batches: int = 1,
                 init_alpha: float = 0.0):
        super().__init__(lr_data, iterations, init_alpha)
        if not isinstance(batches, int) or batches < 1:
            raise DomainsiftError(f"DDS: batches must be an integer >= 1, got {batches!r}")
        self.batches = batches

    def _weights(self, psi):
        return softmax(psi)

    def _psi_for(self, weights: np.ndarray) -> np.ndarray:
        w = np.asarray(weights, dtype=np.float64)
        return np.log(np.maximum(w, 1e-12))

    def rewards(self, learner: Learner) -> tuple[np.ndarray, dict]:
        import torch
        model = learner.model
        params = [p for p in model.parameters() if p.requires_grad]
        if not params:
            raise DomainsiftError("DDS: the model has no trainable parameters")

        def flat_grad(loss) -> torch.Tensor:
            grads = torch.autograd.grad(loss, params, allow_unused=True)
            return torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1)
                              for g, p in zip(grads, params)])

        was_training = model.training
        model.eval()   # dropout off: the cosines depend on the parameters and the data alone
        try:
            dev = learner.dev_loss(model)
            g_dev = flat_grad(dev)
            cos = np.zeros(self.sampler.n_domains)
            for d in range(self.sampler.n_domains):
                g = sum(flat_grad(learner.train_loss(model, self.sampler.domain_batch(d, self.updates, j)))
                        for j in range(self.batches))
                cos[d] = float(torch.nn.functional.cosine_similarity(g, g_dev, dim=0))
        finally:
            model.train(was_training)
        return cos, {"dev_loss": float(dev.detach())}

    def params(self) -> dict:
        return {"lr_data": self.lr_data, "iterations": self.iterations, "batches": self.batches,
                "init_alpha": self.init_alpha}
