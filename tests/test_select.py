"""One contract every registered selector passes, then the choosing step and evaluation."""

import numpy as np
import pytest

from conftest import make_sentences
from domainsift.errors import DomainsiftError
from domainsift.evaluate import precision_recall
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
        return dict(embedder="minilm", cache_dir=str(tmp_path_factory.mktemp("c")), progress=False)
    if name == "finetune":
        return dict(model="minilm", epochs=3, batch_size=8, holdout=0.0,
                    cache_dir=str(tmp_path_factory.mktemp("c")), progress=False)
    if name == "moore-lewis":
        return dict(order=1, progress=False)  # bag-of-words case: unigrams decide
    return {}


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


def test_finetune_negative_hardness_favours_the_top_of_the_bottom_two_thirds():
    from domainsift.select.finetune import PAPER_CUT, sample_negatives
    cos = np.arange(300, dtype=float)[::-1]  # item 0 best ... item 299 worst; bottom two thirds: 100-299
    draws = lambda k: np.concatenate([sample_negatives(cos, 20, "preranked", np.random.default_rng(s),  # noqa: E731
                                                       hardness=k, cut=PAPER_CUT) for s in range(50)])
    uniform, hard = draws(0.0), draws(2.0)
    assert uniform.min() >= 100 and hard.min() >= 100  # the top third is still never drawn
    # (1-u)^2 has mean u = 1/4: the draws sit near rank 150, uniform ones near rank 200
    assert abs(uniform.mean() - 200) < 10 and abs(hard.mean() - 150) < 10
    assert np.array_equal(draws(2.0), hard)  # seeded
    with pytest.raises(DomainsiftError, match="needs negatives 'preranked'"):
        sample_negatives(cos, 5, "random", np.random.default_rng(0), hardness=1.0)
    with pytest.raises(DomainsiftError, match=">= 0"):
        sample_negatives(cos, 5, "preranked", np.random.default_rng(0), hardness=-1.0)


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


def test_finetune_negatives_from_a_ranked_sample_map_back_to_pool_positions():
    from domainsift.select.finetune import PAPER_CUT, sample_negatives
    index = np.array([3, 8, 12, 20, 21, 25, 30, 33, 40])  # a 9-line sample of a 41-line pool
    scores = np.array([9, 8, 7, 6, 5, 4, 3, 2, 1], dtype=float)  # ranked in that order
    neg = sample_negatives(scores, 100, "preranked", np.random.default_rng(0), index=index, cut=PAPER_CUT)
    assert set(neg) == {20, 21, 25, 30, 33, 40}  # the sample's bottom two thirds, as pool positions
    excl = np.zeros(41, bool)
    excl[[21, 40]] = True
    neg = sample_negatives(scores, 100, "preranked", np.random.default_rng(0), exclude=excl, index=index,
                           cut=PAPER_CUT)
    assert set(neg) == {20, 25, 30, 33}


def test_finetune_rerank_draws_negatives_from_the_classifiers_ranking(easy_case, tiny_models,
                                                                     tmp_path_factory, monkeypatch):
    import domainsift.select.finetune as ft
    in_domain, pool, is_in = easy_case
    calls = []
    real = ft.sample_negatives

    def spy(scores, n, how, rng, exclude=None, hardness=0.0, index=None, cut=ft.DEFAULT_CUT):
        out = real(scores, n, how, rng, exclude, hardness, index, cut)
        calls.append((np.array(scores), None if index is None else np.array(index), out))
        return out

    monkeypatch.setattr(ft, "sample_negatives", spy)
    p = _params("finetune", tiny_models, tmp_path_factory)
    sel = get_selector("finetune", rerank_every=1, rerank_sample=30, seed=2, **p).fit(in_domain, pool)
    assert sel.reranks_ == 2  # after epochs 1 and 2 of 3
    assert [c[1] is None for c in calls] == [True, False, False]  # the cosine pre-ranking, then the re-ranks
    for scores, index, negs in calls[1:]:
        assert len(index) == 30 and set(negs) <= set(index)
        bottom = index[np.argsort(-scores, kind="stable")[6:]]
        assert set(negs) <= set(bottom)  # never from the sample's top 20% (the default cut)
    s = sel.score(pool)
    assert is_in[np.argsort(-s, kind="stable")[: is_in.sum()]].all()
    with pytest.raises(DomainsiftError, match="cut must be in"):
        get_selector("finetune", neg_cut=1.0, **p).fit(in_domain, pool)
    for refinement in ({"rerank_every": 1}, {"neg_cut": ft.PAPER_CUT}):
        with pytest.raises(DomainsiftError, match="need negatives 'preranked'"):
            get_selector("finetune", negatives="random", **refinement, **p).fit(in_domain, pool)
    with pytest.raises(DomainsiftError, match=">= 0"):
        get_selector("finetune", rerank_every=-1, **p).fit(in_domain, pool)


def test_finetune_bucketed_batches_cover_every_example_once():
    from domainsift.select.finetune import batches
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


def test_finetune_probe_head_starts_from_a_linear_probe(easy_case, tiny_models, tmp_path_factory):
    in_domain, pool, is_in = easy_case
    p = _params("finetune", tiny_models, tmp_path_factory)
    probe = get_selector("finetune", head_init="probe", **p).fit(in_domain, pool)
    fresh = get_selector("finetune", **p).fit(in_domain, pool)
    # the probe already separates the first batches: the first losses are far below a random head's
    assert np.mean(probe.train_losses_[:3]) < np.mean(fresh.train_losses_[:3]) - 0.1
    s = probe.score(pool)
    assert is_in[np.argsort(-s, kind="stable")[: is_in.sum()]].all()
    with pytest.raises(DomainsiftError, match="unknown head_init"):
        get_selector("finetune", head_init="nope", **p).fit(in_domain, pool)


def test_finetune_self_training_round_adds_pool_positives(easy_case, tiny_models, tmp_path_factory):
    in_domain, pool, is_in = easy_case
    p = _params("finetune", tiny_models, tmp_path_factory)
    sel = get_selector("finetune", rounds=2, expand=0.25, neg_cut=1 / 3, seed=3, **p).fit(in_domain, pool)
    assert sel.n_pseudo_positives_ == 6  # 0.25 x 24 training positives
    steps_one_round = 3 * int(np.ceil(48 / 8))
    # round 2: 30 positives, negatives capped by the bottom two thirds of the 36-line pool (24)
    steps_two = 3 * int(np.ceil((24 + 6 + 24) / 8))
    assert len(sel.train_losses_) == steps_one_round + steps_two
    s = sel.score(pool)
    top = np.argsort(-s, kind="stable")[: is_in.sum()]
    assert is_in[top].all()
    with pytest.raises(DomainsiftError, match="rounds must be at least 1"):
        get_selector("finetune", rounds=0, **p).fit(in_domain, pool)


def test_finetune_scores_keep_confident_lines_apart(easy_case, tiny_models, tmp_path_factory):
    # a very confident classifier (logits near 20): float32 probabilities would all be 1.0, a tie
    # that choose() breaks by pool position; float64 keeps the classifier's order
    in_domain, pool, _ = easy_case
    sel = get_selector("finetune", model=tiny_models["bert"], epochs=1, batch_size=8, holdout=0.0,
                       negatives="random", progress=False).fit(in_domain, pool)
    torch = sel._torch
    with torch.no_grad():
        sel._head.bias.fill_(20.0)
        logits = sel._forward(pool).double().numpy()
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


def test_finetune_ema_keeps_the_moving_average_of_the_weights(easy_case, tiny_models, tmp_path_factory,
                                                              monkeypatch):
    import torch
    from torch.optim import swa_utils
    in_domain, pool, is_in = easy_case
    p = _params("finetune", tiny_models, tmp_path_factory)
    seen = []
    real = swa_utils.AveragedModel.update_parameters

    def spy(self, model):
        seen.append(model["head"].weight.detach().clone())
        return real(self, model)

    monkeypatch.setattr(swa_utils.AveragedModel, "update_parameters", spy)
    plain = get_selector("finetune", seed=3, **p).fit(in_domain, pool)
    assert seen == []  # off by default
    d = 0.8
    ema = get_selector("finetune", ema=d, seed=3, **p).fit(in_domain, pool)
    assert len(seen) == len(ema.train_losses_)  # one update per optimiser step
    assert ema.train_losses_ == plain.train_losses_  # averaging never changes the training itself
    expect = seen[0]
    for w in seen[1:]:
        expect = d * expect + (1 - d) * w
    assert torch.allclose(ema._head.weight, expect, atol=1e-6)  # the average is what scores
    assert not torch.allclose(ema._head.weight, seen[-1])
    s = ema.score(pool)
    assert is_in[np.argsort(-s, kind="stable")[: is_in.sum()]].all()
    for bad in (-0.1, 1.0):
        with pytest.raises(DomainsiftError, match="ema must be in"):
            get_selector("finetune", ema=bad, **p).fit(in_domain, pool)
