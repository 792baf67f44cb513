"""Benchmark "sampling" (paper 004 on this data): a small Transformer language model trained
on the seven English train sets with each domain-sampling policy for the same number of
steps and seeds; per-domain dev perplexity.

Data. The shared train sets all hold 5,000 lines, and under equal sizes every Mixed-α is the
same uniform mixture; so the training mixture takes the first N lines of each domain with N
following the skew of paper 004's Table 1 (one large domain, one medium, five small ones):
EMEA 5,000, JRC-Acquis 1,100, OpenSubtitles 650, KDE4 600, QED 400, TED2020 350, Tanzil 250
(8,350 lines; shares 0.60 ... 0.03). Each domain's test file gives two disjoint parts: lines
1-100 are the dev set the policies learn from, lines 251-500 the evaluation set every
perplexity below is measured on (never seen by a policy).

Model. A BPE tokenizer (the `tokenizers` library, 4,000 types, trained on the training
mixture); a 2-layer causal Transformer (d 128, 4 heads, feed-forward 512, dropout 0.1,
sentences of at most 64 tokens), AdamW lr 1e-3 with 100 warm-up steps, batches of 32
sentences, --steps steps. The training loop is a plain PyTorch loop over
`domainsift.sampling.DomainSampler`; every --session steps the policy updates the weights.

Policies: mixed-0, mixed-0.5, mixed-1 (fixed), mdac (paper 004's settings: k = 10,
100 iterations per update, 20 with clusters; uniform start λ_0; lr_data from the paper's grid
{0.001, 0.0025, 0.005}, chosen on the policies' own dev lines of seed 0 with `--lr-data choose`),
dds (its original code's settings since 0.9.0: 200 Adam steps of lr 1e-4 an update; rows of
earlier versions ran MDAC's plain-gradient rule and grid).
Targets:
  uniform   - the mean dev loss of the seven domains (multi-domain, paper 004 §5.3);
  Tanzil    - Tanzil's dev loss alone (adaptation to a small domain, §5.1);
  clusters  - the uniform target, but the sampler's domains are the 7 clusters that
              `domainsift cluster` finds in the training mixture (no gold labels, §5.5).
The fixed mixtures never look at a target: their uniform and Tanzil rows are the same
training run, evaluated for each target. `dev_ppl` is the mean of the target's per-domain
evaluation perplexities (uniform, clusters: the seven; Tanzil: Tanzil's).
`seconds` is the training wall time including the policy's updates, not the evaluation.

    # issue 46 item 7 (-> sampling_uniform.md): the same protocol on the uniform target
    python bench/live/sampling.py --seeds 0 --targets uniform --session 19 --policies mdac --starts 0 \
        --lr-data 0.0003 0.001 --threads 1 --table sampling_uniform
    python bench/live/sampling.py --seeds 0 1 2 --targets uniform --session 19 --starts 0 best --lr-data choose \
        --policies mixed-0 mixed-0.5 mixed-1 dds mdac --threads 1 --table sampling_uniform
    # issue 34 (-> sampling.md): 52 updates a run; MDAC's grid on seed 0 first, then every seed
    python bench/live/sampling.py --seeds 0 --targets Tanzil --session 19 --policies mixed-0 mixed-0.5 mixed-1 mdac \
        --starts 0 --lr-data 0.0003 0.001 --threads 1
    python bench/live/sampling.py --seeds 0 1 2 --targets Tanzil --session 19 --starts 0 best --lr-data choose \
        --policies mixed-0 mixed-0.5 mixed-1 dds mdac ft-full --threads 1
    python bench/live/sampling.py --seeds 0 --targets uniform Tanzil --policies mdac dds --name sampling_grid
    # the table from the finished runs alone (nothing trained; a missing run is named and left out)
    python bench/live/sampling.py --seeds 0 1 2 --targets uniform --session 19 --starts 0 best --lr-data choose \
        --policies mixed-0 mixed-0.5 mixed-1 dds mdac --threads 1 --table sampling_uniform --table-only
    (variants: --init-alpha 1, --k, --session; a finished run is kept in
    bench/results/<name>_runs.json, so a killed benchmark resumes, on a fresh clone too, and tables
    are rebuilt in seconds)

Starts (--starts): each adaptive run starts from a Mixed-alpha or from 'best', the fixed mixture
with the lowest perplexity on the policies' dev lines for that target and seed, and its row gives
its perplexity minus its start's (same seed). ft-full (Tanzil target): paper 004's FT-Full, the
best fixed mixture's model trained further on Tanzil's 250 lines alone (--ft-steps, the best state
on Tanzil's dev lines kept).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import ROOT, SEVEN, data_file, write_results

SIZES = {"EMEA": 5000, "JRC-Acquis": 1100, "OpenSubtitles": 650, "KDE4": 600, "QED": 400,
         "TED2020": 350, "Tanzil": 250}
DEV_LINES = (0, 100)
EVAL_LINES = (250, 500)
POLICIES = ["mixed-0", "mixed-0.5", "mixed-1", "dds", "mdac"]
FIXED = ["mixed-0", "mixed-0.5", "mixed-1"]
TARGETS = ["uniform", "Tanzil", "clusters"]
WORK = ROOT / "bench" / "work" / "sampling"
VOCAB, MAXLEN, DIM, LAYERS, HEADS, FF, BATCH = 4000, 64, 128, 2, 4, 512, 32
CLIP = 1.0      # gradient clipping (max norm) of training, and of MDAC's simulated steps
DDS_LR = 1e-4   # DDS runs its original code's settings (domainsift.sampling.DDS's defaults), not MDAC's grid
# MDAC's lr_data grid: paper 004's {0.001, 0.0025, 0.005} and below it (J here is the mean token loss over
# 100 dev lines, not the paper's summed loss over 1,000: its rewards, and so its steps, are smaller)
GRID = [0.0001, 0.0003, 0.001, 0.0025, 0.005]


def read(path: str, lo: int, hi: int) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return [line.rstrip("\n") for line in fh][lo:hi]


def load_data():
    train, labels = [], []
    for d in SEVEN:
        lines = read(data_file(d, "train"), 0, SIZES[d])
        train += lines
        labels += [d] * len(lines)
    dev = {d: read(data_file(d, "test"), *DEV_LINES) for d in SEVEN}
    test = {d: read(data_file(d, "test"), *EVAL_LINES) for d in SEVEN}
    return train, labels, dev, test


def train_tokenizer(texts: list[str]):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=["[PAD]", "[BOS]", "[UNK]"],
                                                       show_progress=False))
    return tok


def encode(tok, texts: list[str]) -> list[np.ndarray]:
    return [np.array([1] + e.ids[:MAXLEN - 1], dtype=np.int64) for e in tok.encode_batch(texts)]


def make_model(vocab: int, seed: int):
    import torch
    from torch import nn

    class TinyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, DIM)
            self.pos = nn.Embedding(MAXLEN, DIM)
            layer = nn.TransformerEncoderLayer(DIM, HEADS, FF, dropout=0.1, batch_first=True, norm_first=True)
            self.body = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(DIM)
            for emb in (self.tok, self.pos):          # GPT-2's initialisation: tied output logits start small
                nn.init.normal_(emb.weight, std=0.02)

        def forward(self, ids):
            n = ids.shape[1]
            h = self.tok(ids) + self.pos(torch.arange(n))
            mask = nn.Transformer.generate_square_subsequent_mask(n)
            h = self.body(h, mask=mask, is_causal=True)
            return self.norm(h) @ self.tok.weight.T

    torch.manual_seed(seed)
    return TinyLM()


def pad(seqs):
    import torch
    n = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), n, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.from_numpy(s)
    return ids


def token_nll(model, seqs):
    """Summed next-token NLL (padding ignored) and the number of predicted tokens."""
    import torch
    ids = pad(seqs)
    logits = model(ids[:, :-1])
    gold = ids[:, 1:].clone()
    gold[gold == 0] = -100
    nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), gold.reshape(-1),
                                            ignore_index=-100, reduction="sum")
    return nll, int((gold != -100).sum())


def mean_loss(model, seqs):
    nll, n = token_nll(model, seqs)
    return nll / max(n, 1)


def set_loss(model, batches):
    """Mean token loss of a dev set given as a list of batches (differentiable)."""
    total, n = 0, 0
    for b in batches:
        nll, k = token_nll(model, b)
        total, n = total + nll, n + k
    return total / n


def perplexities(model, test_ids: dict) -> dict:
    import torch
    model.eval()
    out = {}
    with torch.no_grad():
        for d, seqs in test_ids.items():
            total, n = 0.0, 0
            for i in range(0, len(seqs), 128):
                nll, k = token_nll(model, seqs[i:i + 128])
                total, n = total + float(nll), n + k
            out[d] = math.exp(total / n)
    model.train()
    return out


def make_policy(name: str, clusters: bool, lr_data: float = 0.001, k: int = 10, init_alpha: float = 0.0,
                update: str = "sgd"):  # update: a key of the runs file (the Adam variant measured worse and left)
    from domainsift.sampling import DDS, MDAC, MixedAlpha
    iterations = 20 if clusters else 100
    if name.startswith("mixed-"):
        return MixedAlpha(float(name.split("-")[1]))
    if name == "dds":   # the original code's settings (Adam lr 1e-4, 200 steps an update): no grid
        return DDS(init_alpha=init_alpha)
    return MDAC(lr_data=lr_data, iterations=iterations, init_alpha=init_alpha, k=k)


def train_run(policy_name: str, target: str, labels, train_ids, dev_batches, seed: int, steps: int,
              session: int, vocab: int, dev_ids: dict, ckpt_targets: list, eval_every: int, **policy_args):
    """One training run; every ``eval_every`` steps (and at the last) the perplexity on the dev lines
    (1-100) picks each of ``ckpt_targets``' best state so far (the checkpoint chosen on dev).
    Returns the model (last state), the sampler, the training seconds (evaluation excluded), the
    optimizer, and per target (best step, best state); plus the evaluation's seconds."""
    import copy

    import torch
    from domainsift.sampling import DomainSampler, Learner, mixture_loss
    model = make_model(vocab, seed)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 100))
    sampler = DomainSampler(labels, BATCH, policy=make_policy(policy_name, target == "clusters", **policy_args),
                            num_batches=steps, seed=seed)
    weights = {"Tanzil": 1.0} if target == "Tanzil" else None
    learner = Learner(model, train_loss=lambda m, idx: mean_loss(m, [train_ids[i] for i in idx]),
                      dev_loss=mixture_loss(dev_batches, weights, set_loss), optimizer=opt,
                      max_grad_norm=CLIP)
    # the dev lines the checkpoint choice needs: Tanzil's alone, or all seven for the uniform target
    needed = {d: v for d, v in dev_ids.items() if d == "Tanzil" or ckpt_targets != ["Tanzil"]}
    best = {t: (math.inf, 0, None) for t in ckpt_targets}
    eval_seconds = 0.0
    model.train()
    t0 = time.time()
    for step, idx in enumerate(sampler, 1):
        opt.zero_grad()
        mean_loss(model, [train_ids[i] for i in idx]).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        opt.step()
        sched.step()
        if step % eval_every == 0 or step == steps:
            t1 = time.time()
            ppl = perplexities(model, needed)
            for t in ckpt_targets:
                v = target_ppl(ppl, t)
                if v < best[t][0]:
                    best[t] = (v, step, copy.deepcopy(model.state_dict()))
            eval_seconds += time.time() - t1
        if step % session == 0 and step < steps:
            sampler.update(learner)
    seconds = time.time() - t0 - eval_seconds
    return model, sampler, seconds, opt, {t: b[1:] for t, b in best.items()}, eval_seconds


def cluster_labels(train: list[str], gold: list[str]) -> tuple[list[str], float]:
    """The 7 clusters `domainsift cluster` finds in the training mixture (default encoder)."""
    import json
    from domainsift.sampling import read_domains
    out = WORK / "clusters"
    if not (out / "clusters.tsv").exists():
        WORK.mkdir(parents=True, exist_ok=True)
        (WORK / "mix.txt").write_text("\n".join(train) + "\n", encoding="utf-8")
        (WORK / "gold.txt").write_text("\n".join(gold) + "\n", encoding="utf-8")
        subprocess.run([sys.executable, "-m", "domainsift", "cluster", str(WORK / "mix.txt"), "--labels",
                        str(WORK / "gold.txt"), "--k", "7", "--seeds", "1", "--no-plots", "--out", str(out)],
                       check=True)
    res = json.loads((out / "clustering.json").read_text())
    return read_domains(out), res["summary"][0]["purity_mean"] if res["summary"] else float("nan")


def choose_lr(done: dict, policy: str, grid: list[float], args) -> float:
    """The grid's lr_data with the lowest perplexity on the policies' own dev lines (1-100) at the
    checkpoint chosen there, averaged over the targets run (uniform, Tanzil) of seed 0 started from
    uniform; never the evaluation lines."""
    scores = {}
    targets = [t for t in args.targets if t != "clusters"]
    for lr in grid:
        keys = [run_key(policy, t, 0, args, {"lr_data": lr, "k": args.k, "init_alpha": 0.0,
                                             "update": UPDATE}) for t in targets]
        if all(k in done for k in keys):
            scores[lr] = np.mean([target_ppl(done[k]["checkpoints"][t]["dev_set_ppl"], t)
                                  for k, t in zip(keys, targets)])
    if not scores:
        raise SystemExit(f"--lr-data choose: run the grid for {policy} on seed 0 from uniform first "
                         f"(--lr-data {' '.join(map(str, grid))})")
    return min(scores, key=scores.get)


UPDATE = "sgd"  # MDAC's REINFORCE step, the product's; an Adam variant measured worse (bench/results/sampling_adam.md)


class NotRun(Exception):
    """--table-only: a run the table would need is not in the runs file."""


class RunsFile:
    """The finished runs (bench/results/<name>_runs.json): each written as it finishes, the file replaced
    atomically, so a killed benchmark resumes from the runs it finished (one benchmark at a time)."""

    def __init__(self, path: Path, save_json):
        self.path, self._save = path, save_json

    def runs(self) -> dict:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def __getitem__(self, key: str) -> dict:
        return self.runs()[key]

    def __contains__(self, key: str) -> bool:
        return key in self.runs()

    def __setitem__(self, key: str, value: dict) -> None:
        self._save(self.path, {**self.runs(), key: value})


def key_hash(key: str) -> str:
    return hashlib.sha1(key.encode()).hexdigest()[:16]


def state_path(key: str) -> Path:
    """Where a fixed mixture's last state (model and optimizer) is kept for FT-Full to continue from."""
    return WORK / "states" / f"{key_hash(key)}.pt"


def run_key(policy: str, target: str, seed: int, args, policy_args: dict) -> str:
    if policy.startswith("mixed-"):   # a fixed mixture never updates: the session does not matter
        return f"{policy}|{target}|{seed}|{args.steps}"
    return f"{policy}|{target}|{seed}|{args.steps}|{args.session}|" + "|".join(
        f"{a}={v:g}" if not isinstance(v, str) else f"{a}={v}"
        for a, v in policy_args.items() if (a != "k" or policy == "mdac"))


def target_ppl(ppl: dict, target: str) -> float:
    return ppl["Tanzil"] if target == "Tanzil" else float(np.mean(list(ppl.values())))


def ft_full(model, opt, labels, train_ids, dev_batches, seed: int, steps: int, every: int,
            domain: str = "Tanzil") -> dict:
    """FT-Full (paper 004's single-domain baseline): the multi-domain model trained further on
    ``domain``'s lines alone with its own optimizer, ``steps`` steps of seeded batches; the state
    with the lowest loss on the domain's dev lines (the policies' lines 1-100, checked every
    ``every`` steps and before the first) is the one kept."""
    import copy

    import torch
    pool = np.array([i for i, lab in enumerate(labels) if lab == domain])
    rng = np.random.default_rng(seed + 7919)

    def dev_loss() -> float:
        model.eval()
        with torch.no_grad():
            v = float(set_loss(model, dev_batches[domain]))
        model.train()
        return v

    best = (dev_loss(), 0, copy.deepcopy(model.state_dict()))
    model.train()
    for step in range(1, steps + 1):
        idx = rng.choice(pool, size=min(BATCH, len(pool)), replace=False)
        opt.zero_grad()
        mean_loss(model, [train_ids[i] for i in idx]).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % every == 0:
            v = dev_loss()
            if v < best[0]:
                best = (v, step, copy.deepcopy(model.state_dict()))
    model.load_state_dict(best[2])
    return {"ft_best_step": best[1], "ft_steps": steps, "ft_domain": domain}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--cluster-seeds", type=int, nargs="+", default=None,
                    help="seeds of the clusters target (default: --seeds)")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--session", type=int, default=100, help="training steps between two policy updates")
    ap.add_argument("--policies", nargs="+", default=POLICIES, choices=POLICIES + ["ft-full"])
    ap.add_argument("--targets", nargs="+", default=TARGETS, choices=TARGETS)
    ap.add_argument("--lr-data", nargs="+", default=["0.001", "0.0025", "0.005"],
                    help="MDAC: learning rates of psi to run (paper 004's grid), or 'choose': the "
                         "grid value with the lowest perplexity on the dev lines, from seed 0's runs "
                         "(DDS runs its original code's 1e-4)")
    ap.add_argument("--k", type=int, default=10, help="MDAC: simulated steps per domain")
    ap.add_argument("--init-alpha", type=float, default=None,
                    help="MDAC and DDS: start from Mixed-alpha (the same as --starts ALPHA; default 0)")
    ap.add_argument("--starts", nargs="+", default=None,
                    help="MDAC and DDS: the starting mixtures to run, each a Mixed-alpha or 'best': the fixed "
                         "mixture (of the mixed-* policies run) with the lowest perplexity on the policies' "
                         "dev lines for that target and seed; each adaptive row is set beside its start")
    ap.add_argument("--ft-steps", type=int, default=300,
                    help="ft-full: steps on the Tanzil lines alone after the best fixed mixture's run "
                         "(the best state on Tanzil's dev lines, checked every 25 steps, is kept)")
    ap.add_argument("--eval-every", type=int, default=None,
                    help="steps between two checkpoint evaluations on the dev lines (default: --session); the "
                         "checkpoint reported is the one with the lowest perplexity there, for every policy")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads (default: torch's); the study ran two processes of 1 thread side by side, "
                         "which share the finished-runs file and never run the same run twice")
    ap.add_argument("--name", default="sampling", help="results name under bench/results/ (its runs file: "
                    "<name>_runs.json)")
    ap.add_argument("--table-only", action="store_true", help="train nothing: the table from the runs file's "
                    "finished runs alone, each one missing named and left out (its row's seeds column says which)")
    ap.add_argument("--table", default=None, help="write the table to bench/results/<table>.md instead of "
                    "<name>.md, the runs still shared through <name>_runs.json (a second study over the same runs)")
    args = ap.parse_args()
    if args.eval_every is None:
        args.eval_every = args.session
    if args.starts is None:
        args.starts = [str(args.init_alpha if args.init_alpha is not None else 0.0)]
    elif args.init_alpha is not None:
        ap.error("--init-alpha and --starts: give one")
    for st in args.starts:
        if st != "best":
            try:
                float(st)
            except ValueError:
                ap.error(f"--starts: {st!r} is neither a number nor 'best'")
    if any(st == "best" for st in args.starts) or "ft-full" in args.policies:
        missing = [m for m in FIXED if m not in args.policies]
        if missing:
            ap.error(f"'best' starts and ft-full choose among the fixed mixtures: add {' '.join(missing)} to --policies")
    grid = GRID

    import torch
    from domainsift.io import save_json
    from domainsift.sampling import history_record, plot_weights
    if args.threads:
        torch.set_num_threads(args.threads)
    train, gold, dev, test = load_data()
    tok = train_tokenizer(train)
    vocab = tok.get_vocab_size()
    train_ids = encode(tok, train)
    dev_ids = {d: encode(tok, v) for d, v in dev.items()}
    dev_batches = {d: [v[i:i + 128] for i in range(0, len(v), 128)] for d, v in dev_ids.items()}
    test_ids = {d: encode(tok, v) for d, v in test.items()}
    clusters, purity = (cluster_labels(train, gold) if "clusters" in args.targets else (None, None))
    print(f"{len(train)} training lines, vocabulary {vocab}, {torch.get_num_threads()} threads", flush=True)

    # finished runs are kept beside the results (bench/results/<name>_runs.json, committed with them):
    # a killed benchmark resumes there, on this machine or on a fresh clone
    done = RunsFile(ROOT / "bench" / "results" / f"{args.name}_runs.json", save_json)
    rows, plots = [], []

    def run(policy: str, target: str, labels, seed: int, policy_args: dict, ft: bool = False) -> dict:
        fixed = policy.startswith("mixed-")
        key = run_key("ft-full" if ft else policy, target, seed, args,
                      {"start": policy_args["init_alpha"], "ft_steps": args.ft_steps} if ft else policy_args)
        if args.table_only and key not in done:
            raise NotRun(key)
        if key in done:
            return done[key]
        if ft:   # FT-Full continues from the fixed mixture's last state (its own run, reused when kept)
            start_key = run_key(policy, target, seed, args, {})
            res = run(policy, target, labels, seed, {})
            start_file = state_path(start_key)
            if not start_file.exists():
                raise SystemExit(f"{start_file}: the last state of {start_key} is not kept here: "
                                 f"delete that run from {done.path} to train it again")
            kept = torch.load(start_file)
            model = make_model(vocab, seed)
            model.load_state_dict(kept["model"])
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
            opt.load_state_dict(kept["opt"])
            t0 = time.time()
            extra = ft_full(model, opt, labels, train_ids, dev_batches, seed, args.ft_steps, 25)
            seconds = res["seconds"] + time.time() - t0
            entry = {"seconds": seconds, "eval_seconds": res["eval_seconds"], "record": res["record"], **extra,
                     "checkpoints": {"Tanzil": {"step": args.steps + extra["ft_best_step"],
                                                "ppl": perplexities(model, test_ids),
                                                "dev_set_ppl": perplexities(model, dev_ids)}}}
        else:
            ckpt_targets = (["uniform", "Tanzil"] if fixed and target == "uniform" else [target])
            model, sampler, seconds, opt, best, eval_seconds = train_run(
                policy, target, labels, train_ids, dev_batches, seed, args.steps,
                args.session if not fixed else args.steps + 1, vocab, dev_ids, ckpt_targets, args.eval_every,
                **({} if fixed else policy_args))
            entry = {"seconds": seconds, "eval_seconds": eval_seconds, "record": history_record(sampler),
                     "eval_every": args.eval_every, "clip": CLIP,
                     "last": {"ppl": perplexities(model, test_ids), "dev_set_ppl": perplexities(model, dev_ids)}}
            if fixed:   # kept for FT-Full
                state_file = state_path(key)
                state_file.parent.mkdir(parents=True, exist_ok=True)
                torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, str(state_file) + ".tmp")
                os.replace(str(state_file) + ".tmp", state_file)
            entry["checkpoints"] = {}
            for t, (step, state) in best.items():
                model.load_state_dict(state)
                entry["checkpoints"][t] = {"step": step, "ppl": perplexities(model, test_ids),
                                           "dev_set_ppl": perplexities(model, dev_ids)}
        done[key] = entry
        return done[key]

    cluster_seeds = args.seeds if args.cluster_seeds is None else args.cluster_seeds
    for seed in sorted(set(args.seeds) | set(cluster_seeds if "clusters" in args.targets else [])):
        for setting in ["gold", "clusters"]:
            targets = ([t for t in args.targets if t != "clusters"] if setting == "gold" and seed in args.seeds
                       else ["clusters"] if setting == "clusters" and "clusters" in args.targets
                       and seed in cluster_seeds else [])
            if not targets:
                continue
            labels = gold if setting == "gold" else clusters
            fixed_target = "uniform" if setting == "gold" else "clusters"   # a fixed run serves every target
            fixed_runs = {}

            def fixed_run(alpha: float) -> dict:
                name = f"mixed-{alpha:g}"
                if name not in fixed_runs:
                    fixed_runs[name] = run(name, fixed_target, labels, seed, {})
                return fixed_runs[name]

            def best_alpha(target: str) -> float:
                alphas = [float(m.split("-")[1]) for m in FIXED]
                return min(alphas, key=lambda a: target_ppl(fixed_run(a)["checkpoints"][target]["dev_set_ppl"],
                                                            target))

            for policy in args.policies:
                fixed = policy.startswith("mixed-")
                if policy == "ft-full" and "Tanzil" not in targets:
                    continue
                starts = ([None] if fixed else
                          [("best", best_alpha("Tanzil"))] if policy == "ft-full" else
                          [(st, None if st == "best" else float(st)) for st in args.starts])
                lrs = ([None] if fixed or policy == "ft-full" else [DDS_LR] if policy == "dds" else
                       [choose_lr(done, policy, grid, args)] if args.lr_data == ["choose"] else
                       [float(x) for x in args.lr_data])
                for start in starts:
                    for lr in lrs:
                        for target in (targets if fixed else ["Tanzil"] if policy == "ft-full" else targets):
                            alpha = float(policy.split("-")[1]) if fixed else (
                                start[1] if start[1] is not None else best_alpha(target))
                            policy_args = {"lr_data": lr or 0.0, "k": args.k, "init_alpha": alpha,
                                           "update": UPDATE}
                            try:
                                if fixed:
                                    res = fixed_run(alpha)
                                elif policy == "ft-full":
                                    res = run(f"mixed-{alpha:g}", fixed_target, labels, seed, policy_args, ft=True)
                                else:
                                    res = run(policy, target, labels, seed, policy_args)
                            except NotRun as missing:
                                print(f"not in the runs file, left out of the table: {missing}", flush=True)
                                continue
                            ck = res["checkpoints"][target]
                            ppl, seconds, rec = ck["ppl"], res["seconds"], res["record"]
                            row = {"policy": policy, "target": target, "seed": seed,
                                   "start": alpha, "start_rule": "own" if fixed else start[0],
                                   "updates": len(rec["history"]) - 1,
                                   "dev_ppl": round(target_ppl(ppl, target), 3),
                                   "per_domain": {d: round(p, 3) for d, p in ppl.items()},
                                   "seconds": round(seconds, 1),
                                   "policy_dev_ppl": round(target_ppl(ck["dev_set_ppl"], target), 3),
                                   "checkpoint_step": ck["step"],
                                   "last_dev_ppl": (round(target_ppl(res["last"]["ppl"], target), 3)
                                                    if "last" in res else None),
                                   "eval_seconds": round(res["eval_seconds"], 1)}
                            if not fixed:
                                own = fixed_run(alpha)
                                row["start_dev_ppl"] = round(target_ppl(own["checkpoints"][target]["ppl"], target), 3)
                                row["minus_start"] = round(row["dev_ppl"] - row["start_dev_ppl"], 3)
                            if policy in ("dds", "mdac"):
                                row["lr_data"] = lr
                                row["update"] = UPDATE if policy == "mdac" else "adam-log-softmax"
                            if policy == "ft-full":
                                row.update({k: res[k] for k in ("ft_best_step", "ft_steps", "ft_domain")})
                            final = rec["history"][-1]["weights"]
                            row["final_weights"] = dict(zip(rec["domains"], np.round(final, 4).tolist()))
                            row["signature"] = rec["signature"]["signature"]
                            rows.append(row)
                            print(f"seed {seed} {policy:9s} {target:8s} start {alpha:g} lr {lr or '-'} "
                                  f"dev_ppl {row['dev_ppl']:8.2f}  {seconds:6.1f} s  updates {row['updates']}",
                                  flush=True)
                            if policy in ("dds", "mdac"):
                                plots.append(plot_weights(
                                    rec, ROOT / "bench" / "results" /
                                    f"{args.name}_weights_{policy}_{target}_start{alpha:g}_s{seed}.png",
                                    title=f"{policy} (lr_data {lr:g}, start Mixed-{alpha:g}), target {target}, "
                                          f"seed {seed}"))
                                row["history"] = rec["history"]

    write_results(args.table or args.name, {"rows": rows, "sizes": SIZES, "dev_lines": DEV_LINES, "eval_lines": EVAL_LINES,
                              "steps": args.steps, "session": args.session, "batch": BATCH, "k": args.k,
                              "starts": args.starts, "update": UPDATE, "ft_steps": args.ft_steps,
                              "eval_every": args.eval_every, "clip": CLIP, "threads": torch.get_num_threads(),
                              "reward": "J = the mean token loss (nats) over the target's dev lines (1-100; uniform: "
                                        "the mean of the seven domains'), not paper 004's loss summed over 1,000 lines",
                              "checkpoint": "the state with the lowest perplexity on the dev lines, checked every "
                                            "eval_every steps and at the last, per target; every policy alike",
                              "model": {"vocab": vocab, "dim": DIM, "layers": LAYERS, "heads": HEADS, "ff": FF,
                                        "maxlen": MAXLEN},
                              "cluster_purity": purity, "plots": [Path(p).name for p in plots]},
                  table(rows, args))


def table(rows: list[dict], args) -> str:
    updates = sorted({r["updates"] for r in rows if r["policy"] in ("dds", "mdac")})
    lines = ["# Domain sampling (paper 004): dev perplexity of a small Transformer LM", "",
             f"{args.steps} steps of {BATCH} sentences; the adaptive policies update every {args.session} steps "
             f"({', '.join(map(str, updates)) or '-'} updates a run; MDAC: k = {args.k}, REINFORCE step "
             f"{UPDATE}; DDS: its original code's Adam rule). Each adaptive row names its start (Mixed-α; "
             "'best': the fixed mixture with the lowest perplexity on the policies' dev lines, per target and "
             "seed) and is set beside it: 'minus its start' is its perplexity minus that fixed mixture's, same "
             f"seed (negative: the policy improved on where it started). ft-full: the best fixed mixture's model "
             f"trained further on Tanzil's lines alone ({args.ft_steps} steps, the best state on Tanzil's dev lines "
             "kept). dev_ppl: perplexity on lines 251-500 of each test file, the target's mean, of the checkpoint "
             f"chosen on the policies' dev lines (lines 1-100; every policy's state is checked every "
             f"{args.eval_every} steps and at the last, and the one with the lowest perplexity there is kept; "
             "'last step' is the final state's dev_ppl). The policies learn from the same lines 1-100 (their "
             "perplexity there is its own column). J, MDAC's reward and DDS's dev gradient: the mean token loss "
             "over the target's dev lines (paper 004 sums the loss over 1,000 lines, so its lr_data does not "
             "carry over; the grid here reaches below it). The no-update reference of each adaptive row is its "
             "start, a fixed mixture (lr_data 0). Gradients are clipped at max norm 1 in training and in MDAC's "
             "simulated steps. Mean over seeds; seconds: training and the policy's updates, evaluation "
             "excluded; overhead = seconds / mixed-1's seconds, both measured as the study ran (two 1-thread "
             "processes side by side).", ""]
    for target in TARGETS:
        sub = [r for r in rows if r["target"] == target]
        if not sub:
            continue
        lines += [f"## target: {target}", "",
                  "| policy | start | lr_data | updates | seeds | dev_ppl | minus its start | last step | "
                  "ppl on the policies' dev lines | " + " | ".join(SEVEN) + " | seconds | overhead |",
                  "|---|---|---|---|---|---|---|---|---|" + "---|" * len(SEVEN) + "---|---|"]
        base = np.mean([r["seconds"] for r in sub if r["policy"] == "mixed-1"] or [np.nan])
        for policy in POLICIES + ["ft-full"]:
            groups = sorted({(r["start_rule"], r.get("lr_data")) for r in sub if r["policy"] == policy},
                            key=lambda g: (str(g[0]), g[1] or 0))
            for rule, lr in groups:
                rs = [r for r in sub if r["policy"] == policy and r["start_rule"] == rule and r.get("lr_data") == lr]
                per = {d: np.mean([r["per_domain"][d] for r in rs]) for d in SEVEN}
                secs = np.mean([r["seconds"] for r in rs])
                starts = sorted({r["start"] for r in rs})
                start = ("-" if rule == "own" else
                         f"{rule}: Mixed-{'/'.join(f'{a:g}' for a in starts)}" if rule == "best" else
                         f"Mixed-{'/'.join(f'{a:g}' for a in starts)}")
                minus = [r["minus_start"] for r in rs if "minus_start" in r]
                last = [r["last_dev_ppl"] for r in rs if r.get("last_dev_ppl") is not None]
                lines.append(f"| {policy} | {start} | {'-' if lr is None else f'{lr:g}'} | "
                             f"{'/'.join(str(u) for u in sorted({r['updates'] for r in rs}))} | "
                             f"{','.join(str(r['seed']) for r in rs)} | "
                             f"{np.mean([r['dev_ppl'] for r in rs]):.2f} | "
                             f"{f'{np.mean(minus):+.2f}' if minus else '-'} | "
                             f"{f'{np.mean(last):.2f}' if last else '-'} | "
                             f"{np.mean([r['policy_dev_ppl'] for r in rs]):.2f} | "
                             + " | ".join(f"{per[d]:.1f}" for d in SEVEN) + f" | {secs:.0f} | {secs / base:.2f} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
