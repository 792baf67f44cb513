"""The run directory has one owner: no module but ``domainsift.rundir`` spells one of its file names
(so none reads or writes those files its own way), and the layers import downward only."""

import ast
import re
from pathlib import Path

import domainsift.rundir as rundir

SRC = Path(rundir.__file__).parent
NAMES = [rundir.SCORES, rundir.IDS, rundir.SCORES_TSV, rundir.POOL, rundir.SIGNATURE, rundir.RUN,
         rundir.SELECTION, rundir.SELECTED_IDS, rundir.EVAL, rundir.ALIGNMENT, rundir.ALIGNMENT_PNG,
         rundir.EMBEDDINGS, rundir.EMBED_IDS, rundir.CLUSTERING, rundir.CLUSTERS, rundir.OUTLIERS, rundir.MAP,
         rundir.DOWNSTREAM, rundir.CROSSDOMAIN, rundir.CROSSDOMAIN_PNG, rundir.SAMPLING, rundir.REPORT]
# a name as a whole word of a string: at its start, or after a space, a quote, a bracket or a slash
SPELLED = re.compile(r"(?:^|[\s/'\"(`])(" + "|".join(re.escape(n) for n in NAMES) + r")")


def _docstrings(tree) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _spellings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            m = SPELLED.search(node.value)
            if m:
                hits.append(f"{path.relative_to(SRC)}:{node.lineno}: {m.group(1)}")
    return hits


def test_the_scan_finds_a_spelled_name(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""Docstrings may name scores.npy."""\nimport json\nx = open(d + "/selection.json")\n'
                   'y = f"{d}/pool.json"\nz = "shard-1.ids.npy"\n')
    hits = sorted(h.split(": ")[-1] for h in _spellings_at(bad))
    assert hits == ["pool.json", "selection.json"]  # not the docstring, not a shard's ".ids.npy"


def _spellings_at(path: Path) -> list[str]:
    global SRC
    old, SRC = SRC, path.parent
    try:
        return _spellings(path)
    finally:
        SRC = old


def test_no_module_but_rundir_spells_a_run_directory_file():
    hits = [h for p in sorted(SRC.rglob("*.py")) if p.name != "rundir.py" for h in _spellings(p)]
    assert hits == [], "run-directory files named outside domainsift.rundir:\n" + "\n".join(hits)


def _imports(path: Path) -> set[str]:
    """The domainsift modules a file imports (absolute names), top-level and inside functions."""
    pkg = ["domainsift"] + list(path.relative_to(SRC).with_suffix("").parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = pkg[:len(pkg) - (node.level - 1)] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith("domainsift")}


BELOW_ENGINE = ["select", "embed", "report", "sampling", "rundir.py", "source.py", "corpus.py", "columnar.py",
                "lm.py", "train.py", "cluster.py", "signature.py", "_atomic.py", "errors.py", "safety.py"]


def test_nothing_below_the_engine_imports_it():
    below = [p for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] in BELOW_ENGINE]
    assert len(below) > 20
    offenders = [f"{p.relative_to(SRC)} imports {m}" for p in below for m in _imports(p)
                 if m == "domainsift.engine" or m.startswith("domainsift.engine.")]
    assert offenders == []
