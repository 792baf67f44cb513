import json

import numpy as np
import pytest

from domainsift.cli import main


def test_embed_cli(domain_files, tiny_models, tmp_path, capsys):
    out = tmp_path / "emb"
    assert main(["-q", "embed", *map(str, domain_files), "--model", tiny_models["bert"],
                 "--cache", str(tmp_path / "cache"), "--out", str(out)]) == 0
    x = np.load(out / "embeddings.npy")
    assert x.shape == (90, 32)
    sig = json.loads((out / "signature.json").read_text())
    assert sig["method"] == "embed" and sig["n_sentences"] == 90 and sig["layer"] == -1
    assert "version" in sig and sig["signature"].startswith("embed|")


@pytest.mark.slow
def test_cluster_cli_end_to_end(domain_files, tmp_path, capsys):
    out = tmp_path / "cl"
    rc = main(["-q", "cluster", *map(str, domain_files), "--embedder", "tfidf", "--k", "3", "4",
               "--pca", "0", "5", "--seeds", "2", "--out", str(out)])
    assert rc == 0
    res = json.loads((out / "clustering.json").read_text())
    assert len(res["runs"]) == 2 * 2 * 2
    assert {"k", "pca", "seed", "purity"} <= set(res["runs"][0])
    assert res["confusions"][0]["domains"] == ["it", "law", "med"]
    best = max(r["purity"] for r in res["runs"] if r["k"] == 3)
    assert best > 0.9  # disjoint vocabularies: tf-idf separates them
    assert (out / "map_k3_pcanone.png").stat().st_size > 1000
    assert (out / "confusion_k3_pca5.png").exists()
    printed = capsys.readouterr().out
    assert "purity" in printed


def test_cluster_cli_distinct_and_labels(tmp_path, capsys):
    a = tmp_path / "a.txt"
    a.write_text("dose tablet\ndose tablet\nkidney blood\nliver dose\n")
    labels = tmp_path / "labels.txt"
    labels.write_text("x\ny\nx\n")
    rc = main(["-q", "cluster", str(a), "--embedder", "random", "--max-per-file", "3", "--distinct",
               "--labels", str(labels), "--k", "2", "--pca", "0", "--seeds", "1", "--no-plots",
               "--out", str(tmp_path / "o")])
    assert rc == 0
    res = json.loads((tmp_path / "o" / "clustering.json").read_text())
    assert res["n_sentences"] == 3


def test_cli_bad_input_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xfe\n")
    rc = main(["-q", "cluster", str(bad), "--embedder", "random", "--out", str(tmp_path / "o")])
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "bad.txt:2: invalid UTF-8" in err
    assert not (tmp_path / "o" / "clustering.json").exists()


def test_quiet_and_verbose_work_before_or_after_the_command(capsys):
    from domainsift.cli import build_parser
    parse = build_parser().parse_args
    tail = ["select", "--from-scores", "runs/x", "--top", "5"]
    assert parse(tail).quiet is False and parse(tail).verbose is False
    assert parse(["-q", *tail]).quiet is True
    assert parse([*tail, "-q"]).quiet is True and parse([*tail, "--verbose"]).verbose is True
    assert parse(["-q", *tail, "-v"]).quiet is True  # given before, not undone after
    for name in ("embed", "cluster", "split", "score", "select", "combine", "evaluate", "downstream",
                 "crossdomain", "report", "demo"):
        with pytest.raises(SystemExit):  # --help of every command lists both flags
            parse([name, "--help"])
        shown = capsys.readouterr().out
        assert "-q, --quiet" in shown and "-v, --verbose" in shown, name


def test_cli_rejects_nonpositive_k(domain_files, tmp_path):
    with pytest.raises(SystemExit):
        main(["cluster", str(domain_files[0]), "--k", "0", "--out", str(tmp_path)])


@pytest.mark.slow
def test_demo_runs_offline(tmp_path, capsys):
    assert main(["-q", "demo", "--out", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert "purity" in out and "pictures:" in out
    res = json.loads((tmp_path / "demo" / "cluster" / "clustering.json").read_text())
    assert res["summary"][0]["purity_mean"] > 0.6  # built-in domains are easy; chance is 0.2
    assert "== selection" in out
    ev = (tmp_path / "demo" / "select" / "cosine" / "selected.ids.tsv").read_text().splitlines()
    assert len(ev) == 1 + 24
    combined = json.loads((tmp_path / "demo" / "select" / "cosine+moore-lewis" / "signature.json").read_text())
    assert combined["method"] == "combine" and combined["combined"] == "cosine+moore-lewis"
    assert "cosine+moore-lewis precision" in out


def test_a_closed_pipe_ends_quietly(tmp_path):
    """`domainsift ... | head` where head has already gone: exit 141 (128 + SIGPIPE) and nothing on stderr
    (before: "error: Broken pipe")."""
    import os
    import subprocess
    import sys
    from conftest import make_sentences, write_lines
    pool = write_lines(tmp_path / "pool.txt", make_sentences("med", 20, 1))
    ind = write_lines(tmp_path / "in.txt", make_sentences("med", 5, 2))
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first line is written
    try:
        proc = subprocess.run([sys.executable, "-c", "import sys; from domainsift.cli import main; "
                               "sys.exit(main(sys.argv[1:]))", "-q", "score", "--method", "random", "--in-domain",
                               str(ind), "--pool", str(pool), "--out", str(tmp_path / "run")],
                              stdout=w, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    finally:
        os.close(w)
    assert proc.returncode == 141 and proc.stderr == "", proc.stderr
    assert (tmp_path / "run" / "signature.json").exists()  # the run itself finished


@pytest.mark.parametrize("command", ["score", "select"])
def test_a_bare_score_or_select_says_what_a_run_needs(command, capsys):
    assert main([command]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert f"{command}: give --method M --in-domain FILE --pool FILE..." in err and f"domainsift {command} --help" in err
    assert ("--from-scores DIR" in err) == (command == "select")
    rule = ["--top", "5"] if command == "select" else []
    assert main([command, "--method", "cosine", *rule, "--out", "x"]) == 2  # something given: the usual
    err = capsys.readouterr().err  # one-line error about what is missing
    assert "give --method M" not in err and "--in-domain and --pool are required" in err


def test_adapt_and_judge_options_are_generated_from_their_settings():
    """``adapt`` and ``downstream --judge nmt`` declare their settings once (dataclasses): the parser's
    options are generated from the fields, with the fields' defaults, and parse back into the settings."""
    import dataclasses
    from domainsift._internal.options import flag_of, from_args
    from domainsift.cli import build_parser
    from domainsift.jobs.adapt import AdaptSettings
    from domainsift.jobs.downstream import JudgeSettings
    p = build_parser()
    base = {"adapt": ["adapt", "--old", "a", "b", "--dev", "c", "d", "--out", "o"],
            "downstream": ["downstream", "--test", "a", "b", "--out", "o"]}
    for command, cls in (("adapt", AdaptSettings), ("downstream", JudgeSettings)):
        flags = [flag_of(f) for f in dataclasses.fields(cls) if f.metadata.get("help")]
        assert len(flags) == len(dataclasses.fields(cls)) - 1  # every field but the training's has its option
        assert from_args(cls, p.parse_args(base[command]), train=None) == cls(train=None)
        helptext = p._subparsers._group_actions[0].choices[command].format_help()
        assert all(f in helptext for f in flags)
    args = p.parse_args(base["adapt"] + ["--start", "cold", "--lambda-src", "0.5", "--nmt-backend", "ctranslate2"])
    got = from_args(AdaptSettings, args, train=None)
    assert (got.start, got.lambda_src, got.backend, got.beam) == ("cold", 0.5, "ctranslate2", 5)
    args = p.parse_args(base["downstream"] + ["--init-bitext", "x", "y", "--whole-pool", "--bootstrap-seed", "7"])
    got = from_args(JudgeSettings, args, train=None)
    assert (got.init_bitext, got.whole_pool, got.bootstrap_seed, got.reverse) == (("x", "y"), True, 7, False)
