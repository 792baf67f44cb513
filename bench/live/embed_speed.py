"""Benchmark "embedding speed" (../shared/docs/BENCHMARKS.md): each encoding backend against the
reference path, in one run on one machine.

The clustering set (the first 2,000 distinct lines of <D>.train.en for the five classic domains,
10,000 sentences) is encoded with the default encoder, all-MiniLM-L6-v2:

1. In one process, alternating, for --rounds rounds: the reference path
   (``sentence_transformers.SentenceTransformer.encode``, batch size 64) and domainsift's
   ``TransformersEmbedder`` with each backend (no vector cache). Sentences per second, the
   ratio to the reference measured in the same round, and, once per backend, the seconds to
   export the model to ONNX (and quantise it), which a process pays once per model.
2. As whole processes with an empty cache (a fresh cache folder, so the export is paid too):
   ``domainsift embed --backend B`` against a process that imports sentence-transformers,
   loads the model, encodes and saves the vectors; alternating, --rounds rounds.
3. Quality per backend: mean and minimum cosine of its vectors to the PyTorch fp32 vectors and to
   the reference's; clustering purity (GMM, full covariance, k=5, PCA 50, 5 seeds, as the
   clustering benchmark); the Domain-Cosine selection precision on the selection benchmark (35k
   pool, five targets, N=5,000).

    python bench/live/embed_speed.py [--rounds 2] [--backends torch onnx onnx-int8] [--no-selection]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from _common import CLASSIC, ROOT, SEVEN, clustering_set, data_file, write_results

from domainsift.io.corpus import file_labels
from domainsift.cluster import cluster_grid
from domainsift.io.corpus import read_corpus
from domainsift.embed.transformers import TransformersEmbedder, default_model_path

WORK = ROOT / "bench" / "work" / "embed_speed"
BACKENDS = ["torch", "onnx", "onnx-int8"]

REFERENCE = r"""
import sys, numpy as np
from sentence_transformers import SentenceTransformer
texts = open(sys.argv[1], encoding="utf-8").read().split("\n")[:-1]
st = SentenceTransformer(sys.argv[2], device="cpu")
np.save(sys.argv[3], st.encode(texts, batch_size=64))
"""


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def cosines(a: np.ndarray, b: np.ndarray) -> dict:
    c = (unit(a) * unit(b)).sum(1)
    return {"mean": round(float(c.mean()), 5), "min": round(float(c.min()), 5)}


def timed_process(cmd: list[str]) -> float:
    t0 = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"})
    return time.time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--backends", nargs="+", default=BACKENDS, choices=BACKENDS)
    ap.add_argument("--batch-size", type=int, default=32, help="domainsift's batch size (the reference: 64)")
    ap.add_argument("--no-selection", action="store_true", help="skip the 35k-pool cosine selection")
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    os.environ["HF_HUB_OFFLINE"] = "1"

    corpus = clustering_set()
    texts, gold = corpus.texts, file_labels(corpus.ids, corpus.files)
    n = len(texts)
    set_file = WORK / "clusterset.txt"
    set_file.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    model = default_model_path()

    # ---- 1. in one process, alternating
    from sentence_transformers import SentenceTransformer
    st = SentenceTransformer(model, device="cpu")
    st.encode(texts[:64], batch_size=64)
    embs, export_s = {}, {}
    for b in args.backends:
        tmp = tempfile.mkdtemp(dir=WORK, prefix="export-")
        e = TransformersEmbedder(model, progress=False, backend=b, batch_size=args.batch_size, export_dir=tmp)
        t0 = time.time()
        e.encode(texts[:1])  # loads the model and, for ONNX, exports it
        export_s[b] = round(time.time() - t0, 2)
        embs[b] = e
    inproc, vectors = [], {}
    for r in range(args.rounds):
        t0 = time.time()
        vectors["reference"] = st.encode(texts, batch_size=64)
        ref_rate = n / (time.time() - t0)
        inproc.append({"round": r, "path": "reference", "sent_per_s": round(ref_rate, 1), "ratio": 1.0})
        print(inproc[-1], flush=True)
        for b in args.backends:
            t0 = time.time()
            vectors[b] = embs[b].encode(texts)
            rate = n / (time.time() - t0)
            inproc.append({"round": r, "path": b, "sent_per_s": round(rate, 1), "ratio": round(rate / ref_rate, 2)})
            print(inproc[-1], flush=True)
    del st, embs

    # ---- 2. whole processes, empty cache
    whole = []
    for r in range(args.rounds):
        ref_s = timed_process([sys.executable, "-c", REFERENCE, str(set_file), model, str(WORK / "ref.npy")])
        whole.append({"round": r, "path": "reference", "seconds": round(ref_s, 1), "ratio": 1.0})
        print(whole[-1], flush=True)
        for b in args.backends:
            cache, out = WORK / f"cache-{b}", WORK / f"embed-{b}"
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
            s = timed_process([sys.executable, "-m", "domainsift", "--quiet", "embed", str(set_file), "--out",
                               str(out), "--cache", str(cache), "--backend", b, "--batch-size", str(args.batch_size)])
            whole.append({"round": r, "path": b, "seconds": round(s, 1), "ratio": round(ref_s / s, 2)})
            print(whole[-1], flush=True)

    # ---- 3. quality
    fp32 = vectors.get("torch")
    quality = {}
    for b in ["reference"] + args.backends:
        x = vectors[b]
        res = cluster_grid(x, gold, ks=[5], pcas=[50], seeds=range(5), n_init=3, progress=False).summary()[0]
        quality[b] = {"cos_to_torch_fp32": cosines(x, fp32) if fp32 is not None else None,
                      "cos_to_reference": cosines(x, vectors["reference"]),
                      "purity_k5_pca50": round(100 * res["purity_mean"], 2),
                      "purity_std": round(100 * res["purity_std"], 2)}
        print(b, quality[b], flush=True)

    selection = {}
    if not args.no_selection:
        from domainsift.select import get_selector
        pool = read_corpus([data_file(d, "train") for d in SEVEN])
        gold_pool = np.array(file_labels(pool.ids, pool.files))
        for b in args.backends:
            t0 = time.time()
            precision = {}
            for d in CLASSIC:
                sel = get_selector("cosine", backend=b, batch_size=args.batch_size, progress=False,
                                   cache_dir=str(WORK / f"sel-cache-{b}"))
                scores = sel.fit(read_corpus([data_file(d, "test")]), pool).score(pool)
                top = np.argsort(-scores, kind="stable")[:5000]
                precision[d] = round(float((gold_pool[top] == d).mean()), 4)
            selection[b] = {"per_target": precision, "mean": round(float(np.mean(list(precision.values()))), 4),
                            "seconds": round(time.time() - t0, 1)}
            print(b, selection[b], flush=True)

    def mean_of(rows, path, key):
        return float(np.mean([r[key] for r in rows if r["path"] == path]))

    lines = ["# Embedding speed: encoding backends against the reference path", "",
             f"{n} sentences (the clustering set), all-MiniLM-L6-v2, max length 128; domainsift batches "
             f"{args.batch_size} sentences sorted by token count, the reference "
             "(`SentenceTransformer.encode`) batch 64. Ratios are to the reference in the same round.", "",
             "## In one process (encoding only)", "",
             "| path | sentences/s (mean) | ratio (mean) | export + quantise, once (s) |", "|---|---|---|---|",
             f"| reference | {mean_of(inproc, 'reference', 'sent_per_s'):.0f} | 1.00 | - |"]
    for b in args.backends:
        lines.append(f"| {b} | {mean_of(inproc, b, 'sent_per_s'):.0f} | {mean_of(inproc, b, 'ratio'):.2f} | "
                     f"{export_s[b]} |")
    lines += ["", "## Whole process, empty cache (`domainsift embed` vs. a reference script)", "",
              "| path | seconds (mean) | ratio (mean) |", "|---|---|---|",
              f"| reference | {mean_of(whole, 'reference', 'seconds'):.1f} | 1.00 |"]
    for b in args.backends:
        lines.append(f"| {b} | {mean_of(whole, b, 'seconds'):.1f} | {mean_of(whole, b, 'ratio'):.2f} |")
    lines += ["", "## Quality", "",
              "| path | cosine to torch fp32 (mean / min) | cosine to reference (mean / min) | purity k=5 PCA 50 "
              "| cosine selection mean | " + " | ".join(CLASSIC) + " |",
              "|---|---|---|---|---|" + "---|" * len(CLASSIC)]
    for b in ["reference"] + args.backends:
        q, s = quality[b], selection.get(b)
        c1 = f"{q['cos_to_torch_fp32']['mean']:.4f} / {q['cos_to_torch_fp32']['min']:.4f}" if q["cos_to_torch_fp32"] else "-"
        c2 = f"{q['cos_to_reference']['mean']:.4f} / {q['cos_to_reference']['min']:.4f}"
        sel = [f"{s['mean']:.4f}"] + [f"{s['per_target'][d]:.3f}" for d in CLASSIC] if s else ["-"] * 6
        lines.append(f"| {b} | {c1} | {c2} | {q['purity_k5_pca50']:.1f} ± {q['purity_std']:.1f} | "
                     + " | ".join(sel) + " |")
    write_results("embed_speed", {"n_sentences": n, "batch_size": args.batch_size, "in_process": inproc,
                                  "whole_process": whole, "export_seconds": export_s, "quality": quality,
                                  "cosine_selection": selection}, "\n".join(lines) + "\n")
    print(json.dumps({"export_seconds": export_s}))


if __name__ == "__main__":
    main()
