"""Paper 003's adaptation (GUDA, domainsift.nmt.guda and ``domainsift adapt``) on tiny models: each loss term
sees exactly the rows it should, a mixed training resumes to the same weights, and the whole adaptation
runs from the CLI and from Python."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import TINY_MARIAN, backwards, german, make_sentences, nmt_bitext, run_cli, tiny_nmt_settings, write_lines

pytest.importorskip("sacrebleu")
pytest.importorskip("sentencepiece")
torch = pytest.importorskip("torch")

TINY = TINY_MARIAN
_settings, _bitext = tiny_nmt_settings, nmt_bitext


def _model_and_batch():
    """A tiny model, its discriminators, and a batch of one row of each kind (pseudo, old, source)."""
    from domainsift.nmt.guda import OLD, PSEUDO, SOURCE, discriminators
    from domainsift.nmt.trainer import EOS, TrainSettings, build_model, collate
    torch.manual_seed(0)
    model = build_model(TrainSettings(arch=TINY).resolved(), 40)
    model.train(False)
    discs = discriminators(torch, 16)
    with torch.no_grad():  # weights far from their small initial values: every input moves what it reaches
        for p in list(model.parameters()) + list(discs.parameters()):
            p.normal_(0.0, 0.5)
    src = [[5, 6, 7, EOS], [8, 9, EOS], [10, 11, 12, 13, EOS]]
    tgt = [[7, 6, 5, EOS], [9, 8, EOS], [EOS]]
    return model, discs, src, tgt, np.array([PSEUDO, OLD, SOURCE]), collate


def _parts(model, discs, src, tgt, kinds, collate, mixing):
    from domainsift.nmt.guda import mixed_loss, row_weights
    batch = collate(torch, src, tgt, [0, 1, 2])
    with torch.no_grad():
        _, parts = mixed_loss(torch, model, discs, batch, row_weights(kinds, mixing), 0.0)
    return parts


def _mixing(losses="bi+s+t", **kw):
    from domainsift.nmt.guda import Mixing
    return Mixing(_bitext(["law"], 3, 1), ("new source",), losses, **kw)


def test_each_row_kind_enters_exactly_its_terms():
    """Eq. 4-6: a pseudo pair enters the NMT loss and the target discriminator; an old pair all three
    (weighted by the lambdas); a new source only the source discriminator. Changing a row that a term must
    not see leaves that term as it was."""
    from domainsift.nmt.guda import row_weights
    w = row_weights(np.array([0, 1, 2]), _mixing(lambda_old=0.5, lambda_src=2.0, lambda_tgt=3.0))
    assert w["nmt"].tolist() == [1.0, 0.5, 0.0]
    assert w["src"].tolist() == [0.0, 2.0, 1.0]
    assert w["tgt"].tolist() == [1.0, 3.0, 0.0]
    assert w["label"].tolist() == [1.0, 0.0, 1.0]
    off = row_weights(np.array([0, 1, 2]), _mixing("bi"))
    assert not off["src"].any() and not off["tgt"].any()
    assert row_weights(np.array([0, 1, 2]), _mixing("bi+t"))["src"].tolist() == [0.0, 0.0, 0.0]

    model, discs, src, tgt, kinds, collate = _model_and_batch()
    mixing = _mixing()
    base = _parts(model, discs, src, tgt, kinds, collate, mixing)
    assert base["nmt"] > 0 and base["src"] > 0 and base["tgt"] > 0
    # the pseudo row's source: the source discriminator does not see it (a back-translation is not X_new)
    moved = _parts(model, discs, [[20, 21, 22, 2]] + src[1:], tgt, kinds, collate, mixing)
    assert moved["src"] == pytest.approx(base["src"], abs=1e-7) and moved["nmt"] != pytest.approx(base["nmt"])
    # the source row's target: neither the NMT loss nor the target discriminator sees it
    moved = _parts(model, discs, src, tgt[:2] + [[30, 31, 2]], kinds, collate, mixing)
    assert moved["nmt"] == pytest.approx(base["nmt"], abs=1e-7)
    assert moved["tgt"] == pytest.approx(base["tgt"], abs=1e-7)
    # the source row's source: only the source discriminator sees it
    moved = _parts(model, discs, src[:2] + [[14, 15, 2]], tgt, kinds, collate, mixing)
    assert moved["nmt"] == pytest.approx(base["nmt"], abs=1e-7) and moved["tgt"] == pytest.approx(base["tgt"], abs=1e-7)
    assert moved["src"] != pytest.approx(base["src"])


def test_the_discriminator_terms_are_the_weighted_cross_entropy_of_mean_pooled_states():
    """Computed by hand from the model's states: padding is left out of the mean, and each row's binary
    cross-entropy is weighted by its lambda."""
    from domainsift.nmt.guda import row_weights
    model, discs, src, tgt, kinds, collate = _model_and_batch()
    mixing = _mixing(lambda_src=2.0)
    parts = _parts(model, discs, src, tgt, kinds, collate, mixing)
    batch = collate(torch, src, tgt, [0, 1, 2])
    with torch.no_grad():
        enc = model.model.encoder(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        states = enc.last_hidden_state
        pooled = torch.stack([states[k, :len(src[k])].mean(0) for k in range(3)])
        p = torch.sigmoid(discs["src"](pooled).squeeze(-1)).numpy()
    w = row_weights(kinds, mixing)
    labels = w["label"]
    want = -(w["src"] * (labels * np.log(p) + (1 - labels) * np.log(1 - p))).sum() / 3
    assert parts["src"] == pytest.approx(float(want), rel=1e-4)


def test_a_mixed_training_learns_and_resumes_to_the_same_weights(tmp_path):
    from domainsift.nmt import train_nmt
    from domainsift.nmt import trainer
    from domainsift.nmt.guda import Mixing
    pseudo, old, dev = _bitext(["med"], 30, 1), _bitext(["law", "it"], 20, 5), _bitext(["med", "law"], 4, 60)
    mixing = Mixing(old, tuple(make_sentences("med", 15, 40)))
    rec = train_nmt(pseudo, dev, tmp_path / "whole", _settings(epochs=3, patience=3), mixing=mixing)
    assert rec["guda"]["losses"] == "bi+s+t" and len(rec["guda"]["train_losses"]) == 3
    first, last = rec["guda"]["train_losses"][0], rec["guda"]["train_losses"][-1]
    assert last["nmt"] < first["nmt"] and last["src"] > 0 and last["tgt"] > 0
    assert "guda_losses:bi+s+t" in rec["signature"]

    real = trainer._checkpoint
    calls = []

    def stop_after_first(*a, **kw):  # the first epoch sealed, then the process "dies"
        real(*a, **kw)
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt

    trainer._checkpoint = stop_after_first
    try:
        with pytest.raises(KeyboardInterrupt):
            train_nmt(pseudo, dev, tmp_path / "killed", _settings(epochs=3, patience=3), mixing=mixing)
    finally:
        trainer._checkpoint = real
    again = train_nmt(pseudo, dev, tmp_path / "killed", _settings(epochs=3, patience=3), mixing=mixing)
    assert again["dev_loss"] == rec["dev_loss"] and again["guda"]["train_losses"] == rec["guda"]["train_losses"]
    a = (tmp_path / "whole" / "model" / "model.safetensors").read_bytes()
    b = (tmp_path / "killed" / "model" / "model.safetensors").read_bytes()
    assert a == b


def test_adapt_runs_end_to_end_from_the_cli(tmp_path, capsys, monkeypatch):
    """Select the new domain's lines from a target-language pool (Moore-Lewis over a target-language in-domain
    sample here), back-translate them with a reverse model, warm-start from the old-domain model, train
    with both discriminators, and score the new domain's test set."""
    monkeypatch.chdir(tmp_path)
    old = _bitext(["law", "it"], 25, 3)
    dev = _bitext(["law", "it"], 4, 70)
    test = _bitext(["med"], 5, 90)
    files = {}
    for name, b in (("old", old), ("dev", dev), ("test", test)):
        files[name] = [write_lines(tmp_path / f"{name}.a", b.src), write_lines(tmp_path / f"{name}.b", b.tgt)]
    new_src = write_lines(tmp_path / "new.a", make_sentences("med", 12, 20))
    pool = write_lines(tmp_path / "pool.b", [backwards(s) for d, i in (("med", 30), ("law", 31), ("it", 32))
                                             for s in make_sentences(d, 20, i)])
    sample = write_lines(tmp_path / "sample.b", [backwards(s) for s in make_sentences("med", 10, 21)])
    common = ["--old", *files["old"], "--dev", *files["dev"], "--new-source", new_src, "--nmt-epochs", "2",
              "--nmt-vocab", "60", "--nmt-max-tokens", "300", "--nmt-warmup", "5", "--nmt-lr", "5e-3",
              "--test", *files["test"], "--beam", "2"]
    rc, err, out = run_cli(["adapt", *common, "--method", "moore-lewis", "--in-domain", sample, "--pool", pool,
                            "--top", "15", "--out", "ad"], capsys)
    assert rc == 0, err
    rec = json.loads((tmp_path / "ad" / "adapt.json").read_text())
    assert rec["steps"]["select"]["n"] == 15 and rec["losses"] == "bi+s+t" and rec["start"] == "warm"
    assert 0 <= rec["test"]["bleu"] <= 100 and "adapt|model:marian" in rec["signature"]
    picked = (tmp_path / "ad" / "pseudo.tgt").read_text().splitlines()
    assert len(picked) == 15 and (tmp_path / "ad" / "pseudo.src").read_text().count("\n") == 15
    for d in ("reverse", "base", "model"):
        assert (tmp_path / "ad" / d / "nmt.json").is_file(), d
    model = json.loads((tmp_path / "ad" / "model" / "nmt.json").read_text())
    assert model["settings"]["preset"] == "proxy" and model["guda"]["n_source"] == 12
    assert "init_from" in model["signature"]  # the warm start

    # the same run again: every step is found done, nothing is trained again
    before = (tmp_path / "ad" / "model" / "model" / "model.safetensors").stat().st_mtime_ns
    rc, err, _ = run_cli(["adapt", *common, "--method", "moore-lewis", "--in-domain", sample, "--pool", pool,
                          "--top", "15", "--out", "ad"], capsys)
    assert rc == 0, err
    assert (tmp_path / "ad" / "model" / "model" / "model.safetensors").stat().st_mtime_ns == before
    # another selection: the steps it feeds are made again, the reverse and old-domain models kept
    reverse = (tmp_path / "ad" / "reverse" / "model" / "model.safetensors").stat().st_mtime_ns
    rc, err, _ = run_cli(["adapt", *common, "--method", "moore-lewis", "--in-domain", sample, "--pool", pool,
                          "--top", "12", "--out", "ad"], capsys)
    assert rc == 0, err
    assert len((tmp_path / "ad" / "pseudo.tgt").read_text().splitlines()) == 12
    assert json.loads((tmp_path / "ad" / "model" / "nmt.json").read_text())["n_train"] == 12
    assert (tmp_path / "ad" / "reverse" / "model" / "model.safetensors").stat().st_mtime_ns == reverse
    # another beam: the back-translation is made again (pseudo.json says how), the reverse model kept
    how = json.loads((tmp_path / "ad" / "pseudo.json").read_text())
    assert how["beam"] == 2 and how["backend"] == "generate"
    assert how["reverse"] == json.loads((tmp_path / "ad" / "reverse" / "nmt.json").read_text())["identity"]
    (tmp_path / "ad" / "pseudo.src").write_text("stale\n" * 12)  # a rerun that reused it would keep this
    rc, err, _ = run_cli(["adapt", *common[:-1], "3", "--method", "moore-lewis", "--in-domain", sample, "--pool",
                          pool, "--top", "12", "--out", "ad"], capsys)
    assert rc == 0, err
    assert json.loads((tmp_path / "ad" / "pseudo.json").read_text())["beam"] == 3
    assert "beam:3|backend:generate" in json.loads((tmp_path / "ad" / "adapt.json").read_text())["signature"]
    assert "stale" not in (tmp_path / "ad" / "pseudo.src").read_text()
    assert (tmp_path / "ad" / "reverse" / "model" / "model.safetensors").stat().st_mtime_ns == reverse

    # a cold start from a file of selected lines, the bitext loss alone (Table 5's BI), the reverse model reused
    rc, err, _ = run_cli(["adapt", *common, "--selected", "ad/pseudo.tgt", "--reverse", "ad/reverse", "--start",
                          "cold", "--losses", "bi", "--out", "cold"], capsys)
    assert rc == 0, err
    cold = json.loads((tmp_path / "cold" / "adapt.json").read_text())
    assert cold["start"] == "cold" and cold["losses"] == "bi" and not (tmp_path / "cold" / "reverse").exists()
    assert len((tmp_path / "cold" / "pseudo.src").read_text().splitlines()) == 12


def test_adapt_selects_on_the_in_domain_set_translated_by_the_old_domain_model(tmp_path):
    """``select_on="translated"`` (from Python): the old-domain model translates the in-domain set into the pool's
    language first, and a method that compares one language selects with those translations; a rerun keeps
    them, another beam makes them again."""
    from domainsift import PoolSource, Rule, RunSpec, read_corpus
    from domainsift.jobs.adapt import AdaptSettings, adapt
    from domainsift.nmt import translate
    old, dev = _bitext(["law", "it"], 25, 3), _bitext(["law", "it"], 4, 70)
    files = {}
    for name, b in (("old", old), ("dev", dev)):
        files[name] = (str(write_lines(tmp_path / f"{name}.a", b.src)), str(write_lines(tmp_path / f"{name}.b", b.tgt)))
    new_lines = make_sentences("med", 12, 20)
    new_src = write_lines(tmp_path / "new.a", new_lines)
    pool = write_lines(tmp_path / "pool.b", [backwards(s) for d, i in (("med", 30), ("law", 31), ("it", 32))
                                             for s in make_sentences(d, 20, i)])

    def run(beam):
        spec = RunSpec.single("moore-lewis", read_corpus([str(new_src)]), PoolSource.open([str(pool)]),
                              rule=Rule(top=10))
        return adapt(files["old"], files["dev"], str(new_src), tmp_path / "ad", selection=spec,
                     settings=AdaptSettings(train=_settings(), beam=beam, select_on="translated"))

    rec = run(2)
    query = (tmp_path / "ad" / "query.tgt").read_text().splitlines()
    assert query == translate(tmp_path / "ad" / "base", new_lines, beam=2)  # the old-domain model's translations
    assert rec["steps"]["query"]["n"] == 12 and rec["steps"]["base"] == str(tmp_path / "ad" / "base")
    assert "select_on:translated" in rec["signature"] and rec["steps"]["select"]["n"] == 10
    sel = json.loads((tmp_path / "ad" / "select" / "signature.json").read_text())
    assert sel["in_domain"] == [str(tmp_path / "ad" / "query.tgt")]  # the selection read the translations
    made = (tmp_path / "ad" / "query.tgt").stat().st_mtime_ns
    run(2)
    assert (tmp_path / "ad" / "query.tgt").stat().st_mtime_ns == made
    (tmp_path / "ad" / "query.tgt").write_text("stale\n" * 12)  # a rerun that reused it would keep this
    run(3)
    assert json.loads((tmp_path / "ad" / "query.json").read_text())["beam"] == 3
    assert (tmp_path / "ad" / "query.tgt").read_text().splitlines() == translate(tmp_path / "ad" / "base", new_lines,
                                                                                 beam=3)


def test_adapt_points_a_one_language_method_at_select_on_translated(tmp_path, capsys, monkeypatch):
    """The in-domain set in the source language against a target-language pool: a method that compares one
    language is refused before any training, and the refusal names --select-on translated."""
    pytest.importorskip("py3langid")
    monkeypatch.chdir(tmp_path)
    old = _bitext(["law"], 5, 3)
    a, b = write_lines(tmp_path / "o.a", old.src), write_lines(tmp_path / "o.b", old.tgt)
    d1, d2 = write_lines(tmp_path / "d.a", ["x y"]), write_lines(tmp_path / "d.b", ["y x"])
    ind = write_lines(tmp_path / "new.de", german(30, 4))
    pool = write_lines(tmp_path / "pool.en", make_sentences("med", 40, 1) + make_sentences("law", 40, 2))
    rc, err, _ = run_cli(["adapt", "--old", a, b, "--dev", d1, d2, "--method", "moore-lewis", "--in-domain", ind,
                          "--pool", pool, "--top", "5", "--out", "o"], capsys)
    assert rc == 2 and "looks German" in err and "--select-on translated" in err and err.count("\n") == 0, err
    assert not list((tmp_path / "o").rglob("nmt.json"))  # nothing trained


@pytest.mark.parametrize("extra,says", [
    (["--select-on", "translated"], "--selected FILE is already chosen"),
    (["--select-on", "sideways"], "invalid choice"),
    (["--losses", "bi+x"], "argument --losses: invalid choice"),
    (["--lambda-src", "-1"], "--lambda-src must be a number at least 0"),
    (["--start", "cold", "--base", "x"], "--base is the warm start's model"),
    (["--start", "lukewarm"], "invalid choice"),
    (["--reverse", "."], "not a model folder domainsift nmt wrote"),
    (["--base", "."], "not a model folder domainsift nmt wrote"),
    (["--nmt-backend", "nope"], "invalid choice"),
])
def test_adapt_refuses_bad_settings_before_any_work(extra, says, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    old = _bitext(["law"], 5, 3)
    a, b = write_lines(tmp_path / "o.a", old.src), write_lines(tmp_path / "o.b", old.tgt)
    d1, d2 = write_lines(tmp_path / "d.a", ["x y"]), write_lines(tmp_path / "d.b", ["y x"])
    sel = write_lines(tmp_path / "sel.b", ["a b c"])
    src = write_lines(tmp_path / "new.a", ["c b a"])
    rc, err, _ = run_cli(["adapt", "--old", a, b, "--dev", d1, d2, "--new-source", src, "--selected", sel,
                          *extra, "--out", "o"], capsys)
    assert rc == 2 and says in err
    assert not (tmp_path / "o").exists()


def test_every_batch_gives_each_discriminator_both_domains():
    """Paper 003's discriminators learn new against old: every batch holds old pairs, pseudo pairs (the
    target discriminator's new rows) and new-domain sources (the source discriminator's), though the sources'
    one-token targets sorted them into batches of their own before; no row is dropped or repeated."""
    from domainsift.nmt.guda import OLD, PSEUDO, SOURCE, batches
    rng = np.random.default_rng(0)
    mixing = _mixing("bi+s+t")
    n_p, n_o, n_s = 60, 200, 40
    src = [[5] * int(rng.integers(3, 30)) for _ in range(n_p + n_o + n_s)]
    tgt = [[6] * int(rng.integers(3, 30)) for _ in range(n_p + n_o)] + [[2]] * n_s
    kinds = np.array([PSEUDO] * n_p + [OLD] * n_o + [SOURCE] * n_s)
    for epoch in range(3):
        got = batches(src, tgt, kinds, 300, np.random.default_rng(epoch), mixing)
        assert len(got) > 1
        assert sorted(np.concatenate(got).tolist()) == list(range(len(src)))
        for b in got:
            assert set(kinds[b].tolist()) == {PSEUDO, OLD, SOURCE}
    # without the source discriminator, no new source needs a place in every batch
    bi_t = batches(src[:n_p + n_o], tgt[:n_p + n_o], kinds[:n_p + n_o], 300, np.random.default_rng(0),
                   _mixing("bi+t"))
    assert all(set(kinds[b].tolist()) == {PSEUDO, OLD} for b in bi_t)
