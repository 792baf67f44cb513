"""The pool is read at most three times by ``select``, with and without ``--cascade``, and each file is
hashed once per run: the reads are counted through the one opener of data files
(:func:`domainsift.io.corpus.open_file`), the hashes through :class:`domainsift.io.corpus.Digest`."""

from collections import Counter
from pathlib import Path

import pytest

import domainsift.io.corpus as corpus
from conftest import make_sentences, run_cli, write_lines


@pytest.fixture
def counted(monkeypatch):
    """Opens and finished SHA-256 digests per resolved path, for this test's calls."""
    opens, hashes = Counter(), Counter()
    real_open, real_result = corpus.open_file, corpus.Digest.result

    def open_file(path):
        opens[str(Path(path).resolve())] += 1
        return real_open(path)

    def result(self):
        hashes["result"] += 1  # one finished SHA-256
        return real_result(self)

    monkeypatch.setattr(corpus, "open_file", open_file)
    monkeypatch.setattr(corpus.Digest, "result", result)
    return opens, hashes


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pool = [write_lines(tmp_path / f"{d}.txt", make_sentences(d, 40, i)) for i, d in enumerate(("med", "law", "it"))]
    gz = tmp_path / "more.txt.gz"
    import gzip
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(make_sentences("med", 20, 9)) + "\n")
    return {"pool": [str(p) for p in pool] + [str(gz)],
            "in": str(write_lines(tmp_path / "in.txt", make_sentences("med", 10, 5)))}


def _reads(opens: Counter, files: dict) -> dict:
    return {Path(f).name: opens[str(Path(f).resolve())] for f in files["pool"]}


@pytest.mark.parametrize("method", ["cosine", "moore-lewis"])
def test_select_reads_each_pool_file_at_most_three_times(method, files, counted, capsys):
    opens, hashes = counted
    model = ["--model", "tfidf"] if method == "cosine" else []
    rc, err, _ = run_cli(["select", "--method", method, *model, "--cache", "", "--in-domain", files["in"],
                          "--pool", *files["pool"], "--top", "12", "--out", "run"], capsys)
    assert rc == 0, err
    reads = _reads(opens, files)
    assert max(reads.values()) <= 3 and min(reads.values()) >= 2, reads  # count and hash, score, the selection
    assert hashes["result"] == len(files["pool"]), hashes  # one SHA-256 per pool file
    assert (Path("run") / "selected.txt").read_text().count("\n") == 12


def test_a_cascade_reads_each_pool_file_at_most_three_times(files, counted, tiny_models, capsys):
    opens, hashes = counted
    rc, err, _ = run_cli(["select", "--method", "cosine", "--cascade", "--model", tiny_models["bert"], "--cache", "",
                          "--in-domain", files["in"], "--pool", *files["pool"], "--top", "12", "--out", "run"], capsys)
    assert rc == 0, err
    reads = _reads(opens, files)
    # count, hash and sample; the student's pass; the candidates (their bytes kept for the selection)
    assert max(reads.values()) <= 3, reads
    assert hashes["result"] == len(files["pool"]), hashes
    assert (Path("run") / "selected.txt").read_text().count("\n") == 12


def test_select_from_scores_hashes_once_and_reads_once_more(files, counted, capsys):
    opens, hashes = counted
    assert run_cli(["score", "--method", "cosine", "--model", "tfidf", "--cache", "", "--in-domain", files["in"],
                    "--pool", *files["pool"], "--out", "run"], capsys)[0] == 0
    opens.clear()
    hashes.clear()
    rc, err, _ = run_cli(["select", "--from-scores", "run", "--top", "5", "--out", "sel"], capsys)
    assert rc == 0, err
    assert set(_reads(opens, files).values()) == {2}  # the check of the files' bytes, then the selected lines
    assert hashes["result"] == len(files["pool"])


def test_the_selection_from_kept_bytes_is_the_selection_read_back(files, tiny_models, capsys, monkeypatch):
    """Under --cascade the selected lines are written from the candidates' bytes kept in the scoring pass;
    written from the files instead (select --from-scores), they are byte for byte the same."""
    import gzip
    crlf = Path(files["pool"][0])
    crlf.write_bytes(crlf.read_bytes().replace(b"\n", b"\r\n"))  # CRLF stays CRLF, byte for byte
    rc, err, _ = run_cli(["select", "--method", "cosine", "--cascade", "--model", tiny_models["bert"], "--cache", "",
                          "--in-domain", files["in"], "--pool", *files["pool"], "--top", "30", "--out", "run"], capsys)
    assert rc == 0, err
    assert run_cli(["select", "--from-scores", "run", "--top", "30", "--out", "again"], capsys)[0] == 0
    assert Path("run/selected.txt").read_bytes() == Path("again/selected.txt").read_bytes()
    assert b"\r\n" in Path("run/selected.txt").read_bytes()
    assert gzip  # the pool holds a .gz file: its lines are kept decompressed, as the files are written


@pytest.mark.parametrize("model,cascade", [("tfidf", False), ("bert", False), ("bert", True)],
                         ids=["tfidf", "shared-fit", "shared-fit-cascade"])
def test_a_three_target_mixture_reads_each_pool_file_at_most_three_times(model, cascade, files, counted, tiny_models,
                                                                         capsys, tmp_path):
    """Targets are a dimension of one run: the pool is counted, scored (every target at once) and its
    selected lines read, whatever the number of targets, with and without --cascade."""
    opens, hashes = counted
    targets = []
    for i, d in enumerate(("med", "law", "it")):
        targets += ["--target", f"{d}={write_lines(tmp_path / f'in_{d}.txt', make_sentences(d, 10, 50 + i))}"]
    rc, err, _ = run_cli(["select", "--method", "cosine", "--model", tiny_models.get(model, model), "--cache", "",
                          *(["--cascade"] if cascade else []), *targets, "--pool", *files["pool"], "--top", "24",
                          "--out", "mix"], capsys)
    assert rc == 0, err
    reads = _reads(opens, files)
    assert max(reads.values()) <= 3, reads
    assert hashes["result"] == len(files["pool"]), hashes
    assert (Path("mix") / "selected.mix.tsv").read_text().count("\n") == 25
