"""``sgbench reproduce mamba-table1`` (``bench.reproduce.mamba_table1``): one small run end to end, the summary
and the paper's comparisons on a made-up frame, and its options refused where they do not belong."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bench.cli import main
from bench.reproduce import mamba_table1


def test_one_cell_runs_and_scores_against_nuts():
    frame = mamba_table1.reproduce(runs=2, samplers=("sgld",), methods=("heuristic",), budget=1000,
                                   final_budget=1000, progress=False)
    assert list(frame["run"]) == [0, 1]
    assert (frame["step_size"] == 1e-4).all() and (frame["batch_fraction"] == 0.1).all()
    assert (frame["final_steps"] == 10_000).all()  # 1000 full gradients at 1/10 of one per step
    assert np.all(np.isfinite(frame["ksd"])) and np.all(frame["xi_x100"] > 0)


def test_summary_and_orderings_follow_the_means():
    rows = []
    for method, ksd, xi in (("mamba-ksd", 10.0, 50.0), ("grid", 20.0, 10.0)):
        for run, wiggle in enumerate((-1.0, 1.0)):
            rows.append({"sampler": "sgld", "method": method, "run": run, "ksd": ksd + wiggle, "xi_x100": xi + wiggle})
    summary = mamba_table1.summarise(pd.DataFrame(rows))
    assert list(summary["ksd_mean"]) == [10.0, 20.0] and list(summary["ksd_paper"]) == [66, 106]
    order = mamba_table1.orderings(summary).set_index("quantity")
    # the paper: MAMBA-KSD has the lower KSD (66 < 106) and the higher xi (28.3 > 12.0) for SGLD
    assert order.loc["ksd", "holds"] == "yes" and order.loc["ksd", "clear"] == "yes"
    assert order.loc["xi", "ours"] == "higher" and order.loc["xi", "holds"] == "yes"
    assert "±" in mamba_table1.render(summary).iloc[0, 2]


@pytest.mark.parametrize("argv, message", [
    (["mamba-table1", "--particles", "10"], "--particles is an option of sglrw-table1, not of mamba-table1"),
    (["sglrw-table1", "--runs", "3"], "--runs is an option of mamba-table1, not of sglrw-table1"),
    (["mamba-table1", "--sampler", "nuts"], "--sampler must be one of sgld"),
    (["mamba-table1", "--method", "bayes"], "--method must be one of mamba-ksd"),
    (["mamba-table1", "--runs", "0"], "--runs must be an integer >= 1"),
    (["mamba-table1", "--num-data", "500"],
     "no stored reference for targets.get('logreg', dataset='simulated', num_data=500"),
    (["mamba-table1", "--budget-grads", "100"], "--budget-grads 100 is too small"),
])
def test_bad_options_are_one_line(tmp_path, capsys, argv, message):
    status = main(["reproduce", *argv, "--out", str(tmp_path), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and message in err[0], err
