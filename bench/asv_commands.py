"""The asv commands of the ``sgbench`` command line:

    sgbench asv [--quick] [--bench REGEX ...] [--config PATH] [--machine NAME] [-- ASV_ARG ...]
    sgbench dashboard [--config PATH] [--out DIR] [--offline [--assets DIR]] [--serve [--port N]]

``asv`` registers this machine with asv under a name that says which accelerator JAX uses (``bench.perf.asv_machine``;
``--machine`` overrides it) and runs the suite once in this environment::

    asv run --python=same --set-commit-hash HEAD --machine NAME --show-stderr [--quick] [--bench REGEX ...]
            --config bench/perf/asv/asv.conf.json [ASV_ARG ...]

asv's output (its progress included) goes straight to the terminal, and its exit status is the command's.
``--set-commit-hash HEAD`` makes asv keep the results (with ``--python=same`` alone it discards them); they are
filed under the current commit although they measure the working tree.

``dashboard`` collates the results with ``asv publish`` into asv's static site in ``--out`` (default: the
config's ``html_dir``) and prints how to open it: the site loads its data with requests, so it needs a web server
(``python -m http.server -d DIR``), not ``file://``. ``--offline`` copies the JavaScript libraries that asv's page
loads from CDNs into the site (``bench.perf.dashboard``), so that it opens without internet. ``--serve`` serves the site
on localhost until Ctrl-C. Without results it stops with status 2 and says to run ``sgbench asv --quick`` first.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from bench.perf import dashboard
from bench.perf.asv_machine import AsvError, register_machine

DEFAULT_CONFIG = Path("bench") / "perf" / "asv" / "asv.conf.json"
DEFAULT_PORT = 8000
COMMANDS = ("asv", "dashboard")
MACHINE_NAME = re.compile(r"[A-Za-z0-9._-]+")


def add_parsers(commands) -> None:
    """Add ``asv`` and ``dashboard`` to the ``sgbench`` subcommands ``commands``."""
    run = commands.add_parser("asv", help="run the asv suite once in this environment (asv run --python=same)")
    run.add_argument("--quick", action="store_true", help="each benchmark once, no statistics (asv run --quick)")
    run.add_argument("--bench", action="extend", nargs="+", metavar="REGEX",
                     help="only benchmarks whose name, or name(params), matches a REGEX (repeatable)")
    run.add_argument("--machine", help="asv machine name (default: <hostname>-cpu-<N>cores or "
                                       "<hostname>-gpu-<model>, from what JAX sees)")
    run.add_argument("asv_args", nargs="*", metavar="ASV_ARG",
                     help="after --: more `asv run` options, passed as they are (e.g. -- --durations 5)")

    site = commands.add_parser("dashboard", help="publish the asv results as a static site and say how to open "
                                                 "it, or serve it (--serve)")
    site.add_argument("--out", type=Path, default=None,
                      help="site folder (default: the config's html_dir); asv replaces its contents")
    site.add_argument("--offline", action="store_true",
                      help="copy the JavaScript libraries asv loads from CDNs into the site (fetched once with npm)")
    site.add_argument("--assets", type=Path, default=None,
                      help=f"with --offline: cache of those npm packages (default: {dashboard.default_assets_dir()})")
    site.add_argument("--serve", action="store_true", help="serve the site on localhost until Ctrl-C")
    site.add_argument("--port", type=int, default=None,
                      help=f"with --serve: the port (default: {DEFAULT_PORT}; 0: any free port)")
    for sub in (run, site):
        sub.add_argument("--config", type=Path, default=DEFAULT_CONFIG,
                         help=f"asv config file (default: {DEFAULT_CONFIG})")


def run(args) -> int:
    """Dispatch ``asv`` or ``dashboard``; returns the exit status."""
    config = check_config(args.config)
    try:
        if args.command == "asv":
            name = register_machine(config, name=check_machine_name(args.machine))
            return subprocess.run(asv_run_command(config, name, args.quick, args.bench, args.asv_args),
                                  check=False).returncode
        return _dashboard(args, config)
    except (AsvError, dashboard.DashboardError) as error:
        print(f"sgbench: error: {error}", file=sys.stderr)
        return error.returncode


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


def check_out(out: Path) -> Path:
    """``out`` made absolute if asv may write the site there (asv deletes the folder first): a new or empty folder,
    or an earlier asv site; else a ValueError."""
    out = Path(out).resolve()
    if out.exists():
        if not out.is_dir():
            raise ValueError(f"--out: {out} is a file; give a folder for the site")
        if any(out.iterdir()) and not (out / "index.json").is_file():
            raise ValueError(f"--out: {out} is neither empty nor an asv site; asv publish deletes the folder "
                             "first, so give a new or empty folder")
    return out


def check_port(port: int | None) -> int:
    """``port`` (default ``DEFAULT_PORT``) if it is in 0..65535; else a ValueError."""
    port = DEFAULT_PORT if port is None else port
    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be in 0..65535 (0: any free port), got {port}")
    return port


def asv_run_command(config: Path, machine: str, quick: bool = False, benches=None, extra=()) -> list[str]:
    """The ``asv run`` command line of ``sgbench asv``."""
    command = [sys.executable, "-m", "asv", "run", "--python=same", "--set-commit-hash", "HEAD",
               "--machine", machine, "--show-stderr"]
    if quick:
        command.append("--quick")
    for regex in benches or ():
        command += ["--bench", regex]
    return [*command, "--config", str(config), *extra]


def _dashboard(args, config: Path) -> int:
    if args.port is not None and not args.serve:
        raise ValueError("--port needs --serve")
    if args.assets is not None and not args.offline:
        raise ValueError("--assets needs --offline")
    port = check_port(args.port) if args.serve else None
    out = dashboard.asv_dirs(config)[1] if args.out is None else check_out(args.out)
    site = dashboard.publish(config, out)
    if args.offline:
        packages = dashboard.make_offline(site, args.assets)
        print(f"offline: {len(packages)} libraries copied into {site / dashboard.VENDOR_DIR}")
    if args.serve:
        dashboard.serve(site, port)
        return 0
    print(f"dashboard: {site}")
    print("it loads its data with requests, so open it through a web server, not as a file:")
    print(f"  python -m http.server -d {site} {DEFAULT_PORT}    # then open http://localhost:{DEFAULT_PORT}/")
    print("or run `sgbench dashboard --serve`" + ("" if args.offline else "; without internet add --offline"))
    return 0
