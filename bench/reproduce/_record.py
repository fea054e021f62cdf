"""The record of a reproduction's finished units: JSON lines beside the results store (``NAME_runs.jsonl``), each
line a unit's result with the settings it depends on and the code's commit, flushed as the unit finishes. A rerun
with the same settings reads the finished units back and computes only the others, so an interrupted reproduction
resumes; units of other settings are ignored, those of another commit are reused (each names its commit).
:class:`Units` adds progress over the units: a line for each one taken from the record, and the bar of
``sgbench.bench.running.progress_lines`` (lines every 10 s when stderr is not a terminal). Under
:func:`recorded_only` nothing is computed: a unit missing from the record raises :class:`NotRecorded` (the docs'
tables are rendered so, from the records in the repository)."""

from __future__ import annotations

import contextlib
import contextvars
from pathlib import Path

from sgbench.base.unit_record import append, finished, plain
from sgbench.bench.running.progress_lines import progress_bar

_RECORDED_ONLY = contextvars.ContextVar("recorded_only", default=False)


class NotRecorded(LookupError):
    """A unit asked for under :func:`recorded_only` that the record does not hold."""


@contextlib.contextmanager
def recorded_only():
    """Within it, :func:`cached` and :meth:`Units.cached` compute nothing: a unit the record lacks raises
    :class:`NotRecorded`."""
    token = _RECORDED_ONLY.set(True)
    try:
        yield
    finally:
        _RECORDED_ONLY.reset(token)


def computing_allowed() -> bool:
    """False within :func:`recorded_only` (a reproduction whose units do not go through :func:`cached` asks this
    before computing one)."""
    return not _RECORDED_ONLY.get()


def _missing(record: Path | None, settings: dict, key: tuple) -> NotRecorded:
    """The error for unit ``key`` missing from ``record`` under ``settings``."""
    return NotRecorded(f"{record} holds no finished unit {list(key)} under the settings {settings}")


def record_path(db, name: str) -> Path:
    """The record of reproduction ``name`` beside the results store ``db``: ``NAME_runs.jsonl`` (``-`` as ``_``)."""
    return Path(db).with_name(f"{name.replace('-', '_')}_runs.jsonl")


def cached(record: Path | None, settings: dict, key: tuple, compute, *args, **kwargs):
    """The result of unit ``key`` from ``record`` when finished under ``settings``, else
    ``compute(*args, **kwargs)`` appended to it and returned. ``compute`` returns JSON-ready values (dicts, lists,
    numbers, strings; NumPy values are made plain)."""
    done = finished(record, settings)
    plain_key = tuple(plain(list(key)))
    if plain_key in done:
        return done[plain_key]
    if _RECORDED_ONLY.get():
        raise _missing(record, settings, plain_key)
    result = plain(compute(*args, **kwargs))
    append(record, settings, plain_key, result)
    return result


class Units:
    """A reproduction's units of work, each kept in ``record`` as it finishes (:func:`cached`), with progress over
    them: entered, it prints a first line before anything is computed (or compiled), then shows
    ``sgbench.bench.running.progress_lines.progress_bar``, described by the unit being computed; a line says when a
    unit finishes and is kept, or is taken from the record (counted done at once, and left out of the rate behind the
    time-left estimate).

    Args:
        name: the reproduction's name (in its lines).
        record: the record file, or None (nothing kept).
        total: the work in all, in ``unit`` (the units' sizes added up).
        unit: what ``total`` counts (``run``, ``split``, ``chain-step``).
        enabled: False for no progress at all.
    """

    def __init__(self, name: str, record: Path | None, total: float, unit: str = "run", enabled: bool = True):
        self.name, self.record = name, record
        self.bar = progress_bar(total, unit, enabled)

    def __enter__(self) -> Units:
        kept = f"finished units are kept in {self.record}" if self.record is not None else "nothing is kept"
        self.bar.write(f"{self.name}: started; {kept}")
        self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.bar.__exit__(*exc)

    def update(self, n: float = 1) -> None:
        """Count ``n`` more of the work done (a callback for the chain-steps of a compiled call)."""
        self.bar.update(n)

    def cached(self, settings: dict, key: tuple, compute, *args, size: float = 1, **kwargs):
        """:func:`cached` of one unit of ``size`` (in the bar's unit), the bar brought to the unit's end after it
        (a unit taken from the record, or whose computation reported less than ``size``); without a record,
        ``compute``'s result as it is.

        Args:
            settings: the settings the unit depends on.
            key: the unit's key (a tuple of JSON scalars).
            compute: ``compute(*args, **kwargs)`` gives its result when the record has none.
            size: its share of the bar's total.

        Returns:
            the unit's result (JSON-ready).
        """
        start = self.bar.n
        plain_key = tuple(plain(list(key)))
        label = ", ".join(str(part) for part in plain_key)
        done = finished(self.record, settings)
        if plain_key in done:
            self.bar.write(f"{self.name}: {label}: taken from {self.record}")
            result = done[plain_key]
        elif _RECORDED_ONLY.get():
            raise _missing(self.record, settings, plain_key)
        else:
            self.bar.set_description(label)
            result = self._kept(settings, plain_key, compute(*args, **kwargs))
        if plain_key in done:
            self.bar.done_elsewhere(size)
        else:
            self.bar.update(start + size - self.bar.n)
            self._say_finished(label)
        return result

    def arrived(self, settings: dict, key: tuple, result, size: float = 1):
        """Keep the result of unit ``key`` computed by a worker process or a Dask task (the bar's description,
        which names the work under way, is left as it is: the unit is no longer under way).

        Args:
            settings: the settings the unit depends on.
            key: the unit's key (a tuple of JSON scalars).
            result: its result.
            size: its share of the bar's total.

        Returns:
            the result, made JSON-ready when it is kept.
        """
        plain_key = tuple(plain(list(key)))
        result = self._kept(settings, plain_key, result)
        self.bar.update(size)
        self._say_finished(", ".join(str(part) for part in plain_key))
        return result

    def describe(self, description: str) -> None:
        """Name the work under way in the progress lines."""
        self.bar.set_description(description)

    def _kept(self, settings: dict, plain_key: tuple, result):
        """``result`` appended to the record, JSON-ready; without a record, as computed."""
        if self.record is None:
            return result
        result = plain(result)
        append(self.record, settings, plain_key, result)
        return result

    def _say_finished(self, label: str) -> None:
        self.bar.write(f"{self.name}: {label}: finished" + (f", kept in {self.record}" if self.record else ""))
