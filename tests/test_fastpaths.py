"""The student's fast paths (issue 48): BERT token ids from a cache of space-separated chunks, and plain
text pools read a block of bytes at a time. Each gives exactly what the line-by-line path gives."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

ODD = ["ΟΔΟΣ ΑΒ", "ΟΔΟΣ", "a\x1cb c", "naïve  café\tx", "中文 字符mixed", "x\u00a0y z", "e\u0301 e \u0301a", " lead",
       "trail ", "a" * 300 + " b", "don't stop!!! (ok)", "", "   ", "\u200bzero width", "\ufffd bad \x00 nul",
       "İstanbul ǅ ß", "[SEP] [CLS]x", "1234567: numbers, 3.14 and 10,000", "tab\tin\tside", "emoji 😀 here"]


def bert_tokenizer(texts):
    """A small WordPiece tokenizer with BERT's normalizer and pre-tokenizer, trained on ``texts``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=20))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=300, special_tokens=["[UNK]", "[SEP]", "[CLS]"]))
    return tok


def lines(seed, n=400):
    rng = np.random.default_rng(seed)
    words = ["the", "patient", "Dosierung", "café", "naïve", "KDE", "window", "3.5mg", "(see", "annex)", "x", "-",
             "über", "中文", "ΟΔΟΣ", "don't", "a" * 30, "", "\t"]
    return [" ".join(rng.choice(words, size=rng.integers(1, 25))) for _ in range(n)] + ODD


def embedder(tok, max_tokens=512):
    from domainsift.embed.static import StaticEmbedder
    vectors = np.random.default_rng(0).normal(size=(tok.get_vocab_size(), 8)).astype(np.float32)
    return StaticEmbedder(vectors, tok, "tiny-bert", None, max_tokens=max_tokens)


@pytest.mark.parametrize("limit,join,max_tokens", [(1 << 19, 1024, 512), (40, 3, 512), (1 << 19, 7, 6)])
def test_chunk_cache_gives_the_tokenizers_ids(monkeypatch, limit, join, max_tokens):
    """Every line, odd ones included (accents, CJK, Greek final sigma, control characters, double spaces,
    added tokens in the text, over-long words), gets the ids the tokenizer gives it whole; with a cache
    that must start again (limit), chunks joined a few at a time, and lines cut at max_tokens."""
    from domainsift.embed import static
    monkeypatch.setattr(static, "JOIN", join)
    texts = lines(0)
    emb = embedder(bert_tokenizer(texts), max_tokens)
    assert static.splits_at_spaces(emb.tokenizer)
    cache = static.ChunkCache(emb.tokenizer, max_tokens, limit=limit)
    for batch in (texts[:150], texts[150:], lines(1), texts):  # later batches find chunks cached
        flat, counts = cache.token_ids(batch)
        want_flat, want_counts = emb.tokenize(batch)
        assert counts.tolist() == want_counts.tolist()
        assert flat.tolist() == want_flat.tolist()
    if max_tokens == 6:
        assert want_counts.max() == 6


def test_chunk_cache_on_minilms_tokenizer():
    """The default encoder's own tokenizer (the student's in every default run)."""
    from domainsift.embed import model_path
    from domainsift.embed.static import ChunkCache, StaticEmbedder, splits_at_spaces
    from tokenizers import Tokenizer
    import os
    path = model_path("minilm")
    tok = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
    assert splits_at_spaces(tok)
    emb = StaticEmbedder(np.zeros((tok.get_vocab_size(), 2), np.float32), tok, "minilm", None, 512)
    texts = lines(2) + [" ".join(["lang"] * 600)]
    flat, counts = ChunkCache(emb.tokenizer, 512).token_ids(texts)
    want_flat, want_counts = emb.tokenize(texts)
    assert counts.tolist() == want_counts.tolist() and counts.max() == 512
    assert flat.tolist() == want_flat.tolist()


def test_tokenizers_that_mark_spaces_are_tokenized_whole(tiny_models):
    """Byte-level BPE and word-level tokenizers keep the line-by-line path."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from domainsift.embed.static import splits_at_spaces
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    assert not splits_at_spaces(bpe)
    word = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    word.pre_tokenizer = pre_tokenizers.Whitespace()
    assert not splits_at_spaces(word)


def test_student_scores_through_the_cache_equal_the_tokenizers(monkeypatch):
    """A student's scores (mean token weights) and static vectors by the chunk cache equal, to 1e-9, those
    from the tokenizer line by line."""
    from domainsift.select.student import Student
    texts = lines(3)
    emb = embedder(bert_tokenizer(texts))
    st = Student(emb)
    x = st.featurize(texts[:200])
    st.fit_head(x[:50], x[50:], np.arange(150, dtype=float), share=0.2, seed=0)
    fast, vec_fast = st.score(texts), emb.encode(texts, dtype=np.float64)
    emb._chunks = False  # the tokenizer, line by line
    slow, vec_slow = st.score(texts), emb.encode(texts, dtype=np.float64)
    assert np.allclose(fast, slow, rtol=0, atol=1e-9) and np.allclose(vec_fast, vec_slow, rtol=0, atol=1e-9)


# ------------------------------------------------------------------ plain text read in blocks
def _pool(tmp_path):
    a = tmp_path / "a.txt"
    a.write_bytes(b"hello world\r\n\n  spaced  \n\xc3\xbcber\nlast no newline")
    b = tmp_path / "b.txt"
    b.write_bytes("one\n\u2028sep\x1cx\n\n\n two \n".encode())
    g = tmp_path / "c.txt.gz"
    with gzip.open(g, "wb") as fh:
        fh.write(b"g1\ng2\n")
    return [str(a), str(b), str(g)]


@pytest.mark.parametrize("block", [1, 3, 7, 1 << 22])
def test_blocks_give_the_records_of_the_line_by_line_reader(tmp_path, monkeypatch, block):
    """Records, shards (with finished shards read past), taken positions with their bytes, and a scan's
    count, fingerprints and seeded sample are those of the line-by-line reader, at any block size."""
    from domainsift.io import corpus
    from domainsift.io.source import PoolSource
    src = PoolSource.open(_pool(tmp_path))
    items = list(src._items(raw=True))  # the line-by-line reader
    want = [(k, line, text, target) for k, line, text, target, _, _ in items]
    monkeypatch.setattr(corpus, "TEXT_BLOCK", block)
    assert list(src.records()) == want
    for size in (1, 2, 3, 100):
        for done in (set(), {0}, {1, 2}):
            got = [(s, c.texts, c.ids, f.tolist(), l.tolist()) for s, c, f, l in src.shards(size, done)]
            expect = {}
            for pos, (k, line, text, _) in enumerate(want):
                expect.setdefault(pos // size, []).append((k, line, text))
            assert got == [(s, [t for _, _, t in rs], [(src.files[k], n) for k, n, _ in rs], [k for k, _, _ in rs],
                            [n for _, n, _ in rs]) for s, rs in sorted(expect.items()) if s not in done]
    positions = np.array([0, 2, 4, 6, 8])
    corpus_, kept = src.take(positions, raw=True)
    assert corpus_.texts == [want[p][2] for p in positions if p < len(want)]
    assert kept == {(src.files[items[p][0]], items[p][1]): (items[p][4], None) for p in positions if p < len(want)}
    scan = src.scan({"s": (3, 0)})
    assert scan.n == len(want) == 9
    from domainsift.io.source import Reservoir
    box = Reservoir(3, 0)
    for pos, r in enumerate(want):
        box.offer(pos, r)
    assert scan.samples["s"].texts == [t for _, _, t, _ in box.result()]
    from domainsift.io.corpus import file_digest
    assert scan.fingerprints[src.files[0]]["sha256"] == file_digest(src.files[0])["sha256"]


def test_kept_lines_hold_what_a_dict_would():
    """A cascade's kept bytes: one buffer a side, looked up by (file, line) as the dict they replace
    (empty lines, a side without bytes, a file renamed, a line never kept)."""
    from domainsift.io.source import KeptLines
    want = {("a", 1): (b"x\n", b"X\n"), ("a", 7): (b"", None), ("b", 2): (None, None), ("b", 40): (b"yy", b"")}
    kept = KeptLines(["a", "b", "c"])
    for (f, line), (raw, other) in want.items():
        kept.add(["a", "b", "c"].index(f), line, raw, other)
    assert kept == want and len(kept) == 4 and list(kept) == list(want)
    assert kept.get(("a", 2)) is None and kept.get(("c", 1)) is None and kept.get(("z", 1)) is None
    moved = kept.renamed({"a": "/abs/a"})
    assert moved[("/abs/a", 7)] == (b"", None) and ("a", 7) not in moved and kept[("a", 7)] == (b"", None)
    kept.add(0, 3, b"late", None)  # before ("a", 7): not pool order
    with pytest.raises(ValueError, match="pool order"):
        kept[("a", 1)]


def test_blocks_name_the_line_of_invalid_utf8(tmp_path, monkeypatch):
    from domainsift.io import corpus
    from domainsift.io.corpus import InputError
    from domainsift.io.source import PoolSource
    p = tmp_path / "bad.txt"
    p.write_bytes(b"ok\nfine\nbad \xff byte\nafter\n")
    monkeypatch.setattr(corpus, "TEXT_BLOCK", 1 << 20)
    with pytest.raises(InputError, match=r"bad.txt:3: invalid UTF-8 \(byte 4: b'\\xff'\)"):
        list(PoolSource.open([str(p)]).records())
    (tmp_path / "empty.txt").write_bytes(b"")
    with pytest.raises(InputError, match="empty.txt: empty file"):
        list(PoolSource.open([str(tmp_path / "empty.txt")]).records())


def test_reservoir_offered_in_blocks_keeps_the_same_sample():
    from domainsift.io.source import Reservoir
    rng = np.random.default_rng(0)
    for _ in range(200):
        n, k, seed = int(rng.integers(0, 3000)), int(rng.integers(1, 50)), int(rng.integers(0, 9))
        one = Reservoir(k, seed)
        for pos in range(n):
            one.offer(pos, pos)
        blocks, pos = Reservoir(k, seed), 0
        while pos < n:
            m = min(int(rng.integers(1, 200)), n - pos)
            blocks.offer_block(pos, m, lambda i, s=pos: s + i)
            pos += m
        assert one.result() == blocks.result()


# ------------------------------------------------------------------ the student's shards in processes
def test_student_shards_in_processes_give_the_bytes_of_one_process_and_resume(tmp_path, monkeypatch, tiny_models):
    """--processes 2 (forked processes score the student's shards, this one writes them) gives the bytes of
    --processes 1, and a run killed after a shard's files are written resumes to the same bytes."""
    from conftest import make_sentences, run_killed, write_lines
    from domainsift.cli import main
    monkeypatch.chdir(tmp_path)
    pool = write_lines(tmp_path / "pool.txt", make_sentences("med", 60, 1) + make_sentences("law", 60, 2))
    ind = write_lines(tmp_path / "in.txt", make_sentences("med", 8, 3))
    argv = ["select", "--method", "student", "--teacher", "cosine", "--model", tiny_models["bert"], "--cache",
            str(tmp_path / "cache"), "--in-domain", ind, "--pool", pool, "--top", "30", "--shard-size", "7"]

    def outputs(name):
        return {p.name: p.read_bytes().replace(str(tmp_path / name).encode(), b"OUT").replace(f'"{name}/'.encode(), b'"OUT/')
                for p in (tmp_path / name).iterdir() if p.is_file() and p.name != "run.json"}

    assert main(["-q", *map(str, argv), "--processes", "1", "--out", "one"]) == 0
    assert main(["-q", *map(str, argv), "--processes", "2", "--out", "two"]) == 0
    assert outputs("one") == outputs("two")
    killed = [*argv, "--processes", "2", "--out", "run"]
    run_killed(killed, "domainsift.engine.shards:write_shard", 5, tmp_path)
    assert main(["-q", *map(str, killed)]) == 0
    assert outputs("run") == outputs("one")


def test_processes_flag_refuses_zero(capsys):
    from domainsift.cli import main
    with pytest.raises(SystemExit):
        main(["score", "--method", "random", "--processes", "0", "--in-domain", "x", "--pool", "y", "--out", "z"])
    assert "--processes" in capsys.readouterr().err


# ------------------------------------------------------------------ the student's hashed bigrams
def test_bigram_buckets_are_the_documented_hash():
    """A saved student's bigram table is read back through the same buckets: the pair as one 64-bit key,
    times 0x9E3779B97F4A7C15 modulo 2^64, its top bits (computed here with Python's integers)."""
    from domainsift.select.student import BIGRAM_BUCKETS, bigram_slots
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 250_000, 500), rng.integers(0, 250_000, 500)
    a[:2], b[:2] = (0, 2**31 - 1), (2**31 - 1, 0)
    bits = BIGRAM_BUCKETS.bit_length() - 1
    want = [(((int(x) << 32 | int(y)) * 0x9E3779B97F4A7C15) % 2**64) >> (64 - bits) for x, y in zip(a, b)]
    assert bigram_slots(a, b).tolist() == want
    assert len(set(want)) > 490  # spread over the table


def test_line_bigrams_stay_inside_their_lines():
    from domainsift.select.student import bigram_slots, line_bigrams
    flat = np.array([5, 6, 7, 8, 9, 10])
    counts = np.array([3, 0, 1, 2])  # lines: 5 6 7 | (empty) | 8 | 9 10
    line, slot = line_bigrams(flat, counts)
    assert line.tolist() == [0, 0, 3]
    assert slot.tolist() == bigram_slots(np.array([5, 6, 9]), np.array([6, 7, 10])).tolist()


def test_the_student_reads_word_order_through_its_bigrams():
    """In-domain lines and the teacher's top put words in one order, the rest of the sample in the other:
    the same tokens, so the same mean vector; the student still ranks every new line in the in-domain
    order first, by its bigram weights alone."""
    from domainsift.select.student import Student
    rng = np.random.default_rng(0)
    pairs = [("alpha", "beta"), ("gamma", "delta"), ("omega", "sigma"), ("kappa", "lambda")]
    fill = ["one", "two", "three", "four", "five", "six"]

    def make(order, n):
        out = []
        for _ in range(n):
            a, b = pairs[rng.integers(len(pairs))]
            words = list(rng.choice(fill, size=3)) + ([a, b] if order else [b, a])
            out.append(" ".join(words))
        return out

    inside, top, rest = make(True, 40), make(True, 60), make(False, 240)
    emb = embedder(bert_tokenizer(inside + top + rest))
    st = Student(emb)
    t = np.r_[np.ones(60), np.zeros(240)] + rng.random(300) * 0.1
    st.fit_head(st.featurize(inside), st.featurize(top + rest), t, share=0.2, seed=0)
    ordered = [f"three one {a} {b}" for a, b in pairs]
    swapped = [f"three one {b} {a}" for a, b in pairs]
    assert np.allclose(emb.encode(ordered), emb.encode(swapped))  # nothing for the mean vector to tell apart
    assert (st.score(ordered) > st.score(swapped)).all() and st.features == "static+bigrams"


def test_a_student_without_bigrams_scores_as_the_mean_of_its_token_weights():
    """A student saved before 0.23.0 (no bigram table) loads and scores as it did: its tokens' mean weight."""
    from domainsift.select.student import Student
    texts = lines(4)
    emb = embedder(bert_tokenizer(texts))
    st = Student(emb)
    x = st.featurize(texts[:200])
    st.fit_head(x[:50], x[50:], np.arange(150, dtype=float), share=0.2, seed=0)
    state = st.state()
    del state["bigrams"]
    old = Student.from_state(state, emb)
    u, b = old.token_weights()
    flat, counts = emb.token_ids(texts)
    assert old.features == "static"
    np.testing.assert_allclose(old.score(texts), emb.pool(u, flat, counts) + b, rtol=0, atol=1e-12)
    np.testing.assert_allclose(old.score(texts), old.score_features(emb.encode(texts, dtype=np.float64)),
                               rtol=1e-9, atol=1e-9)
