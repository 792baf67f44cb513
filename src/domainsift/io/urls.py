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


TIMEOUT_ENV = "DOMAINSIFT_URL_TIMEOUT"
TIMEOUT = 60.0  # seconds a server may take to accept a connection, and to send the next bytes of an answer


def timeout() -> float:
    """The connect and read timeout for URLs, in seconds: ``$DOMAINSIFT_URL_TIMEOUT`` or :data:`TIMEOUT`."""
    raw = os.environ.get(TIMEOUT_ENV)
    if raw is None or not raw.strip():
        return TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise InputError(f"${TIMEOUT_ENV} must be a positive number of seconds, got {raw!r}")
    return value


def _options(protocol: str) -> dict:
    """Connect and read timeouts in the backend's own words (a server that accepts and never answers
    fails the run after :func:`timeout` seconds instead of hanging it)."""
    t = timeout()
    if protocol in ("http", "https"):
        import aiohttp
        return {"client_kwargs": {"timeout": aiohttp.ClientTimeout(total=None, sock_connect=t, sock_read=t)}}
    if protocol in ("s3", "s3a"):
        return {"config_kwargs": {"connect_timeout": t, "read_timeout": t, "retries": {"max_attempts": 2}}}
    return {}


def _fs(path):
    try:
        import fsspec
    except ImportError:
        raise missing_extra("fsspec", "fsspec") from None
    protocol = str(path).split("://", 1)[0].lower()
    try:
        return fsspec.core.url_to_fs(str(path), **_options(protocol))
    except (ImportError, ValueError) as exc:  # the backend's package missing, an unknown scheme
        raise InputError(f"{path}: cannot open this URL ({exc})") from None


def _why(exc: BaseException) -> str | None:
    """What went wrong behind a URL, in words, for a failure that is not a missing file: a server's HTTP
    error, a refused or timed-out connection, missing credentials. None: the file is not there."""
    import asyncio
    chain, e = [], exc
    while e is not None and len(chain) < 6:
        chain.append(e)
        e = e.__cause__ or e.__context__
    for e in chain:
        status = getattr(e, "status", None) or getattr(e, "code", None)
        name = type(e).__name__
        if isinstance(status, int) and status >= 400 and status != 404:
            return f"the server answered HTTP {status}"
        if isinstance(e, (asyncio.TimeoutError, TimeoutError)) or "Timeout" in name:
            return (f"no answer within {timeout():g} s (set ${TIMEOUT_ENV} to wait longer)")
        if "Connector" in name or isinstance(e, ConnectionError) or "EndpointConnection" in name:
            return f"cannot connect ({str(e).splitlines()[0] if str(e) else name})"
        if "Credentials" in name or "NoCredentials" in name:
            return ("no credentials for this storage (set them as its library reads them, e.g. "
                    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for s3://)")
    return None


def _call(path, fn):
    """``fn()`` on a URL, every failure a one-line :class:`InputError` naming the URL and why."""
    try:
        return fn()
    except InputError:
        raise
    except FileNotFoundError as exc:
        why = _why(exc)
        raise InputError(f"{path}: {why or 'no such file'}") from None
    except Exception as exc:  # noqa: BLE001: a backend's own error (HTTP, botocore, aiohttp) is one line
        why = _why(exc) or f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
        raise InputError(f"{path}: cannot read this URL ({why})") from None


def open_url(path):
    """The bytes behind a URL, as a seekable binary file."""
    fs, p = _fs(path)
    return _call(path, lambda: fs.open(p, "rb"))


def info(path) -> dict | None:
    """A URL's size and version (ETag or modification time), or None where there is no such file."""
    fs, p = _fs(path)
    try:
        d = _call(path, lambda: fs.info(p))
    except InputError as exc:
        if str(exc).endswith(": no such file"):
            return None
        raise
    if d.get("type") == "directory":
        return {"size": None, "version": None, "directory": True}
    version = d.get("ETag") or d.get("etag") or d.get("LastModified") or d.get("mtime") or d.get("last_modified")
    return {"size": int(d.get("size") or 0), "version": str(version) if version is not None else None}


def expand(p: str) -> list[str]:
    """A URL as its files: a pattern by the file system's glob, a folder by its files, sorted."""
    fs, path = _fs(p)
    proto = p.split("://", 1)[0]
    if any(ch in path for ch in "*?["):
        hits = sorted(_call(p, lambda: fs.glob(path)))
        if not hits:
            raise InputError(f"{p}: no file matches this pattern")
        return [f"{proto}://{h}" for h in hits]
    got = info(p)
    if got is None:
        raise InputError(f"{p}: no such file")
    if got.get("directory"):
        files = sorted(f for f in _call(p, lambda: fs.find(path)) if not os.path.basename(f).startswith("."))
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
