"""A reproduction's units (``bench/reproduce/computed_units.py``): results in the units' order wherever they are
computed (here, spawned processes, Dask tasks), units of the record never recomputed, nothing computed under
``recorded_only`` when a unit is missing, progress handed to a function that reports it."""

from __future__ import annotations

import io
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


def test_units_taken_from_the_record_are_left_out_of_the_time_left(tmp_path, monkeypatch, capsys):
    """Half the units come from the record: before a unit is computed here no time left is promised, and the one
    that is promised is the rest at the speed of the units computed here (time made to pass 10 s per unit)."""
    import io
    import sys

    from sgbench.bench.running import progress_lines

    record = tmp_path / "r_runs.jsonl"
    computed("t", record, UNITS[:2], operator.add, progress=False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal: progress lines
    lines = []
    monkeypatch.setattr(progress_lines.ProgressLines, "write", lambda bar, line: lines.append(line))
    clock = [0.0]
    monkeypatch.setattr(progress_lines.time, "monotonic", lambda: clock[0])

    def slow_add(a, b):
        clock[0] += 10
        return a + b

    assert computed("t", record, UNITS, slow_add) == [10, 11, 12, 13]
    said = [line for line in lines if line.startswith("progress: ")]
    assert said[0].startswith("progress: 0 % (0 of 4 runs) in 0 s, time left not yet known")
    assert any(line.startswith("progress: 50 % (2 of 4 runs) in 0 s, time left not yet known") for line in said)
    assert any(line.startswith("progress: 75 % (3 of 4 runs) in 10 s, about 10 s left") for line in said), said


@pytest.mark.integration
def test_spawned_processes_and_dask_tasks_give_the_same_results(tmp_path):
    assert computed("t", tmp_path / "p_runs.jsonl", UNITS, operator.add, jobs=2, progress=False) == [10, 11, 12, 13]
    from sgbench.bench.sweeps.dask_tasks import client_context

    with client_context("dask", workers=1) as client:
        assert computed("t", tmp_path / "d_runs.jsonl", UNITS, operator.add, client=client,
                        progress=False) == [10, 11, 12, 13]
    assert len((tmp_path / "d_runs.jsonl").read_text().splitlines()) == 4


def test_units_from_workers_are_kept_and_the_lines_name_what_is_under_way(tmp_path, monkeypatch):
    """With ``--jobs 2`` a unit arrives finished: it is kept and said finished, and the progress lines name the
    units still in the worker processes (they named the last unit to arrive, as if it were under way)."""
    from sgbench.bench.reproduce import spawned_processes
    from sgbench.bench.running import progress_lines

    def here(function, calls, jobs):  # the pool's contract, without spawning: in order, as they finish
        for index, args in enumerate(calls):
            yield index, function(*args)

    monkeypatch.setattr(spawned_processes, "results_as_finished", here)
    lines = []
    monkeypatch.setattr(progress_lines.ProgressLines, "write", lambda bar, line: lines.append(line))
    monkeypatch.setattr(progress_lines.sys, "stderr", io.StringIO())
    record = tmp_path / "r_runs.jsonl"
    computed("t", record, UNITS[:1], operator.add, progress=False)
    assert computed("t", record, UNITS, operator.add, jobs=2) == [10, 11, 12, 13]
    assert len(record.read_text().splitlines()) == 4
    progress = [line for line in lines if line.startswith("progress: ")]
    assert progress[1].startswith("progress: 25 %") and progress[1].endswith(", 3 units in 2 worker processes")
    assert progress[2].startswith("progress: 50 %") and progress[2].endswith(", 2 units left in 2 worker processes")
    assert f"t: a, 1: finished, kept in {record}" in lines
    assert not any(line.endswith("a, 3") for line in lines)
