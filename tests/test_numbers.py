"""Numbers that must not be silently wrong: one fitted space for the in-domain set and the pool, cache keys
that tell checkpoints and fits apart, evaluation by record id from any directory, signatures that hold
what determines a result, bad flags as one line, no global side effects, and a new method as one file
and one registry line."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from conftest import build_tiny_model, make_sentences
from domainsift.cli import main
from domainsift.io.corpus import read_corpus


def _write(path: Path, lines) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# ---------------------------------------------------------------- 1. one fitted space

@pytest.mark.parametrize("name", ["tfidf", "word2vec", "lda", "random"])
def test_a_pool_lines_vector_does_not_depend_on_its_chunk(name):
    from domainsift.embed import EmbedConfig
    pool = make_sentences("med", 30, 0) + make_sentences("law", 30, 1)
    emb = EmbedConfig(embedder=name, cache_dir="", seed=2).build(fit_on=pool)
    whole = emb.encode(pool)
    np.testing.assert_allclose(emb.encode(pool[10:20]), whole[10:20], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(emb.encode([pool[15]]), whole[15:16], rtol=1e-5, atol=1e-6)


def test_cosine_with_tfidf_scores_in_domain_and_pool_in_one_space():
    from domainsift.select import get_selector
    in_domain = make_sentences("med", 20, 5)
    pool = make_sentences("med", 20, 6) + make_sentences("law", 20, 7) + make_sentences("it", 20, 8)
    sel = get_selector("cosine", embedder="tfidf", cache_dir="", progress=False).fit(in_domain, pool)
    whole = sel.score(pool)
    chunks = np.concatenate([sel.score(pool[i:i + 7]) for i in range(0, len(pool), 7)])
    np.testing.assert_allclose(chunks, whole, rtol=1e-5, atol=1e-6)
    assert (np.argsort(-whole)[:20] < 20).all()  # one space: the medical lines rank first


def test_fitted_baseline_must_be_fitted_and_keys_its_cache_by_the_fit():
    from domainsift.embed import get_embedder
    from domainsift._internal.errors import DomainsiftError
    emb = get_embedder("tfidf")
    with pytest.raises(DomainsiftError, match="not fitted"):
        emb.encode(["a b"])
    a = get_embedder("tfidf").fit(make_sentences("med", 10, 0)).cache_key
    b = get_embedder("tfidf").fit(make_sentences("law", 10, 0)).cache_key
    assert a != b and a == get_embedder("tfidf").fit(make_sentences("med", 10, 0)).cache_key


# ---------------------------------------------------------------- 2. cache collisions

def test_two_checkpoints_named_model_do_not_share_cached_vectors(tmp_path):
    from domainsift.embed import get_embedder
    a = build_tiny_model("bert", tmp_path / "a" / "model", seed=0)
    b = build_tiny_model("bert", tmp_path / "b" / "model", seed=1)
    texts = make_sentences("med", 5, 0)
    cache = str(tmp_path / "cache")
    va = get_embedder(a, cache_dir=cache, progress=False).encode(texts)
    eb = get_embedder(b, cache_dir=cache, progress=False)
    vb = eb.encode(texts)
    assert eb.last_hits_ == 0  # nothing read from the other checkpoint's chunks
    assert not np.allclose(va, vb)
    assert get_embedder(a, cache_dir=cache, progress=False).cache_key != eb.cache_key


# ---------------------------------------------------------------- 3. evaluate's paths and records

@pytest.fixture
def selection_run(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    _write(work / "med.txt", make_sentences("med", 20, 1))
    _write(work / "law.txt", make_sentences("law", 20, 2))
    _write(work / "in.txt", make_sentences("med", 10, 3))
    monkeypatch.chdir(work)
    assert main(["-q", "select", "--method", "moore-lewis", "--order", "1", "--in-domain", "in.txt",
                 "--pool", "law.txt", "med.txt", "--top", "20", "--out", "run"]) == 0
    return work


def test_evaluate_gives_the_same_numbers_from_another_directory(selection_run, tmp_path, monkeypatch):
    assert main(["-q", "evaluate", "run", "--gold", "med.txt"]) == 0
    here = json.loads((selection_run / "run" / "eval.json").read_text())
    assert here["precision"] == 1.0 and here["n_gold"] == 20
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    other_spelling = os.path.join("..", "work", ".", "med.txt")
    assert main(["-q", "evaluate", str(selection_run / "run"), "--gold", other_spelling]) == 0
    there = json.loads((selection_run / "run" / "eval.json").read_text())
    assert {k: there[k] for k in ("precision", "recall", "f1", "n_gold")} == \
           {k: here[k] for k in ("precision", "recall", "f1", "n_gold")}


def test_a_gold_file_that_is_not_in_the_pool_is_an_error(selection_run, capsys):
    capsys.readouterr()
    assert main(["-q", "evaluate", "run", "--gold", "in.txt"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "in.txt: not one of the pool's files" in err


def test_recall_counts_the_pools_records_not_raw_lines(tmp_path):
    pool = tmp_path / "pool.jsonl"
    rows = [{"text": t} for t in make_sentences("med", 6, 0)] + [{"text": ""}, {"text": " "}]
    _write(pool, [json.dumps(r) for r in rows])
    ind = _write(tmp_path / "in.txt", make_sentences("med", 4, 1))
    assert main(["-q", "select", "--method", "random", "--in-domain", str(ind), "--pool", str(pool),
                 "--field", "text", "--fraction", "1", "--out", str(tmp_path / "run")]) == 0
    assert main(["-q", "evaluate", str(tmp_path / "run"), "--gold", str(pool)]) == 0
    ev = json.loads((tmp_path / "run" / "eval.json").read_text())
    assert ev["n_gold"] == 6 and ev["recall"] == 1.0  # two rows have no text: not records


def test_parallel_pool_gold_by_either_side(tmp_path):
    en = _write(tmp_path / "p.en", make_sentences("med", 8, 0))
    de = _write(tmp_path / "p.de", [f"DE {t}" for t in make_sentences("med", 8, 0)])
    ind = _write(tmp_path / "in.txt", make_sentences("med", 4, 1))
    assert main(["-q", "select", "--method", "random", "--in-domain", str(ind), "--pool", str(en),
                 "--pool-target", str(de), "--top", "4", "--out", str(tmp_path / "run")]) == 0
    for gold in (en, de):
        assert main(["-q", "evaluate", str(tmp_path / "run"), "--gold", str(gold)]) == 0
        ev = json.loads((tmp_path / "run" / "eval.json").read_text())
        assert ev["n_gold"] == 8 and ev["precision"] == 1.0


# ---------------------------------------------------------------- 4. reproducible signatures

def test_signature_holds_what_determines_the_result_and_nothing_else(domain_files, tmp_path):
    runs = []
    for name in ("a", "b"):
        assert main(["-q", "cluster", *map(str, domain_files), "--embedder", "tfidf", "--k", "2", "3",
                     "--pca", "0", "5", "--seeds", "2", "--no-plots", "--out", str(tmp_path / name)]) == 0
        runs.append(json.loads((tmp_path / name / "clustering.json").read_text())["signature"])
    assert runs[0] == runs[1]  # no wall time, no date
    sig = runs[0]
    assert sig["k"] == [2, 3] and sig["pca"] == [None, 5] and sig["seeds"] == [0, 1]
    assert "|k:2,3|" in sig["signature"] and "seeds:0,1" in sig["signature"]
    assert "inputs:" in sig["signature"] and "med.txt" in sig["signature"]
    assert not any("seconds" in k or k == "created" for k in sig)


def test_a_baseline_embedders_signature_names_no_encoder_setting(tmp_path):
    """What ran: cosine over tf-idf vectors reads no token length and runs no ONNX backend, so its signature
    names neither (a transformers encoder's names both)."""
    ind = _write(tmp_path / "in.txt", make_sentences("med", 4, 1))
    pool = _write(tmp_path / "pool.txt", make_sentences("law", 30, 1))
    assert main(["-q", "score", "--method", "cosine", "--model", "tfidf", "--cache", "", "--in-domain", str(ind),
                 "--pool", str(pool), "--out", str(tmp_path / "r")]) == 0
    sig = json.loads((tmp_path / "r" / "signature.json").read_text())
    assert sig["model"].startswith("tfidf") and "backend" not in sig and "max_length" not in sig
    assert "backend:" not in sig["signature"] and "max_length:" not in sig["signature"]


def test_score_signature_has_no_timing_and_the_run_json_has(tmp_path):
    ind = _write(tmp_path / "in.txt", make_sentences("med", 4, 1))
    pool = _write(tmp_path / "pool.txt", make_sentences("law", 8, 1))
    assert main(["-q", "score", "--method", "random", "--in-domain", str(ind), "--pool", str(pool),
                 "--out", str(tmp_path / "r")]) == 0
    sig = json.loads((tmp_path / "r" / "signature.json").read_text())
    assert not any("seconds" in k or k == "created" for k in sig)
    assert "score_seconds" in json.loads((tmp_path / "r" / "run.json").read_text())["timings"]


# the fingerprint of every default (selectors' declared parameters, embedding configuration; from 0.6.0 also
# ---------------------------------------------------------------- 5. bad flags: one line, exit 2, no output

BAD = [
    (["cluster", "{med}", "--embedder", "random", "--k", "500"], "more clusters than"),
    (["cluster", "{med}", "--embedder", "random", "--k", "0"], "positive integer"),
    (["cluster", "{med}", "--embedder", "random", "--pca", "-3"], "--pca"),
    (["cluster", "{med}", "--embedder", "random", "--column", "-1"], "--column"),
    (["cluster", "{med}", "--embedder", "random", "--seeds", "0"], "positive integer"),
    (["score", "--method", "moore-lewis", "--order", "0", "--in-domain", "{ind}", "--pool", "{med}"], "order"),
    (["score", "--method", "nope", "--in-domain", "{ind}", "--pool", "{med}"], "invalid choice"),
    (["score", "--method", "finetune", "--neg-cut", "1.5", "--in-domain", "{ind}", "--pool", "{med}"], "neg_cut"),
    (["score", "--method", "finetune", "--neg-cut", "a third", "--in-domain", "{ind}", "--pool", "{med}"],
     "fraction"),
    (["score", "--method", "finetune", "--epochs", "0", "--in-domain", "{ind}", "--pool", "{med}"], "epochs"),
    (["score", "--method", "cosine", "--batch-size", "0", "--in-domain", "{ind}", "--pool", "{med}"], "batch_size"),
    (["score", "--method", "cosine", "--max-length", "0", "--in-domain", "{ind}", "--pool", "{med}"], "max_length"),
    (["select", "--method", "random", "--top", "0", "--in-domain", "{ind}", "--pool", "{med}"], "positive"),
    (["select", "--method", "random", "--top", "99", "--in-domain", "{ind}", "--pool", "{med}"], "pool of 20"),
    (["select", "--method", "random", "--fraction", "2", "--in-domain", "{ind}", "--pool", "{med}"], "(0, 1]"),
    (["select", "--method", "cosine", "--positive", "--in-domain", "{ind}", "--pool", "{med}"], "probability"),
    (["select", "--method", "random", "--in-domain", "{ind}", "--pool", "{missing}", "--top", "2"], "no such file"),
    (["select", "--method", "random", "--top", "2"], "--in-domain and --pool"),
    (["downstream", "--test", "{ind}", "--reference", "a={med}", "--order", "0"], "positive integer"),
    (["downstream", "--test", "{ind}", "--reference", "nofile"], "NAME=FILE"),
    (["crossdomain", "--train", "a={med}", "--test", "a={ind}", "--no-similarity"], "two domains"),
    (["combine", "{ind}", "--top", "2"], "at least two"),
    (["evaluate", "{ind}", "--gold", "{med}"], "no pool.json"),
    (["split", "--corpus", "{missing}", "--src", "de", "--tgt", "en"], ""),
]


@pytest.mark.parametrize("argv, msg", BAD, ids=[" ".join(a[:4]) for a, _ in BAD])
def test_bad_values_exit_2_with_one_line_and_no_output(argv, msg, tmp_path, capsys):
    med = _write(tmp_path / "med.txt", make_sentences("med", 20, 1))
    ind = _write(tmp_path / "in.txt", make_sentences("med", 5, 2))
    out = tmp_path / "out"
    argv = [a.format(med=med, ind=ind, missing=tmp_path / "missing.txt") for a in argv]
    if argv[0] not in ("evaluate",):
        argv += ["--out", str(out)]
    try:
        rc = main(["-q", *argv])
    except SystemExit as exc:  # argparse
        rc = exc.code
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert err.count("\n") == 0 and err.startswith("domainsift") and "Traceback" not in err, err
    assert msg in err
    assert not out.exists()


# ---------------------------------------------------------------- 6. no global side effects

def test_loading_a_model_leaves_transformers_logging_as_it_was(tiny_models):
    from transformers.utils import logging as tlog
    from domainsift.embed import get_embedder
    before = tlog.get_verbosity()
    tlog.set_verbosity_info()
    tlog.enable_progress_bar()
    try:
        get_embedder(tiny_models["bert"], progress=False).encode(["dose tablet"])
        assert tlog.get_verbosity() == tlog.INFO and tlog.is_progress_bar_enabled()
    finally:
        tlog.set_verbosity(before)


def test_training_a_language_model_never_redirects_this_processs_streams(monkeypatch):
    # VariKN's training chatter stays in a child process; only reading the finished model (a few
    # lines of output) captures descriptors 1 and 2, for that call alone
    from domainsift.lm import NgramLM
    calls = []
    real_dup2, real_load = os.dup2, NgramLM.load
    monkeypatch.setattr(os, "dup2", lambda *a: calls.append(a) or real_dup2(*a))

    def load(self, path):
        n = len(calls)
        out = real_load(self, path)
        del calls[n:]
        return out

    monkeypatch.setattr(NgramLM, "load", load)
    lm = NgramLM(order=2).fit(make_sentences("med", 30, 0))
    assert calls == []
    assert lm.perplexity(make_sentences("med", 5, 1))["perplexity"] > 1


# ---------------------------------------------------------------- 7. the demo hides no import error

def test_demo_does_not_swallow_import_errors():
    import inspect
    import domainsift.jobs.demo as demo
    assert "except ImportError" not in inspect.getsource(demo)


# a new selection method: one file (this class) and one registry line (the fixture)
from domainsift.select.base import SEED, BaseSelector, Param  # noqa: E402


class LengthSelector(BaseSelector):
    """Prefers lines near a target length in words."""

    name = "length"
    params = (Param("words", int, 6, "preferred line length in words"), SEED)

    def fit(self, in_domain, pool=None):
        self._fit_input(in_domain, pool)
        return self

    def score(self, records):
        from domainsift.io.corpus import as_corpus
        return -np.abs(np.array([len(t.split()) for t in as_corpus(records).texts], float) - self.words)


def test_a_new_selector_is_one_file_and_one_registry_line(monkeypatch, tmp_path, capsys):
    from domainsift.select import SELECTORS
    monkeypatch.setitem(SELECTORS, "length", f"{__name__}:LengthSelector")
    ind = _write(tmp_path / "in.txt", ["a b c"])
    pool = _write(tmp_path / "pool.txt", ["one two", "one two three four five", "x " * 9])
    assert main(["-q", "select", "--method", "length", "--words", "5", "--in-domain", str(ind),
                 "--pool", str(pool), "--top", "1", "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "selected.txt").read_text() == "one two three four five\n"
    sig = json.loads((tmp_path / "r" / "signature.json").read_text())
    assert sig["method"] == "length" and sig["words"] == 5
    try:
        main(["select", "--help"])
    except SystemExit:
        pass
    assert "--words" in capsys.readouterr().out


def test_selectors_take_records_with_ids_and_both_sides(tmp_path):
    from domainsift.io.corpus import read_parallel
    from domainsift.select.base import BaseSelector
    seen = {}

    class Spy(BaseSelector):
        name = "spy"
        needs_pool = True

        def fit(self, in_domain, pool=None):
            seen["pool"] = pool
            return self

        def score(self, records):
            seen.setdefault("chunks", []).append(records)
            return np.zeros(len(records))

    en = _write(tmp_path / "p.en", ["a b", "c d", "e f"])
    de = _write(tmp_path / "p.de", ["A B", "C D", "E F"])
    from domainsift.engine import Execution, score_shards
    from domainsift.pipeline.stages import fit
    from domainsift.io.source import MemorySource, PoolSource
    # the same records reach the selector from a pool in memory and from a pool read as a stream
    for k, source in enumerate([MemorySource(read_parallel(en, de)), PoolSource.open([en], [de])]):
        seen.clear()
        sel = Spy()
        fit(sel, read_corpus([en]), lambda: source.scan({"fit": (100, 0)}).samples["fit"], tmp_path / f"model{k}")
        score_shards(sel, source, tmp_path / f"state{k}", Execution(shard_size=2))
        assert seen["pool"].targets == ["A B", "C D", "E F"]
        assert [c.ids for c in seen["chunks"]] == [[(str(en), 1), (str(en), 2)], [(str(en), 3)]]
        assert seen["chunks"][1].targets == ["E F"]


def test_reselection_refuses_a_pool_file_that_changed(selection_run, capsys):
    assert main(["-q", "select", "--from-scores", "run", "--top", "5", "--out", "again"]) == 0
    med = selection_run / "med.txt"
    med.write_text("inserted line\n" + med.read_text())  # every later line shifts by one
    capsys.readouterr()
    assert main(["-q", "select", "--from-scores", "run", "--top", "5", "--out", "shifted"]) == 2
    err = capsys.readouterr().err.strip()
    assert "changed since it was scored" in err and err.count("\n") == 0
    assert not (selection_run / "shifted" / "selected.txt").exists()


def test_a_new_score_run_leaves_no_stale_selection_behind(selection_run):
    run = selection_run / "run"
    assert (run / "selected.txt").exists()
    assert main(["-q", "evaluate", "run", "--gold", "med.txt"]) == 0
    # another method's run replaces a finished one only when asked to (--overwrite)
    assert main(["-q", "score", "--method", "random", "--in-domain", "in.txt", "--pool", "law.txt", "med.txt",
                 "--out", "run"]) == 2
    assert (run / "selected.txt").exists()
    assert main(["-q", "score", "--method", "random", "--in-domain", "in.txt", "--pool", "law.txt", "med.txt",
                 "--out", "run", "--overwrite"]) == 0
    assert not any((run / n).exists() for n in ("selected.txt", "selected.ids.tsv", "selection.json", "eval.json"))
