"""``sgbench reproduce mamba-table1|mamba-table2|mamba-table3`` (``sgbench.bench.reproduce.mamba_tables``): a small
run of each end to end, the summary on a made-up frame, a record read back computing nothing (the docs' tables), and
options refused where they do not belong. The paper's claims: ``tests/test_mamba_claims.py``."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import _record, mamba_tables
from sgbench.bench.reproduce.mamba_tables import TABLE1, TABLE2, TABLE3


@pytest.mark.integration
def test_table1_cell_runs_and_scores_against_nuts():
    options = dict(runs=2, samplers=("sgld",), methods=("heuristic",), budget=1000, final_budget=1000, progress=False)
    frame = mamba_tables.reproduce(TABLE1, **options)
    assert list(frame["run"]) == [0, 1]
    assert (frame["step_size"] == 1e-4).all() and (frame["batch_fraction"] == 0.1).all()
    assert (frame["final_steps"] == 10_000).all()  # 1000 full gradients at 1/10 of one per step
    assert np.all(np.isfinite(frame["ksd"])) and np.all(frame["xi_x100"] > 0)
    assert frame["ksd"].nunique() == 2  # the runs' seeds differ
    # the same cells in two worker processes: the same rows, bit for bit, in the same order (the commit each row
    # names is left out: an edit to the working tree between the two runs marks the second "+dirty")
    pd.testing.assert_frame_equal(mamba_tables.reproduce(TABLE1, **options, jobs=2).drop(columns="commit"),
                                  frame.drop(columns="commit"))


def test_the_command_keeps_its_record_beside_the_store_and_writes_verdicts(tmp_path, capsys):
    argv = ["reproduce", "mamba-table1", "--runs", "1", "--sampler", "sgld", "--method", "heuristic",
            "--budget-grads", "300", "--final-grads", "300", "--db", str(tmp_path / "r.sqlite"), "--out",
            str(tmp_path / "out"), "--no-progress"]
    assert main(argv) == 0  # the heuristic alone: every claim compares methods not run, so none is contradicted
    out = capsys.readouterr().out
    assert "KSD verdict" in out and ("differs" in out or "within" in out)
    assert "claims: 0 held, 0 contradicted, 0 within noise, 7 not testable" in out and "not run: no sampler" in out
    record = tmp_path / "mamba_table1_runs.jsonl"
    assert len(record.read_text().splitlines()) == 1
    page = (tmp_path / "out" / "mamba_table1.html").read_text()
    assert "Every run" in page and "The code behind the runs" in page
    assert not re.search(r"[0-9a-f]{40}", page)  # commits as 12-digit hashes: the table of every run fits the page
    assert main(argv) == 0 and len(record.read_text().splitlines()) == 1  # the rerun reuses the finished cell


def test_table2_cell_scores_predictions_against_nuts(capsys):
    frame = mamba_tables.reproduce(TABLE2, runs=1, samplers=("sgld",), methods=("heuristic",), budget=300,
                                   final_budget=300)
    err = capsys.readouterr().err.splitlines()  # progress: the cells to compute, progress lines, each cell done
    assert err[0].startswith("1 of 1 cells to compute (0 from the record), 1 at a time")
    assert err[1].startswith("progress: 0 % (0 of 1 cells)") and err[-1].startswith("progress: 100 % (1 of 1 cells)")
    assert [line for line in err if line.startswith("[")][0].startswith("[1/1] sgld heuristic run 0: step_size=")
    row = frame.iloc[0]
    assert row["step_size"] == pytest.approx(1 / 4800)  # h = 1/N, N = 4800 training ratings (80 % of 6000)
    assert np.isfinite(row["ksd"]) and 0 < row["xi_x100"] < 1000 and 0.5 < row["rmse"] < 2


def test_an_interrupted_reproduction_resumes_from_its_record(tmp_path, monkeypatch):
    record = tmp_path / "runs.jsonl"
    options = dict(runs=1, samplers=("sgld",), methods=("heuristic",), budget=1000, final_budget=1000, progress=False)
    first = mamba_tables.reproduce(TABLE1, record=record, **options)
    with open(record, "a") as handle:
        handle.write('{"settings": {"table": "mamba-ta')  # a line cut short by an interruption
    monkeypatch.setattr(mamba_tables.tuner, "heuristic", lambda problem: pytest.fail("a finished cell ran again"))
    again = mamba_tables.reproduce(TABLE1, record=record, **options)
    pd.testing.assert_frame_equal(again, first)
    assert len(first["commit"].iloc[0]) >= 7
    monkeypatch.undo()  # other settings (a larger final budget) are not taken from the record
    other = mamba_tables.reproduce(TABLE1, record=record, **{**options, "final_budget": 2000})
    assert other["final_steps"].iloc[0] == 2 * first["final_steps"].iloc[0]
    assert len(mamba_tables.finished_rows(record, mamba_tables._settings(
        TABLE1, mamba_tables.Budget("grads", 1000), mamba_tables.Budget("grads", 2000),
        TABLE1.target_params(None)))) == 1


@pytest.mark.integration
def test_table3_cell_scores_calibration_from_the_map():
    frame = mamba_tables.reproduce(TABLE3, runs=1, samplers=("sgld",), methods=("heuristic",), budget=300,
                                   final_budget=300, progress=False)
    row = frame.iloc[0]
    assert row["step_size"] == pytest.approx(1 / 1258)  # h = 1/N, N = 1258: the 70 % training split of 1797 digits
    assert 0 <= row["ece_pct"] <= row["mce_pct"] <= 100 and row["accuracy_pct"] > 80


def test_summary_gives_means_extras_and_the_chosen_arms():
    rows = []
    for method, ksd, xi in (("mamba-ksd", 10.0, 50.0), ("grid", 20.0, 10.0)):
        for run, wiggle in enumerate((-1.0, 1.0)):
            rows.append({"sampler": "sgld", "method": method, "run": run, "ksd": ksd + wiggle, "xi_x100": xi + wiggle,
                         "rmse": 0.5, "step_size": 1e-4 * (1 + 9 * run), "batch_fraction": 0.01 * (1 + 9 * run)})
    rows.append({**rows[-1], "sampler": "sghmc", "run": 0, "ksd": np.inf, "friction": 0.1})
    summary = mamba_tables.summarise(TABLE2, pd.DataFrame(rows))
    assert list(summary["ksd_mean"][:2]) == [10.0, 20.0] and list(summary["ksd_paper"]) == [213, 429, 3180]
    assert list(summary["rmse_mean"][:2]) == [0.5, 0.5] and "rmse_paper" not in summary  # the paper's Table 2 has none
    assert list(summary["diverged"]) == [0, 0, 1]
    shown = mamba_tables.render(TABLE2, summary)
    assert shown.loc[0, "KSD ours (paper)"] == "10 ± 1.4 (213)" and shown.loc[0, "test RMSE"] == "0.5 ± 0"
    assert shown.loc[0, "chosen"] == "h 0.0001 to 0.001; batch 1 %, 10 %"
    assert shown.loc[2, "KSD ours (paper)"] == "- (3180)"
    assert shown.loc[2, "chosen"] == "h 0.001; batch 10 %; friction 0.1"


def test_a_record_holding_every_cell_builds_nothing_and_a_missing_cell_is_not_computed(tmp_path, monkeypatch):
    record = tmp_path / "mamba_table3_runs.jsonl"
    budget = mamba_tables.Budget("grads", 300)
    settings = mamba_tables._settings(TABLE3, budget, budget, TABLE3.target_params(None))
    row = {"sampler": "sgld", "method": "heuristic", "run": 0, "ece_pct": 8.0, "mce_pct": 40.0, "commit": "abc"}
    mamba_tables._append(record, settings, row)
    monkeypatch.setattr(mamba_tables._Context, "build", lambda *a: pytest.fail("a context was built"))
    options = dict(samplers=("sgld",), methods=("heuristic",), budget=300, final_budget=300, record=record)
    with _record.recorded_only():
        assert mamba_tables.reproduce(TABLE3, runs=1, **options).to_dict("records") == [row]
        with pytest.raises(_record.NotRecorded, match=r"holds no finished cell \['sgld', 'heuristic', 1\].*1 of 2"):
            mamba_tables.reproduce(TABLE3, runs=2, **options)
    assert record.read_text().count("\n") == 1  # nothing appended


@pytest.mark.parametrize("argv, message", [
    (["mamba-table1", "--particles", "10"],
     "--particles is an option of sglrw-covariance, sglrw-table1, sglrw-table2, not of mamba-table1"),
    (["sglrw-table1", "--runs", "3"],
     "--runs is an option of mamba-table1, mamba-table2, mamba-table3, not of sglrw-table1"),
    (["mamba-table3", "--num-data", "3"], "--num-data is an option of mamba-table1, not of mamba-table3"),
    (["mamba-table2", "--num-data", "3"], "--num-data is an option of mamba-table1, not of mamba-table2"),
    (["mamba-table2", "--method", "mamba-fssd"], "--method must be one of mamba-ksd, grid, heuristic"),
    (["mamba-table1", "--sampler", "nuts"], "--sampler must be one of sgld"),
    (["mamba-table1", "--method", "bayes"], "--method must be one of mamba-ksd"),
    (["mamba-table3", "--method", "mamba-fssd"], "--method must be one of mamba-ksd, grid, heuristic"),
    (["mamba-table1", "--runs", "0"], "--runs must be an integer >= 1"),
    (["mamba-table2", "--jobs", "0"], "--jobs must be an integer >= 1, got 0"),
    (["sglrw-table1", "--jobs", "2"],
     "--jobs is an option of mamba-table1, mamba-table2, mamba-table3, mile-classification, mile-uci, "
     "px-cold-posterior, px-table4, smile-table1, smile-table2, not of sglrw-table1"),
    (["mamba-table1", "--num-data", "500"],
     "build it with `sgbench reference build logreg --param data_seed=0 --param dataset=simulated "
     "--param num_data=500 --param prior_variance=10.0`"),
    (["mamba-table1", "--budget-grads", "100"], "--budget-grads 100 is too small"),
])
def test_bad_options_are_one_line(tmp_path, capsys, argv, message):
    status = main(["reproduce", *argv, "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
                   "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and message in err[0], err
