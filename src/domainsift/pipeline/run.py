"""The one way in for a run of ``score`` or ``select`` (one target or several): :func:`run` takes a
:class:`~domainsift.spec.RunSpec`, checks it, and runs it into its run directory, or, with no ``out``,
into a temporary one whose results it keeps in memory. :func:`plan` says what the run would do and cost
(``--plan``), writing nothing. The CLI builds the spec from its flags and calls these; so can anyone.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import rundir
from .._internal.errors import DomainsiftError
from ..spec import RunSpec


@dataclass
class RunResult:
    """What a run made: ``out`` (its folder; None for a run kept in memory), ``signature`` (a score run's,
    or a mixture's), ``selection`` (``{target: selection.json}``; empty for a score run), ``mix``
    (``mix.json``, for a mixture), ``share`` (the estimated in-domain share, when the run estimated one).
    :meth:`scores` and :meth:`selected` read a target's scores and chosen lines (held in memory when the
    run had no folder)."""

    out: Path | None
    signature: dict
    selection: dict = field(default_factory=dict)
    mix: dict | None = None
    share: dict | None = None
    dirs: dict = field(default_factory=dict)
    _memory: dict | None = field(default=None, repr=False)

    @property
    def targets(self) -> list[str]:
        return list(self.dirs)

    def _dir(self, target: str | None) -> Path:
        if target is None:
            if len(self.dirs) != 1:
                raise DomainsiftError(f"several targets ({', '.join(self.dirs)}): name one")
            target = next(iter(self.dirs))
        if target not in self.dirs:
            raise DomainsiftError(f"no target '{target}' (targets: {', '.join(self.dirs) or 'none'})")
        return target

    def scores(self, target: str | None = None) -> np.ndarray:
        """A target's scores, one per pool line in pool order (higher = more in-domain)."""
        name = self._dir(target)
        if self._memory is not None:
            return self._memory["scores"][name]
        return rundir.load_scores(self.dirs[name]).scores

    def selected_ids(self, target: str | None = None) -> list[tuple[str, int]]:
        """A target's chosen lines as ``(file, line)`` ids, best first."""
        name = self._dir(target)
        if self._memory is not None:
            return self._memory["ids"][name]
        return rundir.read_selected_ids(self.dirs[name])

    def selected(self, target: str | None = None) -> list[tuple[str, str | None]]:
        """A target's chosen lines, ``(text, other side or None)`` in pool order."""
        name = self._dir(target)
        if self._memory is not None:
            return self._memory["lines"][name]
        return rundir.selection_records(self.dirs[name])

    def _hold(self) -> "RunResult":
        """Read every target's scores and selection into memory (before a temporary folder goes)."""
        memory = {"scores": {}, "ids": {}, "lines": {}}
        for name, d in self.dirs.items():
            memory["scores"][name] = rundir.load_scores(d).scores
            if self.selection:
                memory["ids"][name] = rundir.read_selected_ids(d)
                memory["lines"][name] = rundir.selection_records(d)
        self._memory, self.out = memory, None
        self.dirs = {name: None for name in self.dirs}
        return self


def run(spec: RunSpec) -> RunResult:
    """Run ``spec``: fit its method on each target, score the pool (at most three reads of it for any
    number of targets), and choose by its rule; returns a :class:`RunResult`."""
    spec.check()
    if spec.out is None:  # in memory: the same run into a folder of its own, read back, then gone
        with tempfile.TemporaryDirectory(prefix="domainsift-run-") as tmp:
            return _run(spec.with_out(os.path.join(tmp, "run")))._hold()
    return _run(spec)


def _run(spec: RunSpec) -> RunResult:
    out = Path(spec.out)
    if spec.mixture:
        from .mix import mix_targets
        meta = mix_targets(spec)
        dirs = {name: Path(t["dir"]) for name, t in meta["targets"].items()}
        return RunResult(out, meta, {name: rundir.read_json(d, rundir.SELECTION) for name, d in dirs.items()},
                         mix=meta, dirs=dirs)
    if spec.rule is None:
        from .score import score
        job = score(spec)
        return RunResult(out, job.signature, share=job.share, dirs={"": out})
    from .choose import score_then_select
    sig, sel = score_then_select(spec)
    return RunResult(out, sig, {"": sel}, share=rundir.read_json(out, rundir.SHARE), dirs={"": out})


def plan(spec: RunSpec) -> dict:
    """What ``spec`` would do and cost (``--plan``): the pool counted once, the method calibrated on a seeded
    sample, the warnings the run would give; nothing is written. :func:`format_plan` prints it."""
    spec.check()
    if spec.mixture:
        raise DomainsiftError("--plan plans one target; plan each --target on its own")
    from .plan import plan_run
    planned = plan_run(spec)
    other = list(getattr(spec.pool, "target_files", None) or [])
    if other:  # a bitext pool: which way a model trained on the selection translates
        planned["direction"] = {"scored": list(spec.pool.files), "other": other}
    return planned


def format_plan(planned: dict) -> str:
    from .plan import format_plan as fmt
    return fmt(planned)
