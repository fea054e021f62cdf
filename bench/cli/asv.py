"""``sgbench asv [--quick] [--bench REGEX ...] [--config PATH] [--machine NAME] [-- ASV_ARG ...]``.

It registers this machine with asv under a name that says which accelerator JAX uses
(``sgbench.bench.perf.asv_machine``; ``--machine`` overrides it) and runs the suite once in this environment::

    asv run --python=same --set-commit-hash HEAD --machine NAME --show-stderr [--quick] [--bench REGEX ...]
            --config bench/perf/asv/asv.conf.json [ASV_ARG ...]

asv's output (its progress included) goes straight to the terminal, and its exit status is the command's.
``--set-commit-hash HEAD`` makes asv keep the results (with ``--python=same`` alone it discards them); they are
filed under the current commit although they measure the working tree. Ctrl-C or SIGTERM stops asv and the
benchmark processes it started (:func:`run_asv`) and says that nothing of the run was kept: asv writes a commit's
results only once all its benchmarks have run (exit 130 or 143).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from sgbench.bench.perf.asv_machine import AsvError, register_machine

DEFAULT_CONFIG = Path("bench") / "perf" / "asv" / "asv.conf.json"
MACHINE_NAME = re.compile(r"[A-Za-z0-9._-]+")
# The one-minute subset of `tox -e asv-quick` (tox.ini repeats these; tests/test_device_check.py compares them):
# SGLD's whole run on the 10-d icg (JAX and NumPy drivers), its peak memory at 10^4 chains, its statistical quality
QUICK_BENCHMARKS = (r"samplers\.Time\w+\.time_\w+\('sgld', '(jax|numpy)', 10, 10, 'icg'\)",
                    r"samplers\.PeakMemRun\.peakmem_run\('sgld', 'jax', 10000\)",
                    r"quality\.TrackICG\.track_\w+\('sgld', 'jax'\)")
STOP_SECONDS = 10  # an interrupted asv gets this long to stop after SIGTERM, then SIGKILL


def add_config_option(parser) -> None:
    """``--config``, shared with ``sgbench dashboard``."""
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG,
                        help=f"asv config file (default: {DEFAULT_CONFIG})")


def add_parser(commands) -> None:
    run = commands.add_parser("asv", help="run the asv suite once in this environment (asv run --python=same)")
    run.add_argument("--quick", action="store_true", help="each benchmark once, no statistics (asv run --quick)")
    run.add_argument("--bench", action="extend", nargs="+", metavar="REGEX",
                     help="only benchmarks whose name, or name(params), matches a REGEX (repeatable)")
    run.add_argument("--machine", help="asv machine name (default: <hostname>-cpu-<N>cores or "
                                       "<hostname>-gpu-<model>, from what JAX sees)")
    run.add_argument("asv_args", nargs="*", metavar="ASV_ARG",
                     help="after --: more `asv run` options, passed as they are (e.g. -- --durations 5)")
    add_config_option(run)
    run.set_defaults(handler=execute)


def execute(args, argv) -> int:
    config = check_config(args.config)
    try:
        name = register_machine(config, name=check_machine_name(args.machine))
    except AsvError as error:
        print(f"sgbench: error: {error}", file=sys.stderr)
        return error.returncode
    try:
        return run_asv(asv_run_command(config, name, args.quick, args.bench, args.asv_args))
    except KeyboardInterrupt:  # run_asv has stopped asv
        from sgbench.bench.perf.dashboard import asv_dirs

        raise KeyboardInterrupt(f"sgbench: asv interrupted: asv keeps a commit's results only once all its benchmarks "
                                f"have run, so nothing of this run was added to {asv_dirs(config)[0]}; run it again "
                                "(--bench REGEX runs a part)") from None


def run_asv(command: list[str]) -> int:
    """Run an asv command line to its end and return its exit status; on an interruption (KeyboardInterrupt here)
    stop asv and the benchmark processes it started (SIGTERM to its process group, SIGKILL after
    ``STOP_SECONDS``), wait for them, and raise the interruption again.

    Args:
        command: the asv command line.

    Returns:
        asv's exit status.
    """
    process = subprocess.Popen(command, start_new_session=True)  # its own group: stopped with its children
    try:
        return process.wait()
    except KeyboardInterrupt:
        for signum in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signum)
            try:
                process.wait(timeout=STOP_SECONDS)
                break
            except subprocess.TimeoutExpired:
                continue
        raise


def check_config(config: Path) -> Path:
    """``config`` made absolute (asv works from the config's folder); a ValueError if there is no such file."""
    if not Path(config).is_file():
        raise ValueError(f"--config: no asv config file at {config} (run from the repository root, or give "
                         f"--config PATH, e.g. {DEFAULT_CONFIG})")
    return Path(config).resolve()


def check_machine_name(name: str | None) -> str | None:
    """``name`` if it is a usable asv machine name (it becomes a folder name) or None; else a ValueError."""
    if name is not None and not MACHINE_NAME.fullmatch(name):
        raise ValueError(f"--machine must be letters, digits, '.', '_' or '-', got {name!r}")
    return name


def asv_run_command(config: Path, machine: str, quick: bool = False, benches=None, extra=()) -> list[str]:
    """The ``asv run`` command line of ``sgbench asv``."""
    command = [sys.executable, "-m", "asv", "run", "--python=same", "--set-commit-hash", "HEAD",
               "--machine", machine, "--show-stderr"]
    if quick:
        command.append("--quick")
    for regex in benches or ():
        command += ["--bench", regex]
    return [*command, "--config", str(config), *extra]
