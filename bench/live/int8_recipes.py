"""Benchmark: how the encoder runs on a CPU — fp32, ONNX Runtime's dynamic int8 (0.2.0-0.5.1), and
per-row int8 with 8-bit or 7-bit weights (0.6.0's onnx-int8) — for speed, closeness to PyTorch fp32,
whether a vector depends on its batch-mates, and selection precision (cosine and finetune).

Recipes (all from the same ONNX graph, traced from eager attention by the product's exporter):

- ``onnx``: fp32.
- ``int8-dynamic``: ``onnxruntime.quantization.quantize_dynamic`` (MatMul weights int8 per output
  channel, activations u8 with one scale per batch tensor): the default of 0.2.0-0.5.1.
- ``int8-row-w8``: the product's per-row quantiser with 8-bit weights (|q| <= 127).
- ``onnx-int8``: the product's default (per-row activations, 7-bit weights: no saturation on AVX2).

Measured per recipe: sentences/s encoding 5,000 lines of the clustering set (batch 32 sorted by
token count; --rounds rounds, alternating); mean and minimum cosine to PyTorch fp32 on them; the
largest coordinate difference between encoding them in order with batch 32 and in reverse order
with batch 7 (0: a vector depends on its sentence alone); selection precision on the shared
benchmark (35,000-line pool, N = 5,000, in-domain <D>.test.en) for cosine, and for finetune at the
product's defaults (seed --seed): the encoder is fine-tuned once per target and the pool scored by
each recipe, so only the scoring differs.

    python bench/live/int8_recipes.py [--rounds 2] [--seed 0] [--no-finetune]
    python bench/live/int8_recipes.py --speed-only --rounds 3     # -> int8_speed.md: speed, nothing else running
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import CLASSIC, SEVEN, clustering_set, data_file, write_results

from domainsift.embed.onnx import OnnxRunner, input_names_of, build_model_file, quantize_per_row
from domainsift.embed.transformers import TransformersEmbedder, default_model_path

RECIPES = ["onnx", "int8-dynamic", "int8-row-w8", "onnx-int8"]
N = 5000


def quantize_dynamic_0_5(src: Path, dst: Path) -> None:
    """The int8 recipe of 0.2.0-0.5.1: ONNX Runtime's dynamic quantisation of the MatMul weights
    (int8, per output channel); activations quantised per batch tensor at run time."""
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic
    root = logging.getLogger()
    old, root.disabled = root.disabled, True  # the quantiser logs "consider pre-processing" on the root logger
    try:
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"], extra_options={"DefaultTensorType": TensorProto.FLOAT})
    finally:
        root.disabled = old


def recipe_files(model, tok, folder: Path) -> dict:
    """Each recipe's ONNX file for ``model`` (exported once, fp32, then quantised)."""
    fp32 = folder / "onnx.onnx"
    build_model_file(model, tok, -1, "onnx", fp32)
    files = {"onnx": fp32, "int8-dynamic": folder / "int8-dynamic.onnx", "int8-row-w8": folder / "int8-row-w8.onnx",
             "onnx-int8": folder / "onnx-int8.onnx"}
    quantize_dynamic_0_5(fp32, files["int8-dynamic"])
    quantize_per_row(fp32, files["int8-row-w8"], weight_max=127)
    build_model_file(model, tok, -1, "onnx-int8", files["onnx-int8"])  # the product's own path
    return files


def use(emb: TransformersEmbedder, path: Path, names, batch_size: int) -> TransformersEmbedder:
    emb.runner = OnnxRunner(path, names, threads=emb.load()[0].get_num_threads())
    emb.batch_size = batch_size
    return emb


def precision(scores: np.ndarray, gold: np.ndarray) -> float:
    from domainsift.select.base import choose
    return float(gold[choose(scores, top=N)].mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-finetune", action="store_true")
    ap.add_argument("--speed-only", action="store_true", help="speed, closeness and batch independence only "
                    "(written to int8_speed.md): for a machine with nothing else running")
    ap.add_argument("--targets", nargs="+", default=CLASSIC, choices=CLASSIC)
    args = ap.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    from domainsift.io.corpus import read_corpus
    from domainsift.machine import describe

    texts = clustering_set().texts[::2]  # 5,000 lines, every domain
    emb = TransformersEmbedder(default_model_path(), progress=False, backend="onnx")
    torch, tok, model, _ = emb.load()
    names = input_names_of(model, tok)
    tmp = Path(tempfile.mkdtemp(prefix="int8-recipes-"))
    files = recipe_files(model, tok, tmp)
    ref = TransformersEmbedder(default_model_path(), progress=False, backend="torch").encode(texts)

    rows = {r: {"recipe": r, "speeds": []} for r in RECIPES}
    for rnd in range(args.rounds):
        for r in RECIPES:
            use(emb, files[r], names, 32).encode(texts[:64])
            t0 = time.time()
            x = emb.encode(texts)
            rows[r]["speeds"].append(round(len(texts) / (time.time() - t0), 1))
            if rnd == 0:
                cos = (x * ref).sum(1)
                rev = use(emb, files[r], names, 7).encode(texts[::-1])[::-1]
                rows[r].update(cos_mean=float(cos.mean()), cos_min=float(cos.min()),
                               batch_max_diff=float(np.abs(x - rev).max()))
            print(r, rows[r], flush=True)
    if args.speed_only:
        return speed_report(rows, args)

    pool = read_corpus([data_file(d, "train") for d in SEVEN])
    file_index = {f: i for i, f in enumerate(pool.files)}
    origin = np.array([file_index[f] for f, _ in pool.ids])

    def gold_of(target: str) -> np.ndarray:
        return origin == pool.files.index(data_file(target, "train"))
    for r in RECIPES:  # cosine: the pool encoded once per recipe
        x = use(emb, files[r], names, 32).encode(pool.texts)
        x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        rows[r]["cosine"] = {}
        for t in args.targets:
            q = use(emb, files[r], names, 32).encode(read_corpus([data_file(t, "test")]).texts)
            q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
            c = q.mean(0)
            c /= np.linalg.norm(c)
            rows[r]["cosine"][t] = precision(x @ c, gold_of(t))
        print(r, "cosine", rows[r]["cosine"], flush=True)

    if not args.no_finetune:
        from domainsift.select import get_selector
        for r in RECIPES:
            rows[r]["finetune"] = {}
        for t in args.targets:
            t0 = time.time()
            sel = get_selector("finetune", seed=args.seed, progress=False, cache_dir="").fit(
                read_corpus([data_file(t, "test")]), pool)
            fit_s = time.time() - t0
            clf = sel.classifier_
            clf.train(False)
            ft_files = recipe_files(clf.encoder, clf.tokenizer, Path(tempfile.mkdtemp(prefix="ft-", dir=tmp)))
            gold = gold_of(t)
            for r in RECIPES:
                scorer = clf.embedder(backend="onnx")
                use(scorer, ft_files[r], names, clf.score_batch_size)
                t1 = time.time()
                s = torch.from_numpy(scorer.encode(pool.texts, head=clf.head)).sigmoid().numpy()
                rows[r]["finetune"][t] = precision(s, gold)
                rows[r].setdefault("finetune_score_seconds", {})[t] = round(time.time() - t1, 1)
                print(t, r, f"finetune {rows[r]['finetune'][t]:.4f} (fit {fit_s:.0f} s)", flush=True)

    out = list(rows.values())
    lines = ["# int8 recipes: speed, closeness to fp32, batch independence, selection precision", "",
             f"Machine: {json.dumps(describe())}", "",
             "5,000 lines of the clustering set, all-MiniLM-L6-v2, max length 128. Batch diff: the largest "
             "coordinate difference between encoding in order with batch 32 and in reverse order with batch 7. "
             "Selection: the shared benchmark (35,000-line pool, N = 5,000), mean precision over "
             f"{len(args.targets)} targets; finetune at the product's defaults, seed {args.seed}, fine-tuned once per "
             "target and scored by each recipe.", "",
             "| recipe | sentences/s (mean) | vs onnx fp32 | cosine to torch fp32 mean / min | batch diff | "
             "cosine precision | finetune precision |", "|---|---|---|---|---|---|---|"]
    base = np.mean(rows["onnx"]["speeds"])
    for r in out:
        sp = float(np.mean(r["speeds"]))
        cosp = np.mean(list(r["cosine"].values()))
        ftp = f"{np.mean(list(r['finetune'].values())):.4f}" if r.get("finetune") else "-"
        lines.append(f"| {r['recipe']} | {sp:.0f} | {sp / base:.2f} | {r['cos_mean']:.4f} / {r['cos_min']:.4f} | "
                     f"{r['batch_max_diff']:.2g} | {cosp:.4f} | {ftp} |")
    for key in ("cosine", "finetune"):
        if not out[0].get(key):
            continue
        lines += ["", f"{key} precision per target:", "", "| recipe | " + " | ".join(args.targets) + " |",
                  "|---|" + "---|" * len(args.targets)]
        for r in out:
            lines.append(f"| {r['recipe']} | " + " | ".join(f"{r[key][t]:.3f}" for t in args.targets) + " |")
    write_results("int8_recipes", {"machine_detail": describe(), "rows": out}, "\n".join(lines) + "\n")


def speed_report(rows: dict, args) -> None:
    from domainsift.machine import describe
    base = np.mean(rows["onnx"]["speeds"])
    lines = ["# int8 recipes: encoding speed", "", f"Machine: {json.dumps(describe())}", "",
             f"5,000 lines of the clustering set, all-MiniLM-L6-v2, batch 32 sorted by token count, {args.rounds} "
             "rounds alternating in one process, nothing else running. Batch diff: the largest coordinate "
             "difference between encoding in order with batch 32 and in reverse order with batch 7.", "",
             "| recipe | sentences/s per round | mean | vs onnx fp32 | cosine to torch fp32 mean / min | batch diff |",
             "|---|---|---|---|---|---|"]
    for r in rows.values():
        sp = float(np.mean(r["speeds"]))
        lines.append(f"| {r['recipe']} | {' / '.join(f'{v:.0f}' for v in r['speeds'])} | {sp:.0f} | {sp / base:.2f} | "
                     f"{r['cos_mean']:.4f} / {r['cos_min']:.4f} | {r['batch_max_diff']:.2g} |")
    write_results("int8_speed", {"machine_detail": describe(), "rows": list(rows.values())}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
