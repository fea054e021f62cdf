"""Sweeps on Dask distributed (``bench/sweeps/dask_tasks.py``, ``--executor dask``): a worker killed mid-sweep
loses nothing, the client alone writes the store, and the numbers are those of the one-process run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time

import pytest

distributed = pytest.importorskip("distributed")

from sgbench.bench.cli import main  # noqa: E402
from sgbench.bench.running.config import RunConfig  # noqa: E402
from sgbench.bench.sweeps import dask_tasks  # noqa: E402
from sgbench.bench.sweeps.run_suites import Entry, step_size_grid  # noqa: E402
from sgbench.bench.sweeps.store import ResultsStore  # noqa: E402
from sgbench.bench.sweeps.sweep import run_suite  # noqa: E402

ENTRY = Entry("sgld", "icg", {"dim": 4, "noise": "isotropic"}, step_size_grid([1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2]),
              RunConfig(num_chains=2, num_steps=1000, seed=0, dtype="float32", block_size=500))
METRICS = ("b2_mean_chain_average", "b2_mean_chain_average_bootstrap_std", "num_diverged_chains")


def _rows(db):
    return sqlite3.connect(db).execute("SELECT config_hash, seed, params, metrics FROM runs").fetchall()


def _kill_a_worker_after_the_first_result(client, db, done, killed):
    """Wait until the store holds a run, then SIGKILL one worker process (not the nanny: it starts a new one)
    and note how many runs were stored then."""
    while not done.is_set() and not (db.exists() and _rows(db)):
        time.sleep(0.05)
    pids = client.run(os.getpid)
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    killed.append(len(_rows(db)))


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of 2 worker processes (each with a nanny that restarts it if it dies) and its client."""
    client = dask_tasks.client_for(workers=2)
    with client.cluster, client:
        yield client


def test_a_worker_killed_mid_sweep_loses_no_run_and_duplicates_none(tmp_path, client):
    db = tmp_path / "r.sqlite"
    with ResultsStore(db) as store:
        done, killed = threading.Event(), []
        killer = threading.Thread(target=_kill_a_worker_after_the_first_result, args=(client, db, done, killed))
        killer.start()
        try:
            outcome = run_suite([ENTRY], store, "dask-test", progress=False, client=client)
        finally:
            done.set()
            killer.join()
    assert len(killed) == 1 and 1 <= killed[0] < 6, killed  # killed mid-sweep: its task ran again elsewhere
    rows = _rows(db)
    assert len(outcome.new) == len(rows) == 6 and len({(h, s) for h, s, _, _ in rows}) == 6
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    # the numbers are those of the same points run in one process, in one vmapped grid, up to float32 rounding
    # (XLA vectorises the 6-point grid and the lone point differently: 4e-8 relative measured)
    local_db = tmp_path / "local.sqlite"
    with ResultsStore(local_db) as store:
        run_suite([ENTRY], store, "local", progress=False)
    by_key = {(h, s): json.loads(m) for h, s, _, m in _rows(local_db)}
    for config_hash, seed, _, metrics in rows:
        ours, local = json.loads(metrics), by_key[config_hash, seed]
        for name in METRICS:  # a diverged point's b2 is None (NaN) in both
            assert (ours[name] is None and local[name] is None) or ours[name] == pytest.approx(local[name], rel=1e-5)



@pytest.mark.parametrize("flags, message", [
    (["--scheduler", "tcp://127.0.0.1:8786"], "--scheduler needs --executor dask"),
    (["--workers", "2"], "--workers needs --executor dask"),
    (["--executor", "dask", "--workers", "0"], "--workers must be an integer >= 1"),
    (["--executor", "dask", "--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"],
     "--workers sizes the local cluster"),
    (["--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"], "--scheduler tcp://127.0.0.1:9: cannot connect"),
    (["--executor", "dask", "--scheduler", "nonsense://x"], "--scheduler nonsense://x: cannot connect"),
    (["--per-task", "entry"], "--per-task needs --executor dask"),
])
def test_bad_executor_options_are_one_line_and_exit_2(tmp_path, capsys, monkeypatch, flags, message):
    monkeypatch.setattr(dask_tasks, "CONNECT_SECONDS", 1)
    status = main(["run", "--suite", "tiny", "--db", str(tmp_path / "r.sqlite"), "--out", str(tmp_path / "out"),
                   "--no-progress", *flags])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and message in err[0], err
    assert not (tmp_path / "r.sqlite").exists() or not _rows(tmp_path / "r.sqlite")


@pytest.mark.parametrize("per_task", ["point", "entry"])
def test_sgbench_run_on_a_scheduler_stores_the_suite(tmp_path, client, capsys, per_task):
    argv = ["run", "--suite", "tiny", "--executor", "dask", "--scheduler", client.scheduler.address, "--db",
            str(tmp_path / "r.sqlite"), "--out", str(tmp_path / "out"), "--no-progress", "--per-task", per_task]
    assert main(argv) == 0 and "2 new runs, 0 already in" in capsys.readouterr().out
    assert len(_rows(tmp_path / "r.sqlite")) == 2
    assert main(argv) == 0 and "0 new runs, 2 already in" in capsys.readouterr().out  # resumes: nothing rerun


@pytest.mark.parametrize("flags, message", [
    (["--executor", "dask", "--jobs", "2"], "--jobs shares the runs between local processes"),
    (["--scheduler", "tcp://127.0.0.1:8786"], "--scheduler needs --executor dask"),
    (["--executor", "spark"], "--executor must be one of ['dask', 'local'], got 'spark'"),
])
def test_smile_table1_checks_its_executor_options(tmp_path, capsys, flags, message):
    status = main(["reproduce", "smile-table1", "--steps", "10", "--db", str(tmp_path / "r.sqlite"), "--out",
                   str(tmp_path / "out"), "--no-progress", *flags])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and message in err[0], err


@pytest.mark.integration
def test_the_gate_on_dask_checks_the_same_numbers_as_in_one_process(client, monkeypatch):
    from sgbench.bench.gate import runner

    cells = runner.suite("quick")[:2]
    monkeypatch.setattr(runner, "suite", lambda name: cells)
    local = runner.run_gate("quick", progress=lambda line: None)
    lines = []
    on_dask = runner.run_gate("quick", progress=lines.append, client=client)
    assert len(lines) == 3 and list(on_dask.cells["cell"]) == [c.name for c in cells]
    columns = ["cell", "name", "passed", "statistic"]
    assert on_dask.checks[columns].equals(local.checks[columns]), (on_dask.checks, local.checks)


def test_gate_executor_options(tmp_path, capsys):
    status = main(["gate", "--reseed", "2", "--executor", "dask", "--db", str(tmp_path / "r.sqlite"), "--out",
                   str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and "--executor dask runs the gate's cells; --reseed and --power" in err[0], err


@pytest.mark.long
@pytest.mark.integration
def test_mamba_table_cells_on_dask_give_the_local_rows(client):
    import pandas as pd

    from sgbench.bench.reproduce import mamba_tables
    from sgbench.bench.reproduce.mamba_tables import TABLE1

    options = dict(runs=2, samplers=("sgld",), methods=("heuristic",), budget=300, final_budget=300, progress=False)
    local = mamba_tables.reproduce(TABLE1, **options).drop(columns="commit")
    pd.testing.assert_frame_equal(mamba_tables.reproduce(TABLE1, **options, client=client).drop(columns="commit"),
                                  local)
