"""SIGINT and SIGTERM stop a long command cleanly (``sgbench.bench.cli.console``): after its first finished task
``sgbench conformance`` is signalled; it exits 130 (SIGINT) or 143 (SIGTERM), prints no traceback, says how many
finished tasks it kept, and that count is the record's (resuming from the record: ``tests/test_conformance.py``);
``sgbench run`` and ``sgbench reproduce mile-table5`` keep their finished units and the same command resumes.
Run as a subprocess, the console script's way (``python -m sgbench.bench.cli``)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests._signalled import sgbench, signalled_when


def interrupted(tmp_path, signum):
    """``sgbench conformance --scale quick --library blackjax`` signalled after its first progress line about a
    finished task; (exit status, stderr, the record's path)."""
    record = tmp_path / "records.jsonl"
    command = sgbench("conformance", "--scale", "quick", "--library", "blackjax", "--out", tmp_path / "out",
                      "--record", record)
    return *signalled_when(command, lambda line: line.startswith("[1/"), signum), record


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signalled_command_keeps_what_it_says_and_exits_with_the_signal_status(tmp_path, signum, status):
    returncode, stderr, record = interrupted(tmp_path, signum)
    assert returncode == status, stderr
    assert "Traceback" not in stderr
    kept = len(record.read_text().splitlines())
    assert kept >= 1
    assert stderr.rstrip().splitlines()[-1] == (f"sgbench: conformance interrupted: {kept} finished tasks are kept in "
                                                f"{record}; the same command resumes")


def test_an_interrupted_sweep_keeps_each_finished_call_and_resumes(tmp_path):
    """``sgbench run`` (the quick suite: 10 step sizes in calls of 5) signalled once its second call has begun keeps
    the first call's 5 runs, says so, and the same command computes only the 5 others."""
    from sgbench.bench.sweeps.store import ResultsStore

    db = tmp_path / "r.sqlite"
    command = sgbench("run", "--db", db, "--out", tmp_path / "out")
    returncode, stderr = signalled_when(command, lambda line: "points 6-10 of 10" in line)  # piped: progress lines
    assert returncode == 130 and "Traceback" not in stderr, stderr
    with ResultsStore(db) as store:
        kept = len(store)
    assert kept == 5
    assert stderr.rstrip().splitlines()[-1] == (f"sgbench: run interrupted: 5 of the 10 runs it asks for are in {db}; "
                                                "the same command resumes")
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and f"5 new runs, 5 already in {db}" in again.stdout


def test_a_quiet_command_says_it_is_still_working_with_an_estimate(capsys):
    import time

    from sgbench.bench.cli._common import heartbeat, progress, still_working
    from sgbench.bench.running.progress_event import Counted

    with heartbeat("gate", every=0.3):
        time.sleep(0.5)
        progress(Counted(1, 4, "first cell: passed"))
        time.sleep(0.5)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("sgbench gate: working, 0 s in all; nothing finished yet")
    assert lines[1] == "[1/4] first cell: passed"
    assert lines[2].startswith("sgbench gate: working, 1 s in all, 1 of 4 done, about ")
    assert "s left at this pace; last: [1/4] first cell: passed (0 s ago)" in lines[2]
    progress("[2/4] a line that only looks counted")  # the counts come from the event, not from its text
    assert ", 2 of 4 done" not in still_working("gate", 0.0, 10.0)


def test_an_interrupted_speed_run_writes_nothing_and_says_so(tmp_path):
    out = tmp_path / "out"
    command = sgbench("speed", "--steps", 2000, "--numpy-steps", 50, "--grid-steps", 0, "--no-bnn", "--repeats", 1,
                      "--sampler", "sgld", "--sampler", "sghmc", "--out", out)
    returncode, stderr = signalled_when(command, lambda line: line.startswith("sgld: JAX"), signal.SIGTERM)
    assert returncode == 143 and "Traceback" not in stderr, stderr
    assert stderr.rstrip().splitlines()[-1].startswith("sgbench: speed interrupted: nothing was written")
    assert not (out / "speed.html").exists()


@pytest.mark.integration
def test_an_interrupted_asv_run_stops_asv_and_says_nothing_was_kept(tmp_path):
    import os

    from tests.test_dashboard import write_config

    config = write_config(tmp_path)
    command = sgbench("asv", "--quick", "--config", config, "--machine", "sgbench-signal-test", "--bench",
                      r"samplers\.TimeRun\.time_run\('sg\w+', 'jax', 10, 10, 'icg'\)")
    returncode, stderr = signalled_when(command, lambda line: "Benchmarking" in line, stream="stdout",
                                        env={**os.environ, "HOME": str(tmp_path)})  # asv's machine file
    assert returncode == 130 and "Traceback" not in stderr, stderr
    assert stderr.rstrip().splitlines()[-1] == (
        "sgbench: asv interrupted: asv keeps a commit's results only once all its benchmarks have run, so nothing of "
        f"this run was added to {tmp_path / 'results'}; run it again (--bench REGEX runs a part)")
    assert not list((tmp_path / "results").glob("*/*-*.json"))  # no commit's results file


def reproduce_mile_table5(tmp_path, signum, when: str):
    """``sgbench reproduce mile-table5`` (its two runs are the units of its record) signalled at its first stderr
    line containing ``when``; (exit status, stderr, the record's path, the command)."""
    command = sgbench("reproduce", "mile-table5", "--db", tmp_path / "r.sqlite", "--out", tmp_path / "out")
    returncode, stderr = signalled_when(command, lambda line: when in line, signum)  # piped: progress lines
    return returncode, stderr, tmp_path / "mile_table5_runs.jsonl", command


@pytest.mark.long  # 55-60 s alone on 2 cores (two runs' compilation, the rerun's one), 94 s beside other jobs
def test_an_interrupted_reproduction_keeps_its_finished_run_and_the_rerun_reuses_it(tmp_path):
    """Signalled once its first run (MILE's) is recorded, ``sgbench reproduce mile-table5`` exits 130 and says it
    kept that one unit (the record's lines); the same command takes it from the record and computes only the other
    run."""
    returncode, stderr, record, command = reproduce_mile_table5(tmp_path, signal.SIGINT, "mile: finished, kept in")
    assert returncode == 130 and "Traceback" not in stderr, stderr
    assert stderr.splitlines()[0] == f"mile-table5: started; finished units are kept in {record}"  # before any work
    kept = len(record.read_text().splitlines())
    assert kept == 1
    assert stderr.rstrip().splitlines()[-1] == (f"sgbench: reproduce mile-table5 interrupted: 1 finished unit is kept "
                                                f"in {record} (1 finished in this invocation); the same command "
                                                "resumes from them")
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode in (0, 1) and "report: " in again.stdout, again.stderr  # 1: a check failed; it finished
    assert f"mile-table5: mile: taken from {record}" in again.stderr
    assert "mile: finished" not in again.stderr and "naive: finished" in again.stderr
    assert len(record.read_text().splitlines()) == 2


def test_a_reproduction_terminated_before_its_first_unit_says_nothing_was_kept(tmp_path):
    returncode, stderr, record, _ = reproduce_mile_table5(tmp_path, signal.SIGTERM, "mile-table5: started")
    assert returncode == 143 and "Traceback" not in stderr, stderr
    assert not record.exists()
    assert stderr.rstrip().splitlines()[-1] == (f"sgbench: reproduce mile-table5 interrupted: nothing was kept: no "
                                                f"unit had finished (finished units are kept in {record}); the same "
                                                "command starts again")


def test_interrupted_design_bias_and_baseline_updates_say_what_they_wrote(monkeypatch, capsys):
    """``sgbench design-bias`` writes its file after each cell (it counts the cells written); ``sgbench baseline
    update`` writes only at the end (nothing changed)."""
    from sgbench.bench.cli import main
    from sgbench.bench.gate import design_bias, runner

    def two_cells_then_ctrl_c(*args, progress, **kwargs):
        progress("[1/9] a: relative second-moment bias ...")
        progress("[2/9] b: relative second-moment bias ...")
        raise KeyboardInterrupt

    monkeypatch.setattr(design_bias, "build", two_cells_then_ctrl_c)
    assert main(["design-bias"]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"sgbench: design-bias interrupted: the 2 cells it measured are written to {design_bias.PATH}; the same "
        "command without --remeasure measures only the others")
    monkeypatch.setattr(runner, "update_baseline", two_cells_then_ctrl_c)
    assert main(["baseline", "update", "--why", "a test"]) == 130
    assert capsys.readouterr().err.splitlines()[-1].startswith("sgbench: baseline update interrupted: the baselines "
                                                               "are written only when every cell is measured")


def test_a_signal_inside_a_garbage_collection_is_delivered_again_after_it(monkeypatch):
    """Raised inside a gc callback, the KeyboardInterrupt would be printed as "Exception ignored" with a traceback
    and lost (seen in signal fuzz passes: SIGTERM 1.4 s into ``sgbench conformance`` and 2.8 s into ``sgbench
    validate``, inside the callback that marks a collection's start); there the handler holds it and delivers it again
    once the collection has ended, unless a progress update raised it meanwhile."""
    import _thread
    import gc
    import time
    import types

    from sgbench.bench import cli
    from sgbench.bench.running import interruption

    handlers, delivered = {}, []
    monkeypatch.setattr(gc, "callbacks", [])
    monkeypatch.setattr(signal, "signal", lambda signum, handler: handlers.__setitem__(signum, handler))
    monkeypatch.setattr(interruption, "RECEIVED", [])
    monkeypatch.setattr(interruption, "RAISED", [])
    monkeypatch.setattr(_thread, "interrupt_main", delivered.append)

    def wait_for(count):
        deadline = time.monotonic() + 5
        while len(delivered) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return list(delivered)

    on_signal = cli.stop_on_signals()
    assert handlers == {signal.SIGINT: on_signal, signal.SIGTERM: on_signal}
    first, *_, last = gc.callbacks
    inside_first = types.SimpleNamespace(f_code=first.__code__, f_back=None)
    on_signal(signal.SIGTERM, inside_first)  # a collection starts: held until it ends
    time.sleep(0.1)
    assert delivered == [] and interruption.RAISED == []
    last("stop", {})
    assert wait_for(1) == [signal.SIGTERM]
    with pytest.raises(cli.Terminated):  # the delivery again raises, and is not recorded twice
        on_signal(signal.SIGTERM, sys._getframe())
    assert interruption.RECEIVED == [signal.SIGTERM] and interruption.RAISED == [signal.SIGTERM]
    first("start", {})
    on_signal(signal.SIGINT, types.SimpleNamespace(f_code=None, f_back=inside_first))  # deeper in: held
    with pytest.raises(KeyboardInterrupt):  # a progress update comes before the collection ends and raises it
        interruption.raise_if_signalled()
    last("stop", {})
    time.sleep(0.2)
    assert delivered == [signal.SIGTERM]  # so it is not delivered a second time
    assert interruption.RECEIVED == [signal.SIGTERM, signal.SIGINT]


def test_interrupted_gate_measurements_say_nothing_was_kept(monkeypatch, capsys):
    """``sgbench gate --reseed`` and ``--power`` count their rates over every cell or bug and keep nothing."""
    from sgbench.bench.cli import main
    from sgbench.bench.gate import power, runner

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "reseed", ctrl_c)
    monkeypatch.setattr(power, "measure_power", ctrl_c)
    for flags, part in ((["--reseed", "3"], "--cell"), (["--power"], "--bug")):
        assert main(["gate", *flags, "--out", "unused-folder"]) == 130
        assert capsys.readouterr().err.splitlines()[-1] == (
            f"sgbench: gate {flags[0]} interrupted: nothing was kept (its rates are counted and written once every "
            f"cell has run); run it again, or a part of it with {part} NAME")


@pytest.mark.parametrize("args, moment, last", [
    (["validate", "sgbench.bench.adapters.blackjax:sgld", "--param", "step_size=0.02", "--targets", "icg"],
     "on icg: running", "sgbench: validate interrupted before any target was decided: no verdict and no page"),
    (["tune", "sgld", "--target", "icg"], "sgld on icg:", "sgbench: tune interrupted: {rows} arm runs were stored in "
     "{db} before it stopped; the tuning itself is not resumed (run it again)"),
])
def test_validate_and_tune_signalled_at_their_first_run_say_what_they_kept(tmp_path, args, moment, last):
    """The count a command says it kept is the store's."""
    import sqlite3

    db = tmp_path / "r.sqlite"
    extra = ["--db", db] if args[0] == "tune" else []
    returncode, stderr = signalled_when(sgbench(*args, *extra, "--out", tmp_path / "out"),
                                        lambda line: line.startswith(moment))
    assert returncode == 130 and "Traceback" not in stderr, stderr
    rows = sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0] if db.exists() else 0
    assert stderr.rstrip().splitlines()[-1] == last.format(rows=rows, db=db)


def test_an_interruption_while_the_command_line_is_read_is_one_line(monkeypatch, capsys):
    """``sgbench reproduce NAME`` loads every reproduction's module to know their options (seconds): a fuzz trial
    signalled then printed a traceback."""
    from sgbench.bench import cli

    def ctrl_c(self, args=None, namespace=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.Parser, "parse_known_args", ctrl_c)
    assert cli.main(["reproduce", "mile-table5"]) == 130
    assert capsys.readouterr().err == "sgbench: interrupted while reading the command line; nothing was done\n"
