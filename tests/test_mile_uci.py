"""MILE's UCI benchmark (``bench/reproduce/mile_uci.py``): the paper's claims about MILE against the DE, tested at
every data set by paired t-tests over the splits, the others not testable; the outcome rendered from the record
alone; at a tiny scale, the true predictive of the generated Friedman #1 data bounds the models, a user's file runs
through the command, bad input is refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sgbench import targets
from sgbench.bench.cli import main
from sgbench.bench.reproduce import _record, mile_uci
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, NOT_TESTABLE, WITHIN_NOISE
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


@pytest.mark.integration
def test_a_users_file_runs_through_the_command(tmp_path, capsys, monkeypatch):
    """A 150-row file through the command at a tiny budget, 2 splits (about a minute on 2 cores)."""
    features, labels = bundled("friedman1")
    path = tmp_path / "uci.csv"
    pd.DataFrame(features[:150], columns=[f"x{i}" for i in range(10)]).assign(y=labels[:150]).to_csv(path,
                                                                                                    index=False)
    monkeypatch.setitem(mile_uci.SCALES, "quick", {"phases": (100, 20, 20), "sampling": 40, "splits": 1})
    status = main(["reproduce", "mile-uci", "--dataset-file", str(path), "--splits", "2", "--out", str(tmp_path),
                   "--db", str(tmp_path / "r.sqlite"), "--no-progress"])
    out = capsys.readouterr().out
    assert "“MILE consistently matches or outperforms the other methods in ... UQ”" in out and status == (
        1 if "CONTRADICTED" in out else 0), out
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


def _frame(gains, noise=0.01):
    """Rows of 3 splits per data set of ``gains``: the DE at LPPD -1, RMSE 0.7, CalE 0.1; MILE better by
    ``gains[data set][metric]`` (in the metric's good direction) plus -``noise``, 0, +``noise`` at the 3 splits, so
    that the paired differences have mean ``gain``, sd ``noise`` and t = sqrt(3) ``gain`` / ``noise``."""
    de = {"lppd": -1.0, "rmse": 0.7, "calibration": 0.1}
    rows = []
    for dataset, gain in gains.items():
        for split in range(3):
            rows.append({"data set": dataset, "split": split, "method": "de", **de})
            mile = {m: v + mile_uci.SIGNS[m] * (gain[m] + noise * (split - 1)) for m, v in de.items()}
            rows.append({"data set": dataset, "split": split, "method": "mile", **mile})
    return pd.DataFrame(rows)


def _by_words(claims):
    """The tested claims' verdicts by their words (the untested ones left out)."""
    return {c.words: c.verdict for c in claims if c.verdict != NOT_TESTABLE}


RMSE = "MILE consistently matches or outperforms the other methods in predictive performance ..."
LPPD = "MILE consistently matches or outperforms the other methods in ... UQ"
MEASURES = "... while providing better and more principled uncertainty measures"
OFTEN = "... and both methods often outperform the simple DE"


def test_claims_against_the_de_are_tested_at_every_data_set():
    better = {"lppd": 0.5, "rmse": 0.2, "calibration": 0.05}
    claims = mile_uci.claims(_frame({"diabetes": better, "friedman1": better}), 7000)
    assert _by_words(claims) == {RMSE: HELD, LPPD: HELD, MEASURES: HELD, OFTEN: HELD}
    rmse = claims[0]
    assert "diabetes RMSE: MILE's gain over the DE +0.2" in rmse.ours and "friedman1 RMSE" in rmse.ours
    # t = sqrt(3) 0.2 / 0.01 = 34.6 at 2 degrees of freedom: its tail, 4.2e-4, is the normal's beyond 3.3
    assert "(z = 3.3)" in rmse.ours and "critical |z| = 1.96" in rmse.reason  # 2 data sets
    assert "critical |z| = 2.24" in claims[5].reason  # LPPD and CalE at 2 data sets
    assert rmse.paper == "RMSE: MILE better than the DE on 6 of the 6 data sets (their means)"
    assert claims[8].paper == "CalE: MILE better than the DE on 3 of the 6 data sets (their means)"
    # MILE worse than the DE beyond the noise on diabetes (t = -35): "consistently" is contradicted there; a gain of
    # 0.01 at a noise of 0.01 (t = 1.7) is inside it
    worse = {"lppd": -0.5, "rmse": -0.2, "calibration": -0.05}
    small = {"lppd": 0.01, "rmse": 0.01, "calibration": 0.01}
    claims = mile_uci.claims(_frame({"diabetes": worse, "friedman1": small}), 7000)
    assert _by_words(claims) == {RMSE: CONTRADICTED, LPPD: CONTRADICTED, MEASURES: CONTRADICTED, OFTEN: WITHIN_NOISE}
    assert "reversed beyond the noise at diabetes RMSE" in claims[0].reason
    claims = mile_uci.claims(_frame({"diabetes": worse, "friedman1": worse}), 7000)
    assert claims[8].verdict == CONTRADICTED  # "often": reversed at every data set
    claims = mile_uci.claims(_frame({"diabetes": better, "friedman1": small}), 7000)
    assert _by_words(claims) == {RMSE: WITHIN_NOISE, LPPD: WITHIN_NOISE, MEASURES: WITHIN_NOISE, OFTEN: HELD}


def test_claims_about_bde_the_papers_data_sets_time_and_coverage_are_not_testable():
    frame = _frame({"diabetes": {"lppd": 0.0, "rmse": 0.0, "calibration": 0.0}})
    untested = [c for c in mile_uci.claims(frame, 7000) if c.verdict == NOT_TESTABLE]
    assert len(untested) == 9 and all(c.reason for c in untested)
    assert sum("BDE (NUTS chains started from the deep ensemble) is not run" in c.reason for c in untested) == 5
    assert untested[2].reason.endswith("other jobs, and this scale runs 7000 of the paper's 60000 steps")
    assert mile_uci.claims(frame, 60_000)[4].reason.endswith("shared with other jobs")  # the paper's budget
    assert "Airfoil, Bikesharing, Concrete, Energy, Protein, Yacht" in untested[-1].reason


def test_the_outcome_is_rendered_from_the_record_alone(tmp_path, monkeypatch):
    frame = _frame({"diabetes": {"lppd": 0.1, "rmse": 0.01, "calibration": 0.04}})

    def fake_split(dataset, split, phases, sampling, seed, path=None):
        rows = frame[(frame["data set"] == dataset) & (frame["split"] == split)]
        return [{**row, "nan chains": 0, "seconds": 1.0, "commit": "abc"} for row in rows.to_dict("records")]

    monkeypatch.setattr(mile_uci, "one_split", fake_split)
    monkeypatch.setattr(mile_uci, "DATASETS", ("diabetes",))
    monkeypatch.setattr(mile_uci, "figure", lambda table: b"")
    db = tmp_path / "results.sqlite"
    first = mile_uci.run("quick", {}, db, tmp_path, progress=False)
    monkeypatch.setattr(mile_uci, "one_split", None)  # nothing may be computed now
    with _record.recorded_only():
        again = mile_uci.run("quick", {}, db, tmp_path, progress=False)
        with pytest.raises(_record.NotRecorded):
            mile_uci.run("quick", {"splits": 4}, db, tmp_path, progress=False)
    assert again.table.equals(first.table) and again.claims == first.claims
    assert again.sections[1][1].equals(first.sections[1][1])  # the per-split table
