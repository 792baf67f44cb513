import gzip
import json

import pytest

from domainsift.io.corpus import (read_corpus, read_labels, read_parallel, write_selected_lines)
from domainsift._internal.errors import InputError


def test_text_ids_and_empty_lines(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("one\n\n  \ntwo\nthree\n", encoding="utf-8")
    c = read_corpus(p)
    assert c.texts == ["one", "two", "three"]
    assert c.ids == [(str(p), 1), (str(p), 4), (str(p), 5)]
    assert c.n_empty == 2


def test_several_files_keep_their_ids(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("x\ny\n")
    b.write_text("x\n")
    c = read_corpus([a, b])
    assert c.texts == ["x", "y", "x"]
    assert c.ids[2] == (str(b), 1)
    assert c.labels == [str(a), str(a), str(b)]


def test_gzip(tmp_path):
    p = tmp_path / "a.txt.gz"
    with gzip.open(p, "wt", encoding="utf-8") as fh:
        fh.write("hallo welt\nzweite zeile\n")
    assert read_corpus(p).texts == ["hallo welt", "zweite zeile"]


def test_tsv_column(tmp_path):
    p = tmp_path / "a.tsv"
    p.write_text("1\tfirst sentence\tx\n2\tsecond\ty\n")
    assert read_corpus(p, column=1).texts == ["first sentence", "second"]


def test_tsv_missing_column(tmp_path):
    p = tmp_path / "a.tsv"
    p.write_text("1\tfirst\n2\n")
    with pytest.raises(InputError, match=r"a\.tsv:2: no column 1"):
        read_corpus(p, column=1)


def test_jsonl_field(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text(json.dumps({"text": "alpha", "id": 1}) + "\n" + json.dumps({"text": "beta"}) + "\n")
    assert read_corpus(p).texts == ["alpha", "beta"]
    p.write_text(json.dumps({"src": "alpha"}) + "\n" + json.dumps({"other": 1}) + "\n")
    with pytest.raises(InputError, match=r"a\.jsonl:2: no field 'src'"):
        read_corpus(p, field="src")


def test_jsonl_invalid_json(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text('{"text": "ok"}\n{broken\n')
    with pytest.raises(InputError, match=r"a\.jsonl:2: invalid JSON"):
        read_corpus(p)


def test_invalid_utf8_names_file_and_line(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"good line\nalso good\nbad \xff byte\n")
    with pytest.raises(InputError, match=r"bad\.txt:3: invalid UTF-8"):
        read_corpus(p)


def test_empty_file(tmp_path):
    p = tmp_path / "empty.txt"
    p.write_text("")
    with pytest.raises(InputError, match=r"empty\.txt: empty file"):
        read_corpus(p)
    q = tmp_path / "blank.txt"
    q.write_text("\n\n")
    with pytest.raises(InputError, match=r"blank\.txt: no non-empty lines"):
        read_corpus(q)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_corpus(tmp_path / "nope.txt")


def test_max_per_file_distinct(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("a\na\nb\nc\nd\n")
    assert read_corpus(p, max_per_file=3).texts == ["a", "a", "b"]
    c = read_corpus(p, max_per_file=3, distinct=True)
    assert c.texts == ["a", "b", "c"]
    assert c.n_duplicates_dropped == 1


def test_parallel(tmp_path):
    s, t = tmp_path / "p.en", tmp_path / "p.de"
    s.write_text("hello\n\nworld\nx\n")
    t.write_text("hallo\nleer\nwelt\n\n")
    c = read_parallel(s, t)
    assert c.texts == ["hello", "world"]
    assert c.targets == ["hallo", "welt"]
    assert c.ids == [(str(s), 1), (str(s), 3)]
    assert c.n_empty == 2


def test_parallel_length_mismatch(tmp_path):
    s, t = tmp_path / "p.en", tmp_path / "p.de"
    s.write_text("a\nb\nc\n")
    t.write_text("a\nb\n")
    with pytest.raises(InputError, match=r"p\.de:2: aligned files differ in length"):
        read_parallel(s, t)


def test_labels(tmp_path):
    p = tmp_path / "labels.txt"
    p.write_text("x\ny\n")
    assert read_labels(p, 2) == ["x", "y"]
    with pytest.raises(InputError, match="2 labels for 3 sentences"):
        read_labels(p, 3)


def test_write_selected_keeps_format(tmp_path):
    p = tmp_path / "a.jsonl"
    rows = [json.dumps({"text": t, "n": i}) for i, t in enumerate(["a", "b", "c"])]
    p.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out" / "selected.jsonl"
    n = write_selected_lines(out, [str(p)], {(str(p), 1), (str(p), 3)})
    assert n == 2
    assert out.read_text().splitlines() == [rows[0], rows[2]]
    assert not list(out.parent.glob(".*tmp"))
