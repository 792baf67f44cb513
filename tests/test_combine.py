"""combine: standardisation, the weighted sum, errors before output, the CLI end to end."""

import json
import os

import numpy as np
import pytest

from domainsift.cli import main
from domainsift._internal.errors import DomainsiftError
from domainsift.pipeline.combine import combine_runs, standardise
from domainsift.rundir import file_fingerprint, write_scores
from domainsift import Rule, run_select


def _run(path, scores, ids, probabilistic=False, method="m"):
    pool_file = path.parent / "pool.txt"
    pool_file.write_text("".join(f"line {i}\n" for i in range(1, 6)))
    real = os.path.realpath(pool_file)
    ids = np.array([[0, n] for _, n in ids], dtype=np.int64)
    pool = {"files": [real], "target_files": [], "n": len(ids), "fingerprints": {real: file_fingerprint(real)}}
    write_scores(path, np.asarray(scores, dtype=np.float64), ids, pool,
                    {"method": method, "probabilistic": probabilistic, "signature": f"{method}|v:0"})
    return path


def test_standardise_by_hand():
    z = standardise(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(z, [-1.224744871, 0.0, 1.224744871])
    # probabilities go through their logit first: 0.5 -> 0, 0.9 and 0.1 symmetric
    z = standardise(np.array([0.1, 0.5, 0.9]), probabilistic=True)
    np.testing.assert_allclose(z, [-1.224744871, 0.0, 1.224744871], atol=1e-12)
    np.testing.assert_allclose(standardise(np.array([5.0, 1.0, 1.0, 7.0]), "rank"), [0.75, 0.375, 0.375, 1.0])
    with pytest.raises(DomainsiftError, match="same score"):
        standardise(np.ones(4))
    with pytest.raises(DomainsiftError, match="not finite"):
        standardise(np.array([1.0, np.nan]))


def test_combine_weighted_sum_and_select(tmp_path):
    ids = [["pool.txt", i] for i in range(1, 5)]
    a = _run(tmp_path / "a", [4.0, 3.0, 2.0, 1.0], ids, method="a")
    b = _run(tmp_path / "b", [0.01, 0.2, 0.99, 0.5], ids, probabilistic=True, method="b")
    sig = combine_runs([a, b], tmp_path / "c", weights=[1.0, 2.0])
    za = standardise(np.array([4.0, 3.0, 2.0, 1.0]))
    zb = standardise(np.array([0.01, 0.2, 0.99, 0.5]), probabilistic=True)
    got = np.load(tmp_path / "c" / "scores.npy")
    np.testing.assert_allclose(got, za + 2 * zb)
    assert sig["method"] == "combine" and sig["combined"] == "a+b" and sig["weights"] == "1,2"
    assert [m["dir"] for m in sig["members"]] == [str(a), str(b)]
    assert np.load(tmp_path / "c" / "ids.npy")[:, 1].tolist() == [1, 2, 3, 4]
    sel = run_select(tmp_path / "c", tmp_path / "c", rule=Rule(top=1))
    assert sel["n_selected"] == 1
    best = (tmp_path / "c" / "selected.ids.tsv").read_text().splitlines()[1].split("\t")[:2]
    assert best == [str(tmp_path / "pool.txt"), str(int(np.argmax(za + 2 * zb)) + 1)]
    assert (tmp_path / "c" / "selected.txt").read_text() == f"line {int(np.argmax(za + 2 * zb)) + 1}\n"


def test_combine_refuses_mismatched_pools_without_output(tmp_path):
    a = _run(tmp_path / "a", [1.0, 2.0, 3.0], [["pool.txt", i] for i in (1, 2, 3)])
    b = _run(tmp_path / "b", [1.0, 2.0, 3.0], [["pool.txt", i] for i in (1, 2, 4)])
    with pytest.raises(DomainsiftError, match="different pool"):
        combine_runs([a, b], tmp_path / "c")
    assert not (tmp_path / "c").exists()
    with pytest.raises(DomainsiftError, match="at least two"):
        combine_runs([a], tmp_path / "c")
    with pytest.raises(DomainsiftError, match="2 weights for 3"):
        combine_runs([a, a, a], tmp_path / "c", weights=[1, 2])
    with pytest.raises(DomainsiftError, match="overwrite"):
        combine_runs([a, a], a)
    assert not (tmp_path / "c").exists()


def test_combine_cli_end_to_end(tmp_path, capsys):
    from conftest import make_sentences
    ind = tmp_path / "in.txt"
    ind.write_text("\n".join(make_sentences("med", 30, seed=1)) + "\n")
    med, law = tmp_path / "med.en", tmp_path / "law.en"
    med.write_text("\n".join(make_sentences("med", 20, seed=2)) + "\n")
    law.write_text("\n".join(make_sentences("law", 40, seed=3)) + "\n")
    for method, extra in (("moore-lewis", ["--order", "1"]), ("random", [])):
        assert main(["-q", "score", "--method", method, *extra, "--in-domain", str(ind),
                     "--pool", str(law), str(med), "--out", str(tmp_path / method)]) == 0
    # too many lines: a clear error and no output directory
    assert main(["-q", "combine", str(tmp_path / "moore-lewis"), str(tmp_path / "random"),
                 "--top", "61", "--out", str(tmp_path / "bad")]) == 2
    assert not (tmp_path / "bad").exists()
    out = tmp_path / "both"
    assert main(["-q", "combine", str(tmp_path / "moore-lewis"), str(tmp_path / "random"),
                 "--weights", "1", "0.1", "--top", "20", "--out", str(out)]) == 0
    assert "moore-lewis+random" in capsys.readouterr().out
    assert main(["-q", "evaluate", str(out), "--gold", str(med)]) == 0
    assert json.loads((out / "eval.json").read_text())["precision"] == 1.0  # the LM's clean ranking survives
    assert main(["-q", "select", "--from-scores", str(out), "--top", "5", "--out", str(tmp_path / "five")]) == 0
    assert len((tmp_path / "five" / "selected.en").read_text().splitlines()) == 5
