"""A command run as the console script runs it (``python -m sgbench.bench.cli``, SIGINT not ignored, as on a
terminal), signalled once a line of its output shows the moment: the subprocess tests of interruptions
(``tests/test_signals.py``, ``tests/test_gate_resume.py``)."""

from __future__ import annotations

import signal
import subprocess
import sys


def sgbench(*args) -> list[str]:
    """The command line of ``sgbench ARGS`` in this interpreter."""
    return [sys.executable, "-m", "sgbench.bench.cli", *map(str, args)]


def signalled_when(command: list[str], moment, signum=signal.SIGINT, stream: str = "stderr",
                   env: dict | None = None) -> tuple[int, str]:
    """Run ``command``, send ``signum`` at its first line of ``stream`` for which ``moment(line)`` is true, and wait.

    Args:
        command: the command line.
        moment: a predicate on one output line (with its newline).
        signum: the signal to send.
        stream: "stderr" (progress lines) or "stdout".
        env: its environment (default: this one).

    Returns:
        (its exit status, its whole stderr).
    """
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = []
    for line in getattr(process, stream):
        seen.append(line)
        if moment(line):
            process.send_signal(signum)
            break
    stderr = process.communicate(timeout=120)[1]
    return process.returncode, ("".join(seen) if stream == "stderr" else "") + stderr
