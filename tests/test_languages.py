"""The language coverage warning (issue 50, item 3): a set in a language the encoder was not trained on gets
one warning line naming the encoder's languages; a covered language gets none."""

import json

from conftest import run_cli, write_lines
from domainsift.languages import check_coverage, identify

CZECH = ["Tento léčivý přípravek se používá k léčbě vysokého krevního tlaku u dospělých.",
         "Před použitím si pečlivě přečtěte příbalovou informaci.",
         "Pokud zapomenete užít dávku, vezměte ji co nejdříve.",
         "Nejčastějšími nežádoucími účinky jsou bolest hlavy a nevolnost.",
         "Uchovávejte tento přípravek mimo dohled a dosah dětí.",
         "Lékař vám řekne, jak dlouho máte tablety užívat."]
FRENCH = ["Ce médicament est utilisé pour traiter l'hypertension artérielle chez l'adulte.",
          "Lisez attentivement la notice avant d'utiliser ce médicament.",
          "Si vous oubliez de prendre une dose, prenez-la dès que possible.",
          "Les effets indésirables les plus fréquents sont les maux de tête et les nausées.",
          "Tenir ce médicament hors de la vue et de la portée des enfants.",
          "Votre médecin vous dira combien de temps vous devez prendre les comprimés."]
ENGLISH = ["This medicine is used to treat high blood pressure in adults.",
           "Read the package leaflet carefully before using this medicine.",
           "If you forget to take a dose, take it as soon as you remember.",
           "The most common side effects are headache and nausea.",
           "Keep this medicine out of the sight and reach of children.",
           "Your doctor will tell you how long to take the tablets."]


def test_identify_finds_the_majority_language():
    assert identify(CZECH)[0] == "cs" and identify(FRENCH)[0] == "fr" and identify(ENGLISH)[0] == "en"
    assert identify(["", "  "]) is None


def test_the_multilingual_encoder_warns_for_czech_and_not_for_french():
    warned = check_coverage("multilingual", {"the in-domain set": CZECH})
    assert len(warned) == 1 and "Czech" in warned[0] and "French" in warned[0] and "\n" not in warned[0]
    assert check_coverage("multilingual", {"the in-domain set": FRENCH, "the pool": ENGLISH}) == []


def test_minilm_warns_for_anything_but_english_and_a_model_of_ones_own_is_not_checked(tmp_path):
    assert len(check_coverage("minilm", {"the in-domain set": FRENCH})) == 1
    assert check_coverage("minilm", {"the in-domain set": ENGLISH}) == []
    assert check_coverage(str(tmp_path / "my-model"), {"the in-domain set": CZECH}) == []  # languages unknown


def test_a_run_says_so_before_it_fits_and_records_it(tmp_path, monkeypatch, capsys, caplog):
    monkeypatch.chdir(tmp_path)
    ind = write_lines(tmp_path / "in.cs", CZECH)
    pool = write_lines(tmp_path / "pool.en", ENGLISH * 4)
    rc, err, _ = run_cli(["select", "--method", "cosine", "--model", "minilm", "--in-domain", ind, "--pool", pool,
                          "--top", "3", "--out", "run"], capsys)
    assert rc == 0, err
    assert "the in-domain set looks Czech" in caplog.text and "the pool" not in caplog.text.split("Czech")[-1]
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    czech = [w for w in run["warnings"] if "Czech" in w]
    assert len(czech) == 1 and run["warnings"][0] == czech[0]
    # besides: six lines are fewer than cosine was measured to need (domainsift.advice.few_lines)
    assert all(w in czech or "has 6 lines: cosine measured" in w for w in run["warnings"])
