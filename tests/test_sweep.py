"""Sweeps and suites: one run_grid call per entry, store keys that match RunResult's, and
resuming after an interruption without losing or repeating rows."""

import dataclasses
import datetime
import socket
import subprocess
import sys

import pytest

from sgbench.bench.sweeps import claims, run_suites, sweep
from sgbench.bench.sweeps.report import write_report
from sgbench.bench.sweeps.store import ResultsStore
from sgbench.samplers import UnknownNameError


def _entries_with_two_seeds():
    (tiny,) = run_suites.get("tiny")
    return [tiny, dataclasses.replace(tiny, config=dataclasses.replace(tiny.config, seed=1))]


def _keys(store):
    frame = store.to_frame()
    return list(zip(frame["config_hash"], frame["seed"]))


def test_suites_are_named_and_unknown_names_list_them():
    assert {"quick", "tiny"} <= set(run_suites.names())
    (quick,) = run_suites.get("quick")
    step_sizes = [p["step_size"] for p in quick.params_grid]
    assert min(step_sizes) == pytest.approx(1e-4) and any(1e-2 <= h < 0.02 for h in step_sizes)
    assert quick.config.num_chains == 10 and quick.config.dtype == "float32"
    assert quick.target_params["noise"] == "isotropic" and quick.target_params["noise_variance"] == 256
    with pytest.raises(UnknownNameError, match="known suites: langevin, quick, tiny"):
        run_suites.get("nope")


def test_running_a_suite_twice_adds_nothing_the_second_time(tmp_path):
    entries = run_suites.get("tiny")
    with ResultsStore(tmp_path / "results.sqlite") as store:
        first, already, by_others = sweep.run_suite(entries, store, "tiny", progress=False)
        assert len(first) == len(store) == len(entries[0].params_grid) == 2 and already == by_others == 0
        planned = {(p.config_hash, p.seed) for p in sweep.points(entries[0])}
        assert {(r.config_hash, r.config.seed) for r in first} == planned == set(_keys(store))
        assert sweep.run_suite(entries, store, "tiny", progress=False) == ([], 2, 0)
        assert len(store) == 2
        assert set(store.to_frame()["suite"]) == {"tiny"}


def test_an_interrupted_sweep_resumes_without_repeating(tmp_path, monkeypatch):
    entries = _entries_with_two_seeds()
    real_run_grid = sweep.run_grid
    calls = []

    def interrupted_after_first_entry(*args, **kwargs):
        calls.append(kwargs["params_grid"])
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real_run_grid(*args, **kwargs)

    with ResultsStore(tmp_path / "results.sqlite") as store:
        monkeypatch.setattr(sweep, "run_grid", interrupted_after_first_entry)
        with pytest.raises(KeyboardInterrupt):
            sweep.run_suite(entries, store, progress=False)
        assert len(store) == 2
        in_flight = [(p.config_hash, p.seed) for p in sweep.points(entries[1])]
        with ResultsStore(tmp_path / "results.sqlite") as other:  # another owner sees the claims released
            assert other.claim(in_flight).mine == in_flight
            other.release(in_flight)
        monkeypatch.setattr(sweep, "run_grid", real_run_grid)
        resumed = sweep.run_suite(entries, store, progress=False).new
        assert [r.config.seed for r in resumed] == [1, 1]
        keys = _keys(store)
    assert len(keys) == len(set(keys)) == 4


def test_only_missing_points_are_run(tmp_path, monkeypatch):
    (tiny,) = run_suites.get("tiny")
    first_only = dataclasses.replace(tiny, params_grid=tiny.params_grid[:1])
    grids = []
    real_run_grid = sweep.run_grid

    def recording(*args, **kwargs):
        grids.append(kwargs["params_grid"])
        return real_run_grid(*args, **kwargs)

    monkeypatch.setattr(sweep, "run_grid", recording)
    with ResultsStore(tmp_path / "results.sqlite") as store:
        sweep.run_suite([first_only], store, progress=False)
        new = sweep.run_suite([tiny], store, progress=False).new
        assert len(store) == 2
    assert grids == [list(tiny.params_grid[:1]), list(tiny.params_grid[1:])]
    assert [r.params["step_size"] for r in new] == [tiny.params_grid[1]["step_size"]]


def test_bad_entries_fail_before_anything_runs(tmp_path):
    (tiny,) = run_suites.get("tiny")
    bad = dataclasses.replace(tiny, params_grid=({"step_size": -1.0},))
    with ResultsStore(tmp_path / "results.sqlite") as store:
        with pytest.raises(ValueError, match="step_size"):
            sweep.run_suite([tiny, bad], store, progress=False)
        assert len(store) == 0


def test_every_langevin_sampler_runs_through_a_sweep_and_resumes(tmp_path):
    """The langevin suite's entries (sgld_cv needs its centre from the target) at a tiny size: the
    store keys computed before the run match the results', so a second run adds nothing; the report
    of the mixed rows is written."""
    entries = [dataclasses.replace(e, params_grid=e.params_grid[:1],
                                   config=dataclasses.replace(e.config, num_chains=2, num_steps=2000, num_burnin=0,
                                                              num_checkpoints=0))
               for e in run_suites.get("langevin")]
    assert {e.sampler for e in entries} == {"sgld", "psgld", "sgld_cv", "csgld", "clipped_sgld", "sglrw"}
    with ResultsStore(tmp_path / "results.sqlite") as store:
        assert len(sweep.run_suite(entries, store, "langevin", progress=False).new) == len(entries)
        assert sweep.run_suite(entries, store, "langevin", progress=False).new == []
        # Mixed samplers: schedules (dicts) and parameters that only some rows have (NaN elsewhere).
        page = write_report(store, tmp_path / "out").read_text()
    assert "cyclical(cycle_length=10,000" in page and "sglrw" in page


def test_a_claim_of_a_dead_process_is_taken_over(tmp_path):
    (tiny,) = run_suites.get("tiny")
    keys = [(p.config_hash, p.seed) for p in sweep.points(tiny)]
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = claims.Owner(socket.gethostname(), int(finished.stdout), "a-killed-sweep")
    with ResultsStore(tmp_path / "results.sqlite") as store:
        store.owner = dead
        assert store.claim(keys).mine == keys
    with ResultsStore(tmp_path / "results.sqlite") as store:
        assert sweep.run_suite([tiny], store, progress=False, poll_seconds=0.01)[1:] == (0, 0)
        assert len(store) == 2


def test_a_live_claim_is_waited_for_and_not_recomputed(tmp_path, monkeypatch):
    """A point claimed by a live owner is not computed here: the sweep waits until it is stored."""
    (tiny,) = run_suites.get("tiny")
    keys = [(p.config_hash, p.seed) for p in sweep.points(tiny)]
    path = tmp_path / "results.sqlite"
    holder = ResultsStore(path)
    assert holder.claim(keys[:1]).mine == keys[:1]
    real_run_grid = sweep.run_grid
    grids = []

    def recording(*args, **kwargs):
        grids.append(kwargs["params_grid"])
        return real_run_grid(*args, **kwargs)

    def holder_finishes(seconds):  # the holder stores its run while the sweep waits
        holder.add(real_run_grid(tiny.sampler, tiny.target, target_params=tiny.target_params,
                                 params_grid=tiny.params_grid[:1], **dataclasses.asdict(tiny.config))[0])

    monkeypatch.setattr(sweep, "run_grid", recording)
    monkeypatch.setattr(sweep.time, "sleep", holder_finishes)
    with ResultsStore(path) as store:
        new, already, by_others = sweep.run_suite([tiny], store, progress=False)
    holder.close()
    assert grids == [list(tiny.params_grid[1:])]
    assert (len(new), already, by_others) == (1, 0, 1)


def test_claims_from_another_host_last_one_lease():
    owner = claims.Owner("another-host.example", 1, "token")
    now = datetime.datetime.now(datetime.UTC)
    recent = (now - datetime.timedelta(hours=1)).isoformat()
    expired = (now - datetime.timedelta(seconds=claims.LEASE_SECONDS + 1)).isoformat()
    assert claims.is_live(owner, recent, now) and not claims.is_live(owner, expired, now)


def test_three_concurrent_sweeps_share_one_stores_work(tmp_path):
    """Three `sgbench run --suite tiny` processes on one store: each point is computed once, the
    others wait for it and say so, and each writes its own report."""
    command = [sys.executable, "-m", "sgbench.bench.cli", "run", "--suite", "tiny", "--db", str(tmp_path / "r.sqlite"),
               "--no-progress"]
    processes = [subprocess.Popen([*command, "--out", str(tmp_path / f"out{i}")], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for i in range(3)]
    outputs = [process.communicate(timeout=300) for process in processes]
    assert [process.returncode for process in processes] == [0, 0, 0], outputs
    first_lines = sorted(out.splitlines()[0] for out, _ in outputs)
    computed = sum(int(line.split()[0]) for line in first_lines)
    assert computed == 2, first_lines
    assert all("computed meanwhile by another sgbench process" in line or line.startswith("2 new runs")
               or "already in" in line for line in first_lines)
    with ResultsStore(tmp_path / "r.sqlite") as store:
        assert len(store) == 2
    assert all((tmp_path / f"out{i}" / "index.html").is_file() for i in range(3))
