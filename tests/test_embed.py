import time

import numpy as np
import pytest

from conftest import FAMILIES, make_sentences
from domainsift.embed import CachedEmbedder, Embedder, get_embedder
from domainsift.embed.transformers import TransformersEmbedder
from domainsift._internal.errors import DomainsiftError

TEXTS = ["dose tablet patient", "click file", "article regulation member state commission directive",
         "the a"]


@pytest.mark.parametrize("backend", ["torch", "onnx", "onnx-int8"])
@pytest.mark.parametrize("family", FAMILIES)
def test_transformers_families(tiny_models, family, backend):
    emb = TransformersEmbedder(tiny_models[family], batch_size=2, progress=False, backend=backend)
    assert isinstance(emb, Embedder)
    x = emb.encode(TEXTS)
    assert x.shape == (4, 32) and x.dtype == np.float32
    assert np.isfinite(x).all()
    # length-sorted batching must not reorder the output, and a vector depends on its sentence alone:
    # encoding one by one agrees on every backend (int8 quantises each token's activations by itself)
    single = np.vstack([emb.encode([t]) for t in TEXTS])
    np.testing.assert_allclose(x, single, atol=1e-5)
    if backend != "torch":  # the same model through PyTorch
        ref = TransformersEmbedder(tiny_models[family], batch_size=2, progress=False, backend="torch").encode(TEXTS)
        cos = (x * ref).sum(1) / np.linalg.norm(x, axis=1) / np.linalg.norm(ref, axis=1)
        assert cos.min() > (0.9999 if backend == "onnx" else 0.98)



@pytest.mark.parametrize("backend", ["onnx", "onnx-int8"])
def test_onnx_lanes_run_batches_side_by_side_with_the_vectors_of_one_session(tiny_models, backend):
    """Two threads give two single-threaded sessions (lanes) that run batches at once; the vectors, in input
    order, are those of one session (a vector depends on its sentence alone)."""
    import torch
    from domainsift.embed.onnx import lanes_for
    assert lanes_for(1) == (1, 1) and lanes_for(2) == (2, 1) and lanes_for(16) == (4, 4)
    texts = [" ".join(TEXTS[i % 4].split()[: 1 + i % 5]) + f" item {i}" for i in range(40)]
    before = torch.get_num_threads()
    try:
        out = {}
        for threads in (1, 2):
            torch.set_num_threads(threads)
            emb = TransformersEmbedder(tiny_models["bert"], batch_size=2, progress=False, backend=backend)
            out[threads] = emb.encode(texts)
            assert emb.runner.lanes == threads
    finally:
        torch.set_num_threads(before)
    np.testing.assert_allclose(out[2], out[1], atol=1e-6)
    calls = []

    def broken(batch):  # a lane's batch fails: the error reaches the caller, the batches not begun never run
        calls.append(1)
        time.sleep(0.05)
        raise ValueError("a lane failed")
    emb._pooled = broken
    with pytest.raises(ValueError, match="a lane failed"):
        emb.encode(texts)
    assert len(texts) // 2 >= 20 and len(calls) <= 10
    single = np.vstack([TransformersEmbedder(tiny_models["bert"], progress=False, backend=backend).encode([t])
                        for t in texts[:6]])
    np.testing.assert_allclose(out[2][:6], single, atol=1e-5)


def test_a_batch_of_long_texts_holds_at_most_the_token_budget():
    from domainsift.embed.transformers import equal_length_batches
    lengths = np.array([100, 10, 100, 100, 10, 300, 100])
    batches = equal_length_batches(lengths, 32, max_tokens=250)
    assert [b.tolist() for b in batches] == [[5], [0, 2], [3, 6], [1, 4]]  # longest first; one text at least
    assert [b.tolist() for b in equal_length_batches(lengths, 2)] == [[5], [0, 2], [3, 6], [1, 4]]
    assert [b.tolist() for b in equal_length_batches(lengths, 32)] == [[5], [0, 2, 3, 6], [1, 4]]

def test_onnx_export_runs_eager_attention_and_restores_the_models_own(tiny_models, tmp_path):
    """The ONNX graph is traced with eager attention (plain MatMul and Softmax, which ONNX Runtime
    runs faster than the traced fused-attention graph); the model in memory keeps its own setting."""
    import onnx

    from domainsift.embed.onnx import build_model_file
    from domainsift.embed.transformers import load_tokenizer_and_model
    tok, model = load_tokenizer_and_model(tiny_models["bert"])
    model.set_attn_implementation("sdpa")
    build_model_file(model, tok, -1, "onnx", tmp_path / "m.onnx")
    assert model.config._attn_implementation == "sdpa"
    ops = {n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node}
    # the fused kernel's trace guards every softmax row against NaN (IsNaN + Where per layer)
    assert "Softmax" in ops and "IsNaN" not in ops


def test_int8_graph_cannot_saturate_and_quantises_activations_per_row(tiny_models, tmp_path):
    """The int8 recipe's two invariants, which hold on every x86 CPU by construction: weights within
    7 bits (no u8 x s8 pair sum can saturate an int16 on AVX2), and no per-tensor (batch-wide)
    activation quantisation left in the graph."""
    import onnx
    from onnx import numpy_helper

    from domainsift.embed.onnx import WEIGHT_MAX, build_model_file
    from domainsift.embed.transformers import load_tokenizer_and_model
    tok, model = load_tokenizer_and_model(tiny_models["bert"])
    build_model_file(model, tok, -1, "onnx-int8", tmp_path / "m.onnx")
    graph = onnx.load(str(tmp_path / "m.onnx")).graph
    ops = [n.op_type for n in graph.node]
    assert "DynamicQuantizeLinear" not in ops and "MatMul" in ops  # attention's products stay fp32
    # 2 layers: query, key, value, output, two feed-forward; each product and its weight scale in one kernel
    assert ops.count("MatMulIntegerToFloat") == 6 * 2 and "MatMulInteger" not in ops
    int8 = [numpy_helper.to_array(i) for i in graph.initializer if i.data_type == onnx.TensorProto.INT8]
    assert int8 and max(int(np.abs(w.astype(np.int32)).max()) for w in int8) <= WEIGHT_MAX == 63
    assert 2 * 255 * WEIGHT_MAX < 2 ** 15


def test_fused_int8_graph_gives_the_standard_graphs_bits(tiny_models, tmp_path):
    """The int8 graph's fused kernel (MatMulIntegerToFloat) computes float(int32 product) * weight scale as
    the standard ops MatMulInteger -> Cast -> Mul do: the same hidden states to the bit, on sentences of
    several lengths in one padded batch."""
    import onnxruntime as ort

    from domainsift.embed.onnx import _export, input_names_of, quantize_per_row
    from domainsift.embed.transformers import load_tokenizer_and_model
    tok, model = load_tokenizer_and_model(tiny_models["bert"])
    _export(model, tok, -1, tmp_path / "fp32.onnx")
    quantize_per_row(tmp_path / "fp32.onnx", tmp_path / "fused.onnx")
    quantize_per_row(tmp_path / "fp32.onnx", tmp_path / "plain.onnx", fused=False)
    texts = ["the patient took two tablets", "a", "open the file menu and choose save as, then type a name"]
    batch = tok(texts, padding=True, return_tensors="np")
    names = input_names_of(model, tok)
    out = {}
    for name in ("fused", "plain"):
        sess = ort.InferenceSession(str(tmp_path / f"{name}.onnx"), providers=["CPUExecutionProvider"])
        used = {i.name for i in sess.get_inputs()}
        out[name] = sess.run(None, {n: batch[n].astype(np.int64) for n in names if n in used})[0]
    assert out["fused"].shape == (3, batch["input_ids"].shape[1], model.config.hidden_size)
    assert np.abs(out["fused"]).max() > 0 and np.array_equal(out["fused"], out["plain"])


@pytest.mark.slow
def test_default_encoder_vectors_depend_on_the_sentence_alone(tmp_path):
    """300 lines in two orders and two batch sizes, default backend, empty caches: the same vectors;
    and the int8 vectors stay close to fp32 PyTorch (an error in the graph's scales shows here)."""
    from pathlib import Path

    from domainsift.jobs.demo import demo_files
    lines = [t for f in demo_files() for t in Path(f).read_text().splitlines() if t.strip()]
    texts = (lines + [f"{t} ({i % 7})" for i, t in enumerate(lines)])[:300]
    assert len(texts) == 300
    a = get_embedder("minilm", batch_size=32, progress=False, cache_dir=str(tmp_path / "a")).encode(texts)
    rev = get_embedder("minilm", batch_size=7, progress=False, cache_dir=str(tmp_path / "b")).encode(texts[::-1])
    np.testing.assert_allclose(a, rev[::-1], atol=1e-6, rtol=0)
    ref = get_embedder("minilm", backend="torch", progress=False).encode(texts[:64])
    cos = (a[:64] * ref).sum(1)
    assert cos.mean() > 0.99 and cos.min() > 0.95


def test_layer_choice_changes_vectors(tiny_models):
    last = TransformersEmbedder(tiny_models["bert"], layer=-1, progress=False).encode(TEXTS)
    first = TransformersEmbedder(tiny_models["bert"], layer=0, progress=False).encode(TEXTS)
    assert not np.allclose(last, first)


def test_mean_pooling_ignores_padding(tiny_models):
    """A short sentence gives the same vector alone and batched with a long one."""
    emb = TransformersEmbedder(tiny_models["bert"], batch_size=8, progress=False, backend="torch")
    alone = emb.encode(["click file"])
    batched = emb.encode(["click file", "article regulation member state commission directive court"])
    np.testing.assert_allclose(alone[0], batched[0], atol=1e-5)


def test_max_length_truncates(tiny_models):
    long = " ".join(["dose"] * 40 + ["click"] * 40)
    a = TransformersEmbedder(tiny_models["bert"], max_length=8, progress=False).encode([long])
    b = TransformersEmbedder(tiny_models["bert"], max_length=8, progress=False).encode(
        [" ".join(["dose"] * 40)])
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_unknown_model_is_a_clear_error(tmp_path):
    emb = TransformersEmbedder(str(tmp_path / "no-such-model"), progress=False)
    with pytest.raises(DomainsiftError, match="cannot load model"):
        emb.encode(["x"])


@pytest.mark.parametrize("name", ["tfidf", "word2vec", "lda", "random"])
def test_baselines_shape_and_determinism(name):
    texts = make_sentences("med", 20, 0) + make_sentences("it", 20, 1)
    def build():
        emb = get_embedder(name, seed=3, dim=8)
        return emb.fit(texts) if getattr(emb, "needs_fit", False) else emb
    a = build().encode(texts)
    b = build().encode(texts)
    assert a.shape == (40, 8) and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)


def test_default_encoder_loads_offline():
    emb = get_embedder("minilm", progress=False)
    assert emb.name == "all-MiniLM-L6-v2"
    x = emb.encode(["The tablet is taken once a day.", "Click the Save button."])
    assert x.shape == (2, 384)
    assert np.isfinite(x).all()


class CountingEmbedder:
    """Deterministic fake with a cache_key; counts how many texts it encoded."""

    name = "counting"
    cache_key = "counting|v1"

    def __init__(self, fail_after_calls=None):
        self.encoded = 0
        self.calls = 0
        self.fail_after_calls = fail_after_calls

    def encode(self, texts):
        if self.fail_after_calls is not None and self.calls >= self.fail_after_calls:
            raise KeyboardInterrupt("killed")
        self.calls += 1
        self.encoded += len(texts)
        return np.array([[len(t), sum(map(ord, t)) % 97] for t in texts], dtype=np.float32)


def test_cache_second_run_encodes_nothing(tmp_path):
    texts = [f"sentence {i}" for i in range(25)]
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, tmp_path, chunk_size=10, progress=False)
    first = cached.encode(texts)
    assert inner.encoded == 25 and cached.last_misses_ == 3
    second = cached.encode(texts)
    assert inner.encoded == 25 and cached.last_hits_ == 3
    np.testing.assert_array_equal(first, second)


def test_cache_resumes_after_interruption(tmp_path):
    texts = [f"sentence {i}" for i in range(50)]
    killed = CountingEmbedder(fail_after_calls=2)
    with pytest.raises(KeyboardInterrupt):
        CachedEmbedder(killed, tmp_path, chunk_size=10, progress=False).encode(texts)
    assert killed.encoded == 20
    assert not list(tmp_path.rglob("*.tmp"))  # no half-written chunk
    resumed = CountingEmbedder()
    out = CachedEmbedder(resumed, tmp_path, chunk_size=10, progress=False).encode(texts)
    assert resumed.encoded == 30  # only the three unfinished chunks
    np.testing.assert_array_equal(out, CountingEmbedder().encode(texts))


def test_the_cache_stops_growing_at_its_disks_reserve_and_on_a_full_disk(tmp_path, monkeypatch, caplog):
    """A 10M-line pool caches 15 GB of vectors: the cache keeps RESERVE free on its disk, and a full disk
    while a chunk is written loses the chunk, not the run; the vectors are the same either way."""
    import collections
    import shutil
    import domainsift.embed.cache as cache
    texts = [f"sentence {i}" for i in range(50)]
    want = CountingEmbedder().encode(texts)
    usage = collections.namedtuple("usage", "total used free")
    free = {"bytes": 10 * cache.RESERVE_BYTES}
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(100 * cache.RESERVE_BYTES, 0, free["bytes"]))
    wrote = []
    real_save = cache.save_npy
    monkeypatch.setattr(cache, "save_npy", lambda path, arr: (wrote.append(path), real_save(path, arr),
                                                              free.update(bytes=cache.RESERVE_BYTES * 5)))
    cached = CachedEmbedder(CountingEmbedder(), tmp_path / "a", chunk_size=10, progress=False)
    with caplog.at_level("WARNING", logger="domainsift.embed.cache"):
        np.testing.assert_array_equal(cached.encode(texts), want)
    # the disk's total is 100 reserves: 5% of it (5 reserves) is kept free, so one chunk was written
    assert len(wrote) == 1 and cached.full_ and len(list((tmp_path / "a").rglob("*.npy"))) == 1
    assert sum("stops growing" in r.message for r in caplog.records) == 1  # said once

    from domainsift._internal.atomic import disk_full_error
    free["bytes"] = 50 * cache.RESERVE_BYTES

    def full(path, arr):
        raise disk_full_error(path, OSError(28, "No space left on device"))
    monkeypatch.setattr(cache, "save_npy", full)
    cached = CachedEmbedder(CountingEmbedder(), tmp_path / "b", chunk_size=10, progress=False)
    np.testing.assert_array_equal(cached.encode(texts), want)
    assert cached.full_ and not list((tmp_path / "b").rglob("*.npy"))


def test_cache_key_separates_models(tmp_path):
    texts = ["a", "b"]
    a = CountingEmbedder()
    CachedEmbedder(a, tmp_path, progress=False).encode(texts)
    b = CountingEmbedder()
    b.cache_key = "counting|v2"
    CachedEmbedder(b, tmp_path, progress=False).encode(texts)
    assert b.encoded == 2


def test_cache_with_real_transformers(tiny_models, tmp_path):
    emb = get_embedder(tiny_models["distilbert"], cache_dir=str(tmp_path), progress=False)
    x1 = emb.encode(TEXTS)
    x2 = emb.encode(TEXTS)
    assert emb.last_hits_ == 1
    np.testing.assert_array_equal(x1, x2)


def test_normalize_follows_model_config(tiny_models):
    minilm = get_embedder("minilm", progress=False)
    assert minilm.normalize is True
    np.testing.assert_allclose(np.linalg.norm(minilm.encode(["a short sentence"]), axis=1), 1.0, atol=1e-5)
    tiny = TransformersEmbedder(tiny_models["bert"], progress=False)
    assert tiny.normalize is False
    forced = TransformersEmbedder(tiny_models["bert"], normalize=True, progress=False)
    assert "norm:1" in forced.cache_key and "norm:0" in tiny.cache_key
    np.testing.assert_allclose(np.linalg.norm(forced.encode(TEXTS), axis=1), 1.0, atol=1e-5)


def test_a_damaged_cache_chunk_is_encoded_again(tmp_path, caplog):
    """Every cached chunk carries a SHA-256 written after it: a chunk edited on disk (a row negated, a NaN),
    or one without its digest, is encoded again with a warning, never used."""
    import logging

    from domainsift.embed.cache import CachedEmbedder
    texts = [f"sentence number {i}" for i in range(10)]
    emb = CachedEmbedder(CountingEmbedder(), tmp_path, chunk_size=4, progress=False)
    first = emb.encode(texts)
    assert emb.last_misses_ == 3
    chunk = sorted(p for p in tmp_path.rglob("*.npy"))[0]
    arr = np.load(chunk)
    arr[0] = -arr[0]
    arr[1, 0] = np.nan
    np.save(chunk, arr)
    with caplog.at_level(logging.WARNING):
        again = emb.encode(texts)
    assert emb.last_misses_ == 1 and emb.last_hits_ == 2 and "damaged" in caplog.text
    np.testing.assert_array_equal(again, first)
    next(tmp_path.rglob("*.sha256")).unlink()  # a chunk without its digest
    emb.encode(texts)
    assert emb.last_misses_ == 1
