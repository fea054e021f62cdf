"""A record of finished units of work: JSON lines, each a unit's result under the settings it depends on, flushed
to disk as the unit finishes. A rerun with the same settings reads the finished units back and computes only the
others, so interrupted work resumes; lines of other settings are ignored, and a line cut short by an interruption
(or ``kill -9``) is skipped. Used by the reproductions (``sgbench.bench.reproduce._record``) and the gate's cells
(``sgbench.bench.gate.cell_record``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np


def plain(value):
    """``value`` with NumPy scalars and arrays made JSON numbers and lists (NaN stays NaN), tuples made lists.

    Args:
        value: a JSON-like value (dicts, lists, tuples, numbers, strings) that may hold NumPy values.

    Returns:
        the same value with only JSON types.
    """
    if isinstance(value, dict):
        return {key: plain(v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value.item() if isinstance(value, np.generic) else value


def entries(record: Path | None):
    """The complete lines of ``record``, parsed, in order; a line cut short by an interruption is skipped.

    Args:
        record: the JSON-lines file (None or a missing file: none).

    Yields:
        each complete line's JSON value.
    """
    if record is None or not Path(record).is_file():
        return
    for line in Path(record).read_text().splitlines():
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            continue


def finished(record: Path | None, settings: dict) -> dict:
    """The finished units of ``record`` under ``settings``.

    Args:
        record: the JSON-lines file (None or a missing file: nothing finished).
        settings: what the units' results depend on; lines under other settings are ignored.

    Returns:
        unit key (a tuple) -> result; a last line cut short by an interruption is ignored, and a later line of the
        same key replaces an earlier one.
    """
    settings, out = plain(settings), {}
    for entry in entries(record):
        if isinstance(entry, dict) and entry.get("settings") == settings and "key" in entry:
            out[tuple(entry["key"])] = entry["result"]
    return out


def write_line(record: Path, entry: dict) -> None:
    """Append ``entry`` (made :func:`plain`) to ``record`` as one JSON line and flush it to disk; a line cut short by
    an earlier interruption stays a line of its own.

    Args:
        record: the JSON-lines file (its folder is made if missing).
        entry: a JSON-like dict.
    """
    Path(record).parent.mkdir(parents=True, exist_ok=True)
    with open(record, "ab+") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell():
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")
        handle.write((json.dumps(plain(entry)) + "\n").encode())
        handle.flush()
        os.fsync(handle.fileno())


def append(record: Path | None, settings: dict, key: tuple, result) -> None:
    """Append one finished unit to ``record``; nothing when ``record`` is None.

    Args:
        record: the JSON-lines file, or None.
        settings: what the result depends on (as given to :func:`finished`).
        key: the unit, a tuple of JSON scalars.
        result: JSON-ready after NumPy values are made plain.
    """
    if record is not None:
        write_line(record, {"settings": settings, "key": list(key), "result": result})
