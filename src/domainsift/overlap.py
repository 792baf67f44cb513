"""The in-domain set inside the pool: one file given as both, or the pool repeating in-domain lines.

A pool that holds the in-domain set's own lines scores them as the most in-domain of all: every method
ranks them first, so the selection returns them. That is harmless when the in-domain set is only a
query, and a leak when it is also the test set the selected data will be judged on (paper 000 builds an
overlap-free split for that reason). A run says so before its fit, one line each (kept in ``run.json``;
``--plan`` prints the same), and goes on: selecting from a pool that holds the query can be meant.
``select --exclude FILE`` (:class:`domainsift.dedup.Exclusion`) leaves such lines out of the selection,
and a run that excludes them does not warn of them.

- **the same file**: an in-domain file is also one of the pool's files (``--pool data/*.txt`` with the
  in-domain file in ``data/``): said whenever it happens.
- **repeated lines**: at least :data:`SHARE` of the pool's seeded sample (the counting pass's, the one the
  surface check reads) repeats an in-domain line (compared as ``--exclude`` compares: :func:`domainsift.dedup.normalise`). The sample cannot count a handful of repeats in
  a large pool, and those do not move a selection; the shared benchmark's own warts (a test file's lines
  in its domain's train file: at most 19 of 35,000 pool lines) stay under it.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import Sequence

log = logging.getLogger(__name__)

SHARE = 0.01  # the sample's share of lines that repeat an in-domain line from which a run warns


def shared_files(in_files: Sequence[str], pool_files: Sequence[str]) -> list[str]:
    """The in-domain files that are also pool files (the same file by its real path), in order."""
    pool = {os.path.realpath(f) for f in pool_files if os.path.exists(f)}
    return [f for f in in_files if os.path.exists(f) and os.path.realpath(f) in pool]


def repeats(in_texts: Sequence[str], sample_texts: Sequence[str]) -> list[tuple[int, int]]:
    """``(sample position, in-domain position)`` of every sample line that repeats an in-domain line, as
    ``--exclude`` and ``--dedup exact`` compare lines (:func:`domainsift.dedup.normalise`: the warning and
    the exclusion agree on what a repeat is)."""
    from .dedup import normalise
    first = {}
    for i, t in enumerate(in_texts):
        key = normalise(t)
        if key:
            first.setdefault(key, i)
    hits = []
    for k, t in enumerate(sample_texts):
        i = first.get(normalise(t))
        if i is not None:
            hits.append((k, i))
    return hits


def check_overlap(in_domain, pool_sample, pool_files: Sequence[str], n_pool: int | None,
                  name: str = "the in-domain set", say: bool = True, exclude=None) -> list[str]:
    """The warnings of the module docstring for ``in_domain`` (a Corpus) and the pool's sample (a Corpus,
    or None) and files; logged unless ``say`` is false. ``exclude``: the selection's ``--exclude`` (a
    :class:`~domainsift.dedup.Exclusion`): the lines it leaves out are not warned of."""
    out = []
    left_out = (lambda text: False) if exclude is None else exclude.matches
    same = [f for f in shared_files(in_domain.files, pool_files)
            if not all(left_out(t) for t, (g, _) in zip(in_domain.texts, in_domain.ids) if g == f)]
    for f in same:
        out.append(f"{os.path.basename(f)} is both the in-domain set and a pool file: its lines rank at the top "
                   f"and will be selected; if you test on them, leave {os.path.basename(f)} out of the pool, or select "
                   f"with --exclude {os.path.basename(f)}")
    if pool_sample is not None and len(pool_sample):
        same_real = {os.path.realpath(f) for f in same}
        real = functools.lru_cache(maxsize=None)(os.path.realpath)  # a few files, many sampled lines
        hits = [(k, i) for k, i in repeats(in_domain.texts, pool_sample.texts)
                if real(pool_sample.ids[k][0]) not in same_real  # said above already
                and not left_out(pool_sample.texts[k])]
        if hits and len(hits) >= SHARE * len(pool_sample):
            k, i = hits[0]
            (pf, pl), (df, dl) = pool_sample.ids[k], in_domain.ids[i]
            about = (f" (about {round(len(hits) / len(pool_sample) * n_pool):,} of the pool's {n_pool:,})"
                     if n_pool and n_pool > len(pool_sample) else "")
            out.append(f"{len(hits):,} of {len(pool_sample):,} sampled pool lines repeat a line of {name} "
                       f"(as --exclude compares lines){about}, e.g. {os.path.basename(pf)} line {pl} = {os.path.basename(df)} line {dl}: "
                       f"they rank at the top and will be selected; if you test on {name}, remove them from "
                       f"the pool first, or select with --exclude {os.path.basename(df)}")
    for msg in out if say else ():
        log.warning(msg)
    return out


__all__ = ["check_overlap", "shared_files", "repeats", "SHARE"]
