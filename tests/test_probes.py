"""Probes that once exited 0 with a wrong result or lost a user's data (issue 78), each reproduced here."""

from __future__ import annotations

import json

from conftest import german, make_sentences, run_cli, write_lines

from domainsift import rundir


def _pool(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return {"in_med": write_lines(tmp_path / "in_med.txt", make_sentences("med", 20, 21)),
            "in_law": write_lines(tmp_path / "in_law.txt", make_sentences("law", 20, 22)),
            "pool": [write_lines(tmp_path / f"{d}.txt", make_sentences(d, 30, 30 + i))
                     for i, d in enumerate(["med", "law", "it"])]}


def test_from_scores_with_plan_writes_nothing(tmp_path, capsys, monkeypatch):
    d = _pool(tmp_path, monkeypatch)
    rc, err, _ = run_cli(["select", "--method", "cosine", "--model", "tfidf", "--in-domain", d["in_med"], "--pool",
                          *d["pool"], "--top", "50", "--out", "run"], capsys)
    assert rc == 0, err
    before = {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir() if p.is_file()}
    rc, err, so = run_cli(["select", "--from-scores", "run", "--top", "5", "--plan"], capsys)
    assert rc == 0, err
    assert "-> 5 lines" in so and "replacing its selection of 50 lines" in so and "nothing was written" in so
    assert {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir() if p.is_file()} == before


def test_a_mixture_refuses_a_pool_file_it_would_overwrite(tmp_path, capsys, monkeypatch):
    d = _pool(tmp_path, monkeypatch)
    argv = ["select", "--method", "cosine", "--model", "tfidf", "--target", f"med={d['in_med']}", "--target",
            f"law={d['in_law']}", "--top", "20", "--out", "mix"]
    assert run_cli([*argv, "--pool", *d["pool"]], capsys)[0] == 0
    own = tmp_path / "mix" / "selected.mix.tsv"
    before = own.read_bytes()
    for extra in ([], ["--overwrite"]):
        rc, err, _ = run_cli([*argv, "--pool", str(own), "--format", "text", *extra], capsys)
        assert rc == 2 and "is an input, and --out mix would overwrite it" in err and err.count("\n") == 0, err
        assert own.read_bytes() == before


def test_mixture_rows_stay_one_line_whatever_the_text_holds(tmp_path, capsys, monkeypatch):
    """JSONL texts holding a line feed, a tab, a carriage return or a backslash: one row a selected line,
    the texts read back as selected."""
    monkeypatch.chdir(tmp_path)
    med, law = make_sentences("med", 20, 1), make_sentences("law", 20, 2)
    odd = ["\n", "\t", "\r", "\\n", "\\"]
    texts = [t.replace(" ", odd[i % len(odd)], 1) for i, t in enumerate(med + law)]
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    rc, err, _ = run_cli(["select", "--method", "cosine", "--model", "tfidf", "--target",
                          f"med={write_lines(tmp_path / 'm.txt', make_sentences('med', 10, 5))}", "--target",
                          f"law={write_lines(tmp_path / 'l.txt', make_sentences('law', 10, 6))}", "--pool", pool,
                          "--top", "40", "--out", "mix"], capsys)
    assert rc == 0, err
    raw = (tmp_path / "mix" / "selected.mix.tsv").read_bytes()
    assert raw.count(b"\n") == 41 and b"\r" not in raw
    rows = rundir.read_mix(tmp_path / "mix")
    assert sorted(r["text"] for r in rows) == sorted(texts)
    assert all(texts[r["line"] - 1] == r["text"] for r in rows)


def test_a_bitext_mixture_carries_both_sides_of_each_pair(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = make_sentences("med", 20, 1) + make_sentences("law", 20, 2)
    tgt = [" ".join(w[::-1] for w in s.split()) for s in src]
    a, b = write_lines(tmp_path / "pool.a", src), write_lines(tmp_path / "pool.b", tgt)
    rc, err, _ = run_cli(["select", "--method", "moore-lewis", "--target",
                          f"med={write_lines(tmp_path / 'm.txt', make_sentences('med', 10, 5))}", "--target",
                          f"law={write_lines(tmp_path / 'l.txt', make_sentences('law', 10, 6))}", "--pool", a,
                          "--pool-target", b, "--top", "20", "--out", "mix"], capsys)
    assert rc == 0, err
    rows = rundir.read_mix(tmp_path / "mix")
    assert len(rows) == 20 and all(r["other_side"] == tgt[r["line"] - 1] for r in rows)


def _excluded_run(tmp_path, capsys, monkeypatch):
    d = _pool(tmp_path, monkeypatch)
    med = (tmp_path / "med.txt").read_text().splitlines()
    test = write_lines(tmp_path / "test.txt", med[:10])
    for name, model in (("run", "tfidf"), ("run2", "tfidf")):
        rc, err, _ = run_cli(["select", "--method", "cosine", "--model", model, "--in-domain", d["in_med"], "--pool",
                              *d["pool"], "--top", "20", "--exclude", test, "--out", name], capsys)
        assert rc == 0, err
    return d, med, test


def _selected(folder):
    return (folder / "selected.txt").read_text().splitlines()


def _clean(argv, folder, test_lines, capsys) -> str:
    """Run ``argv``; its 40 selected lines hold none of ``test_lines``. Returns what it printed."""
    rc, err, so = run_cli(argv, capsys)
    assert rc == 0, err
    got = _selected(folder)
    assert len(got) == 40 and not set(got) & set(test_lines)
    return so


def test_a_reselection_keeps_the_test_set_out(tmp_path, capsys, monkeypatch):
    _, med, test = _excluded_run(tmp_path, capsys, monkeypatch)
    so = _clean(["select", "--from-scores", "run", "--top", "40", "--out", "again"], tmp_path / "again", med[:10],
                capsys)
    assert "kept the --exclude of run" in so
    sel = json.loads((tmp_path / "again" / "selection.json").read_text())
    assert sel["exclude"]["kept_from"] == ["run"] and sel["exclude"]["lines_excluded"] == 10
    # said loudly when dropped; and a test set that changed since is a one-line error
    rc, err, so = run_cli(["select", "--from-scores", "run", "--top", "40", "--no-exclude", "--out", "dropped"], capsys)
    assert rc == 0 and set(_selected(tmp_path / "dropped")) & set(med[:10])
    write_lines(test, med[:5])
    rc, err, _ = run_cli(["select", "--from-scores", "run", "--top", "40", "--out", "changed"], capsys)
    assert rc == 2 and "whose lines have changed since" in err and "--no-exclude" in err and err.count("\n") == 0
    test.unlink()
    rc, err, _ = run_cli(["select", "--from-scores", "run", "--top", "40", "--out", "gone"], capsys)
    assert rc == 2 and "which is gone" in err
    assert not (tmp_path / "gone").exists()


def test_combine_keeps_its_runs_exclusion_and_takes_exclude(tmp_path, capsys, monkeypatch):
    _, med, test = _excluded_run(tmp_path, capsys, monkeypatch)
    _clean(["combine", "run", "run2", "--top", "40", "--out", "both"], tmp_path / "both", med[:10], capsys)
    other = write_lines(tmp_path / "other.txt", med[10:15])
    rc, err, _ = run_cli(["combine", "run", "run2", "--top", "40", "--exclude", other, "--out", "given"], capsys)
    assert rc == 0, err
    assert not set(_selected(tmp_path / "given")) & set(med[10:15])


class _Served:
    """A file served on 127.0.0.1 with neither ETag nor Last-Modified (its bytes can be swapped)."""

    def __init__(self, data: bytes):
        import http.server
        import threading
        served = self
        self.data = data

        class Handler(http.server.BaseHTTPRequestHandler):
            def _head(self):
                body = served.data
                rng = self.headers.get("Range")
                status, part = 200, body
                if rng and rng.startswith("bytes="):
                    a, _, b = rng[6:].partition("-")
                    a = int(a)
                    b = int(b) if b else len(body) - 1
                    part, status = body[a:b + 1], 206
                self.send_response(status)
                self.send_header("Content-Length", str(len(part)))
                if status == 206:
                    self.send_header("Content-Range", f"bytes {a}-{a + len(part) - 1}/{len(body)}")
                self.send_header("Accept-Ranges", "bytes")
                self.end_headers()
                return part

            def do_HEAD(self):  # noqa: N802
                self._head()

            def do_GET(self):  # noqa: N802
                self.wfile.write(self._head())

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/pool.txt"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


def test_a_url_without_validators_that_changes_after_scoring_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines = make_sentences("med", 30, 1) + make_sentences("law", 30, 2)
    data = "".join(x + "\n" for x in lines).encode()
    served = _Served(data)
    try:
        import domainsift.pipeline.score as score_mod
        real = score_mod._finish

        def then_swap(*a, **kw):  # the same size, other lines: after the scores are written
            out = real(*a, **kw)
            served.data = "".join(x + "\n" for x in reversed(lines)).encode()
            return out

        monkeypatch.setattr(score_mod, "_finish", then_swap)
        rc, err, _ = run_cli(["select", "--method", "cosine", "--model", "tfidf", "--in-domain",
                              write_lines(tmp_path / "in.txt", make_sentences("med", 10, 3)), "--pool", served.url,
                              "--top", "20", "--out", "run"], capsys)
        assert rc == 2 and "changed since it was scored" in err and err.count("\n") == 0, err
        assert not (tmp_path / "run" / "selected.txt").exists()
    finally:
        served.close()


def test_an_in_domain_set_in_another_language_than_the_pool_is_refused(tmp_path, capsys, monkeypatch):
    """A method that compares the two as they are would rank the pool by language: refused in one line,
    before any fit, pointing at crosslingual, or at the bitext's side in the set's language."""
    monkeypatch.chdir(tmp_path)
    en = make_sentences("med", 40, 1) + make_sentences("law", 40, 2)
    de = german(80, 3)
    pool_en, pool_de = write_lines(tmp_path / "pool.en", en), write_lines(tmp_path / "pool.de", de)
    ind = write_lines(tmp_path / "in.de", german(30, 4))
    rc, err, _ = run_cli(["select", "--method", "moore-lewis", "--in-domain", ind, "--pool", pool_en, "--top", "10",
                          "--out", "run"], capsys)
    assert rc == 2 and "looks German" in err and "English" in err and "--method crosslingual" in err, err
    assert err.count("\n") == 0 and not (tmp_path / "run").exists()
    rc, err, so = run_cli(["select", "--method", "moore-lewis", "--in-domain", ind, "--pool", pool_en, "--top", "10",
                           "--plan"], capsys)
    assert rc == 2 and "looks German" in err  # --plan says what the run would do: refuse
    rc, err, _ = run_cli(["select", "--method", "cosine", "--model", "tfidf", "--in-domain", ind, "--pool", pool_en,
                          "--pool-target", pool_de, "--top", "10", "--out", "run"], capsys)
    assert rc == 2 and "give it as --pool and this side as --pool-target" in err, err
    # a mixture checks every target, not only the first
    rc, err, _ = run_cli(["select", "--method", "moore-lewis", "--target",
                          f"med={write_lines(tmp_path / 'in.en', make_sentences('med', 30, 5))}", "--target",
                          f"law={ind}", "--pool", pool_en, "--pool-target", pool_de, "--top", "10", "--out", "mix"],
                         capsys)
    assert rc == 2 and "in.de" in err and "a mixture of its own" in err, err
    # the same language on both sides runs
    rc, err, _ = run_cli(["select", "--method", "moore-lewis", "--in-domain", ind, "--pool", pool_de, "--top", "10",
                          "--out", "ok"], capsys)
    assert rc == 0, err


def test_a_fifo_or_a_device_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    import os
    import pytest
    if not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"):
        pytest.skip("needs POSIX FIFOs and /dev/zero")
    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "fifo")
    ind = write_lines(tmp_path / "in.txt", make_sentences("med", 20, 1))
    pool = write_lines(tmp_path / "pool.txt", make_sentences("law", 20, 2))
    for args, what in ((["--in-domain", ind, "--pool", "fifo"], "a named pipe"),
                       (["--in-domain", "fifo", "--pool", pool], "a named pipe"),
                       (["--in-domain", ind, "--pool", "/dev/zero"], "a device"),
                       (["--in-domain", ind, "--pool", pool, "--exclude", "/dev/zero"], "a device")):
        rc, err, _ = run_cli(["select", "--method", "moore-lewis", *args, "--top", "5", "--out", "o"], capsys)
        assert rc == 2 and what in err and err.count("\n") == 0, (args, err)
        assert not (tmp_path / "o").exists()


def test_weights_near_the_float_limit_split_the_total_as_equal_weights_do():
    from domainsift.pipeline.mix import parse_mix, quotas
    assert quotas(parse_mix("a=1e308,b=1e308", ["a", "b"]), 40) == {"a": 20, "b": 20}
    assert quotas(parse_mix("a=1e308,b=5e307", ["a", "b"]), 30) == {"a": 20, "b": 10}


def test_resample_options_are_checked_before_any_scoring(tmp_path, capsys, monkeypatch):
    d = _pool(tmp_path, monkeypatch)
    base = ["select", "--method", "cosine", "--model", "tfidf", "--in-domain", d["in_med"], "--pool", *d["pool"],
            "--out", "run"]
    for extra, msg in ((["--resample", "10", "--temperature", "0"], "--temperature must be"),
                       (["--resample", "10", "--temperature", "-1"], "--temperature must be"),
                       (["--resample", "10", "--temperature", "1e-310"], "--temperature must be"),
                       (["--resample", "10", "--resample-seed", "-1"], "--resample-seed must be"),
                       (["--top", "10", "--temperature", "0.5"], "--temperature goes with --resample N"),
                       (["--top", "10", "--mix", "a=1"], "--mix goes with --target")):
        rc, err, _ = run_cli([*base, *extra], capsys)
        assert rc == 2 and msg in err and err.count("\n") == 0, (extra, err)
        assert not (tmp_path / "run").exists()


def test_a_url_that_fails_says_why_in_one_line_and_never_hangs(tmp_path, capsys, monkeypatch):
    """HTTP 500, a refused connection and a server that accepts and never answers, each one line naming
    the URL and the cause (the last after $DOMAINSIFT_URL_TIMEOUT seconds)."""
    import http.server
    import socket
    import threading
    import time

    class Fails(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):  # noqa: N802
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_HEAD  # noqa: N815

        def log_message(self, *a):
            pass

    failing = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fails)
    threading.Thread(target=failing.serve_forever, daemon=True).start()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # the kernel accepts the connection; nothing ever answers
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    refused = closed.getsockname()[1]
    closed.close()
    monkeypatch.setenv("DOMAINSIFT_URL_TIMEOUT", "1")
    monkeypatch.chdir(tmp_path)
    ind = write_lines(tmp_path / "in.txt", make_sentences("med", 20, 1))
    try:
        for url, why in ((f"http://127.0.0.1:{failing.server_address[1]}/pool.txt", "HTTP 500"),
                         (f"http://127.0.0.1:{refused}/pool.txt", "cannot connect"),
                         (f"http://127.0.0.1:{silent.getsockname()[1]}/pool.txt", "no answer within 1 s")):
            t = time.time()
            rc, err, _ = run_cli(["select", "--method", "moore-lewis", "--in-domain", ind, "--pool", url, "--top",
                                  "5", "--out", "o"], capsys)
            assert rc == 2 and url in err and why in err and err.count("\n") == 0, (url, err)
            assert time.time() - t < 30
            assert not (tmp_path / "o").exists()
    finally:
        failing.shutdown()
        silent.close()


def test_an_s3_pool_without_credentials_is_one_line(tmp_path, capsys, monkeypatch):
    import pytest
    pytest.importorskip("s3fs")
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.chdir(tmp_path)
    import s3fs
    s3fs.S3FileSystem.clear_instance_cache()
    ind = write_lines(tmp_path / "in.txt", make_sentences("med", 20, 1))
    rc, err, _ = run_cli(["select", "--method", "moore-lewis", "--in-domain", ind, "--pool", "s3://bucket/pool.txt",
                          "--top", "5", "--out", "o"], capsys)
    s3fs.S3FileSystem.clear_instance_cache()
    assert rc == 2 and "s3://bucket/pool.txt" in err and "no credentials" in err and err.count("\n") == 0, err


def test_an_object_array_of_ids_is_one_line_and_never_unpickled(tmp_path, capsys, monkeypatch):
    import numpy as np
    d = _pool(tmp_path, monkeypatch)
    assert run_cli(["select", "--method", "moore-lewis", "--in-domain", d["in_med"], "--pool", *d["pool"], "--top",
                    "5", "--out", "run"], capsys)[0] == 0
    np.save(tmp_path / "run" / "ids.npy", np.array([[0, 1]] * 90, dtype=object), allow_pickle=True)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    run.pop("checksums", None)  # as an earlier version's run, which recorded none
    (tmp_path / "run" / "run.json").write_text(json.dumps(run))
    rc, err, _ = run_cli(["evaluate", "run", "--gold", d["pool"][0]], capsys)
    assert rc == 2 and "ids.npy: not an array of line ids" in err and err.count("\n") == 0, err


def test_without_an_address_a_running_cluster_is_joined_as_ray_does(monkeypatch, caplog):
    """Ray refuses num_cpus when ray.init() finds a cluster that runs already (RAY_ADDRESS, or the one
    'ray start' started last on this machine): the run joins it, without num_cpus, and says so."""
    import pytest
    ray = pytest.importorskip("ray")
    from domainsift.engine import ray as engine_ray
    calls = []

    def init(**kw):
        calls.append(kw)
        if "num_cpus" in kw and kw.get("address") != "local":
            raise ValueError("When connecting to an existing cluster, num_cpus and num_gpus must not be provided.")

    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    with engine_ray.session(2, None):
        pass
    assert [("num_cpus" in c, c.get("address")) for c in calls] == [(True, None), (False, None)]
    assert "joined the Ray cluster" in caplog.text
    calls.clear()
    with engine_ray.session(2, "local"):  # an instance of the run's own: its CPUs as asked
        pass
    assert calls[0]["address"] == "local" and calls[0]["num_cpus"] == 2


def test_a_refused_mixture_leaves_nothing_behind(tmp_path, capsys, monkeypatch, tiny_models):
    d = _pool(tmp_path, monkeypatch)
    tiny = write_lines(tmp_path / "tiny.txt", make_sentences("med", 3, 9))
    base = ["select", "--method", "cosine", "--model", tiny_models["bert"], "--backend", "torch", "--target",
            f"med={d['in_med']}"]
    for extra in (["--target", f"{'x' * 300}={d['in_law']}", "--pool", *d["pool"], "--top", "10"],
                  ["--target", f"law={d['in_law']}", "--pool", tiny, "--top", "auto"]):
        rc, err, _ = run_cli([*base, *extra, "--out", "mix"], capsys)
        assert rc == 2 and err.count("\n") == 0, err
        assert not (tmp_path / "mix").exists(), sorted(p.name for p in (tmp_path / "mix").rglob("*"))


def test_invisible_characters_and_look_alikes_do_not_carry_a_test_line_past_exclude():
    from domainsift.dedup import exclusion, normalise
    line = "Take one tablet daily with water."
    ex = exclusion([line])
    for disguised in ("Take one tab\u200blet daily with water.", "Take one tab\u00adlet daily with water.",
                      "T\u0430ke one tablet d\u0430ily with w\u0430ter.", "TAKE ONE TABLET DAILY WITH WATER"):
        assert ex.matches(disguised), disguised
    assert not ex.matches("Take two tablets daily with water.")
    assert normalise("Привет мир") == "привет мир"  # a word of one script keeps its letters
    from domainsift.overlap import repeats
    assert repeats([line], ["T\u0430ke one tablet daily with water", "other"]) == [(0, 0)]


def test_a_mixtures_folder_and_a_run_without_checksums_are_named(tmp_path, capsys, monkeypatch, caplog):
    d = _pool(tmp_path, monkeypatch)
    assert run_cli(["select", "--method", "cosine", "--model", "tfidf", "--target", f"med={d['in_med']}", "--target",
                    f"law={d['in_law']}", "--pool", *d["pool"], "--top", "10", "--out", "mix"], capsys)[0] == 0
    rc, err, _ = run_cli(["select", "--from-scores", "mix", "--top", "5", "--out", "again"], capsys)
    assert rc == 2 and "give one target's folder" in err and "mix/targets/NAME" in err, err
    run = json.loads((tmp_path / "mix" / "targets" / "med" / "run.json").read_text())
    run.pop("checksums")
    (tmp_path / "mix" / "targets" / "med" / "run.json").write_text(json.dumps(run))
    rc, err, _ = run_cli(["select", "--from-scores", "mix/targets/med", "--top", "5", "--out", "again"], capsys)
    assert rc == 0 and "records no checksums" in caplog.text, err


def test_a_redirected_log_gets_no_progress_bars(tmp_path, monkeypatch):
    import subprocess
    import sys
    d = _pool(tmp_path, monkeypatch)
    proc = subprocess.run([sys.executable, "-m", "domainsift", "select", "--method", "cosine", "--model", "tfidf",
                           "--in-domain", str(d["in_med"]), "--pool", *map(str, d["pool"]), "--top", "5", "--out",
                           "run"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr and "it/s" not in proc.stderr and "line/s" not in proc.stderr, proc.stderr[-500:]


def test_fewer_lines_than_asked_after_dedup_is_said(tmp_path, capsys, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    pool = write_lines(tmp_path / "pool.txt", ["dose tablet patient"] * 8 + make_sentences("law", 4, 2))
    ind = write_lines(tmp_path / "in.txt", make_sentences("med", 20, 1))
    rc, err, so = run_cli(["select", "--method", "cosine", "--model", "tfidf", "--in-domain", ind, "--pool", pool,
                           "--top", "10", "--dedup", "exact", "--out", "run"], capsys)
    assert rc == 0, err
    assert (tmp_path / "run" / "selected.txt").read_text().count("\n") == 5
    assert "5 of the 10 lines asked for" in caplog.text


def test_a_mixture_says_the_pools_language_once(tmp_path, capsys, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    pool = write_lines(tmp_path / "pool.de", german(60, 7))
    a = write_lines(tmp_path / "a.de", german(25, 8))
    b = write_lines(tmp_path / "b.de", german(25, 9))
    rc, err, _ = run_cli(["select", "--method", "cosine", "--model", "minilm", "--target", f"a={a}", "--target",
                          f"b={b}", "--pool", pool, "--top", "10", "--out", "mix"], capsys)
    assert rc == 0, err
    assert caplog.text.count("the pool (a seeded sample) looks German") == 1
