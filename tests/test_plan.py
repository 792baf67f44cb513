"""`score`/`select --plan` (issue 50, item 1): what a run will do and cost, before it runs; nothing is written
but the calibration. How close the estimate comes is a benchmark (bench/live/plan.py), not a test."""

import json
import os
from pathlib import Path

from conftest import cli_data, run_cli


def test_plan_prints_the_stages_and_writes_no_run(tmp_path, monkeypatch, tiny_models, capsys):
    data = cli_data(tmp_path, monkeypatch)
    argv = ["select", "--method", "finetune", "--model", tiny_models["bert"], "--epochs", "2", "--in-domain",
            data["in"], "--pool", data["med"], data["law"], "--top", "5", "--out", "run", "--plan"]
    rc, err, out = run_cli(argv, capsys)
    assert rc == 0, err
    assert "plan: finetune over 40 pool lines (6 in-domain), the pool read 3 times" in out
    assert "fine-tune (2 steps)" in out and "score 40 pool lines" in out and "estimated wall time" in out
    assert "calibrated now" in out
    assert not (tmp_path / "run").exists()
    cal = Path(os.environ["DOMAINSIFT_CACHE"]) / "calibration.json"
    entry = next(iter(json.loads(cal.read_text()).values()))
    assert all(entry[k] > 0 for k in ("encode", "load", "train_step", "student"))
    rc, _, out = run_cli([*argv[:-3], "--cascade", "--out", "run", "--plan"], capsys)
    assert rc == 0 and "calibrated earlier" in out and "the student scores 40 lines" in out
    assert "at least 10 candidates" in out
    assert "in-domain share" not in out
    rc, _, out = run_cli([*argv[:-5], "--fraction", "auto", "--out", "run", "--plan"], capsys)  # issue 49
    assert rc == 0 and "estimate the in-domain share (40 pool lines encoded)" in out


def test_plan_times_finetunes_lower_layers_apart(tmp_path, monkeypatch, tiny_models, capsys):
    """``--layers K`` is calibrated on the cut encoder, under its own key (its costs are not the whole
    encoder's)."""
    data = cli_data(tmp_path, monkeypatch)
    argv = ["select", "--method", "finetune", "--model", tiny_models["bert"], "--epochs", "2", "--in-domain",
            data["in"], "--pool", data["med"], data["law"], "--top", "5", "--out", "run", "--plan"]
    assert run_cli(argv, capsys)[0] == 0
    rc, err, out = run_cli([*argv, "--layers", "1"], capsys)
    assert rc == 0 and "calibrated now" in out, err
    cal = json.loads((Path(os.environ["DOMAINSIFT_CACHE"]) / "calibration.json").read_text())
    assert len(cal) == 2 and sum(k.endswith("|layers:1") for k in cal) == 1
    assert all(v["encode"] > 0 and v["train_step"] > 0 for v in cal.values())


def test_plan_says_when_it_has_no_estimate(tmp_path, monkeypatch, capsys):
    data = cli_data(tmp_path, monkeypatch)
    rc, err, out = run_cli(["score", "--method", "moore-lewis", "--in-domain", data["in"], "--pool", data["med"],
                            "--plan"], capsys)
    assert rc == 0, err
    assert "no time estimate" in out and "moore-lewis" in out
    rc, err, _ = run_cli(["score", "--method", "moore-lewis", "--in-domain", data["in"], "--pool", data["med"]], capsys)
    assert rc == 2 and "--out is required" in err


def test_a_mixtures_target_that_comes_fitted_is_not_charged_a_fit():
    """A finetune target whose head the mixture's shared fit trained costs its scoring only."""
    from domainsift.pipeline.plan import estimate
    costs = {"load": 1.0, "encode": 0.01, "train_step": 0.5, "export": 2.0, "student": 1e-5}
    alone = estimate("finetune", {"epochs": 10}, 1000, 100, costs, 100, False)
    shared = estimate("finetune", {"epochs": 10}, 1000, 100, costs, 100, False, fitted=True)
    assert any(k.startswith("fine-tune (") for k in alone["parts"])
    assert not any(k.startswith("fine-tune") or k.startswith("export") for k in shared["parts"])
    assert shared["parts"]["score 1,000 pool lines"] == alone["parts"]["score 1,000 pool lines"] == 10.0
    assert shared["seconds"] == 11.0


def test_a_damaged_calibration_is_measured_again(tmp_path, monkeypatch, tiny_models, capsys):
    """A calibration.json that is not a JSON object, or holds negative or non-number seconds, costs a new
    measurement, never a traceback or a negative time."""
    data = cli_data(tmp_path, monkeypatch)
    argv = ["select", "--method", "cosine", "--model", tiny_models["bert"], "--in-domain", data["in"], "--pool",
            data["med"], data["law"], "--top", "5", "--plan"]
    cal = Path(os.environ["DOMAINSIFT_CACHE"]) / "calibration.json"
    assert run_cli(argv, capsys)[0] == 0
    good = json.loads(cal.read_text())
    key = next(k for k in good if "|cosine|" in k)
    for damaged in ([1, 2], {key: {**good[key], "encode": -5.0}}, {key: {**good[key], "load": "x"}}, {key: 3}):
        cal.write_text(json.dumps(damaged))
        rc, err, out = run_cli(argv, capsys)
        assert rc == 0 and "calibrated now" in out and "-" not in out.split("estimated wall time")[-1][:20], (damaged, err)
        assert json.loads(cal.read_text())[key]["encode"] > 0
