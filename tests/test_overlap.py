"""The in-domain set inside the pool: an in-domain file among the pool's files, or a pool sample that repeats
in-domain lines, gets one warning line before the fit (kept in run.json, printed by --plan); the run goes on."""

import json

import numpy as np

from conftest import run_cli, write_lines
from domainsift.io.corpus import read_corpus
from domainsift.overlap import SHARE, check_overlap, repeats, shared_files

WORDS = "the patient dose tablet file menu open save window verse lord court article member state".split()


def sentences(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, 10)) + f" {seed}-{i}." for i in range(n)]  # distinct lines


def test_repeats_pairs_each_sample_line_with_the_first_equal_in_domain_line():
    assert repeats(["a", "b", "a"], ["c", "a", "b", "a"]) == [(1, 0), (2, 1), (3, 0)]
    # compared as --exclude compares: case, punctuation and spaces aside, so the warning and --exclude agree
    assert repeats(["a"], ["A", "a ", "a."]) == [(0, 0), (1, 0), (2, 0)]
    assert repeats(["a", "..."], ["b", "!"]) == []  # a line of punctuation alone repeats nothing


def test_the_same_file_by_another_path_is_found(tmp_path):
    f = write_lines(tmp_path / "in.txt", ["x"])
    (tmp_path / "d").mkdir()
    other = write_lines(tmp_path / "d" / "pool.txt", ["y"])
    assert shared_files([str(f)], [str(other), str(tmp_path / "d" / ".." / "in.txt")]) == [str(f)]
    assert shared_files([str(f)], [str(other)]) == []


def test_a_sample_repeating_in_domain_lines_is_said_with_an_example_and_an_estimate(tmp_path):
    ind = read_corpus([write_lines(tmp_path / "in.txt", sentences(100, 0))])
    hits = int(np.ceil(SHARE * 500))
    pool_lines = sentences(500 - hits, 1)[:250] + ind.texts[5:5 + hits] + sentences(500 - hits, 1)[250:]
    sample = read_corpus([write_lines(tmp_path / "pool.txt", pool_lines)])
    said = check_overlap(ind, sample, [str(tmp_path / "pool.txt")], n_pool=5000, name="the in-domain set (in.txt)",
                         say=False)
    assert said == [f"{hits} of 500 sampled pool lines repeat a line of the in-domain set (in.txt) (as --exclude compares lines) (about "
                    f"{hits * 10} of the pool's 5,000), e.g. pool.txt line 251 = in.txt line 6: they rank at the top "
                    f"and will be selected; if you test on the in-domain set (in.txt), remove them from the pool first, or "
                    f"select with --exclude in.txt"]
    # lines an --exclude leaves out are not said
    from domainsift.dedup import Exclusion
    assert check_overlap(ind, sample, [], n_pool=5000, say=False, exclude=Exclusion(ind.texts[5:6])) == []
    assert len(check_overlap(ind, sample, [], n_pool=5000, say=False, exclude=Exclusion(["unrelated line"]))) == 1
    # fewer than SHARE of the sample: none (a few shared lines are content, not a copy)
    fewer = read_corpus([write_lines(tmp_path / "few.txt", pool_lines[:250] + pool_lines[250 + hits - 1:])])
    assert check_overlap(ind, fewer, [], n_pool=None, say=False) == []
    assert check_overlap(ind, None, [], n_pool=None, say=False) == []


def test_an_in_domain_file_among_the_pool_files_is_said_once_and_the_run_goes_on(tmp_path, capsys):
    ind = write_lines(tmp_path / "in.txt", sentences(60, 0))
    other = write_lines(tmp_path / "other.txt", sentences(300, 1))
    rc, err, out = run_cli(["select", "--method", "cosine", "--model", "tfidf", "--cache", "", "--in-domain", ind,
                            "--pool", other, ind, "--top", "60", "--out", tmp_path / "run"], capsys)
    assert rc == 0, err
    said = ("in.txt is both the in-domain set and a pool file: its lines rank at the top and will be selected; "
            "if you test on them, leave in.txt out of the pool, or select with --exclude in.txt")
    kept = json.loads((tmp_path / "run" / "run.json").read_text())["warnings"]
    assert [w for w in kept if "in.txt" in w and ("pool file" in w or "repeat a line of" in w)] == [said]  # not twice
    assert f"warning (before the fit; run.json): {said}" in out
    selected = (tmp_path / "run" / "selected.txt").read_text().splitlines()
    assert len(selected) == 60
    rc, err, out = run_cli(["select", "--plan", "--method", "cosine", "--model", "tfidf", "--cache", "",
                            "--in-domain", ind, "--pool", other, ind, "--top", "60"], capsys)
    assert rc == 0, err
    assert f"  warning: {said}" in out
    # apart, no such warning
    rc, err, out = run_cli(["select", "--method", "cosine", "--model", "tfidf", "--cache", "", "--in-domain", ind,
                            "--pool", other, "--top", "60", "--out", tmp_path / "apart"], capsys)
    assert rc == 0, err
    assert not any("pool file" in w or "repeat a line of" in w
                   for w in json.loads((tmp_path / "apart" / "run.json").read_text()).get("warnings", []))
    # a random ranking does not put them first: nothing to say
    rc, err, out = run_cli(["select", "--method", "random", "--in-domain", ind, "--pool", other, ind, "--top", "60",
                            "--out", tmp_path / "random"], capsys)
    assert rc == 0, err
    assert not any("pool file" in w for w in json.loads((tmp_path / "random" / "run.json").read_text())
                   .get("warnings", []))


def test_a_run_that_excludes_the_in_domain_set_selects_none_of_it_and_says_nothing(tmp_path, capsys):
    ind = write_lines(tmp_path / "in.txt", sentences(60, 0))
    other = write_lines(tmp_path / "other.txt", sentences(300, 1))
    rc, err, out = run_cli(["select", "--method", "cosine", "--model", "tfidf", "--cache", "", "--in-domain", ind,
                            "--pool", other, ind, "--top", "60", "--exclude", ind, "--out", tmp_path / "run"], capsys)
    assert rc == 0, err
    assert not any("pool file" in w or "repeat a line of" in w
                   for w in json.loads((tmp_path / "run" / "run.json").read_text()).get("warnings", []))
    selected = (tmp_path / "run" / "selected.txt").read_text().splitlines()
    assert len(selected) == 60 and not set(selected) & set(sentences(60, 0))
    sel = json.loads((tmp_path / "run" / "selection.json").read_text())
    # without it, in.txt's lines take places in the selection; with it, each one walked past is counted
    rc, err, _ = run_cli(["select", "--from-scores", tmp_path / "run", "--top", "60", "--no-exclude", "--out",
                          tmp_path / "all"], capsys)
    assert rc == 0, err
    taken = set((tmp_path / "all" / "selected.txt").read_text().splitlines()) & set(sentences(60, 0))
    assert taken and sel["exclude"]["lines_excluded"] >= len(taken) and sel["exclude"]["files"] == [str(ind)]
    assert f"{sel['exclude']['lines_excluded']} lines of --exclude passed over" in out
    rc, err, out = run_cli(["select", "--plan", "--method", "cosine", "--model", "tfidf", "--cache", "",
                            "--in-domain", ind, "--pool", other, ind, "--top", "60", "--exclude", ind], capsys)
    assert rc == 0, err
    assert "pool file" not in out
    # the plan counts the sample's lines that repeat one (the pool is 360 lines: the sample is all of it)
    assert "--exclude: 60 distinct lines; 60 of 360 sampled pool lines repeat one (about 60 of the pool's)" in out
    # near copies of the in-domain lines, excluded: the plan compares as the run will, exactly or with --dedup near
    near = write_lines(tmp_path / "near.txt", [f"{x} x" for x in sentences(60, 0)])
    for flags, hits in (([], 0), (["--dedup", "near"], 60)):
        rc, err, out = run_cli(["select", "--plan", "--method", "cosine", "--model", "tfidf", "--cache", "",
                                "--in-domain", ind, "--pool", other, ind, "--top", "60", "--exclude", near, *flags],
                               capsys)
        assert rc == 0, err
        assert f"{hits} of 360 sampled pool lines repeat one" in out
        assert ("near duplicates too: Jaccard >= 0.8" in out) == bool(flags)
