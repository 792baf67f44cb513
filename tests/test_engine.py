"""The scoring engine: the pool read as a stream in shards, completion markers, real kills
(SIGKILL) resumed to byte-identical outputs, and Ray actors scoring as the local engine does."""

from __future__ import annotations
import domainsift as ds
from domainsift.engine import Execution

from pathlib import Path

import numpy as np
import pytest

from conftest import make_sentences, run_killed
from domainsift.cli import main
from domainsift.io.corpus import read_corpus, read_parallel
from domainsift.engine import finished_shards
from domainsift.io.source import MemorySource, PoolSource


def _write(path: Path, lines) -> str:
    path.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    return str(path)


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    med = make_sentences("med", 23, 1)
    law = make_sentences("law", 19, 2)
    med.insert(5, "")  # an empty line: no record, but it keeps its line number
    return {"med": _write(tmp_path / "med.txt", med), "law": _write(tmp_path / "law.txt", law),
            "in": _write(tmp_path / "in.txt", make_sentences("med", 6, 3)), "tmp": tmp_path}


def _outputs(d: Path) -> dict:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*"))
            if p.is_file() and p.name != "run.json"}


# ------------------------------------------------------------------ the stream

def test_a_stream_gives_the_records_a_corpus_holds(data, tmp_path):
    files = [data["med"], data["law"]]
    source = PoolSource.open(files)
    whole = read_corpus(files)
    assert len(source) == len(whole) == 42
    got = [(c.texts, c.ids) for _, c, _, _ in source.shards(8)]
    assert [t for texts, _ in got for t in texts] == whole.texts
    assert [i for _, ids in got for i in ids] == whole.ids
    # shards marked done are read past, not built
    assert [k for k, *_ in source.shards(8, done={0, 2, 3})] == [1, 4, 5]
    # a parallel pool: the pair is skipped when either side is empty, as read_parallel does
    de = _write(tmp_path / "med.de", [f"DE {i}" if i != 7 else "" for i in range(24)])
    par = PoolSource.open([data["med"]], [de])
    ref = read_parallel(data["med"], de)
    c = par.corpus()
    assert c.texts == ref.texts and c.targets == ref.targets and c.ids == ref.ids
    assert par.take(np.array([0, 3])).targets == [ref.targets[0], ref.targets[3]]


def test_a_stream_and_a_corpus_in_memory_score_alike(data):
    files = [data["med"], data["law"]]
    ind = read_corpus([data["in"]])
    ds.run(ds.RunSpec.single("cosine", ind, PoolSource.open(files), data["tmp"] / "stream", params={"embedder": "tfidf", "progress": False}, execution=Execution(shard_size=5))).signature
    ds.run(ds.RunSpec.single("cosine", ind, read_corpus(files), data["tmp"] / "memory", params={"embedder": "tfidf", "progress": False}, execution=Execution(shard_size=5))).signature
    ds.run(ds.RunSpec.single("cosine", ind, PoolSource.open(files), data["tmp"] / "one", params={"embedder": "tfidf", "progress": False}, execution=Execution(shard_size=1000))).signature
    for name in ("scores.npy", "ids.npy", "scores.tsv", "pool.json"):
        assert (data["tmp"] / "stream" / name).read_bytes() == (data["tmp"] / "memory" / name).read_bytes(), name
    # other shard sizes: the same scores up to the last bits of a matrix product
    np.testing.assert_allclose(np.load(data["tmp"] / "one" / "scores.npy"),
                               np.load(data["tmp"] / "stream" / "scores.npy"), rtol=0, atol=1e-12)
    ids = np.load(data["tmp"] / "stream" / "ids.npy")
    assert ids.dtype == np.int64 and ids.shape == (42, 2) and 6 not in ids[ids[:, 0] == 0, 1]  # line 6 is empty


def test_strip_id_scores_a_numbered_pool_as_the_plain_one_and_keeps_its_bytes(data, tmp_path, capsys):
    from domainsift.io.corpus import strip_line_id
    assert [strip_line_id(t) for t in ("12: dose", " [3]  tablet", "4 | x", "2. For the years", "5:", "a: b")] == [
        "dose", "tablet", "x", "2. For the years", "", "a: b"]  # an ID alone: an empty line, left out
    plain = [data["med"], data["law"]]
    # every line numbered, the empty ones too ("6:"), as a numbering tool writes them: left out as empty lines
    numbered = [_write(tmp_path / f"n{k}.txt", [f"{i}: {t}" if t else f"{i}:" for i, t in
                                                 enumerate(Path(f).read_text(encoding="utf-8").splitlines(), 1)])
                for k, f in enumerate(plain)]
    ind_numbered = _write(tmp_path / "in-n.txt", [f"[{i}] {t}" for i, t in
                                                  enumerate(Path(data["in"]).read_text().splitlines())])
    common = ["--method", "cosine", "--model", "tfidf", "--top", "5", "--shard-size", "7", "--cache", ""]
    assert main(["-q", "select", *common, "--in-domain", data["in"], "--pool", *plain, "--out", "plain"]) == 0
    assert main(["-q", "select", *common, "--in-domain", ind_numbered, "--pool", *numbered, "--out", "stripped",
                 "--strip-id"]) == 0
    assert main(["-q", "select", *common, "--in-domain", data["in"], "--pool", *numbered, "--out", "kept"]) == 0
    scores = {d: np.load(tmp_path / d / "scores.npy") for d in ("plain", "stripped", "kept")}
    assert scores["stripped"].tobytes() == scores["plain"].tobytes()
    assert scores["kept"].tobytes() != scores["plain"].tobytes()  # the numbers are text without the flag
    selected = (tmp_path / "stripped" / "selected.txt").read_text().splitlines()
    plain_selected = (tmp_path / "plain" / "selected.txt").read_text().splitlines()
    assert [strip_line_id(t) for t in selected] == plain_selected and all(t[0].isdigit() for t in selected)
    import json
    assert json.loads((tmp_path / "stripped" / "pool.json").read_text())["reader"]["strip_id"] is True
    assert "strip_id" not in json.loads((tmp_path / "plain" / "pool.json").read_text())["reader"]
    assert "|strip_id:True|" in json.loads((tmp_path / "stripped" / "signature.json").read_text())["signature"]
    # the Python API: a corpus read in memory with strip_id scores alike, and its run records the reader
    ds.run(ds.RunSpec.single("cosine", read_corpus([ind_numbered], strip_id=True), read_corpus(numbered, strip_id=True), tmp_path / "memory", params={"embedder": "tfidf", "progress": False, "cache_dir": ""})).signature
    assert np.load(tmp_path / "memory" / "scores.npy").tobytes() == scores["plain"].tobytes()
    assert json.loads((tmp_path / "memory" / "pool.json").read_text())["reader"]["strip_id"] is True
    # chosen again from the saved scores: the best 3 of those 5, the lines' own bytes again
    assert main(["-q", "select", "--from-scores", "stripped", "--top", "3", "--out", "again"]) == 0
    again = (tmp_path / "again" / "selected.txt").read_text().splitlines()
    assert len(again) == 3 and set(again) <= set(selected)


@pytest.mark.parametrize("method", ["cosine", "finetune", "student", "moore-lewis", "cosine-tfidf"])
def test_scores_do_not_depend_on_the_shard_size_to_the_bit(method, data, tiny_models):
    """Issue 45, item 8: a line's score is computed from its own text alone (int8 encoder rows, a linear
    head and the cosine summed row by row), so shards of 3 lines and one shard give the same bytes."""
    ind, files = read_corpus([data["in"]]), [data["med"], data["law"]]
    params = {"cosine": {"embedder": tiny_models["bert"]},
              "finetune": {"model": tiny_models["bert"], "epochs": 1},
              "student": {"model": tiny_models["bert"], "sample": 100},
              "moore-lewis": {"order": 2}, "cosine-tfidf": {"embedder": "tfidf"}}[method]
    out = {}
    for size in (3, 1000):
        d = data["tmp"] / f"{method}-{size}"
        ds.run(ds.RunSpec.single(method.split("-tfidf")[0], ind, PoolSource.open(files), d, params={**params, "progress": False}, execution=Execution(shard_size=size))).signature
        out[size] = (d / "scores.npy").read_bytes()
    assert out[3] == out[1000]


@pytest.mark.gpu
def test_on_a_gpu_a_shard_size_gives_the_same_bytes_and_another_the_same_scores_to_fp32(data, tiny_models):
    """On a CUDA GPU (PyTorch, fp32) the batch a line is encoded in picks the kernels, so the test above
    does not hold to the bit there: what holds is the same bytes for the same shard size (a rerun, or a
    killed run resumed) and, for another shard size, the same scores to fp32 rounding. Runs where CUDA
    exists; elsewhere it is reported as skipped (the CPU's stronger property is the test above)."""
    ind, files = read_corpus([data["in"]]), [data["med"], data["law"]]
    out = {}
    for run, size in (("a", 3), ("b", 3), ("c", 1000)):
        d = data["tmp"] / f"gpu-{run}"
        ds.run(ds.RunSpec.single("cosine", ind, PoolSource.open(files), d, params={"embedder": tiny_models["bert"], "device": "cuda", "cache_dir": "", "progress": False}, execution=Execution(shard_size=size))).signature
        out[run] = (d / "scores.npy").read_bytes()
    assert out["a"] == out["b"]
    np.testing.assert_allclose(np.load(data["tmp"] / "gpu-c" / "scores.npy"),
                               np.load(data["tmp"] / "gpu-a" / "scores.npy"), rtol=1e-5, atol=1e-6)


def test_random_scores_do_not_depend_on_the_shards(data):
    ind, files = read_corpus([data["in"]]), [data["med"], data["law"]]
    ds.run(ds.RunSpec.single("random", ind, PoolSource.open(files), data["tmp"] / "a", params={"seed": 4}, execution=Execution(shard_size=3))).signature
    ds.run(ds.RunSpec.single("random", ind, PoolSource.open(files), data["tmp"] / "b", params={"seed": 4}, execution=Execution(shard_size=100))).signature
    a, b = np.load(data["tmp"] / "a" / "scores.npy"), np.load(data["tmp"] / "b" / "scores.npy")
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, np.random.default_rng(4).random(42))


def test_a_large_pool_is_fitted_on_a_seeded_sample(data):
    """A selector that fits on the pool sees at most fit_sample records of it, and says so."""
    seen = []
    from domainsift.select.moore_lewis import MooreLewisSelector
    real_fit = MooreLewisSelector.fit

    def spy(self, in_domain, pool=None):
        seen.append(list(pool.ids))
        return real_fit(self, in_domain, pool)

    MooreLewisSelector.fit = spy
    try:
        sig = ds.run(ds.RunSpec.single("moore-lewis", read_corpus([data["in"]]), PoolSource.open([data["med"], data["law"]]), data["tmp"] / "r", params={"order": 1}, execution=Execution(fit_sample=10, shard_size=8))).signature
    finally:
        MooreLewisSelector.fit = real_fit
    assert len(seen[0]) == 10 and len(set(seen[0])) == 10 and sig["fit_sample"] == 10
    assert np.load(data["tmp"] / "r" / "scores.npy").shape == (42,)


# ------------------------------------------------------------------ kills

@pytest.mark.parametrize("where,k", [("shard", 1), ("shard", 4), ("assemble", 1), ("assemble", 2)])
def test_a_killed_run_resumes_to_the_same_bytes(where, k, data, monkeypatch):
    import domainsift.engine.shards as engine
    argv = ["select", "--method", "cosine", "--model", "tfidf", "--in-domain", data["in"], "--pool", data["med"],
            data["law"], "--top", "7", "--shard-size", "6", "--out", "run"]
    assert main(["-q", *argv]) == 0
    reference = _outputs(data["tmp"] / "run")
    (data["tmp"] / "run").rename(data["tmp"] / "uninterrupted")

    if where == "shard":
        run_killed(argv, "domainsift.engine.shards:write_shard", k, data["tmp"])
    else:  # while the run directory is being assembled
        run_killed(argv, "domainsift.rundir.scores:_stream_npy", k, data["tmp"], when="before")
    assert not (data["tmp"] / "run" / "signature.json").exists()
    state = next((data["tmp"] / "run" / ".resume").iterdir())
    done = finished_shards(state)
    assert len(done) == (k if where == "shard" else 7)  # 42 records in shards of 6

    scored = []
    real = engine.write_shard
    monkeypatch.setattr(engine, "write_shard", lambda st, shard, *a: (scored.append(shard), real(st, shard, *a)))
    assert main(["-q", *argv]) == 0
    assert sorted(scored) == sorted(set(range(7)) - done)  # only the unfinished shards
    assert _outputs(data["tmp"] / "run") == reference


# ------------------------------------------------------------------ Ray

@pytest.fixture(scope="module")
def ray_cluster():
    import ray  # the test extra installs it: a missing Ray fails here, it is never skipped
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.parametrize("method", ["cosine", "finetune", "random", "moore-lewis", "crosslingual"])
def test_ray_actors_score_as_the_local_engine(method, ray_cluster, tiny_models, tmp_path):
    """A local Ray cluster with two workers: the same scores, byte for byte, as the local engine.
    Each engine has its own (empty) vector cache, so nothing is shared but the inputs."""
    pool_file = _write(tmp_path / "pool.txt", make_sentences("med", 30, 1) + make_sentences("law", 30, 2))
    ind = read_corpus([_write(tmp_path / "in.txt", make_sentences("med", 8, 3))])
    params = {"cosine": {"embedder": tiny_models["bert"]}, "random": {},
              "finetune": {"model": tiny_models["bert"], "epochs": 1, "batch_size": 8, "holdout": 0.0},
              "moore-lewis": {"order": 2},  # its saved LMs travel as ARPA files
              "crosslingual": {"epochs": 2}}[method]  # its fit travels as arrays (the head, the map)
    out = {}
    for engine in ("local", "ray"):
        p = {**params, **({"cache_dir": str(tmp_path / f"cache-{engine}")} if method not in ("random", "moore-lewis")
                          else {})}
        ds.run(ds.RunSpec.single(method, ind, PoolSource.open([pool_file]), tmp_path / engine, params=p, execution=Execution(shard_size=16, engine=engine, workers=2))).signature
        out[engine] = _outputs(tmp_path / engine)
    assert out["ray"].keys() == out["local"].keys()
    if method == "crosslingual":
        # its default encoder, USE-m, runs its matrix products in NumPy's BLAS, whose results change in the
        # last bits with the number of BLAS threads on some CPUs (OpenBLAS's Haswell kernel; a Ray actor runs
        # one thread): the same scores within float32 rounding, the same ids
        assert out["ray"]["ids.npy"] == out["local"]["ids.npy"]
        np.testing.assert_allclose(np.load(tmp_path / "ray" / "scores.npy"), np.load(tmp_path / "local" / "scores.npy"),
                                   rtol=0, atol=1e-6)
        return
    for name in ("scores.npy", "ids.npy", "scores.tsv"):
        assert out["ray"][name] == out["local"][name], name


@pytest.mark.slow
@pytest.mark.ray
def test_ray_scores_a_pool_held_in_memory_as_the_local_engine(ray_cluster, tiny_models, tmp_path):
    """A Python user's Corpus has no files for the workers to open: its shards' texts travel to the
    actors, and the driver writes their files; the same bytes as the local engine."""
    pool = read_corpus([_write(tmp_path / "pool.txt", make_sentences("med", 30, 1) + make_sentences("law", 30, 2))])
    ind = read_corpus([_write(tmp_path / "in.txt", make_sentences("med", 8, 3))])
    out = {}
    for engine in ("local", "ray"):
        ds.run(ds.RunSpec.single("cosine", ind, pool, tmp_path / engine, params={"embedder": tiny_models["bert"], "cache_dir": str(tmp_path / f"cache-{engine}")}, execution=Execution(shard_size=16, engine=engine, workers=2))).signature
        out[engine] = {n: (tmp_path / engine / n).read_bytes() for n in ("scores.npy", "ids.npy", "scores.tsv")}
    assert out["ray"] == out["local"]


def test_memory_source_keeps_ids_of_their_own_files():
    from domainsift.io.corpus import Corpus
    c = Corpus(["a", "b", "c"], [("x", 3), ("y", 1), ("x", 9)], ["x", "y"])
    src = MemorySource(c)
    (_, part, fidx, lines), = list(src.shards(10))
    assert part.ids == c.ids and fidx.tolist() == [0, 1, 0] and lines.tolist() == [3, 1, 9]


@pytest.mark.parametrize("rule", [{"top": 7}, {"fraction": 0.3}, {"threshold": 0.5}, {"positive": True}])
def test_choosing_chunk_by_chunk_equals_sorting_the_whole_pool(rule):
    """choose() reads the scores a chunk at a time (bounded memory): the same indices, ties by position."""
    from domainsift.select.base import choose
    rng = np.random.default_rng(0)
    scores = np.round(rng.random(1000), 2)  # many ties
    order = np.lexsort((np.arange(1000), -scores))
    expected = {"top": order[:7], "fraction": order[:300], "threshold": order[scores[order] >= 0.5],
                "positive": order[scores[order] > 0.5]}[next(iter(rule))]
    for chunk in (1, 3, 64, 1 << 20):
        np.testing.assert_array_equal(choose(scores, probabilistic=True, chunk=chunk, **rule), expected)
