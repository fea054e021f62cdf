"""``sgbench nightly`` (``bench/cli/nightly.py``): a gate of one cell and a real asv run of one cheap benchmark; the
first run passes and keeps its state, a planted earlier measurement three times faster makes the next run a speed
regression (exit 1), and a broken state file or factor is a one-line error."""

from __future__ import annotations

import json
import subprocess

import pytest

from sgbench.bench.cli import main
from sgbench.bench.gate import runner

BENCHMARK = "sgld_icg.TimeNumpyDriver.time_run"
MACHINE = "sgbench-nightly-test"
EARLIER = "0" * 40  # a commit measured by an earlier nightly run (planted)


@pytest.fixture
def one_cell_gate(monkeypatch):
    cell = runner.suite("quick")[0]
    monkeypatch.setattr(runner, "suite", lambda name: (cell,))


def _config(folder):
    from tests.test_dashboard import write_config

    return write_config(folder)


def _plant_earlier_measurement(results_dir, head: str, speedup: float):
    """A copy of HEAD's result file filed under the commit ``EARLIER``, every time divided by ``speedup``."""
    (path,) = [p for p in (results_dir / MACHINE).glob(f"{head[:8]}-*.json")]
    document = json.loads(path.read_text())
    document["commit_hash"] = EARLIER
    column = document["result_columns"].index("result")
    for row in document["results"].values():
        row[column] = [value / speedup for value in row[column]]
    (path.parent / path.name.replace(head[:8], EARLIER[:8])).write_text(json.dumps(document))


@pytest.mark.long
@pytest.mark.integration
def test_nightly_passes_then_reports_a_planted_slowdown(tmp_path, monkeypatch, capsys, one_cell_gate):
    monkeypatch.setenv("HOME", str(tmp_path))  # asv keeps its machine file in ~/.asv-machine.json
    config, results = _config(tmp_path), tmp_path / "nightly"
    argv = ["nightly", "--results", str(results), "--config", str(config), "--machine", MACHINE, "--here", "--quick",
            "--bench", BENCHMARK]
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "no regression (commits first run.." in out
    state = json.loads((results / "nightly.json").read_text())
    assert state["last_commit"] == head and len(state["runs"]) == 1 and state["runs"][0]["passed"]
    page = (results / "index.html").read_text()
    assert "gate_quick.html" in page and "site/index.html" in page and (results / "site" / "index.json").is_file()

    _plant_earlier_measurement(tmp_path / "results", head, speedup=3.0)
    (results / "nightly.json").write_text(json.dumps({**state, "last_commit": EARLIER}))
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "REGRESSION: speed 1 (commits 00000000.." in out and "asv" not in out.split("REGRESSION")[1].split("(")[0]
    page = (results / "index.html").read_text().replace("<wbr>", "")  # the table's line-break opportunities
    assert BENCHMARK in page and "slower" in page
    assert len(json.loads((results / "nightly.json").read_text())["runs"]) == 2


@pytest.mark.parametrize("state, flags, message", [
    ("[1, 2]", [], "is not a nightly state file (no last_commit or runs)"),
    ("{not json", [], "is not a nightly state file (Expecting property name"),
    (None, ["--factor", "1"], "--factor must be a number > 1, got 1.0"),
    (None, ["--steps", "0"], "--steps must be an integer >= 1"),
    (None, ["--config", "missing.json"], "--config: no asv config file at missing.json"),
])
def test_bad_nightly_input_is_one_line_and_exit_2(tmp_path, capsys, state, flags, message):
    results = tmp_path / "nightly"
    if state is not None:
        results.mkdir()
        (results / "nightly.json").write_text(state)
    status = main(["nightly", "--results", str(results), *flags])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and message in err[0], err


def test_commits_since_the_last_night_are_measured_by_asv_with_head_last(monkeypatch, tmp_path):
    """The asv command lines of the default mode (recorded, not run: each commit's environment is built by asv)."""
    from argparse import Namespace

    from sgbench.bench.cli import nightly

    head, last, between = "b" * 40, "a" * 40, "c" * 40
    commands = []
    monkeypatch.setattr("sgbench.bench.perf.asv_machine.register_machine", lambda config, name=None: "box")
    monkeypatch.setattr("sgbench.bench.cli.asv.run_asv", lambda command: commands.append(command) or 0)
    monkeypatch.setattr(nightly, "_git", lambda *args: f"{between}\n{head}" if args[:2] == ("rev-list", "--reverse")
                        and args[2] == f"{last}..{head}" else pytest.fail(f"unexpected git {args}"))
    args = Namespace(machine=None, bench=None, here=False, quick=False, steps=4)
    commits, machine = nightly._asv(args, tmp_path / "asv.conf.json", last, head)
    assert machine == "box" and commits == [between, head]
    assert [command[-1] for command in commands] == [f"{last}..{head}", f"{head}^!"]
    assert commands[0][commands[0].index("--steps") + 1] == "4" and "--skip-existing" in commands[1]
    assert commands[0].count("--bench") == len(nightly.NIGHTLY_BENCHMARKS)
    commands.clear()
    assert nightly._asv(args, tmp_path / "asv.conf.json", None, head)[0] == [head]  # the first night: HEAD alone
    assert len(commands) == 1 and commands[0][-1] == f"{head}^!"
