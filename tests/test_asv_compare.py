"""Speed changes between two commits in asv's results (``bench/perf/asv_compare.py``), on result files written in
asv 0.6's format (``result_columns``, parameter lists, 99 % intervals)."""

from __future__ import annotations

import json
import math

import pytest

from sgbench.bench.perf.asv_compare import changes

COLUMNS = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b", "stats_q_25",
           "stats_q_75", "stats_number", "stats_repeat", "samples", "profile"]
BEFORE, AFTER = "a" * 40, "b" * 40


def _write(folder, commit, results):
    """One asv result file of ``commit`` on machine ``box``: ``results`` maps a benchmark to (params, values, ci)."""
    rows = {name: [values, params, "v", 0, 1.0, [c[0] for c in ci], [c[1] for c in ci], None, None, None, None]
            for name, (params, values, ci) in results.items()}
    path = folder / "box" / f"{commit[:8]}-existing-py.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"commit_hash": commit, "result_columns": COLUMNS, "results": rows, "version": 2}))


def test_slower_faster_failed_and_noise_are_told_apart(tmp_path):
    inf = float("inf")
    _write(tmp_path, BEFORE, {
        "step.time": ([["10", "1000"], ["icg"]], [1.0, 2.0], [(0.9, 1.1), (1.9, 2.1)]),
        "run.time": ([], [1.0], [(0.5, 1.5)]),
        "quick.time": ([], [1.0], [(-inf, inf)]),
        "gone.time": ([], [1.0], [(0.9, 1.1)]),
        "new.time": ([], [None], [(None, None)]),
    })
    _write(tmp_path, AFTER, {
        "step.time": ([["10", "1000"], ["icg"]], [2.0, 1.0], [(1.9, 2.1), (0.95, 1.05)]),
        "run.time": ([], [1.6], [(1.2, 2.0)]),  # 1.6 x, but the intervals overlap: noise
        "quick.time": ([], [1.6], [(-inf, inf)]),  # no statistics: the factor alone
        "gone.time": ([], [None], [(None, None)]),
        "new.time": ([], [1.0], [(0.9, 1.1)]),  # no value before: not compared
    })
    table = changes(tmp_path, "box", BEFORE, AFTER, factor=1.5).set_index(["benchmark", "params"])
    assert table.loc[("step.time", "10, icg"), "change"] == "slower"
    assert table.loc[("step.time", "10, icg"), "ratio"] == pytest.approx(2.0)
    assert table.loc[("step.time", "1000, icg"), "change"] == "faster"
    assert table.loc[("run.time", ""), "change"] == "same" and table.loc[("quick.time", ""), "change"] == "slower"
    assert table.loc[("gone.time", ""), "change"] == "failed" and math.isnan(table.loc[("gone.time", ""), "after"])
    assert ("new.time", "") not in table.index
    assert changes(tmp_path, "box", BEFORE, AFTER, factor=2.5)["change"].isin(["same", "failed"]).all()
    assert changes(tmp_path, "other-box", BEFORE, AFTER).empty
    with pytest.raises(ValueError, match="factor must be a number > 1"):
        changes(tmp_path, "box", BEFORE, AFTER, factor=1.0)
