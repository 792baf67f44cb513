"""Domain-aware training (paper 004): a domain-weighted batch sampler whose weights a
policy updates between training sessions.

- :class:`DomainSampler` — a ``torch.utils.data.Sampler`` of batches (use it as
  ``DataLoader(dataset, batch_sampler=sampler)``) with ``state_dict()`` /
  ``load_state_dict()``: a resumed run draws exactly the batches of an uninterrupted one;
- policies: :class:`MixedAlpha` (fixed temperature mixtures), :class:`MDAC` (simulated
  steps per domain, REINFORCE, spherical softmax), :class:`DDS` (gradient cosine, softmax);
- :class:`Learner` / :func:`mixture_loss` — how a policy sees the model and the target dev loss;
- :func:`read_domains` — gold labels from a file or the clusters of ``domainsift cluster``;
- :func:`save_history`, :func:`plot_weights` — the weight history (``sampling.json``) and its plot;
- ``domainsift.sampling.hf.DomainTrainer`` — the Hugging Face ``Trainer`` integration.

A plain PyTorch loop::

    sampler = DomainSampler(labels, batch_size=32, policy=MDAC(), seed=0)
    learner = Learner(model, train_loss=lambda m, idx: loss_of(m, idx),
                      dev_loss=mixture_loss(dev_batches, {"Tanzil": 1.0}, loss_of_batch),
                      optimizer=opt)
    for step, idx in enumerate(sampler, 1):
        opt.zero_grad(); loss_of(model, idx).backward(); opt.step()
        if step % 200 == 0:
            sampler.update(learner)          # new weights from the next batch on
"""

from .dds import DDS
from .history import history_record, plot_weights, save_history
from .labels import read_domains
from .mdac import MDAC
from .mixed import MixedAlpha
from .policy import Learner, Policy, mixed_weights, mixture_loss
from .sampler import DomainSampler

POLICIES = {"mixed": MixedAlpha, "mdac": MDAC, "dds": DDS}

__all__ = ["DomainSampler", "MixedAlpha", "MDAC", "DDS", "Learner", "Policy", "mixture_loss",
           "mixed_weights", "read_domains", "save_history", "history_record", "plot_weights", "POLICIES"]
