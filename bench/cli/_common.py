"""What the ``sgbench`` commands share: default paths, KEY=VALUE parsing, the usage error, progress lines."""

from __future__ import annotations

import json
import sys
from pathlib import Path

DEFAULT_DB = Path("reports") / "results.sqlite"
DEFAULT_OUT = Path("reports") / "latest"


class UsageError(ValueError):
    """A command line that asks for something inconsistent (exit status 2)."""


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


def progress(message: str) -> None:
    """One progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


def command_line(argv) -> str:
    """The command as typed (stored with what it writes)."""
    return "sgbench " + " ".join(sys.argv[1:] if argv is None else argv)
