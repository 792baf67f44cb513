"""Translate with a trained model (``domainsift nmt translate``): beam search through ``transformers``'
``generate`` (the default), or CTranslate2 (``backend="ctranslate2"``, extra ``ct2``: :mod:`.ct2`), sentences
batched by length, the output in input order."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .._internal.errors import InputError
from .trainer import EOS, MAX_LEN, MODEL, PAD, RECORD, VOCAB, encode, load_vocab, verify_vocab

BEAM = 5
BATCH = 32  # sentences a generate() call
BACKENDS = ("generate", "ctranslate2")


@dataclass
class NMTModel:
    """A trained folder, loaded: the model, its sentencepiece vocabulary and its record (``nmt.json``)."""

    folder: Path
    model: object
    vocab: object
    record: dict
    identity: str = ""  # the folder's own (its sealed weights and vocabulary: rundir.model_identity)


def model_folder(folder: str | os.PathLike) -> Path:
    """``folder`` if it holds what :func:`~domainsift.nmt.trainer.train_nmt` writes (checked without
    loading the weights); anything else is one line naming it."""
    folder = Path(folder)
    if not (folder / MODEL / "config.json").is_file() or not (folder / VOCAB).is_file() or not (folder / RECORD).is_file():
        raise InputError(f"{folder}: not a model folder domainsift nmt wrote (it needs {MODEL}/, {VOCAB} and {RECORD})")
    return folder


def load_nmt(folder: str | os.PathLike) -> NMTModel:
    """A folder :func:`~domainsift.nmt.trainer.train_nmt` wrote; anything else is one line naming it."""
    import json

    import transformers as tf

    from ..rundir import model_identity
    folder = model_folder(folder)
    identity = model_identity(folder)  # sealed when written: a damaged or half-copied model is refused
    try:
        model = tf.MarianMTModel.from_pretrained(str(folder / MODEL))
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{folder}: the model cannot be loaded ({str(exc).splitlines()[0]})") from None
    verify_vocab(folder, record)
    model.train(False)
    return NMTModel(folder, model, load_vocab(folder / VOCAB), record, identity)


def check_backend(backend: str) -> None:
    """Refuse an unknown backend, or ``ctranslate2`` without its extra (one line), before any work."""
    if backend not in BACKENDS:
        raise InputError(f"unknown backend '{backend}' (one of: {', '.join(BACKENDS)})")
    if backend == "ctranslate2":
        from .._internal.optional import require
        require("ctranslate2", "ct2")


def translate(nmt: NMTModel | str | os.PathLike, sentences, beam: int = BEAM, batch_size: int = BATCH,
              max_len: int = MAX_LEN, progress: bool = False, backend: str = "generate") -> list[str]:
    """Each sentence translated by beam search (``beam`` hypotheses; 1: greedy), in input order;
    ``backend``: ``generate`` (transformers) or ``ctranslate2`` (the model converted to int8 once)."""
    import numpy as np
    check_backend(backend)
    if not isinstance(nmt, NMTModel):
        nmt = load_nmt(nmt)
    if beam < 1 or batch_size < 1:
        raise InputError(f"--beam and the batch size must be at least 1, got {beam} and {batch_size}")
    sentences = list(sentences)
    ids = encode(nmt.vocab, sentences)
    order = np.argsort([len(x) for x in ids], kind="stable")
    parts = [order[start:start + batch_size].tolist() for start in range(0, len(order), batch_size)]
    batches = (([ids[i] for i in part], max(len(ids[i]) for i in part)) for part in parts)
    if backend == "ctranslate2":
        from .ct2 import translate_ct2
        outputs = translate_ct2(nmt, batches, beam, max_len)
    else:
        outputs = _generate(nmt, batches, beam, max_len)
    out: list[str | None] = [None] * len(sentences)
    from tqdm.auto import tqdm
    bar = tqdm(total=len(sentences), desc="translate", unit="sent", disable=not progress)
    for part, toks in zip(parts, outputs):
        for i, t in zip(part, toks):
            out[i] = nmt.vocab.decode(t)
        bar.update(len(part))
    bar.close()
    return [x or "" for x in out]


def _generate(nmt: NMTModel, batches, beam: int, max_len: int):
    """Each batch translated by ``generate``: lists of output ids (``</s>`` and ``<pad>`` removed)."""
    import torch
    for part, longest in batches:
        inp = torch.full((len(part), longest), PAD, dtype=torch.long)
        mask = torch.zeros((len(part), longest), dtype=torch.long)
        for k, x in enumerate(part):
            inp[k, :len(x)] = torch.tensor(x)
            mask[k, :len(x)] = 1
        with torch.no_grad():  # around the call: a generator suspended inside it would leave gradients off
            gen = nmt.model.generate(input_ids=inp, attention_mask=mask, num_beams=beam, do_sample=False,
                                     max_new_tokens=min(max_len, 2 * longest + 10),
                                     **({"early_stopping": True} if beam > 1 else {}),  # a beam's flag only
                                     decoder_start_token_id=PAD, eos_token_id=EOS, pad_token_id=PAD)
        yield [[t for t in g.tolist() if t not in (PAD, EOS)] for g in gen]


def reference_xent(nmt: NMTModel | str | os.PathLike, sources, references, max_tokens: int = 2000) -> float:
    """The model's cross-entropy of each reference given its source (teacher-forced, no label smoothing),
    summed over the references' tokens and divided by their characters: nats per character, comparable
    between models of different vocabularies (a dev loss per token is not). A reference longer than the
    model's positions is cut there, its characters still counted (an upper bound)."""
    import torch

    from .trainer import summed_loss
    if not isinstance(nmt, NMTModel):
        nmt = load_nmt(nmt)
    chars = sum(len(r) for r in references)
    if not chars:
        raise InputError("the references hold no character to score")
    total, _ = summed_loss(torch, nmt.model, encode(nmt.vocab, list(sources)), encode(nmt.vocab, list(references)),
                           max_tokens)
    return total / chars
