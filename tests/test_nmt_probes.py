"""Issue 90's probes of the translation floor, each a test that failed on 0.36.0: leaks of dev and test,
damaged or stale artifacts used, folders without an owner, settings taken for others, the Python API's
types, and what a new user met (an undertrained default, degenerate back-translations, silent logs, a
labels file for ``evaluate``). Tiny Marian models, seconds each."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from conftest import TINY_MARIAN, backwards, make_sentences, nmt_bitext, run_cli, tiny_nmt_settings, write_lines

pytest.importorskip("sacrebleu")
pytest.importorskip("sentencepiece")
torch = pytest.importorskip("torch")

TINY = TINY_MARIAN
NMT = ["--nmt-epochs", "2", "--nmt-vocab", "60", "--nmt-max-tokens", "300", "--nmt-warmup", "5", "--nmt-lr", "5e-3"]
_settings, _bitext = tiny_nmt_settings, nmt_bitext


@pytest.fixture
def files(tmp_path, monkeypatch):
    """An old bitext (law, it), its dev, a new domain's (med) test bitext and sources, a target-language pool."""
    monkeypatch.chdir(tmp_path)
    out = {}
    for name, b in (("old", _bitext(["law", "it"], 25, 3)), ("dev", _bitext(["law", "it"], 4, 70)),
                    ("test", _bitext(["med"], 5, 90))):
        out[name] = [str(write_lines(tmp_path / f"{name}.a", b.src)), str(write_lines(tmp_path / f"{name}.b", b.tgt))]
    out["new"] = str(write_lines(tmp_path / "new.a", make_sentences("med", 12, 20)))
    out["pool"] = str(write_lines(tmp_path / "pool.b", [backwards(s) for d, i in (("med", 30), ("law", 31))
                                                        for s in make_sentences(d, 20, i)]))
    return out


def _killed(monkeypatch, module, name: str, call, after: bool = True) -> None:
    """Run ``call()`` with ``module.name`` raising KeyboardInterrupt (after doing its work, or instead of it),
    as a run killed there; the function is put back."""
    real = getattr(module, name)

    def dies(*a, **kw):
        if after:
            real(*a, **kw)
        raise KeyboardInterrupt
    monkeypatch.setattr(module, name, dies)
    with pytest.raises(KeyboardInterrupt):
        call()
    monkeypatch.setattr(module, name, real)


def _weights(folder):
    from safetensors.torch import load_file
    return load_file(str(folder / "model" / "model.safetensors"))


def _same(a, b) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# ---------------------------------------------------------------- 1, 2: leaks refused before any work

def test_a_test_set_that_is_the_dev_set_is_refused_everywhere(files, tmp_path, capsys, monkeypatch):
    from domainsift.nmt import trainer
    monkeypatch.setitem(trainer.PRESETS, "proxy", {"arch": TINY, "vocab": 60, "lr": 5e-3, "warmup": 5,
                                                   "max_tokens": 300})
    rc, err, _ = run_cli(["nmt", "train", "--train", *files["old"], "--dev", *files["dev"], "--test", *files["dev"],
                          "--epochs", "1", "--out", "m"], capsys)
    assert rc == 2 and "dev.a:1: repeats a sentence of the dev set" in err and not (tmp_path / "m").exists(), err
    rc, err, _ = run_cli(["adapt", "--old", *files["old"], "--dev", *files["dev"], "--test", *files["dev"],
                          "--new-source", files["new"], "--selected", files["pool"], *NMT, "--out", "ad"], capsys)
    assert rc == 2 and "repeats a sentence of the dev set" in err and not (tmp_path / "ad").exists(), err


def test_the_judge_refuses_a_test_set_that_is_its_dev_set(tmp_path):
    from domainsift._internal.errors import InputError
    from domainsift.jobs.downstream import JudgeSettings, judge_nmt
    dev = _bitext(["med"], 4, 90)
    with pytest.raises(InputError, match="repeats a sentence of the dev set"):
        judge_nmt([], dev, dev, tmp_path / "ds", references=[("oracle", _bitext(["med"], 10, 1))],
                  settings=JudgeSettings(train=_settings()))
    assert not (tmp_path / "ds").exists()


def test_adapt_never_trains_on_test_references(files, tmp_path, capsys):
    # the selected lines hold a test reference: refused before any work, naming the file and line
    leaky = write_lines(tmp_path / "leaky.b", open(files["pool"]).read().splitlines()[:5]
                        + [open(files["test"][1]).read().splitlines()[2]])
    rc, err, _ = run_cli(["adapt", "--old", *files["old"], "--dev", *files["dev"], "--test", *files["test"],
                          "--new-source", files["new"], "--selected", str(leaky), *NMT, "--out", "ad"], capsys)
    assert rc == 2 and "leaky.b:6: is line 3 of the test set" in err and not (tmp_path / "ad").exists(), err
    # the test's source sentences as the new domain's sources: refused
    rc, err, _ = run_cli(["adapt", "--old", *files["old"], "--dev", *files["dev"], "--test", *files["test"],
                          "--new-source", files["test"][0], "--selected", files["pool"], *NMT, "--out", "ad"], capsys)
    assert rc == 2 and "test.a:1: is line 1 of the test set" in err and not (tmp_path / "ad").exists(), err


def test_adapts_own_selection_leaves_the_test_references_out(files, tmp_path, monkeypatch):
    """A pool that holds the test set's references: adapt's selection never takes one (they are excluded as
    --exclude excludes), so none becomes a training target."""
    from domainsift.io.corpus import read_corpus
    from domainsift.io.source import PoolSource
    from domainsift.jobs.adapt import _guarded, _read
    from domainsift.pipeline.run import run
    from domainsift.spec import Rule, RunSpec
    test_refs = open(files["test"][1]).read().splitlines()
    pool = write_lines(tmp_path / "pool2.b", test_refs + open(files["pool"]).read().splitlines())
    sample = write_lines(tmp_path / "sample.b", test_refs[:3] + [backwards(s) for s in make_sentences("med", 6, 21)])
    spec = RunSpec.single("moore-lewis", read_corpus([str(sample)]), PoolSource.open([str(pool)]),
                          rule=Rule(top=10))
    data = _read(tuple(files["old"]), tuple(files["dev"]), files["new"], tuple(files["test"]), None)
    unguarded = {t for t, _ in run(spec).selected()}
    assert unguarded & set(test_refs)  # the leak a selection makes when nothing stops it
    chosen = {t for t, _ in run(_guarded(spec, data)).selected()}
    assert len(chosen) == 10 and not chosen & set(test_refs)


def test_the_overlap_error_names_the_training_file_that_holds_the_line(tmp_path):
    from domainsift._internal.errors import InputError
    from domainsift.nmt.data import Bitext, check_disjoint
    train = Bitext(("a b", "c d"), ("x y", "z w"), ("tr.de", "tr.en"))
    test = Bitext(("q q", "r r"), ("s s", "z w"), ("te.de", "te.en"))
    with pytest.raises(InputError, match=r"te\.en:2: repeats a sentence of the training data \(tr\.en\)"):
        check_disjoint(train, test)


# ---------------------------------------------------------------- 3: damaged artifacts are never used

def test_damaged_best_weights_are_never_sealed_into_the_model(tmp_path, monkeypatch):
    from domainsift.nmt import trainer
    from domainsift.nmt.trainer import train_nmt
    tr, dv = _bitext(["med", "law"], 20, 1), _bitext(["med"], 4, 50)
    whole = train_nmt(tr, dv, tmp_path / "whole", _settings())
    # killed after the last epoch, before model/ is written
    _killed(monkeypatch, trainer, "_finish", lambda: train_nmt(tr, dv, tmp_path / "killed", _settings()), after=False)
    best = next((tmp_path / "killed" / ".resume").glob("*.best")) / "model.safetensors"
    data = bytearray(best.read_bytes())
    data[-3] ^= 0xFF
    data[-40] ^= 0xFF
    best.write_bytes(bytes(data))
    again = train_nmt(tr, dv, tmp_path / "killed", _settings())
    assert again["dev_loss"] == whole["dev_loss"]
    assert _same(_weights(tmp_path / "killed"), _weights(tmp_path / "whole"))


def test_a_changed_vocabulary_in_the_resume_state_is_made_again(tmp_path, monkeypatch):
    from domainsift.nmt import trainer
    from domainsift.nmt.trainer import train_nmt
    tr, dv = _bitext(["med", "law"], 20, 1), _bitext(["med"], 4, 50)
    train_nmt(tr, dv, tmp_path / "whole", _settings())
    _killed(monkeypatch, trainer, "_checkpoint", lambda: train_nmt(tr, dv, tmp_path / "killed", _settings()))
    vocab = next((tmp_path / "killed" / ".resume").glob("*.vocab")) / "spm.model"
    data = bytearray(vocab.read_bytes())
    data[len(data) // 2] ^= 0x01  # a changed piece
    vocab.write_bytes(bytes(data))
    train_nmt(tr, dv, tmp_path / "killed", _settings())
    assert (tmp_path / "killed" / "spm.model").read_bytes() == (tmp_path / "whole" / "spm.model").read_bytes()
    assert _same(_weights(tmp_path / "killed"), _weights(tmp_path / "whole"))


def test_the_same_training_writes_the_same_vocabulary_bytes(tmp_path):
    from domainsift.nmt.trainer import train_vocab
    texts = make_sentences("med", 40, 1)
    train_vocab(texts, 50, 0, tmp_path / "a.model")
    train_vocab(texts, 50, 0, tmp_path / "b.model")
    assert (tmp_path / "a.model").read_bytes() == (tmp_path / "b.model").read_bytes()
    assert b"domainsift-spm" not in (tmp_path / "a.model").read_bytes()


def _adapt(files, out, **kw):
    from domainsift.jobs.adapt import AdaptSettings, adapt
    return adapt(tuple(files["old"]), tuple(files["dev"]), files["new"], out, selected=files["pool"],
                 settings=AdaptSettings(train=_settings(), beam=1, **kw))


def test_a_damaged_pseudo_bitext_is_made_again(files, tmp_path):
    first = _adapt(files, tmp_path / "ad")
    src = tmp_path / "ad" / "pseudo.src"
    whole = src.read_text()
    lines = whole.splitlines()[:30]
    lines[:5] = ["altered"] * 5
    src.write_text("\n".join(lines) + "\n")
    (tmp_path / "ad" / "adapt.json").unlink()
    again = _adapt(files, tmp_path / "ad")
    assert src.read_text() == whole and again["steps"]["pseudo"]["n"] == first["steps"]["pseudo"]["n"]


# ---------------------------------------------------------------- 4: stale models are never reused

def test_adapt_trains_again_when_the_base_model_in_the_same_folder_changed(files, tmp_path):
    from domainsift.nmt.trainer import train_nmt
    from domainsift.nmt import read_bitext
    old, dev = read_bitext(*files["old"]), read_bitext(*files["dev"])
    train_nmt(old, dev, tmp_path / "base", _settings(seed=0))
    _adapt(files, tmp_path / "ad", base=tmp_path / "base")
    before = _weights(tmp_path / "ad" / "model")
    _adapt(files, tmp_path / "ad", base=tmp_path / "base")  # nothing changed: every step kept
    assert _same(_weights(tmp_path / "ad" / "model"), before)
    train_nmt(old, dev, tmp_path / "base", _settings(seed=1), overwrite=True)  # other weights, same path
    _adapt(files, tmp_path / "ad", base=tmp_path / "base")
    assert not _same(_weights(tmp_path / "ad" / "model"), before)


def test_a_killed_warm_start_training_never_resumes_from_another_start_model(tmp_path, monkeypatch):
    from domainsift.nmt import trainer
    from domainsift.nmt.trainer import train_nmt
    tr, dv = _bitext(["med", "law"], 20, 1), _bitext(["med"], 4, 50)
    train_nmt(tr, dv, tmp_path / "I", _settings(seed=0))
    _killed(monkeypatch, trainer, "_checkpoint",
            lambda: train_nmt(tr, dv, tmp_path / "W", _settings(), init_from=tmp_path / "I"))
    train_nmt(tr, dv, tmp_path / "I", _settings(seed=1), overwrite=True)  # I retrained
    resumed = train_nmt(tr, dv, tmp_path / "W", _settings(), init_from=tmp_path / "I")
    fresh = train_nmt(tr, dv, tmp_path / "W2", _settings(), init_from=tmp_path / "I")
    assert resumed["dev_loss"] == fresh["dev_loss"] and _same(_weights(tmp_path / "W"), _weights(tmp_path / "W2"))


def test_a_ctranslate2_conversion_of_another_model_or_damaged_is_made_again(tmp_path):
    pytest.importorskip("ctranslate2")
    from domainsift.nmt import load_nmt, translate
    from domainsift.nmt.trainer import train_nmt
    tr, dv = _bitext(["med", "law"], 20, 1), _bitext(["med"], 4, 50)
    train_nmt(tr, dv, tmp_path / "m", _settings(seed=0))
    translate(tmp_path / "m", ["dose tablet"], beam=1, backend="ctranslate2")
    first = (tmp_path / "m" / "ct2-int8" / "model.bin").read_bytes()
    train_nmt(tr, dv, tmp_path / "m", _settings(seed=1), overwrite=True)
    out = translate(tmp_path / "m", ["dose tablet"], beam=1, backend="ctranslate2")
    assert (tmp_path / "m" / "ct2-int8" / "model.bin").read_bytes() != first and len(out) == 1
    source = json.loads((tmp_path / "m" / "ct2-int8" / "domainsift.json").read_text())
    assert source["model"] == load_nmt(tmp_path / "m").identity
    (tmp_path / "m" / "ct2-int8" / "model.bin").write_bytes(first[:100])  # truncated
    assert translate(tmp_path / "m", ["dose tablet"], beam=1, backend="ctranslate2") == out


# ---------------------------------------------------------------- 5, 8: one owner per folder, resumable steps

def test_nmt_train_takes_the_folder_and_refuses_a_users_own(files, tmp_path, capsys):
    import fcntl
    from domainsift.nmt import trainer
    trainer.PRESETS["tinytest"] = {"arch": TINY, "vocab": 60, "lr": 5e-3, "warmup": 5, "max_tokens": 300}
    try:
        (tmp_path / "m").mkdir()
        with open(tmp_path / "m" / ".lock", "a+") as fh:  # another run holds it
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            rc, err, _ = run_cli(["nmt", "train", "--train", *files["old"], "--dev", *files["dev"], "--preset",
                                  "tinytest", "--epochs", "1", "--out", "m"], capsys)
        assert rc == 2 and "another domainsift run is writing" in err, err
    finally:
        del trainer.PRESETS["tinytest"]
    (tmp_path / "u").mkdir()
    (tmp_path / "u" / "pseudo.tgt").write_text("my own file\n")
    rc, err, _ = run_cli(["adapt", "--old", *files["old"], "--dev", *files["dev"], "--new-source", files["new"],
                          "--selected", files["pool"], *NMT, "--out", "u"], capsys)
    assert rc == 2 and "a folder of other files (pseudo.tgt)" in err, err
    assert (tmp_path / "u" / "pseudo.tgt").read_text() == "my own file\n"
    from domainsift.jobs.adapt import AdaptSettings, adapt  # asked for: the folder is written into
    adapt(tuple(files["old"]), tuple(files["dev"]), files["new"], tmp_path / "u", selected=files["pool"],
          settings=AdaptSettings(train=_settings(epochs=1), beam=1), overwrite=True)
    assert (tmp_path / "u" / "adapt.json").is_file() and (tmp_path / "u" / "pseudo.tgt").read_text() != "my own file\n"


def test_a_run_killed_during_the_test_translation_keeps_the_model_and_scores(files, tmp_path, monkeypatch):
    from domainsift.jobs import nmt as job
    from domainsift.nmt import decode
    real = decode.translate
    calls = []

    def dies(*a, **kw):
        calls.append(1)
        raise KeyboardInterrupt
    monkeypatch.setattr(decode, "translate", dies)
    import domainsift.nmt as nmt_pkg
    with pytest.raises(KeyboardInterrupt):
        job.train_job(tuple(files["old"]), tuple(files["dev"]), tmp_path / "m", tuple(files["test"]), _settings(),
                      beam=1)
    assert calls and (tmp_path / "m" / "nmt.json").is_file()
    before = (tmp_path / "m" / "model" / "model.safetensors").stat().st_mtime_ns
    monkeypatch.setattr(decode, "translate", real)
    assert nmt_pkg.translate is real
    rec = job.train_job(tuple(files["old"]), tuple(files["dev"]), tmp_path / "m", tuple(files["test"]), _settings(),
                        beam=1)
    assert 0 <= rec["test"]["bleu"] <= 100 and (tmp_path / "m" / "test.hyp").is_file()
    assert (tmp_path / "m" / "model" / "model.safetensors").stat().st_mtime_ns == before  # not trained again
    # a model of other settings in the folder is still refused
    from domainsift._internal.errors import DomainsiftError
    with pytest.raises(DomainsiftError, match="holds a model trained on other data"):
        job.train_job(tuple(files["old"]), tuple(files["dev"]), tmp_path / "m", None, _settings(seed=3))


def test_a_run_killed_before_its_record_resumes(tmp_path, monkeypatch):
    from domainsift._internal import atomic
    from domainsift.nmt.trainer import train_nmt
    tr, dv = _bitext(["med", "law"], 20, 1), _bitext(["med"], 4, 50)
    whole = train_nmt(tr, dv, tmp_path / "whole", _settings())
    real = atomic.save_json

    def dies(path, obj):
        if str(path).endswith("nmt.json"):
            raise KeyboardInterrupt
        real(path, obj)
    monkeypatch.setattr(atomic, "save_json", dies)
    with pytest.raises(KeyboardInterrupt):
        train_nmt(tr, dv, tmp_path / "killed", _settings())
    monkeypatch.setattr(atomic, "save_json", real)
    assert (tmp_path / "killed" / "model").is_dir() and (tmp_path / "killed" / "spm.model").is_file()
    again = train_nmt(tr, dv, tmp_path / "killed", _settings())
    assert again["dev_loss"] == whole["dev_loss"]


# ---------------------------------------------------------------- 6, 10: the Python API's front door

@pytest.fixture
def two_targets(tmp_path):
    from domainsift.io.corpus import read_corpus
    med = write_lines(tmp_path / "med.txt", make_sentences("med", 10, 1))
    law = write_lines(tmp_path / "law.txt", make_sentences("law", 10, 2))
    pool = write_lines(tmp_path / "pool.txt", sum((make_sentences(d, 15, 10 + i) for i, d in
                                                   enumerate(("med", "law", "it"))), []))
    return {"med": read_corpus([str(med)]), "law": read_corpus([str(law)])}, str(pool)


def test_the_api_mix_weighs_a_total_as_the_cli_does(two_targets, tmp_path):
    from domainsift.io.source import PoolSource
    from domainsift.pipeline.run import run
    from domainsift.spec import Rule, RunSpec
    targets, pool = two_targets
    res = run(RunSpec("random", targets, PoolSource.open([pool]), tmp_path / "mx", rule=Rule(top=8),
                      mix={"med": 3, "law": 1}))
    assert sum(len(res.selected(n)) for n in targets) == 8
    assert len(res.selected("med")) == 6 and len(res.selected("law")) == 2


@pytest.mark.parametrize("spec_kw, says", [
    (dict(mix={"med": -1, "law": 1}), "positive weight"),
    (dict(mix={"med": 0, "law": 1}), "positive weight"),
    (dict(mix={"med": float("nan"), "law": 1}), "positive weight"),
    (dict(mix={"med": 1}), "missing: law"),
    (dict(mix={"med": 1, "law": 1, "it": 1}), "not a target: it"),
    (dict(rule_top=2.5), "top= takes a whole number"),
    (dict(seed="0"), "seed= takes a whole number"),
])
def test_the_api_refuses_bad_values_before_any_work(two_targets, tmp_path, spec_kw, says):
    from domainsift._internal.errors import DomainsiftError
    from domainsift.io.source import PoolSource
    from domainsift.pipeline.run import run
    from domainsift.spec import Rule, RunSpec
    targets, pool = two_targets
    rule = Rule(top=spec_kw.pop("rule_top", 8))
    with pytest.raises(DomainsiftError, match=says):
        run(RunSpec("random", targets, PoolSource.open([pool]), tmp_path / "bad", rule=rule, **spec_kw))
    assert not (tmp_path / "bad").exists()


# ---------------------------------------------------------------- 7, 9: settings, divergence, outputs

def test_a_zero_learning_rate_is_refused_not_replaced(tmp_path):
    from domainsift._internal.errors import DomainsiftError
    with pytest.raises(DomainsiftError, match="--lr must be a positive number, got 0"):
        _settings(lr=0).resolved()
    with pytest.raises(DomainsiftError, match="--max-tokens must be at least 8, got 0"):
        _settings(max_tokens=0).resolved()


def test_a_diverging_training_stops_with_one_line(tmp_path):
    from domainsift._internal.errors import DomainsiftError
    from domainsift.nmt.guda import Mixing
    from domainsift.nmt.trainer import train_nmt
    mixing = Mixing(_bitext(["law"], 10, 5), tuple(make_sentences("med", 8, 40)), lambda_src=1e39)
    with pytest.raises(DomainsiftError, match="the training diverged"):
        train_nmt(_bitext(["med"], 10, 1), _bitext(["med"], 3, 60), tmp_path / "m", _settings(), mixing=mixing)


def test_a_warm_start_records_the_architecture_it_trained(tmp_path):
    from domainsift.nmt.trainer import train_nmt
    tr, dv = _bitext(["med", "law"], 20, 1), _bitext(["med"], 4, 50)
    train_nmt(tr, dv, tmp_path / "I", _settings())
    rec = train_nmt(tr, dv, tmp_path / "W", _settings(preset="paper", arch={}, vocab=60), init_from=tmp_path / "I")
    assert rec["settings"]["arch"]["d_model"] == 16 and rec["settings"]["arch"]["encoder_layers"] == 1
    assert "d_model:16" in rec["signature"]


def test_translate_never_writes_into_the_model_folder(tmp_path, capsys, monkeypatch):
    from domainsift.nmt.trainer import train_nmt
    monkeypatch.chdir(tmp_path)
    train_nmt(_bitext(["med"], 15, 1), _bitext(["med"], 3, 50), tmp_path / "M", _settings(epochs=1))
    record = (tmp_path / "M" / "nmt.json").read_text()
    inp = write_lines(tmp_path / "in.txt", ["dose tablet"])
    rc, err, _ = run_cli(["nmt", "translate", "--model", "M", "--input", str(inp), "--out", "M/nmt.json"], capsys)
    assert rc == 2 and "inside the model folder" in err and (tmp_path / "M" / "nmt.json").read_text() == record


def test_a_full_disk_under_a_writer_that_says_it_its_own_way_is_one_line(tmp_path, monkeypatch):
    import os
    from domainsift._internal import atomic
    from domainsift._internal.errors import DiskFullError

    class Full:
        f_bavail, f_frsize = 3, 4096
    monkeypatch.setattr(os, "statvfs", lambda p: Full())
    with pytest.raises(DiskFullError, match="No space left on device"):
        with atomic.atomic_dir(tmp_path / "ckpt"):
            raise RuntimeError("[enforce fail at inline_container.cc:595] . PytorchStreamWriter failed writing "
                               "file data/3: file write failed")
    assert not (tmp_path / "ckpt").exists()


# ---------------------------------------------------------------- 11-16: tried as a new user would

def test_the_defaults_train_to_convergence_and_say_when_they_did_not(tmp_path, caplog):
    from domainsift.nmt.trainer import PRESETS, TrainSettings, train_nmt
    s = TrainSettings().resolved()
    assert s.epochs >= 60 and s.max_tokens == 800 and PRESETS["proxy"]["warmup"] == 200
    with caplog.at_level(logging.INFO, logger="domainsift"):
        rec = train_nmt(_bitext(["med"], 15, 1), _bitext(["med"], 3, 50), tmp_path / "m",
                        _settings(epochs=2, patience=5))
    text = caplog.text
    if rec["best_epoch"] == 2:
        assert "still falling at the last of 2 epochs" in text
    assert "epoch 1/2: dev loss" in text and "epoch 2/2: dev loss" in text  # a line an epoch, no bar needed


def test_degenerate_back_translations_are_measured():
    from domainsift.jobs.adapt import degeneracy
    fine = degeneracy(["the dose is low", "take one tablet", "see a doctor"])
    assert fine == {"distinct": 1.0, "looping": 0.0}
    bad = degeneracy(["of the of the of the of the", "of the of the of the", "a b", "a b"])
    assert bad["distinct"] == 0.75 and bad["looping"] == 0.5


def test_evaluate_reads_a_file_of_labels(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    med, law = make_sentences("med", 10, 1), make_sentences("law", 10, 2)
    pool = write_lines(tmp_path / "pool.txt", med + law)
    labels = write_lines(tmp_path / "labels.txt", ["med"] * 10 + ["law"] * 10)
    ind = write_lines(tmp_path / "in.txt", make_sentences("med", 8, 3))
    rc, err, _ = run_cli(["select", "--method", "random", "--in-domain", str(ind), "--pool", str(pool), "--top", "5",
                          "--out", "r"], capsys)
    assert rc == 0, err
    rc, err, out = run_cli(["evaluate", "r", "--labels", str(labels), "--label", "med"], capsys)
    assert rc == 0, err
    by_labels = json.loads((tmp_path / "r" / "eval.json").read_text())
    med_file = write_lines(tmp_path / "med_only.txt", med)
    assert by_labels["n_gold"] == 10 and by_labels["label"] == "med" and med_file
    chosen = [int(line.split("\t")[1]) for line in (tmp_path / "r" / "selected.ids.tsv").read_text().splitlines()[1:]]
    assert by_labels["n_correct"] == sum(1 for n in chosen if n <= 10)
    short = write_lines(tmp_path / "short.txt", ["med"] * 5)
    rc, err, _ = run_cli(["evaluate", "r", "--labels", str(short), "--label", "med"], capsys)
    assert rc == 2 and "short.txt: 5 labels for a pool of" in err, err
    rc, err, _ = run_cli(["evaluate", "r", "--labels", str(labels), "--label", "it"], capsys)
    assert rc == 2 and "no line is labelled 'it'" in err, err


def test_the_help_names_each_direction_plainly(capsys):
    from domainsift.cli import build_parser
    helps = {}
    for cmd in ("adapt", "select", "downstream"):
        with pytest.raises(SystemExit):
            build_parser().parse_args([cmd, "--help"])
        helps[cmd] = " ".join(capsys.readouterr().out.split())
    assert "translates SRC's language into TGT's, the language of --pool" in helps["adapt"]
    assert "--pool is the side that is scored" in helps["select"] and "crosslingual" in helps["select"]
    assert "SRC in the language of the pool's other side (--pool-target)" in helps["downstream"]


def test_the_paper_preset_is_paper_003s_appendix():
    from domainsift.nmt.trainer import PRESETS, TrainSettings
    p = TrainSettings(preset="paper").resolved()
    assert p.vocab == 32000 and p.warmup == 1000 and p.lr == 5e-4 and p.max_tokens * p.accumulate == 32768
    assert p.arch["d_model"] == 256 and p.arch["encoder_layers"] == 6 and p.arch["dropout"] == 0.3
    assert TrainSettings().resolved().accumulate == 1 and PRESETS["proxy"].get("accumulate", 1) == 1


def test_accumulate_sums_batches_into_one_update(tmp_path, monkeypatch):
    from domainsift.nmt import trainer
    calls = []
    real = trainer.inverse_sqrt

    def counting(warmup):
        f = real(warmup)

        def g(step):
            calls.append(step)
            return f(step)
        return g
    monkeypatch.setattr(trainer, "inverse_sqrt", counting)
    tr, dv = _bitext(["med", "law"], 20, 1), _bitext(["med"], 4, 50)
    trainer.train_nmt(tr, dv, tmp_path / "one", _settings(epochs=1, max_tokens=100))
    one = max(calls)
    calls.clear()
    trainer.train_nmt(tr, dv, tmp_path / "two", _settings(epochs=1, max_tokens=100, accumulate=2))
    assert one > 4 and max(calls) == -(-one // 2)  # ceil: the epoch's last, odd batch is an update of its own


def test_a_damaged_vocabulary_of_a_model_folder_is_refused(tmp_path):
    from domainsift._internal.checksums import DamagedError
    from domainsift.nmt import load_nmt
    from domainsift.nmt.trainer import train_nmt
    train_nmt(_bitext(["med"], 15, 1), _bitext(["med"], 3, 50), tmp_path / "M", _settings(epochs=1))
    vocab = tmp_path / "M" / "spm.model"
    data = bytearray(vocab.read_bytes())
    data[len(data) // 2] ^= 0x01
    vocab.write_bytes(bytes(data))
    with pytest.raises(DamagedError, match="spm.model: damaged"):
        load_nmt(tmp_path / "M")


def test_a_long_call_into_cpp_leaves_ctrl_c_to_the_main_thread():
    """sentencepiece's training runs in a worker thread while the main thread waits in short joins, so a
    SIGINT is handled at once (it was not for the length of the training)."""
    import threading
    import time

    from domainsift.nmt.trainer import _interruptible
    assert _interruptible(lambda: 41 + 1) == 42
    with pytest.raises(ZeroDivisionError):
        _interruptible(lambda: 1 / 0)
    import _thread
    release = threading.Event()
    threading.Timer(0.3, _thread.interrupt_main).start()  # a Ctrl-C while the call still runs
    t0 = time.time()
    with pytest.raises(KeyboardInterrupt):
        _interruptible(lambda: release.wait(10))
    release.set()
    assert time.time() - t0 < 5


def test_plan_says_which_way_a_model_of_the_selection_translates(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = make_sentences("med", 30, 1)
    write_lines(tmp_path / "pool.a", src)
    write_lines(tmp_path / "pool.b", [backwards(s) for s in src])
    write_lines(tmp_path / "in.a", make_sentences("med", 10, 2))
    rc, err, out = run_cli(["select", "--method", "random", "--in-domain", "in.a", "--pool", "pool.a", "--pool-target",
                            "pool.b", "--top", "5", "--out", "r", "--plan"], capsys)
    assert rc == 0, err
    assert "the scored side is" in out and "pool.a" in out and "translates the other side" in out and "pool.b" in out


def test_a_reverse_model_of_the_wrong_direction_is_refused(files, tmp_path):
    from domainsift._internal.errors import DomainsiftError
    from domainsift.nmt import read_bitext
    from domainsift.nmt.trainer import train_nmt
    train_nmt(read_bitext(*files["old"]), read_bitext(*files["dev"]), tmp_path / "fwd", _settings(epochs=1))
    with pytest.raises(DomainsiftError, match="--reverse .*fwd: trained on .*old.a -> .*old.b the other way round"):
        _adapt(files, tmp_path / "ad", reverse=tmp_path / "fwd")
    assert not (tmp_path / "ad").exists()


def test_translate_keeps_trailing_empty_lines_and_model_folders_are_readable(tmp_path, capsys, monkeypatch):
    import os
    import stat
    from domainsift.nmt.trainer import train_nmt
    monkeypatch.chdir(tmp_path)
    train_nmt(_bitext(["med"], 15, 1), _bitext(["med"], 3, 50), tmp_path / "M", _settings(epochs=1))
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "M" / "model").stat().st_mode) == 0o777 & ~mask
    inp = tmp_path / "in.txt"
    inp.write_text("dose tablet\n\nclick file\n\n\n")
    rc, err, _ = run_cli(["nmt", "translate", "--model", "M", "--input", str(inp), "--out", "hyp.txt", "--beam", "1"],
                         capsys)
    assert rc == 0, err
    assert (tmp_path / "hyp.txt").read_text().count("\n") == 5


def test_ctranslate2_stops_at_the_same_length_cap_as_generate(tmp_path):
    pytest.importorskip("ctranslate2")
    from domainsift.nmt import load_nmt
    from domainsift.nmt.ct2 import translate_ct2
    from domainsift.nmt.data import Bitext
    from domainsift.nmt.decode import _generate
    from domainsift.nmt.trainer import encode, train_nmt
    src = make_sentences("med", 30, 1)
    long = Bitext.of(src, [" ".join([backwards(s)] * 3) for s in src])  # outputs longer than the cap
    train_nmt(long, _bitext(["med"], 3, 9), tmp_path / "m", _settings(epochs=1))
    nmt = load_nmt(tmp_path / "m")
    ids = encode(nmt.vocab, ["dose", "tablet patient"])
    batch = [(ids, max(map(len, ids)))]
    gen = next(_generate(nmt, iter(batch), 1, 6))
    ct2 = next(translate_ct2(nmt, iter(batch), 1, 6))
    assert max(map(len, gen)) == 5 and max(map(len, ct2)) == max(map(len, gen))


def _tree(folder: Path) -> dict:
    """Every file under ``folder`` by its path: bytes, or for JSON the data without timings, the folder's
    own name replaced."""
    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if "second" not in k and k != "time"}
        if isinstance(v, str):
            return v.replace(str(folder), "OUT")
        return [clean(x) for x in v] if isinstance(v, list) else v
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name != ".lock":
            rel = str(p.relative_to(folder))
            out[rel] = clean(json.loads(p.read_text())) if p.suffix == ".json" else p.read_bytes()
    return out


def test_adapt_killed_in_each_step_ends_with_the_bytes_of_a_whole_run(files, tmp_path, monkeypatch):
    """``adapt`` stopped at the start of each of its steps (the reverse model, the back-translation, the
    old-domain model, the adapted model, the test's translation) and run again ends with the files of a
    run never stopped, byte for byte (JSON without its timings)."""
    import domainsift.jobs.adapt as job
    import domainsift.pipeline.nmt as steps
    from domainsift.jobs.adapt import AdaptSettings, adapt

    def run(out):
        return adapt(tuple(files["old"]), tuple(files["dev"]), files["new"], out, selected=files["pool"],
                     test=tuple(files["test"]), settings=AdaptSettings(train=_settings(), beam=1))
    run(tmp_path / "whole")
    whole = _tree(tmp_path / "whole")
    assert {"pseudo.src", "test.hyp", "model/model/model.safetensors", "adapt.json"} <= set(whole)
    real_trained, real_translate = steps.trained, job._Run.translate
    n_steps = 5  # three trainings, the back-translation, the test's translation
    for k in range(n_steps):
        calls = []

        def stop(real):
            def wrapped(*a, **kw):
                calls.append(real.__name__)
                if len(calls) == k + 1:
                    raise KeyboardInterrupt
                return real(*a, **kw)
            return wrapped
        monkeypatch.setattr(steps, "trained", stop(real_trained))
        monkeypatch.setattr(job._Run, "translate", stop(real_translate))  # inside the back-translation's step
        out = tmp_path / f"killed{k}"
        with pytest.raises(KeyboardInterrupt):
            run(out)
        monkeypatch.setattr(steps, "trained", real_trained)
        monkeypatch.setattr(job._Run, "translate", real_translate)
        run(out)
        assert _tree(out) == whole, f"stopped at step {k + 1} ({calls[-1]})"
    assert calls == ["trained", "translate", "trained", "trained", "translate"]
