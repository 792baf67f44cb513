"""The model trained on a selection (domainsift.nmt): tiny Marian models built from a config, in seconds.

Language B writes every word of language A backwards, so a model has something to learn."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import backwards, make_sentences, run_cli, write_lines

pytest.importorskip("sacrebleu")
pytest.importorskip("sentencepiece")

TINY = dict(d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2,
            encoder_ffn_dim=32, decoder_ffn_dim=32, dropout=0.1)


def _pairs(n: int, seed: int):
    src = sum((make_sentences(d, n, seed + i) for i, d in enumerate(("med", "law", "it"))), [])
    return src, [backwards(s) for s in src]


def _settings(**kw):
    from domainsift.nmt.trainer import TrainSettings
    return TrainSettings(**{"epochs": 3, "patience": 3, "vocab": 60, "arch": TINY, "lr": 5e-3, "warmup": 5,
                            "max_tokens": 300, **kw})


@pytest.fixture
def bitexts(tmp_path):
    src, tgt = _pairs(40, 1)
    dsrc, dtgt = _pairs(6, 50)
    tsrc, ttgt = _pairs(4, 90)
    return {k: write_lines(tmp_path / f"{k}", v) for k, v in
            (("train.a", src), ("train.b", tgt), ("dev.a", dsrc), ("dev.b", dtgt), ("test.a", tsrc), ("test.b", ttgt))}


def test_training_lowers_the_dev_loss_and_translates(bitexts, tmp_path):
    from domainsift.nmt import load_nmt, read_bitext, train_nmt, translate
    train, dev = read_bitext(bitexts["train.a"], bitexts["train.b"]), read_bitext(bitexts["dev.a"], bitexts["dev.b"])
    rec = train_nmt(train, dev, tmp_path / "m", _settings(epochs=4, patience=4))
    assert rec["epochs_run"] == 4 and min(rec["dev_loss"][1:]) < rec["dev_loss"][0]
    assert rec["best_epoch"] == int(np.argmin(rec["dev_loss"])) + 1
    assert rec["target_tokens"] > 0 and rec["parameters"] > 0 and "nmt|model:marian" in rec["signature"]
    assert not (tmp_path / "m" / ".resume").exists()
    out = translate(load_nmt(tmp_path / "m"), ["dose tablet patient", "click file"], beam=2)
    assert len(out) == 2 and all(isinstance(x, str) for x in out)


def _killed_and_resumed(tmp_path, train_call: str) -> tuple[dict, dict]:
    """Run ``train_call`` (Python, in a fresh process, with ``out``, ``tr``, ``dv`` and ``s`` defined) whole,
    and again killed after its first epoch's checkpoint and started once more; the two folders' weights
    must be the same. Returns the two ``nmt.json``."""
    script = f"""
import os, signal, sys
sys.path.insert(0, {str(tmp_path)!r})
from domainsift.nmt import read_bitext, train_nmt
from domainsift.nmt import trainer
from domainsift.nmt.trainer import TrainSettings
kill = sys.argv[2] == "kill"
real = trainer._checkpoint
def once(*a, **kw):
    real(*a, **kw)
    if kill:
        os.kill(os.getpid(), signal.SIGKILL)
trainer._checkpoint = once
s = TrainSettings(epochs=3, patience=3, vocab=60, arch={TINY!r}, lr=5e-3, warmup=5, max_tokens=300)
out = sys.argv[1]
tr = read_bitext({str(tmp_path / 'train.a')!r}, {str(tmp_path / 'train.b')!r})
dv = read_bitext({str(tmp_path / 'dev.a')!r}, {str(tmp_path / 'dev.b')!r})
{train_call}
"""
    run = lambda out, how: subprocess.run([sys.executable, "-c", script, str(out), how],  # noqa: E731
                                          capture_output=True, text=True)
    whole = run(tmp_path / "whole", "run")
    assert whole.returncode == 0, whole.stderr
    killed = run(tmp_path / "killed", "kill")
    assert killed.returncode == -9, killed.stderr
    assert list((tmp_path / "killed" / ".resume").glob("*.checkpoint"))
    again = run(tmp_path / "killed", "run")
    assert again.returncode == 0, again.stderr
    import torch
    from safetensors.torch import load_file
    a = load_file(tmp_path / "whole" / "model" / "model.safetensors")
    b = load_file(tmp_path / "killed" / "model" / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    ra, rb = (json.loads((tmp_path / d / "nmt.json").read_text()) for d in ("whole", "killed"))
    assert ra["dev_loss"] == rb["dev_loss"] and ra["best_epoch"] == rb["best_epoch"]
    return ra, rb


def test_a_killed_training_resumes_to_the_same_weights(bitexts, tmp_path):
    """Killed after its first epoch's checkpoint, the same call goes on from it and ends with the weights
    of a training never killed (batches, dropout and the schedule drawn as if it had not stopped)."""
    _killed_and_resumed(tmp_path, "train_nmt(tr, dv, out, s)")


def test_bleu_and_chrf_are_sacrebleus():
    import sacrebleu
    from domainsift.nmt import score_translation
    hyp = ["the cat sat on the mat", "a dog barks", "hello world"]
    ref = ["the cat sat on a mat", "the dog barks loudly", "hello world"]
    got = score_translation(hyp, ref)
    assert got["bleu"] == round(sacrebleu.corpus_bleu(hyp, [ref]).score, 4)
    assert got["chrf"] == round(sacrebleu.corpus_chrf(hyp, [ref]).score, 4)
    assert "tok:13a" in got["signature"]["bleu"] and score_translation(ref, ref)["bleu"] == 100.0


def test_the_cli_trains_scores_its_test_set_and_translates(bitexts, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from domainsift.nmt import trainer
    monkeypatch.setitem(trainer.PRESETS, "proxy", {"arch": TINY, "vocab": 60, "lr": 5e-3, "warmup": 5,
                                                   "max_tokens": 300})
    rc, err, out = run_cli(["nmt", "train", "--train", bitexts["train.a"], bitexts["train.b"], "--dev",
                            bitexts["dev.a"], bitexts["dev.b"], "--test", bitexts["test.a"], bitexts["test.b"],
                            "--epochs", "2", "--beam", "2", "--out", "m"], capsys)
    assert rc == 0, err
    rec = json.loads((tmp_path / "m" / "nmt.json").read_text())
    assert rec["test"]["n"] == 12 and 0 <= rec["test"]["bleu"] <= 100 and "test: BLEU" in out
    inp = write_lines(tmp_path / "in.txt", ["dose tablet", "", "click file"])
    rc, err, out = run_cli(["nmt", "translate", "--model", "m", "--input", inp, "--out", "hyp.txt", "--beam", "1"],
                           capsys)
    assert rc == 0, err
    hyp = (tmp_path / "hyp.txt").read_text().split("\n")
    assert len(hyp) == 4 and hyp[1] == "" and hyp[3] == ""  # three lines, the empty one kept in its place
    ref = write_lines(tmp_path / "ref.txt", ["esod telbat", "", "kcilc elif"])
    rc, err, out = run_cli(["nmt", "score", "--hyp", "hyp.txt", "--ref", ref, "--out", "s.json"], capsys)
    assert rc == 0 and "BLEU" in out and json.loads((tmp_path / "s.json").read_text())["n"] == 3, err


def test_bad_input_is_one_line_and_nothing_is_written(bitexts, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    short = write_lines(tmp_path / "short.b", _pairs(40, 1)[1][:-1])
    gap = _pairs(40, 1)[1]
    gap[7] = ""
    holed = write_lines(tmp_path / "holed.b", gap)
    leak = write_lines(tmp_path / "leak.a", _pairs(40, 1)[0][:12])
    leak_b = write_lines(tmp_path / "leak.b", _pairs(40, 1)[1][:12])
    base = ["nmt", "train", "--dev", bitexts["dev.a"], bitexts["dev.b"], "--out", "m"]
    for extra, msg in (
            (["--train", bitexts["train.a"], short], "aligned files differ in length"),
            (["--train", bitexts["train.a"], holed], "holed.b:8: an empty line"),
            (["--train", bitexts["train.a"], bitexts["train.b"], "--test", leak, leak_b],
             "repeats a sentence of the training data"),
            (["--train", bitexts["train.a"], bitexts["train.b"], "--init-from", str(tmp_path)],
             "not a model folder")):
        rc, err, _ = run_cli([*base, *extra], capsys)
        assert rc == 2 and msg in err and err.count("\n") == 0, (extra, err)
        assert not (tmp_path / "m").exists()
    rc, err, _ = run_cli(["nmt", "translate", "--model", str(tmp_path), "--input", bitexts["dev.a"], "--out", "h.txt"],
                         capsys)
    assert rc == 2 and "not a model folder" in err and not (tmp_path / "h.txt").exists()
    rc, err, _ = run_cli(["nmt", "score", "--hyp", bitexts["dev.a"], "--ref", short], capsys)
    assert rc == 2 and "references" in err and err.count("\n") == 0


def test_ctranslate2_runs_the_same_model(bitexts, tmp_path, capsys, monkeypatch):
    """Converted without quantization, CTranslate2 gives generate's greedy translations the log-probabilities
    the model itself gives them (the weights, the positions and the decoder's start token carried over); the
    int8 model translates from the CLI."""
    ct2 = pytest.importorskip("ctranslate2")
    import torch

    from domainsift.nmt import load_nmt, read_bitext, train_nmt, translate
    from domainsift.nmt.ct2 import converted
    from domainsift.nmt.trainer import EOS, PAD, encode
    train, dev = read_bitext(bitexts["train.a"], bitexts["train.b"]), read_bitext(bitexts["dev.a"], bitexts["dev.b"])
    train_nmt(train, dev, tmp_path / "m", _settings(epochs=2, patience=2, arch={**TINY, "dropout": 0.0}))
    nmt = load_nmt(tmp_path / "m")
    sents = list(dev.src[:5])
    hyps = translate(nmt, sents, beam=1)
    src = encode(nmt.vocab, sents)
    tgt = [ids for ids in encode(nmt.vocab, hyps)]
    translator = ct2.Translator(str(converted(nmt, "float32")), device="cpu")
    pieces = [[nmt.vocab.id_to_piece(i) for i in x] for x in src]
    scored = translator.score_batch(pieces, [[nmt.vocab.id_to_piece(i) for i in y[:-1]] for y in tgt])
    with torch.no_grad():
        for s, t, res in zip(src, tgt, scored):
            dec = torch.tensor([[PAD] + t[:-1]])
            logits = nmt.model(input_ids=torch.tensor([s]), decoder_input_ids=dec).logits[0]
            own = torch.log_softmax(logits, -1)[torch.arange(len(t)), torch.tensor(t)]
            assert t[-1] == EOS and len(res.log_probs) == len(t)
            np.testing.assert_allclose(res.log_probs, own.numpy(), atol=2e-3)
    monkeypatch.chdir(tmp_path)
    rc, err, out = run_cli(["nmt", "translate", "--model", "m", "--input", str(bitexts["test.a"]), "--out", "t.txt",
                            "--backend", "ctranslate2", "--beam", "2"], capsys)
    assert rc == 0, err
    assert len((tmp_path / "t.txt").read_text().splitlines()) == 12 and (tmp_path / "m" / "ct2-int8" / "model.bin").is_file()


def _sampling_inputs(bitexts):
    from domainsift.nmt import read_bitext
    train, dev = read_bitext(bitexts["train.a"], bitexts["train.b"]), read_bitext(bitexts["dev.a"], bitexts["dev.b"])
    labels = ["med"] * 40 + ["law"] * 40 + ["it"] * 40  # _pairs: 40 of each domain, in this order
    devs = {d: dev.take(range(6 * i, 6 * i + 6)) for i, d in enumerate(("med", "law", "it"))}
    return train, dev, labels, devs


def test_a_sampled_training_draws_its_batches_by_the_policy(bitexts, tmp_path):
    """Paper 004's sampling drives the batches: Mixed-alpha's fixed weights (alpha 0 uniform over the domains,
    1 their shares), MDAC's weights updated every update_every batches from the dev loss of the target; the
    weights' history is in nmt.json and the policy in the signature."""
    from domainsift.nmt import train_nmt
    from domainsift.nmt.sampled import Sampling
    from domainsift.sampling import MDAC, MixedAlpha
    train, dev, labels, devs = _sampling_inputs(bitexts)
    two = ["a"] * 80 + ["b"] * 40
    for alpha, want in ((0.0, [0.5, 0.5]), (1.0, [2 / 3, 1 / 3])):
        rec = train_nmt(train, dev, tmp_path / f"mixed{alpha}", _settings(epochs=1, patience=1),
                        sampling=Sampling(two, MixedAlpha(alpha), batch_size=8))
        np.testing.assert_allclose(rec["sampling"]["history"][0]["weights"], want)
        assert rec["sampling"]["policy"] == "mixed" and rec["sampling"]["domains"] == {"a": 80, "b": 40}
        assert rec["sampling"]["names"] == ["a", "b"]
    policy = MDAC(k=2, iterations=5, lr_data=0.05)
    rec = train_nmt(train, dev, tmp_path / "mdac", _settings(epochs=2, patience=2),
                    sampling=Sampling(labels, policy, batch_size=8, update_every=5, dev=devs, target={"med": 1.0}))
    history = rec["sampling"]["history"]
    assert [h["batch"] for h in history if h["reason"] == "mdac"] == [5, 10, 15, 20, 25, 30]  # 15 batches an epoch
    assert history[-1]["weights"] != history[0]["weights"] and rec["epochs_run"] == 2
    assert "sampling_policy:mdac" in rec["signature"] and not hasattr(policy, "sampler")  # the caller's policy untouched


def test_a_killed_sampled_training_resumes_to_the_same_weights_and_mixture(bitexts, tmp_path):
    call = """from domainsift.nmt.sampled import Sampling
from domainsift.sampling import MDAC
labels = ["med"] * 40 + ["law"] * 40 + ["it"] * 40
devs = {d: dv.take(range(6 * i, 6 * i + 6)) for i, d in enumerate(("med", "law", "it"))}
train_nmt(tr, dv, out, s, sampling=Sampling(labels, MDAC(k=2, iterations=5, lr_data=0.05), batch_size=8,
                                            update_every=5, dev=devs))"""
    ra, rb = _killed_and_resumed(tmp_path, call)
    assert ra["sampling"]["history"] == rb["sampling"]["history"] and len(ra["sampling"]["history"]) == 10


def test_sampling_refusals(bitexts, tmp_path):
    from domainsift._internal.errors import DomainsiftError
    from domainsift.nmt import train_nmt
    from domainsift.nmt.sampled import Sampling
    from domainsift.sampling import DDS
    train, dev, labels, devs = _sampling_inputs(bitexts)
    for sampling, message in ((Sampling(labels[:-1]), "119 domain labels for 120 training pairs"),
                              (Sampling(labels, DDS()), "the dds policy learns from dev bitexts"),
                              (Sampling(labels, batch_size=0), "batch_size must be a positive integer")):
        with pytest.raises(DomainsiftError, match=message):
            train_nmt(train, dev, tmp_path / "m", _settings(), sampling=sampling)
        assert not (tmp_path / "m").exists()
