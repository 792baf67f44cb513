"""The model trained on a selection (issue 77): a Marian-architecture transformer trained from scratch on a
bitext through Hugging Face ``transformers``, a sentencepiece vocabulary learned from its training data,
beam-search translation, and BLEU / chrF through sacrebleu. Extra ``nmt`` (sacrebleu, sentencepiece; torch
and transformers from ``train``).

- :func:`read_bitext` — two aligned files, checked (equal lines, no empty side), as pairs;
- :func:`train_nmt` — train (or resume) a model into a folder; presets ``proxy`` (small, for a CPU) and
  ``paper`` (paper 003's appendix, for a GPU);
- :func:`load_nmt`, :func:`translate` — a trained folder, and beam search with it;
- :func:`score_translation` — BLEU and chrF of hypotheses against references, with sacrebleu's signature.
"""

from .data import Bitext, check_disjoint, read_bitext

__all__ = ["Bitext", "check_disjoint", "read_bitext", "train_nmt", "load_nmt", "translate", "score_translation",
           "PRESETS"]


def __getattr__(name):  # lazy: torch and transformers only when a model is trained or used
    if name in ("train_nmt", "PRESETS", "TrainSettings"):
        from . import trainer
        return getattr(trainer, name)
    if name in ("load_nmt", "translate", "NMTModel"):
        from . import decode
        return getattr(decode, name)
    if name == "score_translation":
        from .bleu import score_translation
        return score_translation
    raise AttributeError(name)
