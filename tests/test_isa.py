"""The int8 recipe on another instruction set: the default backend's graph run under QEMU's user-mode
emulation of a Haswell CPU (AVX2 and FMA; no AVX-512, no VNNI) gives the vectors it gives here, and
there too a vector does not depend on its batch. This is the check that a machine with AVX-512 can
make of an AVX2-only one. CI installs QEMU (Debian's qemu-user) and sets DOMAINSIFT_REQUIRE_QEMU=1,
so there the test runs or fails; elsewhere it is skipped when QEMU is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ENCODE = textwrap.dedent('''
    import sys, numpy as np, onnxruntime as ort
    folder = sys.argv[1]
    ids = np.load(folder + "/ids.npy")
    mask = np.load(folder + "/mask.npy")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(folder + "/m.onnx", opts, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    def run(rows):
        width = int(mask[rows].sum(1).max())
        feed = {"input_ids": ids[rows, :width], "attention_mask": mask[rows, :width]}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
        h = sess.run(None, {k: v for k, v in feed.items() if k in names})[0]
        m = feed["attention_mask"][..., None]
        return (h * m).sum(1) / m.sum(1)
    n = len(ids)
    batch = run(np.arange(n))
    single = np.vstack([run(np.array([i])) for i in range(n)])
    np.savez(sys.argv[2], batch=batch, single=single)
''')


def _qemu():
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        if os.environ.get("DOMAINSIFT_REQUIRE_QEMU"):
            pytest.fail("DOMAINSIFT_REQUIRE_QEMU is set but qemu-x86_64 is missing (apt-get install qemu-user)")
        pytest.skip("qemu-x86_64 not installed (apt-get install qemu-user)")
    return qemu


def test_int8_vectors_are_the_same_on_an_avx2_cpu(tiny_models, tmp_path):
    qemu = _qemu()
    from domainsift.embed.onnx import build_model_file
    from domainsift.embed.transformers import load_tokenizer_and_model
    tok, model = load_tokenizer_and_model(tiny_models["bert"])
    build_model_file(model, tok, -1, "onnx-int8", tmp_path / "m.onnx")
    texts = ["dose tablet patient doctor blood liver", "click file", "article regulation member state commission",
             "the a", "kidney injection vaccine nausea treatment dose dose tablet", "server window menu"]
    enc = tok(texts, padding=True, return_tensors="np")
    np.save(tmp_path / "ids.npy", enc["input_ids"].astype(np.int64))
    np.save(tmp_path / "mask.npy", enc["attention_mask"].astype(np.int64))
    (tmp_path / "encode.py").write_text(ENCODE)
    subprocess.run([sys.executable, str(tmp_path / "encode.py"), str(tmp_path), str(tmp_path / "here.npz")],
                   check=True)
    subprocess.run([qemu, "-cpu", "Haswell", sys.executable, str(tmp_path / "encode.py"), str(tmp_path),
                    str(tmp_path / "avx2.npz")], check=True, stderr=subprocess.DEVNULL, timeout=900)
    here, avx2 = np.load(tmp_path / "here.npz"), np.load(tmp_path / "avx2.npz")
    scale = np.abs(here["batch"]).max()
    for got in (here["single"], avx2["batch"], avx2["single"]):
        np.testing.assert_allclose(got, here["batch"], atol=1e-5 * scale, rtol=0)
