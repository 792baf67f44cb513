"""n-gram language models through VariKN (PyPI ``varikn``).

Why VariKN: it is a maintained n-gram toolkit (Aalto University) whose PyPI
package ships a compiled wheel with Python bindings for both *training*
(Kneser–Ney smoothed, growing/pruned varigram models) and *scoring*. KenLM's
PyPI package only queries models; training needs the ``lmplz`` binary, which
is not on PyPI. VariKN writes standard ARPA files, so models can be inspected
or used with other tools.

Text is lower-cased and split into word and punctuation tokens; each sentence
is scored as ``<s> w1 ... wn </s>`` (``<s>`` is context only). Out-of-vocabulary
tokens are counted separately: :meth:`NgramLM.perplexity` leaves them out of
the perplexity and reports the OOV rate (the SRILM convention), while
:meth:`NgramLM.cross_entropy` scores them with the model's ``<UNK>``
probability so that every token counts (what Moore–Lewis needs).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ._internal.errors import DomainsiftError

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
UNK = "<UNK>"
UNK_FLOOR = -7.0  # log10 probability of an unknown word under a model without <UNK> (in the defaults)


def tokenize(text: str) -> list[str]:
    """Lower-cased word and punctuation tokens."""
    return _TOKEN.findall(text.lower())


def _varikn():
    from ._internal.optional import require
    return require("varikn", "lm")


def _train_arpa(train: str, arpa: str, order: int, prune_scale: float) -> None:
    """Train with VariKN in this process (called in a child process: see :meth:`NgramLM.fit`).

    ``prune_scale`` > 0: VariKN's growing and pruning at that data-cost scale, trigrams seen once cut.
    ``prune_scale`` = 0: no pruning and no count cut-off: every n-gram of the training text up to
    ``order`` is in the model (a full Kneser–Ney model, as KenLM's ``lmplz`` builds by default)."""
    vk = _varikn()
    vg = vk.VarigramTrainer(False, False)
    vg.set_datacost_scale(prune_scale)
    vg.set_datacost_scale2(2 * prune_scale)
    vg.set_max_order(order)
    vg.initialize(train, 0, 0, -1, "", "<s>", False, "")
    vg.set_cutoffs([0, 0, 1] if prune_scale > 0 else [0] * max(order, 1))
    vg.grow(1)
    vg.write_file(arpa, True)


@contextlib.contextmanager
def _captured_fds():
    """Send what C++ code writes to file descriptors 1 and 2 during the block to the debug log.

    Used only around loading a model (a few lines of VariKN chatter); training runs in a child
    process whose output is captured there, so this process's streams are never touched for long.
    """
    import logging
    import sys
    for s in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            s.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as sink:
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            yield
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            sink.seek(0)
            text = sink.read().decode("utf-8", "replace").strip()
            if text:
                logging.getLogger(__name__).debug("VariKN: %s", text)


class NgramLM:
    """A Kneser–Ney smoothed n-gram LM trained with VariKN.

    Parameters
    ----------
    order : maximum n-gram order
    prune_scale : VariKN's data-cost scale (``dscale``); smaller keeps more n-grams, 0 keeps them all
    """

    def __init__(self, order: int = 4, prune_scale: float = 0.0001):
        if order < 1:
            raise DomainsiftError(f"the n-gram order must be at least 1, got {order}")
        if prune_scale < 0:
            raise DomainsiftError(f"the pruning scale must be 0 (no pruning) or positive, got {prune_scale}")
        self.order = order
        self.prune_scale = prune_scale
        self._dir: str | None = None
        self._scorer = None
        self.arpa_path: str | None = None

    # -- training / loading ------------------------------------------------
    def fit(self, sentences: Iterable[str]) -> "NgramLM":
        """Train on an iterable of raw sentences (tokenized here), in a child process so that
        VariKN's console output stays out of this process's streams."""
        self._dir = tempfile.mkdtemp(prefix="domainsift-lm-")
        train = Path(self._dir) / "train.txt"
        n = 0
        with open(train, "w", encoding="utf-8") as fh:
            for s in sentences:
                toks = tokenize(s)
                if toks:
                    fh.write("<s> " + " ".join(toks) + " </s>\n")
                    n += 1
        if n == 0:
            raise DomainsiftError("cannot train a language model on no (non-empty) sentences")
        arpa = Path(self._dir) / "model.arpa"
        _varikn()  # a missing extra is reported here, not by the child
        import subprocess
        import sys
        proc = subprocess.run([sys.executable, "-c", "import sys; from domainsift.lm import _train_arpa; "
                               "_train_arpa(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))",
                               str(train), str(arpa), str(self.order), repr(self.prune_scale)],
                              capture_output=True, text=True)
        if proc.returncode != 0 or not arpa.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise DomainsiftError(f"VariKN failed to train a {self.order}-gram model: {tail[0]}")
        self.n_train_sentences_ = n
        return self.load(str(arpa))

    def load(self, arpa_path: str) -> "NgramLM":
        """Load an ARPA file (any toolkit's) for scoring."""
        vk = _varikn()
        if not os.path.exists(arpa_path):
            raise DomainsiftError(f"{arpa_path}: no such language model file")
        with _captured_fds():
            scorer = vk.Perplexity(arpa_path, 0, "", "", "", UNK, 0, False)
        scorer.set_init_hist(1)
        scorer.set_unk_warn(False)
        self._scorer = scorer
        self.arpa_path = arpa_path
        scorer.token_logprob("<s>")
        unk = float(scorer.token_logprob(UNK))
        scorer.clear_history()
        self._unk_lp = unk if unk > -98 else UNK_FLOOR  # a model without <UNK>: a small floor
        return self

    def save(self, path: str | os.PathLike) -> None:
        from ._internal.atomic import atomic_path
        with atomic_path(path) as tmp:
            shutil.copyfile(self.arpa_path, tmp)

    def __del__(self):
        if getattr(self, "_dir", None):
            shutil.rmtree(self._dir, ignore_errors=True)

    # -- scoring ------------------------------------------------------------
    def sentence_stats(self, sentences: Sequence[str]):
        """Per sentence: (log10 prob of in-vocabulary tokens, their count, OOV count,
        log10 prob of OOV tokens under ``<UNK>``), each of shape (n,)."""
        if self._scorer is None:
            raise DomainsiftError("language model is not trained or loaded")
        lm = self._scorer
        n = len(sentences)
        lp_known = np.zeros(n)
        n_known = np.zeros(n, dtype=np.int64)
        n_oov = np.zeros(n, dtype=np.int64)
        lp_oov = np.zeros(n)
        for i, s in enumerate(sentences):
            lm.token_logprob("<s>")
            for tok in tokenize(s) + ["</s>"]:
                before = lm.get_num_tunks()
                lp = lm.token_logprob(tok)
                if lm.get_num_tunks() > before or lp <= -98:
                    n_oov[i] += 1
                    lp_oov[i] += max(lp, self._unk_lp)
                else:
                    lp_known[i] += lp
                    n_known[i] += 1
            lm.clear_history()
        return lp_known, n_known, n_oov, lp_oov

    def cross_entropy(self, sentences: Sequence[str]) -> np.ndarray:
        """Per-token cross-entropy (bits) of each sentence, OOVs scored as ``<UNK>``; (n,)."""
        lp_known, n_known, n_oov, lp_oov = self.sentence_stats(sentences)
        total = n_known + n_oov
        return -(lp_known + lp_oov) / np.maximum(total, 1) / math.log10(2)

    def log_prob(self, sentences: Sequence[str]) -> np.ndarray:
        """Log-probability (bits) of each whole sentence, ``</s>`` included, OOVs scored as ``<UNK>``; (n,)."""
        lp_known, _, _, lp_oov = self.sentence_stats(sentences)
        return (lp_known + lp_oov) / math.log10(2)

    def perplexity(self, sentences: Sequence[str]) -> dict:
        """Corpus perplexity over in-vocabulary tokens (incl. ``</s>``) and the OOV rate."""
        lp_known, n_known, n_oov, _ = self.sentence_stats(sentences)
        tokens = int(n_known.sum())
        oov = int(n_oov.sum())
        ppl = 10 ** (-lp_known.sum() / tokens) if tokens else float("inf")
        return {"perplexity": float(ppl), "oov_rate": oov / max(tokens + oov, 1),
                "n_tokens": tokens + oov, "n_oov": oov, "n_sentences": len(sentences)}
