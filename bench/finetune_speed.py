"""Benchmark "finetune speed": training steps per second of the finetune recipe under honest
speed-ups, in one process, alternating, on this CPU.

The default encoder with a linear head, AdamW (lr 2e-5, head 1e-3), batches of 16 of the
selection benchmark's KDE4 in-domain lines and pool lines, length-bucketed as finetune does
(windows of 20 batches); --steps steps per variant per round, --rounds rounds:

- fp32: the product's training (0.2.0 and 0.3.0);
- bf16-autocast: the forward pass and loss under ``torch.autocast("cpu", torch.bfloat16)``
  (this CPU has AVX-512 BF16, no AMX);
- frozen-word-embeddings: the word-embedding matrix (30,522 x 384, half of the encoder's
  weights) is not trained, so AdamW does not update it every step;
- frozen-embeddings-and-3-layers: the embeddings and the lower three of the six layers are not
  trained (no backward pass through them);
- frozen-word-embeddings+fused-adamw: the product's default (0.3.0) with AdamW's fused kernel
  (``fused=True``; the same update, one kernel over all tensors instead of a Python loop);
- frozen-word-embeddings+fused-adamw+no-dropout: the same without dropout (every ``nn.Dropout``
  at p = 0; attention then runs without its dropout too);
- frozen-word-embeddings+fused-adamw+eager-attention: the same with transformers' eager
  attention instead of PyTorch's fused kernel (which, with attention dropout on, takes a slower
  path on a CPU): measured level with it (bench/results/finetune_speed.md), so training keeps the default;
- frozen-word-embeddings+fused-adamw+batch-32: fewer, larger steps (batches of 32, the same number
  of sentences per variant, so --steps/2 steps): sentences per second is what counts there.

    python bench/finetune_speed.py [--steps 40] [--rounds 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import SEVEN, data_file, write_results
from finetune_experimental import set_dropout

from domainsift.embed.settings import set_attention
from domainsift.embed.transformers import default_model_path
from domainsift.select.train import EncoderClassifier, batches

VARIANTS = ["fp32", "bf16-autocast", "frozen-word-embeddings", "frozen-embeddings-and-3-layers",
            "frozen-word-embeddings+fused-adamw", "frozen-word-embeddings+fused-adamw+no-dropout",
            "frozen-word-embeddings+fused-adamw+eager-attention", "frozen-word-embeddings+fused-adamw+batch-32"]


def run(variant: str, texts: list[str], labels: np.ndarray, steps: int, seed: int) -> tuple[float, float]:
    """Steps per second and sentences per second of ``variant``."""
    import torch
    clf = EncoderClassifier(default_model_path())
    torch.manual_seed(seed)
    clf.new_head()
    clf.train(True)
    if variant.startswith("frozen-word-embeddings"):
        clf.encoder.get_input_embeddings().weight.requires_grad_(False)
    if variant.endswith("no-dropout"):
        set_dropout(clf.encoder, 0.0)
    if variant.endswith("eager-attention"):
        set_attention(clf.encoder, "eager")
    if variant == "frozen-embeddings-and-3-layers":
        for module in [clf.encoder.embeddings, *clf.encoder.encoder.layer[:3]]:
            module.requires_grad_(False)
    params = [p for p in clf.encoder.parameters() if p.requires_grad]
    opt = torch.optim.AdamW([{"params": params, "lr": 2e-5}, {"params": clf.head.parameters(), "lr": 1e-3}],
                            weight_decay=0.01, fused="fused-adamw" in variant)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    rng = np.random.default_rng(seed)
    size = 32 if variant.endswith("batch-32") else 16
    # the same windows of 320 sentences for either batch size, and the same sentences in all
    order = list(batches(texts, size, rng, 320 // size))[:steps * 16 // size]
    t0 = time.time()
    for b in order:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=variant == "bf16-autocast"):
            logits = clf.forward([texts[i] for i in b])
            loss = loss_fn(logits.float(), torch.from_numpy(labels[b]))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
    seconds = time.time() - t0
    return len(order) / seconds, sum(len(b) for b in order) / seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    pos = [x.strip() for x in open(data_file("KDE4", "test"), encoding="utf-8") if x.strip()]
    pool = [x.strip() for d in SEVEN for x in open(data_file(d, "train"), encoding="utf-8") if x.strip()]
    neg = [pool[i] for i in np.random.default_rng(0).choice(len(pool), size=len(pos), replace=False)]
    texts, labels = pos + neg, np.array([1.0] * len(pos) + [0.0] * len(neg), dtype=np.float32)
    rows = []
    for r in range(args.rounds):
        for v in VARIANTS:
            rate, sentences = run(v, texts, labels, args.steps, seed=r)
            rows.append({"round": r, "variant": v, "steps_per_s": round(rate, 3),
                         "sentences_per_s": round(sentences, 1)})
            print(rows[-1], flush=True)
    base = {r["round"]: r["sentences_per_s"] for r in rows if r["variant"] == "fp32"}
    for row in rows:
        row["ratio_to_fp32"] = round(row["sentences_per_s"] / base[row["round"]], 3)
    lines = ["# Fine-tuning speed on this CPU", "",
             f"all-MiniLM-L6-v2 + linear head, batches of 16 (length-bucketed), {args.steps} steps per variant and "
             f"round (batch 32: half as many), {args.rounds} rounds alternating in one process; ratio of "
             "sentences/s to fp32 in the same round.", "",
             "| variant | steps/s (mean) | sentences/s (mean) | ratio to fp32 (mean) |", "|---|---|---|---|"]
    for v in VARIANTS:
        rs = [r for r in rows if r["variant"] == v]
        lines.append(f"| {v} | {np.mean([r['steps_per_s'] for r in rs]):.2f} | "
                     f"{np.mean([r['sentences_per_s'] for r in rs]):.1f} | {np.mean([r['ratio_to_fp32'] for r in rs]):.2f} |")
    write_results("finetune_speed", {"rows": rows, "steps": args.steps}, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
