"""Progress that works where a bar cannot be drawn: when stderr is not a terminal (``sgbench run > log``, CI), a
line at once (before the first compilation) and then one at least every ``EVERY_SECONDS``, with what is done, what
is left and an estimate of the time left; on a terminal, tqdm's bar. :func:`progress_bar` gives either behind
tqdm's ``update``, ``set_description`` and context-manager interface."""

from __future__ import annotations

import sys
import threading
import time

EVERY_SECONDS = 10.0  # the longest silence when stderr is not a terminal


class ProgressLines:
    """tqdm's ``update``/``set_description``/``with`` for a stream that is not a terminal: one line on entry, then a
    line every ``every`` seconds from a daemon thread (so that a long compilation is not silent), and one at the
    end.

    Args:
        total: the units of work in all (chain-steps).
        unit: their name.
        stream: where the lines go (default: stderr).
        every: seconds between lines.
    """

    def __init__(self, total: float, unit: str = "chain-step", stream=None, every: float = EVERY_SECONDS):
        self.total, self.unit, self.every = float(total), unit, every
        self.stream = sys.stderr if stream is None else stream
        self.done, self.description = 0.0, ""
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)

    def line(self) -> str:
        """"sweep: 40 % (4.0e+05 of 1.0e+06 chain-steps) in 12 s, about 18 s left, DESCRIPTION"."""
        elapsed = time.monotonic() - self._started
        share = self.done / self.total if self.total else 1.0
        left = f"about {elapsed * (1 - share) / share:.0f} s left" if share > 0 else "time left not yet known"
        described = f", {self.description}" if self.description else ""
        return (f"progress: {100 * share:.0f} % ({self.done:.3g} of {self.total:.3g} {self.unit}s) in {elapsed:.0f} s, "
                f"{left}{described}")

    def _say(self) -> None:
        print(self.line(), file=self.stream, flush=True)

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            self._say()

    def update(self, n: float = 1) -> None:
        self.done += n

    def set_description(self, description: str) -> None:
        self.description = description

    def __enter__(self) -> ProgressLines:
        self._say()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        if exc[0] is None:
            self._say()


def progress_bar(total: float, unit: str = "chain-step", enabled: bool = True):
    """tqdm's bar on a terminal; :class:`ProgressLines` when stderr is not one; a silent tqdm when not ``enabled``.

    Args:
        total: the units of work in all.
        unit: their name.
        enabled: False for no progress at all.

    Returns:
        an object with ``update(n)``, ``set_description(text)``, used as a context manager.
    """
    from tqdm import tqdm

    if enabled and not sys.stderr.isatty():
        return ProgressLines(total, unit)
    return tqdm(total=total, unit=unit, unit_scale=True, disable=not enabled)
