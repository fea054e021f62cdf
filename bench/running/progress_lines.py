"""Progress that works everywhere: when stderr is not a terminal (``sgbench run > log``, CI), a line at once (before
the first compilation) and then one at least every ``EVERY_SECONDS``, with what is done, what is left and an
estimate of the time left; on a terminal, tqdm's bar, redrawn every ``TICK_SECONDS`` so that its elapsed time ticks
during a long compiled call (tqdm redraws only on an update). :func:`progress_bar` gives either behind tqdm's
``update``, ``set_description``, ``write`` and context-manager interface, plus ``done_elsewhere(n)``: work counted done
that this process did not spend its time on (taken from a record, computed by another process), left out of the rate
behind the time-left estimate (a resumed run that counted it would promise the rest at the record's speed)."""

from __future__ import annotations

import sys
import threading
import time

from sgbench.bench.running.interruption import raise_if_signalled

EVERY_SECONDS = 10.0  # the longest silence when stderr is not a terminal
TICK_SECONDS = 1.0  # how often the terminal bar is redrawn


class Ticker:
    """A daemon thread calling ``beat()`` every ``every`` seconds from :meth:`start` until :meth:`stop`.

    Args:
        beat: what to call.
        every: seconds between calls.
    """

    def __init__(self, beat, every: float):
        self.beat, self.every = beat, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.beat()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


class ProgressLines:
    """tqdm's ``update``/``set_description``/``write``/``with`` for a stream that is not a terminal: one line on
    entry, one when a new unit of work begins (a new description), a line every ``every`` seconds from a daemon thread
    (so that a long compilation is not silent), and one at the end.

    Args:
        total: the units of work in all (chain-steps).
        unit: their name.
        stream: where the lines go (default: stderr).
        every: seconds between lines.
    """

    def __init__(self, total: float, unit: str = "chain-step", stream=None, every: float = EVERY_SECONDS):
        self.total, self.unit, self.every = float(total), unit, every
        self.stream = sys.stderr if stream is None else stream
        self.n, self.description, self._entered = 0.0, "", False
        self.elsewhere = 0.0  # of ``n``, done without this process's time (``done_elsewhere``)
        self._started = time.monotonic()
        self._heartbeat = Ticker(self._say, every)

    def line(self) -> str:
        """"progress: 40 % (4e+05 of 1e+06 chain-steps) in 12 s, about 18 s left, DESCRIPTION": the time left is the
        work left at the rate of the work done here (``n`` less what was done elsewhere) over the elapsed time."""
        elapsed = time.monotonic() - self._started
        share = self.n / self.total if self.total else 1.0
        done_here = self.n - self.elsewhere
        left = (f"about {elapsed * (self.total - self.n) / done_here:.0f} s left" if done_here > 0
                else "time left not yet known")
        described = f", {self.description}" if self.description else ""
        return (f"progress: {100 * share:.0f} % ({self.n:.3g} of {self.total:.3g} {self.unit}s) in {elapsed:.0f} s, "
                f"{left}{described}")

    def _say(self) -> None:
        self.write(self.line())

    def write(self, message: str) -> None:
        """One line of the caller's own (a finished unit, say) between the progress lines."""
        print(message, file=self.stream, flush=True)

    def update(self, n: float = 1) -> None:
        self.n += n
        raise_if_signalled()

    def done_elsewhere(self, n: float) -> None:
        """Count ``n`` done without this process's time: left out of the time-left estimate's rate."""
        self.n += n
        self.elsewhere += n

    def set_description(self, description: str) -> None:
        """Name the work under way; once entered, a new description is said at once (a new unit has begun)."""
        changed = description != self.description
        self.description = description
        if changed and self._entered:
            self._say()

    def __enter__(self) -> ProgressLines:
        self._entered = True
        self._say()
        self._heartbeat.start()
        return self

    def __exit__(self, *exc) -> None:
        self._heartbeat.stop()
        if exc[0] is None:
            self._say()


class TickingBar:
    """tqdm's bar (on ``stream``, default stderr), redrawn every ``every`` seconds by a daemon thread: tqdm redraws
    only when updated, so without it the bar, elapsed time included, stands still through a long compiled call.

    Args:
        total: the units of work in all.
        unit: their name.
        stream: where the bar is drawn (default: stderr).
        every: seconds between redraws.
    """

    def __init__(self, total: float, unit: str = "chain-step", stream=None, every: float = TICK_SECONDS):
        from tqdm import tqdm

        self.stream = sys.stderr if stream is None else stream
        self.bar = tqdm(total=total, unit=unit, unit_scale=total >= 10_000, file=self.stream)  # 4/10 runs, 2.1M/4M
        self._heartbeat = Ticker(self.bar.refresh, every)

    @property
    def n(self) -> float:
        """The units done so far."""
        return self.bar.n

    def write(self, message: str) -> None:
        """One line above the bar (tqdm's ``write``: the bar is redrawn below it)."""
        self.bar.write(message, file=self.stream)

    def update(self, n: float = 1) -> None:
        self.bar.update(n)
        raise_if_signalled()

    def done_elsewhere(self, n: float) -> None:
        """Count ``n`` done without this process's time: moved into tqdm's ``initial`` (its rate is ``(n - initial) /
        elapsed``) and its last printed count (its smoothed rate is over the counts between redraws)."""
        self.bar.initial += n
        self.bar.last_print_n += n
        self.bar.n += n
        self.bar.refresh()

    def set_description(self, description: str) -> None:
        self.bar.set_description(description)

    def __enter__(self) -> TickingBar:
        self._heartbeat.start()
        return self

    def __exit__(self, *exc) -> None:
        self._heartbeat.stop()
        self.bar.close()


class _Silent:
    """No progress at all, behind the same interface (``--no-progress``)."""

    n = 0.0

    def write(self, message: str) -> None:
        pass

    def update(self, n: float = 1) -> None:
        self.n += n
        raise_if_signalled()

    def done_elsewhere(self, n: float) -> None:
        self.n += n

    def set_description(self, description: str) -> None:
        pass

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc) -> None:
        pass


def progress_bar(total: float, unit: str = "chain-step", enabled: bool = True):
    """:class:`TickingBar` on a terminal; :class:`ProgressLines` when stderr is not one; nothing when not
    ``enabled``.

    Args:
        total: the units of work in all.
        unit: their name.
        enabled: False for no progress at all.

    Returns:
        an object with ``n`` (done so far), ``update(n)``, ``done_elsewhere(n)``, ``set_description(text)`` and
        ``write(line)``, used as a context manager.
    """
    if not enabled:
        return _Silent()
    if sys.stderr.isatty():
        return TickingBar(total, unit)
    return ProgressLines(total, unit)
