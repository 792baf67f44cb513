"""Benchmark "teacher_cost" (issue 48 item 1): where a cascade's teacher spends its time a candidate.

0.9.0's 10M-line cascade paid 4.4 ms a candidate for finetune's teacher, twice what a plain cosine pass
costs a line (bench/results/scale_cascade.md, scale.md). This benchmark separates the causes:

1. A cascade run (``domainsift select --method finetune --cascade --fraction 0.01`` on the 200,000-line
   pool of distinct lines that bench/live/scale.py builds; in-domain set KDE4.test.en) gives the candidates:
   the lines its final scores rank first (every candidate ranks above every other line), and the stage
   timings of its run.json.
2. In one process, the same number of lines (--lines) is taken from the candidates (seeded) and from the
   whole pool (seeded), and each is scored by finetune's teacher (a finetune fitted for one epoch: the
   cost of scoring does not depend on the weights) and by cosine (the plain encoder pass), alternately,
   --rounds times; ms a line and tokens a line (the encoder's tokenizer, at most 128) for each.

    python bench/live/teacher_cost.py [--lines 4096] [--rounds 2] [--layers 0 3] [--graph 3]

3. ``--graph K``: the int8 graph of the encoder's lower K layers alone, as standard ONNX ops and fused, with
   ONNX Runtime's threads spinning between runs or not, and its time by operator (:func:`graph_profile`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np

from _common import RESULTS, ROOT, cpu_isa, data_file, write_results
from scale import make

WORK = ROOT / "bench" / "work" / "teacher_cost"


def cascade_run(pool: str) -> dict:
    out = WORK / "run"
    if not (out / "run.json").exists():
        argv = [sys.executable, "-m", "domainsift", "-q", "select", "--method", "finetune", "--cascade", "--fraction",
                "0.01", "--in-domain", data_file("KDE4", "test"), "--pool", pool, "--out", str(out),
                "--cache", str(WORK / "cache")]
        subprocess.run(argv, check=True)
    return json.loads((out / "run.json").read_text())


def graph_profile(lines: list[str], layers: int, rounds: int) -> list[dict]:
    """The int8 encoder's graph as ONNX Runtime runs it: the model's lower ``layers`` layers (transformers'
    own ``num_hidden_layers``), exported and quantised by the product's functions as the standard ops
    (``fused=False``) and as the product's fused graph, each with ONNX Runtime's threads spinning between
    runs (its default) and not (the product's session); ``lines`` tokenized and batched as the product does
    (32 lines of one token count), mean-pooled in PyTorch after each run as the product does. ms a line,
    the best-of-rounds pass alternating the four; and each graph's time by operator (ONNX Runtime's
    profiler, spinning off)."""
    import collections
    import tempfile
    from pathlib import Path

    import onnxruntime as ort
    import torch
    from transformers import AutoModel, AutoTokenizer

    from domainsift.embed import model_path
    from domainsift.embed.onnx import build_model_file, quantize_per_row
    from domainsift.embed.transformers import equal_length_batches, mean_pool
    path = model_path("minilm")
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path, **({"num_hidden_layers": layers} if layers else {})).eval()
    tmp = Path(tempfile.mkdtemp(prefix="teacher-cost-"))
    build_model_file(model, tok, -1, "onnx", tmp / "fp32.onnx")  # the fp32 export the int8 recipe starts from
    graphs = {"standard ops": tmp / "plain.onnx", "fused": tmp / "fused.onnx"}
    quantize_per_row(tmp / "fp32.onnx", graphs["standard ops"], fused=False)
    quantize_per_row(tmp / "fp32.onnx", graphs["fused"])
    enc = tok(lines, truncation=True, max_length=128)
    lengths = np.array([len(x) for x in enc["input_ids"]])
    batches = [tok.pad({k: [enc[k][i] for i in idx] for k in enc.keys()}, return_tensors="np")
               for idx in equal_length_batches(lengths, 32)]

    def session(graph, spin, profile=False):
        o = ort.SessionOptions()
        o.intra_op_num_threads, o.inter_op_num_threads, o.log_severity_level = torch.get_num_threads(), 1, 3
        if not spin:
            o.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if profile:
            o.enable_profiling, o.profile_file_prefix = True, str(tmp / "profile")
        return ort.InferenceSession(str(graph), o, providers=["CPUExecutionProvider"])

    def run(sess):
        names = {i.name for i in sess.get_inputs()}
        with torch.inference_mode():
            for b in batches:
                h = torch.from_numpy(sess.run(None, {k: b[k].astype(np.int64) for k in b if k in names})[0])
                mean_pool(h, torch.as_tensor(b["attention_mask"]))

    sessions = {(g, spin): session(p, spin) for g, p in graphs.items() for spin in (True, False)}
    times = {k: [] for k in sessions}
    for _ in range(rounds):
        for k, sess in sessions.items():
            t = time.perf_counter()
            run(sess)
            times[k].append(1000 * (time.perf_counter() - t) / len(lines))
    rows = []
    for (g, spin), v in times.items():
        row = {"what": "graph", "graph": g, "spinning": spin, "layers": layers or "all",
               "ms_per_line": round(min(v), 3), "tokens_per_line": round(float(lengths.mean()), 1)}
        if not spin:  # where the graph's time goes
            sess = session(graphs[g], False, profile=True)
            run(sess)
            agg = collections.Counter()
            for e in json.loads(Path(sess.end_profiling()).read_text()):
                if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
                    agg[e["args"]["op_name"]] += e["dur"]
            total = sum(agg.values())
            row["ops"] = {k: round(v / total, 3) for k, v in agg.most_common(8)}
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--layers", type=int, nargs="+", default=[0],
                    help="finetune's --layers for the teacher rows (0: the whole encoder)")
    ap.add_argument("--graph", type=int, default=None, metavar="K",
                    help="also profile the int8 graph of the encoder's lower K layers (0: all)")
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    pool_path, _ = make(200_000)
    run = cascade_run(str(pool_path))
    m = run["cascade"]["candidates"]
    from domainsift import __version__
    from domainsift.io.corpus import read_corpus
    from domainsift.select import get_selector
    pool = read_corpus([str(pool_path)])
    scores = np.load(WORK / "run" / "scores.npy")
    cand = np.sort(np.argsort(-scores, kind="stable")[:m])
    rng = np.random.default_rng(0)
    sets = {"candidates": pool[[int(i) for i in np.sort(rng.choice(cand, args.lines, replace=False))]],
            "pool lines": pool[[int(i) for i in np.sort(rng.choice(len(pool), args.lines, replace=False))]]}
    in_domain = read_corpus([data_file("KDE4", "test")])
    scorers = {("finetune" + (f" --layers {k}" if k else "")):
               get_selector("finetune", epochs=1, seed=0, progress=False, layers=k).fit(in_domain, pool[:20_000])
               for k in args.layers}
    scorers["cosine"] = get_selector("cosine", cache_dir="", progress=False).fit(in_domain)
    tok = next(iter(scorers.values())).classifier_.tokenizer
    tokens = {k: float(np.mean([len(x) for x in tok(v.texts, truncation=True, max_length=128)["input_ids"]]))
              for k, v in sets.items()}
    chars = {k: float(np.mean([len(t) for t in v.texts])) for k, v in sets.items()}
    for sel in scorers.values():  # the ONNX export and session, once, outside the timing
        sel.score(pool[:64])
    times = {}
    for _ in range(args.rounds):
        for name, sel in scorers.items():
            for what, texts in sets.items():
                t = time.perf_counter()
                sel.score(texts)
                times.setdefault((name, what), []).append(1000 * (time.perf_counter() - t) / args.lines)
    new = [{"version": __version__, "isa": cpu_isa(), "scorer": n, "lines": w,
            "ms_per_line": round(float(np.mean(v)), 3), "tokens_per_line": round(tokens[w], 1),
            "chars_per_line": round(chars[w], 1), "ms_per_100_tokens": round(100 * float(np.mean(v)) / tokens[w], 3)}
           for (n, w), v in times.items()]
    if args.graph is not None:
        new += [{"version": __version__, "isa": cpu_isa(), **r}
                for r in graph_profile(sets["candidates"].texts, args.graph, args.rounds)]
    earlier = json.loads((RESULTS / "teacher_cost.json").read_text()) if (RESULTS / "teacher_cost.json").exists() else {}
    old = [{"version": earlier.get("version"), "isa": "avx2", **r} if "version" not in r else r
           for r in earlier.get("rows", [])]  # 0.15.0's rows (before rows carried their version): the EPYC's
    key = lambda r: (r["version"], r["isa"], r.get("what", "scorer"), r.get("scorer"), r.get("graph"),
                     r.get("spinning"), r.get("layers"), r.get("lines"))
    mine = {key(r) for r in new}
    rows = [r for r in old if key(r) not in mine] + new
    t = run["timings"]
    lines = ["# Where the cascade's teacher spends its time", "",
             f"A cascade run `select --method finetune --cascade --fraction 0.01` on 200,000 distinct pool lines "
             f"(in-domain KDE4.test.en) handed its teacher {m:,} candidates ({100 * m / len(pool):.1f}%): "
             f"method fit {t.get('fit_seconds')} s, student fit {t.get('student_fit_seconds')} s, student over the "
             f"pool {t.get('student_score_seconds')} s, teacher over the candidates {t.get('teacher_score_seconds')} s "
             f"({1000 * t['teacher_score_seconds'] / m:.2f} ms a candidate, reading them included; 0.15.0).", "",
             f"Then {args.lines:,} lines drawn (seed 0) from the candidates and from the whole pool, scored in one "
             f"process by finetune's teacher (fitted one epoch; `--layers K`: on the encoder's lower K layers) and "
             f"by cosine, alternately, {args.rounds} rounds (the ONNX export done before the clock); the default "
             "int8 encoder and batches of one token count. One row per version and CPU (the isa column).", "",
             "| version | isa | scorer | lines | ms a line | tokens a line | characters a line | ms per 100 tokens |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("what", "scorer") == "scorer":
            lines.append(f"| {r['version']} | {r['isa']} | {r['scorer']} | {r['lines']} | {r['ms_per_line']:.2f} | "
                         f"{r['tokens_per_line']:.1f} | {r['chars_per_line']:.0f} | {r['ms_per_100_tokens']:.2f} |")
    graph = [r for r in rows if r.get("what") == "graph"]
    if graph:
        lines += ["", "The int8 graph itself (`--graph K`, the candidates above): the encoder's lower K layers "
                  "exported and quantised by the product's functions, as standard ONNX ops (`MatMulInteger -> "
                  "Cast -> Mul`, 0.20.0's graph) and fused (`MatMulIntegerToFloat`, 0.20.1's: the same bits), "
                  "run by sessions whose threads spin between runs (ONNX Runtime's default, 0.20.0's) or not "
                  "(0.20.1's), each batch mean-pooled in PyTorch after its run as the product does; best of the "
                  "rounds, the four alternating. The share of the graph's time by operator from ONNX Runtime's "
                  "profiler (not spinning).", "",
                  "| version | isa | layers | graph | threads spin | ms a line | tokens a line | time by operator |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in graph:
            ops = ", ".join(f"{k} {100 * v:.0f}%" for k, v in r.get("ops", {}).items()) or "-"
            lines.append(f"| {r['version']} | {r['isa']} | {r['layers']} | {r['graph']} | "
                         f"{'yes' if r['spinning'] else 'no'} | {r['ms_per_line']:.2f} | {r['tokens_per_line']:.1f} | "
                         f"{ops} |")
    write_results("teacher_cost", {"run_timings": t, "candidates": m, "pool": len(pool), "rows": rows,
                                   "lines": args.lines, "rounds": args.rounds}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
