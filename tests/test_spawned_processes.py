"""Units in spawned processes (``bench/reproduce/spawned_processes.py``): results as they finish, and an
interruption ends the workers at once instead of waiting for their current calls."""

from __future__ import annotations

import multiprocessing
import time

from sgbench.bench.reproduce.spawned_processes import results_as_finished


def test_an_interrupted_caller_leaves_no_worker_running():
    # the first call returns at once, the second would sleep a minute: stopping after the first must not wait
    arriving = results_as_finished(time.sleep, [(0.0,), (60.0,)], 2)
    assert next(arriving) == (0, None)
    start = time.perf_counter()
    arriving.close()  # what an interruption does to the generator (GeneratorExit at its yield)
    assert time.perf_counter() - start < 20
    deadline = time.perf_counter() + 10
    while multiprocessing.active_children() and time.perf_counter() < deadline:
        time.sleep(0.1)
    assert multiprocessing.active_children() == []
