"""Pool files by URL (``s3://``, ``gs://``, ``hf://``, ``http(s)://``, ``file://``), through fsspec.

A URL is read as a stream like a local file (and, for a plain text file, from any byte, so Ray workers
read their own parts of one object). ``file://`` is a local path. Credentials and endpoints come from
fsspec's own configuration (the backend's usual environment variables, e.g. ``AWS_ACCESS_KEY_ID``,
``AWS_ENDPOINT_URL`` for S3, or ``FSSPEC_S3_*``). Needs the ``fsspec`` extra (and the backend's
package: ``s3fs``, ``gcsfs``, ``huggingface_hub``). Parquet and Arrow pools are read from local paths.
"""

from __future__ import annotations

import os

from .._internal.errors import InputError, missing_extra


def is_url(path) -> bool:
    """Whether ``path`` names a file through fsspec (a scheme other than ``file``)."""
    p = str(path)
    return "://" in p and not p.startswith("file://")


def local(path) -> str:
    """``file://`` URLs as local paths; every other path as given."""
    p = str(path)
    return p[len("file://"):] if p.startswith("file://") else p


def _fs(path):
    try:
        import fsspec
    except ImportError:
        raise missing_extra("fsspec", "fsspec") from None
    try:
        return fsspec.core.url_to_fs(str(path))
    except (ImportError, ValueError) as exc:  # the backend's package missing, an unknown scheme
        raise InputError(f"{path}: cannot open this URL ({exc})") from None


def open_url(path):
    """The bytes behind a URL, as a seekable binary file."""
    fs, p = _fs(path)
    try:
        return fs.open(p, "rb")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None


def info(path) -> dict | None:
    """A URL's size and version (ETag or modification time), or None where there is no such file."""
    fs, p = _fs(path)
    try:
        d = fs.info(p)
    except FileNotFoundError:
        return None
    if d.get("type") == "directory":
        return {"size": None, "version": None, "directory": True}
    version = d.get("ETag") or d.get("etag") or d.get("LastModified") or d.get("mtime") or d.get("last_modified")
    return {"size": int(d.get("size") or 0), "version": str(version) if version is not None else None}


def expand(p: str) -> list[str]:
    """A URL as its files: a pattern by the file system's glob, a folder by its files, sorted."""
    fs, path = _fs(p)
    proto = p.split("://", 1)[0]
    if any(ch in path for ch in "*?["):
        hits = sorted(fs.glob(path))
        if not hits:
            raise InputError(f"{p}: no file matches this pattern")
        return [f"{proto}://{h}" for h in hits]
    got = info(p)
    if got is None:
        raise InputError(f"{p}: no such file")
    if got.get("directory"):
        files = sorted(f for f in fs.find(path) if not os.path.basename(f).startswith("."))
        if not files:
            raise InputError(f"{p}: no files in this folder")
        return [f"{proto}://{f}" for f in files]
    return [p]


def stat(path) -> tuple:
    """``(size, version)`` of a local file (modification time in ns) or a URL (its ETag or time): what
    tells, without reading it, that a file changed since it was read."""
    if is_url(path):
        got = info(path)
        if got is None:
            raise FileNotFoundError(path)
        return got["size"], got["version"]
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


def size(path) -> int:
    return stat(path)[0]


def is_file(path) -> bool:
    if is_url(path):
        got = info(path)
        return got is not None and not got.get("directory")
    return os.path.isfile(path)
