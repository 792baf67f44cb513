"""Static token vectors distilled from a transformers encoder: a sentence vector with no transformer pass.

The recipe is Model2Vec's (Tulkens and van Dongen, 2024; sentence-transformers' ``StaticEmbedding``):

1. every token of the encoder's vocabulary (special tokens and ``[unused…]`` placeholders left out) is
   passed through the encoder on its own, as ``[CLS] token [SEP]``, and its hidden states mean-pooled:
   one vector per token;
2. each token's vector is scaled by its SIF weight ``a / (a + p)`` (``a`` = 1e-4), with ``p`` the
   token's probability estimated from Zipf's law on its position in the vocabulary (WordPiece
   vocabularies are ordered roughly by frequency), so that frequent tokens weigh less;
3. a sentence's vector is the mean of its tokens' vectors (the encoder's own tokenizer, no special
   tokens); a line with no known token gets the zero vector.

Model2Vec also reduces the vectors with PCA; that is a rotation and truncation, which a linear head
(the student's, :mod:`domainsift.select.student`) does not need, so the vectors keep the encoder's width.
The ``model2vec`` package itself is not used: its ``distill`` extra pins ``transformers<5.4``, older
than the product's, and the recipe is the three steps above. Distilling MiniLM takes about 20 s on
2 cores; the result is cached on disk by the encoder's fingerprint (``<cache>/static/``).
"""

from __future__ import annotations

import itertools
import json
import logging
import re
from pathlib import Path
from typing import Sequence

import numpy as np

from .._internal.atomic import atomic_dir, save_json, save_npy

log = logging.getLogger(__name__)

SIF = 1e-4
RECIPE = "model2vec-mean-sif1e-4"  # what the signature records of the distillation
JOIN = 1024  # chunks joined into one text when a ChunkCache tokenizes the chunks it has not seen
CHUNK = 4096  # lines tokenized at a time (their token rows are pooled TOKEN_BLOCK at a time)
TOKEN_BLOCK = 16384  # token rows gathered at once when lines are pooled (StaticEmbedder.pool): 75 MB of float32
# and float64 rows at 384 dimensions, whatever the lines' lengths (0.27.0 gathered a whole chunk's: 4,096 lines of
# 50 tokens, 0.9 GB); each line's sum is the same either way (its rows, in order, by reduceat)
_UNUSED = re.compile(r"^\[unused\d+\]$")


class StaticEmbedder:
    """Sentence vectors as the mean of static token vectors (see the module docstring).

    ``vectors``: (vocabulary, dim) float32, one row per token id; ``tokenizer``: a ``tokenizers``
    :class:`~tokenizers.Tokenizer` (the encoder's, so the ids index ``vectors``)."""

    def __init__(self, vectors: np.ndarray, tokenizer, name: str, source_fingerprint: str | None,
                 max_tokens: int = 512):
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.tokenizer = tokenizer
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_tokens)
        self.name = name
        self.source_fingerprint = source_fingerprint
        self.max_tokens = max_tokens
        self._chunks = None  # the ChunkCache, built on first use (False: this tokenizer needs whole lines)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def token_ids(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """All lines' token ids concatenated, and each line's count (at most ``max_tokens`` each).

        With a BERT tokenizer the ids come from a :class:`ChunkCache` (each space-separated chunk
        tokenized once, the same ids as the whole line's); otherwise from ``tokenizers`` line by line
        (:meth:`tokenize`)."""
        if self._chunks is None:
            self._chunks = ChunkCache(self.tokenizer, self.max_tokens) if splits_at_spaces(self.tokenizer) else False
        if self._chunks:
            return self._chunks.token_ids(texts)
        return self.tokenize(texts)

    def tokenize(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`token_ids` from the tokenizer itself, every line in full (``tokenizers`` runs it on every
        core unless ``TOKENIZERS_PARALLELISM=false`` says otherwise; the ids are the same either way)."""
        ids = [e.ids for e in self.tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)]
        counts = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        flat = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=int(counts.sum()))
        return flat, counts

    def pool(self, values: np.ndarray, flat: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Per-line means of ``values[flat]`` (values: per-token rows or scalars); 0 for an empty line."""
        n = len(counts)
        line = np.repeat(np.arange(n), counts)
        denom = np.maximum(counts, 1).astype(np.float64)
        if values.ndim == 1:
            return np.bincount(line, weights=values[flat], minlength=n) / denom
        out = np.zeros((n, values.shape[1]), dtype=np.float64)
        ends = np.cumsum(counts)
        lo = 0
        while lo < n and len(flat):  # whole lines, about TOKEN_BLOCK tokens' rows at a time
            a = int(ends[lo - 1]) if lo else 0
            hi = max(lo + 1, int(np.searchsorted(ends, a + TOKEN_BLOCK, side="right")))
            b = int(ends[hi - 1])
            if b > a:
                _add_rows(out[lo:hi], line[a:b] - lo, values[flat[a:b]].astype(np.float64))
            lo = hi
        return out / denom[:, None]

    def encode(self, texts: Sequence[str], dtype=np.float32) -> np.ndarray:
        """(lines, dim) sentence vectors, :data:`CHUNK` lines at a time (the same vectors as all at once:
        each line's mean is its own)."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=dtype)
        for start, flat, counts in self.token_chunks(texts):
            out[start:start + len(counts)] = self.pool(self.vectors, flat, counts)
        return out

    def token_chunks(self, texts: Sequence[str]):
        """:meth:`token_ids` of :data:`CHUNK` lines at a time: ``(first line's index, flat ids, counts)``."""
        for start in range(0, len(texts), CHUNK):
            flat, counts = self.token_ids(texts[start:start + CHUNK])
            yield start, flat, counts

    # ------------------------------------------------------------------ persistence
    def save(self, folder: str | Path) -> None:
        """Write the vectors, the tokenizer and where they came from into ``folder`` (atomically)."""
        with atomic_dir(folder) as tmp:
            save_npy(tmp / "vectors.npy", self.vectors)
            self.tokenizer.save(str(tmp / "tokenizer.json"))
            save_json(tmp / "static.json", {"name": self.name, "source_fingerprint": self.source_fingerprint,
                                            "recipe": RECIPE, "max_tokens": self.max_tokens})

    @classmethod
    def load(cls, folder: str | Path, verify: bool = True) -> "StaticEmbedder":
        """Vectors saved by :meth:`save`; ``verify``: check the folder's checksums first (a mismatch is a
        :class:`~domainsift._internal.checksums.DamagedError`)."""
        from tokenizers import Tokenizer
        folder = Path(folder)
        if verify:
            from .._internal.checksums import verify as check
            check(folder)
        meta = json.loads((folder / "static.json").read_text(encoding="utf-8"))
        return cls(np.load(folder / "vectors.npy"), Tokenizer.from_file(str(folder / "tokenizer.json")),
                   meta["name"], meta["source_fingerprint"], meta.get("max_tokens", 512))

    def __getstate__(self):  # Ray ships it: the tokenizer travels as its JSON
        state = dict(self.__dict__)
        state["tokenizer"] = self.tokenizer.to_str()
        state["_chunks"] = None  # each process fills its own
        return state

    def __setstate__(self, state):
        from tokenizers import Tokenizer
        state = dict(state)
        state["tokenizer"] = Tokenizer.from_str(state["tokenizer"])
        self.__dict__.update(state)


def splits_at_spaces(tokenizer) -> bool:
    """Whether ``tokenizer`` gives a line the ids of its space-separated chunks, one after another: BERT's
    pipeline (:class:`ChunkCache`). Byte-level BPE and SentencePiece's Metaspace mark a word's leading
    space inside its first token, so their lines are tokenized whole."""
    spec = json.loads(tokenizer.to_str())
    kinds = {part: (spec.get(part) or {}).get("type") for part in ("normalizer", "pre_tokenizer", "model")}
    return kinds == {"normalizer": "BertNormalizer", "pre_tokenizer": "BertPreTokenizer", "model": "WordPiece"}


class ChunkCache:
    """Token ids of a BERT tokenizer, each space-separated chunk of text tokenized once.

    BERT's normalizer works character by character (cleaning, CJK padding, NFD, accents, lower case; a
    space starts no combining sequence and ends no word for the final sigma), its pre-tokenizer splits at
    every space, and WordPiece works within a word; so a line's ids are its chunks' ids (split at U+0020)
    one after another, and the same chunk has the same ids in every line. Most chunks of a corpus recur
    (words), so a pool is tokenized as a few Python dictionary lookups a line and one ``tokenizers`` call
    a batch over the chunks not seen yet, with no Python loop over tokens. A line of more than
    ``max_tokens`` tokens keeps its first ``max_tokens``, as the tokenizer's truncation does. The cache
    holds at most ``limit`` chunks and starts again empty when full (frequent chunks come back at once).
    """

    def __init__(self, tokenizer, max_tokens: int = 512, limit: int = 1 << 19):
        from tokenizers import Tokenizer
        self.tokenizer = Tokenizer.from_str(tokenizer.to_str())  # a copy that tokenizes many chunks at once
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self.max_tokens = max_tokens
        self.limit = limit
        self.clear()

    def clear(self) -> None:
        self.slot: dict[str, int] = {}
        self.store = np.zeros(1 << 16, dtype=np.int32)  # every cached chunk's ids, one after another
        self.used = 0
        self.start = np.zeros(1 << 12, dtype=np.int64)  # a slot's first id in ``store``
        self.size = np.zeros(1 << 12, dtype=np.int64)   # a slot's number of ids

    def tokenize(self, chunks: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of each of ``chunks`` (none holds a space), one after another, and each one's count.
        Chunks are joined by spaces into texts of :data:`JOIN` chunks, tokenized in one batch, and each
        token goes back to its chunk by where it starts in the text (its offsets)."""
        texts, starts = [], []
        for at in range(0, len(chunks), JOIN):
            part = chunks[at:at + JOIN]
            texts.append(" ".join(part))
            lengths = np.fromiter(map(len, part), dtype=np.int64, count=len(part)) + 1
            starts.append(np.cumsum(lengths) - lengths)  # each chunk's first character in its text
        ids, owner = [], []
        for k, enc in enumerate(self.tokenizer.encode_batch(texts, add_special_tokens=False)):
            ids.append(np.asarray(enc.ids, dtype=np.int32))
            first = np.fromiter(itertools.chain.from_iterable(enc.offsets), dtype=np.int64)[::2]
            owner.append(k * JOIN + np.searchsorted(starts[k], first, side="right") - 1)
        flat = np.concatenate(ids) if ids else np.zeros(0, np.int32)
        sizes = np.bincount(np.concatenate(owner), minlength=len(chunks)) if owner else np.zeros(0, np.int64)
        return flat, sizes.astype(np.int64)

    def _add(self, chunks: list[str]) -> None:
        flat, sizes = self.tokenize(chunks)
        first = len(self.slot)
        need = first + len(chunks)
        if need > len(self.start):
            grow = max(need, 2 * len(self.start))
            self.start = np.resize(self.start, grow)
            self.size = np.resize(self.size, grow)
        if self.used + len(flat) > len(self.store):
            self.store = np.resize(self.store, max(self.used + len(flat), 2 * len(self.store)))
        self.store[self.used:self.used + len(flat)] = flat
        self.start[first:need] = self.used + np.cumsum(sizes) - sizes
        self.size[first:need] = sizes
        self.used += len(flat)
        self.slot.update(zip(chunks, range(first, need)))

    def token_ids(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`StaticEmbedder.tokenize`: every line's ids concatenated, and each line's count."""
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        chunks = " ".join(texts).split(" ")
        per_line = np.fromiter(map(str.count, texts, itertools.repeat(" ")), dtype=np.int64, count=len(texts)) + 1
        slots = np.fromiter(map(self.slot.get, chunks, itertools.repeat(-1)), dtype=np.int64, count=len(chunks))
        missing = np.flatnonzero(slots < 0)
        if len(missing):
            new = list(dict.fromkeys([chunks[i] for i in missing]))
            if len(self.slot) + len(new) > self.limit:  # the cache starts again: every chunk is looked up anew
                self.clear()
                missing = np.arange(len(chunks))
                new = list(dict.fromkeys(chunks))
            self._add(new)
            get = self.slot.__getitem__
            slots[missing] = np.fromiter(map(get, [chunks[i] for i in missing]), dtype=np.int64, count=len(missing))
        sizes = self.size[slots]
        # each line's count: the sum of its chunks' sizes (every line has at least one chunk)
        counts = np.add.reduceat(sizes, np.cumsum(per_line) - per_line)
        total = int(sizes.sum())
        # the ids: each chunk's run of ``store``, one after another
        offset = np.repeat(self.start[slots] - (np.cumsum(sizes) - sizes), sizes)
        flat = self.store[offset + np.arange(total)].astype(np.int64)
        if counts.max() > self.max_tokens:  # the tokenizer's truncation: a line keeps its first max_tokens
            place = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
            flat = flat[place < self.max_tokens]
            counts = np.minimum(counts, self.max_tokens)
        return flat, counts


def _add_rows(out: np.ndarray, line: np.ndarray, rows: np.ndarray) -> None:
    """``out[line[k]] += rows[k]`` for sorted ``line`` (lines are contiguous runs), by reduceat."""
    starts = np.flatnonzero(np.r_[True, line[1:] != line[:-1]])
    out[line[starts]] = np.add.reduceat(rows, starts, axis=0)


def distill(model: str, batch_size: int = 1024, progress: bool = False) -> StaticEmbedder:
    """Distill static token vectors from the transformers encoder at ``model`` (a local path or hub
    name), in fp32 PyTorch on the CPU (see the module docstring)."""
    from . import model_path
    from .transformers import TransformersEmbedder
    model = model_path(model)
    enc = TransformersEmbedder(model, backend="torch", device="cpu", progress=False)
    _, tok, net, _ = enc.load()
    return distill_encoder(tok, net, enc.name, enc.fingerprint, batch_size, progress)


def distill_encoder(tok, net, name: str, fingerprint: str | None, batch_size: int = 1024,
                    progress: bool = False) -> StaticEmbedder:
    """The recipe of the module docstring over an encoder already loaded (``tok``: its transformers
    tokenizer, ``net``: the model, on whatever device it is; a fine-tuned one too). ``fingerprint``: the
    encoder's; None (an encoder with no files of its own) names the table by its digest."""
    from .transformers import _torch
    torch = _torch()
    vocab = tok.get_vocab()
    special = set(tok.all_special_ids)
    size = max(vocab.values()) + 1
    keep = np.array(sorted(i for t, i in vocab.items() if i not in special and not _UNUSED.match(t)), dtype=np.int64)
    cls_id = tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id
    sep_id = tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id
    cols = ([cls_id] if cls_id is not None else []) + [None] + ([sep_id] if sep_id is not None else [])
    dim = net.config.hidden_size
    device = next(net.parameters()).device
    out = np.zeros((size, dim), dtype=np.float32)
    from tqdm.auto import tqdm
    was_training = net.training
    net.eval()
    try:
        with torch.inference_mode():
            for start in tqdm(range(0, len(keep), batch_size), desc=f"distil {name}", unit="batch",
                              disable=not progress):
                ids = torch.as_tensor(keep[start:start + batch_size])
                parts = [ids[:, None] if c is None else torch.full((len(ids), 1), c) for c in cols]
                batch = torch.cat(parts, dim=1).to(device)
                hidden = net(input_ids=batch, attention_mask=torch.ones_like(batch)).last_hidden_state
                out[keep[start:start + batch_size]] = hidden.mean(1).float().cpu().numpy()
    finally:
        net.train(was_training)
    rank = np.empty(size, dtype=np.float64)
    rank[:] = np.arange(size) + 2  # Zipf on the vocabulary's order
    proba = (1 / rank) / np.sum(1 / rank)
    out *= (SIF / (SIF + proba)).astype(np.float32)[:, None]
    if fingerprint is None:
        import hashlib
        fingerprint = "distilled:" + hashlib.sha256(out.tobytes()).hexdigest()[:16]
    from tokenizers import Tokenizer  # a copy: the embedder sets its padding and truncation, not the encoder's
    return StaticEmbedder(out, Tokenizer.from_str(tok.backend_tokenizer.to_str()), name, fingerprint,
                          max_tokens=min(512, getattr(tok, "model_max_length", 512) or 512))


def distilled(model: str, cache_dir: str | None = None, progress: bool = False) -> StaticEmbedder:
    """The static vectors of ``model``, distilled once and kept under ``<cache>/static/<fingerprint>``
    (``cache_dir=""``: no cache)."""
    from . import model_path
    from .cache import default_cache_dir
    from .transformers import model_fingerprint
    model = model_path(model)
    cache = default_cache_dir() if cache_dir is None else cache_dir
    if not cache:
        return distill(model, progress=progress)
    import hashlib
    key = hashlib.sha256(f"{model_fingerprint(model)}|{RECIPE}".encode()).hexdigest()[:16]
    folder = Path(cache) / "static" / key
    if folder.exists():
        from .._internal.checksums import DamagedError
        try:
            return StaticEmbedder.load(folder)
        except DamagedError as exc:
            log.warning("the cached distilled vectors are damaged (%s); distilling again", exc)
        except Exception as exc:  # noqa: BLE001: whatever a damaged folder raises (the tokenizer's bare Exception)
            log.warning("the distilled vectors in %s cannot be read (%s); distilling again", folder,
                        str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    emb = distill(model, progress=progress)
    folder.parent.mkdir(parents=True, exist_ok=True)
    emb.save(folder)
    return emb
