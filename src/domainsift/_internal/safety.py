"""Guards that keep a user's data from being lost or mixed up.

- :func:`check_name`: a name that becomes part of a file name (a domain, a language) has
  no path separators, no ``..``, no control characters, and is not absolute, so no write
  lands outside ``--out``;
- :func:`refuse_overwriting_inputs`: no output of a run replaces one of its input files
  (same path or same inode), checked before any work;
- :func:`check_distinct_inputs`: one file given twice is an error.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

from .errors import DomainsiftError, InputError

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_name(name: str, what: str, where: str) -> str:
    """``name`` if it is safe as part of a file name; else an error naming ``where`` (file:line)."""
    if (not name or name in (".", "..") or "/" in name or "\\" in name or ".." in name
            or os.path.isabs(name) or _CONTROL.search(name)):
        raise InputError(f"{where}: {what} {name!r} cannot be part of a file name "
                         "(no path separators, '..', control characters or absolute paths)")
    return name


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_overwriting_inputs(inputs: Iterable[str | os.PathLike], out_dir: str | os.PathLike,
                              outputs: Iterable[str] = ()) -> None:
    """Refuse a run whose outputs in ``out_dir`` would replace one of ``inputs``.

    ``outputs`` are names or glob patterns the run writes or replaces in ``out_dir``; an
    input that is one of them (by path or inode) is an error, raised before any work."""
    out = Path(out_dir)
    patterns = list(outputs)
    for f in inputs:
        f = Path(f)
        if not f.exists():
            continue
        real = Path(os.path.realpath(f))
        for pattern in patterns:
            hit = (real.parent == Path(os.path.realpath(out)) and real.match(pattern)) or any(
                _same_file(f, o) for o in out.glob(pattern) if o.is_file())
            if hit:
                raise DomainsiftError(f"{f}: is an input, and --out {out_dir} would overwrite it; "
                                      "choose another --out")


def check_distinct_inputs(paths: Iterable[str | os.PathLike], option: str) -> None:
    seen = {}
    for p in paths:
        real = os.path.realpath(p)
        if real in seen:
            raise DomainsiftError(f"{p}: given twice in {option} (also as {seen[real]})")
        seen[real] = p
