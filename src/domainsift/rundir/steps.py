"""Steps: a run as a list of steps, each kept or made again by its identity.

A :class:`Step` has a name, an *identity* (a hash of everything that shapes its result: the inputs' texts or
fingerprints, the settings, the identities of the steps and models it builds on; never a path) and a done
marker (a JSON file written last, holding the identity and the SHA-256 of every file the step wrote).
A step is kept when its marker holds the same identity and every file it lists still has its checksum;
otherwise it is made again. :func:`identity` builds an identity; :func:`model_identity` is a model folder's
own (its sealed weights and its vocabulary: the same path with other weights is another model).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from .layout import NMT_MODEL, NMT_VOCAB

log = logging.getLogger(__name__)


def identity(*parts, texts=()) -> str:
    """A hash of ``parts`` (JSON values) and of each list of ``texts`` (length-prefixed, so no two different
    lists feed the same bytes)."""
    from .._internal.checksums import hash_texts
    h = hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode("utf-8"))
    for group in texts:
        h.update(b"\x00group")
        hash_texts(h, group)
    return h.hexdigest()[:20]


def model_identity(folder: str | os.PathLike) -> str:
    """What a model folder holds, as a hash of its sealed weights' checksums and its vocabulary's bytes,
    checked first (a damaged folder is one line naming the file)."""
    from .._internal.checksums import SUMS, file_sha256, verify
    folder = Path(folder)
    verify(folder / NMT_MODEL)
    return identity((folder / NMT_MODEL / SUMS).read_text(encoding="utf-8"), file_sha256(folder / NMT_VOCAB))


@dataclass(frozen=True)
class Step:
    """One step of a run: its ``marker`` (a JSON file, written last) and its ``identity``."""

    marker: Path
    identity: str

    def kept(self) -> dict | None:
        """The marker's record when the step was made with this identity and every file it wrote is as it was
        written; None otherwise (a damaged file is warned about: the step is made again)."""
        from .._internal.checksums import file_sha256
        try:
            doc = json.loads(Path(self.marker).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(doc, dict) or doc.get("identity") != self.identity:
            return None
        for rel, digest in (doc.get("files") or {}).items():
            p = Path(self.marker).parent / rel
            if not p.is_file() or file_sha256(p) != digest:
                log.warning("%s: %s since the step was made; making it again", p,
                            "missing" if not p.is_file() else "changed")
                return None
        return doc

    def start(self) -> None:
        """Forget the step (its marker first): what it wrote before is no longer its result."""
        Path(self.marker).unlink(missing_ok=True)

    def done(self, files=(), **record) -> dict:
        """Mark the step made: ``files`` (paths beside the marker) with their checksums, and ``record``."""
        from .._internal.atomic import save_json
        from .._internal.checksums import file_sha256
        folder = Path(self.marker).parent
        doc = {**record, "identity": self.identity,
               "files": {Path(f).relative_to(folder).as_posix() if Path(f).is_absolute() else str(f):
                         file_sha256(folder / f) for f in files}}
        save_json(self.marker, doc)
        return doc
