"""Every benchmark label builds its selector: a label whose parameters the selector does not take fails
here, in CI, instead of in a benchmark run hours later. The encoder is swapped for a tiny model."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

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
