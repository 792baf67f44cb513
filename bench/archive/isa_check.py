"""Probe: the same vectors on an AVX2-only CPU as on this one? Runs the encoder's ONNX graphs here and
under QEMU's user-mode emulation of a Haswell CPU (AVX2 and FMA; no AVX-512, no VNNI), and compares.

The default encoder is exported once (fp32) and quantised two ways: the product's onnx-int8 (per-row
activations, 7-bit weights) and 0.2.0-0.5.1's dynamic int8 (bench/live/int8_recipes.py). 16 demo sentences
are encoded with batch 16 and one by one, here and emulated (one thread each; emulation is slow), and
the largest coordinate difference between the two CPUs is reported. Needs ``qemu-x86_64``
(Debian: ``apt-get install qemu-user``).

    python bench/archive/isa_check.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

RECIPES = ["onnx-int8", "int8-dynamic"]


def encode(folder: Path, out: Path) -> None:
    """Encode the saved token ids with each recipe's graph, batch 16 and one by one (runs emulated too)."""
    import onnxruntime as ort
    ids = np.load(folder / "ids.npy", allow_pickle=True)
    res = {}
    for name in RECIPES:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        sess = ort.InferenceSession(str(folder / f"{name}.onnx"), opts, providers=["CPUExecutionProvider"])
        names = {i.name for i in sess.get_inputs()}
        for tag, bs in (("batch16", 16), ("single", 1)):
            vecs = np.zeros((len(ids), 384), np.float32)
            for s in range(0, len(ids), bs):
                part = ids[s:s + bs]
                width = max(len(x) for x in part)
                x = np.zeros((len(part), width), np.int64)
                m = np.zeros_like(x)
                for r, row in enumerate(part):
                    x[r, :len(row)], m[r, :len(row)] = row, 1
                feed = {"input_ids": x, "attention_mask": m}
                if "token_type_ids" in names:
                    feed["token_type_ids"] = np.zeros_like(x)
                h = sess.run(None, feed)[0]
                v = (h * m[..., None]).sum(1) / m.sum(1, keepdims=True)
                vecs[s:s + bs] = v / np.linalg.norm(v, axis=1, keepdims=True)
            res[f"{name}:{tag}"] = vecs
    np.savez(out, **res)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--encode":  # the emulated half
        return encode(Path(sys.argv[2]), Path(sys.argv[3]))
    qemu = shutil.which("qemu-x86_64")
    if not qemu:
        sys.exit("qemu-x86_64 not found (Debian: apt-get install qemu-user)")
    os.environ["HF_HUB_OFFLINE"] = "1"
    sys.path.insert(0, str(Path(__file__).parent))
    from _common import write_results
    from int8_recipes import quantize_dynamic_0_5

    from domainsift.jobs.demo import demo_files
    from domainsift.embed.onnx import build_model_file
    from domainsift.embed.transformers import TransformersEmbedder, default_model_path
    folder = Path(tempfile.mkdtemp(prefix="isa-check-"))
    _, tok, model, _ = TransformersEmbedder(default_model_path(), progress=False).load()
    build_model_file(model, tok, -1, "onnx", folder / "fp32.onnx")
    build_model_file(model, tok, -1, "onnx-int8", folder / "onnx-int8.onnx")
    quantize_dynamic_0_5(folder / "fp32.onnx", folder / "int8-dynamic.onnx")
    lines = [t for f in demo_files() for t in Path(f).read_text().splitlines() if t.strip()][::10][:16]
    ids = tok(lines, truncation=True, max_length=128)["input_ids"]
    np.save(folder / "ids.npy", np.array([np.array(x) for x in ids], dtype=object), allow_pickle=True)
    encode(folder, folder / "host.npz")
    subprocess.run([qemu, "-cpu", "Haswell", sys.executable, __file__, "--encode", str(folder),
                    str(folder / "avx2.npz")], check=True, stderr=subprocess.DEVNULL)
    host, avx2 = np.load(folder / "host.npz"), np.load(folder / "avx2.npz")
    from domainsift.machine import cpu_isa
    rows = []
    for name in RECIPES:
        rows.append({"recipe": name,
                     "cpu_diff_batch16": float(np.abs(host[f"{name}:batch16"] - avx2[f"{name}:batch16"]).max()),
                     "cpu_diff_single": float(np.abs(host[f"{name}:single"] - avx2[f"{name}:single"]).max()),
                     "batch_diff_host": float(np.abs(host[f"{name}:batch16"] - host[f"{name}:single"]).max()),
                     "batch_diff_avx2": float(np.abs(avx2[f"{name}:batch16"] - avx2[f"{name}:single"]).max())})
        print(rows[-1], flush=True)
    lines = ["# The same vectors on an AVX2-only CPU?", "",
             f"This machine ({cpu_isa()}) against QEMU user-mode emulation of a Haswell CPU (AVX2, FMA; no AVX-512, "
             "no VNNI), 16 demo sentences, the default encoder, one thread each. Differences: the largest "
             "coordinate difference of the unit vectors.", "",
             "| recipe | this CPU vs AVX2, batch 16 | this CPU vs AVX2, one by one | batch 16 vs one by one, this CPU | "
             "batch 16 vs one by one, AVX2 |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['recipe']} | {r['cpu_diff_batch16']:.2g} | {r['cpu_diff_single']:.2g} | "
                     f"{r['batch_diff_host']:.2g} | {r['batch_diff_avx2']:.2g} |")
    write_results("isa_check", {"rows": rows}, "\n".join(lines) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
