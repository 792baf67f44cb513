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


def test_the_sampling_docs_examples_run(tmp_path, monkeypatch):
    """docs/sampling.md's Python blocks, executed in order in one namespace (issue 50, item 7): the plain
    loop updates the weights and writes a history whose entries name their domains; the Trainer runs."""
    import json
    text = (ROOT / "docs" / "sampling.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    for k, block in enumerate(blocks):
        exec(compile(block, f"docs/sampling.md block {k + 1}", "exec"), {"__name__": f"sampling_doc_{k}"})
    record = json.loads((tmp_path / "runs" / "sampling" / "sampling.json").read_text())
    assert len(record["history"]) == 4  # the initial weights and three updates
    assert all(set(h["by_domain"]) == {"a", "b", "c"} for h in record["history"])
    assert (tmp_path / "ckpt.pt").exists() and (tmp_path / "runs" / "hf" / "sampling.json").exists()
