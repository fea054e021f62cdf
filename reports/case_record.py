"""The resumable record of the held-out measurements under ``reports/`` (``validate_decisive/measure.py``,
``wrappers_heldout/measure.py``): one JSON line a finished case, keyed by ``case``, so that a rerun computes only the
cases not there, and the command line both share (``--only NAME``, repeatable; ``--summary``)."""

import argparse
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def finished(record: Path) -> dict:
    """The finished cases of ``record``, by name (empty where it does not exist)."""
    if not record.exists():
        return {}
    return {row["case"]: row for row in map(json.loads, record.read_text().splitlines()) if row}


def append(record: Path, row: dict) -> None:
    with record.open("a") as file:
        file.write(json.dumps(row) + "\n")


def arguments(description: str, argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--only", action="append", help="run only this case (repeatable)")
    parser.add_argument("--summary", action="store_true", help="print the summary of the record and stop")
    return parser.parse_args(argv)


def commit() -> str:
    """The repository's commit, with "+dirty" for uncommitted changes outside ``reports/`` ("unknown" outside
    git)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!reports"],
                               cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")
