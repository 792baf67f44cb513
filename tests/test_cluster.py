import numpy as np
import pytest

from domainsift.cluster import cluster_grid, confusion, fit_clusters, outliers, purity


def test_purity_hand_computed():
    # cluster 0: a a b  -> majority a (2); cluster 1: b b c c c -> majority c (3); cluster 2: a -> 1
    gold = ["a", "a", "b", "b", "b", "c", "c", "c", "a"]
    clus = [0, 0, 0, 1, 1, 1, 1, 1, 2]
    assert purity(gold, clus) == pytest.approx((2 + 3 + 1) / 9)


def test_purity_perfect_and_single_cluster():
    assert purity(["x", "x", "y"], [5, 5, 7]) == 1.0
    assert purity(["x", "x", "y"], [0, 0, 0]) == pytest.approx(2 / 3)


def test_confusion_and_outliers():
    gold = ["a", "a", "b", "b"]
    clus = [0, 0, 0, 1]
    mat, names, ids = confusion(gold, clus)
    assert names == ["a", "b"] and ids == [0, 1]
    assert mat.tolist() == [[2, 0], [1, 1]]
    out = outliers(["s1", "s2", "s3 is long", "s4"], gold, clus)
    assert [o["text"] for o in out] == ["s3 is long"]
    assert out[0]["cluster_domain"] == "a" and out[0]["length"] == 3


def _blobs(seed=0):
    rng = np.random.default_rng(seed)
    centers = np.array([[0, 0, 0], [8, 0, 0], [0, 8, 0]], float)
    x = np.vstack([c + rng.standard_normal((40, 3)) for c in centers])
    gold = sum([[d] * 40 for d in "abc"], [])
    return x, gold


@pytest.mark.parametrize("algorithm", ["gmm", "kmeans"])
def test_separated_blobs_are_pure(algorithm):
    x, gold = _blobs()
    labels, _ = fit_clusters(x, 3, seed=0, algorithm=algorithm)
    assert purity(gold, labels) > 0.95


def test_grid_runs_and_determinism():
    x, gold = _blobs()
    r1 = cluster_grid(x, gold, ks=(2, 3), pcas=(None, 2), seeds=(0, 1))
    r2 = cluster_grid(x, gold, ks=(2, 3), pcas=(None, 2), seeds=(0, 1))
    assert len(r1.runs) == 8
    assert [r["purity"] for r in r1.runs] == [r["purity"] for r in r2.runs]
    summ = {(s["k"], s["pca"]): s for s in r1.summary()}
    assert summ[(3, None)]["purity_mean"] > 0.95
    assert summ[(2, None)]["purity_mean"] <= 2 / 3 + 1e-9  # two clusters cannot hold three domains


def test_bad_k():
    x, _ = _blobs()
    from domainsift._internal.errors import DomainsiftError
    with pytest.raises(DomainsiftError, match="k=0"):
        fit_clusters(x, 0)


def test_margins_rank_the_surest_outliers_first():
    from domainsift.cluster import margins
    gold = ["a", "a", "b", "b", "b"]
    clusters = np.array([0, 1, 1, 1, 0])   # cluster 0: a (a tie, broken by name), cluster 1: b (2 of 3)
    aff = np.array([[0.9, 0.1], [0.2, 0.8], [0.45, 0.55], [0.3, 0.7], [0.6, 0.4]])
    m = margins(aff, clusters, gold, {0: "a", 1: "b"})
    np.testing.assert_allclose(m, [0.0, 0.6, 0.0, 0.0, 0.2])
    rows = outliers(["t0", "t1", "t2", "t3", "t4"], gold, clusters, aff)
    assert [r["index"] for r in rows] == [1, 4] and [r["margin"] for r in rows] == [0.6, 0.2]
    # a domain that is no cluster's majority: its sentences' margin is their own affinity
    np.testing.assert_allclose(margins(aff, clusters, ["a", "a", "c", "b", "b"], {0: "a", 1: "b"})[2], 0.55)


def test_cluster_prints_which_cluster_holds_which_domain_and_caps_outliers(tmp_path, monkeypatch, capsys):
    import json
    from conftest import make_sentences, write_lines
    from domainsift.cli import main
    monkeypatch.chdir(tmp_path)
    files = [write_lines(tmp_path / f"{d}.txt", make_sentences(d, 40, i)) for i, d in enumerate(("med", "law"))]
    assert main(["-q", "cluster", *map(str, files), "--model", "tfidf", "--k", "3", "--pca", "5", "--seeds", "1",
                 "--outliers", "2", "--no-plots", "--out", "c"]) == 0
    out = capsys.readouterr().out
    assert "which cluster holds which domain" in out and "majority domain" in out
    res = json.loads((tmp_path / "c" / "clustering.json").read_text())
    table = res["clusters_by_domain"]
    assert sum(r["size"] for r in table) == 80 and {r["majority"] for r in table} <= {"law", "med"}
    for r in table:
        assert f"{r['majority']} ({r['share']:.2f})" in out
    rows = (tmp_path / "c" / "outliers.tsv").read_text().splitlines()
    assert rows[0] == "gold\tcluster_domain\tlength\ttext\tmargin\tcluster"
    assert len(rows) - 1 == res["outliers"]["written"] == min(2, res["outliers"]["count"])
    margin = [float(r.split("\t")[4]) for r in rows[1:]]
    assert margin == sorted(margin, reverse=True) and all(m >= 0 for m in margin)
    m = json.loads((tmp_path / "c" / "map.json").read_text())
    assert set(m["cluster_majority"]) == {str(r["cluster"]) for r in table}
    assert all(m["cluster_majority"][str(r["cluster"])] == r["majority"] for r in table)
