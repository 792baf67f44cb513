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


def test_one_recommendation_in_the_readme_the_help_and_the_demo(capsys):
    """Issue 50, item 5: the README, `select --help` and the demo's closing lines recommend the same method
    for the same situation (all three print domainsift.advice), and the README's table ranks that method
    first by precision."""
    from domainsift.advice import advice_text, recommend
    from domainsift.cli import build_parser
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert advice_text() in readme
    help_text = next(a for a in build_parser()._actions if a.dest == "command").choices["select"].format_help()
    assert all(" ".join(line.split()) in " ".join(help_text.split()) for line in advice_text().splitlines())
    demo = (ROOT / "src" / "domainsift" / "jobs" / "demo.py").read_text(encoding="utf-8")
    assert "advice_text()" in demo and "recommend().command()" in demo
    rows = re.findall(r"^\| `([a-z-]+)` \|.*?\| (0\.\d{4})[^|]*\| [^|]*\|$", readme, flags=re.M)
    best = max(rows, key=lambda r: float(r[1]))[0]
    assert best == recommend().method == "finetune"
