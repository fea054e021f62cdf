"""The record of a gate run's finished cells, so that an interrupted ``sgbench gate`` (or ``sgbench nightly``'s gate)
resumes: JSON lines beside the results store (``gate_SUITE_cells.jsonl``), one per finished cell with its check rows,
what moved, its outcome and its per-coordinate errors, written as the cell finishes (``sgbench.base.unit_record``).

A cell is reused only by a run that would compute exactly it again: the same suite, seed, JAX dtype, baselines and
design biases, the same source code (``sgbench.base.provenance.source_fingerprint``: a gate checks the code as it is
now, so an edit between the interruption and the rerun recomputes every cell) and the same Python, JAX and NumPy. The
record is removed when the gate run finishes, so a finished gate is never reused: the next run measures again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from sgbench.base import provenance
from sgbench.base.unit_record import append, finished


def record_path(db, suite_name: str) -> Path:
    """The record of the gate suite ``suite_name``'s cells beside the results store ``db``.

    Args:
        db: the results store's path.
        suite_name: the gate suite.

    Returns:
        ``gate_SUITE_cells.jsonl`` in the store's folder.
    """
    return Path(db).with_name(f"gate_{suite_name}_cells.jsonl")


def _digest(value) -> str | None:
    """SHA-256 of ``value`` as sorted JSON (NaN allowed); None stays None."""
    if value is None:
        return None
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def settings(suite_name: str, seed: int, baselines: dict | None, design_biases: dict, dtype: str = "float64") -> dict:
    """What a finished cell's checks depend on; a cell is reused only under equal settings.

    Args:
        suite_name: the gate suite.
        seed: the run's seed.
        baselines: the baselines document, None without baselines.
        design_biases: the stored design biases document.
        dtype: the JAX driver's dtype of the run's cells.

    Returns:
        a JSON-ready dict: the suite, the seed, digests of the two documents, the source fingerprint and the
        versions of Python, JAX, jaxlib and NumPy.
    """
    return {"suite": suite_name, "seed": seed, "dtype": dtype, "baselines": _digest(baselines),
            "design_biases": _digest(design_biases),
            "source": provenance.source_fingerprint(),
            "libraries": provenance.library_versions(("jax", "jaxlib", "numpy"))}


def finished_cells(record: Path, under: dict) -> dict:
    """Cell name -> its entry (``rows``, ``moved``, ``outcome``, ``errors``, ``errors_se``, ``seconds``), for the
    cells of ``record`` finished under the settings ``under``."""
    return {key[0]: entry for key, entry in finished(record, under).items()}


def keep(record: Path, under: dict, cell_name: str, entry: dict) -> None:
    """Append a finished cell's ``entry`` (see :func:`finished_cells`) to ``record`` under the settings ``under``."""
    append(record, under, (cell_name,), entry)


def clear(record: Path) -> None:
    """Remove ``record``: the gate run it belongs to has finished."""
    Path(record).unlink(missing_ok=True)
