"""Sealed epoch checkpoints, one format for every training that resumes (finetune's fine-tuning,
:mod:`domainsift.select.train`, and the translation model's, :mod:`domainsift.nmt.trainer`).

A checkpoint is a folder written atomically and sealed (:func:`~domainsift._internal.atomic.atomic_dir`):
``training.pt`` (the tensors: weights, the optimiser's and the schedule's state, torch's random state) and
``progress.json`` (the finished epochs and what else the training keeps: the losses, the caller's random
state). :func:`resume` checks the seal and hands both to the training's own ``restore``; a checkpoint that
is damaged, or that ``restore`` refuses, costs its epochs and never the run: a warning, and the training
starts from its first epoch.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Callable

WEIGHTS, STATE = "training.pt", "progress.json"

log = logging.getLogger(__name__)


def save(folder: str | Path, torch, tensors: dict, state: dict) -> None:
    """Write the checkpoint (replacing the last one atomically)."""
    from .atomic import atomic_dir
    with atomic_dir(folder) as tmp:
        torch.save(tensors, tmp / WEIGHTS)
        (tmp / STATE).write_text(json.dumps(state), encoding="utf-8")


def state(folder: str | Path) -> dict | None:
    """A checkpoint's ``progress.json``, unchecked (what a plan or a message reads), or None."""
    try:
        doc = json.loads((Path(folder) / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def resume(folder: str | Path, torch, restore: Callable[[dict, dict], object], map_location=None):
    """``restore(tensors, state)``'s result for the checkpoint in ``folder`` (checked against its seal first),
    or None with a warning when it is damaged or ``restore`` raises (it belongs to another training)."""
    from .checksums import verify
    folder = Path(folder)
    try:
        verify(folder)
        doc = json.loads((folder / STATE).read_text(encoding="utf-8"))
        tensors = torch.load(folder / WEIGHTS, map_location=map_location, weights_only=True)
        return restore(tensors, doc)
    except Exception as exc:  # noqa: BLE001: a damaged checkpoint of any kind costs the epochs, never the run
        log.warning("the training checkpoint in %s cannot be used (%s); training from the first epoch", folder,
                    str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return None
