"""Benchmark "nmt_speed": how fast the translation model trains and translates on this CPU, per setting.

Training: the `proxy` preset (d_model 128, 2+2 layers, 4k vocabulary) trained from scratch for EPOCHS epochs on
5,000 pairs drawn (seeded) from the seven domains' de-en training files, de->en, a 200-pair dev set; one row
per setting: torch's threads, the batch size (`max_tokens`, padded target tokens), `compile` (torch.compile
of the training steps, dynamic shapes; its compilation is inside the seconds) and `bf16` (bfloat16 autocast
of the forward pass), two options that measured slower and left the code (their rows stay, with the commit
that made them; `--rows bf16 compile` measures them again, on another CPU, with that commit's own code).
Target tokens a second over the whole training (nmt.json's `target_tokens_per_second`) and the wall seconds. A larger batch also changes the training (fewer, larger steps): the dev loss after
EPOCHS epochs is reported beside its speed.

Translation: the KDE4 oracle model of bench/live/nmt_judge.py (the proxy preset trained on 5,000 KDE4 pairs,
seed 0) translates the judge half of KDE4.test (the pairs the pool does not hold), de->en, through
`generate` and through CTranslate2 (int8), beam 5 and greedy: sentences and output tokens a
second, and BLEU (sacrebleu) of what each backend wrote.

Each row runs in its own process (torch.compile's caches and thread pools start clean) and lands in
bench/results/nmt_speed.json as it finishes; a killed benchmark resumes. One benchmark at a time: these are
timings.

    python bench/live/nmt_speed.py [--rows base t1 mt1600 ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import DATA, ROOT, SEVEN, command_line, cpu_isa, data_file, earlier_rows, machine, merge_rows, \
    native_bf16, read_lines, write_results

WORK = ROOT / "bench" / "work" / "nmt_speed"
N, N_DEV, EPOCHS, SEED = 5000, 200, 3, 0
# name: (threads, max_tokens); the rows "compile" (torch.compile of the training steps, dynamic shapes) and
# "bf16" (bfloat16 autocast of the forward pass) ran at commit c7b541f, whose TrainSettings had those
# options; both measured slower (bench/results/nmt_speed.md) and left the code
ROWS = {"base": (2, 800), "t1": (1, 800), "mt1600": (2, 1600), "mt3000": (2, 3000)}
# rows of options that left the code, run again (on another CPU) by that commit's own code: a git worktree of
# the commit, its benchmark's `--one ROW` with its own package on the path (the rows' "commit" names it)
AT = {"compile": "2f26ab3", "bf16": "2f26ab3"}


def pairs():
    """N training and N_DEV dev pairs drawn (seeded) from the seven domains' training files."""
    de = [x for d in SEVEN for x in read_lines(data_file(d, "train", "de"))]
    en = [x for d in SEVEN for x in read_lines(data_file(d, "train", "en"))]
    keep = [k for k in range(len(de)) if de[k].strip() and en[k].strip()]
    pick = np.random.default_rng(SEED).choice(keep, N + N_DEV, replace=False)
    return [(de[k], en[k]) for k in pick[:N]], [(de[k], en[k]) for k in pick[N:]]


def one(name: str) -> dict:
    """One row, in this process."""
    import torch

    from domainsift.nmt import Bitext, train_nmt
    from domainsift.nmt.trainer import TrainSettings
    threads, max_tokens = ROWS[name]
    torch.set_num_threads(threads)
    train, dev = pairs()
    tb = Bitext(tuple(d for d, _ in train), tuple(e for _, e in train), ("sample.de", "sample.en"))
    db = Bitext(tuple(d for d, _ in dev), tuple(e for _, e in dev), ("dev.de", "dev.en"))
    settings = TrainSettings(preset="proxy", epochs=EPOCHS, patience=EPOCHS, seed=SEED, max_tokens=max_tokens)
    t0 = time.time()
    rec = train_nmt(tb, db, WORK / name, settings, overwrite=True)
    row = {"row": name, "threads": threads, "max_tokens": max_tokens, "compile": False, "bf16": False,
           "train_seconds": rec["train_seconds"], "wall_seconds": round(time.time() - t0, 1),
           "target_tokens": rec["target_tokens"], "target_tokens_per_second": rec["target_tokens_per_second"],
           "dev_loss_last": rec["dev_loss"][-1], "epochs": rec["epochs_run"]}
    return row


DECODE_MODEL = ROOT / "bench" / "work" / "nmt_judge" / "KDE4" / "s0" / "oracle" / "model"
BACKENDS = [("generate", "generate", None), ("ctranslate2 int8", "ctranslate2", "int8")]


def decode() -> list[dict]:
    """The decoding rows, in this process."""
    import torch
    from nmt_judge import halves

    import sentencepiece as spm
    from domainsift.nmt import load_nmt, score_translation, translate
    from domainsift.nmt.ct2 import converted
    torch.set_num_threads(2)
    pool_en = {x for d in SEVEN for x in read_lines(data_file(d, "train", "en"))}
    pool_de = {x for d in SEVEN for x in read_lines(data_file(d, "train", "de"))}
    _, judge = halves("KDE4", pool_en, pool_de, 0)
    src, ref = [d for d, _ in judge], [e for _, e in judge]
    nmt = load_nmt(DECODE_MODEL)
    sp = spm.SentencePieceProcessor(model_file=str(DECODE_MODEL / "spm.model"))
    rows = []
    for name, backend, quant in BACKENDS:
        if quant:
            converted(nmt, quant)  # once, outside the timing
        for beam in (5, 1):
            t0 = time.time()
            hyp = translate(nmt, src, beam=beam, backend=backend)
            s = time.time() - t0
            toks = sum(len(sp.encode(h)) + 1 for h in hyp)
            rows.append({"row": f"decode {name} beam {beam}", "backend": name, "beam": beam, "n": len(src),
                         "seconds": round(s, 2), "sentences_per_second": round(len(src) / s, 1),
                         "target_tokens_per_second": round(toks / s, 1),
                         "bleu": score_translation(hyp, ref)["bleu"]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", nargs="+", default=list(ROWS), choices=list(ROWS) + list(AT))
    ap.add_argument("--decode", action="store_true", help="the decoding rows too (after the training rows)")
    ap.add_argument("--one", choices=list(ROWS) + ["decode"], help=argparse.SUPPRESS)  # a row, in its own process
    args = ap.parse_args()
    if args.one == "decode":
        print("ROWS " + json.dumps(decode()), flush=True)
        return
    if args.one:
        print("ROW " + json.dumps(one(args.one)), flush=True)
        return
    from domainsift import __version__
    rows = earlier_rows("nmt_speed")
    cpu = machine()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    for name in args.rows:
        key = (name, __version__, cpu)
        if any(_key(r) == key for r in rows):
            continue
        out = _at(name, AT[name]) if name in AT else \
            subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"row {name} failed:\n{out.stderr[-3000:]}")
        row = json.loads(next(ln for ln in out.stdout.splitlines() if ln.startswith("ROW "))[4:])
        row.update(version=__version__, commit=AT.get(name, commit), machine=cpu, isa=cpu_isa(),
                   native_bf16=native_bf16(), command=command_line())
        rows = merge_rows(rows, [row], _key)
        print(f"{name}: {row['target_tokens_per_second']:,.0f} target tokens/s ({row['wall_seconds']:.0f} s)", flush=True)
        _write(rows)
    if args.decode and not any(r["row"].startswith("decode") and (r["version"], r["machine"]) == (__version__, cpu)
                               for r in rows):
        out = subprocess.run([sys.executable, __file__, "--one", "decode"], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"the decoding rows failed:\n{out.stderr[-3000:]}")
        new = json.loads(next(ln for ln in out.stdout.splitlines() if ln.startswith("ROWS "))[5:])
        for row in new:
            row.update(version=__version__, commit=commit, machine=cpu, isa=cpu_isa(), native_bf16=native_bf16(),
                       command=command_line())
        rows = merge_rows(rows, new, _key)
    _write(rows)


def _at(name: str, commit: str) -> subprocess.CompletedProcess:
    """Row ``name`` measured by the code of ``commit`` (a detached git worktree, removed afterwards): that
    commit's benchmark and package, this interpreter, the same data."""
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            env = dict(os.environ, PYTHONPATH=str(tree / "src"), DOMAINSIFT_DATA=str(DATA))
            return subprocess.run([sys.executable, str(tree / "bench" / "live" / "nmt_speed.py"), "--one", name],
                                  capture_output=True, text=True, env=env)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)


def _key(r: dict) -> tuple:
    return r["row"], r["version"], r["machine"]


def _cpu(r: dict) -> str:
    return r["isa"] + (f" + {r['native_bf16']}" if r.get("native_bf16") else "")


def _write(rows: list[dict]) -> None:
    lines = ["# How fast the translation model trains and translates (domainsift nmt, the proxy preset)", "",
             f"Training: the `proxy` preset from scratch, {EPOCHS} epochs on {N:,} de->en pairs drawn (seed {SEED}) from "
             f"the seven domains, a {N_DEV}-pair dev set; target tokens a second over the whole training (a "
             "compiled row's compilation included). A larger batch is also another training (fewer, larger "
             f"steps): its dev loss after {EPOCHS} epochs is beside its speed.", "",
             "| row | version | commit | CPU | threads | max_tokens | compile | bf16 | target tokens/s | train s | "
             f"dev loss after {EPOCHS} |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["row"].startswith("decode"):
            continue
        lines.append(f"| {r['row']} | {r['version']} | {r.get('commit', '')} | {_cpu(r)} | {r['threads']} | "
                     f"{r['max_tokens']} | "
                     f"{'yes' if r['compile'] else '-'} | {'yes' if r['bf16'] else '-'} | "
                     f"{r['target_tokens_per_second']:,.0f} | {r['train_seconds']:.0f} | {r['dev_loss_last']:.3f} |")
    dec = [r for r in rows if r["row"].startswith("decode")]
    if dec:
        lines += ["", f"Translation of KDE4's judge half ({dec[0]['n']} sentences) by nmt_judge's KDE4 oracle model, "
                  "2 threads:", "", "| backend | version | CPU | beam | sentences/s | target tokens/s | BLEU |",
                  "|---|---|---|---|---|---|---|"]
        for r in dec:
            lines.append(f"| {r['backend']} | {r['version']} | {_cpu(r)} | {r['beam']} | {r['sentences_per_second']:.1f} "
                         f"| {r['target_tokens_per_second']:,.0f} | {r['bleu']:.2f} |")
    write_results("nmt_speed", {"rows": rows, "n": N, "n_dev": N_DEV, "epochs": EPOCHS, "seed": SEED},
                  "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
