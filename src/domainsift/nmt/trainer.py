"""Train a Marian-architecture transformer from scratch on a bitext (``domainsift nmt train``).

- **Vocabulary**: one sentencepiece model (unigram) learned from both sides of the training data, seeded
  (``<pad>`` 0, ``<unk>`` 1, ``</s>`` 2); the two languages share the embeddings, as Marian's do.
- **Model**: ``transformers.MarianMTModel`` built from a :class:`~transformers.MarianConfig` of a preset
  (:data:`PRESETS`): ``proxy`` is small enough to train on a CPU; ``paper`` is paper 003's appendix (6+6
  layers, d 256, feed-forward 1024, 4 heads, dropout 0.3), for a GPU. Or ``init_from``: a folder this module
  wrote, trained on from its weights (warm start; its vocabulary kept).
- **Training**: token-based batches of pairs of similar length (sorted by length within seeded chunks, the
  batches shuffled each epoch), cross-entropy with label smoothing 0.1, Adam with an inverse-square-root
  schedule after a linear warm-up, gradient clipping; after every epoch the dev set's loss (no smoothing),
  early stopping after ``patience`` epochs without a better one, the best epoch's weights kept.
- **Resumable**: each finished epoch is a sealed checkpoint (weights, optimizer, schedule, random states,
  the dev history) under ``OUT/.resume``; a killed training started again goes on from it and ends with
  the weights of one never killed. Randomness is ``seed``'s alone.

The folder: ``model/`` (``save_pretrained``: config and weights), ``spm.model``, ``nmt.json`` (what ran:
preset, sizes, epochs, dev losses, target tokens a second, the signature).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from .._internal.errors import DomainsiftError, InputError
from .data import Bitext

PAD, UNK, EOS = 0, 1, 2
MODEL, VOCAB, RECORD, RESUME = "model", "spm.model", "nmt.json", ".resume"
CHECKPOINT = "checkpoint"

#: the architectures (MarianConfig's keywords) and their training settings
PRESETS = {
    # sized for a 2-core CPU (issue 77: d_model 128 with 2+2 layers and a 4k vocabulary trained at
    # ~2,200 target tokens/s in float32 with plain PyTorch)
    "proxy": {"arch": dict(d_model=128, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                           decoder_attention_heads=4, encoder_ffn_dim=512, decoder_ffn_dim=512, dropout=0.1),
              "vocab": 4000, "lr": 1e-3, "warmup": 400, "max_tokens": 3000},
    # paper 003's appendix: 6+6 layers, d 256, feed-forward 1024, 4 heads, dropout 0.3 (for a GPU)
    "paper": {"arch": dict(d_model=256, encoder_layers=6, decoder_layers=6, encoder_attention_heads=4,
                           decoder_attention_heads=4, encoder_ffn_dim=1024, decoder_ffn_dim=1024, dropout=0.3),
              "vocab": 8000, "lr": 5e-4, "warmup": 4000, "max_tokens": 4096},
}
MAX_LEN = 128  # tokens a sentence keeps (longer ones are cut); the model's positions
LABEL_SMOOTHING = 0.1
CLIP = 1.0


@dataclass(frozen=True)
class TrainSettings:
    """How a model is trained (the preset's values unless given): ``epochs`` at most, ``patience`` epochs
    without a better dev loss before it stops, ``max_tokens`` target tokens a batch, the peak learning
    rate and its ``warmup`` steps, the vocabulary's size, the seed."""

    preset: str = "proxy"
    epochs: int = 10
    patience: int = 3
    max_tokens: int | None = None
    lr: float | None = None
    warmup: int | None = None
    vocab: int | None = None
    seed: int = 0
    label_smoothing: float = LABEL_SMOOTHING
    arch: dict = field(default_factory=dict)  # MarianConfig keywords over the preset's (tests: tiny models)

    def resolved(self) -> "TrainSettings":
        if self.preset not in PRESETS:
            raise DomainsiftError(f"unknown preset '{self.preset}' (choose from {', '.join(PRESETS)})")
        p = PRESETS[self.preset]
        out = replace(self, max_tokens=self.max_tokens or p["max_tokens"], lr=self.lr or p["lr"],
                      warmup=self.warmup if self.warmup is not None else p["warmup"], vocab=self.vocab or p["vocab"],
                      arch={**p["arch"], **self.arch})
        for name, v, lo in (("epochs", out.epochs, 1), ("patience", out.patience, 1), ("max_tokens", out.max_tokens, 8),
                            ("vocab", out.vocab, 16), ("warmup", out.warmup, 0)):
            if v < lo:
                raise DomainsiftError(f"--{name.replace('_', '-')} must be at least {lo}, got {v}")
        if not out.lr > 0:
            raise DomainsiftError(f"--lr must be positive, got {out.lr}")
        return out


# ---------------------------------------------------------------- vocabulary

def train_vocab(texts, size: int, seed: int, path: Path) -> None:
    """A unigram sentencepiece model of at most ``size`` pieces over ``texts``, written to ``path``.
    sentencepiece reads a file; its sampling is seeded, and the input is given whole (no sampling)."""
    import tempfile

    import sentencepiece as spm
    with tempfile.TemporaryDirectory(prefix="domainsift-spm-") as tmp:
        corpus = Path(tmp) / "text.txt"
        corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
        prefix = Path(tmp) / "spm"
        spm.set_random_generator_seed(seed)
        kw = dict(input=str(corpus), model_prefix=str(prefix), vocab_size=size, model_type="unigram",
                  character_coverage=1.0, pad_id=PAD, unk_id=UNK, eos_id=EOS, bos_id=-1,
                  input_sentence_size=0, shuffle_input_sentence=False, num_threads=1,
                  minloglevel=2, hard_vocab_limit=False)
        spm.SentencePieceTrainer.train(**kw)
        shutil.copyfile(f"{prefix}.model", path)


def load_vocab(path: Path):
    import sentencepiece as spm
    return spm.SentencePieceProcessor(model_file=str(path))


def encode(sp, texts) -> list[list[int]]:
    return [ids[:MAX_LEN - 1] + [EOS] for ids in sp.encode(list(texts))]


# ---------------------------------------------------------------- batches

def token_batches(src: list, tgt: list, max_tokens: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Pairs in batches of at most ``max_tokens`` padded target tokens (at least one pair), of similar
    length: the pairs are shuffled, sorted by length within chunks of 100 batches' worth, cut, and the
    batches shuffled (``rng`` draws it all)."""
    n = len(src)
    order = rng.permutation(n)
    tl = np.array([len(t) for t in tgt])
    sl = np.array([len(s) for s in src])
    chunk = max(1, 100 * max(1, max_tokens // max(1, int(tl.mean()))))
    batches = []
    for start in range(0, n, chunk):
        part = order[start:start + chunk]
        part = part[np.lexsort((sl[part], tl[part]))]
        cur, longest = [], 0
        for i in part.tolist():
            longest2 = max(longest, tl[i], sl[i])
            if cur and longest2 * (len(cur) + 1) > max_tokens:
                batches.append(np.asarray(cur))
                cur, longest2 = [], max(tl[i], sl[i])
            cur.append(i)
            longest = longest2
        if cur:
            batches.append(np.asarray(cur))
    return [batches[k] for k in rng.permutation(len(batches))]


def collate(torch, src: list, tgt: list, idx) -> dict:
    """Padded tensors of a batch: the source, its mask, the decoder's input (the target shifted right
    after the start token, ``<pad>`` as Marian has it) and the labels (-100 on padding)."""
    s = [src[i] for i in idx]
    t = [tgt[i] for i in idx]
    ls, lt = max(map(len, s)), max(map(len, t))
    inp = torch.full((len(s), ls), PAD, dtype=torch.long)
    mask = torch.zeros((len(s), ls), dtype=torch.long)
    dec = torch.full((len(t), lt), PAD, dtype=torch.long)
    lab = torch.full((len(t), lt), -100, dtype=torch.long)
    for k, (a, b) in enumerate(zip(s, t)):
        inp[k, :len(a)] = torch.tensor(a)
        mask[k, :len(a)] = 1
        dec[k, 1:len(b)] = torch.tensor(b[:-1])
        lab[k, :len(b)] = torch.tensor(b)
    return {"input_ids": inp, "attention_mask": mask, "decoder_input_ids": dec, "labels": lab}


# ---------------------------------------------------------------- the model

def build_model(settings: TrainSettings, vocab_size: int):
    import transformers as tf
    config = tf.MarianConfig(vocab_size=vocab_size, decoder_vocab_size=vocab_size, max_position_embeddings=MAX_LEN,
                             pad_token_id=PAD, eos_token_id=EOS, decoder_start_token_id=PAD,
                             forced_eos_token_id=EOS, scale_embedding=True, share_encoder_decoder_embeddings=True,
                             attention_dropout=0.0, activation_dropout=0.0, **settings.arch)
    return tf.MarianMTModel(config)


def _loss(torch, model, batch: dict, smoothing: float):
    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                decoder_input_ids=batch["decoder_input_ids"])
    logits = out.logits
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch["labels"].reshape(-1),
                                             ignore_index=-100, label_smoothing=smoothing)


def dev_loss(torch, model, src: list, tgt: list, max_tokens: int) -> float:
    """The mean token cross-entropy (no smoothing) of the dev pairs, in nats."""
    model.train(False)
    total, count = 0.0, 0
    with torch.no_grad():
        for idx in token_batches(src, tgt, max_tokens, np.random.default_rng(0)):
            batch = collate(torch, src, tgt, idx)
            n = int((batch["labels"] != -100).sum())
            total += float(_loss(torch, model, batch, 0.0)) * n
            count += n
    model.train(True)
    return total / max(1, count)


def inverse_sqrt(warmup: int):
    """The learning rate's factor at step ``s``: linear warm-up to 1, then ``sqrt(warmup / s)``."""
    w = max(1, warmup)
    return lambda s: (s + 1) / w if s + 1 < w else math.sqrt(w / (s + 1))


# ---------------------------------------------------------------- training

def train_nmt(train: Bitext, dev: Bitext, out_dir: str | os.PathLike, settings: TrainSettings = TrainSettings(),
              init_from: str | os.PathLike | None = None, progress: bool = False, overwrite: bool = False,
              mixing=None, sampling=None) -> dict:
    """Train a model on ``train``, choosing its epoch by the loss on ``dev``, into ``out_dir`` (see the
    module docstring); ``init_from``: a folder this function wrote, trained on from its weights and with its
    vocabulary. ``mixing``: a :class:`~domainsift.nmt.guda.Mixing` (GUDA: ``train`` is the pseudo-bitext,
    trained with the old bitext and the domain discriminators); ``sampling``: a
    :class:`~domainsift.nmt.sampled.Sampling` (paper 004: the batches drawn by domain weights that a policy
    updates). Returns ``nmt.json``'s contents. A killed training resumes from its last finished epoch."""
    import torch

    from .._internal.atomic import atomic_dir, save_json
    from .._internal.signature import make_signature, signature_string
    from .._version import __version__
    s = settings.resolved()
    if mixing is not None:
        mixing.check()
    if sampling is not None:
        if mixing is not None:
            raise DomainsiftError("a training takes GUDA's mixing or domain sampling, not both")
        sampling.check(len(train))
    out = Path(out_dir)
    if not len(train):
        raise InputError("the training bitext has no pairs")
    if not len(dev):
        raise InputError("the dev bitext has no pairs")
    if (out / RECORD).exists() and not overwrite:
        raise DomainsiftError(f"{out}: holds a trained model already; choose another --out (or --overwrite)")
    if out.exists() and not overwrite and any(p.name not in (RESUME, ".lock") for p in out.iterdir()):
        raise DomainsiftError(f"{out}: a folder of other files; choose another --out (or --overwrite)")
    if init_from is not None:  # checked before anything is written
        init = Path(init_from)
        if not (init / MODEL / "config.json").is_file() or not (init / VOCAB).is_file():
            raise InputError(f"{init}: not a model folder domainsift nmt wrote (no {MODEL}/config.json or {VOCAB})")
    out.mkdir(parents=True, exist_ok=True)
    state = out / RESUME
    state.mkdir(exist_ok=True)
    identity = training_identity(train, dev, s, init_from, mixing, sampling)
    vocab_path = state / f"{identity}.spm.model"
    if init_from is not None:
        if not vocab_path.exists():
            shutil.copyfile(init / VOCAB, vocab_path)
    elif not vocab_path.exists():
        tmp = vocab_path.with_suffix(".tmp")
        texts = list(train.src) + list(train.tgt)
        if mixing is not None:  # the old bitext and the new sources are trained on too
            texts += list(mixing.old.src) + list(mixing.old.tgt) + list(mixing.source)
        train_vocab(texts, s.vocab, s.seed, tmp)
        os.replace(tmp, vocab_path)
    sp = load_vocab(vocab_path)
    if mixing is None:
        src, tgt, kinds = encode(sp, train.src), encode(sp, train.tgt), None
    else:
        from .guda import items
        src, tgt, kinds = items(train, mixing, lambda texts: encode(sp, texts), [EOS])
    dsrc, dtgt = encode(sp, dev.src), encode(sp, dev.tgt)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(s.seed)
        if init_from is not None:
            import transformers as tf
            model = tf.MarianMTModel.from_pretrained(str(Path(init_from) / MODEL))
        else:
            model = build_model(s, sp.get_piece_size())
        model.train(True)
        params = list(model.parameters())
        discs = None
        if mixing is not None:
            from .guda import discriminators
            discs = discriminators(torch, model.config.d_model)
            params += list(discs.parameters())
        opt = torch.optim.Adam(params, lr=s.lr, betas=(0.9, 0.98), eps=1e-9)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, inverse_sqrt(s.warmup))
        rng = np.random.default_rng(s.seed)
        sampler = None
        if sampling is not None:
            from . import sampled
            sampler, learner = sampled.start(torch, sampling, model, opt, src, tgt, lambda texts: encode(sp, texts),
                                             _loss, collate,
                                             lambda a, b: token_batches(a, b, s.max_tokens, np.random.default_rng(0)),
                                             s.seed, CLIP)
        history, best, best_epoch, start, seconds, tokens, losses = [], math.inf, 0, 0, 0.0, 0, []
        ckpt = state / f"{identity}.{CHECKPOINT}"
        if ckpt.exists():
            resumed = _resume(torch, ckpt, model, opt, sched, rng, discs, sampler)
            if resumed is not None:
                start, history, best, best_epoch, seconds, tokens, losses = resumed
        from tqdm.auto import tqdm
        bar = tqdm(total=s.epochs, initial=start, desc="train nmt", unit="epoch", disable=not progress)
        stopped = start > 0 and start - best_epoch >= s.patience
        for epoch in range(start, s.epochs):
            if stopped:
                break
            t0, n_tok, terms = time.time(), 0, {}
            for idx in (sampler if sampler is not None else token_batches(src, tgt, s.max_tokens, rng)):
                batch = collate(torch, src, tgt, idx)
                if mixing is None:
                    loss = _loss(torch, model, batch, s.label_smoothing)
                else:
                    from .guda import mixed_loss, row_weights
                    weights = row_weights(kinds[idx], mixing)
                    loss, parts = mixed_loss(torch, model, discs, batch, weights, s.label_smoothing)
                    for k, v in parts.items():
                        terms[k] = terms.get(k, 0.0) + v
                    terms["batches"] = terms.get("batches", 0) + 1
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, CLIP)
                opt.step()
                sched.step()
                n_tok += int((batch["labels"] != -100).sum())
                if sampler is not None and sampler.position % sampling.update_every == 0:
                    sampler.update(learner)  # the weights of the batches from the next on
                if progress:
                    bar.set_postfix(loss=f"{loss.item():.3f}", tok_s=f"{(tokens + n_tok) / (seconds + time.time() - t0):,.0f}")
            seconds += time.time() - t0
            tokens += n_tok
            d = dev_loss(torch, model, dsrc, dtgt, s.max_tokens)
            history.append(round(d, 6))
            if terms:  # GUDA: each term's mean over the epoch's batches
                losses.append({k: round(v / terms["batches"], 6) for k, v in terms.items() if k != "batches"})
            if d < best:
                best, best_epoch = d, epoch + 1
                _save_best(state / f"{identity}.best", model)
            bar.update(1)
            _checkpoint(torch, ckpt, model, opt, sched, rng, epoch + 1, history, best, best_epoch, seconds, tokens,
                        discs, losses, sampler)
            if epoch + 1 - best_epoch >= s.patience:
                stopped = True
        bar.close()
    import transformers as tf
    best_model = tf.MarianMTModel.from_pretrained(str(state / f"{identity}.best"))
    sig = make_signature("nmt", model="marian", seed=s.seed, preset=s.preset,
                         **{k: v for k, v in s.arch.items()}, vocab=sp.get_piece_size(), max_tokens=s.max_tokens,
                         lr=s.lr, warmup=s.warmup, label_smoothing=s.label_smoothing, epochs=s.epochs,
                         patience=s.patience, train=list(train.files), n_train=len(train), dev=list(dev.files),
                         n_dev=len(dev), **({"init_from": str(Path(init_from).resolve())} if init_from else {}),
                         **({f"guda_{k}": v for k, v in mixing.describe().items()} if mixing is not None else {}),
                         **({f"sampling_{k}": v for k, v in sampling.describe().items() if k not in ("domains", "dev")}
                            if sampling is not None else {}))
    record = {"signature": signature_string(sig), "identity": identity,
              "settings": {k: v for k, v in asdict(s).items()},
              "version": __version__, "n_train": len(train), "n_dev": len(dev), "vocab": sp.get_piece_size(),
              "parameters": int(sum(p.numel() for p in best_model.parameters())),
              "epochs_run": len(history), "best_epoch": best_epoch, "dev_loss": history,
              "train_seconds": round(seconds, 1), "target_tokens": tokens,
              "target_tokens_per_second": round(tokens / seconds, 1) if seconds else None,
              "stopped_early": len(history) < s.epochs,
              **({"guda": {**mixing.describe(), "train_losses": losses}} if mixing is not None else {}),
              **({"sampling": {**sampling.describe(), "names": list(sampler.names), "history": sampler.history}}
                 if sampling is not None else {})}
    with atomic_dir(out / MODEL) as tmp:
        best_model.save_pretrained(tmp)
    shutil.copyfile(vocab_path, out / (VOCAB + ".tmp"))
    os.replace(out / (VOCAB + ".tmp"), out / VOCAB)
    save_json(out / RECORD, record)  # last: it marks the folder finished
    shutil.rmtree(state, ignore_errors=True)
    return record


def ensure_trained(folder: str | os.PathLike, train: Bitext, dev: Bitext, settings: TrainSettings,
                   init_from=None, mixing=None, progress: bool = False) -> dict:
    """The model of this training in ``folder``: kept when the folder holds one of the same identity
    (:func:`training_identity`), trained (or resumed from its last sealed epoch) otherwise. Returns
    ``nmt.json``'s contents."""
    record = Path(folder) / RECORD
    if record.is_file():
        done = json.loads(record.read_text(encoding="utf-8"))
        if done.get("identity") == training_identity(train, dev, settings.resolved(), init_from, mixing):
            return done
    return train_nmt(train, dev, folder, settings, init_from=init_from, progress=progress, overwrite=True,
                     mixing=mixing)


def training_identity(train: Bitext, dev: Bitext, s: TrainSettings, init_from=None, mixing=None, sampling=None) -> str:
    """What a training's result depends on (the version, the resolved settings, the warm start, every text),
    as a hash: the name of its checkpoints, and ``nmt.json``'s ``identity`` (a caller that finds a folder
    with the same identity may take it as trained)."""
    import hashlib

    from .._internal.checksums import hash_texts
    from .._version import __version__
    h = hashlib.sha256(json.dumps([__version__, asdict(s), str(init_from)], sort_keys=True, default=repr).encode())
    for texts in (train.src, train.tgt, dev.src, dev.tgt):
        hash_texts(h, texts)
    if mixing is not None:
        h.update(json.dumps(mixing.describe(), sort_keys=True).encode())
        for texts in (mixing.old.src, mixing.old.tgt, mixing.source):
            hash_texts(h, texts)
    if sampling is not None:
        h.update(json.dumps(sampling.describe(), sort_keys=True).encode())
        hash_texts(h, sampling.domains)
        for name, b in sorted((sampling.dev or {}).items()):
            hash_texts(h, [name, *b.src, *b.tgt])
    return h.hexdigest()[:20]


def _save_best(path: Path, model) -> None:
    from .._internal.atomic import atomic_dir
    with atomic_dir(path) as tmp:
        model.save_pretrained(tmp)


def _checkpoint(torch, path: Path, model, opt, sched, rng, epoch, history, best, best_epoch, seconds, tokens,
                discs=None, losses=(), sampler=None):
    from .._internal.atomic import atomic_dir
    with atomic_dir(path) as tmp:
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                    "torch_rng": torch.get_rng_state(),
                    **({"discs": discs.state_dict()} if discs is not None else {})}, tmp / "state.pt")
        (tmp / "state.json").write_text(json.dumps({"epoch": epoch, "history": history, "best": best,
                                                    "best_epoch": best_epoch, "seconds": seconds, "tokens": tokens,
                                                    "rng": rng.bit_generator.state, "losses": list(losses),
                                                    **({"sampler": sampler.state_dict()} if sampler is not None
                                                       else {})}),
                                        encoding="utf-8")


def _resume(torch, path: Path, model, opt, sched, rng, discs=None, sampler=None):
    import logging

    from .._internal.checksums import verify
    try:
        verify(path)
        doc = json.loads((path / "state.json").read_text(encoding="utf-8"))
        saved = torch.load(path / "state.pt", weights_only=True)
        model.load_state_dict(saved["model"])
        if discs is not None:
            discs.load_state_dict(saved["discs"])
        opt.load_state_dict(saved["opt"])
        sched.load_state_dict(saved["sched"])
        torch.set_rng_state(saved["torch_rng"])
        rng.bit_generator.state = doc["rng"]
        if sampler is not None:
            sampler.load_state_dict(doc["sampler"])
        return (int(doc["epoch"]), list(doc["history"]), float(doc["best"]), int(doc["best_epoch"]),
                float(doc["seconds"]), int(doc["tokens"]), list(doc.get("losses", [])))
    except Exception as exc:  # noqa: BLE001: a damaged checkpoint costs the epochs, never the run
        logging.getLogger(__name__).warning("the training checkpoint in %s cannot be used (%s); training from the "
                                            "first epoch", path, str(exc).splitlines()[0] if str(exc) else
                                            type(exc).__name__)
        return None
