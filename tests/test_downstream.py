"""Perplexity against a hand-computed case, the downstream CLI, and the cross-domain plumbing."""

import json
import math

import numpy as np
import pytest

from conftest import make_sentences
from domainsift.cli import main
from domainsift.jobs.downstream import cross_domain, pearson, run_names
from domainsift.lm import NgramLM, tokenize

HAND_ARPA = """\\data\\
ngram 1=4
ngram 2=2

\\1-grams:
-1.0 <s> -0.5
-0.30103 a -0.2
-0.60206 b
-0.60206 </s>

\\2-grams:
-0.1 <s> a
-0.2 a b

\\end\\
"""


def test_perplexity_hand_computed(tmp_path):
    p = tmp_path / "hand.arpa"
    p.write_text(HAND_ARPA)
    lm = NgramLM().load(str(p))
    # "a b":  P(a|<s>) = -0.1, P(b|a) = -0.2, P(</s>|b) = -0.60206 (b has no backoff weight)
    r = lm.perplexity(["a b"])
    assert r["perplexity"] == pytest.approx(10 ** (0.90206 / 3), rel=1e-5)
    assert r["oov_rate"] == 0 and r["n_tokens"] == 3
    # "B zz": P(b|<s>) backs off: bo(<s>) + P(b) = -0.5 - 0.60206; zz is OOV (left out);
    # P(</s>|zz) = P(</s>) = -0.60206. Lower-casing makes "B" the known "b".
    r = lm.perplexity(["a b", "B zz"])
    known = -0.1 - 0.2 - 0.60206 - 1.10206 - 0.60206
    assert r["perplexity"] == pytest.approx(10 ** (-known / 5), rel=1e-5)
    assert r["n_oov"] == 1 and r["oov_rate"] == pytest.approx(1 / 6)


def test_tokenize():
    assert tokenize("Don't STOP, now!") == ["don", "'", "t", "stop", ",", "now", "!"]


def test_trained_lm_prefers_its_domain():
    med_lm = NgramLM(order=2).fit(make_sentences("med", 200, 0))
    law_lm = NgramLM(order=2).fit(make_sentences("law", 200, 1))
    test = make_sentences("med", 30, 2)
    # perplexity leaves OOVs out (the law LM knows only </s> here), so compare with OOVs scored as <UNK>
    assert med_lm.cross_entropy(test).mean() < law_lm.cross_entropy(test).mean()
    assert med_lm.perplexity(test)["oov_rate"] == 0
    assert law_lm.perplexity(test)["oov_rate"] > 0.8  # every word; only </s> is known
    ce = med_lm.cross_entropy(test + make_sentences("law", 5, 3))
    assert ce.shape == (35,) and (ce[:30].max() < ce[30:].min())


def test_downstream_cli(tmp_path, capsys):
    ind = tmp_path / "in.txt"
    ind.write_text("\n".join(make_sentences("med", 40, 1)) + "\n")
    pool = tmp_path / "pool.txt"
    pool.write_text("\n".join(make_sentences("med", 60, 2) + make_sentences("law", 60, 3)) + "\n")
    test = tmp_path / "test.txt"
    test.write_text("\n".join(make_sentences("med", 30, 4)) + "\n")
    for name, method, extra in (("ml", "moore-lewis", ["--order", "1"]), ("r0", "random", []),
                                ("r1", "random", ["--seed", "1"])):
        assert main(["-q", "select", "--method", method, *extra, "--in-domain", str(ind), "--pool", str(pool),
                     "--top", "60", "--out", str(tmp_path / name)]) == 0
    out = tmp_path / "ds"
    assert main(["-q", "downstream", str(tmp_path / "ml"), str(tmp_path / "r0"), str(tmp_path / "r1"),
                 "--test", str(test), "--reference", f"all={pool}", "--order", "2", "--out", str(out)]) == 0
    res = json.loads((out / "downstream.json").read_text())
    assert res["test"] == str(test)
    names = [r["name"] for r in res["rows"]]
    assert names == ["moore-lewis", "r0", "r1", "all"]  # two random runs: named by directory
    rows = {r["name"]: r for r in res["rows"]}
    assert set(rows["all"]) >= {"name", "perplexity", "oov_rate", "n_sentences"}
    assert rows["moore-lewis"]["n_sentences"] == 60 and rows["all"]["n_sentences"] == 120
    assert rows["moore-lewis"]["perplexity"] < rows["r0"]["perplexity"]  # in-domain data fits better
    assert "perplexity" in capsys.readouterr().out


def test_downstream_bad_reference(tmp_path, capsys):
    t = tmp_path / "t.txt"
    t.write_text("x\n")
    assert main(["-q", "downstream", "--test", str(t), "--reference", "nofile", "--out", str(tmp_path / "o")]) == 2
    assert "NAME=FILE" in capsys.readouterr().err


class _DomainEmbedder:
    """Vectors that point where a sentence's words come from."""

    name = "fake"

    def encode(self, texts):
        from conftest import WORDS
        keys = list(WORDS)
        return np.array([[sum(w in WORDS[k] for w in t.split()) + 0.1 for k in keys] for t in texts], float)


def test_cross_domain_matrix_and_correlation(tmp_path):
    train, test = [], []
    for i, d in enumerate(["med", "law", "it"]):
        tr, te = tmp_path / f"{d}.train", tmp_path / f"{d}.test"
        tr.write_text("\n".join(make_sentences(d, 100, i)) + "\n")
        te.write_text("\n".join(make_sentences(d, 20, 10 + i)) + "\n")
        train.append((d, str(tr)))
        test.append((d, str(te)))
    res = cross_domain(train, test, order=2, embedder=_DomainEmbedder(), out_dir=tmp_path / "cd")
    ppl = np.array(res["perplexity"])
    assert ppl.shape == (3, 3)
    # rows are the LM's domain, columns the test's: recompute two cells independently
    from domainsift.io.corpus import read_corpus
    law_lm = NgramLM(order=2).fit(read_corpus(train[1][1]).texts)
    assert ppl[1, 1] == pytest.approx(law_lm.perplexity(read_corpus(test[1][1]).texts)["perplexity"])
    assert ppl[1, 2] == pytest.approx(law_lm.perplexity(read_corpus(test[2][1]).texts)["perplexity"])
    sim = np.array(res["centroid_similarity"])
    np.testing.assert_allclose(np.diag(sim), 1.0)
    off = ~np.eye(3, dtype=bool)
    assert res["pearson_similarity_vs_log_perplexity"] == pytest.approx(pearson(sim[off], np.log(ppl[off])))
    assert (tmp_path / "cd" / "crossdomain.png").stat().st_size > 1000
    assert json.loads((tmp_path / "cd" / "crossdomain.json").read_text())["domains"] == ["med", "law", "it"]


def test_pearson_hand_computed():
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    x, y = [1, 2, 3, 4], [1, 3, 2, 4]
    assert pearson(x, y) == pytest.approx(0.8)
    assert not math.isnan(pearson(x, y))


def test_run_names_need_signature(tmp_path):
    from domainsift._internal.errors import DomainsiftError
    with pytest.raises(DomainsiftError, match="not a domainsift run directory"):
        run_names([str(tmp_path)])


def _ngram_counts(arpa: str) -> dict:
    return {int(k): int(v) for k, v in (line.split()[1].split("=") for line in open(arpa) if line.startswith("ngram "))}


def test_unpruned_lm_keeps_every_ngram():
    """prune_scale 0 (paper 000's Moore–Lewis): every distinct n-gram of the training text is in the model;
    the default pruning keeps fewer trigrams (those seen once are cut)."""
    sents = make_sentences("med", 120, 5) + make_sentences("law", 40, 6)
    toks = [["<s>"] + tokenize(s) + ["</s>"] for s in sents]
    distinct = {n: len({tuple(t[i:i + n]) for t in toks for i in range(len(t) - n + 1)}) for n in (2, 3)}
    full_lm, pruned_lm = NgramLM(order=3, prune_scale=0).fit(sents), NgramLM(order=3).fit(sents)
    full, pruned = _ngram_counts(full_lm.arpa_path), _ngram_counts(pruned_lm.arpa_path)
    assert full[2] == distinct[2] and full[3] == distinct[3]
    assert pruned[3] < distinct[3]
    with pytest.raises(Exception, match="pruning scale"):
        NgramLM(order=3, prune_scale=-1)


def test_moore_lewis_per_sentence_is_per_token_times_length():
    """per="sentence" ranks by the difference of whole-sentence log-probabilities: the per-token score
    times the tokens scored (</s> included), so long in-domain lines rise above short ones."""
    from domainsift.io.corpus import as_corpus as Corpus
    from domainsift.select.moore_lewis import MooreLewisSelector
    ind = Corpus(make_sentences("med", 80, 1))
    pool = Corpus(make_sentences("med", 40, 2) + make_sentences("law", 40, 3) + ["zz"] * 3)
    tok = MooreLewisSelector(order=2, seed=1, progress=False).fit(ind, pool).score(pool)
    sent = MooreLewisSelector(order=2, seed=1, progress=False, per="sentence").fit(ind, pool).score(pool)
    lengths = np.array([len(tokenize(t)) + 1 for t in pool.texts])
    np.testing.assert_allclose(sent, tok * lengths, rtol=1e-9, atol=1e-9)
    assert not np.array_equal(np.argsort(-sent, kind="stable"), np.argsort(-tok, kind="stable"))
    with pytest.raises(Exception, match="per must be one of"):
        MooreLewisSelector(per="word").fit(["a b"], ["c d"])
