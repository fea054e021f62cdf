"""``sgbench dashboard``: a tiny real asv run, its site published offline, rendered by headless Chromium.

The rendering tests need ``chromium`` on PATH (Debian: ``apt-get install -y chromium``) and the offline site,
whose JavaScript libraries ``--offline`` fetches once with npm; each skips, saying which is absent. Serving the
site (``--serve``) needs neither. Two negative checks show that the detectors fail on a page whose script throws
and on a site whose graph data is missing.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from sgbench.bench.cli import main
from sgbench.bench.perf import dashboard
from sgbench.bench.perf.asv_config import write_config

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium")
NPM = shutil.which("npm")
BENCHMARK = "sgld_icg.TimeNumpyDriver.time_run"
MACHINE = "sgbench-test-machine"
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not on PATH: the dashboard rendering "
                                                              "tests need it (`apt-get install -y chromium`)")
# Chromium logs each console message of a page as `...:CONSOLE:LINE] "MESSAGE", source: URL (LINE)`
# (older builds: `CONSOLE(LINE)]`).
CONSOLE_LINE = re.compile(r"CONSOLE[(:]\d*\)?\]\s*\"(?P<message>.*)\", source: (?P<source>\S*)")
PAGE_ERROR = re.compile(r"uncaught|error", re.IGNORECASE)


@pytest.fixture(scope="module")
def asv_results(tmp_path_factory) -> Path:
    """The config of a real `sgbench asv --quick` of one cheap benchmark, its results beside it."""
    folder = tmp_path_factory.mktemp("asv")
    config = write_config(folder)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(folder))  # asv keeps its machine file in ~/.asv-machine.json
        status = main(["asv", "--quick", "--bench", BENCHMARK, "--config", str(config), "--machine", MACHINE])
    assert status == 0
    assert dashboard.has_results(folder / "results")
    return config


@pytest.fixture(scope="module")
def published(asv_results):
    """The results' site published with --offline (npm fetches asv's JavaScript libraries once)."""
    if NPM is None:
        pytest.skip("npm is not on PATH: the offline site's JavaScript libraries are fetched with npm "
                    "(`apt-get install -y npm`)")
    config, folder = asv_results, asv_results.parent
    site = folder / "www" / "site"
    assert main(["dashboard", "--config", str(config), "--out", str(site), "--offline",
                 "--assets", str(folder / "assets")]) == 0
    return site


class RecordingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder and records ``(path, status)`` of every request in ``self.requests``."""

    def __init__(self, *args, requests: list, **kwargs):
        self.requests = requests
        super().__init__(*args, **kwargs)

    def log_request(self, code="-", size="-"):
        self.requests.append((self.path, int(code)))

    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def server(published):
    """``(base URL, requests)``: the folder above the site served on a free localhost port in a thread."""
    root = published.parent
    (root / "throws.html").write_text('<!doctype html><p id="x">x</p><script>null.boom();</script>',
                                      encoding="utf-8")
    requests: list = []
    handler = functools.partial(RecordingHandler, directory=str(root), requests=requests)
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{httpd.server_address[1]}", requests
        httpd.shutdown()
        thread.join(timeout=5)


def render(url: str, profile: Path) -> tuple[str, list[str]]:
    """``(DOM after the page's scripts ran, console messages)`` of ``url`` in headless Chromium; a tall window so
    that the summary grid draws every plot (it draws those in view)."""
    command = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--window-size=1280,4000",
               "--virtual-time-budget=10000", "--dump-dom", url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "<html" in done.stdout, f"Chromium dumped no DOM for {url}: {done.stderr[-2000:]}"
    messages = [f"{m['message']} ({m['source']})" for m in CONSOLE_LINE.finditer(done.stderr)]
    return done.stdout, messages


def page_errors(messages: list[str]) -> list[str]:
    """The console messages that report an error (uncaught exceptions, console.error text with 'error')."""
    return [message for message in messages if PAGE_ERROR.search(message)]


def failed_requests(requests, since: int, allowed=lambda path: False) -> list:
    """Requests after the first ``since`` answered with a status >= 400 whose path ``allowed`` does not excuse."""
    return [(path, code) for path, code in requests[since:] if code >= 400 and not allowed(path)]


def section(dom: str, start: str, end: str) -> str:
    """The part of ``dom`` from the marker ``start`` to the marker ``end`` ('' if ``start`` is absent)."""
    begin = dom.find(start)
    return "" if begin < 0 else dom[begin:dom.find(end, begin)]


def asv_error_message(dom: str) -> str:
    """The text of asv's error dialog (empty when asv showed no error)."""
    match = re.search(r'id="error-message"[^>]*>(.*?)</div>', dom, re.DOTALL)
    return re.sub(r"<[^>]+>", "", match.group(1)).strip() if match else ""


def graph_drew(dom: str, name: str) -> bool:
    """Whether the graph page of ``name`` drew: its title, flot's canvases and y-axis tick labels in #main-graph."""
    title = re.search(r'id="title"[^>]*>\s*([^<]*?)\s*<', dom)
    graph = section(dom, 'id="main-graph"', 'id="overview"')
    return (title is not None and title.group(1) == name and 'class="flot-base"' in graph
            and 'class="flot-overlay"' in graph and re.search(r'class="flot-tick-label[^"]*"[^>]*>[^<]+<', graph)
            is not None)


def render_without_errors(server, page: str, profile):
    """The DOM of ``page`` (a path on the test server) and the requests it made, after checking that it logged
    no page error and that asv's error dialog is empty."""
    base, requests = server
    since = len(requests)
    dom, messages = render(f"{base}{page}", profile)
    assert page_errors(messages) == []
    assert asv_error_message(dom) == ""
    return dom, requests[since:]


@needs_chromium
def test_index_page_lists_and_plots_the_benchmark(server, tmp_path):
    dom, requests = render_without_errors(server, "/site/", tmp_path / "profile")
    assert f'href="#{BENCHMARK}"' in dom
    assert 'class="flot-base"' in section(dom, f'id="summarygrid-{BENCHMARK}"', "</a>")
    # The grid asks for the summary of every benchmark; only the one that ran has one.
    assert failed_requests(requests, 0, lambda path: path.startswith("/site/graphs/summary/")
                           and BENCHMARK not in path) == []
    assert any(path.startswith("/site/vendor/flot@") for path, _ in requests)


@needs_chromium
def test_graph_page_draws_the_benchmark(server, tmp_path):
    dom, requests = render_without_errors(server, f"/site/#{BENCHMARK}", tmp_path / "profile")
    assert failed_requests(requests, 0) == []
    assert graph_drew(dom, BENCHMARK)
    assert MACHINE in dom


@needs_chromium
def test_detector_reports_a_throwing_script(server, tmp_path):
    base, _ = server
    _, messages = render(f"{base}/throws.html", tmp_path / "profile")
    assert any("Uncaught TypeError" in error for error in page_errors(messages))


@needs_chromium
def test_detector_reports_a_site_without_its_graph_data(server, published, tmp_path):
    base, requests = server
    broken = published.parent / "broken"
    shutil.copytree(published, broken)
    graphs = [path for path in (broken / "graphs").rglob(f"{BENCHMARK}.json") if "summary" not in path.parts]
    assert graphs
    for path in graphs:
        path.unlink()
    since = len(requests)
    dom, _ = render(f"{base}/broken/#{BENCHMARK}", tmp_path / "profile")
    assert not graph_drew(dom, BENCHMARK)
    assert asv_error_message(dom) != ""
    assert any(path.split("?")[0].endswith(f"{BENCHMARK}.json") for path, _ in failed_requests(requests, since))


def test_serve_publishes_and_serves_until_ctrl_c(asv_results):
    config, out = asv_results, asv_results.parent / "served"
    log = asv_results.parent / "serve.log"
    with log.open("w") as stream:
        process = subprocess.Popen([sys.executable, "-m", "sgbench.bench.cli", "dashboard", "--config", str(config),
                                    "--out",
                                    str(out), "--serve", "--port", "0"], cwd=REPO, stdout=stream, stderr=stream)
    try:
        deadline = time.monotonic() + 60
        while not (found := re.search(r"at (http://127\.0\.0\.1:\d+/)", log.read_text())):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.2)
        with urllib.request.urlopen(found.group(1) + "index.json", timeout=10) as answer:
            assert json.load(answer)["project"] == "sgmcmc-bench"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
        assert "stopped" in log.read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_no_results_is_a_usage_error(tmp_path, capsys):
    config = write_config(tmp_path)
    assert main(["dashboard", "--config", str(config), "--out", str(tmp_path / "site")]) == 2
    error = capsys.readouterr().err
    assert "no asv results" in error and "sgbench asv --quick" in error
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize(("argv", "words"), [
    (["--config", "no/such/asv.conf.json"], "--config"),
    (["--port", "8001"], "--port needs --serve"),
    (["--serve", "--port", "70000"], "--port must be in 0..65535"),
    (["--assets", "x"], "--assets needs --offline"),
])
def test_bad_dashboard_options_exit_2(tmp_path, capsys, argv, words):
    if "--config" not in argv:
        argv = [*argv, "--config", str(write_config(tmp_path))]
    assert main(["dashboard", *argv]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and words in error


def test_out_that_is_not_a_site_is_refused(tmp_path, capsys):
    config = write_config(tmp_path)
    (tmp_path / "results" / MACHINE).mkdir(parents=True)
    (tmp_path / "results" / MACHINE / "0123abcd-existing.json").write_text("{}")
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "notes.txt").write_text("not an asv site")
    assert main(["dashboard", "--config", str(config), "--out", str(keep)]) == 2
    assert "neither empty nor an asv site" in capsys.readouterr().err
    assert (keep / "notes.txt").is_file()


def test_localise_html_points_every_cdn_tag_at_vendor():
    html = "\n".join(f'<script src="{url}" integrity="sha256-x" crossorigin="anonymous" '
                     'onerror="js_load_failure()"></script>' for url in dashboard.CDN_ASSETS)
    localised = dashboard.localise_html(html + '\n<a href="https://github.com/airspeed-velocity/asv/">asv</a>')
    assert dashboard.remote_assets(localised) == []
    assert "integrity" not in localised and "crossorigin" not in localised
    assert localised.count('onerror="js_load_failure()"') == len(dashboard.CDN_ASSETS)
    assert 'src="vendor/jquery@3.3.1/dist/jquery.min.js"' in localised
    assert 'href="https://github.com/airspeed-velocity/asv/"' in localised  # links are not assets


def test_localise_html_names_an_unknown_cdn_asset():
    with pytest.raises(dashboard.DashboardError, match="https://cdn.example/lib.js"):
        dashboard.localise_html('<script src="https://cdn.example/lib.js"></script>')


def test_serve_names_a_port_it_cannot_bind(tmp_path):
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler) as taken:
        with pytest.raises(ValueError, match=f"--port {taken.server_address[1]}"):
            dashboard.serve(tmp_path, taken.server_address[1])


def _as_another_machine(results: Path, folder: Path, name: str) -> Path:
    """A copy of the asv results folder ``results`` whose one machine is renamed ``name`` (a second box)."""
    copy = folder / "results"
    (copy / name).mkdir(parents=True)
    shutil.copy2(results / "benchmarks.json", copy / "benchmarks.json")
    for file in (results / MACHINE).glob("*.json"):
        text = file.read_text(encoding="utf-8").replace(f'"{MACHINE}"', f'"{name}"')
        (copy / name / file.name).write_text(text, encoding="utf-8")
    return copy


def test_results_of_several_machines_merge_into_one_site(asv_results, tmp_path, capsys):
    other = _as_another_machine(asv_results.parent / "results", tmp_path / "gpu-box", "gpu-box-h100")
    site = tmp_path / "site"
    assert main(["dashboard", "--config", str(asv_results), "--out", str(site), "--results", str(other)]) == 0
    assert f"merged the results of 2 machines: gpu-box-h100, {MACHINE}" in capsys.readouterr().out
    index = json.loads((site / "index.json").read_text(encoding="utf-8"))
    assert set(index["params"]["machine"]) == {MACHINE, "gpu-box-h100"}
    assert list((site / "graphs").rglob("machine-gpu-box-h100/**/*.json"))
    # the same machine's file with other contents in two folders is refused, not overwritten
    clash = _as_another_machine(asv_results.parent / "results", tmp_path / "clash", MACHINE)
    result_file = next(path for path in (clash / MACHINE).glob("*.json") if path.name != "machine.json")
    result_file.write_text(result_file.read_text(encoding="utf-8").replace("{", "{ ", 1), encoding="utf-8")
    assert main(["dashboard", "--config", str(asv_results), "--out", str(tmp_path / "site2"), "--results",
                 str(clash)]) == 2
    assert "differs between" in capsys.readouterr().err
    assert main(["dashboard", "--config", str(asv_results), "--out", str(tmp_path / "site3"), "--results",
                 str(tmp_path)]) == 2
    assert "is not an asv results folder with results" in capsys.readouterr().err
