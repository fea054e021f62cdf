"""The record of a reproduction's finished units: JSON lines beside the results store (``NAME_runs.jsonl``), each
line a unit's result with the settings it depends on and the code's commit, flushed as the unit finishes. A rerun
with the same settings reads the finished units back and computes only the others, so an interrupted reproduction
resumes; units of other settings are ignored, those of another commit are reused (each names its commit)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np


def record_path(db, name: str) -> Path:
    """The record of reproduction ``name`` beside the results store ``db``: ``NAME_runs.jsonl`` (``-`` as ``_``)."""
    return Path(db).with_name(f"{name.replace('-', '_')}_runs.jsonl")


def _plain(value):
    """``value`` with NumPy scalars and arrays made JSON numbers and lists (NaN stays NaN)."""
    if isinstance(value, dict):
        return {key: _plain(v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value.item() if isinstance(value, np.generic) else value


def finished(record: Path | None, settings: dict) -> dict:
    """Unit key (a tuple) -> result of the lines of ``record`` with these ``settings``; a last line cut short by an
    interruption is ignored, and a later line of the same key replaces an earlier one."""
    if record is None or not Path(record).is_file():
        return {}
    settings, out = _plain(settings), {}
    for line in Path(record).read_text().splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("settings") == settings and "key" in entry:
            out[tuple(entry["key"])] = entry["result"]
    return out


def write_line(record: Path, entry: dict) -> None:
    """Append ``entry`` (made plain: NumPy values as JSON numbers and lists) to ``record`` as one JSON line and
    flush it to disk; a line cut short by an earlier interruption stays a line of its own."""
    Path(record).parent.mkdir(parents=True, exist_ok=True)
    with open(record, "ab+") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell():
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")
        handle.write((json.dumps(_plain(entry)) + "\n").encode())
        handle.flush()
        os.fsync(handle.fileno())


def append(record: Path | None, settings: dict, key: tuple, result) -> None:
    """Append one finished unit (``key``: a tuple of JSON scalars; ``result``: JSON-ready after NumPy values are
    made plain) to ``record``; nothing when ``record`` is None."""
    if record is not None:
        write_line(record, {"settings": settings, "key": list(key), "result": result})


def cached(record: Path | None, settings: dict, key: tuple, compute, *args, **kwargs):
    """The result of unit ``key`` from ``record`` when finished under ``settings``, else
    ``compute(*args, **kwargs)`` appended to it and returned. ``compute`` returns JSON-ready values (dicts, lists,
    numbers, strings; NumPy values are made plain)."""
    done = finished(record, settings)
    plain_key = tuple(_plain(list(key)))
    if plain_key in done:
        return done[plain_key]
    result = _plain(compute(*args, **kwargs))
    append(record, settings, plain_key, result)
    return result
