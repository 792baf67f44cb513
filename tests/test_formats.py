"""Where users keep their data: Parquet, datasets.save_to_disk folders, zstd, directories and globs."""

import json

import numpy as np
import pytest

from conftest import make_sentences
from domainsift.cli import main

import pyarrow as pa  # the 'io' extra, installed by make test
import pyarrow.parquet as pq

MED, LAW = make_sentences("med", 24, 1), make_sentences("law", 36, 2)
POOL = MED[:12] + LAW[:18] + MED[12:] + LAW[18:]


def _run(argv, capsys=None):
    try:
        rc = main(["-q", *map(str, argv)])
    except SystemExit as exc:
        rc = exc.code
    return rc


@pytest.fixture
def stores(tmp_path):
    """The same 60-line pool as text, as two Parquet shards (with an extra column) and as a saved dataset."""
    text = tmp_path / "pool.txt"
    text.write_text("\n".join(POOL) + "\n")
    shards = tmp_path / "shards"
    shards.mkdir()
    for k, part in enumerate((POOL[:25], POOL[25:])):
        pq.write_table(pa.table({"text": part, "n_words": [len(t.split()) for t in part]}),
                       shards / f"part-{k}.parquet")
    import datasets
    datasets.Dataset.from_dict({"text": POOL, "n_words": [len(t.split()) for t in POOL]}).save_to_disk(
        str(tmp_path / "hf"))
    ind = tmp_path / "in.txt"
    ind.write_text("\n".join(make_sentences("med", 8, 9)) + "\n")
    return {"text": text, "parquet": shards / "*.parquet", "hf": tmp_path / "hf", "in": ind, "dir": tmp_path}


def test_the_same_selection_from_text_parquet_shards_and_a_saved_dataset(stores):
    results = {}
    for kind in ("text", "parquet", "hf"):
        out = stores["dir"] / f"run-{kind}"
        assert _run(["select", "--method", "moore-lewis", "--order", "1", "--in-domain", stores["in"],
                     "--pool", stores[kind], "--top", "12", "--out", out]) == 0
        gold = stores["text"] if kind == "text" else (stores["dir"] / "shards" if kind == "parquet" else stores["hf"])
        assert _run(["evaluate", out, "--gold", gold]) == 0  # every record of the pool: recall = 12/60
        scores = np.load(out / "scores.npy")
        ids = [line.split("\t")[:2] for line in (out / "selected.ids.tsv").read_text().splitlines()[1:]]
        results[kind] = (scores, ids, json.loads((out / "eval.json").read_text()))
    for kind in ("parquet", "hf"):
        np.testing.assert_array_equal(results[kind][0], results["text"][0])
        assert results[kind][2]["n_gold"] == 60 and results[kind][2]["recall"] == pytest.approx(0.2)
    # the same records, by position in the pool
    def positions(kind):  # a record's place in the whole pool, whatever its file
        run = stores["dir"] / f"run-{kind}"
        files = json.loads((run / "pool.json").read_text())["files"]
        where = {(files[f], str(n)): k for k, (f, n) in enumerate(np.load(run / "ids.npy").tolist())}
        return sorted(where[(f, n)] for f, n in results[kind][1])
    assert positions("parquet") == positions("text") == positions("hf")
    assert all(p < 12 or 30 <= p < 42 for p in positions("text"))  # the medical lines


def test_parquet_in_parquet_out_with_every_column_and_a_score(stores):
    out = stores["dir"] / "run"
    assert _run(["select", "--method", "moore-lewis", "--order", "1", "--in-domain", stores["in"],
                 "--pool", stores["parquet"], "--top", "5", "--out", out]) == 0
    t = pq.read_table(out / "selected.parquet")
    assert t.column_names == ["text", "n_words", "score"] and t.num_rows == 5
    assert all(len(x.split()) == n for x, n in zip(t["text"].to_pylist(), t["n_words"].to_pylist()))


def test_jsonl_out_keeps_every_field_and_zstd_round_trips(tmp_path):
    import zstandard
    rows = [{"text": t, "meta": {"i": i}} for i, t in enumerate(POOL)]
    jl = tmp_path / "pool.jsonl.zst"
    jl.write_bytes(zstandard.ZstdCompressor().compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    ind = tmp_path / "in.txt"
    ind.write_text("\n".join(make_sentences("med", 8, 9)) + "\n")
    assert _run(["select", "--method", "moore-lewis", "--order", "1", "--in-domain", ind, "--pool", jl,
                 "--top", "6", "--out", tmp_path / "run"]) == 0
    out = tmp_path / "run" / "selected.jsonl.zst"
    got = [json.loads(line) for line in zstandard.ZstdDecompressor().stream_reader(out.open("rb")).read().splitlines()]
    assert len(got) == 6 and all(set(r) == {"text", "meta"} for r in got)


def test_out_format_and_field_target(stores, tmp_path):
    pq.write_table(pa.table({"en": POOL, "de": [f"DE {t}" for t in POOL]}), tmp_path / "pairs.parquet")
    assert _run(["select", "--method", "moore-lewis", "--order", "1", "--in-domain", stores["in"],
                 "--pool", tmp_path / "pairs.parquet", "--field", "en", "--field-target", "de",
                 "--top", "4", "--out", tmp_path / "r1"]) == 0
    t = pq.read_table(tmp_path / "r1" / "selected.parquet")
    assert t.column_names == ["en", "de", "score"] and all(d == f"DE {e}" for e, d in zip(t["en"].to_pylist(),
                                                                                         t["de"].to_pylist()))
    assert _run(["select", "--from-scores", tmp_path / "r1", "--top", "4", "--out-format", "text",
                 "--out", tmp_path / "r2"]) == 0
    assert (tmp_path / "r2" / "selected.txt").read_text().splitlines() == t["en"].to_pylist()
    assert (tmp_path / "r2" / "selected.target.txt").read_text().splitlines() == t["de"].to_pylist()
    assert _run(["select", "--method", "random", "--in-domain", stores["in"], "--pool", stores["text"],
                 "--top", "3", "--out-format", "parquet", "--out", tmp_path / "r3"]) == 0
    assert pq.read_table(tmp_path / "r3" / "selected.parquet").column_names == ["file", "line", "text", "score"]


def test_directories_and_globs_are_sorted_and_keep_their_own_ids(tmp_path):
    from domainsift.io.corpus import read_corpus
    d = tmp_path / "d"
    d.mkdir()
    (d / "b.txt").write_text("two\n")
    (d / "a.txt").write_text("one\n")
    (d / ".hidden").write_text("never\n")
    c = read_corpus([d])
    assert c.texts == ["one", "two"] and [f.rsplit("/", 1)[1] for f, _ in c.ids] == ["a.txt", "b.txt"]
    assert read_corpus([str(d / "*.txt")]).texts == ["one", "two"]
    # a run written beside the data: its folder is no data (a glob of everything named it)
    assert main(["-q", "select", "--method", "random", "--in-domain", str(d / "a.txt"), "--pool", str(d),
                 "--top", "1", "--out", str(d / "run")]) == 0
    assert read_corpus([d]).texts == ["one", "two"]  # a directory's own files, not its folders
    from domainsift._internal.errors import InputError
    with pytest.raises(InputError, match=r"/d/run: a domainsift output folder, not text to read"):
        read_corpus([str(d / "*")])


@pytest.mark.parametrize("case, msg", [
    ("missing-column", "no column 'text'"),
    ("not-a-string", "row 1: column 'text' is not a string"),
    ("corrupt", "cannot read parquet"),
    ("no-match", "no file matches"),
])
def test_columnar_errors_name_the_file_and_row(case, msg, tmp_path, capsys):
    p = tmp_path / "bad.parquet"
    if case == "missing-column":
        pq.write_table(pa.table({"body": ["a b", "c d"]}), p)
    elif case == "not-a-string":
        pq.write_table(pa.table({"text": [1.5, 2.5]}), p)  # numbers where text should be
    elif case == "corrupt":
        pq.write_table(pa.table({"text": ["a b"] * 100}), p)
        p.write_bytes(p.read_bytes()[:-30])
    ind = tmp_path / "in.txt"
    ind.write_text("dose tablet\n")
    pool = tmp_path / "nothing-*.parquet" if case == "no-match" else p
    rc = _run(["score", "--method", "random", "--in-domain", ind, "--pool", pool, "--out", tmp_path / "o"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and msg in err and err.count("\n") == 0, err
    assert not (tmp_path / "o").exists()


def test_a_byte_order_mark_starts_a_file_and_no_text(tmp_path, capsys):
    """UTF-8 as Windows tools save it: the mark at the start of a file is not line 1's text (a JSONL file
    parses; a text file's first line reads as without it, by every reader) and is not copied into the
    middle of a selection; one inside a line is that line's text."""
    from domainsift.io.corpus import read_corpus
    from domainsift.io.parts import Layout, cut, read_segments, scan_part
    from domainsift.io.source import PoolSource
    bom = b"\xef\xbb\xbf"
    lines = make_sentences("med", 12, 1)
    text = tmp_path / "pool.txt"
    text.write_bytes(bom + "".join(f"{t}\n" for t in lines[:-1]).encode() + bom + lines[-1].encode() + b"\n")
    src = PoolSource.open([str(text)])
    assert read_corpus([str(text)]).texts[:-1] == lines[:-1] == src.corpus().texts[:-1]
    assert src.corpus().texts[-1] == "\ufeff" + lines[-1]  # not at the start of the file: the line's own
    for part_bytes in (5, 1 << 20):
        parts = cut(src, part_bytes)
        layout = Layout(src, parts, [scan_part(src, p) for p in parts], part_bytes)
        assert read_segments(src, layout.segments(np.arange(len(lines))))[0] == src.corpus().texts
    jl = tmp_path / "pool.jsonl"
    jl.write_bytes(bom + "".join(json.dumps({"text": t, "n": i}) + "\n" for i, t in enumerate(lines)).encode())
    ind = tmp_path / "in.txt"
    ind.write_text("".join(f"{t}\n" for t in make_sentences("med", 5, 2)), encoding="utf-8")
    assert main(["-q", "select", "--method", "random", "--in-domain", str(ind), "--pool", str(jl),
                 "--top", "12", "--out", str(tmp_path / "run")]) == 0
    out = (tmp_path / "run" / "selected.jsonl").read_bytes()
    assert bom not in out and [json.loads(r)["n"] for r in out.splitlines()] == list(range(12))
