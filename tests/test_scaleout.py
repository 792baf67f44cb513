"""Past one machine: a real two-node Ray cluster (``ray.cluster_utils.Cluster``, two nodes of one CPU
each on this machine). The driver plans, the workers read their own parts of the pool, score them and
write the shards; the outputs are the local engine's, byte for byte; a worker killed by its PID costs
only the shards it had in flight; and the driver process opens no pool file."""

from __future__ import annotations

import domainsift as ds
import gzip
import logging
import os
import signal
from pathlib import Path

import pytest

from conftest import make_sentences
from domainsift.engine import Cascade, Execution
from domainsift.io.corpus import read_corpus
from domainsift.io.source import PoolSource

pytestmark = [pytest.mark.slow, pytest.mark.ray]
OUTPUTS = ("scores.npy", "ids.npy", "scores.tsv", "selected.ids.tsv")


@pytest.fixture(scope="module")
def two_nodes():
    import ray  # the test extra installs it: a missing Ray fails here, it is never skipped
    from ray.cluster_utils import Cluster
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    yield cluster
    ray.shutdown()
    cluster.shutdown()


@pytest.fixture
def pool(tmp_path):
    """Two pool files: a text file large enough to be cut into several parts (with empty lines), and
    a gzip file that a worker reads whole."""
    med = make_sentences("med", 60, 1)
    for i in (3, 17, 40):
        med.insert(i, "")
    (tmp_path / "a.txt").write_text("".join(f"{x}\n" for x in med + make_sentences("law", 50, 2)), encoding="utf-8")
    with gzip.open(tmp_path / "b.txt.gz", "wt", encoding="utf-8") as fh:
        fh.write("".join(f"{x}\n" for x in make_sentences("it", 30, 4)))
    (tmp_path / "in.txt").write_text("".join(f"{x}\n" for x in make_sentences("med", 8, 3)), encoding="utf-8")
    return tmp_path


def _run(pool: Path, out: str, engine: str, params: dict, cascade=None, on_shard=None, **select) -> dict:
    ind = read_corpus([pool / "in.txt"])
    source = PoolSource.open([pool / "a.txt", pool / "b.txt.gz"])
    ds.run(ds.RunSpec.single("cosine", ind, source, pool / out, rule=ds.Rule(top=20, **select), cascade=cascade,
                             params={**params, "cache_dir": str(pool / f"cache-{out}")},
                             execution=Execution(engine=engine, workers=2, shard_size=24, part_bytes=700,
                                                 on_shard=on_shard)))
    d = pool / out
    return {n: (d / n).read_bytes() for n in OUTPUTS + ("selected.txt",)}


class _Opens:
    """Every pool file this process opens, through the one opener (Ray workers are other processes)."""

    def __init__(self, monkeypatch, pool: Path):
        import domainsift.io.corpus as corpus
        self.seen, real = [], corpus.open_file
        names = {str(pool / "a.txt"), str(pool / "b.txt.gz")}

        def counted(path):
            if str(path) in names:
                self.seen.append(str(path))
            return real(path)

        monkeypatch.setattr(corpus, "open_file", counted)


@pytest.mark.parametrize("cascade", [None, Cascade(share=0.1)], ids=["plain", "cascade"])
def test_two_nodes_give_the_local_bytes_and_the_driver_reads_no_pool_text(two_nodes, tiny_models, pool,
                                                                          cascade, monkeypatch):
    import json
    params = {"embedder": tiny_models["bert"]}
    # the selection walks past duplicates and a test set's lines: the lines it reads, the workers read too
    walk = {"dedup": "exact", "exclude": make_sentences("med", 60, 1)[:10]}
    local = _run(pool, "local", "local", params, cascade, **walk)
    opens = _Opens(monkeypatch, pool)
    ray_out = _run(pool, "ray", "ray", params, cascade, **walk)
    assert opens.seen == []  # the scan, samples, shards, candidates and selected lines: all read by workers
    assert ray_out == local
    for d in ("local", "ray"):
        assert json.loads((pool / d / "selection.json").read_text())["exclude"]["lines_excluded"] > 0
    fp = json.loads((pool / "ray" / "pool.json").read_text())["fingerprints"]
    assert "sha256_parts" in fp[str((pool / "a.txt").resolve())]  # cut into parts, hashed by the workers


def _mix(pool: Path, out: str, engine: str, params: dict, cascade=None, method: str = "cosine", exclude=None,
         dedup=None) -> dict:
    (pool / "in_law.txt").write_text("".join(f"{x}\n" for x in make_sentences("law", 8, 5)), encoding="utf-8")
    targets = {"med": read_corpus([pool / "in.txt"]), "law": read_corpus([pool / "in_law.txt"])}
    ds.run(ds.RunSpec(method, targets, PoolSource.open([pool / "a.txt", pool / "b.txt.gz"]), pool / out, rule=ds.Rule(top=30, exclude=exclude, dedup=dedup), params={**params, "cache_dir": str(pool / f"cache-{out}")}, cascade=cascade, execution=Execution(engine=engine, workers=2, shard_size=24, part_bytes=700))).mix
    d = pool / out
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and
            p.name in ("selected.mix.tsv", "selected.txt", "selected.ids.tsv", "scores.npy")}


@pytest.mark.parametrize("cascade", [None, Cascade(share=0.1)], ids=["plain", "cascade"])
def test_several_targets_on_two_nodes_give_the_local_bytes(two_nodes, tiny_models, pool, cascade, monkeypatch):
    import json
    params = {"embedder": tiny_models["bert"]}
    med = make_sentences("med", 60, 1)
    test = med[:10]  # lines the mixture gives to no target: found among those read
    with gzip.open(pool / "b.txt.gz", "wt", encoding="utf-8") as fh:  # copies of med lines: duplicates to pass over
        fh.write("".join(f"{x}\n" for x in make_sentences("it", 30, 4) + med[10:40]))
    local = _mix(pool, "mix-local", "local", params, cascade, exclude=test, dedup="exact")
    opens = _Opens(monkeypatch, pool)
    ray_out = _mix(pool, "mix-ray", "ray", params, cascade, exclude=test, dedup="exact")
    assert opens.seen == []  # every target's scan, shards and selected lines: read by the workers
    assert ray_out == local and "selected.mix.tsv" in local and len(local) == 7
    for d in ("mix-local", "mix-ray"):
        meta = json.loads((pool / d / "mix.json").read_text())
        assert meta["exclude"]["lines_excluded"] > 0 and meta["dedup"]["duplicates_removed"] > 0


def test_finetune_targets_sharing_one_fit_on_two_nodes_give_the_local_bytes(two_nodes, tiny_models, pool,
                                                                             monkeypatch):
    """The shared fit trains on the sample the workers read; each target's head scores on the workers."""
    # the default backend (ONNX, int8): a line's vector depends on it alone, on whatever thread count
    params = {"model": tiny_models["bert"], "epochs": 1, "batch_size": 8, "progress": False}
    local = _mix(pool, "ftmix-local", "local", params, method="finetune")
    opens = _Opens(monkeypatch, pool)
    ray_out = _mix(pool, "ftmix-ray", "ray", params, method="finetune")
    assert opens.seen == []
    assert ray_out == local and "selected.mix.tsv" in local


def _scorer_pids() -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                cmd = open(f"/proc/{d}/cmdline", "rb").read()
            except OSError:
                continue
            if cmd.startswith(b"ray::_Scorer"):
                out.append(int(d))
    return out


def test_killed_workers_cost_only_their_shards_in_flight(two_nodes, tiny_models, pool, caplog):
    """Both scorers of the run are killed when the first shard comes back. The worker that sent it is then
    given the next shard, so at least one shard dies, whatever the timing (killing one worker at random
    could find it with nothing left to do, and cost nothing). Each shard in flight dies once, and is scored
    again by a new worker; the outputs are the local run's."""
    params = {"embedder": tiny_models["bert"]}
    local = _run(pool, "local", "local", params)
    killed = []
    earlier = set(_scorer_pids())  # the actors of the module's earlier runs may not have exited yet

    def kill_all(shard):
        if not killed:
            pids = [p for p in _scorer_pids() if p not in earlier]
            assert pids, "no Ray actor process of this run found"
            for p in pids:
                os.kill(p, signal.SIGKILL)
            killed.extend(pids)

    with caplog.at_level(logging.WARNING, logger="domainsift.engine.ray"):
        got = _run(pool, "ray", "ray", params, on_shard=kill_all)
    assert killed
    assert got == local
    died = [r.getMessage() for r in caplog.records if "died" in r.getMessage()]
    # the three still in flight and the one handed out next (two a worker), each once: no more
    assert 1 <= len(died) <= 4 and len(set(died)) == len(died), died
