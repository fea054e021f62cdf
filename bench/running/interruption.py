"""The signals (SIGINT, SIGTERM) that the console script received (``sgbench.bench.cli.stop_on_signals`` records
them), and :func:`raise_if_signalled`, which the progress reporters call.

A received signal is raised as KeyboardInterrupt where Python handles it; should that exception be lost (Python
ignores one raised while a garbage-collection callback runs, XLA registers some; a C extension may swallow one), the
next progress update raises it again, so the command stops at its next unit of work at the latest. ``RAISED`` counts
the raises, so that a signal held during a garbage collection is delivered again only if nothing raised it
meanwhile (``sgbench.bench.cli.stop_on_signals``)."""

from __future__ import annotations

RECEIVED: list[int] = []  # the signal numbers received, in order (the exit status: 143 when SIGTERM is among them)
RAISED: list[int] = []  # the signal numbers raised as KeyboardInterrupt, in order


def received(signum: int) -> None:
    """Record ``signum`` as received.

    Args:
        signum: the signal's number.
    """
    RECEIVED.append(signum)


def raise_if_signalled() -> None:
    """Raise KeyboardInterrupt if a signal was received (a no-op outside the console script).

    Raises:
        KeyboardInterrupt: a signal was received.
    """
    if RECEIVED:
        RAISED.append(RECEIVED[-1])
        raise KeyboardInterrupt
