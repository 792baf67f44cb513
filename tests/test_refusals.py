"""What is refused up front, rebuilt, or capped with a warning: mixed formats, truncated Zstandard,
combine of changed inputs, a run directory replaced by another kind of run, report and downstream on
changed inputs, two runs into one --out, damaged shards, sampler state, options (--max-length, Ray's
--workers, --address and methods that cannot travel), file names and line breaks."""

import domainsift as ds
import json
import logging
import os
import socket
from pathlib import Path

import numpy as np
import pytest

from domainsift.engine import Execution

from conftest import cli_data, make_sentences, run_cli, write_lines
from domainsift import rundir
from domainsift.cli import main
from domainsift._internal.errors import DomainsiftError, InputError


_write, _run = write_lines, run_cli


def _one_line(rc, err, *words):
    assert rc == 2, err
    assert err.count("\n") == 0 and "Traceback" not in err, err
    for w in words:
        assert w in err, err


@pytest.fixture
def data(tmp_path, monkeypatch):
    return cli_data(tmp_path, monkeypatch)


def _parquet(path: Path, texts) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"text": list(texts)}), str(path))
    return path


# 1. mixed formats -------------------------------------------------------------------------------

@pytest.mark.parametrize("parquet_first", [False, True])
def test_a_pool_that_mixes_text_and_parquet_is_refused_up_front(parquet_first, data, capsys):
    mix = data["tmp"] / "mix"
    mix.mkdir()
    names = ("z.txt", "a.parquet") if parquet_first else ("a.txt", "z.parquet")
    _write(mix / names[0] if names[0].endswith(".txt") else mix / names[1], make_sentences("med", 30, 4))
    _parquet(mix / (names[1] if names[1].endswith(".parquet") else names[0]), make_sentences("law", 100, 5))
    rc, err, _ = _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", mix, "--top", "5",
                       "--out", "sel"], capsys)
    _one_line(rc, err, "mixes formats", "parquet", "text")
    assert not (data["tmp"] / "sel" / rundir.SCORES).exists()


def test_a_pool_in_memory_with_mixed_formats_is_refused_before_scoring(data):
    from domainsift.io.corpus import Corpus
    pq = _parquet(data["tmp"] / "b.parquet", ["x y"])
    pool = Corpus(["a b", "x y"], [(str(data["med"]), 1), (str(pq), 1)], [str(data["med"]), str(pq)])
    with pytest.raises(InputError, match="mixes formats"):
        ds.run(ds.RunSpec.single("random", Corpus(["a"], [("in", 1)], ["in"]), pool, data["tmp"] / "r")).signature


# 2. truncated Zstandard -------------------------------------------------------------------------

def test_a_truncated_zstd_file_is_a_one_line_error_not_a_short_read(data, capsys):
    zstandard = pytest.importorskip("zstandard")
    lines = [f"line {i} of the pool with words" for i in range(5000)]
    blob = zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode())
    full = data["tmp"] / "full.txt.zst"
    full.write_bytes(blob)
    cut = data["tmp"] / "cut.txt.zst"
    cut.write_bytes(blob[:int(len(blob) * 0.9)])
    tail = data["tmp"] / "tail.txt.zst"
    other = zstandard.ZstdCompressor().compress(("\n".join(lines[::-1]) + "\n").encode())
    assert len(other) > 2000
    tail.write_bytes(blob + other[:1000])  # a whole file, then 1,000 bytes of another frame
    small = data["tmp"] / "small.txt.zst"
    small.write_bytes(zstandard.ZstdCompressor().compress(b"hello\nworld\n")[:-3])
    two = data["tmp"] / "two.txt.zst"
    two.write_bytes(zstandard.ZstdCompressor().compress(b"a\n") + zstandard.ZstdCompressor().compress(b"b\n"))
    from domainsift.io.corpus import read_corpus
    assert len(read_corpus(full)) == 5000
    assert read_corpus(two).texts == ["a", "b"]  # several whole frames are one stream
    for bad in (cut, tail, small):
        with pytest.raises(InputError, match="cannot read") as exc:
            read_corpus(bad)
        assert str(bad) in str(exc.value)
    rc, err, _ = _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", cut, "--out", "r"], capsys)
    _one_line(rc, err, "cut.txt.zst", "cannot read")


# 3. combine of runs whose inputs differ ---------------------------------------------------------

def test_combine_refuses_runs_of_one_path_whose_content_changed(data, capsys):
    pool = _write(data["tmp"] / "pool.txt", make_sentences("med", 20, 7))
    assert _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", pool, "--out", "a"], capsys)[0] == 0
    _write(pool, make_sentences("law", 20, 8))  # the same path, the same number of lines, other text
    assert _run(["score", "--method", "random", "--seed", "1", "--in-domain", data["in"], "--pool", pool,
                 "--out", "b"], capsys)[0] == 0
    rc, err, _ = _run(["combine", "a", "b", "--out", "c"], capsys)
    _one_line(rc, err, "contents")
    assert not (data["tmp"] / "c" / rundir.SCORES).exists()


# 4. a run directory is never replaced by another kind of run ------------------------------------

def test_a_selection_never_replaces_another_score_run(data, capsys):
    args = ["--in-domain", data["in"], "--pool", data["med"], data["law"]]
    assert _run(["score", "--method", "random", *args, "--out", "runA"], capsys)[0] == 0
    assert _run(["score", "--method", "random", "--seed", "5", *args, "--out", "expensive"], capsys)[0] == 0
    before = {n: (data["tmp"] / "expensive" / n).read_bytes() for n in (rundir.SCORES, rundir.SIGNATURE, rundir.RUN)}
    rc, err, _ = _run(["select", "--from-scores", "runA", "--top", "5", "--out", "expensive"], capsys)
    _one_line(rc, err, "expensive", "score run", "--overwrite")
    assert {n: (data["tmp"] / "expensive" / n).read_bytes() for n in before} == before
    # re-selecting into the score directory itself, or into a selection directory, stays allowed
    assert _run(["select", "--from-scores", "expensive", "--top", "3"], capsys)[0] == 0
    assert _run(["select", "--from-scores", "runA", "--top", "5", "--out", "sel"], capsys)[0] == 0
    assert _run(["select", "--from-scores", "expensive", "--top", "4", "--out", "sel"], capsys)[0] == 0
    # and a score run does not replace a selection or a clustering either, unless asked to
    rc, err, _ = _run(["score", "--method", "random", *args, "--out", "sel"], capsys)
    _one_line(rc, err, "selection run")
    assert _run(["select", "--from-scores", "runA", "--top", "5", "--out", "expensive", "--overwrite"], capsys)[0] == 0
    assert not (data["tmp"] / "expensive" / rundir.SCORES).exists()


# 5. report and downstream verify their inputs ---------------------------------------------------

def test_report_and_downstream_refuse_a_pool_that_changed(data, capsys):
    pytest.importorskip("bokeh")
    assert _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", data["med"], data["law"],
                 "--top", "5", "--out", "run"], capsys)[0] == 0
    assert _run(["report", "run", "--out", "ok.html"], capsys)[0] == 0
    _write(data["law"], make_sentences("it", 20, 9))  # same lines count, other sentences
    rc, err, _ = _run(["report", "run", "--out", "page.html"], capsys)
    _one_line(rc, err, "law.txt", "changed")
    assert not (data["tmp"] / "page.html").exists()
    test = _write(data["tmp"] / "test.txt", make_sentences("med", 5, 11))
    rc, err, _ = _run(["downstream", "run", "--test", test, "--out", "ds"], capsys)
    _one_line(rc, err, "law.txt", "changed")


def test_the_report_says_the_rule_in_words_and_maps_the_selection(data, capsys):
    pytest.importorskip("bokeh")
    assert _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", data["med"], data["law"],
                 "--top", "7", "--out", "run"], capsys)[0] == 0
    assert _run(["report", "run", "--out", "page.html"], capsys)[0] == 0
    page = (data["tmp"] / "page.html").read_text(encoding="utf-8")
    assert "7 of 40 records selected: the 7 best-scoring records." in page
    assert "{&#x27;top&#x27;" not in page and "{'top'" not in page
    assert "selmap-r0" in page and "40 of 40 pool records; 7 of them selected" in page


# 6. two runs into one --out at once -------------------------------------------------------------

def test_a_second_run_into_a_locked_out_fails_at_once(data, capsys):
    args = ["--in-domain", data["in"], "--pool", data["med"], data["law"], "--top", "5", "--out", "run"]
    assert _run(["select", "--method", "random", *args], capsys)[0] == 0
    before = (data["tmp"] / "run" / rundir.SCORES).read_bytes()
    with rundir.claim(data["tmp"] / "run", "score"):  # another run is writing there
        rc, err, _ = _run(["select", "--method", "random", "--seed", "3", *args], capsys)
        _one_line(rc, err, "another domainsift run is writing")
        rc, err, _ = _run(["select", "--from-scores", "run", "--top", "2"], capsys)
        _one_line(rc, err, "another domainsift run is writing")
    assert (data["tmp"] / "run" / rundir.SCORES).read_bytes() == before
    assert _run(["select", "--method", "random", "--seed", "3", *args, "--overwrite"], capsys)[0] == 0  # released


# 7. a damaged shard ------------------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["truncate", "random", "length", "marker"])
def test_a_damaged_shard_is_scored_again(damage, data, capsys):
    from domainsift.engine.shards import shard_paths
    argv = ["select", "--method", "cosine", "--model", "tfidf", "--in-domain", data["in"], "--pool", data["med"],
            data["law"], "--top", "7", "--shard-size", "6", "--out", "run"]
    assert _run(argv, capsys)[0] == 0
    reference = (data["tmp"] / "run" / rundir.SCORES).read_bytes()
    (data["tmp"] / "run").rename(data["tmp"] / "done")

    import domainsift.engine.shards as shards
    real = shards.write_shard

    class Stop(Exception):
        pass

    def stop_after_three(state, shard, *a):
        real(state, shard, *a)
        if shard == 2:
            raise Stop()
    shards.write_shard = stop_after_three
    try:
        with pytest.raises(Stop):
            main(["-q", *map(str, argv)])
    finally:
        shards.write_shard = real
    state = next((data["tmp"] / "run" / ".resume").iterdir())
    s_path, i_path, done = shard_paths(state, 1)
    if damage == "truncate":
        s_path.write_bytes(s_path.read_bytes()[:-5])
    elif damage == "random":
        s_path.write_bytes(np.random.default_rng(0).bytes(len(s_path.read_bytes())))
    elif damage == "length":
        np.save(i_path, np.zeros((3, 2), dtype=np.int64))
    else:
        done.write_text("{not json")
    assert _run(argv, capsys)[0] == 0
    assert (data["tmp"] / "run" / rundir.SCORES).read_bytes() == reference


# 8. sampler state and parameters ----------------------------------------------------------------

@pytest.fixture
def sampler_cls():
    pytest.importorskip("torch")
    from domainsift.sampling import DomainSampler
    return DomainSampler


LABELS = ["a"] * 5 + ["b"] * 3 + ["c"] * 2


def test_a_state_of_the_same_policy_with_other_parameters_is_refused(sampler_cls):
    from domainsift.sampling import MDAC, MixedAlpha
    state = sampler_cls(LABELS, 4, MixedAlpha(1.0)).state_dict()
    with pytest.raises(DomainsiftError, match="alpha=1.0"):
        sampler_cls(LABELS, 4, MixedAlpha(0.0)).load_state_dict(state)
    state = sampler_cls(LABELS, 4, MDAC(k=5, lr_data=0.01)).state_dict()
    for other in (MDAC(k=6, lr_data=0.01), MDAC(k=5, lr_data=0.02)):
        with pytest.raises(DomainsiftError, match="sampler state was saved by mdac"):
            sampler_cls(LABELS, 4, other).load_state_dict(state)
    sampler_cls(LABELS, 4, MDAC(k=5, lr_data=0.01)).load_state_dict(state)  # the same parameters load


@pytest.mark.parametrize("spoil", ["nan-weights", "n-weights", "negative-position", "missing-key", "none",
                                   "psi-nan", "psi-length", "history-order"])
def test_a_damaged_state_is_a_one_line_error_and_changes_nothing(spoil, sampler_cls):
    from domainsift.sampling import MDAC
    s = sampler_cls(LABELS, 4, MDAC())
    state = json.loads(json.dumps(s.state_dict()))
    state["history"].append({"batch": 3, "weights": [0.5, 0.3, 0.2], "reason": "set"})
    if spoil == "nan-weights":
        state["history"][0]["weights"] = [float("nan"), 0.5, 0.5]
    elif spoil == "n-weights":
        state["history"][0]["weights"] = [0.5, 0.5]
    elif spoil == "negative-position":
        state["position"] = -1
    elif spoil == "missing-key":
        del state["history"]
    elif spoil == "none":
        state = None
    elif spoil == "psi-nan":
        state["policy"]["psi"] = [float("nan")] * 3
    elif spoil == "psi-length":
        state["policy"]["psi"] = [1.0]
    else:
        state["history"][1]["batch"] = -4
    fresh = sampler_cls(LABELS, 4, MDAC())
    before = json.dumps(fresh.state_dict())
    with pytest.raises(DomainsiftError) as exc:
        fresh.load_state_dict(state)
    assert "\n" not in str(exc.value)
    assert json.dumps(fresh.state_dict()) == before


def test_sampler_parameters_and_losses_refuse_non_numbers():
    pytest.importorskip("torch")
    from domainsift.sampling import DDS, MDAC, MixedAlpha, mixed_weights
    from domainsift.sampling.policy import mixture_loss
    w = MixedAlpha(2000.0).initial_weights(np.array([5, 3, 2]))
    assert np.all(np.isfinite(w)) and w.argmax() == 0 and abs(w.sum() - 1) < 1e-12
    assert np.allclose(mixed_weights([5, 3, 2], 1.0), [0.5, 0.3, 0.2])
    for bad in (float("nan"), float("inf"), -1.0, "0.1"):
        with pytest.raises(DomainsiftError, match="lr_data"):
            MDAC(lr_data=bad)
        with pytest.raises(DomainsiftError, match="lr_data"):
            DDS(lr_data=bad)
    with pytest.raises(DomainsiftError, match="beta"):
        MDAC(beta=float("nan"))
    with pytest.raises(DomainsiftError, match="alpha"):
        MixedAlpha(float("nan"))
    with pytest.raises(DomainsiftError, match="finite"):
        mixture_loss({"a": 1, "b": 2}, {"a": float("nan"), "b": 1.0}, lambda m, d: d)


def test_read_domains_on_invalid_utf8_names_the_line(tmp_path):
    from domainsift.sampling import read_domains
    p = tmp_path / "labels.txt"
    p.write_bytes(b"med\nlaw\n\xff\xfe\n")
    with pytest.raises(InputError, match=r"labels.txt:3: invalid UTF-8"):
        read_domains(p)
    d = tmp_path / "clusters"
    d.mkdir()
    (d / rundir.CLUSTERS).write_bytes(b"file\tline\tcluster\nx\t1\t0\nx\t2\t\xff\n")
    with pytest.raises(InputError, match=r"clusters.tsv:3: invalid UTF-8"):
        read_domains(d)


# 9. options --------------------------------------------------------------------------------------

def test_max_length_beyond_the_model_is_capped_with_a_warning(tiny_models, caplog):
    from domainsift.embed.transformers import TransformersEmbedder, clamp_max_length
    from domainsift.select import get_selector
    model = tiny_models["bert"]  # max_position_embeddings=64
    clamp_max_length.cache_clear()
    with caplog.at_level(logging.WARNING):
        emb = TransformersEmbedder(model, max_length=513, backend="torch", progress=False)
    assert emb.max_length == 64 and "using 64" in caplog.text
    long_line = " ".join(["dose tablet patient"] * 100)
    v = emb.encode([long_line, "dose"])
    assert v.shape[0] == 2 and np.all(np.isfinite(v))
    sel = get_selector("cosine", embedder=model, max_length=513, backend="torch", progress=False)
    assert sel.signature_params()["max_length"] == 64  # the signature says what ran


def test_ray_options_fail_before_any_work(data, monkeypatch, caplog):
    pytest.importorskip("ray")
    from domainsift.io.corpus import read_corpus
    from domainsift.engine.ray import plan
    from domainsift.select import get_selector
    # more workers than CPUs: capped, with a warning
    with caplog.at_level(logging.WARNING):
        assert plan(get_selector("random"), 24, None) == (os.cpu_count() or 1)
    assert "more than this machine's" in caplog.text
    # an address with no cluster: one line at once, not minutes of waiting
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free_port = s.getsockname()[1]
    with pytest.raises(DomainsiftError, match="no Ray cluster answers"):
        plan(get_selector("random"), None, f"127.0.0.1:{free_port}")
    # a method that cannot travel to workers (no fitted_state, no saved folder) is refused before its fit
    from domainsift.select import SELECTORS
    monkeypatch.setitem(SELECTORS, "stuck", "test_refusals:Stuck")
    Stuck.fits = []
    with pytest.raises(DomainsiftError, match="cannot be shipped"):
        ds.run(ds.RunSpec.single("stuck", read_corpus(data["in"]), read_corpus([data["med"]]), data["tmp"] / "r", execution=Execution(engine="ray"))).signature
    assert Stuck.fits == []


from domainsift.select.base import BaseSelector  # noqa: E402


class Stuck(BaseSelector):
    """A selector whose fit cannot travel: it learns something that is neither a dict nor a folder."""

    name = "stuck"
    learned = ("thing_",)
    fits: list = []

    def fit(self, in_domain, pool=None):
        self.fits.append(1)
        self.thing_ = object()
        return self

    def score(self, records):
        return np.zeros(len(records))


# 10. file names and line breaks ------------------------------------------------------------------

def test_a_pool_file_name_that_is_not_utf8_fails_before_scoring(data, capsys):
    name = os.fsdecode(b"pool-\xff.txt")
    _write(data["tmp"] / name, make_sentences("med", 10, 12))
    rc, err, _ = _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", data["tmp"] / name,
                       "--top", "3", "--out", "run"], capsys)
    _one_line(rc, err, "not valid UTF-8")
    assert not (data["tmp"] / "run" / ".resume").exists()
    assert not (data["tmp"] / "run" / rundir.SCORES).exists()


def test_parquet_texts_with_line_breaks_are_not_split_by_out_format_text(data, capsys):
    pq = _parquet(data["tmp"] / "pool.parquet", ["one line", "two\nlines", "three", "four\r\nfive"])
    assert _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", pq, "--top", "4",
                 "--out", "run"], capsys)[0] == 0
    rc, err, _ = _run(["select", "--from-scores", "run", "--top", "4", "--out", "t", "--out-format", "text"], capsys)
    _one_line(rc, err, "line break", "jsonl")
    assert not list((data["tmp"] / "t").glob("selected*"))
    assert _run(["select", "--from-scores", "run", "--top", "4", "--out", "j", "--out-format", "jsonl"], capsys)[0] == 0
    rows = [json.loads(x) for x in (data["tmp"] / "j" / "selected.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(r["text"] for r in rows) == sorted(["one line", "two\nlines", "three", "four\r\nfive"])


# the lifecycle: a second fit starts from nothing ----------------------------------------------------

def test_cosine_fitted_on_a_second_pool_keeps_nothing_of_the_first():
    from domainsift.select import get_selector
    a = [f"dose tablet patient {w}" for w in make_sentences("med", 30, 1)]
    b = make_sentences("law", 30, 2) + make_sentences("it", 30, 3)
    ind = make_sentences("law", 5, 4)
    twice = get_selector("cosine", embedder="tfidf", progress=False)
    twice.fit(ind, a)
    twice.fit(ind, b)
    once = get_selector("cosine", embedder="tfidf", progress=False).fit(ind, b)
    assert np.array_equal(twice.score(b), once.score(b))
    with pytest.raises(DomainsiftError, match="not fitted"):
        get_selector("moore-lewis").score(["a b"])


def test_an_impossible_selection_is_refused_before_any_fit(data, capsys, monkeypatch):
    """Issue 50, item 2: --top (or --resample) larger than the pool stops once the pool is counted, before
    the method is fitted or a line is scored (before 0.11.0: after the whole pool was scored)."""
    from domainsift.select.finetune import FinetuneSelector

    def no_fit(*a, **kw):
        raise AssertionError("fitted before the selection was checked against the pool")

    monkeypatch.setattr(FinetuneSelector, "fit", no_fit)
    for rule in (["--top", "10000"], ["--resample", "10000"]):
        rc, err, _ = _run(["select", "--method", "finetune", "--in-domain", data["in"], "--pool", data["med"],
                           data["law"], *rule, "--out", "run"], capsys)
        _one_line(rc, err, "from a pool of")
