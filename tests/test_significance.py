"""The paired bootstrap (domainsift.nmt.significance) is sacrebleu's: the same p-values as sacrebleu's own
``--paired-bs`` (its PairedTest, at its default seed and 1,000 samples) on a fixed tiny example, and an
interval of the difference that decides only what it should."""

from __future__ import annotations

import pytest

pytest.importorskip("sacrebleu")

REF = ["the cat sat on the mat", "a dog barks loudly at night", "hello world", "the weather is nice today",
       "i like green apples", "she reads a long book", "the train leaves at noon", "we walk to school"]
A = ["the cat sat on a mat", "a dog barks at night", "hello there world", "weather is nice today", "i like apples",
     "she reads a book", "the train leaves at twelve", "we go to school"]
B = ["the cat is on the mat", "the dog barks loudly at night", "hello world", "the weather nice today",
     "i like the green apples", "she is reading a long book", "a train leaves at noon", "we walk to the school"]


def test_the_p_values_are_sacrebleus_paired_bootstrap():
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    from domainsift.nmt.significance import paired_bootstrap
    _, theirs = PairedTest([("a", A), ("b", B)], {"BLEU": BLEU(), "chrF": CHRF(word_order=2)}, [REF],
                           test_type="bs", n_samples=1000)()
    ours = paired_bootstrap(A, B, REF, n_samples=1000, seed=12345)
    assert ours["bleu"]["p"] == round(theirs["BLEU"][1].p_value, 4)
    assert ours["chrfpp"]["p"] == round(theirs["chrF2++"][1].p_value, 4)
    assert ours["bleu"]["system"] == round(theirs["BLEU"][1].score, 4)
    assert ours["bleu"]["baseline"] == round(theirs["BLEU"][0].score, 4)
    assert abs(ours["bleu"]["difference"] - (ours["bleu"]["system"] - ours["bleu"]["baseline"])) < 2e-4
    low, high = ours["bleu"]["ci95"]
    assert low <= ours["bleu"]["difference"] <= high


def test_a_system_against_itself_is_not_decided_and_a_perfect_one_is():
    from domainsift.nmt.significance import paired_bootstrap, verdict
    same = paired_bootstrap(A, A, REF, n_samples=200, seed=1)
    assert same["bleu"]["difference"] == 0 and same["bleu"]["ci95"] == [0.0, 0.0] and verdict(same) == "not decided"
    perfect = paired_bootstrap(A * 5, REF * 5, REF * 5, n_samples=200, seed=1)
    assert verdict(perfect) == "better" and verdict(perfect, "chrfpp") == "better" and perfect["bleu"]["p"] < 0.05
    assert verdict(paired_bootstrap(REF * 5, A * 5, REF * 5, n_samples=200, seed=1)) == "worse"


def test_the_seed_is_explicit():
    from domainsift.nmt.significance import paired_bootstrap
    a = paired_bootstrap(A, B, REF, n_samples=300, seed=3)
    assert a == paired_bootstrap(A, B, REF, n_samples=300, seed=3)
    assert a["bleu"]["ci95"] != paired_bootstrap(A, B, REF, n_samples=300, seed=4)["bleu"]["ci95"]


def test_unaligned_lines_are_one_line():
    from domainsift._internal.errors import InputError
    from domainsift.nmt.significance import paired_bootstrap
    with pytest.raises(InputError, match="aligned lines: 8 baseline, 7 system and 8 reference"):
        paired_bootstrap(A, B[:-1], REF)
