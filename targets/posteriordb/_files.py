"""Reading a posteriordb posterior's data and reference draws: from the copies shipped in ``data/`` (taken
unchanged from posteriordb, BSD 3-Clause licence in ``data/LICENCE.md``) or from a user's local clone of the
database (``https://github.com/stan-dev/posteriordb``), whose layout under ``posterior_database/`` is
``posteriors/<posterior>.json`` (naming ``data_name`` and ``reference_posterior_name``), ``data/data/<data>.json.zip``
and ``reference_posteriors/draws/draws/<reference>.json.zip``.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import numpy as np

PACKAGED = Path(__file__).resolve().parent / "data"


def _read_zip(path: Path):
    if not path.is_file():
        raise FileNotFoundError(f"posteriordb file {path} is missing")
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read(archive.namelist()[0]))


def files(posterior: str, clone=None) -> tuple[Path, Path]:
    """The (data, reference draws) zip files of ``posterior``: shipped, or in the clone at ``clone``.

    Args:
        posterior: posteriordb's name of the posterior.
        clone: the root of a local clone of posteriordb, or None for the shipped copies.

    Returns:
        (data path, reference draws path).

    Raises:
        FileNotFoundError: naming the missing file (of a clone: the posterior, its data or its reference draws).
    """
    if clone is None:
        return PACKAGED / posterior / "data.json.zip", PACKAGED / posterior / "reference_draws.json.zip"
    root = Path(clone) / "posterior_database"
    record_path = root / "posteriors" / f"{posterior}.json"
    if not record_path.is_file():
        raise FileNotFoundError(f"posteriordb clone {clone}: no posterior {posterior!r} ({record_path} is missing)")
    record = json.loads(record_path.read_text())
    if not record.get("reference_posterior_name"):
        raise FileNotFoundError(f"posteriordb posterior {posterior!r} has no reference draws")
    return (root / "data" / "data" / f"{record['data_name']}.json.zip",
            root / "reference_posteriors" / "draws" / "draws" / f"{record['reference_posterior_name']}.json.zip")


def data(posterior: str, clone=None) -> dict:
    """The posterior's data.

    Args:
        posterior: posteriordb's name of the posterior.
        clone: the root of a local clone of posteriordb, or None for the shipped copies.

    Returns:
        posteriordb's JSON object of the data.
    """
    return _read_zip(files(posterior, clone)[0])


def reference_draws(posterior: str, clone=None) -> dict[str, np.ndarray]:
    """The reference draws grouped by quantity.

    Args:
        posterior: posteriordb's name of the posterior.
        clone: the root of a local clone of posteriordb, or None for the shipped copies.

    Returns:
        ``name`` -> float64 array (chains, draws) for a scalar, (chains, draws, size) for ``name[1]``,
        ``name[2]``, ... (Stan's one-based indices, in order).
    """
    chains = _read_zip(files(posterior, clone)[1])
    columns: dict[str, list] = {}
    for key in chains[0]:
        match = re.fullmatch(r"(\w+)\[(\d+)\]", key)
        name, index = (match[1], int(match[2])) if match else (key, 0)
        columns.setdefault(name, []).append((index, key))
    grouped = {}
    for name, keys in columns.items():
        stacked = np.array([[chain[key] for _, key in sorted(keys)] for chain in chains], dtype=np.float64)
        grouped[name] = stacked[:, 0, :] if keys[0][0] == 0 else np.moveaxis(stacked, 1, 2)
    return grouped
