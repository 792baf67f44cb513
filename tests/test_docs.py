"""The docs point at what exists: every ``bench/results/...``, ``bench/live/...`` and ``bench/archive/...``
path named in the README and docs/ is a file of the repository."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_no_dangling_bench_references_in_the_docs():
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for m in re.finditer(r"bench/(?:results|live|archive)/[\w.\-/]+", doc.read_text(encoding="utf-8")):
            path = m.group(0).rstrip(".,)`")
            if not (ROOT / path).exists():
                missing.append(f"{doc.relative_to(ROOT)}: {path}")
    assert missing == []


def test_bench_is_split_into_live_and_archive():
    top = sorted(p.name for p in (ROOT / "bench").glob("*.py"))
    assert top == [], f"a benchmark outside bench/live and bench/archive: {top}"
    assert (ROOT / "bench" / "live" / "selection.py").exists() and any((ROOT / "bench" / "archive").glob("*.py"))
