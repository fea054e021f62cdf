"""The signals (SIGINT, SIGTERM) that the console script received (``sgbench.bench.cli.stop_on_signals`` records
them), and :func:`raise_if_signalled`, which the progress reporters call. Python ignores an exception raised while a
garbage-collection callback runs (XLA registers some; it prints "Exception ignored in"), so a signal that arrives
then is held: delivered again when the collection ends, or raised at the next progress update, whichever comes
first, and only once."""

from __future__ import annotations

RECEIVED: list[int] = []  # the signal numbers received, in order (the exit status: 143 when SIGTERM is among them)
PENDING: list[int] = []  # received and not yet raised as KeyboardInterrupt


def received(signum: int) -> None:
    """Record ``signum`` as received and not yet raised.

    Args:
        signum: the signal's number.
    """
    RECEIVED.append(signum)
    PENDING.append(signum)


def take() -> int | None:
    """The last signal received and not yet raised, which the caller now raises; None when there is none.

    Returns:
        the signal's number, or None.
    """
    if not PENDING:
        return None
    signum = PENDING[-1]
    PENDING.clear()
    return signum


def raise_if_signalled() -> None:
    """Raise KeyboardInterrupt for a signal received and not yet raised (a no-op outside the console script).

    Raises:
        KeyboardInterrupt: such a signal was received.
    """
    if take() is not None:
        raise KeyboardInterrupt
