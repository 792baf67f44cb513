"""``domainsift report``: one self-contained HTML page over run directories (:mod:`domainsift.report`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from .._internal.errors import DomainsiftError
from .._internal.safety import refuse_overwriting_inputs


def run_report(run_dirs: Sequence[str | os.PathLike], out: str | os.PathLike, title: str = "domainsift report") -> dict:
    """Write the report to ``out`` (an ``*.html`` file that is none of the runs' own files)."""
    from ..report.html import build_report
    run_dirs = [t for d in run_dirs for t in _runs_of(Path(d))]
    out = str(out)
    if not out.endswith((".html", ".htm")):
        raise DomainsiftError(f"--out {out}: the report is one HTML file; name it *.html")
    refuse_overwriting_inputs([p for d in run_dirs if Path(d).is_dir() for p in Path(d).iterdir()],
                              Path(out).parent or ".", (Path(out).name,))
    return build_report(run_dirs, out, title=title)


def _runs_of(d: Path) -> list:
    """The runs a folder holds: a mixture's (``select --target ...``) are its targets' folders, each a
    selection of its own; any other folder is itself."""
    from .. import rundir
    if not (d / rundir.MIX).is_file():
        return [d]
    return sorted(p for p in (d / rundir.MIX_TARGETS).iterdir() if p.is_dir())
