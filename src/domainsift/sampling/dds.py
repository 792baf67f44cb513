"""DDS, Differentiable Data Selection (Wang et al. 2020, as compared in paper 004), with the
update rule and settings of its original code (``cindyxinyiwang/multiDDS``, the language-level
``base`` data actor), as paper 004 re-implemented it "without any change".

After each training session the reward of domain d is the cosine similarity between the
gradient of the training loss on a batch of d and the gradient of the target dev loss, at the
current parameters. The policy is a softmax over logits ψ (the original's ``BaseActor``); the
update takes ``iterations`` (200) steps of Adam (lr 1e-4, PyTorch's defaults otherwise) on
``-Σ_d R(d) log λ(d; ψ)``, and the Adam state is kept from one update to the next, as the
original's ``data_optimizer`` is. Adam makes each step about lr whatever the rewards' scale, so
200 steps move a logit by up to 0.02 an update; the original updates every 200-1,000 training
steps over tens of epochs, where the mixture turns bimodal (paper 004, Figure 2a).

Cost: n_d + 1 gradient computations per update (no simulated steps).

Departures, stated: the original starts from zero logits (uniform) or pre-trains ψ toward the
data-size distribution; here ψ starts at log λ_α (``init_alpha``), which is uniform at 0 and the
data sizes at 1, exactly. The original's multilingual reward averages the cosine over several
dev sets; here there is one dev loss (the target's).
"""

from __future__ import annotations

import numpy as np

from .._internal.errors import DomainsiftError
from ._learned import LearnedPolicy
from .policy import Learner, softmax


class DDS(LearnedPolicy):
    """Parameters
    ----------
    lr_data : Adam's learning rate on ψ (the original's ``--data-actor-lr``, 1e-4).
    iterations : Adam steps per update (the original's ``--data-actor-optim-step``, 200).
    batches : batches of each domain whose gradients are summed for its reward (1).
    init_alpha : the starting mixture λ_α (0 = uniform).
    """

    name = "dds"

    def __init__(self, lr_data: float = 1e-4, iterations: int = 200, batches: int = 1,
                 init_alpha: float = 0.0):
        super().__init__(lr_data, iterations, init_alpha)
        if not isinstance(batches, int) or isinstance(batches, bool) or batches < 1:
            raise DomainsiftError(f"DDS: batches must be an integer >= 1, got {batches!r}")
        self.batches = batches
        self.adam: dict | None = None   # Adam's moments and step count, carried across updates

    def _weights(self, psi):
        return softmax(psi)

    def _psi_for(self, weights: np.ndarray) -> np.ndarray:
        w = np.asarray(weights, dtype=np.float64)
        return np.log(np.maximum(w, 1e-12))

    def initial_weights(self, sizes) -> np.ndarray:
        self.adam = None
        return super().initial_weights(sizes)

    def _step(self, psi: np.ndarray, rewards: np.ndarray) -> np.ndarray:
        import torch
        p = torch.tensor(np.asarray(psi, dtype=np.float64), requires_grad=True)
        r = torch.tensor(np.asarray(rewards, dtype=np.float64))
        opt = torch.optim.Adam([p], lr=self.lr_data)
        if self.adam is not None:
            opt.load_state_dict({"state": {0: {"step": torch.tensor(float(self.adam["step"])),
                                               "exp_avg": torch.tensor(self.adam["exp_avg"], dtype=torch.float64),
                                               "exp_avg_sq": torch.tensor(self.adam["exp_avg_sq"],
                                                                          dtype=torch.float64)}},
                                 "param_groups": opt.state_dict()["param_groups"]})
        for _ in range(self.iterations):
            opt.zero_grad()
            (-(r * torch.log_softmax(p, dim=0)).sum()).backward()
            opt.step()
        s = opt.state[p]
        self.adam = {"step": int(s["step"]), "exp_avg": s["exp_avg"].tolist(), "exp_avg_sq": s["exp_avg_sq"].tolist()}
        return p.detach().numpy().copy()

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
                "init_alpha": self.init_alpha, "update": "adam-log-softmax (multiDDS)"}

    def state_dict(self) -> dict:
        return {**super().state_dict(), "adam": self.adam}

    def load_state_dict(self, state: dict) -> None:
        adam = state.get("adam") if isinstance(state, dict) else None
        n = self.sampler.n_domains
        if adam is not None:   # checked before anything is taken, so a damaged state changes nothing
            ok = (isinstance(adam, dict) and isinstance(adam.get("step"), int)
                  and all(np.shape(adam.get(k)) == (n,) and np.all(np.isfinite(adam.get(k)))
                          for k in ("exp_avg", "exp_avg_sq")))
            if not ok:
                raise DomainsiftError(f"sampler state: dds adam must hold step and {n} exp_avg / exp_avg_sq "
                                      f"numbers, got {adam!r}")
        elif isinstance(state, dict) and state.get("updates"):
            raise DomainsiftError("sampler state: dds has updates but no adam state (saved before 0.9.0's "
                                  "published update rule); start the run again")
        super().load_state_dict(state)
        self.adam = adam
