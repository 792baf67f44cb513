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
