"""A progress line that counts: :class:`Counted`, the line ``"[k/N] what"`` as a ``str`` that also carries ``done`` k
and ``total`` N, so that whoever prints progress lines prints it unchanged and whoever estimates the time left (the
commands' heartbeat, ``sgbench.bench.cli._common``) reads the counts from it, not from the text."""

from __future__ import annotations


class Counted(str):
    """``"[done/total] text"``, with ``done`` and ``total`` (units of work finished, and in all)."""

    done: int
    total: int

    def __new__(cls, done: int, total: int, text: str) -> Counted:
        line = super().__new__(cls, f"[{done}/{total}] {text}")
        line.done, line.total = int(done), int(total)
        return line
