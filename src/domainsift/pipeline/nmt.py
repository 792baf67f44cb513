"""The translation floor's one stage: a model trained into a folder claimed for the run (``nmt train``,
each model ``adapt`` trains, each row of the judge)."""

from __future__ import annotations

import os


def trained(folder: str | os.PathLike, train, dev, settings, init_from=None, mixing=None, sampling=None,
            progress: bool = False, overwrite: bool = True) -> dict:
    """The model of this training in ``folder``, the folder claimed for the run (a second run into it fails
    at once): kept when it holds the same training (its identity: the settings, the warm start's own
    weights, every text), trained or resumed otherwise (``overwrite``: a model of another training is
    replaced; without it, refused). Returns ``nmt.json``'s contents."""
    from .. import rundir
    from ..nmt.trainer import train_nmt
    with rundir.claim(folder, "nmt", overwrite=overwrite):
        return train_nmt(train, dev, folder, settings, init_from=init_from, progress=progress, overwrite=overwrite,
                         mixing=mixing, sampling=sampling)
