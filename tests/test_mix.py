"""Several targets in one run: select --target NAME=FILE ... --mix NAME=W,... (domainsift.jobs.mix)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import make_sentences, run_cli, write_lines

from domainsift._internal.errors import DomainsiftError
from domainsift.pipeline.mix import assign, parse_mix, parse_targets, quotas


def test_every_line_goes_to_one_target_and_every_quota_is_met():
    rng = np.random.default_rng(0)
    same = rng.random(200)
    got = assign({"a": same, "b": same.copy(), "c": rng.random(200)}, {"a": 50, "b": 50, "c": 60})
    assert [len(got[t]) for t in "abc"] == [50, 50, 60]
    all_ = np.concatenate(list(got.values()))
    assert len(set(all_.tolist())) == len(all_) == 160
    # a line's strongest claim wins: the best line of "a" (ranked first there) goes to "a"
    assert int(np.argmax(same)) in got["a"].tolist()


def test_a_target_that_loses_its_best_lines_reaches_deeper():
    s = np.arange(100, dtype=float)
    got = assign({"a": s, "b": s.copy()}, {"a": 90, "b": 10})
    assert len(got["a"]) == 90 and len(got["b"]) == 10
    assert not set(got["a"].tolist()) & set(got["b"].tolist())


def test_a_barred_line_goes_to_no_target_and_every_quota_is_still_met():
    s = np.arange(100, dtype=float)
    barred = np.zeros(100, dtype=bool)
    barred[90:] = True  # both targets' ten best lines
    got = assign({"a": s, "b": s.copy()}, {"a": 20, "b": 10}, barred)
    assert len(got["a"]) == 20 and len(got["b"]) == 10
    assert not (set(got["a"].tolist()) | set(got["b"].tolist())) & set(range(90, 100))


def test_assign_can_say_the_order_it_granted_the_lines_in():
    rng = np.random.default_rng(1)
    scores = {"a": rng.random(300), "b": rng.random(300)}
    got, granted = assign(scores, {"a": 40, "b": 25}, order=True)
    assert {t: p.tolist() for t, p in got.items()} == {t: p.tolist() for t, p in assign(scores, {"a": 40, "b": 25}).items()}
    assert sorted(granted.tolist()) == sorted(np.concatenate(list(got.values())).tolist())
    for t in "ab":  # within a target, granted best first
        assert [p for p in granted.tolist() if p in set(got[t].tolist())] == got[t].tolist()


def test_quotas_and_mix_parsing():
    assert quotas({"a": 0.5, "b": 0.3, "c": 0.2}, 11) == {"a": 6, "b": 3, "c": 2}
    assert sum(quotas({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}, 100).values()) == 100
    assert parse_mix("a=3,b=1", ["a", "b"]) == {"a": 0.75, "b": 0.25}
    assert parse_targets(["a=x.txt", "b=y.txt", "a=z.txt"]) == {"a": ["x.txt", "z.txt"], "b": ["y.txt"]}
    for bad, match in (("a=1", "missing: b"), ("a=1,b=0", "positive"), ("a=1,b=1,c=1", "not a target: c"),
                       ("a=1,a=2", "twice")):
        with pytest.raises(DomainsiftError, match=match):
            parse_mix(bad, ["a", "b"])
    with pytest.raises(DomainsiftError, match="NAME=FILE"):
        parse_targets(["nofile"])


def _data(tmp_path):
    return {"in_med": write_lines(tmp_path / "in_med.txt", make_sentences("med", 30, 21)),
            "in_law": write_lines(tmp_path / "in_law.txt", make_sentences("law", 30, 22)),
            "pool": [write_lines(tmp_path / f"{d}.txt", make_sentences(d, 40, 30 + i))
                     for i, d in enumerate(["med", "law", "it"])]}


def _two_targets(tmp_path, capsys, monkeypatch, *rule, out="mix"):
    """select --method cosine --target med=... --target law=... over the three-domain pool, ``rule`` added."""
    d = _data(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOMAINSIFT_CACHE", str(tmp_path / "cache"))
    return run_cli(["select", "--method", "cosine", "--target", f"med={d['in_med']}", "--target",
                    f"law={d['in_law']}", "--pool", *d["pool"], *rule, "--out", str(tmp_path / out)], capsys)


def test_select_two_targets_in_one_run(tmp_path, capsys, monkeypatch):
    out = tmp_path / "mix"
    rc, err, so = _two_targets(tmp_path, capsys, monkeypatch, "--top", "40", "--mix", "med=3,law=1")
    assert rc == 0, err
    meta = json.loads((out / "mix.json").read_text())
    assert {n: t["n_selected"] for n, t in meta["targets"].items()} == {"med": 30, "law": 10}
    rows = [line.split("\t", 4) for line in (out / "selected.mix.tsv").read_text().splitlines()[1:]]
    assert len(rows) == 40 and len({(f, ln) for _, f, ln, _, _ in rows}) == 40  # one target a line
    # each target's lines come from its own domain's file (the domains share no word)
    for name, f, _, _, _ in rows:
        assert f.endswith(f"{name}.txt")
    for name in ("med", "law"):
        sel = json.loads((out / "targets" / name / "selection.json").read_text())
        assert sel["n_selected"] == meta["targets"][name]["n_selected"]
    assert "med: 30 / 30 lines" in so
    assert "with cosine (the pool encoded once, a centroid per target)" in so
    # the mixture's folder where one run's is asked for: report takes its targets, evaluate names them
    rc, err, so = run_cli(["report", str(out), "--out", str(tmp_path / "mix.html")], capsys)
    assert rc == 0 and "report over 2 run(s)" in so, err
    rc, err, _ = run_cli(["evaluate", str(out), "--gold", str(_data(tmp_path)["pool"][0])], capsys)
    assert rc == 2 and f"several targets in one run (mix.json); give one target's folder, {out / 'targets'}/NAME" in err


def test_excluded_lines_go_to_no_target_and_the_quotas_are_still_met(tmp_path, capsys, monkeypatch):
    d = _data(tmp_path)
    med = (tmp_path / "med.txt").read_text().splitlines()
    test = write_lines(tmp_path / "test.txt", [t.upper() for t in med[:25]])  # compared after normalising
    rc, err, so = _two_targets(tmp_path, capsys, monkeypatch, "--top", "40", "--mix", "med=3,law=1",
                               "--exclude", str(test))
    assert rc == 0, err
    out = tmp_path / "mix"
    meta = json.loads((out / "mix.json").read_text())
    assert {n: t["n_selected"] for n, t in meta["targets"].items()} == {"med": 30, "law": 10}
    texts = [line.split("\t", 4)[4] for line in (out / "selected.mix.tsv").read_text().splitlines()[1:]]
    assert len(texts) == 40 and not set(texts) & set(med[:25])
    assert meta["exclude"]["lines_excluded"] >= 15  # med's 30 could not all come from its other 15 lines
    assert "select_exclude:exact:" in meta["signature"] and f"{meta['exclude']['lines_excluded']} lines of --exclude" in so
    for name in ("med", "law"):
        sig = json.loads((out / "targets" / name / "signature.json").read_text())
        assert sig["selection"]["exclude"]["files"] == [str(test)]
    assert d["pool"][0].read_text().splitlines() == med  # the pool is untouched


@pytest.mark.parametrize("mode", ["exact", "near"])
def test_no_two_lines_of_a_mixture_duplicate_each_other(tmp_path, capsys, monkeypatch, mode):
    """--dedup with --target: copies of med and law lines (case and a full stop changed: exact duplicates; a
    letter added: near ones) sit in a fourth pool file. Without --dedup the mixture holds line and copy; with
    it, no two of its lines, of one target or of two, are duplicates, and every quota is still met."""
    from domainsift.dedup import normalise
    d = _data(tmp_path)
    originals = [x for f in ("med", "law") for x in (tmp_path / f"{f}.txt").read_text().splitlines()[:25]]
    copies = [x.upper() + "." if mode == "exact" else x + " x" for x in originals]
    extra = write_lines(tmp_path / "copies.txt", copies)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOMAINSIFT_CACHE", str(tmp_path / "cache"))

    def mix(out, *flags):
        rc, err, so = run_cli(["select", "--method", "cosine", "--target", f"med={d['in_med']}", "--target",
                               f"law={d['in_law']}", "--pool", *d["pool"], str(extra), "--top", "50", *flags,
                               "--out", str(tmp_path / out)], capsys)
        assert rc == 0, err
        rows = [line.split("\t", 4) for line in (tmp_path / out / "selected.mix.tsv").read_text().splitlines()[1:]]
        return json.loads((tmp_path / out / "mix.json").read_text()), [r[4] for r in rows], so

    def pairs(texts):  # (original, copy) pairs both in the selection
        return sum(o in texts and c in texts for o, c in zip(originals, copies))

    _, plain, _ = mix("plain")
    assert pairs(plain) > 0  # the test can fail: without --dedup the mixture holds copies
    meta, texts, so = mix("dedup", "--dedup", mode)
    assert {n: t["n_selected"] for n, t in meta["targets"].items()} == {"med": 25, "law": 25}
    assert pairs(texts) == 0 and len(texts) == 50
    if mode == "exact":
        assert len({normalise(x) for x in texts}) == 50
    removed = meta["dedup"]["duplicates_removed"]
    assert removed >= pairs(plain) and f"{removed} duplicates of lines with a stronger claim" in so
    word = "exact" if mode == "exact" else "near@0.8"
    assert f"select_dedup:{word}" in meta["signature"]
    for name in ("med", "law"):
        sel = json.loads((tmp_path / "dedup" / "targets" / name / "selection.json").read_text())
        sig = json.loads((tmp_path / "dedup" / "targets" / name / "signature.json").read_text())
        assert sel["dedup"]["mode"] == mode and f"select_dedup:{word}" in sig["signature"]
    assert sum(json.loads((tmp_path / "dedup" / "targets" / n / "selection.json").read_text())["dedup"]
               ["duplicates_removed"] for n in ("med", "law")) == removed


def test_auto_gives_each_target_its_estimated_share(tmp_path, capsys, monkeypatch):
    out = tmp_path / "mix"
    rc, err, _ = _two_targets(tmp_path, capsys, monkeypatch, "--fraction", "auto")
    assert rc == 0, err
    meta = json.loads((out / "mix.json").read_text())
    for t in meta["targets"].values():
        assert t["quota"] == max(1, int(round(t["share"]["share"] * 120)))
        assert abs(t["share"]["share"] - 1 / 3) < 0.1
    rc, err, _ = _two_targets(tmp_path, capsys, monkeypatch, "--fraction", "auto", "--mix", "med=1,law=1", out="m2")
    assert rc != 0 and "--mix" in err
    rc, err, _ = _two_targets(tmp_path, capsys, monkeypatch, "--in-domain", str(tmp_path / "in_law.txt"),
                              "--top", "5", out="m3")
    assert rc != 0 and "--in-domain" in err


def test_finetune_targets_share_one_encoder_a_head_each(tmp_path, tiny_models):
    """finetune over several targets trains one encoder with a head per target, once: each target's scores
    are its head's probabilities, the same whether encoded for it or read from the batches another
    target's run encoded; the signature says which head of which targets ran; nothing of the shared
    fit is left behind."""
    import domainsift as ds
    from domainsift.select.finetune import FinetuneSelector
    d = _data(tmp_path)
    targets = {n: ds.read_corpus([d[f"in_{n}"]]) for n in ("med", "law")}
    params = {"model": tiny_models["bert"], "epochs": 2, "batch_size": 8, "backend": "torch", "progress": False}
    from domainsift.select.train import EncoderClassifier
    fits, encoded = [], []
    real, predict = FinetuneSelector.fit_targets, EncoderClassifier.predict
    FinetuneSelector.fit_targets = lambda self, *a, **kw: (fits.append(1), real(self, *a, **kw))[1]
    EncoderClassifier.predict = lambda self, texts, **kw: (encoded.append(len(texts)), predict(self, texts, **kw))[1]
    try:
        meta = ds.run(ds.RunSpec("finetune", targets, ds.PoolSource.open(d["pool"]), tmp_path / "mix", rule=ds.Rule(top=40), params=params, seed=0)).mix
    finally:
        FinetuneSelector.fit_targets, EncoderClassifier.predict = real, predict
    assert fits == [1]                                     # one fit for both targets
    assert encoded.count(120) == 1                         # the pool encoded once: the second target reads it
    assert not (tmp_path / "mix" / ".resume").exists()   # the shared fit lives on in the targets' scores only
    from domainsift.rundir import load_scores
    runs = {n: load_scores(tmp_path / "mix" / "targets" / n) for n in targets}
    sigs = {n: json.loads((tmp_path / "mix" / "targets" / n / "signature.json").read_text()) for n in targets}
    assert "|shared:head med of med+law|" in sigs["med"]["signature"]
    assert "|shared:head law of med+law|" in sigs["law"]["signature"]
    # each head is measured on the same held-out lines: 6 of the 60 positives (both targets') and 3 of 30 negatives
    assert sigs["med"]["classifier_holdout"]["n"] == sigs["law"]["classifier_holdout"]["n"] == 6 + 3
    # the heads, recomputed from a fresh fit of the same seed, give the saved scores
    multi = FinetuneSelector(**params).fit_targets(targets, ds.read_corpus(d["pool"]))
    lines = {str(f): open(f, encoding="utf-8").read().splitlines() for f in d["pool"]}
    run = runs["med"]
    assert np.array_equal(run.id_array, runs["law"].id_array)
    texts = [lines[f][ln - 1] for f, ln in run.ids]
    p = multi.classifier_.predict(texts)
    assert p.shape == (120, 2)
    np.testing.assert_allclose(runs["med"].scores, p[:, 0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(runs["law"].scores, p[:, 1], rtol=0, atol=1e-6)
    assert sum(t["n_selected"] for t in meta["targets"].values()) == 40


def test_cosine_targets_share_one_encoding_of_the_pool_without_the_cache(tmp_path, tiny_models):
    """cosine over several targets encodes the pool once even with the vector cache off: the first
    target's run scores each shard against every centroid and the others read those scores; each
    target's scores are the same bits as its run alone, and its signature says which centroid ran."""
    import domainsift as ds
    from domainsift.rundir import load_scores
    from domainsift.select.cosine import CosineSelector
    d = _data(tmp_path)
    targets = {n: ds.read_corpus([d[f"in_{n}"]]) for n in ("med", "law")}
    params = {"embedder": tiny_models["bert"], "backend": "torch", "progress": False, "cache_dir": ""}
    encoded = []
    real = CosineSelector._embed
    CosineSelector._embed = lambda self, texts: (encoded.append(len(list(texts))), real(self, texts))[1]
    try:
        meta = ds.run(ds.RunSpec("cosine", targets, ds.PoolSource.open(d["pool"]), tmp_path / "mix", rule=ds.Rule(top=40), params=params, seed=0)).mix
    finally:
        CosineSelector._embed = real
    assert encoded.count(120) == 1                         # the pool encoded once for both targets
    assert sorted(encoded) == [30, 30, 120]                # and each in-domain set once
    assert "shared_fit" in meta
    assert not (tmp_path / "mix" / ".resume").exists()
    for n in targets:
        alone = tmp_path / f"alone-{n}"
        ds.run(ds.RunSpec.single("cosine", targets[n], ds.PoolSource.open(d["pool"]), alone, params=params, seed=0)).signature
        mixed = tmp_path / "mix" / "targets" / n
        assert (mixed / "scores.npy").read_bytes() == (alone / "scores.npy").read_bytes()
        assert np.array_equal(load_scores(mixed).id_array, load_scores(alone).id_array)
        sig = json.loads((mixed / "signature.json").read_text())["signature"]
        assert f"|shared:head {n} of med+law|" in sig
        assert "shared" not in json.loads((alone / "signature.json").read_text())["signature"]


def test_cosine_over_an_embedder_that_learns_its_space_fits_each_target_alone(tmp_path):
    """tf-idf learns its space from the pool; its fit is not saved as a folder, so a mixture does not
    share it: each target fits it on the same sample (one space), as one target's run does."""
    import domainsift as ds
    from domainsift.select.cosine import CosineSelector
    assert CosineSelector(embedder="tfidf").fits_targets is False and CosineSelector().fits_targets is True
    d = _data(tmp_path)
    targets = {n: ds.read_corpus([d[f"in_{n}"]]) for n in ("med", "law")}
    meta = ds.run(ds.RunSpec("cosine", targets, ds.PoolSource.open(d["pool"]), tmp_path / "mix", rule=ds.Rule(top=40), params={"embedder": "tfidf", "cache_dir": "", "progress": False}, seed=0)).mix
    assert "shared_fit" not in meta and sum(t["n_selected"] for t in meta["targets"].values()) == 40
    sig = json.loads((tmp_path / "mix" / "targets" / "med" / "signature.json").read_text())["signature"]
    assert "|shared:" not in sig


def test_auto_targets_encode_the_share_sample_once(tmp_path, tiny_models, monkeypatch):
    """--fraction auto over several targets: every target's share is estimated on the same pool sample,
    encoded once (the cache off, so nothing but the mixture can share it); each target's estimate is
    the one its run alone makes."""
    import domainsift as ds
    from domainsift.embed import EmbedConfig
    d = _data(tmp_path)
    targets = {n: ds.read_corpus([d[f"in_{n}"]]) for n in ("med", "law")}
    params = {"embedder": tiny_models["bert"], "backend": "torch", "progress": False, "cache_dir": ""}
    encoded = []
    build = EmbedConfig.build

    def counting_build(self, *a, **kw):
        enc = build(self, *a, **kw)
        encode = enc.encode
        enc.encode = lambda texts, *x, **y: (encoded.append(len(list(texts))), encode(texts, *x, **y))[1]
        return enc
    monkeypatch.setattr(EmbedConfig, "build", counting_build)
    meta = ds.run(ds.RunSpec("cosine", targets, ds.PoolSource.open(d["pool"]), tmp_path / "mix", rule=ds.Rule(fraction="auto"), params=params, seed=0)).mix
    # the pool (120 lines) once for the scores and its share sample (the whole pool here) once for the
    # estimates; each in-domain set (30 lines) once for its centroid and once for its estimate
    assert sorted(encoded) == [30, 30, 30, 30, 120, 120]
    monkeypatch.setattr(EmbedConfig, "build", build)
    for n in targets:
        alone = tmp_path / f"alone-{n}"
        ds.run(ds.RunSpec.single("cosine", targets[n], ds.PoolSource.open(d["pool"]), alone, params=params, seed=0, estimate_share=True)).signature
        assert json.loads((alone / "share.json").read_text())["share"] == meta["targets"][n]["share"]["share"]


def test_a_killed_finetune_mixture_resumes_without_fitting_again(tmp_path, capsys, monkeypatch, tiny_models):
    """Killed after the shared fit and the first target's scores, the same command loads the saved fit
    (no second training) and ends with the bytes of a run never killed."""
    from conftest import run_killed
    from domainsift.select.finetune import FinetuneSelector
    d = _data(tmp_path)
    monkeypatch.chdir(tmp_path)
    argv = ["select", "--method", "finetune", "--model", tiny_models["bert"], "--epochs", "2", "--batch-size", "8",
            "--backend", "torch", "--target", f"med={d['in_med']}", "--target", f"law={d['in_law']}",
            "--pool", *map(str, d["pool"]), "--top", "40"]
    rc, err, so = run_cli([*argv, "--out", "whole"], capsys)
    assert rc == 0, err
    assert "(one fit, a head per target)" in so
    run_killed([*argv, "--out", "killed"], "domainsift.engine.shards:write_shard", 1, tmp_path)
    assert list((tmp_path / "killed" / ".resume").glob("fit-*/classifier.json"))  # the shared fit was kept
    fits = []
    real = FinetuneSelector.fit_targets
    monkeypatch.setattr(FinetuneSelector, "fit_targets", lambda self, *a, **kw: (fits.append(1), real(self, *a, **kw))[1])
    rc, err, _ = run_cli([*argv, "--out", "killed"], capsys)
    assert rc == 0, err
    assert fits == []
    for name in ("med", "law"):
        for f in ("scores.npy", "selected.ids.tsv"):
            assert (tmp_path / "killed" / "targets" / name / f).read_bytes() == \
                (tmp_path / "whole" / "targets" / name / f).read_bytes()
    assert (tmp_path / "killed" / "selected.mix.tsv").read_bytes() == (tmp_path / "whole" / "selected.mix.tsv").read_bytes()


def test_a_killed_cosine_mixture_resumes_without_encoding_the_pool_again(tmp_path, capsys, monkeypatch,
                                                                         tiny_models):
    """Killed after the first shard's block was written for both targets and the second shard's for one,
    with the vector cache off, the same command encodes the first shard not again (each shard is one
    block for every target: the second is encoded again, once), and ends with the bytes of a run never
    killed."""
    from conftest import run_killed
    from domainsift.select.cosine import CosineSelector
    d = _data(tmp_path)
    monkeypatch.chdir(tmp_path)
    argv = ["select", "--method", "cosine", "--model", tiny_models["bert"], "--backend", "torch", "--cache", "",
            "--target", f"med={d['in_med']}", "--target", f"law={d['in_law']}", "--pool", *map(str, d["pool"]),
            "--top", "40", "--shard-size", "50"]
    rc, err, _ = run_cli([*argv, "--out", "whole"], capsys)
    assert rc == 0, err
    run_killed([*argv, "--out", "killed"], "domainsift.engine.shards:write_shard", 3, tmp_path)
    encoded = []
    real = CosineSelector._embed
    monkeypatch.setattr(CosineSelector, "_embed", lambda self, texts: (encoded.append(len(list(texts))),
                                                                        real(self, texts))[1])
    rc, err, _ = run_cli([*argv, "--out", "killed"], capsys)
    assert rc == 0, err
    assert sorted(n for n in encoded if n in (20, 50)) == [20, 50]  # shard 0 not again; shards 1 and 2 once each
    for name in ("med", "law"):
        for f in ("scores.npy", "selected.ids.tsv"):
            assert (tmp_path / "killed" / "targets" / name / f).read_bytes() == \
                (tmp_path / "whole" / "targets" / name / f).read_bytes()
    assert (tmp_path / "killed" / "selected.mix.tsv").read_bytes() == (tmp_path / "whole" / "selected.mix.tsv").read_bytes()


def test_a_shared_finetune_fit_runs_half_the_epochs_unless_told(tmp_path, tiny_models):
    """A shared fit's epoch holds every target's positives, so it defaults to 5 epochs (one target's: 10);
    the signature says what ran, and a given --epochs is kept."""
    import domainsift as ds
    d = _data(tmp_path)
    targets = {n: ds.read_corpus([d[f"in_{n}"]]) for n in ("med", "law")}
    base = {"model": tiny_models["bert"], "batch_size": 8, "backend": "torch", "progress": False}
    for given, ran in (({}, 5), ({"epochs": 1}, 1)):
        out = tmp_path / f"mix{ran}"
        ds.run(ds.RunSpec("finetune", targets, ds.PoolSource.open(d["pool"]), out, rule=ds.Rule(top=20), params={**base, **given})).mix
        for n in targets:
            sig = json.loads((out / "targets" / n / "signature.json").read_text())["signature"]
            assert f"|epochs:{ran}|" in sig
    assert ds.get_selector("finetune", model=tiny_models["bert"]).epochs == 10  # one target's default stays


def test_finetune_targets_sharing_one_fit_work_under_the_cascade(tmp_path, tiny_models):
    """Under --cascade each target's student learns from its head, which scores only that target's candidates."""
    import domainsift as ds
    from domainsift.engine import Cascade
    d = _data(tmp_path)
    targets = {n: ds.read_corpus([d[f"in_{n}"]]) for n in ("med", "law")}
    meta = ds.run(ds.RunSpec("finetune", targets, ds.PoolSource.open(d["pool"]), tmp_path / "mix", rule=ds.Rule(top=40), cascade=Cascade(share=0.1), params={"model": tiny_models["bert"], "epochs": 1, "batch_size": 8, "progress": False})).mix
    assert "shared_fit" in meta and sum(t["n_selected"] for t in meta["targets"].values()) == 40
    for n in targets:
        sig = json.loads((tmp_path / "mix" / "targets" / n / "signature.json").read_text())["signature"]
        assert f"|shared:head {n} of med+law|" in sig and "|cascade:student(" in sig


@pytest.mark.parametrize("method,rule", [("cosine", {"fraction": "auto"}), ("finetune", {"top": 40})])
def test_a_mixture_counts_and_samples_the_pool_once(tmp_path, tiny_models, monkeypatch, method, rule):
    """One counting pass serves every target's run and the shared fit (k targets: one pass, not k + 1);
    a --top larger than the pool is refused after that pass, before any fit."""
    import domainsift as ds
    from domainsift.io.source import PoolSource
    d = _data(tmp_path)
    monkeypatch.setenv("DOMAINSIFT_CACHE", str(tmp_path / "cache"))
    targets = {n: ds.read_corpus([d[f"in_{n}"]]) for n in ("med", "law")}
    params = ({"embedder": tiny_models["bert"], "backend": "torch", "progress": False} if method == "cosine" else
              {"model": tiny_models["bert"], "epochs": 1, "batch_size": 8, "backend": "torch", "progress": False})
    scans = []
    real = PoolSource.scan
    monkeypatch.setattr(PoolSource, "scan", lambda self, *a, **kw: (scans.append(1), real(self, *a, **kw))[1])
    meta = ds.run(ds.RunSpec(method, targets, ds.PoolSource.open(d["pool"]), tmp_path / "mix", rule=ds.Rule(**{k: v for k, v in rule.items() if k in ['dedup', 'dedup_threshold', 'exclude', 'fraction', 'top']}), params=params, **{k: v for k, v in rule.items() if k not in ['dedup', 'dedup_threshold', 'exclude', 'fraction', 'top']})).mix
    assert scans == [1]
    assert all(t["n_selected"] > 0 for t in meta["targets"].values())
    fitted = []
    from domainsift.select.finetune import FinetuneSelector
    monkeypatch.setattr(FinetuneSelector, "fit_targets", lambda *a, **kw: fitted.append(1))
    with pytest.raises(DomainsiftError, match="cannot select 121 lines from a pool of 120"):
        ds.run(ds.RunSpec(method, targets, ds.PoolSource.open(d["pool"]), tmp_path / "big", rule=ds.Rule(top=121), params=params)).mix
    assert fitted == []


@pytest.mark.parametrize("case", ["cosine-minilm", "finetune-cascade"])
def test_three_targets_are_one_run(tmp_path, capsys, monkeypatch, tiny_models, case):
    """A mixture of three targets is one run, not three in lockstep: the method's selector is built
    once (every target a column of its one fit), one claim, one fingerprint, one fit, and under
    ``--cascade`` one student, a head per target (its sample scored once, the pool tokenized once, its
    static vectors distilled once from the shared encoder);
    choosing reads no ``scores.npy`` this run wrote."""
    import domainsift.pipeline.score as score_mod
    import domainsift.select as select_mod
    from domainsift import rundir
    d = _data(tmp_path)
    d["in_it"] = write_lines(tmp_path / "in_it.txt", make_sentences("it", 30, 23))
    monkeypatch.chdir(tmp_path)
    method = case.split("-")[0]
    opts = (["--model", "minilm", "--cache", ""] if method == "cosine" else
            ["--model", tiny_models["bert"], "--epochs", "2", "--batch-size", "8", "--backend", "torch", "--cascade"])
    built, claims, prints, fits, reads = [], [], [], [], []
    real_get, real_claim, real_print = select_mod.get_selector, rundir.claim, score_mod.fingerprint
    real_fit, real_load = select_mod.selector_class(method).fit_targets, np.load

    def get(name, **kw):
        built.append(name)
        return real_get(name, **kw)
    monkeypatch.setattr(select_mod, "get_selector", get)
    monkeypatch.setattr(score_mod, "get_selector", get)
    monkeypatch.setattr(rundir, "claim", lambda out, writes, **kw: (claims.append(writes), real_claim(out, writes, **kw))[1])
    monkeypatch.setattr(score_mod, "fingerprint", lambda *a, **kw: (prints.append(1), real_print(*a, **kw))[1])
    monkeypatch.setattr(select_mod.selector_class(method), "fit_targets",
                        lambda self, *a, **kw: (fits.append(1), real_fit(self, *a, **kw))[1])
    monkeypatch.setattr(select_mod.selector_class(method), "fit",
                        lambda self, *a, **kw: pytest.fail("a target fitted alone"))
    monkeypatch.setattr(np, "load", lambda f, *a, **kw: (reads.append(str(f)), real_load(f, *a, **kw))[1])
    import domainsift.embed.static as static_mod
    distils, real_distil = [], static_mod.distill_encoder
    monkeypatch.setattr(static_mod, "distill_encoder", lambda *a, **kw: (distils.append(1), real_distil(*a, **kw))[1])
    from domainsift.select.student import StudentSelector
    students, real_heads = [], StudentSelector.fit_heads
    monkeypatch.setattr(StudentSelector, "fit_heads",
                        lambda self, *a, **kw: (students.append(len(self.heads_)), real_heads(self, *a, **kw))[1])
    monkeypatch.setattr(StudentSelector, "fit", lambda self, *a, **kw: pytest.fail("a target's student fitted alone"))
    rc, err, _ = run_cli(["select", "--method", method, *opts, *(f"--target={n}={d['in_' + n]}" for n in
                                                                   ("med", "law", "it")),
                          "--pool", *map(str, d["pool"]), "--top", "45", "--out", "mix"], capsys)
    assert rc == 0, err
    assert built.count(method) == 1                        # one teacher selector: the fit of every target
    assert fits == [1]
    assert claims == ["mix"]                               # one claim: the mixture's folder holds every target's
    assert prints == [1]                                   # one fingerprint for the run
    assert len(distils) == (1 if method == "finetune" else 0)  # the students' vectors distilled once for all
    assert students == ([3] if method == "finetune" else [])  # one student, a head per target
    assert any("shard-" in r for r in reads)                # (the arrays come from the shards scored)
    assert not [r for r in reads if r.endswith("/scores.npy")]  # no scores.npy read back
    meta = json.loads((tmp_path / "mix" / "mix.json").read_text())
    assert sum(t["n_selected"] for t in meta["targets"].values()) == 45 and "shared_fit" in meta
    assert not (tmp_path / "mix" / ".resume").exists()
    monkeypatch.undo()
    for n in ("med", "law", "it"):
        sig = json.loads((tmp_path / "mix" / "targets" / n / "signature.json").read_text())["signature"]
        assert f"|shared:head {n} of med+law+it|" in sig
        assert ("|cascade:student(" in sig) == (method == "finetune")
