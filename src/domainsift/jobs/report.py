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
    from .. import rundir
    # a mixture (select --target ...) is its targets' runs, each a selection of its own
    run_dirs = [t for d in run_dirs for t in (sorted(p for p in (Path(d) / rundir.MIX_TARGETS).iterdir() if p.is_dir())
                                             if (Path(d) / rundir.MIX).is_file() else [d])]
    out = str(out)
    if not out.endswith((".html", ".htm")):
        raise DomainsiftError(f"--out {out}: the report is one HTML file; name it *.html")
    refuse_overwriting_inputs([p for d in run_dirs if Path(d).is_dir() for p in Path(d).iterdir()],
                              Path(out).parent or ".", (Path(out).name,))
    return build_report(run_dirs, out, title=title)
