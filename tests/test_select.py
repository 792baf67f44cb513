"""One contract every registered selector passes, then the choosing step and evaluation."""

import numpy as np
import pytest

from conftest import make_sentences
from domainsift._internal.errors import DomainsiftError
from domainsift.metrics import precision_recall
from domainsift.select import SELECTORS, Selector, choose, get_selector


@pytest.fixture(scope="module")
def easy_case():
    in_domain = make_sentences("med", 24, seed=10)
    pool_in = make_sentences("med", 12, seed=11)
    pool_out = make_sentences("law", 12, seed=12) + make_sentences("it", 12, seed=13)
    pool = pool_out[:6] + pool_in[:6] + pool_out[6:18] + pool_in[6:] + pool_out[18:]
    is_in = np.array([t in set(pool_in) for t in pool])
    return in_domain, pool, is_in


def _params(name, tiny_models, tmp_path_factory):
    # the real default encoder: a tiny random model has no notion of similarity to rank by
    if name == "cosine":
        return dict(embedder="minilm", cache_dir=str(tmp_path_factory.mktemp("c")), progress=False, backend="torch")
    if name == "finetune":
        return dict(model="minilm", epochs=3, batch_size=8, holdout=0.0, backend="torch",
                    cache_dir=str(tmp_path_factory.mktemp("c")), progress=False)
    if name == "moore-lewis":
        return dict(order=1, progress=False)  # bag-of-words case: unigrams decide
    if name == "crosslingual":  # one language on both sides of the bitext: the contract, not the transfer
        d = tmp_path_factory.mktemp("bitext")
        lines = make_sentences("med", 40, 20) + make_sentences("law", 40, 21) + make_sentences("it", 40, 22)
        for side in ("a", "b"):
            (d / f"bi.{side}").write_text("\n".join(lines) + "\n")
        return dict(model="minilm", bitext=[(str(d / "bi.a"), str(d / "bi.b"))], epochs=10,
                    backend="torch",
                    cache_dir=str(tmp_path_factory.mktemp("c")), progress=False)
    return {}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cosine", "finetune"])
def test_int8_backend_ranks_as_fp32(name, easy_case, tiny_models, tmp_path_factory):
    """The default backend (ONNX Runtime, int8 weights) against PyTorch fp32: the same ranking on
    the easy case and nearly the same scores (the contract test runs fp32, batch-independent)."""
    in_domain, pool, is_in = easy_case
    params = _params(name, tiny_models, tmp_path_factory)
    fp32 = get_selector(name, seed=1, **params).fit(in_domain, pool).score(pool)
    params["backend"] = "onnx-int8"
    sel = get_selector(name, seed=1, **params)
    int8 = sel.fit(in_domain, pool).score(pool)
    assert sel.signature_params()["backend"] == "onnx-int8"
    top = np.argsort(-int8, kind="stable")[: is_in.sum()]
    assert is_in[top].all()
    assert np.corrcoef(int8, fp32)[0, 1] > 0.98
    # deterministic: the same input gives the same scores
    np.testing.assert_array_equal(sel.score(pool), int8)


@pytest.mark.parametrize("name", sorted(SELECTORS))
def test_contract(name, easy_case, tiny_models, tmp_path_factory):
    in_domain, pool, is_in = easy_case
    params = _params(name, tiny_models, tmp_path_factory)
    sel = get_selector(name, seed=1, **params)
    assert isinstance(sel, Selector)
    s1 = sel.fit(in_domain, pool).score(pool)
    assert s1.shape == (len(pool),) and np.isfinite(s1).all()
    # determinism under a seed: a fresh selector with the same seed scores identically
    s2 = get_selector(name, seed=1, **params).fit(in_domain, pool).score(pool)
    np.testing.assert_allclose(s1, s2, rtol=1e-5, atol=1e-6)
    # scores of a subset match (scoring is per sentence, independent of the batch)
    np.testing.assert_allclose(sel.score(pool[:5]), s1[:5], rtol=1e-4, atol=1e-5)
    params_sig = sel.signature_params()
    assert isinstance(params_sig, dict)
    if name != "random":  # an easy case: every in-domain line ranks above every other
        top = np.argsort(-s1, kind="stable")[: is_in.sum()]
        assert is_in[top].all(), f"{name} ranked out-of-domain lines first"
    if sel.probabilistic:
        assert ((s1 >= 0) & (s1 <= 1)).all()


@pytest.mark.parametrize("name", sorted(SELECTORS))
def test_every_fit_travels_by_the_base_lifecycle(name, easy_case, tiny_models, tmp_path_factory, tmp_path):
    """A fit is saved as a folder and loaded (``saves_state``: what a killed run resumes from), or given as
    a dict (``fitted_state`` / ``set_fitted``): either way a fresh selector of the same parameters scores
    as the fitted one, so every method resumes and ships to Ray workers."""
    in_domain, pool, _ = easy_case
    params = _params(name, tiny_models, tmp_path_factory)
    sel = get_selector(name, seed=1, **params).fit(in_domain, pool)
    assert sel.shippable
    s = sel.score(pool)
    if sel.saves_state:
        sel.save_state(tmp_path / "fit")
        again = get_selector(name, seed=1, **params).load_state(tmp_path / "fit")
    else:
        again = get_selector(name, seed=1, **params).set_fitted(sel.fitted_state())
    np.testing.assert_allclose(again.score(pool), s, rtol=1e-6, atol=1e-7)
    with pytest.raises(DomainsiftError):  # another method's folder, or none, is refused in one line
        if sel.saves_state:
            get_selector(name, seed=1, **params).load_state(tmp_path / "nowhere")
        else:
            raise DomainsiftError("a dict fit has no folder")


@pytest.mark.parametrize("name", sorted(SELECTORS))
def test_empty_in_domain_is_an_error(name, tiny_models, tmp_path_factory):
    sel = get_selector(name, **_params(name, tiny_models, tmp_path_factory))
    with pytest.raises(DomainsiftError, match="in-domain set is empty"):
        sel.fit([], ["a b", "c d"])


def test_random_seed_changes_scores():
    pool = [str(i) for i in range(50)]
    a = get_selector("random", seed=0).fit(["x"], pool).score(pool)
    b = get_selector("random", seed=1).fit(["x"], pool).score(pool)
    assert not np.allclose(a, b)


def test_unknown_method():
    with pytest.raises(DomainsiftError, match="unknown method"):
        get_selector("nope")


def test_finetune_negatives_come_from_bottom_two_thirds():
    from domainsift.select.finetune import PAPER_CUT, sample_negatives
    cos = np.arange(30, dtype=float)[::-1]  # item 0 best ... item 29 worst
    rng = np.random.default_rng(0)
    neg = sample_negatives(cos, 15, "preranked", rng, cut=PAPER_CUT)
    assert len(neg) == 15 and neg.min() >= 10  # top third (items 0-9) never drawn
    excl = np.zeros(30, bool)
    excl[10:20] = True
    neg = sample_negatives(cos, 100, "preranked", np.random.default_rng(0), exclude=excl, cut=PAPER_CUT)
    assert set(neg) == set(range(20, 30))
    rnd = sample_negatives(cos, 30, "random", np.random.default_rng(0))
    assert set(rnd) == set(range(30))


def test_finetune_parameters_are_checked_before_any_work(tiny_models):
    from domainsift.select.finetune import PAPER_CUT
    for bad in ({"neg_cut": 1.0}, {"neg_cut": -0.1}, {"epochs": 0}, {"negatives": "hard"}, {"neg_ratio": 0},
                {"holdout": 1.0}, {"negatives": "random", "neg_cut": PAPER_CUT}, {"pooling": "mean-max"}):
        with pytest.raises(DomainsiftError, match="finetune"):
            get_selector("finetune", model=tiny_models["bert"], **bad)


def test_finetune_negative_cut_sets_how_much_of_the_top_is_never_drawn():
    from domainsift.select.finetune import DEFAULT_CUT, PAPER_CUT, sample_negatives
    cos = np.arange(30, dtype=float)[::-1]  # item 0 best ... item 29 worst
    assert DEFAULT_CUT == 0.2 and PAPER_CUT == 1 / 3
    default = sample_negatives(cos, 100, "preranked", np.random.default_rng(0))
    assert set(default) == set(range(6, 30))  # the default: the bottom 80%
    assert set(sample_negatives(cos, 100, "preranked", np.random.default_rng(0), cut=PAPER_CUT)) == set(range(10, 30))
    assert set(sample_negatives(cos, 100, "preranked", np.random.default_rng(0), cut=0.5)) == set(range(15, 30))
    assert set(sample_negatives(cos, 100, "preranked", np.random.default_rng(0), cut=0.0)) == set(range(30))
    for bad in (-0.1, 1.0):
        with pytest.raises(DomainsiftError, match="cut must be in"):
            sample_negatives(cos, 5, "preranked", np.random.default_rng(0), cut=bad)


def test_finetune_bucketed_batches_cover_every_example_once():
    from domainsift.select.train import batches
    texts = ["x" * k for k in np.random.default_rng(1).integers(1, 90, size=103)]
    for bucket in (0, 4):
        bs = batches(texts, 8, np.random.default_rng(0), bucket)
        flat = np.concatenate(bs)
        assert sorted(flat) == list(range(103)) and len(bs) == int(np.ceil(103 / 8))
        again = batches(texts, 8, np.random.default_rng(0), bucket)
        assert all((a == b).all() for a, b in zip(bs, again))  # seeded
    plain = batches(texts, 8, np.random.default_rng(0), 0)
    bucketed = batches(texts, 8, np.random.default_rng(0), 4)
    spread = lambda bs: np.mean([np.ptp([len(texts[i]) for i in b]) for b in bs])  # noqa: E731
    assert spread(bucketed) < spread(plain) / 2  # similar lengths share a batch: less padding


def test_finetune_reports_holdout_metrics(easy_case, tiny_models, tmp_path_factory):
    in_domain, pool, _ = easy_case
    p = _params("finetune", tiny_models, tmp_path_factory)
    p["holdout"] = 0.25
    sel = get_selector("finetune", **p).fit(in_domain, pool)
    m = sel.holdout_metrics_
    assert set(m) == {"precision", "recall", "f1", "n"} and m["n"] == 12
    assert m["f1"] > 0.8


def test_finetune_scores_keep_confident_lines_apart(easy_case, tiny_models, tmp_path_factory):
    # a very confident classifier (logits near 20): float32 probabilities would all be 1.0, a tie
    # that choose() breaks by pool position; float64 keeps the classifier's order
    # (scored through PyTorch, as the logits below are: the property is float64 against float32, the same
    # on every backend; comparing an int8 ranking with fp32 logits would test the CPU's rounding)
    in_domain, pool, _ = easy_case
    sel = get_selector("finetune", model=tiny_models["bert"], epochs=1, batch_size=8, holdout=0.0,
                       negatives="random", backend="torch", progress=False).fit(in_domain, pool)
    clf = sel.classifier_
    with clf.torch.no_grad():
        clf.head.bias.fill_(20.0)
        logits = clf.forward(pool).double().cpu().numpy()
    torch = clf.torch
    s = sel.score(pool)
    assert s.dtype == np.float64 and (s < 1.0).all()
    assert (torch.sigmoid(torch.from_numpy(logits).float()).numpy() == 1.0).all()  # what float32 gave
    assert np.array_equal(np.argsort(-s, kind="stable"), np.argsort(-logits, kind="stable"))


# ---------------------------------------------------------------- choose

SCORES = np.array([0.2, 0.9, 0.5, 0.9, 0.1])


def test_choose_top_ties_by_position():
    assert choose(SCORES, top=3).tolist() == [1, 3, 2]


def test_choose_fraction_threshold_positive():
    assert choose(SCORES, fraction=0.4).tolist() == [1, 3]
    assert choose(SCORES, threshold=0.5).tolist() == [1, 3, 2]
    assert choose(SCORES, positive=True, probabilistic=True).tolist() == [1, 3]
    with pytest.raises(DomainsiftError, match="probability"):
        choose(SCORES, positive=True, probabilistic=False)


@pytest.mark.parametrize("kw, msg", [({"top": 0}, "positive"), ({"top": -2}, "positive"),
                                     ({"top": 6}, "pool of 5"), ({"fraction": 1.5}, "fraction"),
                                     ({}, "exactly one"), ({"top": 1, "threshold": 0.1}, "exactly one")])
def test_choose_errors(kw, msg):
    with pytest.raises(DomainsiftError, match=msg):
        choose(SCORES, **kw)


# ---------------------------------------------------------------- evaluation

def test_precision_recall_hand_computed(tmp_path):
    sel = [("a.txt", 1), ("a.txt", 2), ("b.txt", 1), ("b.txt", 5)]
    gold = [("a.txt", n) for n in range(1, 6)]
    r = precision_recall(sel, gold)
    assert r == pytest.approx({"precision": 0.5, "recall": 0.4, "f1": 0.4 / 0.9, "n_selected": 4, "n_gold": 5,
                               "n_correct": 2})  # F1 = 2 * 0.5 * 0.4 / 0.9


def test_precision_recall_matches_by_id_not_text(tmp_path):
    # the same text in two files: only the gold file's line counts
    r = precision_recall([("other.txt", 1)], [("gold.txt", 1)])
    assert r["precision"] == 0.0


@pytest.mark.parametrize("family", ["bert", "distilbert"])
def test_finetune_layers_runs_the_lower_layers_only(family, easy_case, tiny_models, tmp_path):
    """``layers=K`` drops the layers above K: before training, the truncated encoder's vectors are the
    whole model's layer-K vectors; after, the saved fit holds K layers and scores as it did."""
    from domainsift.embed import get_embedder
    from domainsift.select.train import EncoderClassifier
    in_domain, pool, _ = easy_case
    path = tiny_models[family]
    clf = EncoderClassifier(path, backend="torch")
    clf.truncate(1)
    clf.new_head()
    clf.train(False)
    truncated = clf.embedder().encode(pool)
    whole = get_embedder(path, layer=1, backend="torch", normalize=False, progress=False).encode(pool)
    np.testing.assert_allclose(truncated, whole, rtol=1e-5, atol=1e-6)

    sel = get_selector("finetune", model=path, layers=1, epochs=1, batch_size=8, holdout=0.0,
                       backend="torch", progress=False).fit(in_domain, pool)
    assert sel.signature_params()["layers"] == 1
    assert len(sel.classifier_._layers()) == 1
    sel.save_state(tmp_path / "fit")
    again = get_selector("finetune", model=path, layers=1, backend="torch", progress=False).load_state(tmp_path / "fit")
    assert len(again.classifier_._layers()) == 1
    np.testing.assert_allclose(again.score(pool), sel.score(pool), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("family", ["bert", "distilbert"])
def test_finetune_layers_beyond_the_encoder_is_an_error_before_any_work(family, tiny_models):
    with pytest.raises(DomainsiftError, match="--layers 3: the encoder has 2 layers"):
        get_selector("finetune", model=tiny_models[family], layers=3, epochs=1, backend="torch", progress=False)
