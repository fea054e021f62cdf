"""Warnings raised while a command runs (NumPy, ArviZ, matplotlib, the suite's own), counted and
summarised once at the end on stderr instead of printed where they happen, between progress bars."""

from __future__ import annotations

import collections
import contextlib
import sys
import warnings
from pathlib import Path


def _where(filename: str, lineno: int) -> str:
    """``package/module.py:line`` of the code the warning is attributed to."""
    path = Path(filename)
    return f"{path.parent.name}/{path.name}:{lineno}"


def summary(counts: collections.Counter) -> str:
    """One line per distinct warning, most frequent first, under a count of all of them; "" if none."""
    if not counts:
        return ""
    total = sum(counts.values())
    lines = [f"sgbench: {total} warning{'s' if total != 1 else ''} while this command ran (summarised here, "
             "not printed where they happened):"]
    lines += [f"  {count} x {category} at {where}: {message}" for (category, message, where), count in
              counts.most_common()]
    return "\n".join(lines)


@contextlib.contextmanager
def summarised_warnings(stream=None):
    """Count every warning raised inside the block (each occurrence, not only the first per line)
    and print :func:`summary` to ``stream`` (default: stderr) when the block ends."""
    counts: collections.Counter = collections.Counter()

    def count(message, category, filename, lineno, file=None, line=None):
        first_line = str(message).strip().splitlines()[0] if str(message).strip() else ""
        counts[(category.__name__, first_line[:200], _where(filename, lineno))] += 1

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = count
        try:
            yield counts
        finally:
            text = summary(counts)
            if text:
                print(text, file=stream or sys.stderr)
