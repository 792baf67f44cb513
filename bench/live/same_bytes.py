"""Same bytes before and after a move: run one set of commands with the code of a git revision and with
the working tree, and compare every output file except timings.

    python bench/live/same_bytes.py --ref <rev>        # e.g. the commit before a re-layout

The commands cover cosine, finetune (one epoch), moore-lewis (also ``score --estimate-share``), the
student, ``--cascade``, crosslingual, mixtures, ``nmt train``, ``downstream --judge nmt`` on a bitext
selection and ``adapt`` (0.38.0),
``select --from-scores``, ``combine``, ``evaluate``, ``embed`` and ``cluster`` on a small slice of the
shared pool (three domains, 240 lines each; 120 in-domain lines). Each side runs in its own folder
with its own embedding cache, the reference from a ``git worktree`` of ``--ref`` put first on
``PYTHONPATH``. Compared: every file under each output folder, byte for byte; JSON files after
dropping timings (``run.json``'s ``timings``, ``*_seconds``), the version, ``run.json``'s
``identity``, ``mix.json``'s ``shared_fit`` and any other identity a step records (hashes that hold the
version); text after replacing
each side's own folder with one placeholder. Exit 1 and the differing files when any differ. Also
compares the defaults fingerprint of both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("DOMAINSIFT_DATA", ROOT.parent / "shared" / "data" / "opus-multidomain" / "de-en"))
DOMAINS = ["EMEA", "KDE4", "Tanzil"]
PER_DOMAIN, N_IN = 240, 120
NMT_TRAIN = 300
# keys a version added to a record (0.37.0: nmt.json's training files, vocabulary checksum and kept translations);
# a side that lacks them is compared without them
ADDED_FILES = {"test.hyp"}  # 0.37.0: the test translations kept
ADDED_KEYS = {"train_files", "dev_files", "vocab_sha256", "translations", "sha256", "chrfpp", "accumulate"}


def make_data(d: Path) -> dict:
    d.mkdir(parents=True, exist_ok=True)
    pool = []
    for dom in DOMAINS:
        for lang in ("en", "de"):  # the German side: a bitext pool for the judge's selection
            lines = (DATA / f"{dom}.train.{lang}").read_text(encoding="utf-8").splitlines()[:PER_DOMAIN]
            (d / f"{dom}.pool.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
        pool.append(str(d / f"{dom}.pool.en"))
    for lang in ("en", "de"):
        lines = (DATA / f"EMEA.test.{lang}").read_text(encoding="utf-8").splitlines()[:N_IN]
        (d / f"in.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines = (DATA / "KDE4.test.en").read_text(encoding="utf-8").splitlines()[:N_IN]  # a mixture's second target
    (d / "in_kde.en").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for lang in ("de", "en"):  # a bitext for nmt train: 300 EMEA train pairs, 40 dev and 40 test pairs of EMEA test (past the in-domain lines)
        train = (DATA / f"EMEA.train.{lang}").read_text(encoding="utf-8").splitlines()
        dev = (DATA / f"EMEA.test.{lang}").read_text(encoding="utf-8").splitlines()[200:]
        (d / f"tr.{lang}").write_text("\n".join(train[:NMT_TRAIN]) + "\n", encoding="utf-8")
        (d / f"dv.{lang}").write_text("\n".join(dev[:40]) + "\n", encoding="utf-8")
        (d / f"te.{lang}").write_text("\n".join(dev[40:80]) + "\n", encoding="utf-8")
    # adapt's new domain: target-language lines already chosen (EMEA train past the nmt bitext)
    lines = (DATA / "EMEA.train.en").read_text(encoding="utf-8").splitlines()[NMT_TRAIN:NMT_TRAIN + 120]
    (d / "chosen.en").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"pool": pool, "in": str(d / "in.en"), "in_de": str(d / "in.de"), "in_kde": str(d / "in_kde.en"),
            "gold": pool[0], "nmt": {k: str(d / k) for k in ("tr.de", "tr.en", "dv.de", "dv.en", "te.de", "te.en")},
            "pool_de": [p[:-3] + ".de" for p in pool], "chosen": str(d / "chosen.en")}


def commands(data: dict) -> list[list[str]]:
    base = ["--in-domain", data["in"], "--pool", *data["pool"], "--seed", "0"]
    return [
        ["select", "--method", "cosine", *base, "--top", "100", "--out", "cosine"],
        ["select", "--method", "finetune", "--epochs", "1", *base, "--top", "100", "--out", "finetune"],
        ["select", "--method", "moore-lewis", *base, "--top", "100", "--out", "ml"],
        ["select", "--method", "student", *base, "--top", "100", "--out", "student"],
        ["select", "--method", "cosine", "--cascade", *base, "--top", "60", "--out", "cascade"],
        ["select", "--method", "crosslingual", "--in-domain", data["in_de"], "--pool", *data["pool"], "--seed", "0",
         "--top", "100", "--out", "crosslingual"],
        ["score", "--method", "moore-lewis", *base, "--estimate-share", "--out", "ml-score"],
        ["select", "--from-scores", "cosine", "--fraction", "0.2", "--out", "cosine-fraction"],
        ["combine", "cosine", "ml", "--out", "combined", "--top", "100"],
        ["evaluate", "combined", "--gold", data["gold"]],
        ["embed", data["in"], "--out", "embed"],
        ["select", "--method", "cosine", "--target", f"emea={data['in']}", "--target", f"kde={data['in_kde']}",
         "--pool", *data["pool"], "--seed", "0", "--top", "100", "--out", "mix-cosine"],
        ["select", "--method", "finetune", "--epochs", "1", "--target", f"emea={data['in']}", "--target",
         f"kde={data['in_kde']}", "--pool", *data["pool"], "--seed", "0", "--top", "100", "--out", "mix-finetune"],
        ["select", "--method", "finetune", "--epochs", "1", "--cascade", "--target", f"emea={data['in']}",
         "--target", f"kde={data['in_kde']}", "--pool", *data["pool"], "--seed", "0", "--top", "60",
         "--out", "mix-finetune-cascade"],
        ["cluster", *data["pool"], "--k", "3", "--seeds", "2", "--no-plots", "--out", "cluster"],
    ] + ([["nmt", "train", "--train", data["nmt"]["tr.de"], data["nmt"]["tr.en"], "--dev", data["nmt"]["dv.de"],
           data["nmt"]["dv.en"], "--test", data["nmt"]["te.de"], data["nmt"]["te.en"], "--epochs", "2", "--vocab", "300",
           "--max-tokens", "500", "--warmup", "30", "--beam", "2", "--out", "nmt"]] if "nmt" in data else []) \
        + (_translation_floor(data) if "chosen" in data else [])


def _translation_floor(data: dict) -> list[list[str]]:
    """A bitext selection judged by the translation model trained on it, and adapt on chosen lines (0.38.0)."""
    n, small = data["nmt"], ["--nmt-epochs", "2", "--nmt-vocab", "300", "--nmt-max-tokens", "500",
                             "--nmt-warmup", "30", "--beam", "2"]
    return [["select", "--method", "moore-lewis", "--in-domain", data["in"], "--pool", *data["pool"],
             "--pool-target", *data["pool_de"], "--seed", "0", "--top", "200", "--out", "bisel"],
            ["downstream", "--judge", "nmt", "bisel", "--test", n["te.de"], n["te.en"], "--dev", n["dv.de"],
             n["dv.en"], *small, "--out", "judge"],
            ["adapt", "--old", n["tr.de"], n["tr.en"], "--dev", n["dv.de"], n["dv.en"], "--selected", data["chosen"],
             "--new-source", data["in_de"], "--test", n["te.de"], n["te.en"], *small, "--nmt-epochs", "8",
             "--out", "adapt"]]  # 8 epochs: a reverse model of 2 translates every line into nothing


def run_side(name: str, src: Path, work: Path, data: dict) -> None:
    out = work / name
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(src), "DOMAINSIFT_CACHE": str(work / f"cache-{name}"),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    for cmd in commands(data):
        print(f"[{name}] domainsift {' '.join(cmd)}", flush=True)
        r = subprocess.run([sys.executable, "-m", "domainsift", "-q", *cmd], cwd=out, env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"[{name}] failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-3000:]}")
    fp = subprocess.run([sys.executable, "-c", "try:\n from domainsift.cli import defaults_fingerprint as f\nexcept ImportError:\n"
                         " from domainsift.defaults import defaults_fingerprint as f\nprint(f())"],
                        env=env, capture_output=True, text=True, check=True).stdout.strip()
    (work / f"{name}.defaults").write_text(fp)


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items()
                if k not in ("timings", "version", "date", "identity", "shared_fit") and k not in ADDED_KEYS
                and not k.endswith("_seconds") and k != "target_tokens_per_second"}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    if isinstance(obj, str) and "|v:" in obj:
        return "|".join(p for p in obj.split("|") if not p.startswith("v:"))
    if isinstance(obj, str) and re.fullmatch(r"[0-9a-f]{20,24}", obj):
        return "<identity>"  # a step's or a training's identity: a hash that holds the version
    return obj


def normalised(path: Path, side_root: Path) -> bytes:
    raw = path.read_bytes()
    if path.suffix == ".model":  # a sentencepiece model: its pieces and scores (0.36.0's bytes held a temporary name)
        import sentencepiece as spm
        sp = spm.SentencePieceProcessor(model_file=str(path))
        return json.dumps([(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]).encode()
    if path.suffix in (".json", ".tsv", ".txt", ".en", ".de", ".md") or path.name.endswith(".tsv"):
        text = raw.decode("utf-8", "replace").replace(str(side_root), "<OUT>")
        if path.suffix == ".json":
            try:
                return json.dumps(_strip(json.loads(text)), sort_keys=True).encode()
            except ValueError:
                pass
        return text.encode()
    return raw


def compare(work: Path) -> list[str]:
    a_root, b_root = work / "ref", work / "new"
    files_a = {p.relative_to(a_root) for p in a_root.rglob("*") if p.is_file() and ".lock" not in p.name}
    files_b = {p.relative_to(b_root) for p in b_root.rglob("*") if p.is_file() and ".lock" not in p.name}
    diffs = [f"only in ref: {p}" for p in sorted(files_a - files_b)]
    diffs += [f"only in new: {p}" for p in sorted(files_b - files_a) if p.name not in ADDED_FILES]
    for p in sorted(files_a & files_b):
        if normalised(a_root / p, a_root) != normalised(b_root / p, b_root):
            diffs.append(f"differs: {p}")
    if (work / "ref.defaults").read_text() != (work / "new.defaults").read_text():
        diffs.append("the defaults fingerprint differs")
    return diffs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", required=True, help="the git revision to compare the working tree with")
    ap.add_argument("--work", default=None, help="keep the outputs here (default: a temporary folder)")
    ap.add_argument("--record", action="store_true", help="write bench/results/same_bytes.md and .json")
    ap.add_argument("--compare-only", action="store_true",
                    help="compare the two sides a run of this script left in --work again (no command runs)")
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="same-bytes-"))
    if args.compare_only:
        if not (work / "ref").is_dir() or not (work / "new").is_dir():
            sys.exit(f"{work}: no earlier run of both sides to compare")
    else:
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        tree = work / "ref-tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), args.ref], check=True,
                       capture_output=True)
        try:
            data = make_data(work / "data")
            run_side("ref", tree / "src", work, data)
            run_side("new", ROOT / "src", work, data)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)
    diffs = compare(work)
    n = sum(1 for p in (work / "new").rglob("*") if p.is_file())
    for d in diffs:
        print(d)
    print(f"{n} files compared under {work}: " + ("SAME" if not diffs else f"{len(diffs)} differ"))
    if args.record:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _common import write_results
        ref = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.ref], capture_output=True,
                             text=True).stdout.strip()
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "src"], capture_output=True,
                                    text=True).stdout.strip())
        rows = [" ".join(c) for c in commands({"pool": ["<pool>"], "in": "<in.en>", "in_de": "<in.de>", "in_kde": "<in_kde.en>",
                                               "gold": "<EMEA.pool.en>", "pool_de": ["<pool.de>"],
                                               "chosen": "<chosen.en>",
                                               "nmt": {k: f"<{k}>" for k in ("tr.de", "tr.en", "dv.de", "dv.en",
                                                                              "te.de", "te.en")}})]
        md = ("# Same bytes before and after\n\n"
              f"Reference {ref}, working tree at {head}{' (src/ changed since)' if dirty else ''}: "
              f"{n} output files compared, **{'all the same' if not diffs else f'{len(diffs)} differ'}** "
              "(timings and the version aside), and the defaults fingerprint.\n\n"
              "Commands (each side in its own folder with its own cache; pool: 240 lines each of EMEA, KDE4 and "
              "Tanzil train.en; in-domain: 120 lines of EMEA test.en / .de, and of KDE4 test.en for the mixtures; "
              f"nmt train: {NMT_TRAIN} EMEA train pairs, 40 dev and 40 test pairs of EMEA test past its line 200; a sentencepiece model "
              "compared by its pieces and scores, keys and files a version added aside):\n\n"
              + "\n".join(f"- `domainsift {r}`" for r in rows) + "\n"
              + ("" if not diffs else "\nDifferences:\n\n" + "\n".join(f"- {d}" for d in diffs) + "\n"))
        write_results("same_bytes", {"ref": ref, "head": head, "src_changed": dirty, "files": n, "differ": diffs},
                      md)
    return 1 if diffs else 0


if __name__ == "__main__":
    raise SystemExit(main())
