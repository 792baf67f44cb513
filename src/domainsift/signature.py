"""Reproducibility signatures: every output says how it was made.

A signature is a flat dict (``method``, ``model``, ``seed``, ``version`` and the
method's parameters) and a one-line string in the sacrebleu style::

    cosine|model:all-MiniLM-L6-v2|pool:mean|seed:0|v:0.1.0
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from . import __version__


def make_signature(method: str, *, model: str | None = None, seed: int | None = None,
                   **params: Any) -> dict:
    sig: dict[str, Any] = {"method": method, "model": model, "seed": seed}
    sig.update({k: v for k, v in params.items()})
    sig["version"] = __version__
    sig["created"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    sig["signature"] = signature_string(sig)
    return sig


def signature_string(sig: dict) -> str:
    skip = {"method", "version", "created", "signature"}
    parts = [str(sig.get("method"))]
    for key, value in sig.items():
        if key in skip or value is None or isinstance(value, (list, dict)):
            continue
        parts.append(f"{key}:{value}")
    parts.append(f"v:{sig.get('version', __version__)}")
    return "|".join(parts)
