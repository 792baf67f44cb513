"""select --dedup exact|near: the best-scored line of each group of duplicates is kept, --top still gives N
distinct lines, counts in selection.json, with --from-scores too."""

import json

import pytest

from conftest import make_sentences, run_cli, write_lines
from domainsift.dedup import Deduplicator, Exclusion, normalise


def test_normalise_folds_case_punctuation_and_spaces():
    assert normalise("The dose:  5 mg.") == normalise("the DOSE 5 mg") == "the dose 5 mg"
    assert normalise("ﬁve") == "five"  # NFKC
    assert normalise("a-b") != normalise("ab")


def test_exact_and_near_duplicates():
    exact = Deduplicator("exact")
    assert [exact.is_duplicate(t) for t in ["Take one tablet daily.", "take one tablet daily", "Take two."]] == \
        [False, True, False]
    near = Deduplicator("near", threshold=0.7)
    a = "Take one tablet of this medicine every day with water after a meal"
    b = "Take one tablet of this medicine every day with water after meals"
    c = "The committee adopted the regulation on the internal market"
    assert [near.is_duplicate(t) for t in (a, b, c)] == [False, True, False]
    assert not Deduplicator("exact").is_duplicate(b) and not Deduplicator("near", threshold=0.95).is_duplicate(b)


@pytest.fixture
def pool(tmp_path, monkeypatch):
    """A pool whose best lines come in copies: each in-domain-like line three times, differently cased."""
    monkeypatch.chdir(tmp_path)
    med = make_sentences("med", 10, 1)
    lines = []
    for t in med:
        lines += [t, t.upper(), t + " ."]
    lines += make_sentences("law", 30, 2)
    return {"pool": write_lines(tmp_path / "pool.txt", lines), "in": write_lines(tmp_path / "in.txt", med[:4]),
            "tmp": tmp_path, "lines": lines}


def _selected(d):
    return (d / "selected.txt").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("mode", ["exact", "near"])
def test_top_n_gives_n_distinct_lines(mode, pool, capsys):
    base = ["select", "--method", "moore-lewis", "--order", "2", "--in-domain", pool["in"], "--pool", pool["pool"],
            "--top", "8"]
    assert run_cli([*base, "--out", "plain"], capsys)[0] == 0
    rc, err, out = run_cli([*base, "--dedup", mode, "--out", "dedup"], capsys)
    assert rc == 0, err
    plain, dedup = _selected(pool["tmp"] / "plain"), _selected(pool["tmp"] / "dedup")
    assert len({normalise(t) for t in plain}) < 8  # without it, copies take places in the selection
    assert len(dedup) == 8 and len({normalise(t) for t in dedup}) == 8
    sel = json.loads((pool["tmp"] / "dedup" / "selection.json").read_text())
    assert sel["n_selected"] == 8 and sel["dedup"]["mode"] == mode and sel["dedup"]["duplicates_removed"] > 0
    assert "duplicates passed over" in out
    sig = json.loads((pool["tmp"] / "dedup" / "signature.json").read_text())
    assert sig["selection"]["dedup"]["mode"] == mode and "select_dedup" in sig["signature"]
    # the kept line of each group is its best-scored: the selection's ids in rank order are a subsequence
    # of the plain ranking's
    ranked = [ln.split("\t")[:2] for ln in (pool["tmp"] / "dedup" / "selected.ids.tsv").read_text().splitlines()[1:]]
    rc, _, _ = run_cli(["select", "--from-scores", "plain", "--top", str(len(pool["lines"])), "--out", "all"], capsys)
    order = [ln.split("\t")[:2] for ln in (pool["tmp"] / "all" / "selected.ids.tsv").read_text().splitlines()[1:]]
    pos = [order.index(r) for r in ranked]
    assert pos == sorted(pos)
    for r in ranked:  # no line ranked above a kept line duplicates it
        text = pool["lines"][int(r[1]) - 1]
        better = [pool["lines"][int(o[1]) - 1] for o in order[:order.index(r)]]
        assert normalise(text) not in {normalise(b) for b in better}


def test_dedup_from_saved_scores_and_with_a_threshold_rule(pool, capsys):
    assert run_cli(["score", "--method", "moore-lewis", "--order", "2", "--in-domain", pool["in"], "--pool",
                    pool["pool"], "--out", "s"], capsys)[0] == 0
    assert run_cli(["select", "--from-scores", "s", "--threshold=-1e9", "--out", "all"], capsys)[0] == 0
    assert run_cli(["select", "--from-scores", "s", "--threshold=-1e9", "--dedup", "exact", "--out", "d"],
                   capsys)[0] == 0
    every, dedup = _selected(pool["tmp"] / "all"), _selected(pool["tmp"] / "d")
    assert len(every) == len(pool["lines"]) and len(dedup) == len({normalise(t) for t in pool["lines"]})


@pytest.mark.parametrize("argv,msg", [(["--dedup-threshold", "0.5"], "needs --dedup near"),
                                      (["--dedup", "near", "--dedup-threshold", "0.99"], "must be in (0, 0.95]")])
def test_bad_dedup_options_are_one_line_before_scoring(argv, msg, pool, capsys):
    rc, err, _ = run_cli(["select", "--method", "moore-lewis", "--in-domain", pool["in"], "--pool", pool["pool"],
                          "--top", "5", *argv, "--out", "x"], capsys)
    assert rc == 2 and msg in err and err.count("\n") == 0, err
    assert not (pool["tmp"] / "x").exists()


# ------------------------------------------------------------------ --exclude FILE: a test set kept out

def test_an_exclusion_matches_as_dedup_compares_and_keeps_nothing_it_is_asked_about():
    ex = Exclusion(["Take one tablet daily.", "...", "The committee adopted the regulation on the internal market"])
    assert ex.n_lines == 2  # punctuation alone is no line: it would match every such pool line
    assert ex.matches("take one tablet DAILY") and not ex.matches("Take two tablets daily.")
    assert not ex.matches("!!!") and not ex.matches("Take two tablets daily.")  # asking keeps nothing
    near = Exclusion(["Take one tablet of this medicine every day with water after a meal"], "near", 0.7)
    assert near.matches("Take one tablet of this medicine every day with water after meals")
    assert not ex.matches("Take one tablet of this medicine every day with water after meals")
    # the digest follows the lines, not their order, case or the files they came from
    assert Exclusion(["b", "A"]).describe()["sha256"] == Exclusion(["a", "B"], files=["x"]).describe()["sha256"] \
        != Exclusion(["a"]).describe()["sha256"]
    with pytest.raises(Exception, match="no line to exclude"):
        Exclusion(["...", ""])


def test_exclude_leaves_a_test_sets_lines_out_and_top_still_gives_n(pool, capsys):
    test = write_lines(pool["tmp"] / "test.txt", [pool["lines"][0].upper() + " !", pool["lines"][3]])
    base = ["select", "--method", "moore-lewis", "--order", "2", "--in-domain", pool["in"], "--pool", pool["pool"],
            "--top", "8"]
    assert run_cli([*base, "--dedup", "exact", "--out", "plain"], capsys)[0] == 0
    rc, err, out = run_cli([*base, "--dedup", "exact", "--exclude", test, "--out", "ex"], capsys)
    assert rc == 0, err
    plain, ex = _selected(pool["tmp"] / "plain"), _selected(pool["tmp"] / "ex")
    gone = {normalise(pool["lines"][0]), normalise(pool["lines"][3])}
    assert gone <= {normalise(t) for t in plain}  # both rank among the best 8 without it
    assert len(ex) == 8 and not gone & {normalise(t) for t in ex}
    assert [t for t in plain if normalise(t) not in gone] == ex[:6]  # the rest in the same order, two more after
    sel = json.loads((pool["tmp"] / "ex" / "selection.json").read_text())
    assert sel["exclude"]["lines"] == 2 and sel["exclude"]["mode"] == "exact" and sel["exclude"]["lines_excluded"] > 0
    sig = json.loads((pool["tmp"] / "ex" / "signature.json").read_text())
    assert sig["selection"]["exclude"]["files"] == [str(test)] and "select_exclude:exact:2@" in sig["signature"]
    # choosing again from the saved scores gives the same bytes
    rc, err, _ = run_cli(["select", "--from-scores", "plain", "--top", "8", "--dedup", "exact", "--exclude", test,
                          "--out", "again"], capsys)
    assert rc == 0, err
    for name in ("selected.txt", "selected.ids.tsv"):
        assert (pool["tmp"] / "again" / name).read_bytes() == (pool["tmp"] / "ex" / name).read_bytes()


def test_exclude_leaves_out_a_pair_by_either_side(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    src = make_sentences("med", 12, 1) + make_sentences("law", 12, 2)
    write_lines(tmp_path / "pool.de", src)
    write_lines(tmp_path / "pool.en", [f"target {i}" for i in range(len(src))])
    write_lines(tmp_path / "in.de", make_sentences("med", 4, 3))
    write_lines(tmp_path / "test.de", src[:3])
    rc, err, _ = run_cli(["select", "--method", "moore-lewis", "--order", "2", "--in-domain", "in.de", "--pool",
                          "pool.de", "--pool-target", "pool.en", "--top", "10", "--exclude", "test.de", "--out", "r"],
                         capsys)
    assert rc == 0, err
    chosen = (tmp_path / "r" / "selected.de").read_text().splitlines()
    assert len(chosen) == 10 and not set(chosen) & set(src[:3])
    targets = (tmp_path / "r" / "selected.en").read_text().splitlines()
    assert targets == [f"target {src.index(t)}" for t in chosen]
    # the test set's other side: a pair whose target repeats a test reference is left out too
    assert {"target 5", "target 7"} <= set(targets)  # two med pairs the selection takes
    write_lines(tmp_path / "test.en", ["Target 5", "target 7."])  # compared after normalising
    rc, err, _ = run_cli(["select", "--from-scores", "r", "--top", "10", "--exclude", "test.de", "test.en",
                          "--out", "r2"], capsys)
    assert rc == 0, err
    chosen = (tmp_path / "r2" / "selected.de").read_text().splitlines()
    targets = (tmp_path / "r2" / "selected.en").read_text().splitlines()
    assert len(chosen) == 10 and not set(chosen) & set(src[:3]) and not {"target 5", "target 7"} & set(targets)
    sel = json.loads((tmp_path / "r2" / "selection.json").read_text())
    assert sel["exclude"]["lines"] == 5 and sel["exclude"]["lines_excluded"] == 5


def test_run_select_excludes_a_list_of_lines_or_a_file(pool, capsys):
    from domainsift import Rule, run_select
    assert run_cli(["score", "--method", "moore-lewis", "--order", "2", "--in-domain", pool["in"], "--pool",
                    pool["pool"], "--out", "s"], capsys)[0] == 0
    test = write_lines(pool["tmp"] / "test.txt", pool["lines"][:6])
    by_lines = run_select("s", "a", rule=Rule(top=10, exclude=pool["lines"][:6]))
    by_file = run_select("s", "b", rule=Rule(top=10, exclude=str(test)))
    assert by_lines["exclude"]["sha256"] == by_file["exclude"]["sha256"] and by_file["exclude"]["files"] == [str(test)]
    a, b = _selected(pool["tmp"] / "a"), _selected(pool["tmp"] / "b")
    assert a == b and len(a) == 10 and not {normalise(t) for t in a} & {normalise(t) for t in pool["lines"][:6]}


@pytest.mark.parametrize("argv,msg", [(["--resample", "5"], "--exclude with --resample"),
                                      (["--top", "5", "--exclude", "bad.txt"], "bad.txt:2: invalid UTF-8")])
def test_bad_exclude_options_are_one_line_before_scoring(argv, msg, pool, capsys):
    (pool["tmp"] / "bad.txt").write_bytes(b"fine\nbad \xff byte\n")
    rc, err, _ = run_cli(["select", "--method", "moore-lewis", "--in-domain", pool["in"], "--pool", pool["pool"],
                          "--exclude", pool["in"], *argv, "--out", "x"], capsys)
    assert rc == 2 and msg in err and err.count("\n") == 0, err
    assert not (pool["tmp"] / "x").exists()
    rc, err, _ = run_cli(["select", "--method", "cosine", "--target", f"a={pool['in']}", "--target", f"b={pool['in']}",
                          "--pool", pool["pool"], "--top", "5", "--exclude", "bad.txt", "--out", "y"], capsys)
    assert rc == 2 and "bad.txt:2: invalid UTF-8" in err and not (pool["tmp"] / "y").exists()


# ------------------------------------------------------------------ --resample N: importance resampling
# (named --resample: --sample is the student's sample size, a flag users already pass)

def test_importance_sample_follows_the_weights_and_its_seed():
    import numpy as np
    from domainsift.select.base import importance_sample
    scores = np.r_[np.full(50, 3.0), np.zeros(950)]  # 50 lines e^3 = 20x as likely as each of the others
    draws = [importance_sample(scores, 20, seed=s) for s in range(200)]
    share = np.mean([np.mean(d < 50) for d in draws])
    # the first draw is from the heavy group with p = 50*20.09 / (50*20.09 + 950) = 0.514; later draws less
    assert 0.35 < share < 0.6
    assert all(len(set(d.tolist())) == 20 for d in draws)  # without replacement
    assert np.array_equal(importance_sample(scores, 20, seed=3), importance_sample(scores, 20, seed=3, chunk=7))
    cold = np.mean([np.mean(importance_sample(scores, 20, temperature=0.1, seed=s) < 50) for s in range(50)])
    hot = np.mean([np.mean(importance_sample(scores, 20, temperature=100, seed=s) < 50) for s in range(50)])
    assert cold == 1.0 and hot < 0.15  # cold: the best lines; hot: nearly uniform (50/1000 = 0.05)


def test_select_sample_from_saved_scores(pool, capsys):
    assert run_cli(["score", "--method", "moore-lewis", "--order", "2", "--in-domain", pool["in"], "--pool",
                    pool["pool"], "--out", "s"], capsys)[0] == 0
    args = ["select", "--from-scores", "s", "--resample", "12", "--temperature", "0.5"]
    assert run_cli([*args, "--out", "a"], capsys)[0] == 0
    assert run_cli([*args, "--out", "b"], capsys)[0] == 0
    assert run_cli([*args, "--resample-seed", "7", "--out", "c"], capsys)[0] == 0
    a, b, c = (_selected(pool["tmp"] / d) for d in "abc")
    assert len(a) == 12 and a == b and a != c
    sel = json.loads((pool["tmp"] / "a" / "selection.json").read_text())
    assert sel["rule"] == {"sample": 12, "temperature": 0.5, "sample_seed": 0}
    rc, err, _ = run_cli(["select", "--from-scores", "s", "--resample", "5", "--top", "5", "--out", "d"], capsys)
    assert rc == 2 and "exactly one of" in err
    rc, err, _ = run_cli([*args, "--dedup", "exact", "--out", "e"], capsys)
    assert rc == 2 and "--dedup with --resample" in err
    rc, err, _ = run_cli(["select", "--from-scores", "s", "--resample", "500", "--out", "f"], capsys)
    assert rc == 2 and "cannot sample 500 lines from a pool of 60" in err
