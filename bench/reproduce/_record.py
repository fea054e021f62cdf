"""The record of a reproduction's finished units: JSON lines beside the results store (``NAME_runs.jsonl``), each
line a unit's result with the settings it depends on and the code's commit, flushed as the unit finishes. A rerun
with the same settings reads the finished units back and computes only the others, so an interrupted reproduction
resumes; units of other settings are ignored, those of another commit are reused (each names its commit)."""

from __future__ import annotations

from pathlib import Path

from sgbench.base.unit_record import append, finished, plain


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
    result = plain(compute(*args, **kwargs))
    append(record, settings, plain_key, result)
    return result
