"""Never lose or mix up a user's data: each test is one probe a hostile or careless user tried."""

import gzip
import json
import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

from conftest import cli_data, make_sentences, run_cli, run_killed, write_lines
from domainsift.cli import main


_write = write_lines


def _run(argv, capsys):
    return run_cli(argv, capsys)[:2]


@pytest.fixture
def data(tmp_path, monkeypatch):
    return cli_data(tmp_path, monkeypatch)


# 1. no writes outside --out

@pytest.mark.parametrize("domain", ["../../escaped", "/tmp/abs-escape", "a/b", "bad\x07name", ".."])
def test_split_refuses_domain_names_that_leave_the_output_folder(domain, tmp_path, capsys):
    tsv = tmp_path / "c.tsv"
    rows = ["domain\tsplit\tsrc\ttgt"] + [f"{domain}\ttrain\tHallo {i}\tHello {i}" for i in range(5)]
    tsv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    before = set(tmp_path.parent.rglob("*"))
    rc, err = _run(["split", "--corpus", tsv, "--src", "de", "--tgt", "en", "--out", tmp_path / "out"], capsys)
    assert rc == 2 and "c.tsv:2: domain" in err and err.count("\n") == 0
    assert set(tmp_path.parent.rglob("*")) == before
    rc, err = _run(["split", "--corpus", tsv, "--src", "../de", "--tgt", "en", "--out", tmp_path / "o2"], capsys)
    assert rc == 2


# 2. inputs are never overwritten

def test_a_selection_never_replaces_its_own_pool(data, capsys):
    assert _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", data["med"],
                 "--top", "10", "--out", "run"], capsys)[0] == 0
    pool = data["tmp"] / "run" / "selected.txt"
    before = pool.read_bytes()
    rc, err = _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", pool,
                    "--top", "5", "--out", "run"], capsys)
    assert rc == 2 and "would overwrite it" in err
    assert pool.read_bytes() == before
    link = data["tmp"] / "run2"
    link.mkdir()
    os.link(data["med"], link / "selected.txt")  # the same inode under an output's name
    rc, err = _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", data["med"],
                    "--top", "5", "--out", link], capsys)
    assert rc == 2 and "would overwrite it" in err
    assert len(data["med"].read_text().splitlines()) == 20


def test_embed_and_cluster_never_replace_their_inputs(data, capsys):
    d = data["tmp"] / "emb"
    d.mkdir()
    ids = _write(d / "ids.tsv", make_sentences("med", 5, 0))
    rc, err = _run(["embed", ids, "--model", "random", "--out", d], capsys)
    assert rc == 2 and "would overwrite" in err and len(ids.read_text().splitlines()) == 5


# 3. a run directory proves what it holds

def test_from_scores_works_from_another_directory_and_refuses_a_planted_pool(data, capsys, monkeypatch):
    assert _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", "med.txt",
                 "--out", "run"], capsys)[0] == 0
    other = data["tmp"] / "elsewhere"
    other.mkdir()
    _write(other / "med.txt", ["a different file"] * 20)  # same relative name, other content
    monkeypatch.chdir(other)
    assert _run(["select", "--from-scores", data["tmp"] / "run", "--top", "3", "--out", other / "sel"], capsys)[0] == 0
    assert set((other / "sel" / "selected.txt").read_text().splitlines()) <= set(data["med"].read_text().splitlines())
    planted = json.loads((data["tmp"] / "run" / "pool.json").read_text())
    secret = _write(data["tmp"] / "secret.txt", [f"secret {i}" for i in range(20)])
    planted["files"] = [str(secret)]
    planted.pop("fingerprints")
    (data["tmp"] / "run" / "pool.json").write_text(json.dumps(planted))
    rc, err = _run(["select", "--from-scores", data["tmp"] / "run", "--top", "3", "--out", other / "s2"], capsys)
    assert rc == 2 and "no fingerprint" in err and not (other / "s2").exists()
    rc, err = _run(["evaluate", data["tmp"] / "run", "--gold", secret], capsys)
    assert rc == 2


# 4. a failed run never leaves a mix that a later run trusts

def test_a_run_killed_while_rewriting_leaves_nothing_that_from_scores_trusts(data, capsys, monkeypatch):
    assert _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", data["med"], data["law"],
                 "--top", "5", "--out", "run"], capsys)[0] == 0
    assert _run(["evaluate", "run", "--gold", data["med"]], capsys)[0] == 0
    import domainsift.rundir.scores as rundir  # the score directory's writer
    real = rundir.save_json

    def dying(path, obj):
        if Path(path).name == "pool.json":
            raise OSError(28, "No space left on device", str(path))
        return real(path, obj)

    monkeypatch.setattr(rundir, "save_json", dying)
    rc, err = _run(["score", "--method", "random", "--seed", "7", "--in-domain", data["in"], "--pool", data["med"],
                    data["law"], "--out", "run", "--overwrite"], capsys)
    assert rc == 2 and "No space left" in err and err.count("\n") == 0
    monkeypatch.setattr(rundir, "save_json", real)
    rc, err = _run(["select", "--from-scores", "run", "--top", "3"], capsys)
    assert rc == 2 and "not a score directory" in err
    assert not any((data["tmp"] / "run" / n).exists() for n in ("selected.txt", "eval.json", "selection.json"))


def test_leftovers_of_a_parallel_selection_never_sit_beside_a_new_one(data, capsys):
    de = _write(data["tmp"] / "med.de", [f"DE {t}" for t in data["med"].read_text().splitlines()])
    en = data["tmp"] / "med.en"
    shutil.copy(data["med"], en)
    assert _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", en, "--pool-target", de,
                 "--top", "5", "--out", "run"], capsys)[0] == 0
    assert (data["tmp"] / "run" / "selected.de").exists()
    assert _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", en,
                 "--top", "5", "--out", "run", "--overwrite"], capsys)[0] == 0
    assert not (data["tmp"] / "run" / "selected.de").exists()


# 5. the cache keys exact content

def test_texts_holding_nul_never_share_a_cache_chunk(tmp_path):
    from domainsift.embed.cache import CachedEmbedder

    class Fake:
        name = "fake"
        cache_key = "fake|1"

        def encode(self, texts):
            return np.array([[len(t), t.count("\x00")] for t in texts], dtype=np.float32)

    emb = CachedEmbedder(Fake(), tmp_path, progress=False)
    a = emb.encode(["a\x00b", "c"])
    b = emb.encode(["a", "b\x00c"])
    assert emb.last_misses_ == 1 and a.tolist() != b.tolist()


# 6. every option is range-checked (beside tests/test_numbers.py's table)

@pytest.mark.parametrize("argv, msg", [
    (["select", "--method", "random", "--threshold", "nan"], "finite"),
    (["embed", "--model", "random", "--batch-size", "0"], "positive integer"),
    (["embed", "--model", "random", "--max-length", "-5"], "positive integer"),
    (["embed", "--model", "random", "--column", "-1", "--format", "tsv"], "--column"),
    (["embed", "--model", "{tiny}", "--layer", "99"], "--layer 99"),
    (["embed", "--model", "tfidf", "--one-line"], "tfidf-svd50 needs at least two lines"),
])
def test_bad_option_values_are_one_line(argv, msg, data, tiny_models, capsys):
    one = _write(data["tmp"] / "one.txt", ["just one line"])
    files = [one] if "--one-line" in argv else [data["med"]]
    argv = [a.format(tiny=tiny_models["bert"]) for a in argv if a != "--one-line"]
    if argv[0] == "select":
        argv += ["--in-domain", str(data["in"]), "--pool", str(data["med"])]
    else:
        argv = argv[:1] + [str(f) for f in files] + argv[1:]
    rc, err = _run(argv + ["--out", "out"], capsys)
    assert rc == 2 and msg in err and err.count("\n") == 0, err
    assert not (data["tmp"] / "out").exists()


# 7. operating-system errors are one line

@pytest.mark.parametrize("where", ["a-file", "/proc/domainsift-cannot-write-here"])
def test_an_unwritable_out_is_one_line(where, data, capsys):
    out = data["tmp"] / "a-file" if where == "a-file" else Path(where)
    if where == "a-file":
        out.write_text("I am a file\n")
    rc, err = _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", data["med"],
                    "--top", "3", "--out", out], capsys)
    assert rc == 2 and err.count("\n") == 0 and "Traceback" not in err and str(out) in err, err
    if where == "a-file":
        assert out.read_text() == "I am a file\n"


# 8. small ones

def test_crlf_input_is_written_back_byte_for_byte(data, capsys):
    crlf = data["tmp"] / "crlf.txt"
    crlf.write_bytes(b"".join(t.encode() + b"\r\n" for t in make_sentences("med", 10, 0)))
    assert _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", crlf, "--top", "4",
                 "--out", "run"], capsys)[0] == 0
    out = (data["tmp"] / "run" / "selected.txt").read_bytes()
    assert out.count(b"\r\n") == 4 and set(out.splitlines(keepends=True)) <= set(crlf.read_bytes().splitlines(True))


def test_a_pool_file_given_twice_is_an_error(data, capsys):
    rc, err = _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", data["med"],
                    data["tmp"] / "." / "med.txt", "--out", "run"], capsys)
    assert rc == 2 and "given twice" in err and not (data["tmp"] / "run").exists()


def test_outputs_get_normal_permissions(data, capsys):
    old = os.umask(0o022)
    try:
        assert _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", data["med"],
                     "--top", "3", "--out", "run"], capsys)[0] == 0
    finally:
        os.umask(old)
    for name in ("selected.txt", "scores.npy", "signature.json"):
        assert stat.S_IMODE((data["tmp"] / "run" / name).stat().st_mode) == 0o644


def test_file_names_with_a_tab_are_refused(data, capsys):
    odd = data["tmp"] / "odd\tname.txt"
    shutil.copy(data["med"], odd)
    rc, err = _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", odd, "--out", "run"], capsys)
    assert rc == 2 and "tab or line break" in err and err.count("\n") == 0


def test_the_fine_tuned_head_is_loaded_with_weights_only(tiny_models, tmp_path, monkeypatch):
    import torch
    from domainsift.select import get_selector
    ind, pool = make_sentences("med", 8, 0), make_sentences("law", 8, 1)
    sel = get_selector("finetune", model=tiny_models["bert"], epochs=1, batch_size=8, negatives="random",
                       holdout=0.0, progress=False, cache_dir="").fit(ind, pool)
    sel.save_state(tmp_path / "m")
    seen = []
    real = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: seen.append(k) or real(*a, **k))
    get_selector("finetune", model=tiny_models["bert"], progress=False).load_state(tmp_path / "m")
    assert seen and all(k.get("weights_only") is True for k in seen)


# a small corpus of hostile files through every command that reads text

def _hostile(tmp: Path) -> dict:
    ok = make_sentences("med", 12, 0)
    files = {
        "invalid-utf8.txt": (b"fine line\n\xff\xfe broken\n", "invalid UTF-8"),
        # valid UTF-8 that no text holds: UTF-16 without its mark reads as text with a NUL before every letter
        "nul.txt": ("\n".join(t.replace(" ", "\x00", 1) for t in ok).encode() + b"\n", "nul.txt:1: a NUL byte"),
        "utf16.txt": ("\n".join(ok).encode("utf-16"), "UTF-16 (it starts with UTF-16's byte-order mark)"),
        "utf16le.txt": ("\n".join(ok).encode("utf-16-le"), "a NUL byte"),
        "bom.txt": (b"\xef\xbb\xbf" + "\n".join(ok).encode() + b"\n", None),
        "crlf.txt": ("\r\n".join(ok).encode() + b"\r\n", None),
        "long-line.txt": ("\n".join(ok + ["word " * 200_000]).encode() + b"\n", None),
        "empty.txt": (b"", "empty file"),
        "blank-only.txt": (b"\n  \n\t\n", "no non-empty lines"),
        "truncated.txt.gz": (gzip.compress("\n".join(ok).encode())[:-12], "cannot read"),
        "bad.jsonl": (b'{"text": "ok"}\n{not json}\n', "invalid JSON"),
        "bad-field.jsonl": (b'{"text": "ok"}\n{"other": "x"}\n', "no field 'text'"),
        "pretty.json": (b'[\n  {"text": "ok"},\n  {"text": "two"}\n]\n', "1: a JSON document over several lines"),
        "array.jsonl": (b'[{"text": "ok"}, {"text": "two"}]\n', "1: a JSON array, not an object"),
        "short.tsv": (b"a\tb\nc\n", "no column 1"),
        "odd name with spaces & (parens).txt": ("\n".join(ok).encode() + b"\n", None),
    }
    for name, (content, _) in files.items():
        (tmp / name).write_bytes(content)
    return {tmp / name: msg for name, (_, msg) in files.items()}


@pytest.mark.parametrize("command", ["embed", "cluster", "score", "select"])
def test_hostile_files_through_every_command(command, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ind = _write(tmp_path / "in.txt", make_sentences("med", 4, 9))
    for path, msg in _hostile(tmp_path).items():
        out = tmp_path / f"out-{command}"
        extra = ["--column", "1"] if path.suffix == ".tsv" else []
        if command == "embed":
            argv = ["embed", path, "--model", "random", "--out", out]
        elif command == "cluster":
            argv = ["cluster", path, "--embedder", "random", "--k", "2", "--pca", "0", "--seeds", "1",
                    "--no-plots", "--out", out]
        else:
            argv = [command, "--method", "random", "--in-domain", ind, "--pool", path, "--out", out]
            argv += ["--top", "2"] if command == "select" else []
        rc, err = _run(argv + extra, capsys)
        if msg is None:
            assert rc == 0, (path.name, err)
        else:
            assert rc == 2 and msg in err and err.count("\n") == 0 and path.name in err, (path.name, err)
            assert not out.exists(), path.name
        shutil.rmtree(out, ignore_errors=True)


# kills at random moments end byte-identical to an uninterrupted run

class Killed(BaseException):
    pass


def _outputs(d: Path) -> dict:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*"))
            if p.is_file() and p.name != "run.json"}


@pytest.mark.slow
@pytest.mark.parametrize("command", ["embed", "score", "select"])
def test_kills_at_random_moments_resume_to_the_same_bytes(command, data, capsys, monkeypatch):
    import domainsift._internal.atomic as atomic
    argv = {"embed": ["embed", data["med"], data["law"], "--model", "random", "--out", "run"],
            "score": ["score", "--method", "moore-lewis", "--order", "1", "--in-domain", data["in"], "--pool",
                      data["med"], data["law"], "--out", "run"],
            "select": ["select", "--method", "moore-lewis", "--order", "1", "--in-domain", data["in"], "--pool",
                       data["med"], data["law"], "--top", "7", "--out", "run"]}[command]
    run = data["tmp"] / "run"
    assert _run(argv, capsys)[0] == 0
    reference = _outputs(run)
    calls = {"n": 0}
    real = os.replace

    def counting(src, dst):
        calls["n"] += 1
        return real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", counting)
    shutil.rmtree(run)
    assert _run(argv, capsys)[0] == 0
    n_writes = calls["n"]
    for k in sorted(np.random.default_rng(0).choice(np.arange(1, n_writes + 1), size=min(3, n_writes),
                                                   replace=False)):
        shutil.rmtree(run)
        calls["n"] = 0

        def dying(src, dst, k=k):
            calls["n"] += 1
            if calls["n"] == k:
                raise Killed()
            return real(src, dst)

        monkeypatch.setattr(atomic.os, "replace", dying)
        with pytest.raises(Killed):
            main(["-q", *map(str, argv)])
        monkeypatch.setattr(atomic.os, "replace", real)
        assert _run(argv, capsys)[0] == 0
        assert _outputs(run) == reference, f"killed at write {k}"


def test_an_unusable_cache_is_one_line(data, capsys):
    cache = data["tmp"] / "cache-is-a-file"
    cache.write_text("not a folder\n")
    rc, err = _run(["select", "--method", "cosine", "--cache", cache, "--in-domain", data["in"], "--pool",
                    data["med"], "--top", "3", "--out", "run"], capsys)
    assert rc == 2 and err.count("\n") == 0 and "Traceback" not in err and "cache-is-a-file" in err, err
    assert not (data["tmp"] / "run" / "selected.txt").exists()


def test_a_score_run_that_dies_writing_its_student_never_looks_finished(data, tiny_models, capsys, monkeypatch):
    """The fit's own files (a student, an alignment picture) are written before signature.json: a disk that
    fills while the student is written leaves no finished-looking run; and a new score run into the same
    --out leaves no student of the earlier run beside its own scores."""
    from domainsift.select.student import StudentSelector
    argv = ["select", "--method", "student", "--model", tiny_models["bert"], "--cache", "", "--in-domain", data["in"],
            "--pool", data["med"], data["law"], "--top", "5", "--out", "run"]
    real = StudentSelector.write_artifacts

    def full(self, out_dir):
        raise OSError(28, "No space left on device", str(out_dir))

    monkeypatch.setattr(StudentSelector, "write_artifacts", full)
    rc, err = _run(argv, capsys)
    assert rc == 2 and "No space left" in err
    assert not (data["tmp"] / "run" / "signature.json").exists()
    monkeypatch.setattr(StudentSelector, "write_artifacts", real)
    assert _run(argv, capsys)[0] == 0
    assert (data["tmp"] / "run" / "student").is_dir() and (data["tmp"] / "run" / "signature.json").exists()
    assert _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", data["med"], data["law"],
                 "--out", "run", "--overwrite"], capsys)[0] == 0
    assert not (data["tmp"] / "run" / "student").exists()


@pytest.mark.parametrize("sums", ["kept", "resealed", "removed"])
@pytest.mark.parametrize("damage", ["nan-coef", "short-coef", "truncated-head", "short-vectors", "no-tokenizer",
                                    "bad-tokenizer"])
def test_a_damaged_saved_student_is_one_line(damage, sums, data, tiny_models, capsys):
    """A saved student that cannot score as it was saved (non-finite or misshapen head, too few static rows,
    a missing or unreadable tokenizer, a truncated head.npz) is refused with one line naming the folder,
    never a traceback and never a selection of arbitrary lines: by its checksums (``kept``), and by the
    checks of shape and values when the checksums match the damage (``resealed``) or are missing (a student
    saved before 0.12.0: ``removed``)."""
    argv = ["select", "--method", "student", "--model", tiny_models["bert"], "--cache", "", "--in-domain", data["in"],
            "--pool", data["med"], data["law"], "--top", "5", "--out", "run"]
    assert _run(argv, capsys)[0] == 0
    st = data["tmp"] / "run" / "student"
    head = dict(np.load(st / "head.npz"))
    if damage == "nan-coef":
        head["coef"][0] = np.nan
        np.savez(st / "head.npz", **head)
    elif damage == "short-coef":
        head["coef"] = head["coef"][:-1]
        np.savez(st / "head.npz", **head)
    elif damage == "truncated-head":
        (st / "head.npz").write_bytes((st / "head.npz").read_bytes()[:100])
    elif damage == "short-vectors":
        v = np.load(st / "static" / "vectors.npy")
        np.save(st / "static" / "vectors.npy", v[: len(v) // 2])
    elif damage == "no-tokenizer":
        (st / "static" / "tokenizer.json").unlink()
    else:
        (st / "static" / "tokenizer.json").write_text("{not json")
    from domainsift._internal.checksums import SUMS, seal
    if sums == "resealed":
        seal(st / "static")
        seal(st)
    elif sums == "removed":
        for f in st.rglob(SUMS):
            f.unlink()
    rc, err = _run(["select", "--method", "student", "--student-from", st, "--in-domain", data["in"], "--pool",
                    data["med"], "--top", "5", "--out", "other"], capsys)
    err = "\n".join(line for line in err.splitlines() if "has no checksums" not in line) + "\n"
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err and str(st) in err, err
    assert ("SHA-256" in err or "SHA256SUMS" in err) == (sums == "kept"), err
    assert not (data["tmp"] / "other" / "selected.txt").exists()


@pytest.mark.parametrize("checksums", ["recorded", "none"])
@pytest.mark.parametrize("damage", ["nan-score", "file-index", "line-past-the-end"])
def test_select_from_damaged_scores_is_one_line_and_writes_nothing(damage, checksums, data, capsys):
    """scores.npy with a NaN, or ids.npy naming a file or a line the pool does not have: select --from-scores
    refuses with one line naming the file, and leaves no selection (before: NaN-scored lines were chosen, and
    selected.ids.tsv listed a line that selected.txt did not hold). With run.json's checksums the edit
    itself is caught; without them (a run of an older version) the values are."""
    assert _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", data["med"], data["law"],
                 "--out", "run"], capsys)[0] == 0
    run = data["tmp"] / "run"
    meta = json.loads((run / "run.json").read_text())
    assert set(meta["checksums"]) == {"scores.npy", "ids.npy"}
    if checksums == "none":
        del meta["checksums"]
        (run / "run.json").write_text(json.dumps(meta))
    scores, ids = np.load(run / "scores.npy"), np.load(run / "ids.npy")
    if damage == "nan-score":
        scores[int(np.argmax(scores))] = np.nan
        np.save(run / "scores.npy", scores)
    else:
        best = int(np.argmax(scores))
        ids[best] = (7, 1) if damage == "file-index" else (ids[best][0], 10_000)
        np.save(run / "ids.npy", ids)
    rc, err = _run(["select", "--from-scores", "run", "--top", "5", "--out", "sel"], capsys)
    assert rc == 2 and err.count("\n") == 0 and "Traceback" not in err, err
    name = "scores.npy" if damage == "nan-score" else "ids.npy"
    if checksums == "recorded":
        assert f"{name}: damaged" in err, err
    else:
        assert ("scores.npy" in err) if damage == "nan-score" else ("ids" in err and "no line" in err or "do not have" in err)
    assert not any((data["tmp"] / "sel" / n).exists() for n in ("selected.txt", "selected.ids.tsv", "selection.json"))


def test_a_full_disk_is_one_line_naming_the_file(data, capsys, monkeypatch):
    """NumPy's short write on a full disk ("20000 requested and 8176 written": no errno, no file name) is
    one line naming the file being written and saying the disk is full; nothing finished is left."""
    import domainsift._internal.atomic as atomic
    real = atomic.np.save

    def short(fh, array, *a, **kw):
        if getattr(array, "ndim", 0) == 1 and len(array) > 10:
            raise OSError(f"{array.nbytes} requested and {array.nbytes // 3} written")
        return real(fh, array, *a, **kw)

    monkeypatch.setattr(atomic.np, "save", short)
    rc, err = _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", data["med"], data["law"],
                    "--top", "3", "--shard-size", "20", "--out", "run"], capsys)
    assert rc == 2 and err.count("\n") == 0 and "No space left on device" in err and ".npy" in err, err
    assert not (data["tmp"] / "run" / "signature.json").exists()


def test_a_finished_run_is_never_replaced_silently(data, capsys, tmp_path):
    """Another method, parameters or inputs into the --out of a finished score run, or any run into a folder
    of the user's own files, is refused with one line unless --overwrite; the same command again (a rerun,
    or a killed run's resume) is allowed."""
    args = ["--in-domain", data["in"], "--pool", data["med"], data["law"], "--top", "5", "--out", "run"]
    assert _run(["select", "--method", "random", *args], capsys)[0] == 0
    assert _run(["select", "--method", "random", *args], capsys)[0] == 0  # the same command again
    before = (data["tmp"] / "run" / "scores.npy").read_bytes()
    for other in (["--method", "random", "--seed", "5"], ["--method", "moore-lewis", "--order", "1"]):
        rc, err = _run(["select", *other, *args], capsys)
        assert rc == 2 and err.count("\n") == 0 and "--overwrite" in err and "finished" in err, err
    assert (data["tmp"] / "run" / "scores.npy").read_bytes() == before
    mine = data["tmp"] / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my own notes\n")
    rc, err = _run(["select", "--method", "random", *args[:-1], mine], capsys)
    assert rc == 2 and "notes.txt" in err and "--overwrite" in err, err
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    assert _run(["select", "--method", "random", *args[:-1], mine, "--overwrite"], capsys)[0] == 0
    assert (mine / "notes.txt").read_text() == "my own notes\n" and (mine / "selected.txt").exists()


def test_overwrite_leaves_nothing_of_the_replaced_run(data, capsys):
    """--overwrite replacing another kind of run removes every file that run wrote (an embedding's vectors
    and ids beside a new score run would read as the new run's)."""
    assert _run(["embed", data["med"], "--model", "random", "--out", "run"], capsys)[0] == 0
    assert (data["tmp"] / "run" / "embeddings.npy").exists()
    assert _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", data["med"], "--out", "run"],
                capsys)[0] == 2
    assert _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", data["med"], "--out", "run",
                 "--overwrite"], capsys)[0] == 0
    names = sorted(p.name for p in (data["tmp"] / "run").iterdir() if not p.name.startswith("."))
    assert "embeddings.npy" not in names and "ids.tsv" not in names and "scores.npy" in names, names


def test_overwrite_into_a_runs_own_directory_keeps_its_scores(data, capsys):
    """select --method ... --overwrite scores and selects into one folder, and select --from-scores DIR
    --overwrite selects from DIR into DIR: the scores a selection reads are never the run it replaces."""
    args = ["--in-domain", data["in"], "--pool", data["med"], data["law"], "--top", "5", "--out", "run", "--overwrite"]
    assert _run(["select", "--method", "random", *args], capsys)[0] == 0
    assert _run(["select", "--from-scores", "run", "--top", "3", "--overwrite"], capsys)[0] == 0
    assert (data["tmp"] / "run" / "scores.npy").exists()
    assert (data["tmp"] / "run" / "selected.txt").read_text().count("\n") == 3


# ------------------------------------------------------------------ damaged caches and resume state are rebuilt

def _damage_one_file(folder: Path) -> Path:
    """Flip a byte in the middle of the largest file under ``folder`` (its checksums left as they were)."""
    victim = max((p for p in folder.rglob("*") if p.is_file() and p.name != "SHA256SUMS"),
                 key=lambda p: (p.stat().st_size, str(p)))
    b = bytearray(victim.read_bytes())
    b[len(b) // 2] ^= 0xFF
    victim.write_bytes(bytes(b))
    return victim


@pytest.mark.parametrize("method", ["finetune", "moore-lewis", "student", "cascade"])
def test_a_damaged_fit_under_resume_is_fitted_again(method, data, tiny_models, capsys, monkeypatch, caplog):
    """A run killed after its fit was saved, whose saved fit (the fine-tuned model, the LMs, the student)
    is then damaged: the rerun says so, fits again, and ends with the bytes of an uninterrupted run."""
    import domainsift.engine.shards as shards
    extra = {"finetune": ["--method", "finetune", "--model", tiny_models["bert"], "--epochs", "1"],
             "moore-lewis": ["--method", "moore-lewis", "--order", "2"],
             "student": ["--method", "student", "--model", tiny_models["bert"], "--sample", "100"],
             "cascade": ["--method", "cosine", "--model", tiny_models["bert"], "--cascade"]}[method]
    argv = ["select", *extra, "--in-domain", data["in"], "--pool", data["med"], data["law"], "--top", "5",
            "--shard-size", "10", "--out", "run"]
    run = data["tmp"] / "run"
    assert _run(argv, capsys)[0] == 0
    reference = _outputs(run)
    shutil.rmtree(run)

    real = shards.write_shard

    def dying(*a, **kw):
        raise Killed()

    monkeypatch.setattr(shards, "write_shard", dying)
    with pytest.raises(Killed):
        main(["-q", *map(str, argv)])
    monkeypatch.setattr(shards, "write_shard", real)
    state = next((run / ".resume").iterdir())
    saved = state / ("student-model" if method == "cascade" else "model")
    assert (saved / "SHA256SUMS").is_file()
    victim = _damage_one_file(saved)
    rc, err = _run(argv, capsys)
    assert rc == 0, err
    assert "Writing model shards" not in err  # -q silences transformers' bar too
    assert victim.name in caplog.text and "again" in caplog.text, caplog.text
    assert _outputs(run) == reference


@pytest.mark.parametrize("damage", ["vectors", "tokenizer", "no-sums"])
def test_damaged_distilled_vectors_in_the_cache_are_distilled_again(damage, data, tiny_models, capsys, caplog):
    """Altered cached static vectors (before: 9 of 40 selected lines changed, exit 0), a corrupt cached
    tokenizer (before: every rerun failed) or a cache folder without checksums: distilled again with a
    warning, and the same selection as from a clean cache."""
    cache = data["tmp"] / "cache"
    argv = ["select", "--method", "student", "--model", tiny_models["bert"], "--sample", "100", "--cache", cache,
            "--in-domain", data["in"], "--pool", data["med"], data["law"], "--top", "5"]
    assert _run([*argv, "--out", "clean"], capsys)[0] == 0
    folder = next((cache / "static").iterdir())
    if damage == "vectors":
        v = np.load(folder / "vectors.npy")
        v[: len(v) // 2] *= -1
        np.save(folder / "vectors.npy", v)
    elif damage == "tokenizer":
        (folder / "tokenizer.json").write_text("{not json")
    else:
        (folder / "SHA256SUMS").unlink()
    rc, err = _run([*argv, "--out", "again"], capsys)
    assert rc == 0 and "distilling again" in caplog.text, err + caplog.text
    assert ((data["tmp"] / "again" / "selected.txt").read_bytes()
            == (data["tmp"] / "clean" / "selected.txt").read_bytes())
    from domainsift._internal.checksums import verify
    verify(folder)  # the cache holds sound vectors again


# ------------------------------------------------------------------ an interrupted fine-tuning resumes from its last epoch

def _finetune_reference(data, tiny_models, capsys, epochs: int):
    """A finetune select's argv, its run directory (removed again) and the bytes an uninterrupted run wrote."""
    argv = ["select", "--method", "finetune", "--model", tiny_models["bert"], "--epochs", str(epochs), "--in-domain",
            data["in"], "--pool", data["med"], data["law"], "--top", "5", "--out", "run"]
    run = data["tmp"] / "run"
    assert _run(argv, capsys)[0] == 0
    reference = _outputs(run)
    shutil.rmtree(run)
    return argv, run, reference


@pytest.mark.parametrize("how", ["sigkill", "ctrl-c"])
def test_an_interrupted_fine_tuning_resumes_from_its_last_epoch(how, data, tiny_models, capsys, monkeypatch):
    """Killed (or Ctrl-C) in the third of four epochs: the rerun trains only the epochs after the last
    checkpoint and ends with the bytes of an uninterrupted run; Ctrl-C says what was kept."""
    import domainsift.select.train as train
    argv, run, reference = _finetune_reference(data, tiny_models, capsys, epochs=4)

    if how == "sigkill":  # in a child process, at the third epoch's first step
        run_killed(argv, "domainsift.select.train:save_checkpoint", 3, data["tmp"], when="before")
    else:
        real = train.save_checkpoint

        def ctrl_c(folder, clf, opt, sched, epoch, *a):
            if epoch == 3:
                raise KeyboardInterrupt
            return real(folder, clf, opt, sched, epoch, *a)

        monkeypatch.setattr(train, "save_checkpoint", ctrl_c)
        rc, err = _run(argv, capsys)
        assert rc == 130 and "the fit's first 2 of 4 epochs kept in" in err, err
        monkeypatch.setattr(train, "save_checkpoint", real)
    state = next((run / ".resume").iterdir())
    assert train.checkpoint_epoch(state / "fit-checkpoint") == (2, 4)

    epochs = []
    real_data = train.train_classifier

    def counting(clf, epoch_data, *a, **kw):
        return real_data(clf, lambda e: (epochs.append(e), epoch_data(e))[1], *a, **kw)

    monkeypatch.setattr(train, "train_classifier", counting)
    assert _run(argv, capsys)[0] == 0
    assert epochs == [0, 2, 3]  # epoch 0's draw is made up front; epochs 2 and 3 are trained
    assert _outputs(run) == reference
    assert not (run / ".resume").exists()


def test_a_damaged_training_checkpoint_starts_the_training_over(data, tiny_models, capsys, caplog):
    """A checkpoint damaged between the kill and the rerun costs its epochs, never the run or its bytes."""
    argv, run, reference = _finetune_reference(data, tiny_models, capsys, epochs=3)
    run_killed(argv, "domainsift.select.train:save_checkpoint", 2, data["tmp"], when="before")
    state = next((run / ".resume").iterdir())
    _damage_one_file(state / "fit-checkpoint")
    assert _run(argv, capsys)[0] == 0
    assert "training from the first epoch" in caplog.text
    assert _outputs(run) == reference


# ------------------------------------------------------------------ the low items of issue 45

def test_an_out_that_is_a_symlink_loop_is_named_as_one(data, capsys):
    os.symlink("loop", data["tmp"] / "loop")
    rc, err = _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", data["med"], "--out", "loop"],
                   capsys)
    assert rc == 2 and err.count("\n") == 0 and "symbolic link that leads nowhere" in err, err


def test_combine_names_what_differs_between_two_pools(data, capsys):
    """Two runs over files of the same names and number of lines, whose empty lines sit elsewhere:
    the message names the first record that differs (before: '420 lines of pool.en vs. 420 lines of pool.en')."""
    pool = data["tmp"] / "pool.txt"
    lines = make_sentences("med", 12, 5)
    write_lines(pool, lines[:3] + [""] + lines[3:])
    assert _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", pool, "--out", "a"], capsys)[0] == 0
    write_lines(pool, lines[:5] + [""] + lines[5:])
    assert _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", pool, "--out", "b"], capsys)[0] == 0
    rc, err = _run(["combine", "a", "b", "--top", "3", "--out", "c"], capsys)
    assert rc == 2 and err.count("\n") == 0, err
    assert "record 4 is " in err and "pool.txt line 4 vs. " in err and "pool.txt line 5)" in err, err


@pytest.mark.parametrize("damage", ["run-json-list", "extra-selected-row", "bad-selected-row"])
def test_report_refuses_a_damaged_run_directory_in_one_line(damage, data, capsys):
    """A run.json that is not an object, a selected.ids.tsv with a row more than selection.json counts, or
    a row that is not 'file<TAB>line': report refuses in one line naming the file (before: accepted)."""
    assert _run(["select", "--method", "random", "--in-domain", data["in"], "--pool", data["med"], data["law"],
                 "--top", "5", "--out", "run"], capsys)[0] == 0
    run = data["tmp"] / "run"
    if damage == "run-json-list":
        (run / "run.json").write_text("[1, 2]\n")
        name = "run.json"
    else:
        with open(run / "selected.ids.tsv", "a", encoding="utf-8") as fh:
            fh.write(f"{data['med']}\t3\n" if damage == "extra-selected-row" else "garbage\n")
        name = "selected.ids.tsv"
    rc, err = _run(["report", "run", "--out", "r.html"], capsys)
    assert rc == 2 and err.count("\n") == 0 and name in err and "Traceback" not in err, err
    assert not (data["tmp"] / "r.html").exists()


def test_a_run_of_the_same_kind_leaves_nothing_of_the_replaced_run(data, capsys):
    """Item 6: a run that replaces one of its own kind removes, when it finishes, every file of that kind
    it did not write again: a cluster run's earlier picture, a selection's earlier format."""
    out = data["tmp"] / "clu"
    argv = ["cluster", data["med"], data["law"], "--model", "random", "--no-plots", "--out", out]
    assert _run([*argv, "--k", "2"], capsys)[0] == 0
    (out / "stale-map.png").write_bytes(b"\x89PNG left by an earlier run")
    assert _run([*argv, "--k", "3"], capsys)[0] == 0
    assert not (out / "stale-map.png").exists() and (out / "clustering.json").exists()

    assert _run(["score", "--method", "random", "--in-domain", data["in"], "--pool", data["med"], "--out", "s"],
                capsys)[0] == 0
    sel = ["select", "--from-scores", "s", "--top", "3", "--out", "sel"]
    assert _run(sel, capsys)[0] == 0
    assert (data["tmp"] / "sel" / "selected.txt").exists()
    assert _run([*sel, "--out-format", "jsonl"], capsys)[0] == 0
    assert sorted(p.name for p in (data["tmp"] / "sel").glob("selected.*")) == ["selected.ids.tsv", "selected.jsonl"]


def test_a_full_disk_in_the_vector_cache_loses_the_cache_not_the_run(data, tiny_models, capsys, monkeypatch,
                                                                     caplog):
    """The cache is an optimisation: a full disk while a chunk is written is said once, naming the cache's
    folder, and the run selects as a run without a cache."""
    import domainsift._internal.atomic as atomic
    real = atomic.np.save

    def short(fh, array, *a, **kw):
        if "vcache" in str(getattr(fh, "name", "")):
            raise OSError(f"{array.nbytes} requested and {array.nbytes // 3} written")
        return real(fh, array, *a, **kw)

    monkeypatch.setattr(atomic.np, "save", short)
    common = ["select", "--method", "cosine", "--model", tiny_models["bert"], "--in-domain", data["in"],
              "--pool", data["med"], "--top", "3"]
    with caplog.at_level("WARNING", logger="domainsift.embed.cache"):
        rc, err = _run([*common, "--cache", data["tmp"] / "vcache", "--out", "run"], capsys)
    assert rc == 0, err
    said = [r.message for r in caplog.records if "stops growing" in r.message]
    assert len(said) == 1 and "vcache stops growing: its disk is full;" in said[0]
    assert not list((data["tmp"] / "vcache").rglob("*.npy"))
    assert _run([*common, "--cache", "", "--out", "nocache"], capsys)[0] == 0
    assert (data["tmp"] / "run" / "selected.txt").read_bytes() == (data["tmp"] / "nocache" / "selected.txt").read_bytes()
