"""What the ``sgbench`` commands share: default paths, KEY=VALUE parsing, the usage error, progress lines."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
import time
from pathlib import Path

from sgbench.bench.running.interruption import raise_if_signalled
from sgbench.bench.running.progress_event import Counted
from sgbench.bench.running.progress_lines import Ticker

DEFAULT_DB = Path("reports") / "results.sqlite"
DEFAULT_OUT = Path("reports") / "latest"
HISTORY = DEFAULT_OUT.parent / "history"  # a folder per invocation (sgbench.bench.cli._report_folders)
# gate and validate seed their runs SEED x 1000003 + chunk, within a signed 64-bit integer
MAX_GATE_SEED = 2**32 - 1


class UsageError(ValueError):
    """A command line that asks for something inconsistent (exit status 2)."""


class Parser(argparse.ArgumentParser):
    """argparse, reading ``-1e-3`` as a (negative) number, not as an option, so that a bad value gets its
    own error naming the flag and the accepted range instead of "expected one argument"; its own errors
    (an unknown option, a value that is not a number) are one line, like every other usage error.

    ``complete_later(add)``: ``add(parser)`` adds further arguments when this parser first parses or formats
    its help, not when it is built: a command whose options come from a registry of heavy modules (the
    reproductions) costs nothing to ``sgbench --help`` and to the other commands."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|nan)$")
        self._pending = []

    def complete_later(self, add) -> None:
        """Call ``add(self)`` before this parser first parses or formats its help."""
        self._pending.append(add)

    def _complete(self) -> None:
        while self._pending:
            self._pending.pop(0)(self)

    def parse_known_args(self, args=None, namespace=None):
        self._complete()
        return super().parse_known_args(args, namespace)

    def format_help(self):
        self._complete()
        return super().format_help()

    def error(self, message):
        """Exit with status 2 after one line on stderr (argparse's own prints the usage first)."""
        self.exit(2, f"sgbench: error: {one_line(message)} (see `{self.prog} --help`)\n")


def one_line(message: str) -> str:
    """``message`` on one line: a newline in it (one in a path or a value given) is shown as ``\\n``."""
    return str(message).replace("\r", "\\r").replace("\n", "\\n")


def positive_numbers(values, flag: str) -> list[float]:
    """``values`` if every one is a finite number > 0; else a UsageError naming ``flag``."""
    bad = [v for v in values if not (math.isfinite(v) and v > 0)]
    if bad:
        raise UsageError(f"{flag} takes finite numbers > 0, got {bad[0]:g}")
    return list(values)


def _writable_folder(folder: Path, flag: str, create: bool, make_parents: bool) -> None:
    """UsageError naming ``flag`` unless ``folder`` is a writable folder or can be made as the last component of
    an existing writable folder (with ``make_parents``, below its nearest existing ancestor: the defaults under
    ``reports/``); ``create`` makes it now (a store is written at once, a report only at the end). A mistyped
    path so never creates a tree of folders."""
    if not make_parents and not folder.exists() and not folder.parent.exists():
        raise UsageError(f"{flag}: the folder {folder.parent} does not exist (create it first, or give a path in an "
                         "existing folder)")
    if create:
        try:
            folder.mkdir(parents=make_parents, exist_ok=True)
        except OSError as error:
            raise UsageError(f"{flag}: cannot create the folder {folder} ({error.strerror})") from None
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    if not existing.is_dir():
        raise UsageError(f"{flag}: {existing} is a file, so {folder} cannot be a folder")
    if not os.access(existing, os.W_OK):
        raise UsageError(f"{flag}: the folder {existing} is not writable")


def store_file(path: Path, flag: str = "--db") -> Path:
    """``path`` if a results store can be written there (a file in a writable folder; the default's folder,
    ``reports/``, is made if missing, another path's folder must exist: only the file is created); else a
    UsageError naming ``flag``, before any work starts."""
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{flag} names a folder ({path}); give a file, e.g. {path / 'results.sqlite'}")
    default = path == DEFAULT_DB
    if not default and not path.parent.exists():
        raise UsageError(f"{flag}: the folder {path.parent} does not exist (create it first, or give a path in an "
                         "existing folder)")
    _writable_folder(path.parent, flag, create=True, make_parents=default)
    return path


def output_folder(path: Path, flag: str = "--out") -> Path:
    """``path`` if pages can be written into it (a writable folder, or one that can be made as the last component
    of an existing folder; the default folders below ``reports/`` are made with their parents: the writer makes
    it); else a UsageError naming ``flag``, before any work starts."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} names a file ({path}); give a folder for the report")
    default = path == DEFAULT_OUT or HISTORY in path.parents
    _writable_folder(path, flag, create=False, make_parents=default)
    return path


def parse_value(text: str):
    """``text`` as JSON if it starts with ``{`` or ``[`` (a schedule, a vector), else an int, else a
    float, else the string itself."""
    if text.startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise UsageError(f"{text!r} is not valid JSON: {error}") from None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_key_values(pairs, option: str) -> dict:
    """``["KEY=VALUE", ...]`` as a dict of parsed values; ``option`` names the flag in errors."""
    params = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"{option} must be KEY=VALUE, got {pair!r}")
        params[key] = parse_value(value)
    return params




_LAST_LINE = {"text": "", "at": time.monotonic()}  # the last progress line (a Counted one counts), for the heartbeat
HEARTBEAT_SECONDS = 10.0  # the longest silence of a command with a heartbeat


def progress(message: str) -> None:
    """One progress line on stderr; then, if a signal arrived whose KeyboardInterrupt was swallowed (Python ignores
    an exception raised while a garbage-collection callback runs, such as XLA's, with "Exception ignored in"), it is
    raised again here, so that the command stops at its next finished unit of work."""
    print(message, file=sys.stderr, flush=True)
    _LAST_LINE.update(text=message, at=time.monotonic())
    raise_if_signalled()


def still_working(command: str, started: float, now: float) -> str:
    """The heartbeat's line: how long since the last :func:`progress` line and in all, what that line said, and, when
    it counted units (a ``Counted`` line, ``sgbench.bench.running.progress_event``), an estimate of the time left at
    the pace so far."""
    last, since = _LAST_LINE["text"], now - _LAST_LINE["at"]
    left = ""
    if isinstance(last, Counted) and last.done > 0:
        k, n = last.done, last.total
        left = f", {k} of {n} done, about {(now - started) * (n - k) / k:.0f} s left at this pace"
    said = f"; last: {last[:100]}" if last else "; nothing finished yet"
    return f"sgbench {command}: working, {now - started:.0f} s in all{left}{said} ({since:.0f} s ago)"


@contextlib.contextmanager
def heartbeat(command: str, every: float = HEARTBEAT_SECONDS):
    """While the block runs, a line on stderr (:func:`still_working`) whenever ``every`` seconds pass without a
    :func:`progress` line, from a daemon thread: a long compilation or a long unit of work is never silent, on a
    terminal or piped. The command says its own first line (before its first compilation).

    Args:
        command: the command's name, for the lines.
        every: the longest silence, in seconds.
    """
    started = time.monotonic()
    _LAST_LINE.update(text="", at=started)
    beaten = [started]

    def beat() -> None:
        now = time.monotonic()
        if now - max(_LAST_LINE["at"], beaten[0]) >= every:
            print(still_working(command, started, now), file=sys.stderr, flush=True)
            beaten[0] = now

    ticker = Ticker(beat, min(1.0, every))
    ticker.start()
    try:
        yield
    finally:
        ticker.stop()


def command_line(argv) -> str:
    """The command as typed (stored with what it writes)."""
    return "sgbench " + " ".join(sys.argv[1:] if argv is None else argv)
