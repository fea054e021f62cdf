"""The signals (SIGINT, SIGTERM) that the console script received (``sgbench.bench.cli.console`` appends them), and
:func:`raise_if_signalled`, which the progress reporters call: Python ignores an exception raised while a
garbage-collection callback runs (XLA registers some; it prints "Exception ignored in"), so a signal that arrives then
would be lost; raised again at the next progress update, it stops the command at its next finished unit of work."""

from __future__ import annotations

RECEIVED: list[int] = []  # the signal numbers received, in order


def raise_if_signalled() -> None:
    """Raise KeyboardInterrupt if the console script has received SIGINT or SIGTERM (a no-op outside it).

    Raises:
        KeyboardInterrupt: a signal was received.
    """
    if RECEIVED:
        raise KeyboardInterrupt
