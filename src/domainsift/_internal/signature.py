"""Reproducibility signatures: every output says how it was made.

A signature is a flat dict of what determines a result (``method``, ``model``,
``seed``, the method's parameters, the inputs, ``version``) and a one-line
string in the sacrebleu style::

    cosine|model:all-MiniLM-L6-v2|seed:0|max_length:128|backend:onnx-int8|...|isa:avx2|pool:EMEA.train.en|v:0.6.0

Nothing that varies from run to run (wall time, dates) goes into it: timings
live beside it (``timings`` in the run's JSON). List values are kept, joined by
commas; file paths appear in the string by their base name and in the dict in
full. The version changes whenever a default changes.
"""

from __future__ import annotations

import os
from typing import Any

from .._version import __version__


def make_signature(method: str, *, model: str | None = None, seed: int | None = None,
                   **params: Any) -> dict:
    sig: dict[str, Any] = {"method": method, "model": model, "seed": seed}
    sig.update(params)
    sig["version"] = __version__
    sig["signature"] = signature_string(sig)
    return sig


def _show(key: str, value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(_show(key, v) for v in value)
    if isinstance(value, str) and os.sep in value and key in _PATH_KEYS:
        return os.path.basename(value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


_PATH_KEYS = {"inputs", "in_domain", "pool", "pool_target", "corpus", "bitext", "test", "model"}


def signature_string(sig: dict) -> str:
    skip = {"method", "version", "signature"}
    parts = [str(sig.get("method"))]
    for key, value in sig.items():
        if key in skip or value is None or isinstance(value, dict):
            continue
        if isinstance(value, (list, tuple)) and any(isinstance(v, dict) for v in value):
            continue
        parts.append(f"{key}:{_show(key, value)}")
    parts.append(f"v:{sig.get('version', __version__)}")
    return "|".join(parts)
