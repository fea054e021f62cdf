"""An interrupted gate keeps its finished cells (``bench/gate/cell_record.py``, ``bench/cli/gate.py``): the rerun
reuses them and computes only the others, with the same checks as an uninterrupted run; another seed or other code
reuses nothing; a finished run removes its record; ``sgbench gate`` signalled after its first cell exits 130 and
says how many cells it kept, the record's count."""

from __future__ import annotations

import pytest

from sgbench.bench.gate import cell_record, runner
from tests._signalled import sgbench, signalled_when


@pytest.fixture
def three_cells(monkeypatch):
    cells = tuple(runner.suite("quick")[:3])
    monkeypatch.setattr(runner, "suite", lambda name: cells)
    computed = []
    run_cell = runner.run_cell
    monkeypatch.setattr(runner, "run_cell", lambda cell, **kw: computed.append(cell.name) or run_cell(cell, **kw))
    return cells, computed


def interrupt_after(count: int):
    """A progress callback that raises KeyboardInterrupt at its ``count``-th cell line (Ctrl-C after that cell)."""
    lines = []

    def told(line):
        lines.append(line)
        if sum(line.startswith("[") for line in lines) == count:
            raise KeyboardInterrupt

    return told


def test_an_interrupted_gate_resumes_from_its_finished_cells(tmp_path, three_cells):
    cells, computed = three_cells
    record = tmp_path / "gate_quick_cells.jsonl"
    whole = runner.run_gate("quick", progress=lambda line: None)
    computed.clear()
    with pytest.raises(KeyboardInterrupt):
        runner.run_gate("quick", progress=interrupt_after(2), record=record)
    assert computed == [c.name for c in cells[:2]]
    under = runner.record_settings("quick")
    assert sorted(cell_record.finished_cells(record, under)) == sorted(c.name for c in cells[:2])

    computed.clear()
    lines = []
    resumed = runner.run_gate("quick", progress=lines.append, record=record)
    assert computed == [cells[2].name] and resumed.reused == 2
    assert lines[0] == "gate 'quick': 3 cells, 2 of them kept from an interrupted run"
    assert "kept from an interrupted run" in lines[1] and "kept" not in lines[3]
    columns = ["cell", "name", "passed", "statistic", "threshold"]
    assert resumed.checks[columns].equals(whole.checks[columns])
    assert resumed.cells.equals(whole.cells)
    assert all((a == b).all() for a, b in zip(resumed.errors[1], whole.errors[1]))

    assert cell_record.finished_cells(record, runner.record_settings("quick", seed=1)) == {}
    other_code = {**under, "source": "0" * 64}
    assert cell_record.finished_cells(record, other_code) == {}


def test_the_cli_keeps_runs_as_cells_finish_and_removes_the_record_when_whole(tmp_path, monkeypatch, three_cells):
    from sgbench.bench.cli import main
    from sgbench.bench.sweeps.store import ResultsStore

    cells, computed = three_cells
    db, out = tmp_path / "r.sqlite", tmp_path / "out"
    monkeypatch.setattr("sgbench.bench.cli.gate.progress", interrupt_after(1))
    assert main(["gate", "--db", str(db), "--out", str(out), "--no-baseline"]) == 130
    with ResultsStore(db) as store:
        first = len(store)
    assert first > 0 and computed == [cells[0].name]
    assert (tmp_path / "gate_quick_cells.jsonl").is_file()
    monkeypatch.setattr("sgbench.bench.cli.gate.progress", lambda line: None)
    assert main(["gate", "--db", str(db), "--out", str(out), "--no-baseline"]) in (0, 1, 3)
    assert computed == [c.name for c in cells] and not (tmp_path / "gate_quick_cells.jsonl").exists()


def test_sgbench_gate_signalled_says_how_many_cells_it_kept(tmp_path):
    db = tmp_path / "r.sqlite"
    returncode, stderr = signalled_when(sgbench("gate", "--db", db, "--out", tmp_path / "out"),
                                        lambda line: line.startswith("[1/"))
    assert returncode == 130 and "Traceback" not in stderr, stderr
    record = tmp_path / "gate_quick_cells.jsonl"
    kept = len(record.read_text().splitlines())
    total = len(runner.suite("quick"))
    assert kept >= 1 and stderr.rstrip().splitlines()[-1] == (
        f"sgbench: gate interrupted: {kept} of the {total} gate cells finished and are kept in {record} (their runs "
        f"in {db}); the same command resumes from them")


def test_an_interrupted_nightly_keeps_its_gate_cells_and_the_next_night_reuses_them(tmp_path, monkeypatch, capsys,
                                                                                     three_cells):
    from sgbench.bench.cli import main

    cells, computed = three_cells
    results = tmp_path / "nightly"
    monkeypatch.setattr("sgbench.bench.cli.gate.progress", interrupt_after(2))
    assert main(["nightly", "--results", str(results), "--no-asv"]) == 130
    record = results / "gate_quick_cells.jsonl"
    assert capsys.readouterr().err.rstrip().splitlines()[-1] == (
        f"sgbench: nightly interrupted: 2 of the 3 gate cells finished and are kept in {record} (their runs in "
        f"{results / 'results.sqlite'}); the same command resumes from them")
    monkeypatch.setattr("sgbench.bench.cli.gate.progress", lambda line: None)
    computed.clear()
    assert main(["nightly", "--results", str(results), "--no-asv"]) in (0, 1)
    assert computed == [cells[2].name] and not record.exists() and (results / "nightly.json").is_file()
