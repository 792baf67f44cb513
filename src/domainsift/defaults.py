"""Every default that shapes a result, in one fingerprint.

A signature names the version; the version must change whenever a default
does, or two results with the same signature could come from different
settings. :func:`defaults_fingerprint` hashes the declared parameters of every
registered selector, the embedding configuration's defaults, the constants that
move numbers without being parameters (the exported graph's attention, the int8
recipe, the engine's shard size and fit sample, training's weight decay and
clipping, the cross-lingual head's batch and ridge penalties, the n-gram LM's
unknown-word floor, the pair checks' defaults and thresholds) and every command-line default; the test suite holds the
fingerprint of each version, so changing a default without a new version fails
a test. The command line's own defaults join the table in :func:`domainsift.cli.defaults_fingerprint`
(the library never imports the command line).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json


def constants() -> dict:
    """The module constants that move numbers without being anyone's parameter."""
    from .embed import onnx
    from .engine.config import DEFAULT_SHARD_SIZE, FIT_SAMPLE
    from .lm import UNK_FLOOR
    from .select import crosslingual
    from .embed import static
    from .pipeline import cascade
    from .select import student
    from .select.train import TrainConfig
    return {"export_attention": onnx.EXPORT_ATTENTION, "int8_recipe": onnx.INT8_RECIPE,
            "int8_weight_max": onnx.WEIGHT_MAX, "int8_act_max": onnx.ACT_MAX,
            "shard_size": DEFAULT_SHARD_SIZE, "fit_sample": FIT_SAMPLE,
            "train": {f.name: f.default for f in dataclasses.fields(TrainConfig)},
            "crosslingual_head_batch": crosslingual.HEAD_BATCH,
            "ridge_alphas": list(crosslingual.LinearAlignment.ALPHAS),
            "contrastive": crosslingual.CONTRASTIVE,
            "static": static.RECIPE, "student": {"head": student.HEAD, "folds": student.FOLDS, "enrich": student.ENRICH, "enrich_top": student.ENRICH_TOP,
                                                 "slack": cascade.SLACK},
            "cascade": {"plan_share": cascade.PLAN_SHARE, "min_factor": cascade.MIN_FACTOR}, "lm_unk_floor": UNK_FLOOR,
            "nmt": nmt_constants(), "pairs": pair_constants()}


def pair_constants() -> dict:
    """The pair checks' (a bitext pool's selection): which run by default and every threshold (0.39.0; the
    checks were on by default from 0.37.0 without their constants here)."""
    from . import pairs
    return {"default_checks": list(pairs.DEFAULT_CHECKS), "copy": [pairs.COPY_SIMILARITY, pairs.COPY_MIN_CHARS],
            "language": [pairs.LANGUAGE_PROBABILITY, pairs.LANGUAGE_MIN_WORDS],
            "ratio": [pairs.MAX_RATIO, pairs.RATIO_MIN_CHARS, pairs.LANGUAGE_RATIO],
            "fragment": [pairs.FRAGMENT_WORDS, pairs.FRAGMENT_FACTOR, pairs.FRAGMENT_CHARS, pairs.FRAGMENT_CUT,
                         list(pairs.SENTENCE_ENDS), sorted(pairs.UNSPACED)],
            "open_end": [pairs.OPEN_END_RATE, pairs.OPEN_END_MIN, pairs.OPEN_END_SHORT],
            "adequacy": [pairs.ADEQUACY_ENCODER, pairs.MARGIN_K, pairs.MIN_MARGIN, pairs.ADEQUACY_WINDOW],
            "numbers": [pairs.NUMBERS_MARGIN], "adequacy_pieces": [pairs.ADEQUACY_PIECES],
            "repeat": [pairs.REPEAT_ALIKE],
            "stand_down": [pairs.STAND_DOWN, pairs.STAND_DOWN_MIN]}


def nmt_constants() -> dict:
    """The translation floor's: the presets, the training's defaults and constants, decoding's, GUDA's."""
    from .nmt import decode, guda, trainer
    return {"presets": trainer.PRESETS, "settings": {f.name: f.default for f in dataclasses.fields(trainer.TrainSettings)
                                                     if f.default is not dataclasses.MISSING},
            "max_len": trainer.MAX_LEN, "label_smoothing": trainer.LABEL_SMOOTHING, "clip": trainer.CLIP,
            "beam": decode.BEAM, "batch": decode.BATCH, "guda_hidden": guda.HIDDEN}


def library_defaults() -> dict:
    """Every selector's declared defaults, the embedding configuration's, the encoders' and the
    constants; the command line adds its own (:func:`domainsift.cli.defaults_fingerprint`)."""
    from .embed import EMBEDDERS, EmbedConfig
    from .select import SELECTORS, selector_class
    out = {"embed": {f.name: f.default for f in dataclasses.fields(EmbedConfig)},
           "embedders": {k: v[1:] for k, v in EMBEDDERS.items()}, "constants": constants()}
    for name in sorted(SELECTORS):
        out[name] = {p.name: p.default for p in selector_class(name).params}
    return out


def fingerprint(defaults: dict) -> str:
    """The 16-hex-digit hash of a defaults table."""
    return hashlib.sha256(json.dumps(defaults, sort_keys=True, default=repr).encode()).hexdigest()[:16]
