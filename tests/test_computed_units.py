"""A reproduction's units (``bench/reproduce/computed_units.py``): results in the units' order wherever they are
computed (here, spawned processes, Dask tasks), units of the record never recomputed, nothing computed under
``recorded_only`` when a unit is missing, progress handed to a function that reports it."""

from __future__ import annotations

import operator

import pytest

from sgbench.bench.reproduce import _record
from sgbench.bench.reproduce.computed_units import Unit, computed

UNITS = [Unit(("a", k), {"version": 1}, (k, 10)) for k in range(4)]  # operator.add(k, 10)


def test_units_computed_here_come_back_in_order_and_are_kept(tmp_path):
    record = tmp_path / "r_runs.jsonl"
    assert computed("t", record, UNITS, operator.add, progress=False) == [10, 11, 12, 13]
    assert len(record.read_text().splitlines()) == 4
    # a rerun takes every unit from the record: a function that would fail is never called
    assert computed("t", record, UNITS, operator.truediv, progress=False) == [10, 11, 12, 13]
    # other settings are other units
    other = [Unit(u.key, {"version": 2}, u.args) for u in UNITS]
    assert computed("t", record, other, operator.sub, progress=False) == [-10, -9, -8, -7]


def test_recorded_only_computes_nothing_when_a_unit_is_missing(tmp_path):
    record = tmp_path / "r_runs.jsonl"
    computed("t", record, UNITS[:2], operator.add, progress=False)
    calls = []

    def counting(*args):
        calls.append(args)
        return 0

    with _record.recorded_only():
        assert computed("t", record, UNITS[:2], counting, progress=False) == [10, 11]
        with pytest.raises(_record.NotRecorded, match=r"\['a', 2\]"):
            computed("t", record, UNITS, counting, progress=False)
    assert calls == []


def test_a_function_that_reports_progress_is_given_the_bar(tmp_path):
    seen = []

    def reporting(k, n, progress):
        progress(n)
        seen.append(progress)
        return k

    sized = [Unit(("b", k), {}, (k, 5), size=5) for k in range(3)]
    assert computed("t", None, sized, reporting, unit="chain-step", progress=False, reports_progress=True) == [0, 1, 2]
    assert len(seen) == 3 and all(callable(p) for p in seen)


@pytest.mark.integration
def test_spawned_processes_and_dask_tasks_give_the_same_results(tmp_path):
    assert computed("t", tmp_path / "p_runs.jsonl", UNITS, operator.add, jobs=2, progress=False) == [10, 11, 12, 13]
    from sgbench.bench.sweeps.dask_tasks import client_context

    with client_context("dask", workers=1) as client:
        assert computed("t", tmp_path / "d_runs.jsonl", UNITS, operator.add, client=client,
                        progress=False) == [10, 11, 12, 13]
    assert len((tmp_path / "d_runs.jsonl").read_text().splitlines()) == 4
