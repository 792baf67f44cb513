"""Cross-lingual selection on synthetic bilingual data where the right answer is known.

Language B writes every word of language A backwards; a tiny random BERT whose vocabulary holds
both gives the two languages unrelated vectors, so only an alignment learnt from the bitext can
carry a classifier trained on A-language in-domain lines over to a B-language pool."""

import json

import numpy as np
import pytest

from domainsift.cli import main
from domainsift._internal.errors import DomainsiftError
from domainsift.select import get_selector


def _precision(bilingual, **kw):
    pool = bilingual["pool"].read_text().splitlines()
    sel = get_selector("crosslingual", model=bilingual["model"], bitext=[(bilingual["bi_a"], bilingual["bi_b"])],
                       cache_dir="", progress=False, **kw)
    s = sel.fit(bilingual["in"].read_text().splitlines(), pool).score(pool)
    return float((np.argsort(-s, kind="stable")[:30] < 30).mean()), sel, s


def test_alignment_carries_the_classifier_across_languages(bilingual):
    aligned, sel, s = _precision(bilingual, seed=0)  # the default: aligned, refined
    raw, _, _ = _precision(bilingual, seed=0, align=False, refine=False)
    assert aligned >= 0.9 and raw < 0.7 and aligned > raw
    assert ((s >= 0) & (s <= 1)).all() and s.dtype == np.float64
    again, _, s2 = _precision(bilingual, seed=0)
    np.testing.assert_array_equal(s, s2)  # seeded
    assert sel.refined_ and sel.alignment_.alpha_ in sel.alignment_.ALPHAS
    # the default alignment (auto) on an encoder that does not share a space across languages: the ridge map
    assert sel.alignment == "auto" and not sel.bitext_unused() and sel.signature_params()["alignment"] == "ridge"


def test_refining_adds_the_first_classifiers_top_and_bottom_of_the_pool(bilingual, monkeypatch):
    from domainsift.select.crosslingual import CrosslingualSelector
    calls, real = [], CrosslingualSelector._classifier

    def spy(self, pos, neg, rng, desc):
        clf = real(self, pos, neg, rng, desc)
        calls.append((desc, pos, neg, clf))
        return clf
    monkeypatch.setattr(CrosslingualSelector, "_classifier", spy)
    _, sel, _ = _precision(bilingual, seed=0)
    (d1, pos1, neg1, first), (d2, pos, neg, second) = calls
    assert (d1, d2) == ("classifier", "refine") and sel.classifier_ is second
    assert len(pos1) == 40 and len(neg1) == 300  # the in-domain set; two thirds of the 450 bitext lines
    pool = sel.alignment_.b(sel._encode(bilingual["pool"].read_text().splitlines()))
    order = np.argsort(-first.predict(pool), kind="stable")
    # the first classifier's examples, then min(40 in-domain lines, a third of 90) top pool lines and the
    # pool's bottom two thirds (60 lines)
    np.testing.assert_array_equal(pos, np.concatenate([pos1, pool[order[:30]]]))
    np.testing.assert_array_equal(neg, np.concatenate([neg1, pool[order[30:]]]))


def test_linear_alignment_recovers_a_linear_relation_between_languages():
    from domainsift.select.crosslingual import LinearAlignment
    rng = np.random.default_rng(0)
    xa = rng.normal(size=(2000, 16)).astype(np.float32)
    rot, _ = np.linalg.qr(rng.normal(size=(16, 16)))
    xb = (xa @ rot + 3.0).astype(np.float32)  # the other language: rotated and offset
    al = LinearAlignment(xa, xb)
    test = rng.normal(size=(50, 16)).astype(np.float32)  # vectors the fit never saw
    np.testing.assert_allclose(al.a(test), al.b(test @ rot + 3.0), atol=0.05)
    assert abs(float(al.b(xb).mean())) < 1e-4  # centred at the bitext side's mean


def test_contrastive_layer_pulls_translations_together():
    """Paper 003's layer, trained on pairs whose second language is a fixed nonlinear scramble of the
    first: a held-out vector's nearest vector in the other language comes from its own domain (the
    layer's negatives are other domains' pairs), and its own translation is found far more often."""
    import torch
    from domainsift.select.crosslingual import _unit, train_contrastive
    rng = np.random.default_rng(0)
    domain = rng.integers(0, 4, 1200)
    xa = (rng.normal(size=(4, 16))[domain] * 3 + rng.normal(size=(1200, 16))).astype(np.float32)
    xb = np.tanh(xa @ rng.normal(size=(16, 16)) / 4).astype(np.float32)
    torch.manual_seed(0)
    al = train_contrastive(torch, xa[:1000], xb[:1000], np.random.default_rng(0), 0, lr=1e-2)
    assert al.a(xa[:3]).shape == (3, 128)  # the paper's layer replaces a vector by its 128-d output

    def nearest(za, zb):
        return np.argmax(_unit(za) @ _unit(zb).T, axis=1)
    held = domain[1000:]
    raw, learnt = nearest(xa[1000:], xb[1000:]), nearest(al.a(xa[1000:]), al.b(xb[1000:]))
    assert (held[learnt] == held).mean() > 0.9 > 0.5 > (held[raw] == held).mean()
    assert (learnt == np.arange(200)).mean() > (raw == np.arange(200)).mean() + 0.1


def test_contrastive_option_runs_the_papers_layer_and_says_so(bilingual, monkeypatch):
    from domainsift.select import crosslingual as xl
    seen = []
    real = xl.train_contrastive

    def spy(torch, xa, xb, rng, seed, **kw):
        seen.append(kw)
        return real(torch, xa, xb, rng, seed, **kw)
    monkeypatch.setattr(xl, "train_contrastive", spy)
    _, sel, s = _precision(bilingual, seed=0, alignment="contrastive", refine=False)
    assert seen == [{}]  # the paper's settings, none overridden
    assert isinstance(sel.alignment_, xl.ContrastiveAlignment) and np.isfinite(s).all()
    p = sel.signature_params()
    assert p["alignment"] == "contrastive" and p["contrastive"]["lr"] == 1e-5 and p["contrastive"]["k"] == 5
    no_align = get_selector("crosslingual", model=bilingual["model"], alignment="contrastive", align=False,
                            bitext=[(bilingual["bi_a"], bilingual["bi_b"])], cache_dir="", progress=False)
    assert no_align.signature_params()["alignment"] is None
    with pytest.raises(DomainsiftError, match="alignment must be one of"):
        get_selector("crosslingual", alignment="procrustes")


def test_cli_run_writes_the_alignment_picture_and_evaluates(bilingual, tmp_path):
    out = tmp_path / "run"
    assert main(["-q", "select", "--method", "crosslingual", "--model", bilingual["model"], "--cache", "",
                 "--in-domain", str(bilingual["in"]), "--pool", str(bilingual["pool"]),
                 "--bitext", str(bilingual["bi_a"]), str(bilingual["bi_b"]), "--top", "30",
                 "--out", str(out)]) == 0
    al = json.loads((out / "alignment.json").read_text())
    assert set(al) >= {"before", "after"} and len(al["after"]["a"]) == 450
    sig = json.loads((out / "signature.json").read_text())
    assert sig["method"] == "crosslingual" and sig["align"] is True and sig["refine"] is True
    assert "bi.a" in sig["signature"]
    assert (out / "selected.b").read_text().count("\n") == 30
    assert main(["-q", "report", str(out), "--out", str(tmp_path / "r.html")]) == 0
    assert "Cross-lingual alignment" in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize("case, msg", [
    ("no-bitext", "is monolingual: add --model multilingual"),
    ("reversed", "look reversed"),
    ("misaligned", "differ in length"),
    ("empty", "empty file"),
])
def test_bad_bitext_is_one_line(case, msg, bilingual, tmp_path, capsys):
    a, b = bilingual["bi_a"], bilingual["bi_b"]
    if case == "reversed":
        a, b = b, a
    elif case == "misaligned":
        b = tmp_path / "short.b"
        b.write_text("\n".join(bilingual["bi_b"].read_text().splitlines()[:10]) + "\n")
    elif case == "empty":
        a = tmp_path / "empty.a"
        a.write_text("")
    model = "minilm" if case == "no-bitext" else bilingual["model"]   # refused before it is loaded
    argv = ["-q", "score", "--method", "crosslingual", "--align", "--model", model, "--cache", "",
            "--in-domain", str(bilingual["in"]), "--pool", str(bilingual["pool"]), "--out", str(tmp_path / "o")]
    if case != "no-bitext":
        argv += ["--bitext", str(a), str(b)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert msg in err and err.count("\n") == 0, err
    assert not (tmp_path / "o" / "scores.npy").exists()


def test_no_bitext_with_a_monolingual_encoder_names_the_fix():
    for kw in ({}, {"align": False}):
        with pytest.raises(DomainsiftError, match="'minilm' is monolingual: add --model multilingual"):
            get_selector("crosslingual", model="minilm", progress=False, cache_dir="", **kw).fit(["a"], ["b"])


def test_an_edited_bitext_between_a_kill_and_its_resume_starts_over(bilingual, tmp_path, monkeypatch):
    """The bitext's contents join the run's resume fingerprint: a run killed after its fit and first shard,
    resumed with an edited bitext, fits again on the new bitext and ends as a clean run on it (no shard
    of the old fit mixed in); resumed with the same bitext, it loads the saved fit (no refit)."""
    import shutil

    from conftest import run_killed
    from domainsift.select.crosslingual import CrosslingualSelector
    monkeypatch.chdir(tmp_path)
    bi_a, bi_b = tmp_path / "bi.a", tmp_path / "bi.b"
    shutil.copy(bilingual["bi_a"], bi_a)
    shutil.copy(bilingual["bi_b"], bi_b)
    argv = ["score", "--method", "crosslingual", "--model", bilingual["model"], "--bitext", bi_a, bi_b, "--cache", "",
            "--in-domain", bilingual["in"], "--pool", bilingual["pool"], "--shard-size", "30"]
    assert main(["-q", *map(str, argv), "--out", "clean-old"]) == 0
    run_killed([*argv, "--out", "run"], "domainsift.engine.shards:write_shard", 1, tmp_path)
    # the same bitext: the saved fit is loaded, not fitted again, and the result is the clean run's
    fits = []
    real_fit = CrosslingualSelector.fit
    monkeypatch.setattr(CrosslingualSelector, "fit", lambda self, *a, **k: fits.append(1) or real_fit(self, *a, **k))
    shutil.copytree("run", "run-same")
    assert main(["-q", *map(str, argv), "--out", "run-same"]) == 0
    assert fits == []
    assert (tmp_path / "run-same" / "scores.npy").read_bytes() == (tmp_path / "clean-old" / "scores.npy").read_bytes()
    # an edited bitext: fitted again, and the result is a clean run's on the edited bitext
    lines_a, lines_b = bi_a.read_text().splitlines(), bi_b.read_text().splitlines()
    bi_a.write_text("\n".join(lines_a[:200]) + "\n")
    bi_b.write_text("\n".join(lines_b[:200]) + "\n")
    assert main(["-q", *map(str, argv), "--out", "run"]) == 0
    assert fits == [1]
    assert main(["-q", *map(str, argv), "--out", "clean-new"]) == 0
    new, old = ((tmp_path / d / "scores.npy").read_bytes() for d in ("clean-new", "clean-old"))
    assert (tmp_path / "run" / "scores.npy").read_bytes() == new != old
