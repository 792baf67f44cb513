"""Beam search through CTranslate2 (extra ``ct2``): a trained folder converted once into
``FOLDER/ct2-<quantization>/`` (``int8`` by default: 8-bit weights, for a CPU), then translated by
``ctranslate2.Translator`` in the same length-sorted batches as ``generate``.

CTranslate2's converter for Marian models assumes Hugging Face's vocabulary layout (``<pad>`` the last id,
dropped from the converted model); the models this product trains put ``<pad>`` at id 0 (sentencepiece's
ids), so the conversion keeps every row, gives the vocabulary from ``spm.model``, and starts the decoder
from ``<pad>``'s embedding (its ``decoder_start_token_id``), which training does not keep at zero.
"""

from __future__ import annotations

from pathlib import Path

from .._internal.errors import DomainsiftError

QUANTIZATIONS = ("int8", "int8_float32", "int16", "float32")


def _ctranslate2():
    try:
        import ctranslate2
    except ImportError:
        from .._internal.errors import missing_extra
        raise missing_extra("ctranslate2", "ct2") from None
    return ctranslate2


class _Pieces:
    """What the converter asks of a tokenizer: the vocabulary (sentencepiece's pieces by id) and two tokens."""

    eos_token, unk_token, pad_token = "</s>", "<unk>", "<pad>"

    def __init__(self, sp):
        self._vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}

    def get_vocab(self) -> dict:
        return dict(self._vocab)


def converted(nmt, quantization: str = "int8") -> Path:
    """The CTranslate2 model of a loaded :class:`~domainsift.nmt.decode.NMTModel`, converted into its folder
    once (atomically, sealed, with the identity of the weights it was converted from) and reused while it
    checks out against its checksums and was made from the model in the folder now; made again otherwise."""
    import json
    import logging

    from .. import rundir
    from .._internal.checksums import DamagedError, verify
    if quantization not in QUANTIZATIONS:
        raise DomainsiftError(f"unknown quantization '{quantization}' (one of: {', '.join(QUANTIZATIONS)})")
    ct2 = _ctranslate2()
    out = Path(nmt.folder) / f"{rundir.CT2_PREFIX}{quantization}"
    if out.exists():
        try:
            verify(out)
            source = json.loads((out / rundir.CT2_SOURCE).read_text(encoding="utf-8"))
            if source.get("model") == nmt.identity:
                return out
            logging.getLogger(__name__).info("%s: converted from another model; converting again", out)
        except (DamagedError, OSError, ValueError) as exc:
            logging.getLogger(__name__).warning("%s cannot be used (%s); converting again", out,
                                                str(exc).splitlines()[0])
    from ctranslate2.converters.transformers import BartLoader, MarianMTLoader

    from .._internal.atomic import atomic_dir

    class Loader(MarianMTLoader):
        def get_model_spec(self, model):  # every row kept: <pad> is id 0 here, not the last id
            model.config.normalize_before = False
            model.config.normalize_embedding = False
            return BartLoader.get_model_spec(self, model)

        def get_vocabulary(self, model, tokenizer):
            return BartLoader.get_vocabulary(self, model, tokenizer)

        def set_decoder(self, spec, decoder):  # the decoder starts from <pad>'s own embedding, as generate's
            BartLoader.set_decoder(self, spec, decoder)

        def set_config(self, config, model, tokenizer):
            config.eos_token, config.unk_token = tokenizer.eos_token, tokenizer.unk_token
            config.decoder_start_token = tokenizer.pad_token

    spec = Loader()(nmt.model, _Pieces(nmt.vocab))
    spec.validate()
    spec.optimize(quantization=quantization)
    with atomic_dir(out) as tmp:
        spec.save(str(tmp))
        (tmp / rundir.CT2_SOURCE).write_text(json.dumps({"model": nmt.identity}) + "\n", encoding="utf-8")
    del ct2
    return out


def translate_ct2(nmt, batches, beam: int, max_len: int, quantization: str = "int8", threads: int = 0):
    """Each batch (``(ids, longest)``: sentencepiece ids ending in ``</s>``) translated; yields lists of
    output ids per batch (``</s>`` and ``<pad>`` removed)."""
    ct2 = _ctranslate2()
    import torch
    translator = ct2.Translator(str(converted(nmt, quantization)), device="cpu",
                                inter_threads=1, intra_threads=threads or torch.get_num_threads())
    sp = nmt.vocab
    for ids, longest in batches:
        tokens = [[sp.id_to_piece(i) for i in x] for x in ids]
        # generate's cap counts the </s> it forces at the last position (forced_eos_token_id); CTranslate2's counts
        # the tokens before </s>: one less, for the same longest output
        cap = max(1, min(max_len, 2 * longest + 10) - 1)
        res = translator.translate_batch(tokens, beam_size=beam, max_decoding_length=cap, max_batch_size=len(tokens))
        yield [[sp.piece_to_id(t) for t in r.hypotheses[0] if t not in ("</s>", "<pad>")] for r in res]
