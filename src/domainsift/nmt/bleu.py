"""BLEU and chrF of translations against references, through sacrebleu (its default tokenizer, 13a), with
sacrebleu's own signature inside the product's."""

from __future__ import annotations

from .._internal.errors import InputError


def score_translation(hypotheses, references, what: str = "the hypotheses") -> dict:
    """``{"bleu", "chrf", "chrfpp", "n", "signature": {"bleu": ..., "chrf": ..., "chrfpp": ...}}`` of
    ``hypotheses`` against one reference each (chrF, and chrF++: word bigrams too); unequal counts are one
    line."""
    try:
        import sacrebleu
    except ImportError:
        from .._internal.errors import missing_extra
        raise missing_extra("sacrebleu", "nmt") from None
    hyp, ref = list(hypotheses), list(references)
    if len(hyp) != len(ref):
        raise InputError(f"{what}: {len(hyp)} lines against {len(ref)} references; they must align line by line")
    if not hyp:
        raise InputError(f"{what}: no lines to score")
    bleu = sacrebleu.metrics.BLEU()
    chrf = sacrebleu.metrics.CHRF()
    chrfpp = sacrebleu.metrics.CHRF(word_order=2)
    b = bleu.corpus_score(hyp, [ref])
    c = chrf.corpus_score(hyp, [ref])
    cpp = chrfpp.corpus_score(hyp, [ref])
    return {"bleu": round(b.score, 4), "chrf": round(c.score, 4), "chrfpp": round(cpp.score, 4), "n": len(hyp),
            "signature": {"bleu": str(bleu.get_signature()), "chrf": str(chrf.get_signature()),
                          "chrfpp": str(chrfpp.get_signature())}}
