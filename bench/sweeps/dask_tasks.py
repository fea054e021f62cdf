"""Sweeps on Dask distributed (``--executor dask``): each grid point of a sweep is one task, or each entry.

A task runs one point (sampler, target with its noise, hyperparameters, seed) on a worker with
:func:`run_points` (``per_task="entry"``: all the points of an entry it has to compute, in one vmapped program,
as in one process; fewer, longer tasks); its result comes back to the client, which alone writes the results
store, so resuming and deduplication work as in one process (the client claims the points before submitting
them, and releases those not finished if it stops). A worker that dies has its tasks rerun on the others by the
scheduler (up to ``distributed.scheduler.allowed-failures`` times per task). A point run alone gives the numbers of its
entry's vmapped grid up to rounding (every grid point uses the same chain keys; XLA may vectorise a lone point
differently: 4e-8 relative in float32 measured), under the same store key.

``--scheduler ADDRESS`` connects to a running scheduler (``tcp://host:8786``: one started with
``dask scheduler``, or the ``scheduler_address`` of a dask-jobqueue or dask-kubernetes cluster, whose
workers have this package installed); without an address, a ``LocalCluster`` on this machine with one
single-threaded worker process per core. docs/scale.md ("Running at scale") shows both.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os

from sgbench.base import provenance
from sgbench.base.arguments import integer_at_least, one_of

EXECUTORS = ("local", "dask")
PER_TASK = ("point", "entry")  # what one Dask task computes

CONNECT_SECONDS = 10  # how long to try reaching a --scheduler before giving up


def client_for(scheduler: str | None = None, workers: int | None = None):
    """A ``distributed.Client`` of the scheduler at ``scheduler``, or of a new ``LocalCluster`` (``workers``
    processes of one thread, default one per core) when it is None; close it when done.

    Args:
        scheduler: a scheduler address such as ``tcp://10.0.0.5:8786``, or None.
        workers: the LocalCluster's worker processes (ignored with a ``scheduler``).

    Returns:
        the connected Client.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError("the dask executor needs dask.distributed: pip install 'dask[distributed]' "
                          "(or this package's [dist] extra)") from None
    if scheduler is not None:
        return Client(scheduler, timeout=CONNECT_SECONDS)
    cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster)


@contextlib.contextmanager
def client_context(executor: str = "local", scheduler: str | None = None, workers: int | None = None):
    """The client that ``--executor``, ``--scheduler`` and ``--workers`` ask for, closed (with its LocalCluster)
    on exit.

    Args:
        executor: one of ``EXECUTORS``: "local" (no client) or "dask".
        scheduler: with "dask", a scheduler address (None: a LocalCluster on this machine).
        workers: with "dask" and no ``scheduler``, the LocalCluster's worker processes (None: one per core).

    Yields:
        None for "local", else the connected ``distributed.Client``. A ValueError naming the flag for an
        unknown executor, a scheduler or worker count without "dask", both together, or a scheduler that
        cannot be reached within ``CONNECT_SECONDS``.
    """
    one_of("--executor", executor, EXECUTORS)
    if executor == "local":
        for flag, value in (("--scheduler", scheduler), ("--workers", workers)):
            if value is not None:
                raise ValueError(f"{flag} needs --executor dask")
        yield None
        return
    if scheduler is not None and workers is not None:
        raise ValueError("--workers sizes the local cluster; a --scheduler's cluster has its own workers")
    workers = None if workers is None else integer_at_least("--workers", workers, 1, 1024)
    try:
        client = client_for(scheduler, workers)
    except ImportError as error:
        raise ValueError(f"--executor dask: {error}") from None
    except (OSError, TimeoutError, ValueError) as error:
        raise ValueError(f"--scheduler {scheduler}: cannot connect ({error})") from None
    try:
        yield client
    finally:
        cluster = client.cluster
        client.close()
        if cluster is not None and scheduler is None:
            cluster.close()


def run_points(entry, params_grid: list[dict]):
    """Grid points of ``entry`` run together, in one vmapped program (on a worker).

    Args:
        entry: a ``sgbench.bench.sweeps.run_suites.Entry``.
        params_grid: some of its ``params_grid`` dicts (one, for a task per point).

    Returns:
        (the points' ``sgbench.bench.running.result.RunResult`` list, the worker's
        ``sgbench.base.provenance.machine_summary()``).
    """
    from sgbench.bench.running.compilation_cache import enable_compilation_cache
    from sgbench.bench.running.run import run_grid

    enable_compilation_cache()  # a worker compiles the same program for each point of an entry
    results = run_grid(entry.sampler, entry.target, target_params=entry.target_params, params_grid=params_grid,
                       **dataclasses.asdict(entry.config))
    return results, provenance.machine_summary()


def results_in_order(client, function, items, **kwargs):
    """``function(item, **kwargs)`` for each of ``items``, each a task of ``client`` (a gate's cells), yielded in
    the order of ``items`` as they finish; the tasks not yet yielded are cancelled if the caller stops early or a
    task fails.

    Args:
        client: a ``distributed.Client``.
        function: a module-level function (workers import it by name).
        items: its first arguments.
        **kwargs: its other arguments, the same for every task.

    Yields:
        the results, in order.
    """
    futures = [client.submit(function, item, pure=False, **kwargs) for item in items]
    try:
        for future in futures:
            yield future.result()
    finally:
        client.cancel(futures)


def results_as_finished(client, function, calls):
    """``function(*args)`` for each ``args`` of ``calls``, each a task of ``client`` (a MAMBA table's cells), yielded
    as ``(index in calls, result)`` in the order they finish; the rest are cancelled if the caller stops early or a
    task fails.

    Args:
        client: a ``distributed.Client``.
        function: a module-level function (workers import it by name).
        calls: its argument tuples.

    Yields:
        (index, result) pairs.
    """
    from distributed import as_completed

    futures = {client.submit(function, *args, pure=False): index for index, args in enumerate(calls)}
    try:
        for future in as_completed(futures):
            yield futures[future], future.result()
    finally:
        client.cancel(list(futures))


def run_claimed(client, tasks, store, suite_name, on_done) -> list:
    """Run the claimed points as tasks on ``client`` and store each result as it arrives.

    Args:
        client: a ``distributed.Client``.
        tasks: ``(entry, params_grid, keys)`` per task: points of one entry (one, or all it claimed) and their
            store keys ``(config_hash, seed)``, claimed in ``store`` by this process.
        store: the ``ResultsStore`` (written here, by the client alone).
        suite_name: the suite to tag the runs with.
        on_done: called with the entry and the number of points of each task that finished.

    Returns:
        the RunResults stored (a point another process stored first is left out). If a task fails (a worker
        died more often than the scheduler allows) or the sweep is interrupted, the unfinished points' claims
        are released, their tasks cancelled, and the error raised.
    """
    from distributed import as_completed

    from sgbench.bench.sweeps.store import DuplicateRunError

    futures = {client.submit(run_points, entry, list(params_grid), pure=False,
                             key=f"sgbench-{keys[0][0]}-{keys[0][1]}-{len(keys)}"): (entry, keys)
               for entry, params_grid, keys in tasks}
    unfinished = {key for _, keys in futures.values() for key in keys}
    stored = []
    try:
        for future in as_completed(futures):
            entry, keys = futures[future]
            results, ran_on = future.result()
            unfinished.difference_update(keys)
            for result in results:
                try:
                    store.add(result, suite=suite_name, ran_on=ran_on)
                    stored.append(result)
                except DuplicateRunError:
                    pass  # a process that took over this claim (this one looked dead to it) stored it first
            on_done(entry, len(keys))
    except BaseException:
        client.cancel(list(futures))
        store.release(sorted(unfinished))
        raise
    return stored
