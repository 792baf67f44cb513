"""Paper 004's domain sampling driving a translation model's training (``train_nmt(..., sampling=...)``).

Without it, an epoch is every training pair once, in token-sized batches. With a :class:`Sampling`, an
epoch is as many batches of ``batch_size`` pairs as cover the pairs once, each batch drawn by
:class:`~domainsift.sampling.DomainSampler` from the mixture of domains in force, and every
``update_every`` batches the policy (:class:`~domainsift.sampling.MixedAlpha`, ``MDAC``, ``DDS``) sets new
weights from the model's progress on the per-domain dev bitexts (``dev``, mixed by ``target``). The
sampler's state is in each epoch's checkpoint, so a killed training resumes to the same weights;
``nmt.json`` records the weights' history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .._internal.errors import DomainsiftError


@dataclass(frozen=True)
class Sampling:
    """``domains``: one label per training pair; ``policy``: a sampling policy (``MixedAlpha(1.0)``, the
    natural proportions, when None); ``batch_size``: pairs a batch; ``update_every``: batches between the
    policy's updates; ``dev``: ``{domain: Bitext}``, the dev bitexts a learned policy's reward is measured on
    (MDAC and DDS need them); ``target``: the weights of that dev mixture (None: uniform)."""

    domains: tuple
    policy: Any = None
    batch_size: int = 32
    update_every: int = 100
    dev: Mapping[str, Any] | None = None
    target: Mapping[str, float] | None = None

    def __post_init__(self):
        object.__setattr__(self, "domains", tuple(str(d) for d in self.domains))
        if self.policy is None:
            from ..sampling import MixedAlpha
            object.__setattr__(self, "policy", MixedAlpha(1.0))

    def check(self, n_train: int) -> "Sampling":
        if len(self.domains) != n_train:
            raise DomainsiftError(f"sampling: {len(self.domains)} domain labels for {n_train} training pairs; give "
                                  "one label per pair")
        for name, v in (("batch_size", self.batch_size), ("update_every", self.update_every)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise DomainsiftError(f"sampling: {name} must be a positive integer, got {v!r}")
        if self.policy.name != "mixed" and not self.dev:
            raise DomainsiftError(f"sampling: the {self.policy.name} policy learns from dev bitexts; give dev="
                                  "{domain: Bitext}")
        if self.dev:
            empty = sorted(k for k, b in self.dev.items() if not len(b))
            if empty:
                raise DomainsiftError(f"sampling: the dev bitext of {empty[0]!r} has no pairs")
        return self

    def describe(self) -> dict:
        """What the training's result depends on (identity, signature, ``nmt.json``)."""
        from collections import Counter
        return {"policy": self.policy.name, **self.policy.params(), "batch_size": self.batch_size,
                "update_every": self.update_every, "domains": dict(sorted(Counter(self.domains).items())),
                "target": dict(self.target) if self.target is not None else None,
                "dev": {k: len(v) for k, v in sorted((self.dev or {}).items())}}


@dataclass(frozen=True)
class Hooks:
    """What the sampled training takes from the trainer: ``encode(lines)`` (pieces a line),
    ``loss_of(torch, model, batch, smoothing)``, ``collate(torch, src, tgt, idx)`` (a batch of index
    arrays made tensors) and ``dev_batches(src, tgt)`` (the batches of index arrays a dev set is cut into)."""

    encode: Callable
    loss_of: Callable
    collate: Callable
    dev_batches: Callable


def start(torch, sampling: Sampling, model, opt, src, tgt, hooks: Hooks, seed: int, clip: float):
    """The sampler (one pass: the batches that cover the pairs once) and the learner its policy sees."""
    import copy
    import math
    encode, loss_of, collate, dev_batches = hooks.encode, hooks.loss_of, hooks.collate, hooks.dev_batches

    from ..sampling import DomainSampler, Learner, mixture_loss
    policy = copy.deepcopy(sampling.policy)  # the caller's policy object is never trained
    sampler = DomainSampler(sampling.domains, sampling.batch_size, policy,
                            num_batches=math.ceil(len(src) / sampling.batch_size), seed=seed)

    def train_loss(m, idx):
        return loss_of(torch, m, collate(torch, src, tgt, idx), 0.0)

    dev_sets = {}
    for name, b in (sampling.dev or {}).items():
        ds, dt = encode(b.src), encode(b.tgt)
        dev_sets[name] = [collate(torch, ds, dt, idx) for idx in dev_batches(ds, dt)]

    def dev_batches_loss(m, batches):  # the mean token cross-entropy, differentiable (DDS takes its gradient)
        total, count = 0.0, 0
        for batch in batches:
            n = int((batch["labels"] != -100).sum())
            total = total + loss_of(torch, m, batch, 0.0) * n
            count += n
        return total / max(1, count)

    dev_loss = mixture_loss(dev_sets, sampling.target, dev_batches_loss) if dev_sets else None
    learner = Learner(model, train_loss=train_loss, dev_loss=dev_loss, optimizer=opt, max_grad_norm=clip)
    return sampler, learner
