"""The student (static token vectors or hashed n-grams, a linear head trained on a teacher's scores) and
the cascade (--cascade: the student scores every line, the method only the student's top candidates)."""

from __future__ import annotations

import domainsift as ds
import json
from pathlib import Path

import numpy as np

from domainsift.engine import Cascade, Execution
import pytest

from conftest import make_sentences, run_cli, run_killed, write_lines
from domainsift.io.corpus import read_corpus
from domainsift.io.source import PoolSource


@pytest.fixture
def pool(tmp_path, monkeypatch):
    """120 pool lines (60 med, then 60 law, then none of the in-domain set's) and 8 in-domain lines."""
    monkeypatch.chdir(tmp_path)
    return {"pool": write_lines(tmp_path / "pool.txt", make_sentences("med", 60, 1) + make_sentences("law", 60, 2)),
            "in": write_lines(tmp_path / "in.txt", make_sentences("med", 8, 3)), "tmp": tmp_path}


def _run(tmp: Path, name: str) -> dict:
    d = tmp / name
    return {"scores": np.load(d / "scores.npy"), "ids": np.load(d / "ids.npy"),
            "run": json.loads((d / "run.json").read_text()), "sig": json.loads((d / "signature.json").read_text())}


# ------------------------------------------------------------------ static vectors

def test_distilled_vectors_are_the_encoders_token_outputs(tiny_models, tmp_path):
    from domainsift.embed.static import SIF, distilled
    from domainsift.embed.transformers import TransformersEmbedder
    emb = distilled(tiny_models["bert"], cache_dir=str(tmp_path))
    again = distilled(tiny_models["bert"], cache_dir=str(tmp_path))  # read back from the cache
    np.testing.assert_array_equal(emb.vectors, again.vectors)
    enc = TransformersEmbedder(tiny_models["bert"], backend="torch", progress=False)
    torch, tok, model, _ = enc.load()
    tid = tok.convert_tokens_to_ids("dose")
    with torch.inference_mode():
        ids = torch.tensor([[tok.cls_token_id, tid, tok.sep_token_id]], device=model.device)
        h = model(input_ids=ids).last_hidden_state.mean(1).cpu()
    p = (1 / (tid + 2)) / np.sum(1 / (np.arange(len(emb.vectors)) + 2))
    np.testing.assert_allclose(emb.vectors[tid], h[0].numpy() * SIF / (SIF + p), rtol=1e-5, atol=1e-7)
    assert not emb.vectors[tok.cls_token_id].any()  # special tokens get no vector
    x = emb.encode(["dose tablet", "", "dose tablet unknownword"])
    np.testing.assert_allclose(x[0], emb.vectors[[tid, tok.convert_tokens_to_ids("tablet")]].mean(0), rtol=1e-6)
    assert not x[1].any() and x.shape == (3, 32)


def test_static_vectors_are_the_same_in_chunks_as_all_at_once(tiny_models, monkeypatch):
    from domainsift.embed import static
    emb = static.distill(tiny_models["bert"])
    texts = [f"dose {i} tablet" * (i % 4) for i in range(23)]
    whole = emb.encode(texts, dtype=np.float64)
    monkeypatch.setattr(static, "CHUNK", 5)
    np.testing.assert_array_equal(emb.encode(texts, dtype=np.float64), whole)
    assert not whole[0].any() and whole[1].any()


def test_pooling_in_token_blocks_gives_each_lines_sum_of_all_its_rows_at_once(monkeypatch):
    """Lines are pooled a block of tokens at a time (bounded memory for long lines); every line's mean is
    the one of all its rows gathered at once (0.27.0's way), to the bit: empty lines, a line longer
    than a block, blocks ending at every kind of line."""
    from domainsift.embed import static
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(50, 7)).astype(np.float32)
    counts = rng.choice([0, 1, 2, 5, 13, 40], size=300).astype(np.int64)
    flat = rng.integers(0, 50, size=int(counts.sum()))
    line = np.repeat(np.arange(300), counts)
    once = np.zeros((300, 7))
    static._add_rows(once, line, vectors[flat].astype(np.float64))
    once /= np.maximum(counts, 1)[:, None]
    emb = static.StaticEmbedder.__new__(static.StaticEmbedder)
    for block in (1, 3, 16, 41, 1 << 20):
        monkeypatch.setattr(static, "TOKEN_BLOCK", block)
        np.testing.assert_array_equal(emb.pool(vectors, flat, counts), once)


def test_the_heads_design_matrix_is_the_two_blocks_side_by_side():
    """The head's design, built in place, is scipy's hstack of the dense block and the scaled bigrams:
    the same rows, columns and values in the same order (a row without bigrams, a zero value kept)."""
    import scipy.sparse as sp
    from domainsift.select.student import _design
    rng = np.random.default_rng(0)
    z = rng.normal(size=(6, 4))
    z[2, 1] = 0.0
    b = sp.random(6, 50, density=0.1, random_state=1, format="csr")
    b = sp.vstack([b[:3], sp.csr_matrix((1, 50)), b[4:]]).tocsr()
    d = _design(z, b, 2.5)
    ref = sp.hstack([sp.csr_matrix(z), b * 2.5]).tocsr()
    assert d.shape == ref.shape == (6, 54) and d.nnz == ref.nnz + 1  # the zero is stored, not dropped
    np.testing.assert_array_equal(d.toarray(), ref.toarray())
    np.testing.assert_array_equal(d.indptr[1:] - d.indptr[:-1], 4 + np.diff(b.indptr))
    for i in range(6):  # each row: its four dense columns in order, then its bigrams
        row = d.indices[d.indptr[i]:d.indptr[i + 1]]
        np.testing.assert_array_equal(row[:4], np.arange(4))
        np.testing.assert_array_equal(row[4:], b.indices[b.indptr[i]:b.indptr[i + 1]] + 4)


def test_the_plan_holds_n_of_the_teachers_top_with_slack():
    from domainsift.pipeline.cascade import plan_share
    rng = np.random.default_rng(0)
    teacher = rng.normal(size=1000)
    student = teacher + rng.normal(scale=0.5, size=1000)
    for share, slack in [(0.01, 0.25), (0.05, 0.1), (0.2, 0.0)]:
        need = plan_share(student, teacher, share, slack)
        m, n_top = int(round(need * 1000)), int(round(share * 1000))
        cand = np.argsort(-student, kind="stable")[:m]
        wide = set(np.argsort(-teacher, kind="stable")[:int(np.ceil((1 + slack) * n_top))])
        chosen = cand[np.argsort(-teacher[cand], kind="stable")[:n_top]]
        assert set(chosen) <= wide  # the cascade's selection: within the teacher's own top (1 + slack) N
        fewer = cand[:m - 1]  # and m is the least that does it
        assert len(wide & set(fewer)) < n_top
    assert plan_share(teacher, teacher, 0.1, 0.0) == pytest.approx(0.1)  # a perfect student: N lines
    assert plan_share(student, teacher, 0.1, 0.25) <= plan_share(student, teacher, 0.1, 0.0)


# ------------------------------------------------------------------ the student

def test_the_student_learns_the_teachers_top_against_every_other_sample_line():
    """Positives: the in-domain set and the teacher's top share of the sample; negatives: the rest of the
    sample, the lines just below the top included (they are what the student must rank lower); a cascade
    teaches the top (1 + slack) N, the lines its candidates must hold."""
    from domainsift.pipeline.cascade import SLACK, learn_share
    from domainsift.select.student import Student
    rng = np.random.default_rng(0)
    x_in, x_s = rng.normal(size=(7, 3)), rng.normal(size=(200, 3))
    t = rng.permutation(200).astype(float)  # line i ranks 200 - t[i]
    x, y = Student(None).training_set(x_in, x_s, t, 0.05)
    assert len(x) == 7 + 200 and y.sum() == 7 + 10
    top = np.argsort(-t, kind="stable")
    np.testing.assert_array_equal(x[7:17], x_s[top[:10]])
    np.testing.assert_array_equal(x[17:], x_s[top[10:]])  # rank 11 on: negatives, none left out
    _, y = Student(None).training_set(x_in, x_s, t, 0.999)
    assert (y == 0).sum() == 1  # always a negative to learn against
    assert learn_share(0.01) == pytest.approx((1 + SLACK) * 0.01) and learn_share(0.9) == 0.5


def test_the_enrichment_labels_its_lines_by_the_samples_last_positive():
    """Lines beyond the sample (the enrichment) are positives where the teacher scores them at least as
    high as the sample's last positive; the sample's own labels do not change."""
    from domainsift.select.student import Student, enrichment
    rng = np.random.default_rng(1)
    x_in, x_s, x_e = rng.normal(size=(7, 3)), rng.normal(size=(200, 3)), rng.normal(size=(5, 3))
    t = rng.permutation(200).astype(float)  # the top 10 (share 0.05): 190 ... 199
    x, y = Student(None).training_set(x_in, x_s, t, 0.05, extra=(x_e, np.array([199.5, 190.0, 189.9, 0.0, 195.0])))
    assert len(x) == 7 + 200 + 5 and y[:17].all() and not y[17:207].any()
    np.testing.assert_array_equal(x[207:], x_e)
    np.testing.assert_array_equal(y[207:], [1, 1, 0, 0, 1])
    assert enrichment(20000) == (50000, 10000)  # the default sample: 10,000 more lines scored, a fifth of 50,000
    assert enrichment(20000, 15000) == (15000, 3000)  # all the pool has left
    assert enrichment(100, 50) == (0, 0)  # too few to learn from


def test_the_teacher_scores_the_students_top_of_a_draw_beyond_its_sample(tmp_path, tiny_models):
    """A pool larger than the sample: the teacher scores the sample, then the top fifth, by the student
    fitted on the sample, of a seeded draw of the other lines; the plan's out-of-fold scores stay the
    sample's alone; the signature says how many lines were added."""
    from domainsift.select import get_selector
    from domainsift.select.cosine import CosineSelector
    texts = make_sentences("med", 200, 1) + make_sentences("law", 200, 2)
    in_domain = make_sentences("med", 8, 3)
    asked = []

    class Counting(CosineSelector):
        def score(self, records):
            asked.append(list(records.texts))
            return super().score(records)

    teacher = Counting(embedder="tfidf").fit(in_domain, None)
    sel = get_selector("student", teacher="cosine", sample=100, model=tiny_models["bert"], cache_dir="",
                       progress=False, seed=3)
    assert sel.draw == 100 + 250
    sel.fit(in_domain, texts, teacher=teacher)
    assert [len(a) for a in asked] == [100, 50]  # 250 of the other 300 lines drawn, the student's top 50 scored
    assert not set(asked[1]) & set(asked[0])
    assert len(sel.held_out_["teacher"]) == 100 and sel.signature_params()["n_enriched"] == 50
    # the draw holds some 125 med lines (the in-domain set's kind): the student's top 50 of it are med lines
    assert set(asked[1]) <= set(texts[:200])


def test_one_student_of_several_targets_is_each_targets_own_bit_for_bit(tiny_models):
    """A student of several targets (``joined``, ``fit_heads``): one sample and one draw, each scored by
    the teachers once and tokenized once; each head is the student its target's own run fits (its
    share, its teacher), bit for bit, and its block's columns are the heads' scores."""
    from domainsift.select import get_selector
    from domainsift.select.cosine import CosineSelector
    from domainsift.select.student import StudentSelector
    texts = make_sentences("med", 200, 1) + make_sentences("law", 200, 2)
    ins = {"med": make_sentences("med", 8, 3), "law": make_sentences("law", 8, 4)}
    teachers = {n: CosineSelector(embedder="tfidf").fit(x, None) for n, x in ins.items()}
    shares = {"med": 0.3, "law": 0.1}

    def student(n):
        return get_selector("student", teacher="cosine", sample=100, model=tiny_models["bert"], cache_dir="",
                            progress=False, seed=3, share=shares[n])
    alone = {n: student(n).fit(ins[n], texts, teacher=teachers[n]) for n in ins}
    joint = StudentSelector.joined({n: student(n) for n in ins})
    asked = []
    joint.fit_heads(ins, texts, teachers, block=lambda r: (asked.append(len(r)), np.stack(
        [teachers[n].score(r) for n in ins], axis=1))[1])
    assert asked == [100]  # the sample scored once for both heads
    for n in ins:
        a, b = alone[n], joint.target(n)
        assert a.signature_params() == b.signature_params() and a.n_enriched_ == b.n_enriched_ == 50
        for k in ("coef", "mu", "sd", "bigrams"):
            assert a.student_.state()[k].tobytes() == b.student_.state()[k].tobytes(), (n, k)
        assert a.held_out_["student"].tobytes() == b.held_out_["student"].tobytes()
    block = joint.score_targets(texts)
    assert block.shape == (400, 2)
    for j, n in enumerate(ins):
        assert block[:, j].tobytes() == alone[n].score(texts).tobytes()
    assert not np.array_equal(block[:, 0], block[:, 1])  # two heads, not one
    shipped = StudentSelector(**joint.param_values()).set_fitted(joint.fitted_state())  # a Ray worker's copy
    assert shipped.score_targets(texts).tobytes() == block.tobytes()
    with pytest.raises(Exception, match="no head 'it'"):
        joint.target("it")


def test_student_learns_the_teachers_ranking_and_scores_fast_as_it_was_trained(pool, tiny_models):
    from domainsift.select import get_selector
    texts = pool["pool"].read_text().splitlines()
    sel = get_selector("student", teacher="cosine", teacher_params={"embedder": "tfidf"},
                       model=tiny_models["bert"], cache_dir="", progress=False)
    s = sel.fit(pool["in"].read_text().splitlines(), texts).score(texts)
    assert (np.argsort(-s, kind="stable")[:60] < 60).mean() >= 0.9  # the med lines first
    st = sel.student_
    np.testing.assert_allclose(s, st.score_features(st.featurize(texts)), rtol=1e-9, atol=1e-9)
    from domainsift.pipeline.cascade import candidates_for
    est = candidates_for(sel, 0.25)  # planned on out-of-fold scores of all 120 sample lines
    assert est["held_out"] == 120 and 0 < est["share"] <= 1 and est["slack"] == 0.25
    p = sel.signature_params()
    assert p["teacher_signature"]["method"] == "cosine" and p["features"] == "static+bigrams" and p["n_sample"] == 120


def test_a_finetune_teachers_student_distils_the_fine_tuned_encoder(pool, tiny_models, tmp_path):
    """vectors='teacher' (the default): a finetune teacher's student distils its static vectors from the
    fine-tuned encoder (each token alone through it, as from the base encoder), says so in its signature and
    its saved folder; 'base' and a teacher with no encoder of its own (cosine) distil the base encoder."""
    from domainsift.embed.static import SIF
    from domainsift.select import get_selector
    texts = pool["pool"].read_text().splitlines()
    ind = pool["in"].read_text().splitlines()
    teacher = get_selector("finetune", model=tiny_models["bert"], epochs=1, batch_size=8, holdout=0.0,
                           negatives="random", backend="torch", progress=False).fit(ind, texts)
    common = dict(teacher="finetune", model=tiny_models["bert"], cache_dir="", progress=False, share=0.3)
    tuned = get_selector("student", **common).fit(ind, texts, teacher=teacher)
    base = get_selector("student", vectors="base", **common).fit(ind, texts, teacher=teacher)
    assert tuned.signature_params()["vectors"] == "teacher" and base.signature_params()["vectors"] == "base"
    assert "fine-tuned" in tuned.signature_params()["static_encoder"]
    tok, net, _ = teacher.distil_source()
    torch = teacher.classifier_.torch
    tid = tok.convert_tokens_to_ids("dose")
    with torch.inference_mode():
        ids = torch.tensor([[tok.cls_token_id, tid, tok.sep_token_id]], device=net.device)
        h = net(input_ids=ids).last_hidden_state.mean(1)[0].cpu().numpy()
    vec = tuned.student_.static.vectors
    p = (1 / (tid + 2)) / np.sum(1 / (np.arange(len(vec)) + 2))
    np.testing.assert_allclose(vec[tid], h * SIF / (SIF + p), rtol=1e-5, atol=1e-7)
    assert np.abs(vec - base.student_.static.vectors).max() > 1e-6  # one epoch moved the tokens (~1e-5 here)
    tuned.save_state(tmp_path / "st")
    again = get_selector("student", student_from=str(tmp_path / "st"), progress=False).fit([], None)
    assert again.signature_params()["vectors"] == "teacher"
    np.testing.assert_allclose(again.score(texts), tuned.score(texts), rtol=1e-9, atol=1e-9)
    cos = get_selector("student", teacher="cosine", teacher_params={"embedder": "tfidf"},
                       model=tiny_models["bert"], cache_dir="", progress=False).fit(ind, texts)
    assert cos.signature_params()["vectors"] == "base"


def test_student_method_saves_a_student_that_scores_another_pool(pool, tiny_models, capsys, monkeypatch):
    argv = ["select", "--method", "student", "--teacher", "cosine", "--model", tiny_models["bert"], "--cache", "",
            "--in-domain", pool["in"], "--pool", pool["pool"], "--top", "30"]
    rc, err, _ = run_cli([*argv, "--out", "first"], capsys)
    assert rc == 0, err
    first = _run(pool["tmp"], "first")
    assert first["sig"]["method"] == "student" and first["sig"]["teacher_signature"]["method"] == "cosine"
    other = write_lines(pool["tmp"] / "other.txt", make_sentences("law", 10, 7) + make_sentences("med", 10, 8))
    from domainsift.select.student import StudentSelector
    monkeypatch.setattr(StudentSelector, "build_teacher", lambda self: pytest.fail("a saved student needs no teacher"))
    rc, err, _ = run_cli(["score", "--method", "student", "--student-from", pool["tmp"] / "first" / "student",
                          "--in-domain", pool["in"], "--pool", other, "--out", "reuse"], capsys)
    assert rc == 0, err
    s = _run(pool["tmp"], "reuse")["scores"]
    assert (np.argsort(-s, kind="stable")[:10] >= 10).all()  # the med half of the other pool first
    rc, err, _ = run_cli(["score", "--method", "student", "--student-from", pool["tmp"], "--in-domain", pool["in"],
                          "--pool", other, "--out", "bad"], capsys)
    assert rc == 2 and "not a saved student" in err and err.count("\n") == 0


def test_student_refuses_a_teacher_with_nothing_to_teach(pool, capsys):
    rc, err, _ = run_cli(["score", "--method", "student", "--teacher", "random", "--in-domain", pool["in"],
                          "--pool", pool["pool"], "--out", "o"], capsys)
    assert rc == 2 and "nothing to teach" in err


# ------------------------------------------------------------------ the cascade

def test_cascade_ranks_every_candidate_above_every_other_line(pool, tiny_models, capsys):
    # on the CPU wherever the test runs: a GPU's sums depend on the other lines of the batch (5e-9 seen on
    # an H200), and the candidates are batched otherwise than in the full run
    common = ["--model", tiny_models["bert"], "--cache", "", "--in-domain", pool["in"], "--pool", pool["pool"],
              "--top", "12", "--shard-size", "32", "--device", "cpu"]
    assert run_cli(["select", "--method", "cosine", *common, "--out", "full"], capsys)[0] == 0
    rc, err, out = run_cli(["select", "--method", "cosine", "--cascade", *common, "--out", "cascade"], capsys)
    assert rc == 0, err
    full, cas = _run(pool["tmp"], "full"), _run(pool["tmp"], "cascade")
    how = cas["run"]["cascade"]
    m = how["candidates"]
    assert how["selection_share"] == pytest.approx(0.1) and how["estimate"]["held_out"] == 120
    assert 24 <= m <= 120 and f"top {m}" in out  # at least twice the selection
    np.testing.assert_array_equal(cas["ids"], full["ids"])
    order = np.argsort(-cas["scores"], kind="stable")
    cand = np.sort(order[:m])
    assert cas["scores"][order[m - 1]] > cas["scores"][order[m]] if m < 120 else True
    np.testing.assert_allclose(cas["scores"][cand], full["scores"][cand], rtol=0, atol=1e-12)  # the method's own
    assert (cas["scores"][order[m:]] < full["scores"][cand].min() - 1).all()
    # the non-candidates keep the student's order
    from domainsift.select import get_selector
    student = get_selector("student", student_from=str(pool["tmp"] / "cascade" / "student"), progress=False)
    student.fit([], None)
    rest = np.sort(order[m:])
    s = student.score(read_corpus([pool["pool"]])[[int(i) for i in rest]])
    # a non-candidate's score is floor + arctan(student)/pi + 1/2 (floor: the lowest candidate's - 2);
    # compared as values within a tolerance, not as orderings: the student's scores here come from
    # another code path, whose float rounding may differ by CPU (ties in either order)
    floor = cas["scores"][cand].min() - 2.0
    np.testing.assert_allclose(np.tan((cas["scores"][rest] - floor - 0.5) * np.pi), s, rtol=1e-4, atol=1e-5)
    assert "student(static+bigrams),candidates=" in cas["sig"]["signature"]
    assert cas["sig"]["cascade_student"]["teacher"] == "cosine"
    sel = (pool["tmp"] / "cascade" / "selected.txt").read_text().splitlines()
    assert len(sel) == 12
    # run.json says where the time went, stage by stage, within the run's whole time
    t = cas["run"]["timings"]
    parts = [t[k] for k in ("fit_seconds", "student_fit_seconds", "student_score_seconds", "teacher_score_seconds")]
    assert min(parts) >= 0 and sum(parts) <= t["score_seconds"] + 0.5
    assert "student_fit_seconds" not in full["run"]["timings"] and full["run"]["timings"]["fit_seconds"] >= 0


@pytest.mark.slow
def test_cascade_candidates_flag_and_refusals(pool, capsys):
    common = ["--method", "cosine", "--model", "tfidf", "--in-domain", pool["in"], "--pool", pool["pool"]]
    rc, err, _ = run_cli(["score", *common, "--cascade", "--candidates", "7", "--out", "c"], capsys)
    assert rc == 0, err
    run = _run(pool["tmp"], "c")
    assert run["run"]["cascade"] == {"candidates": 7, "rule": "--candidates", "asked": 7}
    top = np.argsort(-run["scores"], kind="stable")
    assert (run["scores"][top[:7]] > run["scores"][top[7:]].max() + 1).all()
    rc, err, _ = run_cli(["score", *common, "--candidates", "7", "--out", "d"], capsys)
    assert rc == 2 and "--candidates applies to --cascade" in err
    rc, err, _ = run_cli(["score", "--method", "random", "--in-domain", pool["in"], "--pool", pool["pool"],
                          "--cascade", "--out", "e"], capsys)
    assert rc == 2 and "--cascade needs a method" in err and err.count("\n") == 0


@pytest.mark.parametrize("k", [2, 5, 7])  # in the student's shards, the teacher's, the final ones
def test_a_killed_cascade_resumes_to_the_same_bytes(k, pool):
    from domainsift.cli import main
    argv = ["select", "--method", "cosine", "--model", "tfidf", "--cascade", "--candidates", "40", "--in-domain",
            pool["in"], "--pool", pool["pool"], "--top", "9", "--shard-size", "30", "--out", "run"]
    assert main(["-q", *map(str, argv)]) == 0
    reference = {p.name: p.read_bytes() for p in (pool["tmp"] / "run").iterdir() if p.is_file() and p.name != "run.json"}
    (pool["tmp"] / "run").rename(pool["tmp"] / "uninterrupted")
    run_killed(argv, "domainsift.engine.shards:write_shard", k, pool["tmp"])
    assert main(["-q", *map(str, argv)]) == 0
    got = {p.name: p.read_bytes() for p in (pool["tmp"] / "run").iterdir() if p.is_file() and p.name != "run.json"}
    assert got == reference


@pytest.mark.slow
def test_a_cascade_killed_while_its_student_distils_the_teacher_resumes_to_the_same_bytes(pool, tiny_models):
    """The student's vectors come from the fine-tuned teacher: a run killed as they are distilled (the
    teacher's fit saved, the student not) distils them again from the saved teacher, to the same bytes."""
    from domainsift.cli import main
    argv = ["select", "--method", "finetune", "--model", tiny_models["bert"], "--epochs", "1", "--backend", "torch",
            "--device", "cpu", "--cache", "", "--cascade", "--candidates", "40", "--in-domain", pool["in"],
            "--pool", pool["pool"], "--top", "9", "--out", "run"]
    assert main(["-q", *map(str, argv)]) == 0
    assert json.loads((pool["tmp"] / "run" / "signature.json").read_text())["cascade_student"]["vectors"] == "teacher"
    reference = {p.name: p.read_bytes() for p in (pool["tmp"] / "run").iterdir() if p.is_file() and p.name != "run.json"}
    (pool["tmp"] / "run").rename(pool["tmp"] / "uninterrupted")
    run_killed(argv, "domainsift.embed.static:distill_encoder", 1, pool["tmp"], when="before")
    assert main(["-q", *map(str, argv)]) == 0
    got = {p.name: p.read_bytes() for p in (pool["tmp"] / "run").iterdir() if p.is_file() and p.name != "run.json"}
    assert got == reference


@pytest.mark.slow
@pytest.mark.ray
def test_ray_scores_a_cascade_as_the_local_engine(tiny_models, tmp_path):
    import ray  # the test extra installs it
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        pool_file = write_lines(tmp_path / "pool.txt", make_sentences("med", 50, 1) + make_sentences("law", 50, 2))
        ind = read_corpus([write_lines(tmp_path / "in.txt", make_sentences("med", 8, 3))])
        out = {}
        for engine in ("local", "ray"):
            ds.run(ds.RunSpec.single("cosine", ind, PoolSource.open([pool_file]), tmp_path / engine, params={"embedder": tiny_models["bert"], "cache_dir": str(tmp_path / f"cache-{engine}")}, execution=Execution(shard_size=16, engine=engine, workers=2), cascade=Cascade(share=0.1))).signature
            out[engine] = {n: (tmp_path / engine / n).read_bytes() for n in ("scores.npy", "ids.npy", "scores.tsv")}
        assert out["ray"] == out["local"]
    finally:
        ray.shutdown()


def _cascade_on(device: str, tiny_models, tmp_path) -> np.ndarray:
    """A 30-candidate cosine cascade over 100 lines with the teacher in PyTorch on ``device``."""
    pool_file = write_lines(tmp_path / "pool.txt", make_sentences("med", 50, 1) + make_sentences("law", 50, 2))
    ind = read_corpus([write_lines(tmp_path / "in.txt", make_sentences("med", 8, 3))])
    ds.run(ds.RunSpec.single("cosine", ind, PoolSource.open([pool_file]), tmp_path / device, params={"embedder": tiny_models["bert"], "backend": "torch", "device": device, "cache_dir": ""}, cascade=Cascade(candidates=30))).signature
    assert json.loads((tmp_path / device / "run.json").read_text())["cascade"]["candidates"] == 30
    return np.load(tmp_path / device / "scores.npy")


def test_cascade_with_the_teacher_in_pytorch(tiny_models, tmp_path):
    """The path the GPU test below takes, on the CPU (so that it cannot rot where no GPU runs it): the 30
    candidates the run asked for, each scored by the teacher above every other line."""
    scores = _cascade_on("cpu", tiny_models, tmp_path)
    order = np.argsort(-scores, kind="stable")
    assert scores[order[29]] > scores[order[30]] and len(scores) == 100


@pytest.mark.gpu
def test_cascade_on_a_gpu_scores_as_on_the_cpu(tiny_models, tmp_path):
    """The CUDA path (a GPU runs the teacher in PyTorch): the same candidates and, within fp32 rounding,
    the same scores as the CPU. Runs where CUDA exists; elsewhere it is reported as skipped."""
    out = {device: _cascade_on(device, tiny_models, tmp_path) for device in ("cpu", "cuda")}
    np.testing.assert_allclose(out["cuda"], out["cpu"], rtol=1e-4, atol=1e-5)


def test_a_saved_student_signs_what_ran(pool, tiny_models, capsys, caplog):
    """--student-from: the signature records the saved student's teacher and encoder and the digest of its
    files (not the flags, which a saved student cannot honour: --teacher is warned about), so a student
    swapped at the same path gives another signature."""
    import json
    import logging
    common = ["--in-domain", pool["in"], "--pool", pool["pool"], "--cache", ""]
    assert run_cli(["score", "--method", "student", "--teacher", "cosine", "--model", tiny_models["bert"], *common,
                    "--out", "a"], capsys)[0] == 0
    assert run_cli(["score", "--method", "student", "--teacher", "moore-lewis", "--model", tiny_models["bert"],
                    *common, "--out", "b"], capsys)[0] == 0
    with caplog.at_level(logging.WARNING):
        assert run_cli(["score", "--method", "student", "--student-from", pool["tmp"] / "a" / "student", "--teacher",
                        "moore-lewis", *common, "--out", "from-a"], capsys)[0] == 0
    assert "--teacher moore-lewis is not used" in caplog.text
    sig_a = json.loads((pool["tmp"] / "from-a" / "signature.json").read_text())
    assert sig_a["teacher"] == "cosine" and sig_a["student_digest"] and sig_a["head"] == "top vs rest, C=0.01"
    # the same path, another student: another signature
    import shutil
    shutil.rmtree(pool["tmp"] / "a" / "student")
    shutil.copytree(pool["tmp"] / "b" / "student", pool["tmp"] / "a" / "student")
    assert run_cli(["score", "--method", "student", "--student-from", pool["tmp"] / "a" / "student", *common,
                    "--out", "from-b"], capsys)[0] == 0
    sig_b = json.loads((pool["tmp"] / "from-b" / "signature.json").read_text())
    assert sig_b["teacher"] == "moore-lewis" and sig_b["signature"] != sig_a["signature"]
    assert sig_b["student_digest"] != sig_a["student_digest"]


def test_a_saved_student_hashed_another_way_is_refused(pool, tiny_models, capsys):
    """A saved student whose bigram table was hashed by another recipe is one clear error, not scores
    read through the wrong buckets."""
    import json
    from domainsift._internal.checksums import seal
    common = ["--in-domain", pool["in"], "--pool", pool["pool"], "--cache", ""]
    assert run_cli(["score", "--method", "student", "--teacher", "cosine", "--model", tiny_models["bert"], *common,
                    "--out", "a"], capsys)[0] == 0
    folder = pool["tmp"] / "a" / "student"
    meta = json.loads((folder / "student.json").read_text())
    assert meta["features"] == "static+bigrams" and meta["bigram_hash"] == "fib64-pair"
    meta["bigram_hash"] = "another"
    (folder / "student.json").write_text(json.dumps(meta))
    (folder / "SHA256SUMS").unlink()
    seal(folder)
    rc, err, _ = run_cli(["score", "--method", "student", "--student-from", folder, *common, "--out", "b"], capsys)
    assert rc != 0 and "hashed by another" in err and "fib64-pair" in err and "Traceback" not in err
