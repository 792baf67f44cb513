"""The one way in: a frozen :class:`RunSpec` run by :func:`domainsift.run`, into a folder or in memory, with
the rule's checks in one place; selectors that show their parameters and check them when fitted."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

import domainsift
from conftest import make_sentences, write_lines
from domainsift import DomainsiftError, Rule, RunSpec, read_corpus, run


@pytest.fixture
def inputs(tmp_path):
    pool = [write_lines(tmp_path / f"{d}.txt", make_sentences(d, 30, i)) for i, d in enumerate(("med", "law", "it"))]
    return {"pool": read_corpus([str(p) for p in pool]),
            "med": read_corpus([str(write_lines(tmp_path / "in_med.txt", make_sentences("med", 12, 7)))]),
            "law": read_corpus([str(write_lines(tmp_path / "in_law.txt", make_sentences("law", 12, 8)))])}


def test_a_run_in_memory_gives_what_a_run_into_a_folder_gives(inputs, tmp_path):
    spec = RunSpec.single("cosine", inputs["med"], inputs["pool"], rule=Rule(top=10), params={"embedder": "tfidf"})
    held = run(spec)
    assert held.out is None and not any(tmp_path.glob("domainsift-run-*"))
    folder = run(spec.with_out(tmp_path / "run"))
    assert folder.out == tmp_path / "run" and (tmp_path / "run" / "scores.npy").is_file()
    assert held.scores().tobytes() == folder.scores().tobytes()
    assert held.selected_ids() == folder.selected_ids() and len(held.selected_ids()) == 10
    assert all(f.endswith("med.txt") for f, _ in held.selected_ids())  # the domains share no word
    assert sorted(text for text, _ in held.selected()) == sorted(text for text, _ in folder.selected())
    assert held.selection[""]["n_selected"] == 10 == folder.selection[""]["n_selected"]
    assert held.signature["signature"] == folder.signature["signature"]


def test_a_mixture_in_memory_gives_each_line_to_one_target(inputs):
    done = run(RunSpec("moore-lewis", {"med": inputs["med"], "law": inputs["law"]}, inputs["pool"],
                       rule=Rule(top=20), mix={"med": 0.5, "law": 0.5}))
    assert done.targets == ["med", "law"] and done.mix["targets"]["med"]["quota"] == 10
    med, law = set(done.selected_ids("med")), set(done.selected_ids("law"))
    assert len(med) == 10 and len(law) == 10 and not med & law
    assert all("med" in f for f, _ in med) and all("law" in f for f, _ in law)
    assert len(done.scores("law")) == len(inputs["pool"])
    with pytest.raises(DomainsiftError, match="several targets"):
        done.scores()


def test_a_score_run_has_scores_and_no_selection(inputs):
    done = run(RunSpec.single("random", inputs["med"], inputs["pool"]))
    assert done.selection == {} and len(done.scores()) == len(inputs["pool"])


def test_a_spec_is_frozen_all_the_way_down(inputs):
    spec = RunSpec.single("cosine", inputs["med"], inputs["pool"], params={"embedder": "tfidf"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.method = "random"
    with pytest.raises(TypeError):
        spec.params["embedder"] = "minilm"
    with pytest.raises(TypeError):
        spec.targets["x"] = inputs["law"]


@pytest.mark.parametrize("rule,mixture,says", [
    (Rule(), False, "give exactly one of --top"),
    (Rule(top=5, fraction=0.1), False, "give exactly one of --top"),
    (Rule(top=5, temperature=0.5), False, "--temperature goes with --resample N"),
    (Rule(top="many"), False, "--top takes a number or 'auto'"),
    (Rule(resample=5, dedup="exact"), False, "--dedup with --resample is not supported"),
    (Rule(threshold=0.2), True, "--target takes --top N or --fraction F"),
])
def test_the_rule_is_checked_once_before_any_work(rule, mixture, says):
    with pytest.raises(DomainsiftError, match=says):
        rule.check(mixture=mixture)


def test_a_spec_refuses_what_would_change_nothing_or_cannot_run(inputs, tmp_path):
    med, law, pool = inputs["med"], inputs["law"], inputs["pool"]
    cases = [
        (RunSpec.single("cosine", med, pool, rule=Rule(positive=True)), "--positive needs probability scores"),
        (RunSpec.single("cosine", med, pool, rule=Rule(top=3), mix={"a": 1}), "--mix goes with --target"),
        (RunSpec("cosine", {"med": med}, pool, rule=Rule(top=3)), "at least two --target"),
        (RunSpec("cosine", {"med": med, "law": law}, pool), "give --top N or --fraction F"),
        (RunSpec("cosine", {"med": med, "law": law}, pool, rule=Rule(top="auto"), mix={"med": 1, "law": 1}),
         "--mix weighs a total"),
        (RunSpec.single("nope", med, pool), "unknown method 'nope'"),
        (RunSpec.single("cosine", med, pool, rule=Rule(top=3), estimate_share=True), "a score run's"),
    ]
    for spec, says in cases:
        with pytest.raises(DomainsiftError, match=says):
            run(spec.with_out(tmp_path / "never"))
        assert not (tmp_path / "never").exists()


def test_the_public_api_is_listed_and_importable():
    for name in domainsift.__all__:
        assert getattr(domainsift, name) is not None, name
    assert {"RunSpec", "Rule", "run", "plan", "RunResult"} <= set(domainsift.__all__)


def test_each_selector_shows_its_declared_parameters_and_checks_them_when_fitted():
    from domainsift.select import SELECTORS, get_selector, selector_class
    for method in SELECTORS:
        cls = selector_class(method)
        shown = inspect.signature(cls).parameters
        assert list(shown) == [p.name for p in cls.params], method
        assert all(shown[p.name].default == p.default and shown[p.name].kind is inspect.Parameter.KEYWORD_ONLY
                   for p in cls.params), method
    from domainsift.select.moore_lewis import MooreLewisSelector
    stored = MooreLewisSelector(per="word")  # the constructor only stores ...
    assert stored.per == "word"
    with pytest.raises(DomainsiftError, match="per must be one of"):  # ... the fit checks first
        stored.fit(["a b"], ["c d"])
    with pytest.raises(DomainsiftError, match="per must be one of"):  # and the factory hands out checked ones
        get_selector("moore-lewis", per="word")
    with pytest.raises(DomainsiftError, match="unknown parameter"):
        MooreLewisSelector(nope=1)


def test_the_cli_and_python_make_the_same_run(inputs, tmp_path, capsys):
    from conftest import run_cli
    files = [str(f) for f in inputs["pool"].files]
    rc, err, _ = run_cli(["select", "--method", "cosine", "--model", "tfidf", "--cache", "", "--in-domain",
                          *inputs["med"].files, "--pool", *files, "--top", "7", "--out", tmp_path / "cli"], capsys)
    assert rc == 0, err
    from domainsift import PoolSource
    done = run(RunSpec.single("cosine", inputs["med"], PoolSource.open(files), tmp_path / "py", rule=Rule(top=7),
                              params={"embedder": "tfidf", "cache_dir": ""}))
    assert np.load(tmp_path / "cli" / "scores.npy").tobytes() == done.scores().tobytes()
    assert (tmp_path / "cli" / "selected.ids.tsv").read_text() == (tmp_path / "py" / "selected.ids.tsv").read_text()
