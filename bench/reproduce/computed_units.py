"""A reproduction's units computed wherever ``--jobs`` and ``--executor`` say: here one after another (with progress
inside each unit), in spawned worker processes of this machine (``sgbench.bench.reproduce.spawned_processes``) or as
tasks of a Dask cluster (``sgbench.bench.sweeps.dask_tasks``). Units the record already holds are taken from it first
and never sent anywhere; each computed unit is appended to the record by this process as it arrives, in whatever
order, so an interruption keeps every finished unit and the rerun computes only the others
(``sgbench.bench.reproduce._record``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable


@dataclasses.dataclass(frozen=True)
class Unit:
    """One unit of work.

    Attributes:
        key: its key in the record (a tuple of JSON scalars).
        settings: what its result depends on beyond the key.
        args: the arguments of the computing function (picklable, for worker processes and Dask tasks).
        size: its share of the progress bar's total (in the bar's unit).
    """

    key: tuple
    settings: dict
    args: tuple
    size: float = 1.0


class _NotYet(Exception):
    """Raised by :func:`_not_yet` to learn that the record lacks a unit without computing it."""


def _not_yet():
    raise _NotYet


def _in_worker(function, *args):
    """``function(*args)`` in a worker process or a Dask task, with JAX's compilation cache on (the workers compile
    the same programs)."""
    from sgbench.bench.running.compilation_cache import enable_compilation_cache

    enable_compilation_cache()
    return function(*args)


def computed(name: str, record, units: list[Unit], function: Callable, unit: str = "run", jobs: int = 1,
             client=None, progress: bool = True, reports_progress: bool = False) -> list:
    """Every unit's result, from ``record`` or computed by ``function(*unit.args)``.

    Args:
        name: the reproduction's name (in the progress lines).
        record: its record file (``sgbench.bench.reproduce._record``), or None (nothing kept).
        units: the units, in the order of the results returned.
        function: a module-level function (worker processes import it by name) returning a unit's JSON-ready
            result.
        unit: what the units' sizes count (``run``, ``chain-step``).
        jobs: units computed at once in spawned processes of this machine (1: one after another here).
        client: a ``distributed.Client``: each missing unit a Dask task instead (``jobs`` must then be 1).
        progress: progress lines on stderr (``sgbench.bench.reproduce._record.Units``).
        reports_progress: computing here with ``jobs`` 1, ``function`` is given ``progress=CALLBACK``, which it calls
            with the work done (in ``unit``) as it goes.

    Returns:
        the results, one per unit, in the order of ``units``. Under ``_record.recorded_only()`` a unit the record
        lacks raises ``NotRecorded`` before anything is computed.
    """
    from sgbench.bench.reproduce import spawned_processes
    from sgbench.bench.reproduce._record import Units, cached
    from sgbench.bench.sweeps import dask_tasks

    found = {}
    for index, each in enumerate(units):  # under recorded_only, the first missing unit raises NotRecorded here
        try:
            found[index] = cached(record, each.settings, each.key, _not_yet)
        except _NotYet:
            pass
    missing = [index for index in range(len(units)) if index not in found]
    with Units(name, record, sum(each.size for each in units), unit, progress) as bar:
        for index in found:
            bar.cached(units[index].settings, units[index].key, _not_yet, size=units[index].size)  # said taken
        if client is None and jobs == 1:
            for index in missing:
                each = units[index]
                extra = {"progress": bar.update} if reports_progress else {}
                found[index] = bar.cached(each.settings, each.key, function, *each.args, size=each.size, **extra)
        elif missing:
            calls = [(function, *units[index].args) for index in missing]
            where = "as Dask tasks" if client is not None else f"in {min(jobs, len(missing))} worker processes"
            bar.describe(f"{len(missing)} units {where}")
            arriving = (dask_tasks.results_as_finished(client, _in_worker, calls) if client is not None
                        else spawned_processes.results_as_finished(_in_worker, calls, jobs))
            for count, (position, result) in enumerate(arriving, 1):
                each = units[missing[position]]
                found[missing[position]] = bar.arrived(each.settings, each.key, result, size=each.size)
                if count < len(missing):
                    bar.describe(f"{len(missing) - count} units left {where}")
    return [found[index] for index in range(len(units))]
