"""Atomic file writes: write to a temporary name beside the target, then rename."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
from pathlib import Path

import numpy as np


def _umask() -> int:
    """The process's umask, read without changing it (Linux), else by the set-and-restore idiom."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _disk_full(exc: BaseException, where: str | os.PathLike | None = None) -> bool:
    """An error that says the disk (or the quota) is full: ENOSPC/EDQUOT, or NumPy's short write
    ("N requested and M written"), which carries no errno; or any error of a writer that reports it in its
    own words (torch's "file write failed", safetensors') while the disk under ``where`` has no room left."""
    import errno
    if isinstance(exc, OSError) and (exc.errno in (errno.ENOSPC, errno.EDQUOT)
                                     or ("requested and" in str(exc) and "written" in str(exc))):
        return True
    if where is None or not isinstance(exc, (OSError, RuntimeError, ValueError)) or isinstance(exc, KeyboardInterrupt):
        return False
    try:
        st = os.statvfs(where)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < (1 << 20)


def disk_full_error(path, exc: BaseException):
    """The one-line error of a full disk, naming the file being written."""
    from .errors import DiskFullError
    return DiskFullError(f"{path}: No space left on device (the disk is full) while writing it; "
                           "free some space and run the same command again")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success.

    On an exception the temporary file is removed and ``path`` is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # a temporary file is 0600; the result gets normal permissions
        os.replace(tmp, path)
    except BaseException as exc:
        full = _disk_full(exc, path.parent)  # before the partial file goes and frees its room
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if full:
            raise disk_full_error(path, exc) from None
        raise


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike):
    """Yield a temporary folder next to ``path``; on success it is sealed (``SHA256SUMS`` over its files,
    :mod:`~domainsift._internal.checksums`) and replaces ``path`` (a folder); on an exception it is removed
    and ``path`` is untouched."""
    import shutil
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    os.chmod(tmp, 0o777 & ~_umask())  # a temporary folder is 0700; the result gets normal permissions
    try:
        yield tmp
        from .checksums import seal
        seal(tmp)  # last: a folder whose SHA256SUMS checks out was written whole
        shutil.rmtree(path, ignore_errors=True)
        os.replace(tmp, path)
    except BaseException as exc:
        full = _disk_full(exc, path.parent)  # before the partial folder goes and frees its room
        shutil.rmtree(tmp, ignore_errors=True)
        if full:
            raise disk_full_error(path, exc) from None
        raise


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str = "utf-8"):
    """Open a text file for writing atomically; ``.gz`` targets are gzip-compressed."""
    with atomic_path(path) as tmp:
        if str(path).endswith(".gz"):
            fh = gzip.open(tmp, mode + "t", encoding=encoding)
        else:
            fh = open(tmp, mode, encoding=encoding)
        with fh:
            yield fh


def save_npy(path: str | os.PathLike, array: np.ndarray) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, array)


def save_json(path: str | os.PathLike, obj) -> None:
    with atomic_open(path) as fh:
        json.dump(obj, fh, indent=2, ensure_ascii=False, default=_jsonable)
        fh.write("\n")


def _jsonable(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, Path):
        return str(x)
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")
