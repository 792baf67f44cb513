"""Every benchmark label builds its selector: a label whose parameters the selector does not take fails
here, in CI, instead of in a benchmark run hours later. The encoder is swapped for a tiny model."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "live"


@pytest.fixture(scope="module")
def bench_modules():
    """The live benchmark modules, imported as their scripts do. They keep their own registry of labels
    (product methods with pinned parameters) and leave the product's registry as it ships."""
    from domainsift.select import SELECTORS
    registry = dict(SELECTORS)
    sys.path.insert(0, str(BENCH))
    try:
        yield {name: importlib.import_module(name) for name in ("selection", "negatives_pools", "crosslingual")}
    finally:
        sys.path.remove(str(BENCH))
    assert SELECTORS == registry, "a benchmark changed the product's registry"


def _tiny(params: dict, model: str) -> dict:
    out = dict(params)
    for key in ("model", "embedder"):
        if out.get(key, "minilm") == "minilm" and key in out:
            out[key] = model
    return out


def labels(mods) -> list[tuple[str, str, dict]]:
    sel, neg, xl = (mods[k] for k in ("selection", "negatives_pools", "crosslingual"))
    out = [(f"selection:{label}", method, {k: v for k, v in params.items() if k != sel.CASCADE})
           for label, (method, params) in sel.METHODS.items() if method]  # --cascade is the run's (RunSpec.cascade), not the method's
    out += [(f"negatives_pools:{c}", "finetune", params) for c, params in neg.CHOICES.items()]
    for label, params in xl.METHODS.items():
        if params is not None:
            out.append((f"crosslingual:{label}", "crosslingual", params))
    return out


def test_every_benchmark_label_builds_its_selector(bench_modules, tiny_models):
    from domainsift.select import get_selector
    built = []
    for label, method, params in labels(bench_modules):
        kw = _tiny(params, tiny_models["bert"])
        if method in ("finetune", "crosslingual") and "model" not in kw:
            kw["model"] = tiny_models["bert"]
        try:
            get_selector(method, **kw)
        except Exception as exc:  # noqa: BLE001 (the label's name is the message)
            pytest.fail(f"{label}: {type(exc).__name__}: {exc}")
        built.append(label)
    assert len(built) > 30


def test_no_two_labels_run_the_same_parameters(bench_modules):
    import json
    sel = bench_modules["selection"]
    seen = {}
    for label, (method, params) in sel.METHODS.items():
        if method is None:
            continue
        key = json.dumps([method, params], sort_keys=True, default=str)
        assert key not in seen, f"{label} runs what {seen.get(key)} runs"
        seen[key] = label


def test_selection_combos_name_existing_labels(bench_modules):
    sel = bench_modules["selection"]
    for combo, members in sel.COMBOS.items():
        assert all(m.partition("@+")[0] in sel.METHODS for m in members), combo
    # 'NAME@+K': NAME's run at the combination's seed + K
    assert sel.member_label("finetune-default@+1", 0) == "finetune-default-seed-1"
    assert sel.member_label("finetune-default@+1", 1) == "finetune-default-seed-2"
    assert sel.member_label("finetune-default", 0) == "finetune-default"
    assert sel.member_label("cosine", 2) == "cosine"


def test_recipes_name_their_runs(bench_modules):
    """bench/live/recipes.py: each recipe is a label bench/live/selection.py pins, and the runs it stands on are the
    same seed's combination's members."""
    sys.path.insert(0, str(BENCH))
    try:
        rec = importlib.import_module("recipes")
    finally:
        sys.path.remove(str(BENCH))
    sel = bench_modules["selection"]
    assert all(r in sel.METHODS or r in sel.COMBOS for r in rec.RECIPES)
    assert rec.members("finetune-default+next-seed", 0) == ["finetune-default", "finetune-default-seed-1"]
    assert rec.members(rec.BASE, 0) == []
    assert rec._split("finetune-default-seed-2") == ("finetune-default", 2)
    assert rec._split("finetune-default") == ("finetune-default", 0)


def test_a_run_without_scores_is_no_member(bench_modules, tmp_path, monkeypatch, capsys):
    """A row restored from the results file has bench.json and no scores: a combination skips it by name,
    pointing at --redo."""
    sel = bench_modules["selection"]
    monkeypatch.setattr(sel, "WORK", tmp_path)
    for m in ("finetune-default", "finetune-default-seed-1"):
        (tmp_path / "KDE4" / m).mkdir(parents=True)
        (tmp_path / "KDE4" / m / "bench.json").write_text("{}")
    sel.combo_run("KDE4", "finetune-default+next-seed", "finetune-default+next-seed", 0, [])
    out = capsys.readouterr().out
    assert "skipped: no scores of finetune-default, finetune-default-seed-1" in out and "--redo" in out
    assert not (tmp_path / "KDE4" / "finetune-default+next-seed").exists()
