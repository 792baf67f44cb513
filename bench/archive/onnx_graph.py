"""Benchmark: which attention the ONNX graph is traced from, for ONNX Runtime on this CPU.

The default encoder is exported twice with the product's exporter and quantiser
(``domainsift.embed.onnx``): traced from PyTorch's fused attention (``sdpa``, transformers'
default, as 0.5.0 exported) and from transformers' eager attention (plain MatMul and Softmax,
0.5.1). Each graph, fp32 and int8, encodes the clustering set (10,000 lines of the five classic
domains, as ``bench/live/embed_speed.py``) through ``TransformersEmbedder`` (batch 32, sorted by
token count), alternating, --rounds rounds. A third graph, eager+ort-optimizer, is the eager one
after ONNX Runtime's transformer optimiser (``optimize_model``, model type bert: fused Attention,
SkipLayerNormalization, BiasGelu), quantised after fusing. Reports sentences/s, the ops that
differ, and the cosine of the sdpa and eager graphs' vectors.

    python bench/archive/onnx_graph.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import collections
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import sys  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))  # the shared helpers: bench/live/_common.py
from _common import clustering_set, write_results

from domainsift.embed.onnx import OnnxRunner, input_names_of, build_model_file, quantize_per_row
from domainsift.embed.transformers import TransformersEmbedder, default_model_path

GRAPHS = ["sdpa", "eager", "eager+ort-optimizer"]


def optimized(fp32: Path, out: Path, backend: str, config) -> None:
    """``fp32`` through ONNX Runtime's transformer optimiser, then (int8) the product's quantiser."""
    from onnxruntime.transformers.optimizer import optimize_model
    fused = optimize_model(str(fp32), model_type="bert", num_heads=config.num_attention_heads,
                           hidden_size=config.hidden_size, opt_level=1)
    print("fused:", {k: v for k, v in fused.get_fused_operator_statistics().items() if v})
    if backend == "onnx":
        fused.save_model_to_file(str(out))
        return
    tmp = out.with_suffix(".fused.onnx")
    fused.save_model_to_file(str(tmp))
    quantize_per_row(tmp, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    import onnx
    texts = clustering_set().texts
    emb = TransformersEmbedder(default_model_path(), progress=False, backend="onnx", batch_size=32)
    torch, tok, model, _ = emb.load()
    names = input_names_of(model, tok)
    tmp = Path(tempfile.mkdtemp(prefix="onnx-graph-"))
    files, ops = {}, {}
    for graph in GRAPHS:
        for backend in ("onnx", "onnx-int8"):
            path = tmp / f"{graph}-{backend}.onnx"
            if graph == "eager+ort-optimizer":
                optimized(files[("eager", "onnx")], path, backend, model.config)
            else:
                build_model_file(model, tok, -1, backend, path, attention_impl=graph)
            files[(graph, backend)] = path
        if graph != "eager+ort-optimizer":
            ops[graph] = collections.Counter(n.op_type for n in onnx.load(str(files[(graph, "onnx")])).graph.node)
    rows, vectors = [], {}
    for r in range(args.rounds):
        for backend in ("onnx", "onnx-int8"):
            for graph in GRAPHS:
                emb.runner = OnnxRunner(files[(graph, backend)], names, threads=torch.get_num_threads())
                emb.encode(texts[:64])
                t0 = time.time()
                vectors[(graph, backend)] = emb.encode(texts)
                rows.append({"round": r, "graph": graph, "backend": backend,
                             "sent_per_s": round(len(texts) / (time.time() - t0), 1)})
                print(rows[-1], flush=True)
    cos = {b: float((vectors[("sdpa", b)] * vectors[("eager", b)]).sum(1).mean()) for b in ("onnx", "onnx-int8")}
    differ = {op: {g: ops[g].get(op, 0) for g in ("sdpa", "eager")} for op in sorted(set(ops["sdpa"]) | set(ops["eager"]))
              if ops["sdpa"].get(op, 0) != ops["eager"].get(op, 0)}
    lines = ["# ONNX graph: traced from fused (sdpa) or eager attention, and ONNX Runtime's optimiser", "",
             f"{len(texts)} sentences (the clustering set), all-MiniLM-L6-v2, batch 32 sorted by token count, "
             f"{args.rounds} rounds alternating in one process.", "",
             "| backend | graph | sentences/s (mean) | ratio to sdpa (mean) |", "|---|---|---|---|"]
    for b in ("onnx", "onnx-int8"):
        base = {x["round"]: x["sent_per_s"] for x in rows if x["graph"] == "sdpa" and x["backend"] == b}
        for g in GRAPHS:
            rs = [x for x in rows if x["graph"] == g and x["backend"] == b]
            lines.append(f"| {b} | {g} | {np.mean([x['sent_per_s'] for x in rs]):.0f} | "
                         f"{np.mean([x['sent_per_s'] / base[x['round']] for x in rs]):.3f} |")
    lines += ["", "Mean cosine of the two graphs' vectors: " + ", ".join(f"{b} {c:.5f}" for b, c in cos.items()), "",
              "Ops whose count differs (sdpa / eager): "
              + ", ".join(f"{op} {c['sdpa']}/{c['eager']}" for op, c in differ.items())]
    write_results("onnx_graph", {"rows": rows, "cosine_between_graphs": cos, "ops_differing": differ},
                  "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
