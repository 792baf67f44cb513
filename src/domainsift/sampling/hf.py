"""Hugging Face ``Trainer`` integration: :class:`DomainTrainer` draws its training
batches from a :class:`DomainSampler` and lets the sampler's policy re-weight the
domains every ``session_steps`` optimizer steps; checkpoints carry the sampler's
state, so ``train(resume_from_checkpoint=...)`` replays exactly the batches of an
uninterrupted run.

    trainer = DomainTrainer(model=model, args=TrainingArguments(..., max_steps=2000),
                            train_dataset=train, data_collator=collator,
                            domain_sampler=DomainSampler(labels, batch_size=32, policy=MDAC()),
                            dev_sets={"EMEA": dev_emea, "Tanzil": dev_tanzil},
                            target={"Tanzil": 1.0}, session_steps=200)
    trainer.train()       # writes OUTPUT_DIR/sampling.json (the weight history)

One process only (no distributed training): every rank would otherwise learn its
own weights.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from .._internal.errors import DomainsiftError, missing_extra
from .history import save_history
from .policy import Learner, mixture_loss

try:
    import torch
    from torch.utils.data import DataLoader
    from transformers import Trainer, TrainerCallback
except ImportError as e:  # pragma: no cover
    raise missing_extra("transformers", "hf") from e

STATE_FILE = "domain_sampler.json"


def _unwrap(optimizer):
    """accelerate wraps the optimizer; the simulated steps need the torch one."""
    while isinstance(getattr(optimizer, "optimizer", None), torch.optim.Optimizer):
        optimizer = optimizer.optimizer
    return optimizer


class _SessionCallback(TrainerCallback):
    def __init__(self, trainer: "DomainTrainer"):
        self.trainer = trainer

    def on_step_end(self, args, state, control, **kw):
        t = self.trainer
        if state.global_step % t.session_steps == 0 and state.global_step < state.max_steps:
            t.update_weights()
        return control

    def on_save(self, args, state, control, **kw):
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if folder.is_dir():
            from .._internal.atomic import save_json
            save_json(folder / STATE_FILE, self.trainer.domain_sampler.state_dict())
        return control

    def on_train_end(self, args, state, control, **kw):
        if state.is_world_process_zero:
            from .. import rundir
            save_history(self.trainer.domain_sampler, rundir.path(args.output_dir, rundir.SAMPLING))
        return control


class DomainTrainer(Trainer):
    """A ``transformers.Trainer`` whose training batches come from ``domain_sampler``.

    Extra arguments
    ---------------
    domain_sampler : a :class:`DomainSampler` over ``train_dataset`` (one domain label per
        example); its ``num_batches`` is set to ``max_steps × gradient_accumulation_steps``.
    dev_sets : domain name -> dev dataset, for the policies that measure progress (MDAC, DDS).
    target : domain name -> weight, the target mixture λᵗ over ``dev_sets`` (default uniform).
    session_steps : optimizer steps between two updates of the weights.
    """

    def __init__(self, *args, domain_sampler, dev_sets: Mapping[str, Any] | None = None,
                 target: Mapping[str, float] | None = None, session_steps: int = 100, **kwargs):
        super().__init__(*args, **kwargs)
        if self.args.world_size > 1:
            raise DomainsiftError("DomainTrainer runs in one process (the sampling weights are not "
                                  "synchronised across ranks)")
        if self.args.max_steps is None or self.args.max_steps <= 0:
            raise DomainsiftError("DomainTrainer needs TrainingArguments(max_steps=N): the sampler draws "
                                  "batches, not epochs")
        if not isinstance(session_steps, int) or session_steps < 1:
            raise DomainsiftError(f"DomainTrainer: session_steps must be an integer >= 1, got {session_steps!r}")
        if self.train_dataset is not None and len(self.train_dataset) != int(domain_sampler.sizes.sum()):
            raise DomainsiftError(f"DomainTrainer: the sampler has {int(domain_sampler.sizes.sum())} domain "
                                  f"labels for {len(self.train_dataset)} training examples")
        self.domain_sampler = domain_sampler
        domain_sampler.num_batches = self.args.max_steps * self.args.gradient_accumulation_steps
        self.session_steps = session_steps
        self.dev_sets = dict(dev_sets or {})
        self.target = target
        self._train_view = None
        self._dev_views: dict = {}
        self.add_callback(_SessionCallback(self))

    # ---- data ------------------------------------------------------------------------
    def _prepared(self, dataset, description: str):
        """The dataset without the columns the model does not take, and the collator."""
        collator = self.data_collator
        try:
            import datasets
            is_ds = isinstance(dataset, datasets.Dataset)
        except ImportError:
            is_ds = False
        if is_ds:
            dataset = self._remove_unused_columns(dataset, description=description)
        else:
            collator = self._get_collator_with_removed_columns(self.data_collator, description=description)
        return dataset, collator

    def get_train_dataloader(self) -> DataLoader:
        if self.train_dataset is None:
            raise DomainsiftError("DomainTrainer: no train_dataset")
        dataset, collator = self._prepared(self.train_dataset, "training")
        self._train_view = (dataset, collator)
        loader = DataLoader(dataset, batch_sampler=self.domain_sampler, collate_fn=collator,
                            num_workers=self.args.dataloader_num_workers,
                            pin_memory=self.args.dataloader_pin_memory)
        return self.accelerator.prepare(loader)

    def _batch_loss(self, model, dataset, collator, indices) -> torch.Tensor:
        inputs = self._prepare_inputs(collator([dataset[int(i)] for i in indices]))
        return self.compute_loss(model, inputs)

    def _dev_loss_of(self, model, name: str) -> torch.Tensor:
        if name not in self._dev_views:      # prepared once: the policies evaluate it at every update
            self._dev_views[name] = self._prepared(self.dev_sets[name], "evaluation")
        dataset, collator = self._dev_views[name]
        bs = self.args.per_device_eval_batch_size
        total, n = 0.0, 0
        for start in range(0, len(dataset), bs):
            idx = range(start, min(start + bs, len(dataset)))
            total = total + self._batch_loss(model, dataset, collator, idx) * len(idx)
            n += len(idx)
        return total / max(n, 1)

    def learner(self) -> Learner:
        """What the policy measures the model through: training batches by index, the
        target dev loss over ``dev_sets``, the optimizer."""
        if self._train_view is None:
            self._train_view = self._prepared(self.train_dataset, "training")
        dataset, collator = self._train_view
        dev_loss = (mixture_loss({n: n for n in self.dev_sets}, self.target, self._dev_loss_of)
                    if self.dev_sets else _no_dev)
        return Learner(model=self.model,
                       train_loss=lambda m, idx: self._batch_loss(m, dataset, collator, idx),
                       dev_loss=dev_loss, optimizer=_unwrap(self.optimizer),
                       max_grad_norm=self.args.max_grad_norm or None)

    def update_weights(self):
        return self.domain_sampler.update(self.learner())

    # ---- resuming --------------------------------------------------------------------
    def train(self, resume_from_checkpoint=None, *args, **kwargs):
        if resume_from_checkpoint:
            folder = resume_from_checkpoint
            if folder is True:
                from transformers.trainer_utils import get_last_checkpoint
                folder = get_last_checkpoint(self.args.output_dir)
                if folder is None:
                    raise DomainsiftError(f"no checkpoint in {self.args.output_dir} to resume from")
            state_file = Path(folder) / STATE_FILE
            if not state_file.exists():
                raise DomainsiftError(f"{state_file}: missing (the checkpoint was not written by DomainTrainer)")
            with open(state_file, encoding="utf-8") as fh:
                self.domain_sampler.load_state_dict(json.load(fh))
            # the Trainer replays the pass from its start and skips what it trained on:
            # batch i is a function of (seed, i, schedule), so the replay is exact
            self.domain_sampler.rewind()
        return super().train(resume_from_checkpoint, *args, **kwargs)


def _no_dev(model):
    raise DomainsiftError("this sampling policy needs dev sets: DomainTrainer(dev_sets={name: dataset, ...})")


__all__ = ["DomainTrainer", "STATE_FILE"]
