"""Pools by URL (fsspec): an ``s3://`` pool on a local S3-compatible server (moto's server mode, started
by the test on 127.0.0.1; no network beyond this machine) selects the same lines as the same pool on
disk, with the local engine and with Ray workers that read their own byte ranges of the object; a
changed object is caught, a missing one is one line."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import make_sentences
from domainsift.cli import main

pytestmark = pytest.mark.slow
OUTPUTS = ("scores.npy", "ids.npy", "selected.ids.tsv")


@pytest.fixture(scope="module")
def s3():
    from moto.server import ThreadedMotoServer  # the test extra installs moto[server] and s3fs
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_ENDPOINT_URL": f"http://{host}:{port}"}
    mp = pytest.MonkeyPatch()
    for k, v in env.items():
        mp.setenv(k, v)
    import s3fs
    s3fs.S3FileSystem.clear_instance_cache()
    fs = s3fs.S3FileSystem()
    fs.mkdir("pools")
    yield fs
    s3fs.S3FileSystem.clear_instance_cache()
    mp.undo()
    server.stop()


@pytest.fixture
def pool(tmp_path, s3):
    lines = make_sentences("med", 40, 1) + [""] + make_sentences("law", 40, 2)
    data = "".join(f"{x}\n" for x in lines).encode()
    (tmp_path / "pool.txt").write_bytes(data)
    s3.pipe("pools/pool.txt", data)
    (tmp_path / "in.txt").write_text("".join(f"{x}\n" for x in make_sentences("med", 8, 3)), encoding="utf-8")
    return tmp_path


def _select(pool, where: str, out: str, model: str, *extra) -> dict:
    argv = ["-q", "select", "--method", "cosine", "--model", model, "--in-domain", str(pool / "in.txt"),
            "--pool", where, "--top", "15", "--out", str(pool / out), "--cache", str(pool / f"cache-{out}"), *extra]
    assert main(argv) == 0
    return {n: (pool / out / n).read_bytes() for n in OUTPUTS} | {"text": (pool / out / "selected.txt").read_bytes()}


def _same_selection(a: dict, b: dict) -> None:
    assert a["scores.npy"] == b["scores.npy"] and a["ids.npy"] == b["ids.npy"] and a["text"] == b["text"]
    rows = lambda d: [r.split("\t")[1:] for r in d["selected.ids.tsv"].decode().splitlines()]  # noqa: E731
    assert rows(a) == rows(b)  # the same lines, scores and ranks; the file column names the URL


def test_an_s3_pool_selects_the_lines_of_the_same_pool_on_disk(pool, tiny_models, s3, capsys):
    model = tiny_models["bert"]
    on_disk = _select(pool, str(pool / "pool.txt"), "disk", model)
    by_url = _select(pool, "s3://pools/pool.txt", "s3", model)
    _same_selection(by_url, on_disk)
    assert "s3://pools/pool.txt\t" in by_url["selected.ids.tsv"].decode()
    # select again from the scores: the object is checked, unchanged
    assert main(["-q", "select", "--from-scores", str(pool / "s3"), "--top", "5", "--out", str(pool / "again")]) == 0
    # a changed object is refused, naming it
    data = (pool / "pool.txt").read_bytes()
    s3.pipe("pools/pool.txt", data[:3] + bytes([data[3] ^ 1]) + data[4:])  # one byte, the same size
    capsys.readouterr()
    assert main(["-q", "select", "--from-scores", str(pool / "s3"), "--top", "5", "--out", str(pool / "again2")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "s3://pools/pool.txt changed since it was scored" in err[-1]


def test_a_missing_object_is_one_line(pool, tiny_models, capsys):
    assert main(["-q", "select", "--method", "cosine", "--model", tiny_models["bert"], "--in-domain",
                 str(pool / "in.txt"), "--pool", "s3://pools/nothing.txt", "--top", "5",
                 "--out", str(pool / "none")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "s3://pools/nothing.txt: no such file" in err[-1]


@pytest.mark.ray
def test_ray_workers_read_their_own_byte_ranges_of_an_s3_object(pool, tiny_models, s3):
    import ray
    from domainsift.engine import Execution
    from domainsift.io.corpus import read_corpus
    from domainsift.io.source import PoolSource
    import domainsift as ds
    ind = read_corpus([pool / "in.txt"])
    params = {"embedder": tiny_models["bert"]}
    out = {}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")  # inherits the env
    try:
        for name, where, engine in (("disk", str(pool / "pool.txt"), "local"), ("s3", "s3://pools/pool.txt", "ray")):
            ds.run(ds.RunSpec.single("cosine", ind, PoolSource.open([where]), pool / name, rule=ds.Rule(top=15),
                                     params={**params, "cache_dir": str(pool / f"cache-{name}")},
                                     execution=Execution(engine=engine, workers=2, shard_size=16, part_bytes=500)))
            out[name] = {n: (pool / name / n).read_bytes() for n in ("scores.npy", "ids.npy", "selected.txt")}
    finally:
        ray.shutdown()
    assert out["s3"] == out["disk"]
    import json
    fp = json.loads((pool / "s3" / "pool.json").read_text())["fingerprints"]["s3://pools/pool.txt"]
    assert fp["part_bytes"] == 500 and "sha256_parts" in fp
    assert np.load(pool / "s3" / "ids.npy").shape[0] == 80
