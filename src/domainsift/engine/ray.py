"""The Ray engine: the driver plans, the workers read, score and write (``--engine ray``, ``--workers N``,
on this machine or on the cluster at ``--address``).

A pool of files is a :class:`RemoteSource`: the driver cuts it into parts from the files' sizes
(:mod:`domainsift.io.parts`) and hands out part and shard descriptions only.

- **Scan**: Ray tasks count, hash and mark the parts; the driver sums their reports into the pool's
  size, line numbering and fingerprint (the SHA-256s the workers computed), and draws the fit's
  samples as positions, which tasks read back.
- **Score**: Ray actors, each holding the fitted selector (built once from its method, parameters and
  fitted state, shipped through the object store), read their own shard (a range of pool positions,
  or the cascade's candidates among them), score it and write its files and completion marker into the
  run's state themselves (on shared storage when the cluster has several machines). The driver
  waits, then assembles the shards as the local engine does, so the bytes are the same.
- **A lost worker**: the shards in flight on an actor whose process died are handed to a new actor
  (at most :data:`RETRIES` times a shard); a shard is finished only when its marker is written, after
  its files, so a shard scored twice writes the same bytes.
- **The selection**: the selected lines are read by tasks and written by the driver.

A pool already in memory (a Python user's ``Corpus``) has no files to hand out: its shards' texts
travel through the object store and the driver writes their files, as before.
"""

from __future__ import annotations

import io
import logging
import os
import tarfile
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .._internal.errors import DomainsiftError
from . import shards

log = logging.getLogger(__name__)

RETRIES = 3  # a shard whose worker died is handed out again at most this many times


def _ray():
    from .._internal.optional import require
    return require("ray", "ray")


def _pack(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(folder), arcname="model")
    return buf.getvalue()


def _unwrap(ray, fn):
    """``fn()``, with a domainsift error raised in a worker re-raised here as itself (one line)."""
    try:
        return fn()
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, DomainsiftError):
            raise cause from None
        raise


# ------------------------------------------------------------------ what runs on the workers
def _scan_part(source, part):
    from ..io.parts import scan_part
    return scan_part(source, part)


def _read(source, segments, raw):
    from ..io.parts import read_segments
    return read_segments(source, segments, raw)


class _Scorer:
    """A Ray actor's state: the selectors (one per target of a mixture; one for a plain run), each built
    once from its method, parameters and fitted state, and the pool's files (a
    :class:`~domainsift.io.source.PoolSource`, or None for a pool in memory)."""

    def __init__(self, fits: list, source=None, threads: int = 1, layout: list | None = None):
        # the actor's share of the CPUs bounds every library's threads: Ray sets OMP_NUM_THREADS (torch,
        # and so ONNX Runtime, take it), and the Rust tokenizers' pool (Rayon) reads this when it starts
        os.environ["RAYON_NUM_THREADS"] = str(threads)
        from ..select import get_selector
        self.source = source
        self.selectors = []
        for k, (method, params, packed_state, fitted) in enumerate(fits):
            if "progress" in params:
                params = {**params, "progress": False}
            selector = get_selector(method, **params)
            if packed_state is not None:
                if not isinstance(packed_state, bytes):  # a reference inside a list: Ray hands it over as it is
                    packed_state = _ray().get(packed_state)
                tmp = tempfile.mkdtemp(prefix=f"domainsift-ray-{k}-")
                with tarfile.open(fileobj=io.BytesIO(packed_state)) as tar:
                    tar.extractall(tmp, filter="data")
                selector.load_state(Path(tmp) / "model")
            elif fitted is not None:
                selector.set_fitted(fitted)
            self.selectors.append(selector)
        # per state: the fit that scores it (built once above) and its column of that fit's block
        layout = layout or [(k, None) for k in range(len(self.selectors))]
        self.selectors, self.columns = [self.selectors[u] for u, _ in layout], [c for _, c in layout]

    def score(self, states: list, which: list, shard: int, segments: list, start: int) -> tuple[int, int]:
        """Read a shard of the pool once; every target in ``which`` (those that lack it) scores it and writes
        its files and marker into its state folder; the driver gets the shard's length."""
        texts, targets, fidx, lines, _ = _read(self.source, segments, False)
        records = self.source._corpus(texts, targets, fidx, lines)
        fidx, lines = np.asarray(fidx, np.int32), np.asarray(lines, np.int64)
        for k, scores in zip(which, shards.score_columns(self.selectors, self.columns, which, records, start)):
            shards.write_shard(Path(states[k]), shard, scores, fidx, lines)
        return shard, len(texts)

    def score_texts(self, which: list, shard: int, texts: list, targets: list | None,
                    start: int) -> tuple[int, list]:
        from ..io.corpus import Corpus
        records = Corpus(texts=texts, ids=[("<shard>", i) for i in range(len(texts))], files=["<shard>"],
                         targets=targets)
        return shard, shards.score_columns(self.selectors, self.columns, which, records, start)


# ------------------------------------------------------------------ the driver
def check_address(address: str | None, timeout: float = 5.0) -> None:
    """A cluster address must answer within ``timeout`` seconds (``ray.init`` on an address with no
    cluster waits for minutes); ``auto`` and no address are left to Ray."""
    if not address or address in ("auto", "local"):
        return
    import socket
    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise DomainsiftError(f"--address {address}: expected HOST:PORT (the head node's address, as "
                              "'ray start --head' prints it)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise DomainsiftError(f"--address {address}: no Ray cluster answers there ({exc.strerror or exc}); "
                              "start one with 'ray start --head', or leave out --address to run on this "
                              "machine") from None


def plan(selector, workers: int | None, address: str | None) -> int | None:
    """Checked before any fitting: the selector can be shipped to workers, the cluster answers, and
    the number of workers is capped at this machine's CPUs (with a warning) when Ray runs here."""
    _ray()
    if not selector.shippable:
        raise DomainsiftError(f"method '{selector.name}' cannot be shipped to Ray workers; use --engine local")
    check_address(address)
    if workers is not None and workers < 1:
        raise DomainsiftError(f"--workers must be at least 1, got {workers}")
    cpus = os.cpu_count() or 1
    if workers is not None and address in (None, "local") and workers > cpus:
        log.warning("--workers %d is more than this machine's %d CPUs; using %d", workers, cpus, cpus)
        return cpus
    return workers


def _cpus(workers: int | None) -> int:
    return max(1, workers or os.cpu_count() or 1)


@contextmanager
def session(workers: int | None, address: str | None):
    """Ray, started for the run (on this machine, or joined at ``address``) unless it already runs;
    shut down at the end only if started here."""
    ray = _ray()
    started = False
    if not ray.is_initialized():
        common = dict(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False,
                      logging_level=logging.WARNING)
        if address:  # a cluster's HOST:PORT, "auto" (Ray finds one) or "local" (an instance of the run's own)
            ray.init(address=address, **({"num_cpus": _cpus(workers)} if address == "local" else {}), **common)
        else:
            # Ray's own convention: RAY_ADDRESS, else the cluster 'ray start' started last on this machine,
            # else a new instance here; a cluster that runs already keeps its own CPUs (Ray refuses num_cpus)
            try:
                ray.init(num_cpus=_cpus(workers), **common)
            except ValueError as exc:
                if "num_cpus" not in str(exc):
                    raise
                ray.init(**common)
                log.warning("joined the Ray cluster that runs on this machine (Ray's convention: RAY_ADDRESS, else "
                            "the cluster 'ray start' started last); --address local runs on an instance of its own")
        started = True
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


class RemoteSource:
    """A pool of files read by Ray workers only (see the module docstring): the same interface as the
    :class:`~domainsift.io.source.PoolSource` it wraps for what a run asks of it (scan, length, take),
    and the layout the workers' shards are described by."""

    remote = True

    def __init__(self, source, part_bytes: int, progress: bool = False):
        self.source, self.part_bytes, self.progress = source, part_bytes, progress
        self.layout = None

    def __getattr__(self, name):  # files, target_files, paired, reader(), _corpus(): the wrapped source's
        return getattr(self.__dict__["source"], name)

    def __len__(self) -> int:
        if self.layout is None:
            raise RuntimeError("a RemoteSource is scanned before it is used")
        return len(self.layout)

    def _tasks(self, fn, args_list: list, desc: str | None = None) -> list:
        ray = _ray()
        remote = ray.remote(num_cpus=1, max_retries=RETRIES)(fn)
        src = ray.put(self.source)
        refs = [remote.remote(src, *args) for args in args_list]
        if desc is None or not self.progress:
            return _unwrap(ray, lambda: ray.get(refs))
        from tqdm.auto import tqdm
        out = {}
        with tqdm(total=len(refs), desc=desc, unit="part", dynamic_ncols=True) as bar:
            pending = list(refs)
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                out[ready[0]] = _unwrap(ray, lambda: ray.get(ready[0]))
                bar.update(1)
        return [out[r] for r in refs]

    def scan(self, samples: dict | None = None):
        """As :meth:`PoolSource.scan`, with every byte read by a worker: the parts are scanned by tasks,
        the samples drawn as positions (:func:`~domainsift.io.source.sample_positions`) and read back."""
        from ..io.parts import Layout, cut
        from ..io.source import Scan, sample_positions
        parts = cut(self.source, self.part_bytes)
        scans = self._tasks(_scan_part, [(p,) for p in parts], "scan")
        self.layout = Layout(self.source, parts, scans, self.part_bytes)
        n = len(self.layout)
        self.source._n = n
        from ..io.urls import stat
        stats = {f: stat(f) for f in list(self.files) + list(self.target_files)}  # sizes and versions: no byte read
        wanted = {name: sample_positions(n, k, seed) for name, (k, seed) in (samples or {}).items()}
        drawn = {}
        if wanted:  # every sample's lines read in one pass over the parts that hold any
            union = np.unique(np.concatenate(list(wanted.values())))
            records = self.take(union)
            drawn = {name: records[np.searchsorted(union, pos).tolist()] for name, pos in wanted.items()}
        return Scan(n, self.layout.fingerprints, stats, drawn)

    def take(self, positions: np.ndarray, raw: bool = False):
        """The records at sorted ``positions``, read by tasks (one per part that holds any); with
        ``raw`` also their bytes by ``(file, line)``."""
        segments = self.layout.segments(np.asarray(positions, dtype=np.int64))
        got = self._tasks(_read, [([s], raw) for s in segments])
        texts, targets, fidx, lines, kept = [], [], [], [], {}
        for t, g, f, ln, b in got:
            texts += t
            targets += g
            fidx += f
            lines += ln
            if raw:
                kept.update({(self.files[k], line): v for k, line, v in zip(f, ln, b)})
        corpus = self.source._corpus(texts, targets, fidx, lines)
        return (corpus, kept) if raw else corpus

    def shard_segments(self, shard: int, shard_size: int, positions: np.ndarray | None) -> list:
        """The segments of shard ``shard``: pool positions ``[shard * size, ...)``, or that slice of
        ``positions`` (the cascade's candidates)."""
        if positions is None:
            lo = shard * shard_size
            wanted = np.arange(lo, min(len(self), lo + shard_size), dtype=np.int64)
        else:
            wanted = np.asarray(positions[shard * shard_size:(shard + 1) * shard_size], dtype=np.int64)
        return self.layout.segments(wanted)


def score_on_ray(selectors: list, source, states: list, execution, lacking: list, bar, model_dirs: list,
                 positions=None, n_shards=None, columns: list | None = None) -> None:
    """Score the shards that some target lacks (``lacking[k]``: the shards target ``k`` has no marker for)
    on Ray actors (``execution``: workers, address, shard size, the callback after each shard), each shard
    read once for every target that lacks it: read and written by the actors for a
    :class:`RemoteSource` (``positions``: the pool positions to score, by default all), or shipped as
    texts for a pool in memory. A shard whose actor died is handed to a new actor (at most
    :data:`RETRIES` times a shard). ``columns``: per state, its column of a fit of several targets
    (shipped once; each shard scored into one block for all of them)."""
    ray = _ray()
    fits, layout = _shipped(selectors, model_dirs, columns or [None] * len(selectors))
    which_of = {k: [t for t in range(len(selectors)) if k in lacking[t]] for k in range(n_shards)}
    done = {k for k, w in which_of.items() if not w}
    workers = execution.workers
    with session(workers, execution.address):
        cluster_cpus = int(ray.cluster_resources().get("CPU", 1))
        if workers is not None and workers > cluster_cpus:
            log.warning("--workers %d is more than the cluster's %d CPUs; using %d", workers, cluster_cpus, cluster_cpus)
            workers = cluster_cpus
        n_workers = max(1, workers or cluster_cpus)
        threads = max(1, cluster_cpus // n_workers)
        shipped = [(sel.name, sel.param_values(), ray.put(packed) if packed else None, fitted)
                   for sel, packed, fitted in fits]
        remote = isinstance(source, RemoteSource)
        actor = ray.remote(num_cpus=threads)(_Scorer)
        pool = _Actors(lambda: actor.remote(shipped, source.source if remote else None, threads, layout), n_workers)
        todo = (iter([k for k in range(n_shards) if k not in done]) if remote
                else source.shards(execution.shard_size, done))
        job = _Shards(source, [str(s) for s in states], which_of, execution, positions, bar)
        try:
            pool.run(todo, job)
        finally:
            pool.close()


def _shipped(selectors: list, model_dirs: list, columns: list) -> tuple[list, list]:
    """What the actors build their scorers from, each fitted selector once: ``(selector, its saved fit
    packed or None, its fitted state or None)``; and per state, which of them scores it and its column."""
    layout, seen = [], {}
    for selector, column in zip(selectors, columns):
        layout.append((seen.setdefault(id(selector), len(seen)), column))
    fits = []
    for selector, model_dir in {id(s): (s, d) for s, d in zip(selectors, model_dirs)}.values():
        fitted = selector.fitted_state()
        if fitted is not None:
            packed = None
        elif selector.saves_state and model_dir is not None and model_dir.exists():
            packed = _pack(model_dir)
        else:
            raise DomainsiftError(f"method '{selector.name}' cannot be shipped to Ray workers; use --engine local")
        fits.append((selector, packed, fitted))
    return fits, layout


class _Shards:
    """How a shard is handed to an actor and what is done when it comes back: a :class:`RemoteSource`'s
    shard by its byte segments (the actor reads and writes it), a pool in memory's by its texts (this
    process writes what the actor scored)."""

    def __init__(self, source, states: list, which_of: dict, execution, positions, bar):
        self.source, self.states, self.which_of, self.bar = source, states, which_of, bar
        self.shard_size, self.on_shard, self.positions = execution.shard_size, execution.on_shard, positions
        self.remote = isinstance(source, RemoteSource)

    def shard_of(self, item) -> int:
        return item if self.remote else item[0]

    def submit(self, a, item):
        shard = self.shard_of(item)
        if self.remote:
            return a.score.remote(self.states, self.which_of[shard], shard,
                                  self.source.shard_segments(shard, self.shard_size, self.positions),
                                  shard * self.shard_size)
        records = item[1]
        return a.score_texts.remote(self.which_of[shard], shard, records.texts, records.targets,
                                    shard * self.shard_size)

    def finish(self, item, got) -> None:
        shard = self.shard_of(item)
        if self.remote:
            self.bar.update(got)
        else:
            _, _, fidx, lines = item
            for k, scores in zip(self.which_of[shard], got):
                shards.write_shard(Path(self.states[k]), shard, scores, fidx, lines)
            self.bar.update(len(got[0]))
        if self.on_shard:
            self.on_shard(shard)


class _Actors:
    """The Ray actors that score shards, two shards each in flight; a finished shard's actor gets the
    next one, and an actor that died is replaced and its shard handed out again (:data:`RETRIES`)."""

    def __init__(self, new_actor, n_workers: int):
        self.new_actor, self.n_workers = new_actor, n_workers
        self.actors = [new_actor() for _ in range(n_workers)]
        self.pending, self.work, self.tries = {}, {}, {}

    def run(self, todo, job) -> None:
        ray = _ray()

        def submit(item, slot: int) -> None:
            a = self.actors[slot]
            shard = job.shard_of(item)
            self.pending[job.submit(a, item)] = (shard, slot, a)
            self.work[shard] = item

        def next_item(slot: int) -> bool:
            item = next(todo, None)
            if item is None:
                return False
            submit(item, slot)
            return True

        for turn in range(2 * self.n_workers):  # two shards per worker in flight; each finished one is replaced
            if not next_item(turn % self.n_workers):  # on the worker that finished it
                break
        while self.pending:
            ready, _ = ray.wait(list(self.pending), num_returns=1)
            shard, slot, a = self.pending.pop(ready[0])
            try:
                _, got = _unwrap(ray, lambda: ray.get(ready[0]))
            except ray.exceptions.RayActorError as exc:
                self.tries[shard] = self.tries.get(shard, 0) + 1
                if self.tries[shard] > RETRIES:
                    raise DomainsiftError(f"shard {shard}: its Ray worker died {self.tries[shard]} times "
                                          f"({str(exc).splitlines()[0]}); see the Ray logs") from None
                log.warning("the Ray worker scoring shard %d died; handing the shard to a new worker", shard)
                if self.actors[slot] is a:  # the first of its shards in flight to report it: replace it
                    self.actors[slot] = self.new_actor()
                submit(self.work[shard], slot)
                continue
            job.finish(self.work.pop(shard), got)
            next_item(slot)

    def close(self) -> None:
        ray = _ray()
        for a in self.actors:
            ray.kill(a)
