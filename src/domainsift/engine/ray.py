"""The Ray engine: shards scored by Ray actors (``--workers N``, on this machine or on the cluster
at ``--address``). Each actor builds the selector once from its method, parameters and fitted
state (shipped through Ray's object store, so no shared file system is needed); the driver reads
the pool and writes the shards, as the local engine does, so the scores are the same."""

from __future__ import annotations

import io
import logging
import os
import tarfile
import tempfile
from pathlib import Path

import numpy as np

from .._internal.errors import DomainsiftError
from . import shards
from .shards import score_one

log = logging.getLogger(__name__)


def _pack(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(folder), arcname="model")
    return buf.getvalue()


class _Scorer:
    """A Ray actor's state: the selector, built once from its method, parameters and fitted state."""

    def __init__(self, method: str, params: dict, packed_state: bytes | None, fitted: dict | None):
        from ..select import get_selector
        if "progress" in params:
            params = {**params, "progress": False}
        self.selector = get_selector(method, **params)
        if packed_state is not None:
            self.tmp = tempfile.mkdtemp(prefix="domainsift-ray-")
            with tarfile.open(fileobj=io.BytesIO(packed_state)) as tar:
                tar.extractall(self.tmp, filter="data")
            self.selector.load_state(Path(self.tmp) / "model")
        elif fitted is not None:
            self.selector.set_fitted(fitted)

    def score(self, shard: int, texts: list, targets: list | None, start: int) -> tuple[int, np.ndarray]:
        from ..io.corpus import Corpus
        records = Corpus(texts=texts, ids=[("<shard>", i) for i in range(len(texts))], files=["<shard>"],
                         targets=targets)
        return shard, score_one(self.selector, records, start)


def _ray():
    from .._internal.optional import require
    return require("ray", "ray")


def check_address(address: str | None, timeout: float = 5.0) -> None:
    """A cluster address must answer within ``timeout`` seconds (``ray.init`` on an address with no
    cluster waits for minutes); ``auto`` and no address are left to Ray."""
    if not address or address == "auto":
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
    if workers is not None and address is None and workers > cpus:
        log.warning("--workers %d is more than this machine's %d CPUs; using %d", workers, cpus, cpus)
        return cpus
    return workers


def score_on_ray(selector, source, state, shard_size, done, bar, workers, address, model_dir, on_shard) -> None:
    ray = _ray()
    fitted = selector.fitted_state()
    if fitted is not None:
        packed = None
    elif selector.saves_state and model_dir is not None and model_dir.exists():
        packed = _pack(model_dir)
    else:
        raise DomainsiftError(f"method '{selector.name}' cannot be shipped to Ray workers; use --engine local")
    started = False
    if not ray.is_initialized():
        kw = {"address": address} if address else {"num_cpus": max(1, workers or os.cpu_count() or 1)}
        ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING, **kw)
        started = True
    try:
        cluster_cpus = int(ray.cluster_resources().get("CPU", 1))
        if workers is not None and workers > cluster_cpus:
            log.warning("--workers %d is more than the cluster's %d CPUs; using %d", workers, cluster_cpus, cluster_cpus)
            workers = cluster_cpus
        n_workers = max(1, workers or cluster_cpus)
        threads = max(1, int(ray.cluster_resources().get("CPU", 1)) // n_workers)
        actor = ray.remote(num_cpus=threads)(_Scorer)
        params = selector.param_values()
        actors = [actor.remote(selector.name, params, ray.put(packed) if packed else None, fitted)
                  for _ in range(n_workers)]
        pending, meta = {}, {}
        pending_shards = source.shards(shard_size, done)
        next_actor = 0

        def submit() -> bool:
            nonlocal next_actor
            item = next(pending_shards, None)
            if item is None:
                return False
            shard, records, fidx, lines = item
            ref = actors[next_actor % n_workers].score.remote(shard, records.texts, records.targets, shard * shard_size)
            next_actor += 1
            pending[ref] = shard
            meta[shard] = (fidx, lines)
            return True

        for _ in range(2 * n_workers):  # keep every worker busy, a bounded number of shards in flight
            if not submit():
                break
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            shard, scores = ray.get(ready[0])
            del pending[ready[0]]
            fidx, lines = meta.pop(shard)
            shards.write_shard(state, shard, scores, fidx, lines)
            bar.update(len(scores))
            if on_shard:
                on_shard(shard)
            submit()
    finally:
        if started:
            ray.shutdown()
