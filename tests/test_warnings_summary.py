"""Warnings raised while a command runs are counted and summarised once at its end, on stderr."""

import warnings

import numpy as np

from sgbench.bench.cli import listing, main


def test_library_warnings_are_summarised_once_with_counts(monkeypatch, capsys):
    def noisy(args, argv):
        for _ in range(3):
            np.log(np.zeros(1))  # NumPy: divide by zero, three times from one line
        warnings.warn("More chains than draws", UserWarning, stacklevel=1)
        print("the command's output")
        return 0

    monkeypatch.setattr(listing, "execute", noisy)
    assert main(["list", "samplers"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "the command's output\n"
    lines = captured.err.splitlines()
    assert lines[0].startswith("sgbench: 4 warnings while this command ran")
    assert lines[1].startswith("  3 x RuntimeWarning at tests/test_warnings_summary.py:")
    assert "divide by zero" in lines[1]
    assert lines[2].startswith("  1 x UserWarning at") and lines[2].endswith("More chains than draws")
    assert len(lines) == 3


def test_a_command_without_warnings_prints_no_summary(capsys):
    assert main(["list", "suites"]) == 0
    assert capsys.readouterr().err == ""
