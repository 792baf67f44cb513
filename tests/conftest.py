"""Shared fixtures: small seeded corpora and tiny transformers models built from configs."""

from __future__ import annotations

import os
from pathlib import Path

if os.environ.get("PYTEST_XDIST_WORKER"):
    # ``make test`` runs one pytest-xdist worker per core: one thread per worker in every numeric library
    # (read when each is first imported, so before NumPy below; child processes inherit it), or two
    # workers' OpenMP threads would stall each other on a two-core machine
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# hermetic Ray: a run without --address follows Ray's convention (RAY_ADDRESS, else the cluster 'ray start'
# started last on this machine); the tests name their own local instance, whatever else runs here
os.environ["RAY_ADDRESS"] = "local"
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# a cache directory of this test run's own: nothing is written to ~/.cache (a test that passes its own
# --cache is unaffected); child processes inherit it
if "DOMAINSIFT_CACHE" not in os.environ or os.environ.get("DOMAINSIFT_TEST_OWN_CACHE"):
    import tempfile
    os.environ["DOMAINSIFT_CACHE"] = tempfile.mkdtemp(prefix="domainsift-test-cache-")
    os.environ["DOMAINSIFT_TEST_OWN_CACHE"] = "1"


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than a few seconds (CI runs every test; "
                                       "deselect locally with -m 'not slow')")
    config.addinivalue_line("markers", "gpu: runs its encoder on a CUDA GPU; skipped where none exists; "
                                       "every other test runs as on a CPU-only machine")
    config.addinivalue_line("markers", "ray: starts a Ray cluster on this machine; under pytest-xdist every such "
                                       "test runs in one worker, one cluster at a time")


def pytest_collection_modifyitems(config, items):
    """``make test`` runs the tests in pytest-xdist workers (``--dist loadgroup``): the tests that start
    a Ray cluster share one group, so that no two clusters start side by side on a two-core machine."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.get_closest_marker("ray"):
            item.add_marker(pytest.mark.xdist_group("ray"))


@pytest.fixture(autouse=True)
def _a_cpu_unless_the_test_asks_for_a_gpu(request, monkeypatch):
    """The tests state what the CPU backends do (onnx-int8 by default, a vector that depends on its
    sentence alone); on a machine with a CUDA GPU the device "auto" would pick the GPU and PyTorch. So
    every test but those marked ``gpu`` runs as on a CPU-only machine: "auto" resolves to the CPU in this
    process, and child processes (the CLI and kill/resume probes) start with no CUDA device visible. A test
    marked ``gpu`` is reported as skipped where no CUDA GPU exists."""
    if request.node.get_closest_marker("gpu"):
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("no CUDA GPU on this machine")
        return
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        # the CUDA runtime reads CUDA_VISIBLE_DEVICES once a process: let it read the machine's before the
        # variable below (meant for child processes) is set, so that a gpu test later still finds the GPU
        torch.cuda.is_available()
        import domainsift.embed.transformers as tr
        real = tr.resolve_device
        monkeypatch.setattr(tr, "resolve_device", lambda device: real("cpu" if device in (None, "auto") else device))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")


# Three easy synthetic "domains" with disjoint vocabularies.
WORDS = {
    "med": "dose tablet patient doctor blood liver kidney injection vaccine nausea treatment".split(),
    "law": "article regulation member state commission directive court treaty annex council".split(),
    "it": "click file folder server window menu download install button keyboard settings".split(),
}


def make_sentences(domain: str, n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = WORDS[domain]
    return [" ".join(rng.choice(words, size=int(rng.integers(5, 10)))) for _ in range(n)]


@pytest.fixture
def domain_files(tmp_path):
    """Three files of 30 lines each, one domain per file."""
    paths = []
    for i, d in enumerate(WORDS):
        p = tmp_path / f"{d}.txt"
        p.write_text("\n".join(make_sentences(d, 30, seed=i)) + "\n", encoding="utf-8")
        paths.append(p)
    return paths


FAMILIES = ["bert", "distilbert", "roberta", "gpt2", "xlnet"]


def write_lines(path: Path, lines, end="\n") -> Path:
    """A text file of ``lines`` (each ended by ``end``)."""
    path.write_text("".join(line + end for line in lines), encoding="utf-8")
    return path


def run_cli(argv, capsys) -> tuple[int, str, str]:
    """``domainsift -q ARGV`` in this process: exit code, stderr (stripped) and stdout."""
    from domainsift.cli import main
    try:
        rc = main(["-q", *map(str, argv)])
    except SystemExit as exc:
        rc = exc.code
    out = capsys.readouterr()
    return rc, out.err.strip(), out.out


# the kill/resume harness: the command runs in a child process that SIGKILLs itself at the k-th call of
# a chosen function (after it returns, or before it runs), as a crash or an OOM kill would
KILL_AT = r"""
import importlib, os, signal, sys
module, attr, k, when = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
mod = importlib.import_module(module)
real = getattr(mod, attr)
count = {"n": 0}
def hit():
    count["n"] += 1
    if count["n"] == k:
        os.kill(os.getpid(), signal.SIGKILL)
def wrapped(*a, **kw):
    if when == "before":
        hit()
    out = real(*a, **kw)
    if when == "after":
        hit()
    return out
setattr(mod, attr, wrapped)
from domainsift.cli import main
sys.exit(main(["-q"] + sys.argv[5:]))
"""


def run_killed(argv, target: str, k: int, cwd, when: str = "after"):
    """Run ``domainsift -q ARGV`` in a child process killed (SIGKILL) at the ``k``-th call of ``target``
    (``module:function``); returns the finished process, whose return code says it was killed."""
    import signal
    import subprocess
    import sys
    module, attr = target.split(":")
    proc = subprocess.run([sys.executable, "-c", KILL_AT, module, attr, str(k), when, *map(str, argv)], cwd=cwd,
                          capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    return proc


def cli_data(tmp_path: Path, monkeypatch) -> dict:
    """Two 20-line pool files (med, law) and a 6-line in-domain file in ``tmp_path``, the working
    directory (the CLI probes' small data)."""
    monkeypatch.chdir(tmp_path)
    return {"med": write_lines(tmp_path / "med.txt", make_sentences("med", 20, 1)),
            "law": write_lines(tmp_path / "law.txt", make_sentences("law", 20, 2)),
            "in": write_lines(tmp_path / "in.txt", make_sentences("med", 6, 3)), "tmp": tmp_path}


def _tiny_config(family: str, vocab_size: int, pad_id: int):
    import transformers as tf
    h = dict(vocab_size=vocab_size)
    if family == "bert":
        return tf.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                             intermediate_size=64, max_position_embeddings=64, pad_token_id=pad_id, **h)
    if family == "distilbert":
        return tf.DistilBertConfig(dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                                   max_position_embeddings=64, pad_token_id=pad_id, **h)
    if family == "roberta":
        return tf.RobertaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                intermediate_size=64, max_position_embeddings=80, pad_token_id=pad_id, **h)
    if family == "gpt2":
        return tf.GPT2Config(n_embd=32, n_layer=2, n_head=2, n_positions=64, **h)
    if family == "xlnet":
        return tf.XLNetConfig(d_model=32, n_layer=2, n_head=2, d_inner=64, pad_token_id=pad_id, **h)
    raise ValueError(family)


def build_tiny_model(family: str, out_dir: Path, seed: int = 0, for_classification: bool = False) -> str:
    """Save a randomly initialised tiny model of ``family`` plus a word-level tokenizer."""
    import torch
    import transformers as tf
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    corpus = [w for ws in WORDS.values() for w in ws] + "the a of and to in is".split()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<s>", "</s>"]
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator([" ".join(corpus)], trainers.WordLevelTrainer(special_tokens=specials))
    fast = tf.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                      cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
                                      bos_token="<s>", eos_token="</s>")
    if family == "gpt2":  # GPT-2 has no pad token of its own; the library must cope
        fast = tf.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="</s>",
                                          bos_token="<s>")
    torch.manual_seed(seed)
    config = _tiny_config(family, vocab_size=tok.get_vocab_size(), pad_id=0)
    model = (tf.AutoModelForSequenceClassification if for_classification else tf.AutoModel).from_config(config)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    fast.save_pretrained(out_dir)
    return str(out_dir)


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    base = tmp_path_factory.mktemp("tiny_models")
    return {fam: build_tiny_model(fam, base / fam) for fam in FAMILIES}


GERMAN = ("der die das und ist nicht mit auf für eine werden Patienten Behandlung Arzneimittel Dosis "
          "Nebenwirkungen sollte Ihr Arzt bei Ihnen wenn oder auch nach").split()


def german(n: int, seed: int) -> list[str]:
    """``n`` seeded lines of German words: a set that language identification takes as German."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(GERMAN, size=int(rng.integers(5, 10)))) for _ in range(n)]


def backwards(s: str) -> str:
    """Language B of the bilingual fixture: every word of language A written backwards."""
    return " ".join(w[::-1] for w in s.split())


@pytest.fixture(scope="session")
def bilingual(tmp_path_factory):
    """Language A and B (every word backwards) over the three domains: a tiny random BERT whose vocabulary
    holds both, an A-language in-domain set (med), a B-language pool (med, law, it: 30 lines each) and a
    450-pair bitext."""
    import torch
    import transformers as tf
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    t = tmp_path_factory.mktemp("xl")
    words = [w for ws in WORDS.values() for w in ws]
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator([" ".join(words + [w[::-1] for w in words])],
                            trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    fast = tf.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                      sep_token="[SEP]", mask_token="[MASK]")
    torch.manual_seed(0)
    model = tf.AutoModel.from_config(tf.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                                   intermediate_size=64, max_position_embeddings=64, pad_token_id=0,
                                                   vocab_size=tok.get_vocab_size()))
    model.save_pretrained(t / "model")
    fast.save_pretrained(t / "model")

    def write(name, lines):
        (t / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        return t / name

    bi = sum((make_sentences(d, 150, 10 + i) for i, d in enumerate(WORDS)), [])
    pool = [backwards(s) for s in make_sentences("med", 30, 2) + make_sentences("law", 30, 3)
            + make_sentences("it", 30, 4)]
    return {"model": str(t / "model"), "in": write("in.a", make_sentences("med", 40, 1)),
            "pool": write("pool.b", pool), "bi_a": write("bi.a", bi), "bi_b": write("bi.b", [backwards(s) for s in bi]),
            "dir": t}


# a Marian model of a few thousand weights, and its training settings: the translation floor's tests train in seconds
TINY_MARIAN = dict(d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                   decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, dropout=0.0)


def tiny_nmt_settings(**kw):
    from domainsift.nmt.trainer import TrainSettings
    return TrainSettings(**{"epochs": 2, "patience": 2, "vocab": 60, "arch": TINY_MARIAN, "lr": 5e-3, "warmup": 5,
                            "max_tokens": 300, **kw})


def nmt_bitext(domains, n, seed):
    """``n`` sentences of each of ``domains`` and their backwards twins, as a Bitext."""
    from domainsift.nmt.data import Bitext
    src = sum((make_sentences(d, n, seed + i) for i, d in enumerate(domains)), [])
    return Bitext.of(src, [backwards(s) for s in src])
