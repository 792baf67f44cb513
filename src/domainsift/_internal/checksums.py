"""Checksums of saved folders: every folder written through :func:`~domainsift._internal.atomic.atomic_dir`
(a saved fit, a saved student, distilled static vectors, a fine-tuning checkpoint) gets a ``SHA256SUMS``
file, written last, in the format of coreutils' ``sha256sum`` (``sha256sum -c SHA256SUMS`` checks it by
hand). :func:`verify` checks a folder against it before anything in the folder is used.

What a mismatch means is the caller's: a cache or a killed run's state is rebuilt (with a warning), a
folder the user names (``--student-from``) is refused in one line.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .errors import DomainsiftError

SUMS = "SHA256SUMS"
_BLOCK = 1 << 20


class DamagedError(DomainsiftError):
    """A saved file does not match the checksum written with it (or the checksums are missing)."""


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK), b""):
            h.update(block)
    return h.hexdigest()


def _files(folder: Path) -> list[str]:
    """Every regular file under ``folder`` but its own ``SHA256SUMS``, as sorted POSIX relative paths."""
    out = []
    for p in folder.rglob("*"):
        if p.is_file() and not p.is_symlink():
            rel = p.relative_to(folder).as_posix()
            if rel != SUMS:
                out.append(rel)
    return sorted(out)


def seal(folder: str | os.PathLike) -> Path:
    """Write ``folder/SHA256SUMS`` over every file in it (nested folders included); call it last."""
    folder = Path(folder)
    lines = "".join(f"{file_sha256(folder / rel)}  {rel}\n" for rel in _files(folder))
    target = folder / SUMS
    tmp = folder / f".{SUMS}.tmp"
    tmp.write_text(lines, encoding="utf-8")
    os.replace(tmp, target)
    return target


def is_sealed(folder: str | os.PathLike) -> bool:
    return (Path(folder) / SUMS).is_file()


def verify(folder: str | os.PathLike) -> None:
    """Check every file that ``folder/SHA256SUMS`` lists; :class:`DamagedError` names the first that is
    missing or differs (or says that the folder has no checksums)."""
    folder = Path(folder)
    sums = folder / SUMS
    try:
        text = sums.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DamagedError(f"{folder}: no {SUMS} (written by an interrupted or older run)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DamagedError(f"{sums}: unreadable ({exc})") from None
    listed = 0
    for n, line in enumerate(text.splitlines(), 1):
        digest, sep, rel = line.partition("  ")
        if not sep or len(digest) != 64 or not rel or rel.startswith("/") or ".." in Path(rel).parts:
            raise DamagedError(f"{sums}, line {n}: not a checksum line")
        path = folder / rel
        if not path.is_file():
            raise DamagedError(f"{path}: missing (listed in {SUMS})")
        if file_sha256(path) != digest:
            raise DamagedError(f"{path}: damaged (its SHA-256 differs from the one written with it)")
        listed += 1
    if not listed and _files(folder):
        raise DamagedError(f"{sums}: lists no file")


def hash_texts(h, texts) -> None:
    """Feed ``texts`` to the hash ``h``, each length-prefixed, so that no two different lists of texts feed
    the same bytes (a text may hold NUL)."""
    for t in texts:
        b = t.encode("utf-8")
        h.update(len(b).to_bytes(8, "little") + b)
