"""The pool's in-domain share (domainsift.share), --fraction auto / --top auto and their CLI contract."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import make_sentences, run_cli, write_lines

from domainsift._internal.errors import DomainsiftError
from domainsift.share import (ShareEstimate, best_bin, crossfit_scores, elkan_noto, estimate_from_scores,
                              estimate_share)


def _mixture(share: float, n_in: int = 2000, n_pool: int = 10000, seed: int = 0):
    """Scores of a classifier that tells N(2, 1) (in-domain) from N(-2, 1): the in-domain set's, and a
    pool's that holds ``share`` of in-domain lines."""
    rng = np.random.default_rng(seed)
    k = int(round(share * n_pool))
    return rng.normal(2, 1, n_in), np.concatenate([rng.normal(2, 1, k), rng.normal(-2, 1, n_pool - k)])


@pytest.mark.parametrize("share", [0.02, 0.14, 0.29, 0.5])
def test_best_bin_recovers_the_mixture_proportion(share):
    s_in, s_pool = _mixture(share)
    assert abs(best_bin(s_in, s_pool) - share) < 0.03


def test_best_bin_of_a_pool_without_in_domain_lines_is_near_zero():
    s_in, s_pool = _mixture(0.0)
    assert best_bin(s_in, s_pool) < 0.02


def test_best_bin_ignores_a_monotone_transform_of_the_scores():
    s_in, s_pool = _mixture(0.3)
    squash = lambda x: 1 / (1 + np.exp(-3 * x))  # noqa: E731
    assert best_bin(s_in, s_pool) == best_bin(squash(s_in), squash(s_pool))


def test_elkan_noto_recovers_the_share_from_calibrated_probabilities():
    # the probability of "from the labelled set" of a perfect classifier trained on n_in against n_pool,
    # on well-separated classes (e1 assumes an in-domain line is never like the rest)
    share, n_in, n_pool = 0.25, 2000, 10000
    s_in = np.random.default_rng(0).normal(4, 1, n_in)
    phi = lambda x, m: np.exp(-0.5 * (x - m) ** 2)  # noqa: E731
    g = n_in * phi(s_in, 4) / (n_in * phi(s_in, 4) + n_pool * (share * phi(s_in, 4) + (1 - share) * phi(s_in, -4)))
    assert abs(elkan_noto(g, n_in, n_pool) - share) < 0.02


def test_the_interval_holds_the_estimate_and_is_seeded():
    s_in, s_pool = _mixture(0.2, 300, 3000)
    a = estimate_from_scores(s_in, s_pool, seed=1, bootstrap=50)
    b = estimate_from_scores(s_in, s_pool, seed=1, bootstrap=50)
    assert a == b
    assert a.low <= a.share <= a.high and a.high - a.low > 0
    assert a.lines(1000) == int(round(a.share * 1000))
    assert ShareEstimate.from_dict(json.loads(json.dumps(a.to_dict()))) == a


def test_an_unknown_estimator_and_too_small_an_in_domain_set_are_refused():
    with pytest.raises(DomainsiftError, match="unknown share estimator"):
        estimate_from_scores([1.0] * 30, [0.0] * 30, estimator="magic")
    with pytest.raises(DomainsiftError, match="at least 20 in-domain lines"):
        crossfit_scores(np.zeros((5, 3)), np.zeros((50, 3)))


def test_crossfitted_scores_estimate_the_share_of_separable_vectors():
    rng = np.random.default_rng(0)
    x_in = rng.normal(1, 1, (200, 8))
    x_pool = np.concatenate([rng.normal(1, 1, (300, 8)), rng.normal(-1, 1, (700, 8))])
    s_in, s_pool = crossfit_scores(x_in, x_pool, seed=0)
    assert s_in.shape == (200,) and s_pool.shape == (1000,)
    assert abs(best_bin(s_in, s_pool) - 0.3) < 0.05


def _data(tmp_path):
    """40 in-domain (med) lines; a pool of 30 med lines and 90 others: a quarter in-domain."""
    return {"in": write_lines(tmp_path / "in.txt", make_sentences("med", 40, 11)),
            "med": write_lines(tmp_path / "med.txt", make_sentences("med", 30, 12)),
            "law": write_lines(tmp_path / "law.txt", make_sentences("law", 45, 13)),
            "it": write_lines(tmp_path / "it.txt", make_sentences("it", 45, 14))}


def test_estimate_share_on_the_default_encoder(tmp_path):
    d = _data(tmp_path)
    read = lambda p: p.read_text(encoding="utf-8").splitlines()  # noqa: E731
    est = estimate_share(read(d["in"]), read(d["med"]) + read(d["law"]) + read(d["it"]), progress=False,
                         cache_dir=str(tmp_path / "cache"), bootstrap=50)
    assert abs(est.share - 0.25) <= 0.08
    assert est.model == "minilm" and est.n_in_domain == 40 and est.n_pool_sample == 120


def test_select_fraction_auto_then_top_auto_from_scores(tmp_path, capsys, monkeypatch):
    d = _data(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOMAINSIFT_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run"
    rc, _, so = run_cli(["select", "--method", "cosine", "--in-domain", str(d["in"]), "--pool", str(d["med"]),
                         str(d["law"]), str(d["it"]), "--fraction", "auto", "--out", str(out)], capsys)
    assert rc == 0, so
    share = json.loads((out / "share.json").read_text())
    run = json.loads((out / "run.json").read_text())
    sel = json.loads((out / "selection.json").read_text())
    n = max(1, int(round(share["share"] * 120)))
    assert run["share"] == share and sel["n_selected"] == n
    assert sel["rule"]["fraction"] == "auto" and sel["rule"]["n_auto"] == n
    assert sel["rule"]["share_interval"][0] <= sel["rule"]["share"] <= sel["rule"]["share_interval"][1]
    assert "auto: the pool's estimated in-domain share" in so
    assert "select_fraction:auto" in json.loads((out / "signature.json").read_text())["signature"]
    # the saved estimate is reused: no encoder runs, the same N
    again = tmp_path / "again"
    rc, _, so = run_cli(["select", "--from-scores", str(out), "--top", "auto", "--out", str(again)], capsys)
    assert rc == 0, so
    assert json.loads((again / "selection.json").read_text())["n_selected"] == n


def test_auto_needs_a_saved_estimate_and_score_estimate_share_saves_one(tmp_path, capsys, monkeypatch):
    d = _data(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOMAINSIFT_CACHE", str(tmp_path / "cache"))
    pool = [str(d["med"]), str(d["law"]), str(d["it"])]
    plain, est = tmp_path / "plain", tmp_path / "est"
    assert run_cli(["score", "--method", "random", "--in-domain", str(d["in"]), "--pool", *pool, "--out",
                    str(plain)], capsys)[0] == 0
    assert not (plain / "share.json").exists()
    rc, err, _ = run_cli(["select", "--from-scores", str(plain), "--fraction", "auto"], capsys)
    assert rc != 0 and "--estimate-share" in err and len(err.strip().splitlines()) == 1
    rc, _, so = run_cli(["score", "--method", "random", "--in-domain", str(d["in"]), "--pool", *pool, "--out",
                         str(est), "--estimate-share"], capsys)
    assert rc == 0 and "in-domain share of the pool" in so
    assert json.loads((est / "share.json").read_text())["estimator"] == "bbe"
    rc, err, _ = run_cli(["select", "--from-scores", str(est), "--fraction", "most"], capsys)
    assert rc != 0 and "most" in err
