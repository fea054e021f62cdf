"""Units in spawned processes (``bench/reproduce/spawned_processes.py``): results as they finish, and an
interruption ends the workers at once instead of waiting for their current calls."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


_INTERRUPTED_AND_EXITED = """
import os, sys, time
from sgbench.bench.cli import _release_worker_semaphores
from sgbench.bench.reproduce.spawned_processes import results_as_finished

if __name__ == "__main__":
    arriving = results_as_finished(time.sleep, [(0.0,), (60.0,), (60.0,)], 2)
    next(arriving)
    arriving.close()
    if sys.argv[1] == "released":
        _release_worker_semaphores()
    os._exit(130)  # the console script's end after an interruption
"""


@pytest.mark.parametrize("released", [True, False])
def test_an_interrupted_pool_leaves_no_semaphore_to_the_resource_tracker(tmp_path, released):
    """After an interruption the console script ends with ``os._exit``, which skips multiprocessing's finalizers: the
    pool's queues' named semaphores were left to the resource tracker, which warned of "5 leaked semaphore objects"
    after the command's last line. Running the finalizers first (``_release_worker_semaphores``) leaves none."""
    script = tmp_path / "interrupted.py"
    script.write_text(_INTERRUPTED_AND_EXITED)
    done = subprocess.run([sys.executable, str(script), "released" if released else "not"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 130, done.stderr
    assert ("leaked semaphore" in done.stderr) is not released, done.stderr


_WORKER_INTERRUPTED = """
import os, signal, time
from sgbench.bench.reproduce.spawned_processes import results_as_finished


def interrupted_worker():
    os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C in a terminal does to every process of its group
    time.sleep(0.5)
    return "not interrupted"


if __name__ == "__main__":
    print([result for _, result in results_as_finished(interrupted_worker, [()], 1)])
"""


def test_a_worker_leaves_ctrl_c_to_the_parent(tmp_path):
    """Ctrl-C interrupts the whole process group, the workers too: each printed "Process SpawnProcess-N:" and its
    KeyboardInterrupt traceback among the command's last lines (seen after an interrupted ``--jobs 2`` run). The
    workers ignore SIGINT; the parent, interrupted, ends them (test_an_interrupted_caller_leaves_no_worker_running)."""
    script = tmp_path / "worker_interrupted.py"
    script.write_text(_WORKER_INTERRUPTED)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "['not interrupted']", done.stderr


_PARENT_KILLED = """
import multiprocessing, time
from sgbench.bench.reproduce.spawned_processes import results_as_finished

if __name__ == "__main__":
    arriving = results_as_finished(time.sleep, [(0.0,), (60.0,)], 2)
    next(arriving)
    print(" ".join(str(child.pid) for child in multiprocessing.active_children()), flush=True)
    time.sleep(120)
"""


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (Linux's /proc)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's prctl")
def test_workers_end_when_their_parent_is_killed_outright(tmp_path):
    """A parent killed by SIGKILL (or the out-of-memory killer) cannot end its workers; they waited on their call
    queue for ever (measured: both still there 23 s after). They now get SIGTERM when the parent dies."""
    import os
    import signal

    script = tmp_path / "parent_killed.py"
    script.write_text(_PARENT_KILLED)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    workers = [int(pid) for pid in parent.stdout.readline().split()]
    assert len(workers) == 2 and all(_running(pid) for pid in workers)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(timeout=30)
    deadline = time.perf_counter() + 20
    while any(_running(pid) for pid in workers) and time.perf_counter() < deadline:
        time.sleep(0.2)
    assert not any(_running(pid) for pid in workers), [pid for pid in workers if _running(pid)]
