"""The HTML report: what it holds, that it is self-contained, and that it works in a real browser.

The browser test drives Debian's headless Chromium through its chromedriver (selenium). `.ci/run`
installs both and sets DOMAINSIFT_REQUIRE_BROWSER=1, so in CI a missing browser fails the test
instead of skipping it."""

import json
import os
import re
import shutil

import pytest

from domainsift.cli import main


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "demo"
    assert main(["-q", "demo", "--out", str(out)]) == 0
    return out


def test_demo_ends_with_a_self_contained_report(demo, capsys):
    page = (demo / "report.html").read_text(encoding="utf-8")
    assert len(page.encode()) < 3_000_000
    assert not re.search(r"""<script[^>]+src=["']?https?:""", page)  # no CDN: every script is inline
    assert "cdn.bokeh.org" not in page and "<link" not in page
    for part in ("Purity", "Outliers", "sentence map", "just above the cut", "precision", "signature"):
        assert part in page, part
    with pytest.raises(SystemExit):
        main(["report", str(demo / "cluster")])  # --out is required


def test_report_cli_and_errors(demo, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["-q", "report", str(demo / "select" / "cosine"), "--out", str(out)]) == 0
    assert "just below the cut" in out.read_text()
    assert main(["-q", "report", str(tmp_path), "--out", str(tmp_path / "x.html")]) == 2
    assert main(["-q", "report", str(demo / "cluster"), "--out", str(tmp_path / "x.txt")]) == 2
    err = capsys.readouterr().err
    assert "holds no domainsift results" in err and "name it *.html" in err


def test_large_maps_show_a_seeded_sample():
    import numpy as np
    from domainsift.pipeline.cluster import sentence_map
    x = np.random.default_rng(0).standard_normal((5000, 8))
    m = sentence_map(x, [f"s{i}" for i in range(5000)], ["a"] * 5000, [0] * 5000, max_points=300)
    assert m["n_shown"] == 300 == len(m["x"]) and m["n_total"] == 5000
    assert m == sentence_map(x, [f"s{i}" for i in range(5000)], ["a"] * 5000, [0] * 5000, max_points=300)


def _driver():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        if os.environ.get("DOMAINSIFT_REQUIRE_BROWSER"):
            pytest.fail("Chromium and chromedriver are required (apt-get install chromium chromium-driver)")
        pytest.skip("no Chromium here; .ci/run installs it")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1200,1600"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=opts)


def test_the_report_works_in_chromium(demo, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    drv = _driver()
    try:
        drv.get((demo / "report.html").resolve().as_uri())
        WebDriverWait(drv, 30).until(lambda d: d.execute_script(
            "return window.Bokeh !== undefined && Bokeh.documents.length > 0"))
        errors = [e for e in drv.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == [], errors
        m = json.loads((demo / "cluster" / "map.json").read_text())
        n_points = drv.execute_script(
            "return Bokeh.documents[0].get_model_by_name('map-source-r0').data['x'].length")
        assert n_points == m["n_shown"] == 160  # the demo clusters all 160 sentences
        colour = "return Array.from(Bokeh.documents[0].get_model_by_name('map-source-r0').data['colour'])"
        before = drv.execute_script(colour)
        assert len(set(before)) == 5  # five gold domains
        # the colour switch, as a user would flip it: the Select widget's value, then its callback
        drv.execute_script("Bokeh.documents[0].get_model_by_name('colour-r0').value = 'cluster'")
        after = drv.execute_script(colour)
        clusters = drv.execute_script(
            "return Array.from(Bokeh.documents[0].get_model_by_name('map-source-r0').data['colour_cluster'])")
        assert after == clusters and after != before
        # the map is drawn: a canvas of real size inside the page
        canvases = drv.find_elements(By.CSS_SELECTOR, "div.bk-Figure, div[class*='bk-Figure']") or \
            drv.execute_script("return document.querySelectorAll('div').length")
        assert canvases
        drv.save_screenshot(str(tmp_path / "report.png"))
        assert (tmp_path / "report.png").stat().st_size > 10_000
        assert [e for e in drv.get_log("browser") if e["level"] == "SEVERE"] == []
    finally:
        drv.quit()


def test_report_renders_downstream_and_crossdomain(demo, tmp_path):
    from domainsift.jobs.demo import demo_files
    from domainsift.jobs.downstream import cross_domain, run_downstream
    files = demo_files()
    run_downstream([str(demo / "select" / "cosine")], files[0], [("all", files[1])], order=2, out_dir=tmp_path / "ds")
    cross_domain([("medical", files[0]), ("legal", files[1])], [("medical", files[0]), ("legal", files[1])],
                 order=2, out_dir=tmp_path / "cd", plot=False)
    assert main(["-q", "report", str(tmp_path / "ds"), str(tmp_path / "cd"), "--out", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert "Downstream: 2-gram LM perplexity" in page and "perplexity: LM of (row)" in page


def test_a_runs_warnings_are_in_its_section(tmp_path):
    """What a run warned about before its fit (run.json's warnings: here the surface check's) heads its
    section of the report."""
    words = "the patient dose tablet file menu open save window court article member state".split()
    lines = [" ".join(words[(i * 7 + k) % len(words)] for k in range(6)) for i in range(200)]
    (tmp_path / "in.txt").write_text("".join(t + "\n" for t in lines[:60]), encoding="utf-8")
    (tmp_path / "pool.txt").write_text("".join(f"{i}: {t}\n" for i, t in enumerate(lines)), encoding="utf-8")
    run = tmp_path / "run"
    assert main(["-q", "select", "--method", "cosine", "--model", "tfidf", "--in-domain", str(tmp_path / "in.txt"),
                 "--pool", str(tmp_path / "pool.txt"), "--top", "10", "--out", str(run)]) == 0
    assert len(json.loads((run / "run.json").read_text())["warnings"]) == 1
    assert main(["-q", "report", str(run), "--out", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.count("<p class='warning'>warning: a leading line number or ID") == 1
