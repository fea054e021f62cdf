"""The record that lets a reproduction resume (``bench/reproduce/_record.py``): a finished unit is computed once
per settings, a line cut short by an interruption is ignored, NumPy values come back as plain numbers; ``Units``
report progress over them, and ``sgbench reproduce``'s interruption line counts those kept."""

from __future__ import annotations

import math

import numpy as np

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
    _record.append(record, {"s": 1}, ("k", 0), 1.0)
    with open(record, "a") as handle:
        handle.write('{"settings": {"s": 1}, "key": ["k", 1], "res')  # the process was killed mid-line
    _record.append(record, {"s": 1}, ("k", 2), 3.0)
    assert _record.finished(record, {"s": 1}) == {("k", 0): 1.0, ("k", 2): 3.0}
    assert _record.finished(None, {"s": 1}) == {} and _record.finished(tmp_path / "absent.jsonl", {}) == {}


def test_units_say_they_started_before_any_work_and_count_reused_units(tmp_path, capsys):
    """Piped (stderr not a terminal), the first line comes before the first unit's work (its compilation);
    a unit from the record is counted done at once, with a line saying so."""
    record = tmp_path / "t_runs.jsonl"
    _record.append(record, {"s": 1}, ("a",), 1.0)
    seen = []

    def compute():
        seen.append(capsys.readouterr().err)
        return 2.0

    with _record.Units("t", record, 2, "run") as units:
        assert units.cached({"s": 1}, ("a",), compute) == 1.0
        assert units.cached({"s": 1}, ("b",), compute) == 2.0
    assert seen[0].splitlines()[:3] == [f"t: started; finished units are kept in {record}",
                                        "progress: 0 % (0 of 2 runs) in 0 s, time left not yet known",
                                        f"t: a: taken from {record}"]
    after = capsys.readouterr().err.splitlines()
    assert after[0] == f"t: b: finished, kept in {record}" and after[-1].startswith("progress: 100 % (2 of 2 runs)")


def test_the_interruption_line_counts_what_is_kept_or_says_nothing_was(tmp_path):
    from sgbench.bench.cli.reproduce import interruption_line
    from sgbench.bench.reproduce import _registry

    db = tmp_path / "r.sqlite"
    record = _record.record_path(db, "mile-table5")
    table5, multimodal, smile = (_registry.get(name) for name in ("mile-table5", "sglrw-multimodal", "smile-table1"))
    assert interruption_line(table5, db, 0).endswith(f"nothing was kept: no unit had finished (finished units are "
                                                     f"kept in {record}); the same command starts again")
    for key in range(3):
        _record.append(record, {"s": 1}, (key,), 1.0)
    with open(record, "a") as handle:
        handle.write('{"settings": {"s": 1}, "key": [3], "res')  # cut short: not kept
    assert interruption_line(table5, db, 1) == (f"sgbench: reproduce mile-table5 interrupted: 3 finished units are "
                                                f"kept in {record} (2 finished in this invocation); the same command "
                                                "resumes from them")
    assert interruption_line(multimodal, db, 0) == ("sgbench: reproduce sglrw-multimodal interrupted: nothing was "
                                                    "kept: sglrw-multimodal keeps no finished units; the same command "
                                                    "starts again")
    assert "nothing was kept: no unit had finished (runs of its suite are kept in" in interruption_line(smile, db, 0)
