"""Every method in a mixture (``select --target NAME=FILE ...``), with and without ``--cascade``.

Targets are a dimension of one run: a method that fits each target alone gives each target exactly the
scores of a one-target run (the same bytes), and a method that fits on the pool (Moore-Lewis, the
student, tf-idf, the cross-lingual refine step) sees the pool's fit sample for every target, not only
the first.
"""

from __future__ import annotations

import json

import pytest
from conftest import make_sentences, run_cli, write_lines


def _data(tmp_path):
    return {"in_med": write_lines(tmp_path / "in_med.txt", make_sentences("med", 30, 21)),
            "in_law": write_lines(tmp_path / "in_law.txt", make_sentences("law", 30, 22)),
            "pool": [write_lines(tmp_path / f"{d}.txt", make_sentences(d, 40, 30 + i))
                     for i, d in enumerate(["med", "law", "it"])]}


def _method_args(method, tiny_models):
    bert = tiny_models["bert"]
    return {
        "cosine-tfidf": ["--method", "cosine", "--model", "tfidf"],
        "cosine-bert": ["--method", "cosine", "--model", bert, "--backend", "torch", "--cache", ""],
        "cosine-minilm": ["--method", "cosine", "--model", "minilm", "--cache", ""],  # the default encoder
        "moore-lewis": ["--method", "moore-lewis"],
        "student": ["--method", "student", "--teacher", "cosine", "--model", bert, "--cache", ""],
        "finetune": ["--method", "finetune", "--model", bert, "--epochs", "1", "--batch-size", "8",
                     "--backend", "torch"],
    }[method]


def _scores(folder):
    return (folder / "scores.npy").read_bytes()


# every method, with and without --cascade; the student is the cascade's own first stage, so --cascade
# refuses it as a teacher (below)
CASES = [(m, c) for m in ("cosine-tfidf", "cosine-bert", "cosine-minilm", "moore-lewis", "student", "finetune")
         for c in (False, True)
         if not (m == "student" and c)]


@pytest.mark.parametrize("method,cascade", CASES, ids=[f"{m}-{'cascade' if c else 'plain'}" for m, c in CASES])
def test_a_two_target_mixture_works_for_every_method(method, cascade, tmp_path, capsys, monkeypatch, tiny_models):
    d = _data(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = _method_args(method, tiny_models)
    extra = ["--cascade", "--candidates", "60"] if cascade else []
    rc, err, _ = run_cli(["select", *args, *extra, "--target", f"med={d['in_med']}", "--target",
                          f"law={d['in_law']}", "--pool", *d["pool"], "--top", "40", "--out", "mix"], capsys)
    assert rc == 0, err
    meta = json.loads((tmp_path / "mix" / "mix.json").read_text())
    assert {n: t["n_selected"] for n, t in meta["targets"].items()} == {"med": 20, "law": 20}
    assert not (tmp_path / "mix" / ".resume").exists()
    if method in ("cosine-tfidf", "cosine-bert", "cosine-minilm", "moore-lewis") and not cascade:
        # a method that fits each target alone scores each target as a one-target run does, byte for byte
        for name in ("med", "law"):
            rc, err, _ = run_cli(["score", *args, "--in-domain", d[f"in_{name}"], "--pool", *d["pool"],
                                  "--out", f"alone-{name}"], capsys)
            assert rc == 0, err
            assert _scores(tmp_path / "mix" / "targets" / name) == _scores(tmp_path / f"alone-{name}"), name
    if method in ("moore-lewis", "cosine-tfidf"):  # the domains share no word: every line from its own file
        rows = [line.split("\t", 4) for line in (tmp_path / "mix" / "selected.mix.tsv").read_text().splitlines()[1:]]
        assert all(f.endswith(f"{name}.txt") for name, f, *_ in rows)


def test_a_crosslingual_mixture_scores_each_target_as_a_one_target_run(bilingual, tmp_path, capsys, monkeypatch):
    """crosslingual fits each target alone, its refine step on the pool's fit sample: a mixture of two
    A-language targets over the B-language pool gives each target a one-target run's scores."""
    from conftest import make_sentences as ms
    monkeypatch.chdir(tmp_path)
    law = write_lines(tmp_path / "in_law.a", ms("law", 40, 5))
    args = ["--method", "crosslingual", "--model", bilingual["model"], "--cache", "", "--bitext",
            bilingual["bi_a"], bilingual["bi_b"], "--epochs", "5"]
    rc, err, _ = run_cli(["select", *args, "--target", f"med={bilingual['in']}", "--target", f"law={law}",
                          "--pool", bilingual["pool"], "--top", "40", "--out", "mix"], capsys)
    assert rc == 0, err
    for name, corpus in (("med", bilingual["in"]), ("law", law)):
        rc, err, _ = run_cli(["score", *args, "--in-domain", corpus, "--pool", bilingual["pool"],
                              "--out", f"alone-{name}"], capsys)
        assert rc == 0, err
        assert _scores(tmp_path / "mix" / "targets" / name) == _scores(tmp_path / f"alone-{name}"), name


def test_a_student_mixture_refuses_cascade_in_one_line(tmp_path, capsys, monkeypatch, tiny_models):
    d = _data(tmp_path)
    monkeypatch.chdir(tmp_path)
    rc, err, _ = run_cli(["select", *_method_args("student", tiny_models), "--cascade", "--target",
                          f"med={d['in_med']}", "--target", f"law={d['in_law']}", "--pool", *d["pool"], "--top", "40",
                          "--out", "mix"], capsys)
    assert rc == 2 and "student" in err and err.count("\n") == 0, err  # the student cannot teach a student
    assert not (tmp_path / "mix").exists()


def test_a_crosslingual_mixture_runs_under_the_cascade(bilingual, tmp_path, capsys, monkeypatch):
    from conftest import make_sentences as ms
    monkeypatch.chdir(tmp_path)
    law = write_lines(tmp_path / "in_law.a", ms("law", 40, 5))
    rc, err, _ = run_cli(["select", "--method", "crosslingual", "--model", bilingual["model"], "--cache", "",
                          "--bitext", bilingual["bi_a"], bilingual["bi_b"], "--epochs", "5", "--cascade",
                          "--candidates", "60", "--target", f"med={bilingual['in']}", "--target", f"law={law}",
                          "--pool", bilingual["pool"], "--top", "40", "--out", "mix"], capsys)
    assert rc == 0, err
    meta = json.loads((tmp_path / "mix" / "mix.json").read_text())
    assert {n: t["n_selected"] for n, t in meta["targets"].items()} == {"med": 20, "law": 20}
    for name in ("med", "law"):
        sig = json.loads((tmp_path / "mix" / "targets" / name / "signature.json").read_text())["signature"]
        assert "|cascade:student(" in sig
