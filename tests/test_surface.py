"""The surface check: an in-domain set unlike the pool in format (a line number, a tab, markup, length) gets
one warning line per difference before the fit, kept in run.json; sets that differ by content alone get none."""

import json

import numpy as np

from conftest import run_cli, write_lines
from domainsift.surface import LENGTH_RATIO, MIN_LINES, PATTERNS, SINGLE_WORD, check_surface, compare

LINE_NUMBER = PATTERNS[0][0]

WORDS = ("the patient dose tablet file menu open save window verse lord court article regulation member "
         "state council treatment blood pressure children doctor effect").split()


def sentences(n: int, seed: int, words: int = 9) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, words)).capitalize() + "." for _ in range(n)]


def numbered(texts, start: int = 1000) -> list[str]:
    return [f"{start + i}: {t}" for i, t in enumerate(texts)]


def test_a_line_number_on_every_pool_line_and_on_no_in_domain_line_is_one_difference_either_way():
    ind, pool = sentences(200, 0), numbered(sentences(1000, 1))
    found = compare(ind, pool)
    assert [d.what for d in found] == [LINE_NUMBER]
    assert found[0].in_domain == 0.0 and found[0].pool == 1.0
    assert [d.what for d in compare(numbered(ind), sentences(1000, 1))] == [found[0].what]
    assert compare(numbered(ind), pool) == []  # the same format on both sides


def test_numbered_paragraphs_are_content_not_format():
    ind = [f"{i % 9 + 1}. {t}" for i, t in enumerate(sentences(200, 0))]  # "2. For the years ...", as law reads
    assert compare(ind, sentences(1000, 1)) == []
    assert [d.what for d in compare(ind, [f"[{i}] {t}" for i, t in enumerate(sentences(1000, 1))])] == [LINE_NUMBER]


def test_tabs_markup_and_urls():
    ind, plain = sentences(100, 0), sentences(500, 1)
    assert [d.what for d in compare(ind, [f"doc{i}\t{t}" for i, t in enumerate(plain)])] == ["a tab (a second field)"]
    assert [d.what for d in compare([f"<p>{t}</p>" for t in ind], plain)] == ["markup (tags or entities)"]
    assert [d.what for d in compare([t.replace("the", "&amp;") + " &amp;" for t in ind], plain)] == [
        "markup (tags or entities)"]
    assert [d.what for d in compare(ind, [f"https://example.org/{i} {t}" for i, t in enumerate(plain)])] == ["a URL"]


def test_paragraphs_against_sentences_differ_in_length_and_a_threefold_length_does_not():
    pool = sentences(500, 1)
    paragraphs = [" ".join(sentences(int(LENGTH_RATIO) + 1, s)) for s in range(100)]
    found = compare(paragraphs, pool)
    assert [d.what for d in found] == ["length"] and found[0].in_domain > LENGTH_RATIO * found[0].pool
    warned = check_surface(paragraphs, pool, "the in-domain set (docs.txt)")
    assert len(warned) == 1
    assert warned[0].startswith("the in-domain set (docs.txt): lines 9 times as long as the pool's")
    assert compare([" ".join(sentences(3, s)) for s in range(100)], pool) == []


def test_a_large_in_domain_set_is_read_at_a_stride_over_all_of_it():
    ind = sentences(25_000, 0)
    ind[10_000:] = numbered(ind[10_000:])  # 60% numbered, none of the first 10,000 lines
    assert compare(ind, numbered(sentences(1000, 1))) == []  # read from its first lines only, it would warn
    assert compare(numbered(sentences(25_000, 0)), sentences(1000, 1))[0].in_domain == 1.0


def test_too_few_lines_say_nothing_and_warnings_are_one_line_each():
    pool = numbered(sentences(1000, 1))
    assert compare(sentences(MIN_LINES - 1, 0), pool) == []
    assert check_surface(sentences(50, 0), None) == []
    warned = check_surface(sentences(50, 0), pool)
    assert len(warned) == 1 and "\n" not in warned[0] and "100% of the pool's lines" in warned[0]


def test_a_run_warns_before_it_fits_and_records_it_and_random_is_not_checked(tmp_path, monkeypatch, capsys, caplog):
    monkeypatch.chdir(tmp_path)
    ind = write_lines(tmp_path / "in.txt", sentences(60, 0))
    numbered_pool = write_lines(tmp_path / "numbered.txt", numbered(sentences(300, 1)))
    plain_pool = write_lines(tmp_path / "plain.txt", sentences(300, 2))
    common = ["select", "--method", "cosine", "--model", "tfidf", "--in-domain", ind, "--top", "10"]
    rc, err, out = run_cli([*common, "--pool", numbered_pool, "--out", "numbered"], capsys)
    assert rc == 0, err
    assert f"{LINE_NUMBER} is on 100% of the pool's lines" in caplog.text
    assert f"warning (before the fit; run.json): {LINE_NUMBER}" in out  # said again at the end
    warnings = json.loads((tmp_path / "numbered" / "run.json").read_text())["warnings"]
    assert len(warnings) == 1 and LINE_NUMBER in warnings[0]
    assert "of the 60 lines of the in-domain set (in.txt)" in warnings[0]
    caplog.clear()
    rc, err, out = run_cli([*common, "--pool", plain_pool, "--out", "plain"], capsys)
    assert rc == 0, err
    assert "warning" not in out
    assert "warnings" not in json.loads((tmp_path / "plain" / "run.json").read_text())
    rc, err, _ = run_cli(["select", "--method", "random", "--in-domain", ind, "--pool", numbered_pool, "--top", "10",
                          "--out", "random"], capsys)
    assert rc == 0, err
    assert LINE_NUMBER not in caplog.text  # random does not read the lines: nothing to learn wrongly
    assert "warnings" not in json.loads((tmp_path / "random" / "run.json").read_text())


def test_plan_says_it_before_the_run_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ind = write_lines(tmp_path / "in.txt", sentences(60, 0))
    pool = write_lines(tmp_path / "numbered.txt", numbered(sentences(300, 1)))
    rc, err, out = run_cli(["select", "--method", "cosine", "--model", "tfidf", "--in-domain", ind, "--pool", pool,
                            "--top", "10", "--out", "run", "--plan"], capsys)
    assert rc == 0, err
    assert f"  warning: {LINE_NUMBER} is on 100% of the pool's lines" in out and "the in-domain set (in.txt)" in out
    assert not (tmp_path / "run").exists()


def test_the_warning_says_to_strip_the_mark_from_the_side_that_has_it():
    ind, pool = sentences(200, 0), sentences(1000, 1)
    (on_pool,) = check_surface(ind, numbered(pool), "the in-domain set (med.txt)", say=False)
    assert "strip it from the pool (--strip-id reads every input without it);" in on_pool
    (on_ind,) = check_surface(numbered(ind), pool, "the in-domain set (med.txt)", say=False)
    assert "strip it from the in-domain set (med.txt) (--strip-id" in on_ind
    (tab,) = check_surface(ind, [f"doc{i}\t{t}" for i, t in enumerate(pool)], say=False)
    assert "strip it from the pool (or read the text's field: --format tsv --column N);" in tab


def test_an_id_column_read_as_the_text_is_single_words_said_once_not_as_length():
    ind, plain = sentences(200, 0), sentences(1000, 1)
    ids = [f"doc{i}" for i in range(1000)]  # "doc1\tThe patient ..." read at its first column
    (found,) = compare(ind, ids)  # the length difference (13 times) is the same cause: not said twice
    assert found.what == SINGLE_WORD and found.pool == 1.0 and found.in_domain == 0.0
    (said,) = check_surface(ind, ids, "the in-domain set (med.txt)", say=False)
    assert said.startswith("the pool: 100% of its lines are a single word") and "--column N" in said
    # a set with some one-word lines (menu labels: "Open", "Save") is not an ID column
    labels = [t.split()[0] if i % 3 == 0 else t for i, t in enumerate(plain)]
    assert compare(ind, labels) == []


def test_fewer_in_domain_lines_than_a_method_was_measured_to_need_warn_before_the_fit(tmp_path, capsys):
    """The measured table is the results file's (each target's draws averaged, then the five targets); the
    warning names the method that measured best with as few lines, where another did better."""
    from pathlib import Path
    from domainsift.advice import BY_LINES, enough_lines, few_lines
    rows = json.loads((Path(__file__).resolve().parent.parent / "bench" / "results" / "in_domain_size.json")
                      .read_text())["rows"]
    measured = {}
    for r in rows:
        measured.setdefault(r["method"], {}).setdefault(r["n"], {}).setdefault(r["target"], []).append(r["precision"])
    assert {m: {n: round(float(np.mean([np.mean(v) for v in t.values()])), 4) for n, t in by.items()}
            for m, by in measured.items()} == BY_LINES
    assert {m: enough_lines(m) for m in BY_LINES} == {"cosine": 25, "moore-lewis": 250, "finetune": 100,
                                                      "student": 25}
    assert few_lines("cosine", 25) is None and few_lines("crosslingual", 3) is None  # not measured: nothing said
    said = few_lines("moore-lewis", 100, "the in-domain set (med.txt)")
    assert said.startswith("the in-domain set (med.txt) has 100 lines: moore-lewis measured 0.65 mean precision "
                           "with 100 in-domain lines against 0.76 with 500")
    assert said.endswith("or --method finetune: 0.82 with 100 lines")
    assert few_lines("finetune", 10).endswith("or --method student: 0.70 with 10 lines")  # the student did best
    assert few_lines("cosine", 10).endswith("or --method student: 0.70 with 10 lines")
    # with 25 lines finetune measured 0.7459, the student 0.7379 and cosine 0.7001: none better
    assert "--method" not in few_lines("finetune", 30)
    assert few_lines("student", 10).endswith("give it a few hundred")  # no other measured better
    # a run says it before the fit and keeps it in run.json
    ind, pool = tmp_path / "in.txt", tmp_path / "pool.txt"
    write_lines(ind, sentences(enough_lines("cosine") - 1, 0))
    write_lines(pool, sentences(200, 1))
    rc, err, out = run_cli(["select", "--method", "cosine", "--model", "tfidf", "--cache", "", "--in-domain",
                            str(ind), "--pool", str(pool), "--top", "5", "--out", str(tmp_path / "run")], capsys)
    assert rc == 0, err
    kept = json.loads((tmp_path / "run" / "run.json").read_text())["warnings"]
    assert any(w.startswith(f"the in-domain set (in.txt) has {enough_lines('cosine') - 1} lines: cosine measured")
               for w in kept)
