"""Where a command's pages go: ``--out DIR`` when given, else a folder of its own.

Without ``--out``, each invocation writes into a new folder ``reports/history/<UTC time>-<command>-<pid>/``
and then copies each page into ``reports/latest/`` (a copy written beside it and renamed over the old one, so a
reader never sees half a page): concurrent commands never write into one folder, and ``reports/latest`` holds
the newest page of each kind (``index.html`` of ``sgbench run``, ``gate_quick.html`` of ``sgbench gate``, ...).
The history folders are kept; delete them when they are no longer wanted.
"""

from __future__ import annotations

import datetime
import os
import shutil
from pathlib import Path

from sgbench.bench.cli._common import DEFAULT_OUT, HISTORY, output_folder

NEW_FOLDER = object()  # the --out default: a new history folder, published into DEFAULT_OUT


def add_out_option(parser, holds: str) -> None:
    """``--out DIR`` for the pages ``holds`` names, defaulting to a new history folder."""
    parser.add_argument("--out", type=Path, default=NEW_FOLDER,
                        help=f"folder for {holds} (default: a new folder under {HISTORY}/, then copied into "
                             f"{DEFAULT_OUT}/)")


def new_folder(command: str) -> Path:
    """The history folder of this invocation of ``command`` (made by the first page written into
    it); UsageError naming --out if pages cannot be written under ``reports``."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    folder = HISTORY / f"{stamp}-{command}-{os.getpid()}"
    output_folder(folder)
    output_folder(DEFAULT_OUT)
    return folder


def publish(folder: Path, latest: Path = DEFAULT_OUT) -> list[Path]:
    """Copy each file of ``folder`` into ``latest`` (each replaced at once) and return the copies (none
    when the command stopped before writing a page)."""
    files = sorted(path for path in folder.iterdir() if path.is_file()) if folder.is_dir() else []
    latest.mkdir(parents=True, exist_ok=True)
    for path in files:
        partial = latest / f".{path.name}.{os.getpid()}.partial"
        shutil.copyfile(path, partial)
        os.replace(partial, latest / path.name)
    return [latest / path.name for path in files]
