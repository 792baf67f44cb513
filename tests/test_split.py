"""Clean splits on hand-made corpora with known answers, and on the shared data."""

import json
from pathlib import Path

import pytest

from domainsift.cli import main
from domainsift._internal.errors import InputError
from domainsift.io.split import MultiDomainCorpus, read_directory, read_tsv
from domainsift.jobs.split import clean_split, make_normaliser, run_split, split_stats

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "opus-multidomain" / "de-en"


def write_domain(d: Path, domain: str, split: str, pairs):
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{domain}.{split}.de").write_text("".join(s + "\n" for s, _ in pairs), encoding="utf-8")
    (d / f"{domain}.{split}.en").write_text("".join(t + "\n" for _, t in pairs), encoding="utf-8")


def corpus(**domains):
    return MultiDomainCorpus(data={d: {sp: list(p) for sp, p in splits.items()} for d, splits in domains.items()})


def test_dedup_keeps_one_translation_per_side():
    c = corpus(med={"train": [("a", "A"), ("a", "A2"), ("b", "A"), ("c", "C"), (" c ", "C")]})
    out = clean_split(c)
    assert out.data["med"]["train"] == [("a", "A"), ("c", "C")]


def test_train_pairs_in_dev_or_test_are_dropped():
    c = corpus(med={"train": [("x", "X"), ("y", "Y"), ("z", "Q"), ("w", "W")],
                    "dev": [("y", "other")], "test": [("other", "Q")]})
    out = clean_split(c)
    assert out.data["med"]["train"] == [("x", "X"), ("w", "W")]


def test_across_domains():
    c = corpus(med={"train": [("x", "X"), ("k", "K")], "test": [("t", "T")]},
               law={"train": [("l", "L")], "test": [("k", "K")]})
    assert clean_split(c).data["med"]["train"] == [("x", "X"), ("k", "K")]
    assert clean_split(c, across_domains=True).data["med"]["train"] == [("x", "X")]


def test_dev_test_overlap_removed_from_dev():
    c = corpus(med={"train": [("x", "X")], "dev": [("d", "D"), ("t", "T9")], "test": [("t", "T")]})
    assert clean_split(c).data["med"]["dev"] == [("d", "D")]


def test_carve_dev_test_and_cap_are_seeded():
    pairs = [(f"s{i}", f"t{i}") for i in range(50)]
    c = corpus(med={"train": pairs})
    a = clean_split(c, dev_size=5, test_size=7, cap=20, seed=1)
    b = clean_split(c, dev_size=5, test_size=7, cap=20, seed=1)
    other = clean_split(c, dev_size=5, test_size=7, cap=20, seed=2)
    assert a.data == b.data and a.data != other.data
    med = a.data["med"]
    assert len(med["dev"]) == 5 and len(med["test"]) == 7 and len(med["train"]) == 20
    all_src = [s for sp in med.values() for s, _ in sp]
    assert len(all_src) == len(set(all_src))  # carved sets are disjoint from train
    assert set(all_src) <= {s for s, _ in pairs}


def test_existing_splits_are_not_carved():
    c = corpus(med={"train": [("a", "A"), ("b", "B")], "test": [("t", "T")]})
    out = clean_split(c, test_size=1)
    assert out.data["med"]["test"] == [("t", "T")] and len(out.data["med"]["train"]) == 2


def test_normalisation_options():
    n = make_normaliser(["case", "punct", "space"])
    assert n("  Hello,   World! ") == n("hello world")
    c = corpus(med={"train": [("Hello, world", "A"), ("hello world", "B")]})
    assert len(clean_split(c).data["med"]["train"]) == 2
    assert len(clean_split(c, normalise=["case", "punct"]).data["med"]["train"]) == 1
    with pytest.raises(InputError, match="unknown normalisation"):
        make_normaliser(["stem"])


def test_stats_hand_computed():
    c = corpus(med={"train": [("a", "A"), ("a", "B"), ("c", "C")], "test": [("a", "Z"), ("q", "C")]})
    st = split_stats(c, make_normaliser())
    assert st["med"]["splits"]["train"] == {"pairs": 3, "distinct_src": 2, "distinct_tgt": 3}
    assert st["med"]["overlaps"]["train&test"] == {"src": 1, "tgt": 1}
    assert st["med"]["overlaps"]["train&dev"] is None


def test_directory_and_report_end_to_end(tmp_path, capsys):
    d = tmp_path / "corpus"
    write_domain(d, "med", "train", [("a", "A"), ("a", "A2"), ("b", "B"), ("t", "T"), ("e", "E")])
    write_domain(d, "med", "test", [("t", "T")])
    write_domain(d, "law", "train", [("l1", "L1"), ("l2", "L2")])
    out = tmp_path / "out"
    assert main(["-q", "split", "--corpus", str(d), "--src", "de", "--tgt", "en", "--out", str(out),
                 "--dev-size", "1"]) == 0
    train = (out / "med.train.de").read_text().splitlines()
    dev = (out / "med.dev.de").read_text().splitlines()
    assert len(train) == 2 and len(dev) == 1  # a, b, e left after dedup and the test overlap; 1 carved
    assert sorted(train + dev) == ["a", "b", "e"]
    assert (out / "med.test.en").read_text().splitlines() == ["T"]
    rep = json.loads((out / "report.json").read_text())
    assert rep["before"]["med"]["splits"]["train"]["pairs"] == 5
    assert rep["before"]["med"]["overlaps"]["train&test"] == {"src": 1, "tgt": 1}
    assert rep["after"]["med"]["overlaps"]["train&test"] == {"src": 0, "tgt": 0}
    assert rep["after"]["law"]["splits"]["dev"]["pairs"] == 1
    assert "train∩test" in (out / "report.md").read_text()
    assert "| med | train |" in capsys.readouterr().out


def test_tsv_input(tmp_path):
    p = tmp_path / "c.tsv"
    p.write_text("domain\tsplit\tsrc\ttgt\nmed\ttrain\ta\tA\nmed\ttrain\ta\tA2\nmed\ttest\tt\tT\n")
    c = read_tsv(p)
    assert c.data["med"]["train"] == [("a", "A"), ("a", "A2")]
    rep = run_split(c, tmp_path / "o", "de", "en")
    assert rep["after"]["med"]["splits"]["train"]["pairs"] == 1
    bad = tmp_path / "bad.tsv"
    bad.write_text("med\ttrain\ta\tA\nmed\tholdout\tb\tB\n")
    with pytest.raises(InputError, match=r"bad\.tsv:2: unknown split"):
        read_tsv(bad)


def test_missing_and_misaligned_files(tmp_path, capsys):
    d = tmp_path / "c"
    write_domain(d, "med", "train", [("a", "A")])
    (d / "med.test.de").write_text("x\n")
    with pytest.raises(InputError, match=r"med\.test\.en: missing"):
        read_directory(d, "de", "en")
    (d / "med.test.en").write_text("x\ny\n")
    with pytest.raises(InputError, match="differ in length"):
        read_directory(d, "de", "en")
    out = tmp_path / "o"
    assert main(["-q", "split", "--corpus", str(d), "--src", "de", "--tgt", "en", "--out", str(out)]) == 2
    assert not out.exists()


@pytest.mark.skipif(not SHARED.exists(), reason="shared OPUS data not beside the repository")
def test_shared_data_known_warts_and_clean_output(tmp_path):
    rep = run_split(read_directory(SHARED, "de", "en"), tmp_path, "de", "en")
    before = rep["before"]
    assert before["Tanzil"]["overlaps"]["train&test"]["tgt"] == 19  # 19 English test sentences in train
    assert 5000 - before["EMEA"]["splits"]["train"]["distinct_tgt"] == 75
    assert 5000 - before["Tanzil"]["splits"]["train"]["distinct_tgt"] == 64
    assert 5000 - before["KDE4"]["splits"]["train"]["distinct_tgt"] == 21
    # re-read the written files: no repeats inside train, no train/test overlap on either side
    for domain in before:
        tr_de = (tmp_path / f"{domain}.train.de").read_text().splitlines()
        tr_en = (tmp_path / f"{domain}.train.en").read_text().splitlines()
        te_de = (tmp_path / f"{domain}.test.de").read_text().splitlines()
        te_en = (tmp_path / f"{domain}.test.en").read_text().splitlines()
        assert len(tr_de) == len(tr_en) > 4000
        assert len(set(map(str.strip, tr_de))) == len(tr_de)
        assert len(set(map(str.strip, tr_en))) == len(tr_en)
        assert not set(map(str.strip, tr_de)) & set(map(str.strip, te_de))
        assert not set(map(str.strip, tr_en)) & set(map(str.strip, te_en))
