"""The record that lets a reproduction resume (``bench/reproduce/_record.py`` over ``base/unit_record.py``): a finished
unit is computed once per settings, a line cut short by an interruption is ignored, NumPy values come back as plain
numbers; ``Units`` report progress over them, and ``sgbench reproduce``'s interruption line counts those kept."""

from __future__ import annotations

import math

import numpy as np

from sgbench.base import unit_record
from sgbench.bench.reproduce import _record


def test_a_unit_is_computed_once_per_settings(tmp_path):
    record = _record.record_path(tmp_path / "results.sqlite", "some-table")
    assert record == tmp_path / "some_table_runs.jsonl"
    calls = []

    def compute(x):
        calls.append(x)
        return {"value": np.float64(x) * 2, "rows": np.arange(2), "missing": math.nan}

    first = _record.cached(record, {"seed": 0}, ("a", 1), compute, 3)
    again = _record.cached(record, {"seed": 0}, ("a", 1), compute, 3)
    other = _record.cached(record, {"seed": 1}, ("a", 1), compute, 4)
    assert calls == [3, 4] and first["value"] == again["value"] == 6.0 and other["value"] == 8.0
    assert first["rows"] == [0, 1] and math.isnan(again["missing"])


def test_a_line_cut_short_is_ignored_and_the_next_one_starts_fresh(tmp_path):
    record = tmp_path / "t_runs.jsonl"
    unit_record.append(record, {"s": 1}, ("k", 0), 1.0)
    with open(record, "a") as handle:
        handle.write('{"settings": {"s": 1}, "key": ["k", 1], "res')  # the process was killed mid-line
    unit_record.append(record, {"s": 1}, ("k", 2), 3.0)
    assert unit_record.finished(record, {"s": 1}) == {("k", 0): 1.0, ("k", 2): 3.0}
    assert unit_record.finished(None, {"s": 1}) == {} and unit_record.finished(tmp_path / "absent.jsonl", {}) == {}
