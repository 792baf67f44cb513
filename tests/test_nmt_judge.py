"""``downstream --judge nmt``: the translation model trained on each selection of a bitext pool, judged by BLEU
on a test bitext no row trained on (small data, the proxy model for two epochs: seconds)."""

from __future__ import annotations

import json

import pytest

from conftest import backwards, make_sentences, run_cli, write_lines

pytest.importorskip("sacrebleu")
pytest.importorskip("sentencepiece")
pytest.importorskip("torch")

NMT = ["--nmt-epochs", "2", "--nmt-vocab", "60", "--nmt-max-tokens", "300", "--nmt-warmup", "5", "--nmt-lr", "5e-3",
       "--beam", "2"]


@pytest.fixture
def judged(tmp_path, monkeypatch):
    """A 90-pair pool (language A scored, its backwards twin B as --pool-target) of three domains, two
    selections of 20 pairs (Moore-Lewis toward med, random), a med test and dev bitext in the direction
    B -> A; the dev's last pair is one of the pool's."""
    monkeypatch.chdir(tmp_path)
    pool_a = sum((make_sentences(d, 30, i) for i, d in enumerate(("med", "law", "it"))), [])
    write_lines(tmp_path / "pool.a", pool_a)
    write_lines(tmp_path / "pool.b", [backwards(s) for s in pool_a])
    write_lines(tmp_path / "in.a", make_sentences("med", 20, 40))
    test = make_sentences("med", 8, 50)
    dev = make_sentences("med", 5, 60) + [pool_a[3]]
    for name, lines in (("test", test), ("dev", dev)):
        write_lines(tmp_path / f"{name}.a", lines)
        write_lines(tmp_path / f"{name}.b", [backwards(s) for s in lines])
    oracle = make_sentences("med", 25, 70)
    write_lines(tmp_path / "oracle.a", oracle)
    write_lines(tmp_path / "oracle.b", [backwards(s) for s in oracle])
    return tmp_path


def _select(capsys, method, out, *extra):
    rc, err, _ = run_cli(["select", "--method", method, *extra, "--in-domain", "in.a", "--pool", "pool.a",
                          "--pool-target", "pool.b", "--top", "20", "--out", out], capsys)
    assert rc == 0, err


def test_nmt_judge_trains_a_model_on_each_selection_and_scores_it(judged, capsys):
    import sacrebleu

    from domainsift.nmt import translate
    _select(capsys, "moore-lewis", "ml", "--order", "1")
    _select(capsys, "random", "rnd")
    argv = ["downstream", "ml", "rnd", "--judge", "nmt", "--test", "test.b", "test.a", "--dev", "dev.b", "dev.a",
            "--reference-bitext", "oracle", "oracle.b", "oracle.a", "--whole-pool", "--out", "ds", *NMT]
    rc, err, out = run_cli(argv, capsys)
    assert rc == 0, err
    res = json.loads((judged / "ds" / "downstream.json").read_text())
    assert res["judge"] == "nmt" and res["direction"] == "other->scored" and res["n_test"] == 8
    rows = {r["name"]: r for r in res["rows"]}
    assert list(rows) == ["moore-lewis", "random", "oracle", "pool"]
    assert [rows[n]["n_pairs"] for n in rows] == [20, 20, 25, 90]
    assert rows["oracle"]["n_dev"] == 6 and rows["pool"]["n_dev"] == 5  # the pool holds the dev's last pair
    assert "downstream|model:marian" in res["signature"]["signature"] and "nrefs:1" in res["signature"]["bleu"]
    # each row's BLEU is its own model's, on the test bitext, in the B -> A direction
    test_b = (judged / "test.b").read_text().splitlines()
    test_a = (judged / "test.a").read_text().splitlines()
    for name in ("moore-lewis", "pool"):
        hyp = translate(rows[name]["model"], test_b, beam=2)
        assert rows[name]["bleu"] == round(sacrebleu.corpus_bleu(hyp, [test_a]).score, 4)
    assert "BLEU" in out and "oracle" in out
    # every row keeps its translations; chrF++ and the reference's cross-entropy per character; every row
    # but the baseline (random, by default) tested against it by paired bootstrap on those translations
    from domainsift.nmt.significance import paired_bootstrap
    assert res["baseline"] == "random" and "vs_baseline" not in rows["random"]
    base = (judged / "ds" / "models" / "random" / "test.hyp").read_text().split("\n")[:8]
    for name in ("moore-lewis", "oracle", "pool"):
        hyp = (judged / "ds" / "models" / name / "test.hyp").read_text().split("\n")[:8]
        assert rows[name]["bleu"] == round(sacrebleu.corpus_bleu(hyp, [test_a]).score, 4)
        assert rows[name]["chrfpp"] == round(sacrebleu.corpus_chrf(hyp, [test_a], word_order=2).score, 4)
        assert rows[name]["xent_per_char"] > 0
        vs = rows[name]["vs_baseline"]
        assert vs["baseline"] == "random" and vs["n_samples"] == 1000
        assert vs["bleu"] == paired_bootstrap(base, hyp, test_a)["bleu"]
        low, high = vs["bleu"]["ci95"]
        assert low <= vs["bleu"]["difference"] <= high and vs["bleu"]["decided"] == (low > 0 or high < 0)
    assert "vs random" in out
    rc, err, _ = run_cli(["report", "ds", "--out", "report.html"], capsys)
    assert rc == 0, err
    page = (judged / "report.html").read_text()
    assert "BLEU of the translation model trained on each" in page and f"{rows['pool']['bleu']:.2f}" in page
    assert "BLEU vs random" in page and "95% interval" in page

    # again: every model is found trained, and the same table comes out
    weights = judged / "ds" / "models" / "pool" / "model" / "model.safetensors"
    before = weights.stat().st_mtime_ns
    rc, err, _ = run_cli(argv, capsys)
    assert rc == 0, err
    assert weights.stat().st_mtime_ns == before
    again = json.loads((judged / "ds" / "downstream.json").read_text())
    assert [(r["name"], r["bleu"]) for r in again["rows"]] == [(r["name"], r["bleu"]) for r in res["rows"]]


def test_the_selection_as_pairs_and_reversed(judged, capsys):
    from domainsift.jobs.downstream import selection_bitext
    _select(capsys, "random", "rnd")
    fwd, rev = selection_bitext("rnd"), selection_bitext("rnd", reverse=True)
    chosen = (judged / "rnd" / "selected.a").read_text().splitlines()
    assert list(fwd.tgt) == chosen and list(fwd.src) == [backwards(s) for s in chosen]
    assert rev.src == fwd.tgt and rev.tgt == fwd.src


def test_nmt_judge_refusals_before_any_training(judged, capsys):
    _select(capsys, "random", "rnd")
    rc, err, _ = run_cli(["select", "--method", "random", "--in-domain", "in.a", "--pool", "pool.a", "--top", "20",
                          "--out", "mono"], capsys)
    assert rc == 0, err
    write_lines(judged / "leak.a", (judged / "pool.a").read_text().splitlines()[:4])
    write_lines(judged / "leak.b", [backwards(s) for s in (judged / "pool.a").read_text().splitlines()[:4]])
    cases = [
        (["rnd", "--whole-pool", "--test", "leak.b", "leak.a", "--dev", "dev.b", "dev.a"], "leak.b:4: repeats a sentence of"),
        (["mono", "--test", "test.b", "test.a", "--dev", "dev.b", "dev.a"], "not a selection of a bitext pool"),
        (["rnd", "--test", "test.b", "test.a"], "--dev SRC TGT"),
        (["rnd", "--test", "test.b", "test.a", "--dev", "dev.b", "dev.a", "--reference-bitext", "random", "oracle.b",
          "oracle.a"], "two rows are named 'random'"),
        (["rnd", "--test", "test.b", "test.a", "--dev", "dev.b", "dev.a", "--reference", "all=pool.a"],
         "--reference-bitext NAME SRC TGT"),
        (["rnd", "--test", "test.b", "test.a", "--dev", "dev.b", "dev.a", "--reference-bitext", "../up", "oracle.b",
          "oracle.a"], "'../up' cannot name a row"),
    ]
    for extra, message in cases:
        rc, err, _ = run_cli(["downstream", "--judge", "nmt", *extra, "--out", "ds", *NMT], capsys)
        assert rc == 2 and message in err, (extra, err)
        assert not (judged / "ds").exists()
    # the LM judge refuses what only the NMT judge takes
    rc, err, _ = run_cli(["downstream", "rnd", "--test", "test.a", "--dev", "dev.b", "dev.a", "--out", "lm"], capsys)
    assert rc == 2 and "--dev is an option of --judge nmt" in err
    rc, err, _ = run_cli(["downstream", "rnd", "--test", "test.a", "--nmt-backend", "ctranslate2", "--out", "lm"], capsys)
    assert rc == 2 and "--nmt-backend is an option of --judge nmt" in err


def test_nmt_judge_decodes_with_ctranslate2(judged, capsys):
    """--nmt-backend ctranslate2: the test is translated by the int8 conversion of each row's model; a rerun with
    the other backend decodes again and trains nothing."""
    pytest.importorskip("ctranslate2")
    import sacrebleu

    from domainsift.nmt import translate
    argv = ["downstream", "--judge", "nmt", "--test", "test.b", "test.a", "--dev", "dev.b", "dev.a",
            "--reference-bitext", "oracle", "oracle.b", "oracle.a", "--out", "ds", *NMT]
    rc, err, _ = run_cli([*argv, "--nmt-backend", "ctranslate2"], capsys)
    assert rc == 0, err
    res = json.loads((judged / "ds" / "downstream.json").read_text())
    row = res["rows"][0]
    assert res["backend"] == "ctranslate2" and res["signature"]["backend"] == "ctranslate2"
    hyp = translate(row["model"], (judged / "test.b").read_text().splitlines(), beam=2, backend="ctranslate2")
    assert row["bleu"] == round(sacrebleu.corpus_bleu(hyp, [(judged / "test.a").read_text().splitlines()]).score, 4)
    weights = judged / "ds" / "models" / "oracle" / "model" / "model.safetensors"
    before = weights.stat().st_mtime_ns
    rc, err, _ = run_cli(argv, capsys)
    assert rc == 0, err
    again = json.loads((judged / "ds" / "downstream.json").read_text())
    assert again["backend"] == "generate" and weights.stat().st_mtime_ns == before
    hyp = translate(row["model"], (judged / "test.b").read_text().splitlines(), beam=2)
    assert again["rows"][0]["bleu"] == round(sacrebleu.corpus_bleu(hyp, [(judged / "test.a").read_text().splitlines()]).score, 4)


def test_every_row_starts_from_the_same_model_with_init(judged, capsys):
    """--init: every row is trained on from one model (its weights and vocabulary), so the rows differ by
    their data alone; an unknown --baseline is refused before any training."""
    _select(capsys, "moore-lewis", "ml", "--order", "1")
    _select(capsys, "random", "rnd")
    rc, err, _ = run_cli(["nmt", "train", "--train", "oracle.b", "oracle.a", "--dev", "dev.b", "dev.a", "--out", "init",
                          "--epochs", "1", "--vocab", "60", "--max-tokens", "300", "--warmup", "5", "--lr", "5e-3"],
                         capsys)
    assert rc == 0, err
    base = ["downstream", "ml", "rnd", "--judge", "nmt", "--test", "test.b", "test.a", "--dev", "dev.b", "dev.a",
            "--out", "ds", *NMT]
    rc, err, _ = run_cli(base + ["--init", "init", "--baseline", "nothing"], capsys)
    assert rc == 2 and "--baseline 'nothing' names no row" in err and not (judged / "ds").exists(), err
    rc, err, _ = run_cli(base + ["--init", "init", "--baseline", "moore-lewis"], capsys)
    assert rc == 0, err
    from domainsift.rundir import model_identity
    want = model_identity(judged / "init")
    for name in ("moore-lewis", "random"):
        rec = json.loads((judged / "ds" / "models" / name / "nmt.json").read_text())
        assert rec["init_model"] == want
        assert (judged / "ds" / "models" / name / "spm.model").read_bytes() == (judged / "init" / "spm.model").read_bytes()
    res = json.loads((judged / "ds" / "downstream.json").read_text())
    assert res["baseline"] == "moore-lewis" and "vs_baseline" in res["rows"][1] and res["init"] == "init"


def test_nmt_score_compares_two_systems(judged, capsys):
    from domainsift.nmt.significance import paired_bootstrap
    ref = make_sentences("med", 30, 50)
    a = [" ".join(s.split()[:-1]) for s in ref]
    b = [s if k % 3 else " ".join(s.split()[1:]) for k, s in enumerate(ref)]
    for name, lines in (("ref.txt", ref), ("a.txt", a), ("b.txt", b)):
        write_lines(judged / name, lines)
    rc, err, out = run_cli(["nmt", "score", "--hyp", "b.txt", "--ref", "ref.txt", "--baseline", "a.txt", "--out",
                            "s.json"], capsys)
    assert rc == 0, err
    got = json.loads((judged / "s.json").read_text())["vs_baseline"]
    assert got["bleu"] == paired_bootstrap(a, b, ref)["bleu"] and "BLEU against a.txt" in out and "p = " in out


def test_the_rows_start_model_trained_once_on_a_bitext(judged, capsys):
    _select(capsys, "random", "rnd")
    base = ["downstream", "rnd", "--judge", "nmt", "--test", "test.b", "test.a", "--dev", "dev.b", "dev.a",
            "--whole-pool", "--out", "ds", *NMT]
    write_lines(judged / "leaky.a", (judged / "test.a").read_text().splitlines()[:2] + ["one more line here"])
    write_lines(judged / "leaky.b", (judged / "test.b").read_text().splitlines()[:2] + ["ereh enil erom eno"])
    rc, err, _ = run_cli(base + ["--init-bitext", "leaky.b", "leaky.a"], capsys)
    assert rc == 2 and "repeats a sentence of the start model's bitext" in err and not (judged / "ds").exists(), err
    rc, err, _ = run_cli(base + ["--init-bitext", "oracle.b", "oracle.a"], capsys)
    assert rc == 0, err
    from domainsift.rundir import model_identity
    want = model_identity(judged / "ds" / "init")
    for name in ("random", "pool"):
        assert json.loads((judged / "ds" / "models" / name / "nmt.json").read_text())["init_model"] == want
    before = (judged / "ds" / "init" / "model" / "model.safetensors").stat().st_mtime_ns
    rc, err, _ = run_cli(base + ["--init-bitext", "oracle.b", "oracle.a"], capsys)
    assert rc == 0, err
    assert (judged / "ds" / "init" / "model" / "model.safetensors").stat().st_mtime_ns == before  # trained once
