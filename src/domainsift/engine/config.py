"""How a scoring job runs, as frozen configurations: :class:`Execution` (engine, workers, shard size,
fit sample) and :class:`Cascade` (``--cascade``'s candidates or selection share)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .._internal.errors import DomainsiftError
from ..io.parts import PART_BYTES

ENGINES = ("local", "ray")
DEFAULT_SHARD_SIZE = 16384  # a multiple of the vector cache's 1,024-line chunks
# the local engine's default processes for the student's shards: this process reads and writes every shard
# (about 3 µs a line on a 2-core EPYC) and a child scores it (about 10 µs a line), so past three or four
# children the reader is the bottleneck, and each child holds its own chunk cache (up to ~0.2 GB)
MAX_PROCESSES = 4
STUDENT_SAMPLE = "student"  # the counting pass's sample a cascade's student learns from (pipeline.stages' samples)
FIT_SAMPLE = 200_000  # a selector that fits on the pool sees at most this many records (a seeded sample)


@dataclass(frozen=True)
class Execution:
    """How a scoring job runs: ``engine`` (``local`` or ``ray``, with ``workers`` and ``address``; ``local``
    with ``processes`` for a selector whose scoring is Python code on one core, the student: None is
    one per CPU, at most :data:`MAX_PROCESSES`), records per shard, the fit sample's size, the bytes of a part of a large pool file that a Ray
    worker reads on its own (:mod:`domainsift.io.parts`), progress bars; ``on_shard`` is called after each shard
    is written (tests stop a run there)."""

    engine: str = "local"
    workers: int | None = None
    address: str | None = None
    shard_size: int = DEFAULT_SHARD_SIZE
    fit_sample: int = FIT_SAMPLE
    part_bytes: int = PART_BYTES
    progress: bool = False
    processes: int | None = None
    on_shard: Callable[[int], None] | None = field(default=None, compare=False)

    def local_processes(self) -> int:
        """The processes the local engine scores a Python-bound selector's shards in: ``processes``, or one
        per CPU up to :data:`MAX_PROCESSES`."""
        import os
        return max(1, self.processes if self.processes is not None else min(MAX_PROCESSES, os.cpu_count() or 1))

    def planned(self, selector) -> "Execution":
        """The execution a run of ``selector`` takes: under Ray, its workers planned (what Ray needs is
        checked here, before any reading); the local engine as it is."""
        if self.engine != "ray":
            return self
        from dataclasses import replace

        from .ray import plan
        return replace(self, workers=plan(selector, self.workers, self.address))

    def reading(self, source, stack):
        """``source`` as this engine reads it: under Ray a session kept open in ``stack`` (an ExitStack) and a
        file pool read by the workers; the local engine reads it here, as it is."""
        if self.engine != "ray":
            return source
        from ..io.source import MemorySource
        from .ray import RemoteSource, session
        stack.enter_context(session(self.workers, self.address))
        if not isinstance(source, MemorySource) and not getattr(source, "remote", False):
            source = RemoteSource(source, self.part_bytes, self.progress)
        return source

    def check(self) -> None:
        if self.processes is not None and self.processes < 1:
            raise DomainsiftError(f"--processes must be at least 1, got {self.processes}")
        if self.engine not in ENGINES:
            raise DomainsiftError(f"unknown engine '{self.engine}' (choose from {', '.join(ENGINES)})")
        if self.part_bytes < 1:
            raise DomainsiftError(f"the part size must be at least 1 byte, got {self.part_bytes}")
        if self.shard_size < 1:
            raise DomainsiftError(f"the shard size must be at least 1, got {self.shard_size}")


@dataclass(frozen=True)
class Cascade:
    """``--cascade``: the student scores every line, the method ``candidates`` of them, or as many as the
    student's measured recall says a selection of ``share`` of the pool needs."""

    candidates: int | None = None
    share: float | None = None

    def check(self) -> None:
        if self.candidates is not None and self.candidates < 1:
            raise DomainsiftError(f"--candidates must be at least 1, got {self.candidates}")


@dataclass(frozen=True)
class Column:
    """A target's column of a fit of several targets (:meth:`~domainsift.select.base.BaseSelector.fit_targets`):
    the fit, fitted once before the run, which scores a shard into an ``(n, T)`` block for every target
    at once; the target's ``index`` among its columns; the folder the fit is saved in (what the Ray
    engine ships to its workers, for a fit that saves a folder)."""

    fit: object
    index: int
    folder: Path | None = None


@dataclass
class Target:
    """One target's scoring job inside a run: its fitted-to-be ``selector``, its in-domain set, the
    counting pass's samples it fits on (its own dict: the fit sample is dropped from it once fitted), the
    state folder its fit, shards and cascade are kept in (resumable), and the cascade's student.
    ``column``: the target is a column of a fit of several targets (:class:`Column`), fitted already;
    its ``selector`` is then that fit's one-target view (what the student learns from and the signature
    names), and the shards are scored by the fit, one block for every target."""

    selector: object
    in_domain: object  # a Corpus
    samples: dict
    state: Path
    student: object = None
    column: Column | None = None

    @property
    def scorer(self):
        """What scores this target's shards: the selector itself, or the fit of every target."""
        return self.selector if self.column is None else self.column.fit

    @property
    def index(self) -> int | None:
        """The target's column of its scorer's block (None: the scorer scores this target alone)."""
        return None if self.column is None else self.column.index

    @property
    def model_dir(self) -> Path:
        """Where the scorer's fit is saved (shipped to Ray workers)."""
        from ..rundir.layout import STATE_MODEL
        return self.state / STATE_MODEL if self.column is None else self.column.folder
