"""Every benchmark label builds its selector: a label whose parameters the selector does not take fails
here, in CI, instead of in a benchmark run hours later. The encoder is swapped for a tiny model."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture(scope="module")
def bench_modules():
    """The benchmark modules, imported as their scripts do; the methods they register (the experimental
    finetune) are unregistered after, so the product's registry is as it ships for every other test."""
    from domainsift.select import SELECTORS
    registry = dict(SELECTORS)
    sys.path.insert(0, str(BENCH))
    try:
        yield {name: importlib.import_module(name) for name in ("selection", "negatives_pools", "crosslingual",
                                                                  "formats")}
    finally:
        sys.path.remove(str(BENCH))
        SELECTORS.clear()
        SELECTORS.update(registry)


def _tiny(params: dict, model: str) -> dict:
    out = dict(params)
    for key in ("model", "embedder"):
        if out.get(key, "minilm") == "minilm" and key in out:
            out[key] = model
    return out


def labels(mods) -> list[tuple[str, str, dict]]:
    sel, neg, xl, fmt = (mods[k] for k in ("selection", "negatives_pools", "crosslingual", "formats"))
    out = [(f"selection:{label}", method, {k: v for k, v in params.items() if k != sel.CASCADE})
           for label, (method, params) in sel.METHODS.items() if method]  # --cascade is run_score's, not the method's
    out += [(f"negatives_pools:{c}", "finetune", params) for c, params in neg.CHOICES.items()]
    out += [(f"formats:{m}", m, params) for m, params in fmt.METHODS.items()]
    for label, params in xl.METHODS.items():
        if params is not None and "variant" not in params:
            out.append((f"crosslingual:{label}", "crosslingual", params))
    return out


def test_every_benchmark_label_builds_its_selector(bench_modules, tiny_models):
    from domainsift.select import get_selector
    built = []
    for label, method, params in labels(bench_modules):
        kw = _tiny(params, tiny_models["bert"])
        if method in ("finetune", "finetune-experimental", "finetune-dropout", "crosslingual") and "model" not in kw:
            kw["model"] = tiny_models["bert"]
        try:
            get_selector(method, **kw)
        except Exception as exc:  # noqa: BLE001 (the label's name is the message)
            pytest.fail(f"{label}: {type(exc).__name__}: {exc}")
        built.append(label)
    assert len(built) > 30


def test_selection_combos_name_existing_labels(bench_modules):
    sel = bench_modules["selection"]
    for combo, members in sel.COMBOS.items():
        assert all(m.partition("@+")[0] in sel.METHODS for m in members), combo
    # 'NAME@+K': NAME's run at the combination's seed + K
    assert sel.member_label("finetune-default@+1", 0) == "finetune-default-seed-1"
    assert sel.member_label("finetune-default@+1", 1) == "finetune-default-seed-2"
    assert sel.member_label("finetune-default", 0) == "finetune-default"
    assert sel.member_label("cosine", 2) == "cosine"


def test_crosslingual_variant_labels_build(bench_modules, tiny_models):
    xl = bench_modules["crosslingual"]
    variants = [label for label, params in xl.METHODS.items() if params and "variant" in params]
    assert variants
    for label in variants:
        xl.variant_selector(label, model=tiny_models["bert"], progress=False, seed=0)


def test_recipes_name_their_runs(bench_modules):
    """bench/recipes.py: each recipe is a label bench/selection.py pins, and the runs it stands on are the
    same seed's default (self-training's first round) or its combination's members."""
    sys.path.insert(0, str(BENCH))
    try:
        rec = importlib.import_module("recipes")
    finally:
        sys.path.remove(str(BENCH))
    sel = bench_modules["selection"]
    assert all(r in sel.METHODS or r in sel.COMBOS for r in rec.RECIPES)
    assert rec.members("finetune-self-train", 1) == ["finetune-default-seed-1"]
    assert rec.members("finetune-default+next-seed", 0) == ["finetune-default", "finetune-default-seed-1"]
    assert rec.members(rec.BASE, 0) == []
    assert rec._split("finetune-default-seed-2") == ("finetune-default", 2)
    assert rec._split("finetune-default") == ("finetune-default", 0)


def test_self_training_stands_on_a_finished_finetune_run(bench_modules, tiny_models, tmp_path):
    """``first_run``: a finished finetune run's scores are the first round (pseudo-positives from its top);
    a run of other parameters or another pool is refused."""
    from conftest import make_sentences
    from domainsift.io.corpus import read_corpus
    from domainsift import run_score
    from domainsift._internal.errors import DomainsiftError
    from domainsift.select import get_selector

    (tmp_path / "in.txt").write_text("\n".join(make_sentences("med", 16, seed=1)) + "\n")
    lines = make_sentences("med", 8, seed=2) + make_sentences("law", 16, seed=3)
    (tmp_path / "pool.txt").write_text("\n".join(lines) + "\n")
    ind, pool = read_corpus([str(tmp_path / "in.txt")]), read_corpus([str(tmp_path / "pool.txt")])
    ft = dict(model=tiny_models["bert"], epochs=1, batch_size=8, holdout=0.0, negatives="random",
              backend="torch", progress=False)
    run_score("finetune", ind, pool, tmp_path / "first", ft, seed=0)
    st = get_selector("finetune-self-train", **ft, seed=0, expand=0.25, first_run=str(tmp_path / "first"))
    st.fit(ind, pool)
    assert st.n_pseudo_positives_ == 4 and st.n_positives_ == 16 + 4
    assert st.score(pool).shape == (len(lines),)
    # st_confidence: only lines the first round gives at least that probability lend themselves
    from domainsift.rundir import load_scores
    first = np.asarray(load_scores(tmp_path / "first").scores)
    c = float(np.sort(first)[-3])  # three lines at or above it
    conf = get_selector("finetune-self-train", **ft, seed=0, expand=0.25, st_confidence=c,
                        first_run=str(tmp_path / "first")).fit(ind, pool)
    assert conf.n_pseudo_positives_ == min(4, int((first >= c).sum())) == 3
    with pytest.raises(DomainsiftError, match="first.*differ: \\['lr'\\]"):
        get_selector("finetune-self-train", **{**ft, "lr": 1e-4}, seed=0,
                     first_run=str(tmp_path / "first")).fit(ind, pool)
    with pytest.raises(DomainsiftError, match="scores for"):
        get_selector("finetune-self-train", **ft, seed=0, first_run=str(tmp_path / "first")).fit(
            ind, read_corpus([str(tmp_path / "in.txt")]))


def test_a_run_without_scores_is_no_member_and_no_first_round(bench_modules, tmp_path, monkeypatch, capsys):
    """A row restored from the results file has bench.json and no scores: a combination skips it by name,
    and self-training refuses to start from it, both pointing at --redo."""
    sel = bench_modules["selection"]
    monkeypatch.setattr(sel, "WORK", tmp_path)
    for m in ("finetune-default", "finetune-default-seed-1"):
        (tmp_path / "KDE4" / m).mkdir(parents=True)
        (tmp_path / "KDE4" / m / "bench.json").write_text("{}")
    sel.combo_run("KDE4", "finetune-default+next-seed", "finetune-default+next-seed", 0, [])
    out = capsys.readouterr().out
    assert "skipped: no scores of finetune-default, finetune-default-seed-1" in out and "--redo" in out
    assert not (tmp_path / "KDE4" / "finetune-default+next-seed").exists()
    with pytest.raises(SystemExit, match="--redo finetune-default"):
        sel.first_round("KDE4", 1)
    np.save(tmp_path / "KDE4" / "finetune-default-seed-1" / "scores.npy", np.zeros(3))
    assert sel.first_round("KDE4", 1) == tmp_path / "KDE4" / "finetune-default-seed-1"
