"""score / select / evaluate end to end on tiny data (moore-lewis and random: no model needed)."""

import json

import numpy as np
import pytest

from conftest import make_sentences
from domainsift.cli import main


@pytest.fixture
def sel_data(tmp_path):
    ind = tmp_path / "in.txt"
    ind.write_text("\n".join(make_sentences("med", 30, seed=1)) + "\n")
    med, law = tmp_path / "med.en", tmp_path / "law.en"
    med.write_text("\n".join(make_sentences("med", 20, seed=2)) + "\n")
    law.write_text("\n".join(make_sentences("law", 40, seed=3)) + "\n")
    med_de, law_de = tmp_path / "med.de", tmp_path / "law.de"
    med_de.write_text("".join(f"DE med {i}\n" for i in range(20)))
    law_de.write_text("".join(f"DE law {i}\n" for i in range(40)))
    return {"in": ind, "med": med, "law": law, "med_de": med_de, "law_de": law_de, "tmp": tmp_path}


def test_select_evaluate_end_to_end(sel_data, capsys):
    d = sel_data
    out = d["tmp"] / "run"
    rc = main(["-q", "select", "--method", "moore-lewis", "--order", "1", "--in-domain", str(d["in"]),
               "--pool", str(d["law"]), str(d["med"]), "--top", "20", "--seed", "3", "--out", str(out)])
    assert rc == 0
    sig = json.loads((out / "signature.json").read_text())
    assert sig["method"] == "moore-lewis" and sig["seed"] == 3 and sig["version"]
    assert sig["selection"] == {"top": 20}
    assert "moore-lewis|" in sig["signature"]
    assert np.load(out / "scores.npy").shape == (60,)
    assert len((out / "scores.tsv").read_text().splitlines()) == 61
    selected = (out / "selected.en").read_text().splitlines()
    assert len(selected) == 20
    assert main(["-q", "evaluate", str(out), "--gold", str(d["med"])]) == 0
    ev = json.loads((out / "eval.json").read_text())
    assert {"precision", "recall", "n_selected", "n_gold"} <= set(ev)
    assert ev["n_selected"] == 20 and ev["n_gold"] == 20
    assert ev["precision"] == ev["recall"] == 1.0  # disjoint vocabularies


def test_score_then_reselect(sel_data):
    d = sel_data
    sd = d["tmp"] / "scores"
    assert main(["-q", "score", "--method", "random", "--in-domain", str(d["in"]), "--pool", str(d["law"]),
                 "--out", str(sd)]) == 0
    assert not (sd / "selected.en").exists()
    assert main(["-q", "select", "--from-scores", str(sd), "--top", "7", "--out", str(d["tmp"] / "s7")]) == 0
    assert main(["-q", "select", "--from-scores", str(sd), "--fraction", "0.5", "--out", str(d["tmp"] / "half")]) == 0
    assert len((d["tmp"] / "s7" / "selected.en").read_text().splitlines()) == 7
    assert len((d["tmp"] / "half" / "selected.en").read_text().splitlines()) == 20
    # the 7 best are among the best half, and the ranking file agrees with the scores
    ids7 = (d["tmp"] / "s7" / "selected.ids.tsv").read_text().splitlines()[1:]
    ids20 = (d["tmp"] / "half" / "selected.ids.tsv").read_text().splitlines()[1:]
    assert ids7 == ids20[:7]


def test_parallel_pool_writes_both_sides(sel_data):
    d = sel_data
    out = d["tmp"] / "par"
    assert main(["-q", "select", "--method", "moore-lewis", "--order", "1", "--in-domain", str(d["in"]),
                 "--pool", str(d["law"]), str(d["med"]), "--pool-target", str(d["law_de"]), str(d["med_de"]),
                 "--top", "20", "--out", str(out)]) == 0
    en = (out / "selected.en").read_text().splitlines()
    de = (out / "selected.de").read_text().splitlines()
    assert len(en) == len(de) == 20
    med_lines = d["med"].read_text().splitlines()
    for e, g in zip(en, de):  # every pair stays aligned
        assert g == f"DE med {med_lines.index(e)}"


@pytest.mark.parametrize("case", ["empty_in", "pool_too_small", "mismatch", "n_zero", "n_negative"])
def test_bad_input_clear_error_and_no_output(sel_data, case, capsys):
    d = sel_data
    out = d["tmp"] / "bad"
    args = ["-q", "select", "--method", "random", "--in-domain", str(d["in"]), "--pool", str(d["law"]),
            "--top", "5", "--out", str(out)]
    if case == "empty_in":
        empty = d["tmp"] / "empty.txt"
        empty.write_text("\n")
        args[args.index(str(d["in"]))] = str(empty)
    elif case == "pool_too_small":
        args[args.index("5")] = "41"
    elif case == "mismatch":
        args[args.index("--top"):args.index("--top")] = ["--pool-target", str(d["med_de"])]
    elif case == "n_zero":
        args[args.index("5")] = "0"
    elif case == "n_negative":
        args[args.index("5")] = "-3"
    if case in ("n_zero", "n_negative"):
        with pytest.raises(SystemExit) as exc:
            main(args)
        assert exc.value.code == 2
        assert "positive" in capsys.readouterr().err
    else:
        assert main(args) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("domainsift: error:") and "\n" not in err
        expected = {"empty_in": "empty.txt: no non-empty lines", "pool_too_small": "cannot select 41 lines",
                    "mismatch": "differ in length"}[case]
        assert expected in err
    assert not out.exists()


def test_positive_needs_probabilities(sel_data, capsys):
    d = sel_data
    rc = main(["-q", "select", "--method", "random", "--in-domain", str(d["in"]), "--pool", str(d["law"]),
               "--positive", "--out", str(d["tmp"] / "p")])
    assert rc == 2 and "probability" in capsys.readouterr().err
    assert not (d["tmp"] / "p").exists()


def test_from_scores_missing_dir(tmp_path, capsys):
    assert main(["-q", "select", "--from-scores", str(tmp_path / "nothing"), "--top", "3"]) == 2
    assert "not a score directory" in capsys.readouterr().err


def test_combine_keeps_both_sides_of_a_parallel_pool(sel_data):
    d = sel_data
    for method in ("moore-lewis", "random"):
        assert main(["-q", "score", "--method", method, "--order", "1", "--in-domain", str(d["in"]),
                     "--pool", str(d["law"]), str(d["med"]), "--pool-target", str(d["law_de"]), str(d["med_de"]),
                     "--out", str(d["tmp"] / method)]) == 0
    out = d["tmp"] / "both"
    assert main(["-q", "combine", str(d["tmp"] / "moore-lewis"), str(d["tmp"] / "random"), "--weights", "1", "0.01",
                 "--top", "20", "--out", str(out)]) == 0
    en = (out / "selected.en").read_text().splitlines()
    de = (out / "selected.de").read_text().splitlines()
    assert len(en) == len(de) == 20
    assert all(line.startswith("DE med") for line in de)  # the pairs of the medical lines, both sides


def test_finetune_flags_reach_the_selector():
    # every finetune flag maps onto the selector's declared parameter of the same name
    from domainsift.cli import build_parser, selector_kwargs
    from domainsift.select import selector_class
    args = build_parser().parse_args(["score", "--method", "finetune", "--in-domain", "a", "--pool", "b",
                                      "--out", "c", "--negatives", "preranked", "--epochs", "3",
                                      "--neg-cut", "1/3", "--bucket", "0"])
    params = selector_kwargs(args)
    assert params["neg_cut"] == 1 / 3 and params["epochs"] == 3 and params["bucket"] == 0
    assert set(params) <= {p.name for p in selector_class("finetune").params}
    default = selector_kwargs(build_parser().parse_args(["score", "--method", "finetune", "--in-domain", "a",
                                                         "--pool", "b", "--out", "c"]))
    sel = selector_class("finetune")(**default)
    assert sel.neg_cut == 0.2 and sel.negatives == "random" or sel.negatives == "preranked"
    with pytest.raises(SystemExit):  # argparse: "not a number or fraction"
        build_parser().parse_args(["score", "--method", "finetune", "--in-domain", "a", "--pool", "b",
                                   "--out", "c", "--neg-cut", "one third"])
