"""``sgbench dashboard [--config PATH] [--out DIR] [--results DIR ...] [--offline [--assets DIR]] [--serve]``.

It collates the asv results with ``asv publish`` into asv's static site in ``--out`` (default: the
config's ``html_dir``) and prints how to open it: the site loads its data with requests, so it needs a web server
(``python -m http.server -d DIR``), not ``file://``. ``--offline`` copies the JavaScript libraries that asv's page
loads from CDNs into the site (``sgbench.bench.perf.dashboard``), so that it opens without internet. ``--serve`` serves
the site on localhost until Ctrl-C. Without results it stops with status 2 and says to run ``sgbench asv --quick``
first. ``--results DIR ...`` adds the results folders of other machines (``sgbench.bench.perf.asv_results``): one
dashboard, the machines side by side.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from sgbench.bench.cli.asv import add_config_option, check_config
from sgbench.bench.perf import dashboard

DEFAULT_PORT = 8000


def add_parser(commands) -> None:
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
    site.add_argument("--results", type=Path, nargs="+", metavar="DIR",
                      help="asv results folders of other machines (a GPU box, CI runners), merged with this "
                           "machine's into one dashboard, the machines side by side")
    add_config_option(site)
    site.set_defaults(handler=execute)


def execute(args, argv) -> int:
    config = check_config(args.config)
    try:
        return _dashboard(args, config)
    except dashboard.DashboardError as error:
        print(f"sgbench: error: {error}", file=sys.stderr)
        return error.returncode


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


def _publish_merged(config: Path, results, out: Path, work: Path) -> Path:
    """Publish this machine's results of ``config`` (where it has any) and the folders ``results`` as one site."""
    from sgbench.bench.perf import asv_results

    own = dashboard.asv_dirs(config)[0]
    folders = ([own] if dashboard.has_results(own) else []) + [Path(folder).resolve() for folder in results]
    merged = asv_results.merge(folders, work / "results")
    print(f"merged the results of {len(merged)} machines: {', '.join(merged)}")
    return dashboard.publish(asv_results.config_for(config, work / "results", work), out)


def _dashboard(args, config: Path) -> int:
    if args.port is not None and not args.serve:
        raise ValueError("--port needs --serve")
    if args.assets is not None and not args.offline:
        raise ValueError("--assets needs --offline")
    port = check_port(args.port) if args.serve else None
    out = dashboard.asv_dirs(config)[1] if args.out is None else check_out(args.out)
    if args.results:
        with tempfile.TemporaryDirectory() as work:
            site = _publish_merged(config, args.results, out, Path(work))
    else:
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
