"""The papers' neural-network comparisons at their real ``--scale quick``, run as a user runs them (the console
command in a process of its own, ``--jobs 2``), in the integration tier: each writes its page and its record, and the
same command run again computes nothing, takes every unit from the record and gives the same verdicts. The default
test run drives each through the command at a tiny budget instead (their own test files); these five took 14 min
45 s on 2 free cores in all (one pytest worker, ``-n 1``)."""

from __future__ import annotations

import subprocess

import pytest

from tests._signalled import sgbench

QUICK = ("smile-table2", "mile-classification", "px-table4", "px-cold-posterior", "mile-uci")


def _claims_line(stdout: str) -> str:
    """The verdicts' count line of a reproduction's output (``claims: N held, ...``)."""
    return next(line for line in stdout.splitlines() if line.startswith("claims: "))


@pytest.mark.integration
@pytest.mark.long
@pytest.mark.parametrize("name", QUICK)
def test_the_quick_scale_runs_through_the_command_and_resumes_from_its_record(tmp_path, name):
    command = sgbench("reproduce", name, "--scale", "quick", "--jobs", 2, "--db", tmp_path / "results.sqlite",
                      "--out", tmp_path)
    first = subprocess.run(command, capture_output=True, text=True, timeout=5400)
    assert first.returncode == (1 if "CONTRADICTED" in first.stdout else 0), first.stderr[-3000:]
    assert "started; finished units are kept in" in first.stderr and "finished, kept in" in first.stderr
    stem = name.replace("-", "_")
    page = (tmp_path / f"{stem}.html").read_text()
    assert "The paper&#39;s claims" in page and "data:image/png;base64" in page
    record = (tmp_path / f"{stem}_runs.jsonl").read_text()

    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert again.returncode == first.returncode, again.stderr[-3000:]
    assert "finished, kept in" not in again.stderr and "taken from" in again.stderr
    assert (tmp_path / f"{stem}_runs.jsonl").read_text() == record
    assert _claims_line(again.stdout) == _claims_line(first.stdout)
