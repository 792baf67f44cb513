"""Every default that shapes a result, in one fingerprint.

A signature names the version; the version must change whenever a default
does, or two results with the same signature could come from different
settings. :func:`defaults_fingerprint` hashes the declared parameters of every
registered selector and the embedding configuration's defaults; the test suite
holds the fingerprint of each version, so changing a default without a new
version fails a test.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json


def current_defaults() -> dict:
    from .embed import EMBEDDERS, EmbedConfig
    from .select import SELECTORS, selector_class
    out = {"embed": {f.name: f.default for f in dataclasses.fields(EmbedConfig)},
           "embedders": {k: v[1:] for k, v in EMBEDDERS.items()}}
    for name in sorted(SELECTORS):
        out[name] = {p.name: p.default for p in selector_class(name).params}
    return out


def defaults_fingerprint() -> str:
    return hashlib.sha256(json.dumps(current_defaults(), sort_keys=True, default=repr).encode()).hexdigest()[:16]
