"""The pool cut into parts a worker reads by itself (domainsift.io.parts): at every part size, the
scans summed by the driver give the records, ids and line numbers of one read of the whole pool,
errors name the file's own line, and the fingerprint catches a changed byte. No Ray here: the
functions the workers run are called directly."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from domainsift._internal.errors import InputError
from domainsift.io.parts import Layout, cut, file_parts_fingerprint, fingerprint_matches, read_segments, scan_part
from domainsift.io.source import PoolSource


def _layout(src: PoolSource, part_bytes: int) -> Layout:
    parts = cut(src, part_bytes)
    return Layout(src, parts, [scan_part(src, p) for p in parts], part_bytes)


def _records(src: PoolSource, layout: Layout, positions) -> list:
    texts, targets, fidx, lines, kept = read_segments(src, layout.segments(positions), raw=True)
    return list(zip(fidx, lines, texts, targets, [k[0] for k in kept]))


def _reference(src: PoolSource) -> list:
    return [(k, line, text, target, s_raw) for k, line, text, target, s_raw, _ in src._items(raw=True)]


@pytest.fixture
def files(tmp_path):
    text = tmp_path / "a.txt"
    text.write_bytes("alpha one\n\n  \nbeta two\r\nγάμμα three\n\ndelta\nlast line no newline".encode())
    tsv = tmp_path / "b.tsv"
    tsv.write_bytes(b"x\tfirst col\nq\t\ny\tsecond\nz\t\nw\tthird\n")
    jl = tmp_path / "c.jsonl"
    jl.write_text("".join(json.dumps({"text": t}) + "\n" for t in ["one", "", "two", "three"]), encoding="utf-8")
    gz = tmp_path / "d.txt.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.write("zipped one\n\nzipped two\n")
    return {"text": str(text), "tsv": str(tsv), "jsonl": str(jl), "gz": str(gz), "tmp": tmp_path}


@pytest.mark.parametrize("part_bytes", [1, 2, 3, 5, 7, 11, 16, 40, 1 << 20])
def test_parts_read_the_records_and_lines_of_one_read(files, part_bytes):
    for paths, column in (([files["text"], files["gz"]], 0), ([files["tsv"]], 1), ([files["jsonl"]], 0)):
        src = PoolSource.open(paths, column=column)
        ref = _reference(src)
        layout = _layout(src, part_bytes)
        assert len(layout) == len(ref)
        assert _records(src, layout, np.arange(len(ref))) == ref
        for pick in ([0], [len(ref) - 1], list(range(0, len(ref), 2)), [1, len(ref) - 2]):
            pick = sorted(set(pick))
            assert _records(src, layout, np.array(pick)) == [ref[i] for i in pick]


def test_a_split_file_is_read_from_the_mark_before_a_position(files, tmp_path, monkeypatch):
    import domainsift.io.parts as parts
    monkeypatch.setattr(parts, "MARK", 4)
    path = tmp_path / "big.txt"
    path.write_text("".join(f"line {i}\n" + ("\n" if i % 5 == 0 else "") for i in range(200)), encoding="utf-8")
    src = PoolSource.open([str(path)])
    ref = _reference(src)
    layout = _layout(src, 97)
    seg, = layout.segments(np.array([150]))
    assert seg.first <= 150 < seg.first + 4  # at most MARK - 1 records read past
    assert _records(src, layout, np.arange(140, 200)) == ref[140:200]


@pytest.mark.parametrize("bad, said", [(b"bad \xff here", ":51: invalid UTF-8"), (b"bad \x00 here", ":51: a NUL byte")])
def test_a_bad_line_in_a_later_part_names_the_files_own_line(tmp_path, bad, said):
    path = tmp_path / "pool.txt"
    path.write_bytes(b"".join(b"ok %d\n" % i for i in range(50)) + bad + b"\n" + b"ok\n")
    src = PoolSource.open([str(path)])
    with pytest.raises(InputError) as local:
        list(src.records())
    with pytest.raises(InputError) as parted:
        _layout(src, 64)
    assert str(parted.value) == str(local.value)
    assert said in str(parted.value)


def test_files_without_records_are_refused_as_one_read_refuses_them(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    blank = tmp_path / "blank.txt"
    blank.write_bytes(b"\n  \n\n" * 20)
    ok = tmp_path / "ok.txt"
    ok.write_bytes(b"a line\n")
    for bad, what in ((empty, "empty file"), (blank, "no non-empty lines")):
        src = PoolSource.open([str(ok), str(bad)])
        with pytest.raises(InputError, match=what):
            _layout(src, 8)


def test_a_parallel_pool_is_read_whole_per_file(tmp_path):
    de = tmp_path / "p.de"
    en = tmp_path / "p.en"
    de.write_text("eins\nzwei\n\nvier\n", encoding="utf-8")
    en.write_text("one\ntwo\nthree\nfour\n", encoding="utf-8")
    src = PoolSource.open([str(de)], [str(en)])
    layout = _layout(src, 2)
    assert [p.end for p in layout.parts] == [None]
    assert set(layout.fingerprints) == {str(de), str(en)}
    texts, targets, _, lines, _ = read_segments(src, layout.segments(np.arange(len(layout))))
    assert (texts, targets, lines) == (["eins", "zwei", "vier"], ["one", "two", "four"], [1, 2, 4])


def test_the_parts_fingerprint_is_the_files_and_catches_a_changed_byte(files):
    src = PoolSource.open([files["text"]])
    layout = _layout(src, 5)
    fp = layout.fingerprints[files["text"]]
    assert fp == file_parts_fingerprint(files["text"], 5)
    assert fingerprint_matches(files["text"], fp)
    data = bytearray(open(files["text"], "rb").read())
    data[12] ^= 1
    open(files["text"], "wb").write(bytes(data))
    assert not fingerprint_matches(files["text"], fp)
    whole = _layout(PoolSource.open([files["gz"]]), 5).fingerprints[files["gz"]]
    assert "sha256" in whole and fingerprint_matches(files["gz"], whole)


@pytest.mark.parametrize("part_bytes", [1, 7, 40, 1 << 20])
def test_strip_id_parts_read_the_plain_texts_of_a_numbered_file(tmp_path, part_bytes):
    plain = ["alpha one", "", "beta two", "2. For the years", "γάμμα three", "7:"]
    numbered = tmp_path / "n.txt"
    numbered.write_text("".join(f"{i}: {t}\n" if t and t != "7:" else f"{t}\n" for i, t in enumerate(plain, 1)),
                        encoding="utf-8")
    src = PoolSource.open([str(numbered)], strip_id=True)
    ref = _reference(src)
    # the texts without their IDs; a number that is text stays; a line that is an ID alone is left out, as an
    # empty line is, by every reader (the parts' scan and reads too)
    assert [text for _, _, text, _, _ in ref] == ["alpha one", "beta two", "2. For the years", "γάμμα three"]
    assert [raw.decode().rstrip("\n") for *_, raw in ref][:2] == ["1: alpha one", "3: beta two"]  # bytes as read
    layout = _layout(src, part_bytes)
    assert _records(src, layout, np.arange(len(ref))) == ref
    assert len(PoolSource.open([str(numbered)])) == len(src) + 1  # "7:" is a record only without --strip-id
