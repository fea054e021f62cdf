"""Progress where no bar can be drawn (``sgbench.bench.running.progress_lines``): a line before any work, one at
least every ``every`` seconds while nothing reports (a long compilation), and one at the end; ``sgbench run``
with stderr not a terminal prints them. On a terminal, a bar redrawn every second."""

from __future__ import annotations

import io
import sys
import time

from sgbench.bench.cli import main
from sgbench.bench.running.progress_lines import ProgressLines, TickingBar, progress_bar


def test_lines_come_first_then_while_silent_then_at_the_end():
    stream = io.StringIO()
    with ProgressLines(100, stream=stream, every=0.05) as bar:
        time.sleep(0.2)  # no update: a compilation, say
        bar.set_description("sgld on icg")
        bar.update(40)
        time.sleep(0.12)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("progress: 0 % (0 of 100 chain-steps) in 0 s, time left not yet known")
    assert len(lines) >= 4
    assert lines[-1].startswith("progress: 40 % (40 of 100 chain-steps)") and lines[-1].endswith("sgld on icg")
    assert "s left" in lines[-1]


def test_a_new_unit_of_work_is_said_at_once():
    """The line that names a new unit (a sweep's next call of step sizes) comes when the unit begins, not at the
    next tick: an interruption test signals on it (tests/test_signals.py)."""
    stream = io.StringIO()
    with ProgressLines(10, stream=stream, every=60) as bar:
        bar.set_description("points 1-5 of 10")
        bar.set_description("points 1-5 of 10")  # the same unit: no line
        bar.update(5)
        bar.set_description("points 6-10 of 10")
        lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and lines[1].endswith("points 1-5 of 10") and lines[2].startswith("progress: 50 %")
    assert lines[2].endswith("points 6-10 of 10")


def test_sgbench_run_piped_prints_progress_lines(tmp_path, capsys):
    status = main(["run", "--suite", "tiny", "--db", str(tmp_path / "r.sqlite"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 0
    lines = [line for line in err.splitlines() if line.startswith("progress: ")]
    assert lines[0].startswith("progress: 0 %") and lines[-1].startswith("progress: 100 %")


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_terminal_bar_ticks_without_updates(monkeypatch):
    """tqdm redraws only on an update; the TickingBar is redrawn by its thread while nothing reports (a long
    compiled call), and progress_bar picks it on a terminal."""
    stream = _Terminal()
    with TickingBar(10, unit="run", stream=stream, every=0.05) as bar:
        drawn = stream.getvalue().count("\r")
        deadline = time.monotonic() + 10  # no update meanwhile; 0.3 s was too short beside a loaded machine's jobs
        while stream.getvalue().count("\r") < drawn + 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        ticked = stream.getvalue().count("\r")
        bar.update(4)
    assert ticked >= drawn + 3
    assert "4/10" in stream.getvalue()
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert isinstance(progress_bar(10, "run"), TickingBar)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert isinstance(progress_bar(10, "run"), ProgressLines)


def test_a_signal_swallowed_during_a_garbage_collection_stops_the_next_progress_update(monkeypatch):
    """The console script records each signal (``bench/running/interruption.py``); an update of either bar, or a
    progress line, raises it (again, where the first KeyboardInterrupt was lost) and counts the raise."""
    import io

    import pytest

    from sgbench.bench.cli._common import progress
    from sgbench.bench.running import interruption
    from sgbench.bench.running.progress_lines import ProgressLines, TickingBar

    bars = [ProgressLines(10, stream=io.StringIO()), TickingBar(10, stream=io.StringIO())]
    monkeypatch.setattr(interruption, "RECEIVED", [])
    monkeypatch.setattr(interruption, "RAISED", [])
    for bar in bars:
        bar.update(1)  # no signal: nothing raised
    interruption.received(2)
    for bar in bars:
        with pytest.raises(KeyboardInterrupt):
            bar.update(1)
    with pytest.raises(KeyboardInterrupt):
        progress("[1/2] done")
    assert interruption.RECEIVED == [2] and interruption.RAISED == [2, 2, 2]


def test_work_done_elsewhere_is_left_out_of_the_time_left():
    """A resumed run takes a quarter of its work from the record at once: the time left is the rest at the rate of
    the work done here (found in a smile-table2 resume: "27 % in 10 s, about 27 s left", and minutes later still
    nothing new; it was the record's quarter counted as done in 10 s)."""
    stream = io.StringIO()
    with ProgressLines(100, stream=stream, every=60) as bar:
        bar.done_elsewhere(25)
        assert bar.line().startswith("progress: 25 % (25 of 100 chain-steps) in 0 s, time left not yet known")
        bar._started -= 100  # 100 s ago
        bar.update(25)  # 25 done here in 100 s: the 50 left take 200 s (counting the record's 25 too: 100 s)
        assert bar.line().startswith("progress: 50 % (50 of 100 chain-steps) in 100 s, about 200 s left")
    terminal = _Terminal()
    with TickingBar(100, unit="run", stream=terminal, every=60) as bar:
        bar.done_elsewhere(25)
        bar.bar.start_t -= 100
        bar.bar.last_print_t -= 100
        bar.update(25)
        shown = bar.bar.format_meter(**bar.bar.format_dict)
    assert "50/100" in shown and "[01:40<03:20" in shown, shown
