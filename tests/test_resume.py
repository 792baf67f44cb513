"""A killed scoring run resumes: no refit when the fit was saved, no rescoring of finished chunks."""

import domainsift as ds
import numpy as np
from domainsift.engine import Execution
import pytest

from conftest import make_sentences
from domainsift.io.corpus import Corpus, as_corpus
from domainsift.select import SELECTORS, get_selector
from domainsift.select.base import BaseSelector
from domainsift.rundir import RESUME as RESUME_DIR


class Killed(Exception):
    pass


class CountingSelector(BaseSelector):
    """Scores by text length; counts fits and scored texts; can die after some score calls."""

    name = "counting"
    saves_state = True  # the lifecycle the engine reads (no probing for save_state)
    calls = {"fit": 0, "scored": 0, "score_calls": 0}
    die_after = None

    def __init__(self, seed=0):
        self.seed = seed

    def fit(self, in_domain, pool=None):
        CountingSelector.calls["fit"] += 1
        return self

    def score(self, records):
        texts = as_corpus(records).texts
        c = CountingSelector.calls
        if CountingSelector.die_after is not None and c["score_calls"] >= CountingSelector.die_after:
            raise Killed()
        c["score_calls"] += 1
        c["scored"] += len(texts)
        return np.array([len(t) + 0.5 * (i % 3) for i, t in enumerate(texts)], float)

    def save_state(self, path):
        path.mkdir(parents=True)
        (path / "state").write_text("fitted")

    def load_state(self, path):
        assert (path / "state").read_text() == "fitted"
        return self


@pytest.fixture
def counting(monkeypatch):
    monkeypatch.setitem(SELECTORS, "counting", f"{__name__}:CountingSelector")
    CountingSelector.calls = {"fit": 0, "scored": 0, "score_calls": 0}
    CountingSelector.die_after = None
    return CountingSelector


def _corpora():
    texts = make_sentences("med", 25, 0)
    pool = Corpus(texts, [("pool.txt", i + 1) for i in range(25)], ["pool.txt"])
    return Corpus(texts[:3], [("in.txt", i + 1) for i in range(3)], ["in.txt"]), pool


def test_killed_run_resumes_without_refit_or_rescoring(counting, tmp_path):
    ind, pool = _corpora()
    counting.die_after = 2
    with pytest.raises(Killed):
        ds.run(ds.RunSpec.single("counting", ind, pool, tmp_path / "run", execution=Execution(shard_size=10))).signature
    assert counting.calls == {"fit": 1, "scored": 20, "score_calls": 2}
    assert not (tmp_path / "run" / "scores.npy").exists()
    counting.die_after = None
    ds.run(ds.RunSpec.single("counting", ind, pool, tmp_path / "run", execution=Execution(shard_size=10))).signature
    assert counting.calls["fit"] == 1  # the saved fit was loaded
    assert counting.calls["scored"] == 25  # only the last chunk was scored again
    assert not (tmp_path / "run" / RESUME_DIR).exists()
    fresh = get_selector("counting").score(pool.texts[20:])
    np.testing.assert_allclose(np.load(tmp_path / "run" / "scores.npy")[20:], fresh)


def test_changed_inputs_do_not_reuse_state(counting, tmp_path):
    ind, pool = _corpora()
    counting.die_after = 1
    with pytest.raises(Killed):
        ds.run(ds.RunSpec.single("counting", ind, pool, tmp_path / "run", execution=Execution(shard_size=10))).signature
    counting.die_after = None
    other = Corpus(ind.texts[:2], ind.ids[:2], ind.files)
    ds.run(ds.RunSpec.single("counting", other, pool, tmp_path / "run", execution=Execution(shard_size=10))).signature
    assert counting.calls["fit"] == 2 and counting.calls["scored"] == 10 + 25


def test_finetune_checkpoint_round_trip(tiny_models, tmp_path):
    ind = make_sentences("med", 12, 0)
    pool = make_sentences("med", 6, 1) + make_sentences("law", 12, 2)
    sel = get_selector("finetune", model=tiny_models["bert"], epochs=1, batch_size=8, holdout=0.25,
                       negatives="random", progress=False).fit(ind, pool)
    sel.save_state(tmp_path / "m")
    loaded = get_selector("finetune", model=tiny_models["bert"], progress=False).load_state(tmp_path / "m")
    np.testing.assert_allclose(loaded.score(pool), sel.score(pool), atol=1e-6)
    assert loaded.holdout_metrics_ == sel.holdout_metrics_
