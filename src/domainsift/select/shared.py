"""One fit for several targets (``select --target NAME=FILE ...``): the pieces every method that
``fits_targets`` shares.

A shared fit scores a batch of lines for every target at once (finetune: one encoder, a head per
target; cosine: one encoding, a centroid per target). Each target's run scores the pool as a one-target
run does, through a :class:`HeadView` of the shared fit: the first run over a shard computes every
target's scores and keeps them in the memo folder under the batch's hash, and the other targets' runs
over the same shard read them there instead of encoding the lines again. :class:`SharedHeads` is the
``shared`` parameter that tells a target's selector which fit, which target, and which memo.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

_SHARED: dict = {}  # the shared fits this process holds (``heads`` of a fit, SharedHeads.fitted)


class HeadView:
    """One head of a predictor of several heads (``shared.predict(texts) -> (n, outputs)``), scored as a
    one-head predictor: ``predict(texts)`` is head ``index``'s column. Through ``memo`` (a folder, or
    None) every head's scores of a batch are kept under the texts' hash, so that the other targets' runs
    over the same shards read them instead of encoding again."""

    def __init__(self, shared, index: int, memo=None):
        self.shared, self.index, self.memo = shared, index, memo

    def predict(self, texts, progress: bool = False) -> np.ndarray:
        texts = list(texts)
        path = None
        if self.memo is not None and Path(self.memo).is_dir():
            import hashlib
            from .._internal.checksums import hash_texts
            h = hashlib.sha256()
            hash_texts(h, texts)
            path = Path(self.memo) / f"{h.hexdigest()[:32]}.npy"
            if path.exists():
                try:
                    p = np.load(path, allow_pickle=False)
                    if p.shape == (len(texts), self.shared.outputs):
                        return p[:, self.index].copy()
                except (OSError, ValueError):
                    pass  # a damaged memo file: encode again
        p = self.shared.predict(texts, progress=progress)
        if p.ndim == 1:
            p = p[:, None]
        if path is not None:
            from .._internal.atomic import save_npy
            save_npy(path, p)
        return p[:, self.index].copy()


class SharedHeads:
    """A target's place in a shared fit (the ``shared`` parameter of a selector that ``fits_targets``):
    the folder the fit of every target is saved in, its identity, the targets in order, this target's
    name, and the folder of scored batches the targets share (:class:`HeadView`). Its ``repr`` is stable
    (a run's resume fingerprint holds it); its ``str`` is what the signature says."""

    def __init__(self, folder, identity: str, targets, name: str, memo=None):
        self.folder, self.identity, self.targets, self.name = str(folder), identity, list(targets), name
        self.memo = None if memo is None else str(memo)

    def __repr__(self) -> str:
        return f"SharedHeads({self.name!r}, of={'+'.join(self.targets)}, fit={self.identity})"

    def __str__(self) -> str:
        return f"head {self.name} of {'+'.join(self.targets)}"

    def index(self, targets) -> int:
        """This target's place among a fit's ``targets`` (a one-line error when it is not there)."""
        from .._internal.errors import DomainsiftError
        if self.name not in targets:
            raise DomainsiftError(f"the shared fit has no target '{self.name}' (it has: {', '.join(targets)})")
        return list(targets).index(self.name)

    def fitted(self, like):
        """The shared fit, loaded once per process (a selector of ``like``'s class and parameters)."""
        key = (self.folder, self.identity)
        if key not in _SHARED:
            multi = type(like)(**{**like.param_values(), "shared": None})
            multi.load_state(self.folder)
            _SHARED[key] = multi
        return _SHARED[key]

    def release(self) -> None:
        """Let this process forget the shared fit (it is loaded again from its folder if asked for)."""
        _SHARED.pop((self.folder, self.identity), None)


def heads(multi, folder, identity: str, memo=None) -> dict:
    """Each target's ``shared`` parameter for ``multi`` (a fit of ``fit_targets``, its ``targets_`` in
    order), saved in ``folder`` (``identity``: what the fit was made from); this process keeps the fit
    for its targets' runs until :meth:`SharedHeads.release`."""
    out = {name: SharedHeads(folder, identity, multi.targets_, name, memo) for name in multi.targets_}
    _SHARED[(str(folder), identity)] = multi
    return out


__all__ = ["HeadView", "SharedHeads", "heads"]
