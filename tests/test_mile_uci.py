"""MILE's UCI benchmark (``bench/reproduce/mile_uci.py``) at a tiny scale: the true predictive of the generated
Friedman #1 data bounds the models, a user's file runs through the command, bad input is refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sgbench import targets
from sgbench.bench.cli import main
from sgbench.bench.reproduce import mile_uci
from sgbench.targets.datasets import bundled


def test_the_true_predictive_of_friedman1_is_the_best_one():
    # on 200 test points the true N(f(x), 1) has LPPD about 0.2 and RMSE about 0.2 (standardised labels: the
    # noise sd 1 over a label scale of 5); the DE start after no training (the network's random initialisation)
    # is far below
    target = targets.get("bnn", noise="none", dataset="friedman1")
    truth = mile_uci.true_predictive_metrics(target)
    assert 0.1 < truth["lppd"] < 0.3 and 0.17 < truth["rmse"] < 0.23 and truth["calibration"] < 0.1
    untrained = mile_uci.predictive_metrics(target, target.initial_position()[None])
    assert untrained["lppd"] < truth["lppd"] - 1 and untrained["rmse"] > truth["rmse"]
    assert all(np.isnan(v) for v in mile_uci.predictive_metrics(target, np.zeros((0, target.dim))).values())


def test_a_users_file_runs_through_the_command(tmp_path, capsys, monkeypatch):
    features, labels = bundled("friedman1")
    path = tmp_path / "uci.csv"
    pd.DataFrame(features[:150], columns=[f"x{i}" for i in range(10)]).assign(y=labels[:150]).to_csv(path,
                                                                                                    index=False)
    monkeypatch.setitem(mile_uci.SCALES, "quick", {"phases": (100, 20, 20), "sampling": 40, "splits": 1})
    status = main(["reproduce", "mile-uci", "--dataset-file", str(path), "--splits", "2", "--out", str(tmp_path),
                   "--db", str(tmp_path / "r.sqlite"), "--no-progress"])
    out = capsys.readouterr().out
    assert "MILE's hold-out LPPD above the DE's on every data set" in out and status == (
        1 if "\nFAILED: " in out else 0), out
    page = (tmp_path / "mile_uci.html").read_text()
    assert "Tables 3 and 10 (its data sets, for reference)" in page and "data:image/png;base64" in page
    assert str(path) in page


@pytest.mark.parametrize("argv, message", [
    (["--splits", "0"], "--splits must be an integer >= 1"),
    (["--dataset-file", "/nonexistent/uci.csv"], "/nonexistent/uci.csv"),
])
def test_bad_requests_exit_2(tmp_path, capsys, argv, message):
    assert main(["reproduce", "mile-uci", *argv, "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
