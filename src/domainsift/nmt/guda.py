"""Paper 003's adaptation half (GUDA, section 4): train the forward model on a pseudo-bitext of the new
domain and the old domain's bitext, with two domain discriminators ("discriminative domain mixing").

The loss, eq. 3-6 of the paper::

    L = L_NMT + L_src-disc + L_tgt-disc
    L_NMT      = - sum_{(x,y) in D_new} log p(y|x)       - lambda1 sum_{(x,y) in D_old} log p(y|x)
    L_src-disc = - sum_{x in X_new} log c_e(h(enc(x)))    - lambda2 sum_{x in D_old^s} log(1 - c_e(h(enc(x))))
    L_tgt-disc = - sum_{y in Y_new} log c_d(h(dec(y)))    - lambda3 sum_{y in D_old^t} log(1 - c_d(h(dec(y))))

``D_new`` is the pseudo-bitext (the selected target-language sentences ``Y_new`` with their back-translations),
``X_new`` the new domain's source-language sentences (the in-domain set), ``D_old`` the old domain's bitext.
``h`` is the mean of the top layer's states over a sentence's tokens (padding left out); each discriminator
``c`` is a 2-layer feed-forward net (hidden 128, the paper's appendix) whose output is the new domain's
probability. The discriminators are trained jointly with the model and their gradient reaches the encoder
(decoder): they pull it towards the new domain's characteristics (Britz et al., 2017; not adversarial).

Every training item is one row of a batch, of one :data:`KINDS`; a row's kind says which terms it enters
and with what weight and label (:func:`row_weights`): a pseudo pair enters the NMT loss (weight 1) and the
target discriminator (label new; its decoder states are those of ``y`` given its back-translation); an old
pair the NMT loss (lambda1) and both discriminators (label old, weights lambda2, lambda3); a new-domain source
sentence only the source discriminator (label new). The ablations of the paper's Table 5 switch the
discriminator terms off: ``bi`` (the bitext loss alone), ``bi+s``, ``bi+t``, ``bi+s+t``.

Scale: the sums are taken per batch and divided by the batch's NMT weight (tokens) and by its rows
(discriminators), so a term's size does not follow the batch's; with the paper's lambdas of 1 that is its
loss up to a constant per batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._internal.errors import DomainsiftError

PSEUDO, OLD, SOURCE = 0, 1, 2  # a row's kind
KINDS = ("pseudo", "old", "source")
LOSSES = ("bi", "bi+s", "bi+t", "bi+s+t")
HIDDEN = 128  # the discriminators' hidden size (paper 003, appendix A)


@dataclass(frozen=True)
class Mixing:
    """What GUDA's training adds to a bitext (the pseudo-bitext ``D_new``): the old domain's bitext ``old``,
    the new domain's source sentences ``source`` (``X_new``), which discriminator terms (``losses``) and the
    lambdas of eq. 4-6."""

    old: object  # a Bitext
    source: tuple = ()
    losses: str = "bi+s+t"
    lambda_old: float = 1.0   # lambda1: the old bitext in the NMT loss
    lambda_src: float = 1.0   # lambda2: the old sources in the source discriminator's loss
    lambda_tgt: float = 1.0   # lambda3: the old targets in the target discriminator's loss

    @property
    def src_disc(self) -> bool:
        return "s" in self.losses.split("+")[1:]

    @property
    def tgt_disc(self) -> bool:
        return "t" in self.losses.split("+")[1:]

    @staticmethod
    def check_options(losses: str, lambda_old: float, lambda_src: float, lambda_tgt: float) -> None:
        """The terms and lambdas, before any input is read."""
        if losses not in LOSSES:
            raise DomainsiftError(f"--losses must be one of {', '.join(LOSSES)}, got {losses!r}")
        for name, v in (("--lambda-old", lambda_old), ("--lambda-src", lambda_src), ("--lambda-tgt", lambda_tgt)):
            if not (v >= 0 and np.isfinite(v)):
                raise DomainsiftError(f"{name} must be a number at least 0, got {v}")

    def check(self) -> "Mixing":
        self.check_options(self.losses, self.lambda_old, self.lambda_src, self.lambda_tgt)
        if not len(self.old):
            raise DomainsiftError("the old domain's bitext has no pairs")
        if self.src_disc and not self.source:
            raise DomainsiftError("the source discriminator (--losses bi+s...) needs the new domain's source "
                                  "sentences (--in-domain)")
        return self

    def describe(self) -> dict:
        return {"losses": self.losses, "lambda_old": self.lambda_old, "lambda_src": self.lambda_src,
                "lambda_tgt": self.lambda_tgt, "n_old": len(self.old), "n_source": len(self.source)}


def row_weights(kinds: np.ndarray, mixing: Mixing) -> dict:
    """Per row of a batch (``kinds``): its weight in the NMT loss, in each discriminator's loss, and its
    label there (1: the new domain). A term that is switched off weighs every row 0."""
    kinds = np.asarray(kinds)
    nmt = np.where(kinds == PSEUDO, 1.0, np.where(kinds == OLD, mixing.lambda_old, 0.0))
    src = np.where(kinds == SOURCE, 1.0, np.where(kinds == OLD, mixing.lambda_src, 0.0)) if mixing.src_disc \
        else np.zeros(len(kinds))
    tgt = np.where(kinds == PSEUDO, 1.0, np.where(kinds == OLD, mixing.lambda_tgt, 0.0)) if mixing.tgt_disc \
        else np.zeros(len(kinds))
    label = (kinds != OLD).astype(np.float64)  # pseudo pairs and new sources are the new domain
    return {"nmt": nmt, "src": src, "tgt": tgt, "label": label}


def discriminators(torch, d_model: int):
    """The two domain classifiers, each ``Linear(d, 128) -> ReLU -> Linear(128, 1)`` (a logit of the new
    domain)."""
    def ff():
        return torch.nn.Sequential(torch.nn.Linear(d_model, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 1))
    return torch.nn.ModuleDict({"src": ff(), "tgt": ff()})


def mean_pool(torch, states, mask):
    """The mean of ``states`` (batch, length, d) over each row's tokens where ``mask`` is 1."""
    m = mask.to(states.dtype).unsqueeze(-1)
    return (states * m).sum(1) / m.sum(1).clamp(min=1.0)


def mixed_loss(torch, model, discs, batch: dict, weights: dict, smoothing: float) -> tuple:
    """GUDA's loss of one batch and its three parts (floats): the weighted NMT cross-entropy over target
    tokens, and each discriminator's weighted binary cross-entropy over rows (the module docstring).
    ``weights``: :func:`row_weights` of the batch's rows."""
    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                decoder_input_ids=batch["decoder_input_ids"], output_hidden_states=True)
    logits, labels = out.logits, batch["labels"]
    w_nmt = torch.as_tensor(weights["nmt"], dtype=logits.dtype)
    tok = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                            ignore_index=-100, label_smoothing=smoothing,
                                            reduction="none").reshape(labels.shape)
    real = (labels != -100).to(logits.dtype)
    tok_w = real * w_nmt.unsqueeze(1)
    nmt = (tok * tok_w).sum() / tok_w.sum().clamp(min=1e-9)
    total, parts = nmt, {"nmt": float(nmt.detach())}
    label = torch.as_tensor(weights["label"], dtype=logits.dtype)
    for side, states, mask in (("src", out.encoder_last_hidden_state, batch["attention_mask"]),
                               ("tgt", out.decoder_hidden_states[-1], (labels != -100).long())):
        w = torch.as_tensor(weights[side], dtype=logits.dtype)
        if not bool((w > 0).any()):
            parts[side] = 0.0
            continue
        logit = discs[side](mean_pool(torch, states, mask)).squeeze(-1)
        bce = torch.nn.functional.binary_cross_entropy_with_logits(logit, label, reduction="none")
        term = (bce * w).sum() / len(w)
        total = total + term
        parts[side] = float(term.detach())
    return total, parts


def items(train, mixing: Mixing, encode, empty: list) -> tuple[list, list, np.ndarray]:
    """Every training row, encoded: the pseudo pairs, the old pairs and (for the source discriminator) the new
    sources with an ``empty`` target (``[EOS]``: a decoder input is needed, the row's NMT weight is 0); and
    each row's kind."""
    src = encode(train.src) + encode(mixing.old.src)
    tgt = encode(train.tgt) + encode(mixing.old.tgt)
    kinds = [PSEUDO] * len(train) + [OLD] * len(mixing.old)
    if mixing.src_disc:
        src += encode(mixing.source)
        tgt += [list(empty) for _ in mixing.source]
        kinds += [SOURCE] * len(mixing.source)
    return src, tgt, np.asarray(kinds, dtype=np.int8)


def batches(src: list, tgt: list, kinds: np.ndarray, max_tokens: int, rng: np.random.Generator,
            mixing: Mixing) -> list[np.ndarray]:
    """An epoch's batches in which each discriminator sees both domains: every batch holds old pairs, and
    pseudo pairs when the target discriminator is on, and new-domain sources when the source discriminator
    is on (a length-sorted batching alone put the one-token-target sources together, so the source
    discriminator saw one domain a batch).

    How: the number of batches ``K`` is the epoch's padded tokens over ``max_tokens``, at most the rows of
    the smallest kind; each kind's rows, shuffled by ``rng`` and ordered by length in buckets of 4 tokens, are
    cut into ``K`` runs of (nearly) equal counts; batch ``j`` is the ``j``-th run of every kind (so its rows are
    at the same length quantile in each kind), and the batches are shuffled. A kind with fewer rows than
    the budget's batches makes the batches larger than ``max_tokens``; no row is repeated or dropped."""
    kinds = np.asarray(kinds)
    cost = np.array([max(len(s), len(t)) for s, t in zip(src, tgt)])
    needed = [OLD] + ([PSEUDO] if mixing.tgt_disc else []) + ([SOURCE] if mixing.src_disc else [])
    present = [k for k in (PSEUDO, OLD, SOURCE) if (kinds == k).any()]
    n_batches = max(1, int(np.ceil(cost.sum() / max_tokens)))
    n_batches = max(1, min([n_batches] + [int((kinds == k).sum()) for k in needed if (kinds == k).any()]))
    runs = {}
    for k in present:
        rows = np.flatnonzero(kinds == k)
        rows = rows[rng.permutation(len(rows))]
        rows = rows[np.argsort(cost[rows] // 4, kind="stable")]
        runs[k] = np.array_split(rows, n_batches)
    out = [np.concatenate([runs[k][j] for k in present]) for j in range(n_batches)]
    out = [b for b in out if len(b)]
    return [out[i] for i in rng.permutation(len(out))]
