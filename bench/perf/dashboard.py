"""asv's dashboard of this suite: publish the results as asv's static site, make it work offline, serve it.

``publish(config, out)`` runs ``asv publish`` for an asv config file: the results under its ``results_dir`` become a
static site in ``out`` (asv's ``html_dir`` by default). The site fetches its data (``index.json``, ``graphs/...``)
with requests, so it has to be served over http (``python -m http.server -d OUT``), not opened as a file.

asv 0.6's ``index.html`` loads jQuery, flot, bootstrap, stupidtable and blueimp-md5 from public CDNs; without
internet it shows only "One or more external (JavaScript) dependencies of airspeed velocity failed to load".
``make_offline(site, assets)`` copies those libraries into ``site/vendor/`` and points ``index.html`` at the copies.
They come from the npm registry (``npm pack``, once, into the ``assets`` cache folder): the same versions, the
same bytes for jQuery, bootstrap, orderBars and md5; flot 0.8.3 unminified (the npm package has no ``.min.js``);
stupidtable 1.1.3 instead of 1.0.1 (the registry has no 1.0.1). The copies' ``integrity`` attributes are dropped:
they are served from the site's own origin.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VENDOR_DIR = "vendor"

# asv 0.6's CDN addresses -> (npm package@version, file in the package).
CDN_ASSETS = {
    "https://code.jquery.com/jquery-3.3.1.min.js":
        ("jquery@3.3.1", "dist/jquery.min.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js":
        ("flot@0.8.3", "jquery.flot.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.time.min.js":
        ("flot@0.8.3", "jquery.flot.time.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.selection.min.js":
        ("flot@0.8.3", "jquery.flot.selection.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.categories.min.js":
        ("flot@0.8.3", "jquery.flot.categories.js"),
    "https://cdn.jsdelivr.net/npm/flot-orderbars@1.0.0/js/jquery.flot.orderBars.js":
        ("flot-orderbars@1.0.0", "js/jquery.flot.orderBars.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js":
        ("stupid-table-plugin@1.1.3", "stupidtable.min.js"),
    "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js":
        ("blueimp-md5@2.19.0", "js/md5.min.js"),
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/js/bootstrap.min.js":
        ("bootstrap@3.1.1", "dist/js/bootstrap.min.js"),
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css":
        ("bootstrap@3.1.1", "dist/css/bootstrap.min.css"),
}

# A <script src=...> or <link href=...> tag that loads from another host.
REMOTE_TAG = re.compile(r"<(?:script|link)\b[^>]*?\b(?:src|href)=\"(https?://[^\"]+)\"[^>]*>", re.IGNORECASE)
CDN_ONLY_ATTRIBUTES = re.compile(r"\s+(?:integrity|crossorigin|referrerpolicy)=\"[^\"]*\"", re.IGNORECASE)


class DashboardError(RuntimeError):
    """asv or npm failed while building the site; ``returncode`` is the failed command's exit status."""

    def __init__(self, message: str, returncode: int = 1):
        super().__init__(message)
        self.returncode = returncode


def default_assets_dir() -> Path:
    """Where the npm packages of the offline site are kept: ``$XDG_CACHE_HOME/sgbench/asv-assets``
    (``~/.cache/...`` by default)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sgbench" / "asv-assets"


def asv_dirs(config: Path) -> tuple[Path, Path]:
    """``(results_dir, html_dir)`` of the asv config file ``config``, absolute (asv reads them relative to the
    config's folder); a ValueError if asv cannot read the config."""
    from asv.config import Config
    from asv.util import UserError

    config = Path(config).resolve()
    try:
        conf = Config.load(str(config))
    except (UserError, ValueError) as error:
        raise ValueError(f"--config: {config} is not a usable asv config: {error}") from None
    return (config.parent / conf.results_dir).resolve(), (config.parent / conf.html_dir).resolve()


def has_results(results_dir: Path) -> bool:
    """Whether ``results_dir`` holds an asv result file (a ``MACHINE/*.json`` other than ``machine.json``)."""
    return any(path.name != "machine.json" for path in Path(results_dir).glob("*/*.json"))


def publish_command(config: Path, out: Path) -> list[str]:
    """The ``asv publish`` command line that writes the site of ``config``'s results to the folder ``out``."""
    return [sys.executable, "-m", "asv", "publish", "--config", str(Path(config).resolve()),
            "--html-dir", str(Path(out).resolve())]


def publish(config: Path, out: Path) -> Path:
    """Run ``asv publish`` (its output goes to the terminal) and return the site's folder ``out``, absolute.

    asv deletes ``out`` first. A ValueError if there are no results; a DashboardError if asv fails.
    """
    results_dir, _ = asv_dirs(config)
    if not has_results(results_dir):
        raise ValueError(f"no asv results to publish in {results_dir}; run `sgbench asv --quick` first")
    status = subprocess.run(publish_command(config, out), check=False).returncode
    if status != 0:
        raise DashboardError(f"`asv publish` failed with status {status}", status)
    return Path(out).resolve()


def remote_assets(index_html: str) -> list[str]:
    """The addresses that ``<script src>`` and ``<link href>`` tags of ``index_html`` load from other hosts."""
    return [match.group(1) for match in REMOTE_TAG.finditer(index_html)]


def localise_html(index_html: str) -> str:
    """``index_html`` with every CDN tag pointing at ``vendor/PACKAGE@VERSION/FILE`` and without the CDN-only
    attributes; a DashboardError naming any address it has no local copy for."""
    unknown = [url for url in remote_assets(index_html) if url not in CDN_ASSETS]
    if unknown:
        raise DashboardError(f"asv's index.html loads {', '.join(unknown)}, which sgbench has no offline copy of "
                             "(a newer asv?); publish without --offline")

    def local_tag(match: re.Match) -> str:
        package, file = CDN_ASSETS[match.group(1)]
        tag = match.group(0).replace(match.group(1), f"{VENDOR_DIR}/{package}/{file}")
        return CDN_ONLY_ATTRIBUTES.sub("", tag)

    return REMOTE_TAG.sub(local_tag, index_html)


def fetch_packages(packages, assets: Path) -> None:
    """Make sure ``assets/PACKAGE@VERSION/`` holds each npm package's files (``npm pack`` for the missing ones)."""
    assets = Path(assets)
    missing = sorted({package for package in packages if not (assets / package / "package.json").is_file()})
    if not missing:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise DashboardError("--offline needs npm to fetch asv's JavaScript libraries once (e.g. "
                             "`apt-get install -y npm`), or publish without --offline")
    assets.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=assets) as work:
        done = subprocess.run([npm, "pack", "--json", "--pack-destination", work, *missing], cwd=work,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip() or "no output").splitlines()[-1]
            raise DashboardError(f"`npm pack {' '.join(missing)}` failed with status {done.returncode}: {last}",
                                 done.returncode)
        for packed in json.loads(done.stdout):
            package = f"{packed['name']}@{packed['version']}"
            unpacked = Path(work) / package
            with tarfile.open(Path(work) / packed["filename"]) as archive:
                # Python >= 3.11.4 refuses unsafe members (absolute paths, links out of the folder).
                archive.extractall(unpacked, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
            if not (assets / package).exists():
                (unpacked / "package").rename(assets / package)
    still_missing = [package for package in missing if not (assets / package / "package.json").is_file()]
    if still_missing:
        raise DashboardError(f"`npm pack` did not deliver {', '.join(still_missing)}")


def make_offline(site: Path, assets: Path | None = None) -> list[str]:
    """Copy the libraries that ``site/index.html`` loads from CDNs into ``site/vendor/`` (each file's top folder,
    so that bootstrap's CSS finds its fonts) and point the page at them; returns the packages used."""
    site = Path(site)
    assets = default_assets_dir() if assets is None else Path(assets)
    index = site / "index.html"
    html = index.read_text(encoding="utf-8")
    localised = localise_html(html)
    used = [CDN_ASSETS[url] for url in remote_assets(html)]
    fetch_packages([package for package, _ in used], assets)
    for package, file in used:
        top = Path(file).parts[0]
        source, target = assets / package / top, site / VENDOR_DIR / package / top
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    index.write_text(localised, encoding="utf-8")
    return sorted({package for package, _ in used})


def serve(directory: Path, port: int, host: str = "127.0.0.1") -> None:
    """Serve ``directory`` over http on ``host``:``port`` in the foreground until Ctrl-C (port 0: any free one).

    A ValueError naming the port if it cannot be bound. Ctrl-C (SIGINT) stops it even where the process
    was started with SIGINT ignored (a background job of a non-interactive shell, as in CI scripts).
    """
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    try:
        server = http.server.ThreadingHTTPServer((host, port), handler)
    except OSError as error:
        raise ValueError(f"--port {port}: cannot serve there: {error.strerror or error}") from None
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with server:
        print(f"serving {directory} at http://{host}:{server.server_address[1]}/ (Ctrl-C to stop)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("stopped")
