"""The fine-tuning loop: a pretrained encoder and a linear head trained as a binary classifier.

One unit that Domain-Finetune (and any later classifier over an encoder) uses:
:class:`EncoderClassifier` holds a transformers encoder, mean pooling (through
:meth:`~domainsift.embed.transformers.TransformersEmbedder.pool`, the same path as plain
embedding) and a linear head; :func:`train_classifier` runs AdamW with a linear
warm-up/decay schedule, gradient clipping and length-bucketed batches over the
examples that ``epoch_data(epoch)`` supplies (so each epoch may draw fresh negatives).
Randomness comes from the caller's generator and a seeded, forked torch state:
the process's global torch RNG is left as it was.

The loop asks of the model only what :class:`EncoderClassifier` provides: ``torch``,
``device``, ``new_head()`` (a fresh head from the seeded state), ``param_groups(cfg)``
(each trained module with its learning rate), ``forward(examples) -> logits`` and
``train(flag)``; a classifier over frozen vectors (cross-lingual selection) provides the same.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np


def batches(texts: Sequence[str], batch_size: int, rng: np.random.Generator,
            bucket: int = 0) -> list[np.ndarray]:
    """One epoch's mini-batches of indices into ``texts``, in a seeded random order.

    ``bucket=k > 0`` shuffles, cuts the order into windows of ``k`` batches, sorts each
    window by text length and shuffles the resulting batches: batches hold sentences of
    similar length, so far less padding is computed.
    """
    perm = rng.permutation(len(texts))
    if bucket <= 0:
        return [perm[i:i + batch_size] for i in range(0, len(perm), batch_size)]
    out = []
    window = batch_size * bucket
    for w in range(0, len(perm), window):
        chunk = perm[w:w + window]
        chunk = chunk[np.argsort([len(texts[i]) for i in chunk], kind="stable")]
        out += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [out[i] for i in rng.permutation(len(out))]


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 10
    lr: float = 2e-5
    head_lr: float = 1e-3
    batch_size: int = 16
    bucket: int = 20
    warmup: float = 0.1
    weight_decay: float = 0.01
    clip: float = 1.0
    seed: int = 0
    progress: bool = True


class EncoderClassifier:
    """A transformers encoder with mean pooling and a linear head; logits through :meth:`forward`,
    probabilities through :meth:`predict` (the encoding path of plain embedding, plus the head)."""

    def __init__(self, model_path: str, max_length: int = 128, device: str | None = None,
                 score_batch_size: int = 128, backend: str = "torch", outputs: int = 1):
        from ..embed.transformers import _torch, load_tokenizer_and_model, resolve_device
        self.torch = _torch()
        self.device = resolve_device(device)
        self.tokenizer, self.encoder = load_tokenizer_and_model(model_path)
        self.max_length = max_length
        self.score_batch_size = score_batch_size
        self.backend = backend  # how predict() runs the trained encoder (an ONNX backend exports it once)
        self.outputs = outputs  # 1: a binary classifier; k: k one-against-the-rest heads over one encoder
        self.head = None
        self._scorer = None

    def new_head(self) -> None:
        """A fresh linear head (initialised from torch's current random state)."""
        torch = self.torch
        hidden = getattr(self.encoder.config, "hidden_size", None) or self.encoder.config.d_model
        self.head = torch.nn.Linear(hidden, self.outputs)
        self.encoder.to(self.device)
        self.head.to(self.device)

    def _layers(self):
        """The encoder's stack of transformer layers (a ``ModuleList`` as long as the config says)."""
        from ..embed.transformers import layer_count
        n = layer_count(self.encoder.config)
        stacks = [m for m in self.encoder.modules() if isinstance(m, self.torch.nn.ModuleList) and len(m) == n]
        if not stacks:
            from .._internal.errors import DomainsiftError
            raise DomainsiftError(f"cannot find the layers of {type(self.encoder).__name__}")
        return stacks[0]

    def truncate(self, layers: int) -> None:
        """Keep the encoder's lower ``layers`` transformer layers only (0: all): the layers above are
        dropped from the model, so training, saving and scoring never run them."""
        if layers <= 0:
            return
        stack = self._layers()
        if layers > len(stack):
            from .._internal.errors import DomainsiftError
            raise DomainsiftError(f"--layers {layers}: the encoder has {len(stack)} layers")
        del stack[layers:]
        config = self.encoder.config
        config.num_hidden_layers = layers  # each family's own field (n_layer, n_layers) through its attribute map
        if isinstance(getattr(config, "layer_types", None), list):
            config.layer_types = config.layer_types[:layers]

    def freeze(self, layers: int) -> None:
        """Train only the encoder's upper layers: ``layers > 0`` freezes the embeddings and the lower
        ``layers - 1`` transformer layers (1: the embeddings alone); 0 trains everything."""
        if layers <= 0:
            return
        stack = self._layers()
        embeddings = getattr(self.encoder, "embeddings", None) or self.encoder.get_input_embeddings()
        for module in [embeddings, *stack[:layers - 1]]:
            module.requires_grad_(False)

    def param_groups(self, cfg: "TrainConfig") -> list[dict]:
        return [{"params": [p for p in self.encoder.parameters() if p.requires_grad], "lr": cfg.lr},
                {"params": self.head.parameters(), "lr": cfg.head_lr}]

    def train(self, flag: bool = True) -> None:
        self.encoder.train(flag)
        self.head.train(flag)
        if flag:
            self._scorer = None  # the weights will change: a scorer exported before is stale

    def embedder(self, batch_size: int | None = None, progress: bool = False, backend: str = "torch"):
        from ..embed.transformers import TransformersEmbedder
        return TransformersEmbedder.from_loaded(self.tokenizer, self.encoder, self.device,
                                                batch_size=batch_size or self.score_batch_size,
                                                max_length=self.max_length, progress=progress, backend=backend)

    def forward(self, texts: Sequence[str]):
        logits = self.head(self.embedder().pool(texts))
        return logits.squeeze(-1) if self.outputs == 1 else logits

    def predict(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """Probability of the positive class, float64 (in float32, confident lines near 1.0 tie): ``(n,)``,
        or ``(n, outputs)`` (each head's) for a classifier of several heads."""
        self.train(False)
        if self._scorer is None:
            self._scorer = self.embedder(backend=self.backend)
        self._scorer.progress = progress and len(texts) >= 1000
        logits = self._scorer.encode(list(texts), head=self.head)
        from .._internal.rows import sigmoid
        return sigmoid(logits)

    @property
    def encoder_classifier(self) -> "EncoderClassifier":
        """The classifier whose encoder scores (itself; a :class:`Column`'s: the classifier of every head)."""
        return self

    def column(self, j: int) -> "Column":
        """Head ``j`` of a classifier of several heads, predicting as a binary classifier does."""
        return Column(self, j)

    # ------------------------------------------------------------------ checkpoint
    def save(self, path: str | os.PathLike, state: dict) -> None:
        """Save encoder, tokenizer, head and ``state`` atomically (a temporary folder, renamed)."""
        from .._internal.atomic import atomic_dir
        with atomic_dir(path) as tmp:
            self.encoder.save_pretrained(tmp)
            self.tokenizer.save_pretrained(tmp)
            self.torch.save(self.head.state_dict(), tmp / "head.pt")
            (tmp / "classifier.json").write_text(json.dumps({**state, "outputs": self.outputs}))

    @classmethod
    def load(cls, path: str | os.PathLike, max_length: int = 128, device: str | None = None,
             score_batch_size: int = 128, backend: str = "torch") -> tuple["EncoderClassifier", dict]:
        from .._internal.checksums import verify
        path = Path(path)
        verify(path)  # the model's files are checked before transformers or torch reads them
        state = json.loads((path / "classifier.json").read_text())
        clf = cls(str(path), max_length=max_length, device=device, score_batch_size=score_batch_size,
                  backend=backend, outputs=int(state.pop("outputs", 1)))
        clf.new_head()
        clf.head.load_state_dict(clf.torch.load(path / "head.pt", map_location="cpu", weights_only=True))
        clf.train(False)
        return clf, state


class Column:
    """Head ``j`` of a classifier of several heads (:meth:`EncoderClassifier.column`): ``predict`` is that
    head's column of the classifier's ``(n, heads)`` probabilities, bit for bit."""

    def __init__(self, classifier: EncoderClassifier, j: int):
        self.encoder_classifier, self.j = classifier, j

    def predict(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        return self.encoder_classifier.predict(texts, progress=progress)[:, self.j].copy()


def save_checkpoint(folder: Path, clf: EncoderClassifier, opt, sched, epoch: int, epochs: int,
                    rng: np.random.Generator, losses: list[float]) -> None:
    """Everything an interrupted training needs to go on as if it had not stopped, after ``epoch``
    finished epochs: the trained weights, the optimizer's and the schedule's state, torch's and the
    caller's random state and the losses so far (:mod:`domainsift._internal.checkpoint`)."""
    from .._internal import checkpoint
    torch = clf.torch
    checkpoint.save(folder, torch, {"encoder": clf.encoder.state_dict(), "head": clf.head.state_dict(),
                                    "optimizer": opt.state_dict(), "schedule": sched.state_dict(),
                                    "torch_rng": torch.get_rng_state()},
                    {"epoch": epoch, "epochs": epochs, "losses": losses, "rng": rng.bit_generator.state})


def checkpoint_epoch(folder) -> tuple[int, int] | None:
    """The finished epochs a checkpoint holds, and of how many, or None when there is none."""
    from .._internal import checkpoint
    doc = checkpoint.state(folder)
    try:
        return int(doc["epoch"]), int(doc["epochs"])
    except (KeyError, TypeError, ValueError):
        return None


def _resume(folder: Path, clf: EncoderClassifier, opt, sched, rng: np.random.Generator, epochs: int):
    """Load a checkpoint into the training's objects; returns (finished epochs, losses), or None (with a
    warning) when it is damaged or belongs to another training, which then starts over."""
    from .._internal import checkpoint

    def restore(saved: dict, doc: dict):
        if int(doc["epochs"]) != epochs or not 0 < int(doc["epoch"]) <= epochs:
            raise ValueError(f"a checkpoint of epoch {doc['epoch']} of {doc['epochs']}, not of {epochs} epochs")
        clf.encoder.load_state_dict(saved["encoder"])
        clf.head.load_state_dict(saved["head"])
        opt.load_state_dict(saved["optimizer"])
        sched.load_state_dict(saved["schedule"])
        clf.torch.set_rng_state(saved["torch_rng"])
        rng.bit_generator.state = doc["rng"]
        return int(doc["epoch"]), [float(x) for x in doc["losses"]]
    return checkpoint.resume(folder, clf.torch, restore, map_location=clf.device)


def train_classifier(clf: EncoderClassifier, epoch_data: Callable[[int], tuple[list, np.ndarray]],
                     steps_per_epoch: int, cfg: TrainConfig, rng: np.random.Generator,
                     desc: str = "fine-tune", checkpoint: str | os.PathLike | None = None) -> list[float]:
    """Fine-tune ``clf`` (encoder and a fresh head seeded by ``cfg.seed``) on the examples that
    ``epoch_data(epoch)`` returns (texts, float32 labels); returns the loss of every step.

    ``checkpoint``: a folder where each finished epoch is saved (:func:`save_checkpoint`); a training that
    finds one there goes on from it, with the weights, losses and random draws of an uninterrupted one.
    ``epoch_data`` must draw from ``rng`` only (its state is part of the checkpoint)."""
    torch = clf.torch
    losses: list[float] = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)  # head init and dropout; the global state is restored after
        clf.new_head()
        first = epoch_data(0)
        clf.train(True)
        groups = clf.param_groups(cfg)
        groups = [{**g, "params": list(g["params"])} for g in groups]  # a group may hold a generator
        params = [p for g in groups for p in g["params"]]
        # the fused kernel: the same update in one pass over all tensors (a Python loop per tensor otherwise)
        fused = all(p.device.type in ("cpu", "cuda") and p.dtype == torch.float32 for p in params)
        opt = torch.optim.AdamW(groups, weight_decay=cfg.weight_decay, fused=fused)
        total = max(1, steps_per_epoch * cfg.epochs)
        warm = int(cfg.warmup * total)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: (s + 1) / max(1, warm) if s < warm else max(0.0, (total - s) / max(1, total - warm)))
        loss_fn = torch.nn.BCEWithLogitsLoss()
        start = 0
        if checkpoint is not None and Path(checkpoint).exists():
            resumed = _resume(Path(checkpoint), clf, opt, sched, rng, cfg.epochs)
            if resumed is not None:
                start, losses = resumed
        from tqdm.auto import tqdm
        bar = tqdm(total=total, initial=min(total, start * steps_per_epoch), desc=desc, unit="step",
                   disable=not cfg.progress, leave=False)
        for epoch in range(start, cfg.epochs):
            texts, labels = first if epoch == 0 else epoch_data(epoch)
            for b in batches(texts, cfg.batch_size, rng, cfg.bucket):
                loss = loss_fn(clf.forward([texts[i] for i in b]), torch.from_numpy(labels[b]).to(clf.device))
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, cfg.clip)
                opt.step()
                sched.step()
                losses.append(loss.item())
                bar.update(1)
                bar.set_postfix(loss=f"{losses[-1]:.3f}")
            if checkpoint is not None and epoch + 1 < cfg.epochs:
                save_checkpoint(Path(checkpoint), clf, opt, sched, epoch + 1, cfg.epochs, rng, losses)
        bar.close()
    clf.train(False)
    return losses
