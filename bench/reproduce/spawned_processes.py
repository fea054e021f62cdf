"""A reproduction's units computed in worker processes of this machine: spawned, not forked (a forked JAX runtime
is unsafe), each result yielded as it arrives, the counterpart of ``sgbench.bench.sweeps.dask_tasks``'s
``results_as_finished`` for ``--jobs N``."""

from __future__ import annotations


def _worker_setup(parent: int):
    """A worker's initializer. SIGINT is ignored: Ctrl-C in a terminal reaches every process of its group, and the
    parent, interrupted, ends the workers (:func:`results_as_finished`); a worker interrupted itself printed its own
    KeyboardInterrupt traceback, or returned it as its call's result. On Linux the worker also gets SIGTERM when its
    parent dies (``prctl(PR_SET_PDEATHSIG)``): a parent killed outright (SIGKILL, the out-of-memory killer) cannot
    end its workers, which otherwise waited on their call queue for ever.

    Args:
        parent: the parent's process id (a worker whose parent is already gone ends at once).
    """
    import os
    import signal
    import sys

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)


def results_as_finished(function, calls, jobs: int):
    """``function(*args)`` for each ``args`` of ``calls`` in ``min(jobs, len(calls))`` spawned processes, yielded as
    ``(index in calls, result)`` in the order they finish; the workers ignore SIGINT (Ctrl-C is the caller's to
    handle) and, on Linux, end with their parent; if the caller stops early (an interruption) or a call fails, the
    rest are cancelled and the workers ended, mid-call if need be.

    Args:
        function: a module-level function (the workers import it by name).
        calls: its argument tuples.
        jobs: the most processes at once (at least 1).

    Yields:
        (index, result) pairs.
    """
    import concurrent.futures
    import multiprocessing
    import os

    with concurrent.futures.ProcessPoolExecutor(max(1, min(jobs, len(calls))),
                                                mp_context=multiprocessing.get_context("spawn"),
                                                initializer=_worker_setup, initargs=(os.getpid(),)) as pool:
        futures = {pool.submit(function, *args): index for index, args in enumerate(calls)}
        try:
            for future in concurrent.futures.as_completed(futures):
                yield futures[future], future.result()
        except BaseException:
            # a worker inside a long compiled call does not see the interruption: end the workers rather than wait
            # for their current calls (ProcessPoolExecutor has no public way to before Python 3.14)
            workers = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for process in workers:
                process.terminate()
            raise
