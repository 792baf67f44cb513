"""What determines a number is in its signature, its vector-cache key and its resume fingerprint,
taken from what actually ran; and every default that moves a number is in the defaults'
fingerprint (issue: same inputs, same numbers, on any machine)."""

from __future__ import annotations
import domainsift as ds
from domainsift.engine import Execution

import json

import numpy as np
import pytest

from conftest import make_sentences
from domainsift.io.corpus import as_corpus
from domainsift.embed.transformers import TransformersEmbedder


def _on_gpu(monkeypatch):
    import domainsift.embed.transformers as tr
    monkeypatch.setattr(tr, "resolve_device", lambda device: "cuda")


def test_cache_key_names_the_backend_that_runs(tiny_models, monkeypatch):
    """A GPU runs PyTorch fp32 whatever backend was asked: its vectors must not be cached under
    the int8 key (before 0.6.0 they were)."""
    emb = TransformersEmbedder(tiny_models["bert"], backend="onnx-int8", progress=False)
    cpu_key = emb.cache_key
    assert "backend:onnx-int8" in cpu_key
    _on_gpu(monkeypatch)
    gpu_key = emb.cache_key
    assert "backend:torch" in gpu_key and "onnx-int8" not in gpu_key and "device:cuda" in gpu_key
    # asked for torch on the same GPU: the same vectors, the same key
    assert gpu_key == TransformersEmbedder(tiny_models["bert"], backend="torch", progress=False).cache_key


def test_cache_key_holds_the_recipe_and_library_versions_not_the_batch(tiny_models):
    import onnxruntime
    import torch

    from domainsift.embed.onnx import INT8_RECIPE
    a = TransformersEmbedder(tiny_models["bert"], backend="onnx-int8", batch_size=8, progress=False)
    b = TransformersEmbedder(tiny_models["bert"], backend="onnx-int8", batch_size=64, progress=False)
    key = a.cache_key
    assert f"int8:{INT8_RECIPE}" in key and f"ort:{onnxruntime.__version__}" in key and f"torch:{torch.__version__}" in key
    assert a.cache_key == b.cache_key  # a vector depends on its sentence alone: batches share the cache
    fp32 = TransformersEmbedder(tiny_models["bert"], backend="onnx", progress=False).cache_key
    assert "int8" not in fp32 and "backend:onnx|" in fp32


def test_signatures_record_how_the_encoder_ran(tiny_models, monkeypatch):
    """cosine, finetune and crosslingual name the encoder's files (fingerprint), the backend that ran,
    the int8 recipe, the libraries' versions and the CPU family."""
    from domainsift.embed.onnx import INT8_RECIPE
    from domainsift._internal.machine import cpu_isa
    from domainsift.select import get_selector
    model = tiny_models["bert"]
    fp = TransformersEmbedder(model, progress=False).fingerprint
    for method, kw in (("cosine", {"embedder": model}), ("finetune", {"model": model}),
                       ("crosslingual", {"model": model})):
        sig = get_selector(method, **kw).signature_params()
        assert sig["model_fingerprint"] == fp, method
        assert sig["backend"] == "onnx-int8" and sig["int8"] == INT8_RECIPE and sig["isa"] == cpu_isa(), method
        assert sig["ort"] and sig["torch"], method
    _on_gpu(monkeypatch)
    sig = get_selector("finetune", model=model).signature_params()
    assert sig["backend"] == "torch" and "int8" not in sig  # what ran, not what was asked


def test_signature_values_do_not_break_the_signature_line():
    """The line is ``key:value`` parts joined by '|': no recorded value may hold a '|'."""
    from domainsift.embed.onnx import EXPORT_ATTENTION, INT8_RECIPE
    from domainsift._internal.machine import cpu_isa
    for value in (INT8_RECIPE, EXPORT_ATTENTION, cpu_isa()):
        assert "|" not in value


def test_embed_signature_records_the_effective_backend(tiny_models, monkeypatch):
    from domainsift.embed import EmbedConfig
    cfg = EmbedConfig(embedder=tiny_models["bert"], cache_dir="", progress=False)
    emb = cfg.build()
    assert cfg.signature_params(emb)["backend"] == "onnx-int8"
    _on_gpu(monkeypatch)
    assert cfg.signature_params(emb)["backend"] == "torch"


def test_resume_fingerprint_holds_the_version_and_how_it_computes(monkeypatch):
    """A run killed under one version (or encoder build) and resumed under another starts over."""
    import domainsift._version as version
    from domainsift.pipeline.stages import fingerprint as _fingerprint
    ind = as_corpus(make_sentences("med", 5, 0))
    manifest = {"files": ["p.txt"], "target_files": [], "n": 10, "reader": {}, "fingerprints": []}
    args = ("cosine", {"seed": 0}, ind.texts, manifest, {"shard_size": 4})
    first = _fingerprint(*args)
    assert _fingerprint(*args, {"int8": "other"}) != first
    monkeypatch.setattr(version, "__version__", "9.9.9")
    assert _fingerprint(*args) != first


def test_the_run_records_the_pool_sources_own_reader(tmp_path):
    """PoolSource.open(..., column=2) is recorded as column 2, so the selection writer, downstream and
    the report read the same records later (before 0.6.0 only the reader= argument was recorded)."""
    from domainsift.rundir import load_scores
    from domainsift import Rule, run_select
    from domainsift.io.source import PoolSource
    pool = tmp_path / "pool.tsv"
    pool.write_text("".join(f"{i}\tid{i}\tline number {i} of the pool\n" for i in range(12)))
    ind = as_corpus(["line number 3 of the pool"])
    ds.run(ds.RunSpec.single("random", ind, PoolSource.open([pool], column=2), tmp_path / "run")).signature
    assert load_scores(tmp_path / "run").pool["reader"]["column"] == 2
    run_select(tmp_path / "run", rule=Rule(top=3))
    selected = (tmp_path / "run").glob("selected.*")
    text = "".join(p.read_text() for p in selected if p.suffix != ".tsv" or "ids" not in p.name)
    assert "of the pool" in text


def test_reader_argument_that_contradicts_the_source_is_an_error(tmp_path):
    from domainsift._internal.errors import DomainsiftError
    from domainsift.io.source import PoolSource
    pool = tmp_path / "pool.tsv"
    pool.write_text("a\tb\n" * 3)
    with pytest.raises(DomainsiftError, match="column"):
        ds.run(ds.RunSpec.single("random", as_corpus(["a"]), PoolSource.open([pool], column=1), tmp_path / "r", reader={"column": 0})).signature


@pytest.mark.parametrize("change", ["export_attention", "int8", "shard", "fit_sample", "weight_decay", "clip",
                                    "head_batch", "ridge", "unk_floor", "cli_n_init", "cli_pca", "cli_order",
                                    "nmt_preset", "nmt_label_smoothing", "pair_checks", "min_margin"])
def test_every_default_that_moves_a_number_is_in_the_defaults_fingerprint(change, monkeypatch):
    import argparse
    import dataclasses

    import domainsift.embed.onnx as onnx_mod
    import domainsift.engine.config as engine
    import domainsift.lm as lm
    import domainsift.select.crosslingual as xl
    import domainsift.engine.config as run
    import domainsift.select.train as train
    from domainsift.cli import defaults_fingerprint
    before = defaults_fingerprint()
    if change == "export_attention":
        monkeypatch.setattr(onnx_mod, "EXPORT_ATTENTION", "sdpa")
    elif change == "int8":
        monkeypatch.setattr(onnx_mod, "WEIGHT_MAX", 127)
    elif change == "shard":
        monkeypatch.setattr(engine, "DEFAULT_SHARD_SIZE", 1000)
    elif change == "fit_sample":
        monkeypatch.setattr(run, "FIT_SAMPLE", 1000)
    elif change in ("weight_decay", "clip"):
        fields = {f.name: f for f in dataclasses.fields(train.TrainConfig)}
        monkeypatch.setattr(fields[change], "default", 0.5)
    elif change == "head_batch":
        monkeypatch.setattr(xl, "HEAD_BATCH", 32)
    elif change == "ridge":
        monkeypatch.setattr(xl.LinearAlignment, "ALPHAS", (1.0,))
    elif change == "unk_floor":
        monkeypatch.setattr(lm, "UNK_FLOOR", -5.0)
    elif change == "nmt_preset":
        import domainsift.nmt.trainer as nmt_trainer
        monkeypatch.setitem(nmt_trainer.PRESETS["proxy"], "warmup", 7)
    elif change == "nmt_label_smoothing":
        import domainsift.nmt.trainer as nmt_trainer
        monkeypatch.setattr(nmt_trainer, "LABEL_SMOOTHING", 0.2)
    elif change == "pair_checks":
        import domainsift.pairs as pairs
        monkeypatch.setattr(pairs, "DEFAULT_CHECKS", ("copy",))
    elif change == "min_margin":
        import domainsift.pairs as pairs
        monkeypatch.setattr(pairs, "MIN_MARGIN", -0.3)
    else:
        option = {"cli_n_init": "--n-init", "cli_pca": "--pca", "cli_order": "--order"}[change]
        real = argparse.ArgumentParser.add_argument

        def add_argument(self, *names, **kw):
            if option in names:
                kw["default"] = [7] if option == "--pca" else 7
            return real(self, *names, **kw)
        monkeypatch.setattr(argparse.ArgumentParser, "add_argument", add_argument)
    assert defaults_fingerprint() != before


def test_int8_scores_do_not_depend_on_shard_or_batch_size(tiny_models, tmp_path):
    """cosine over a pool: the same scores with any shard size and batch size (vectors depend on their
    sentence alone), as text, JSONL or Parquet."""
    from domainsift.rundir import load_scores
    from domainsift.io.source import PoolSource
    lines = make_sentences("med", 20, 1) + make_sentences("law", 20, 2) + make_sentences("it", 20, 3)
    (tmp_path / "pool.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "pool.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in lines))
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"text": lines}), tmp_path / "pool.parquet", row_group_size=11)
    ind = as_corpus(make_sentences("med", 6, 9))
    got = []
    for i, (name, shard, batch) in enumerate([("pool.txt", 64, 32), ("pool.txt", 7, 3), ("pool.jsonl", 13, 5),
                                              ("pool.parquet", 5, 64)]):
        params = {"embedder": tiny_models["bert"], "batch_size": batch, "cache_dir": "", "progress": False}
        ds.run(ds.RunSpec.single("cosine", ind, PoolSource.open([tmp_path / name]), tmp_path / f"r{i}", params=params, execution=Execution(shard_size=shard))).signature
        got.append(np.asarray(load_scores(tmp_path / f"r{i}").scores))
    np.testing.assert_allclose(got[1], got[0], atol=1e-6, rtol=0)
    for other in got[1:]:
        np.testing.assert_allclose(other, got[0], atol=1e-6, rtol=0)


# the constants that move numbers and every command-line default, domainsift.defaults) per version:
# a default that changes without a new version fails here
DEFAULTS_BY_VERSION = {"0.2.0": "9630e5697b8c4972", "0.3.0": "c05b79556761e8b1", "0.4.0": "c05b79556761e8b1",
                       "0.5.0": "e12c41e029c74041", "0.5.1": "e12c41e029c74041", "0.6.0": "83374c08dab3de91",
                       "0.7.0": "179281524ceb196c", "0.8.0": "0d56914762e89f93",
                       "0.9.0": "26d66d1417ef0e29", "0.10.0": "3d8fb464510ee87b",
                       "0.10.1": "3d8fb464510ee87b", "0.11.0": "3d8fb464510ee87b", "0.12.0": "ca88ce96fa9e8e04", "0.13.0": "ca88ce96fa9e8e04",
                       "0.14.0": "4385831f554c2df6", "0.15.0": "0112f20ff1d65807",
                       "0.16.0": "2c005beaa5946459", "0.17.0": "ef9c68538474ba11",
                       "0.18.0": "f0e8c55d14eb5040", "0.19.0": "5766574262be401f",
                       "0.20.0": "e5f06250261b9adc", "0.20.1": "e5f06250261b9adc",
                       "0.21.0": "492df58bdb090342", "0.22.0": "492df58bdb090342", "0.23.0": "492df58bdb090342",
                       "0.24.0": "3a9e8a508e6f9f32", "0.25.0": "492df58bdb090342",
                       "0.26.0": "944896cd54273385",
                       "0.27.0": "a50e2286d9929fd0",
                       "0.28.0": "1e0d673cb71ab359", "0.28.1": "1e0d673cb71ab359", "0.29.0": "186e844a4a037b99", "0.29.1": "186e844a4a037b99", "0.30.0": "4816a5027a88da78", "0.31.0": "4816a5027a88da78", "0.32.0": "096680252ceaa638", "0.33.0": "8df19f0228efe1da", "0.34.0": "a509d62455f374ca", "0.35.0": "7b3d83fdc5953b85", "0.36.0": "a7a4eb2c7c721e32", "0.37.0": "8192a3a1acd641fb", "0.38.0": "7a5f70fcc1afbbe5", "0.39.0": "5536d2c3f1ec50bf", "0.40.0": "be42627cb18adcc4", "0.41.0": "487db6d31b225791", "0.42.0": "3c8f77a6a3413821"}  # 0.42.0: the repeat pair check, on by default (REPEAT_ALIKE); 0.41.0: a side cut open on a word its language seldom ends on is a fragment (OPEN_END_*, learnt from the first candidates), a pair whose numbers differ fails adequacy under NUMBERS_MARGIN, the adequacy encoder reads ADEQUACY_PIECES pieces of a side; 0.40.0: the ratio check reads a pair's characters as its languages make them (the ratio learnt from the first candidates, held within LANGUAGE_RATIO 4), a fragment is also a side cut before its end (FRAGMENT_CUT), the adequacy check's MIN_MARGIN -0.40 (was -0.45); 0.39.0: the adequacy pair check on by default (a default window over 50,000 candidates stands it down), the pair checks' defaults and thresholds join the fingerprint; one student for a mixture's cascade, a head per target; 0.38.0: the shared parameter of finetune and cosine is gone (a fit of several targets scores one block a shard; a target is its column), no option or default a user sets changed; 0.37.0: the translation floor's constants join the fingerprint; the proxy preset trains on 800-token batches with 200 warm-up steps, nmt training runs 60 epochs at most (was 10: every default training stopped at its cap); the paper preset is paper 003's appendix (32k vocabulary, 1,000 warm-up steps, --accumulate 8); new flags evaluate --labels/--label, --accumulate, select --pair-checks/--no-pair-checks/--max-length-ratio/--min-margin/--adequacy-model (pair checks on by default for a bitext pool), downstream --baseline/--init/--init-bitext/--bootstrap-seed, nmt score --baseline; 0.36.0: a new flag (adapt --select-on), no default of an existing option changed; 0.35.0: new flags (adapt and downstream --nmt-backend), no default of an existing option changed; 0.34.0: new flags (downstream --judge nmt and its options, nmt translate --backend), no default of an existing option changed; 0.33.0: the adapt command (new flags; nmt train's options unchanged), no default of an existing option changed; 0.32.0: new flags (select --no-exclude, combine --exclude/--no-exclude, the nmt command); --temperature and --resample-seed default to None (1.0 and 0 when --resample is given: given alone they are refused), no result changes; 0.31.0: --dedup with --target (no flag or default changed); 0.30.0: select --exclude (a new flag; no default changed); 0.29.1: the in-domain set inside the pool warned of (no default changed); 0.29.0: --strip-id (a reader flag, off by default; no other default changed); 0.28.1: -q and -v also after the command (no default changed); 0.28.0: the student's enrichment (the teacher scores the student's top fifth of a further draw); 0.27.0: the surface check (no default changed; the constants no longer record the head's C twice, HEAD names it); 0.26.0: the student's head at C = 0.01 (was 1); 0.25.0: 0.23.0's defaults again (0.24.0's growing student sample and --student-sample measured no better at 10M and left); 0.24.0: --student-sample, a large pool's cascade student learning from half the selection's lines; 0.23.0: the student reads hashed token bigrams (no flag or default changed); 0.22.0: ONNX lanes (no default changed); 0.21.0: the student's vectors (the teacher's fine-tuned encoder); 0.20.1: the int8 graph fused, no spinning (same bits); 0.20.0: cosine's targets share one encoding (its shared parameter); 0.19.0: finetune --layers; 0.18.0: the student's head (top (1 + slack) N vs the rest); 0.12.0: new flags (--dedup, --resample, cluster --outliers, --plan), no default of an existing one changed; 0.14.0: moore-lewis --per, --prune-scale 0; crosslingual --alignment auto; 0.15.0: --top/--fraction auto, score --estimate-share, select --target --mix; 0.16.0: --processes; 0.17.0: finetune's targets share one fit (its shared parameter)


def test_the_version_changes_when_a_default_changes():
    from domainsift._version import __version__
    from domainsift.cli import defaults_fingerprint
    assert DEFAULTS_BY_VERSION.get(__version__) == defaults_fingerprint(), (
        "a default changed: bump domainsift/_version.py and record the new fingerprint here")
