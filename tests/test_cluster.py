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
    # the paper's outlier statistics, and the GMM's own ellipses on the map (paper 000, sections 2.5-2.6)
    s = res["outliers"]["summary"]
    assert s["count"] == res["outliers"]["count"] and s["of"] == 80
    assert {e["cluster"] for e in m["ellipses"]} == {r["cluster"] for r in table}


def _gmm(x, k, seed=0):
    from sklearn.mixture import GaussianMixture
    return GaussianMixture(n_components=k, covariance_type="full", random_state=seed).fit(x)


def test_the_map_projects_each_gmm_component_through_the_maps_pca():
    """In 2-D the map's PCA is a rotation about the mean: every projected component keeps its
    covariance's axes (2-sigma: four standard deviations end to end) and the distances between means."""
    from domainsift.cluster import projection
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal([0, 0], [1.0, 0.3], (300, 2)), rng.normal([6, 2], [0.5, 2.0], (300, 2))])
    gmm = _gmm(x, 2)
    xy, ellipses = projection(x, gmm)
    assert xy.shape == (600, 2) and len(ellipses) == 2
    for e, cov in zip(ellipses, gmm.covariances_):
        sd = np.sqrt(np.linalg.eigvalsh(cov))
        np.testing.assert_allclose([e["height"], e["width"]], 4 * sd, rtol=1e-9)
    d_map = np.hypot(ellipses[0]["x"] - ellipses[1]["x"], ellipses[0]["y"] - ellipses[1]["y"])
    np.testing.assert_allclose(d_map, np.linalg.norm(gmm.means_[0] - gmm.means_[1]), rtol=1e-9)


def test_a_projected_component_matches_its_points_in_more_dimensions():
    """Points drawn from a 6-D mixture: each GMM component's projected ellipse agrees with the ellipse
    of its own points on the map (centre and axes within a few percent)."""
    from domainsift.cluster import projection
    rng = np.random.default_rng(1)
    centres = rng.normal(0, 6, (3, 6))
    x = np.concatenate([rng.normal(c, rng.uniform(0.5, 2, 6), (2000, 6)) for c in centres])
    gmm = _gmm(x, 3)
    labels = gmm.predict(x)
    xy, ellipses = projection(x, gmm)
    for e in ellipses:
        pts = xy[labels == e["cluster"]]
        vals = np.linalg.eigvalsh(np.cov(pts.T))
        np.testing.assert_allclose([e["x"], e["y"]], pts.mean(0), atol=0.1)
        np.testing.assert_allclose([e["height"], e["width"]], 4 * np.sqrt(vals), rtol=0.05)


def test_kmeans_has_no_gaussians_to_draw():
    from sklearn.cluster import KMeans
    from domainsift.cluster import projection
    x = np.random.default_rng(2).normal(size=(50, 4))
    xy, ellipses = projection(x, KMeans(n_clusters=2, n_init=1, random_state=0).fit(x))
    assert xy.shape == (50, 2) and ellipses is None


def test_outlier_summary_counts_lengths_and_digits():
    from domainsift.cluster import outlier_summary
    texts = ["a b", "a b c d", "in 1999", "x", "y 2", "z"]
    gold = ["med", "med", "med", "law", "law", "law"]
    clusters = [0, 0, 1, 1, 1, 0]  # cluster 0: med majority; cluster 1: law majority
    s = outlier_summary(texts, gold, clusters)
    # outliers: "in 1999" (med in the law cluster) and "z" (law in the med cluster)
    assert s == {"count": 2, "of": 6, "mean_words_outliers": 1.5, "mean_words_rest": 2.25,
                 "share_with_digits_outliers": 0.5, "share_with_digits_rest": 0.25}
