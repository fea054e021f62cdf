"""Sweeps: run the entries of a suite into a results store, resuming where a previous run stopped.

Each grid point is identified by its ``(config_hash, seed)``, computed from the same validated
inputs :class:`sgbench.bench.running.result.RunResult` hashes. Points already in the store are skipped; the
missing points of an entry are claimed in the store and run in one :func:`bench.run_grid` call
(one compilation); each result is committed as soon as the call returns, so an interruption loses
at most the entry being run and never repeats a stored row, and concurrent sweeps into one store
compute each point once.
"""

from __future__ import annotations

import dataclasses
import time
from typing import NamedTuple

from sgbench import samplers, targets
from sgbench.base.arguments import one_of
from sgbench.bench.running.progress_lines import progress_bar
from sgbench.bench.running.result import RunResult, config_hash, params_dict
from sgbench.bench.running.run import run_grid
from sgbench.bench.sweeps.dask_tasks import PER_TASK, run_claimed
from sgbench.bench.sweeps.run_suites import Entry
from sgbench.bench.sweeps.store import DuplicateRunError, ResultsStore


class Point(NamedTuple):
    """One grid point of an entry: its params dict as given and its store key."""

    params: dict
    config_hash: str
    seed: int


def points(entry: Entry) -> list[Point]:
    """The grid points of ``entry`` with their store keys (validates params and target)."""
    sampler = samplers.get(entry.sampler)
    target = targets.get(entry.target, **entry.target_params)
    return [
        Point(p, config_hash(sampler.name, params_dict(sampler.params_for(target, **p)), target.name,
                             dict(target.params), entry.config), entry.config.seed)
        for p in entry.params_grid
    ]


def _label(entry: Entry) -> str:
    return f"{entry.sampler} on {entry.target}"


class SweepOutcome(NamedTuple):
    """What a sweep did: the runs it computed and stored (``new``), how many of its points were
    stored before it reached them (``already_stored``), and how many another process computed
    while this one waited for them (``by_others``)."""

    new: list[RunResult]
    already_stored: int
    by_others: int


# Points per compiled call of a sweep in this process: an interruption keeps every finished call. Its cost, on the
# quick suite (10 step sizes of one entry, 2 cores, nothing else running; docs/running.md names the command): two
# calls of 5 took 19.1 and 18.3 s, one of 10 18.4 and 18.5 s, ten of 1 41.0 and 37.6 s (1 point vectorises nothing).
CHUNK_POINTS = 5


def run_suite(entries, store: ResultsStore, suite_name: str | None = None, progress: bool = True,
              poll_seconds: float = 2.0, planned: list[list[Point]] | None = None, client=None,
              per_task: str = "point") -> SweepOutcome:
    """Run every grid point of ``entries`` not yet in ``store`` and add it (tagged ``suite_name``).

    Each entry's missing points are claimed first (:meth:`ResultsStore.claim`) and only the
    claimed ones are computed, so concurrent sweeps into one store split the work. Points another
    live process holds are waited for (polling every ``poll_seconds``) and taken over if it dies.
    A tqdm bar counts chain-steps (with their rate) on a terminal, and lines at least every 10 s otherwise
    (``sgbench.bench.running.progress_lines``), unless ``progress`` is False. An interruption releases the claims
    of the points in flight. ``planned``: the
    entries' :func:`points`, where the caller has them already (they are computed otherwise). ``client``: a
    ``distributed.Client`` to run each claimed point as a task of its own (``per_task="entry"``: each entry's
    claimed points as one task; ``sgbench.bench.sweeps.dask_tasks``; the results are stored here as they arrive); None
    runs each entry's points in this process, in one call.
    """
    one_of("per_task", per_task, PER_TASK)
    entries = list(entries)
    if planned is None:
        planned = [points(entry) for entry in entries]  # validates every entry before running any
    steps_per_point = [entry.config.num_chains * entry.config.total_steps for entry in entries]
    pending = {index: {(p.config_hash, p.seed): p.params for p in entry_points if not store.has(p.config_hash, p.seed)}
               for index, entry_points in enumerate(planned)}
    already_stored = sum(len(entry_points) - len(pending[i]) for i, entry_points in enumerate(planned))
    new: list[RunResult] = []
    total = sum(len(keys) * steps_per_point[i] for i, keys in pending.items())
    with progress_bar(total, "chain-step", enabled=progress) as bar:
        while pending := {i: keys for i, keys in pending.items() if keys}:
            waiting: dict = {}
            tasks = []
            for index, keys in pending.items():
                claimed = store.claim(keys)
                bar.done_elsewhere(steps_per_point[index] * len(claimed.stored))  # stored by another process meanwhile
                if claimed.mine and client is None:
                    new += _run_claimed(entries[index], [keys[k] for k in claimed.mine], claimed.mine, store,
                                        suite_name, bar)
                if claimed.mine and client is not None:
                    mine = [[k] for k in claimed.mine] if per_task == "point" else [list(claimed.mine)]
                    tasks += [(entries[index], [keys[k] for k in group], group) for group in mine]
                pending[index] = {k: keys[k] for k in claimed.others}
                waiting.update(claimed.others)
            if tasks:
                bar.set_description(f"{len(tasks)} tasks on Dask")
                new += run_claimed(client, tasks, store, suite_name,
                                   lambda entry, n: bar.update(n * entry.config.num_chains * entry.config.total_steps))
            if waiting:
                owners = ", ".join(sorted({str(owner) for owner in waiting.values()}))
                bar.set_description(f"waiting for {len(waiting)} runs computed by {owners}")
                time.sleep(poll_seconds)
    by_others = sum(len(entry_points) for entry_points in planned) - already_stored - len(new)
    return SweepOutcome(new, already_stored, by_others)


def _run_claimed(entry: Entry, params_grid: list[dict], keys, store: ResultsStore, suite_name, bar) -> list[RunResult]:
    """Run the claimed points ``params_grid`` (store keys ``keys``) of ``entry`` in calls of at most ``CHUNK_POINTS``
    points, storing each call's results as it finishes, so that an interruption keeps every finished call; the
    claims of the points not stored are released if a call does not finish."""
    stored = []
    for first in range(0, len(params_grid), CHUNK_POINTS):
        chunk = params_grid[first:first + CHUNK_POINTS]
        bar.set_description(f"{_label(entry)}, points {first + 1}-{first + len(chunk)} of {len(params_grid)}")
        try:
            results = run_grid(entry.sampler, entry.target, target_params=entry.target_params, params_grid=chunk,
                               progress=bar.update, **dataclasses.asdict(entry.config))
        except BaseException:
            store.release(keys[first:])
            raise
        for result in results:
            try:
                store.add(result, suite=suite_name)
                stored.append(result)
            except DuplicateRunError:
                pass  # a process that took over this claim (this one looked dead to it) stored it first
    return stored
