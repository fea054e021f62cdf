"""Progress where no bar can be drawn (``sgbench.bench.running.progress_lines``): a line before any work, one at
least every ``every`` seconds while nothing reports (a long compilation), and one at the end; ``sgbench run``
with stderr not a terminal prints them."""

from __future__ import annotations

import io
import time

from sgbench.bench.cli import main
from sgbench.bench.running.progress_lines import ProgressLines


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


def test_sgbench_run_piped_prints_progress_lines(tmp_path, capsys):
    status = main(["run", "--suite", "tiny", "--db", str(tmp_path / "r.sqlite"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 0
    lines = [line for line in err.splitlines() if line.startswith("progress: ")]
    assert lines[0].startswith("progress: 0 %") and lines[-1].startswith("progress: 100 %")
