"""``sgbench nightly``: the gate, asv on the commits since the last nightly run, the dashboard, and one summary page
of what regressed; exit status 1 on a regression.

    sgbench nightly [--results DIR] [--suite quick|full] [--config PATH] [--machine NAME] [--bench REGEX ...]
                    [--steps 10] [--here] [--quick] [--factor 1.5] [--no-asv]
                    [--executor local|dask [--scheduler A | --workers N]]

One run:

1. **Gate**: every cell of ``--suite`` against truth and the stored baselines (``sgbench gate``), its rows and
   checks in ``DIR/results.sqlite``, its page ``DIR/gate_SUITE.html``. A failed truth check is a *gate*
   regression; a failed baseline check (a metric moved beyond its tolerance) a *quality* regression.
2. **asv** on the commits since the last nightly run (``asv run --steps 10 LAST..HEAD``, then ``HEAD``: asv builds
   each commit's environment, which needs the packages' index), or on the first run on ``HEAD`` alone; ``--here``
   measures the working tree in this environment instead (``asv run --python=same``). The benchmarks are
   ``NIGHTLY_BENCHMARKS`` unless ``--bench`` gives others. Then each benchmark at ``HEAD`` against the last
   nightly commit on this machine (``sgbench.bench.perf.asv_compare``, ``--factor``): slower or failed is a *speed*
   regression.
3. **Dashboard**: ``asv publish`` into ``DIR/site`` (serve it: ``python -m http.server -d DIR/site``).
4. **Summary**: ``DIR/index.html``, the verdict, the regressions of each kind, links to the gate page, the site and
   the store, and the earlier nightly runs.

Its state, the last commit seen and every run's verdict, is ``DIR/nightly.json``; it is written only when the run
finishes, so an interrupted run is done again by the next one, whose gate reuses the cells the interrupted one
finished (``DIR/gate_SUITE_cells.jsonl``, ``sgbench.bench.gate.cell_record``) and so resumes.
"""

from __future__ import annotations

import html
import json
import subprocess
import sys
from pathlib import Path

from sgbench.base import provenance
from sgbench.base.arguments import integer_at_least
from sgbench.bench.cli._common import output_folder
from sgbench.bench.cli._executor import add_executor_options
from sgbench.bench.cli.asv import add_config_option, check_config, check_machine_name

DEFAULT_RESULTS = Path("reports") / "nightly"
DEFAULT_FACTOR = 1.5  # below the pytest-benchmark gate's 1.8 (twice the 41 % of a no-change rerun): asv's medians
STATE_FILE = "nightly.json"
# What a night measures unless --bench says otherwise (the whole asv suite takes hours): every sampler's whole run,
# optimized, 10-d icg, 10 chains; SGLD's peak memory; every sampler's statistical quality on the icg.
NIGHTLY_BENCHMARKS = (r"samplers\.TimeRun\.time_run\('\w+', 'jax', 10, 10, 'icg'\)",
                      r"samplers\.PeakMemRun\.peakmem_run\('sgld', 'jax', 10000\)",
                      r"quality\.TrackICG\.track_\w+\('\w+', 'jax'\)")
DEFAULT_STEPS = 10  # at most this many of the new commits measured (asv run --steps), HEAD always


def add_parser(commands) -> None:
    from sgbench.bench.gate.cells import GATE_SUITES

    nightly = commands.add_parser("nightly", help="gate, asv on the new commits, dashboard and a summary page; "
                                                  "exit 1 on a regression")
    nightly.add_argument("--results", type=Path, default=DEFAULT_RESULTS,
                         help=f"folder of the state, the store, the pages and the site (default: {DEFAULT_RESULTS})")
    nightly.add_argument("--suite", choices=GATE_SUITES, default="quick", help="gate suite (default: quick)")
    nightly.add_argument("--machine", help="asv machine name (default: from the host and its accelerator)")
    nightly.add_argument("--bench", action="extend", nargs="+", metavar="REGEX",
                         help="these asv benchmarks (default: every sampler's run and quality on the 10-d icg, "
                              "SGLD's peak memory; sgbench.bench.cli.nightly.NIGHTLY_BENCHMARKS)")
    nightly.add_argument("--steps", type=int, default=DEFAULT_STEPS,
                         help=f"measure at most this many of the new commits, spread evenly, HEAD always "
                              f"(default: {DEFAULT_STEPS})")
    nightly.add_argument("--here", action="store_true",
                         help="asv measures the working tree in this environment, not each new commit")
    nightly.add_argument("--quick", action="store_true",
                         help="asv measures each benchmark once (no intervals: the factor alone decides)")
    nightly.add_argument("--factor", type=float, default=DEFAULT_FACTOR,
                         help=f"a benchmark this many times slower is a regression (default: {DEFAULT_FACTOR})")
    nightly.add_argument("--no-asv", action="store_true", help="the gate alone")
    add_config_option(nightly)
    add_executor_options(nightly)
    nightly.set_defaults(handler=execute, heartbeat=True)


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()


def load_state(results: Path) -> dict:
    """The nightly state in ``results`` (``{"last_commit": None, "runs": []}`` before the first run); a
    ValueError naming the file if it is not the state this command writes."""
    path = Path(results) / STATE_FILE
    if not path.exists():
        return {"last_commit": None, "runs": []}
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ValueError(f"--results: {path} is not a nightly state file ({error}); move it away to start "
                         "afresh") from None
    if not isinstance(state, dict) or not isinstance(state.get("runs"), list) or "last_commit" not in state:
        raise ValueError(f"--results: {path} is not a nightly state file (no last_commit or runs); move it away to "
                         "start afresh")
    return state


def _asv(args, config: Path, last: str | None, head: str) -> tuple[list[str], str]:
    """Run asv on the new commits (or the working tree) and return (the commits measured, the machine)."""
    from sgbench.bench.cli.asv import asv_run_command, run_asv
    from sgbench.bench.perf.asv_machine import AsvError, register_machine

    try:
        machine = register_machine(config, name=check_machine_name(args.machine))
    except AsvError as error:
        raise RuntimeError(str(error)) from None
    benches = args.bench or list(NIGHTLY_BENCHMARKS)
    if args.here:
        commands, commits = [asv_run_command(config, machine, args.quick, benches)], [head]
    else:
        commits = _git("rev-list", "--reverse", f"{last}..{head}").split() if last else [head]
        if not commits:
            return [], machine
        base = [sys.executable, "-m", "asv", "run", "--machine", machine, "--show-stderr", "--skip-existing",
                *(["--quick"] if args.quick else []), *[item for regex in benches for item in ("--bench", regex)],
                "--config", str(config)]
        commands = ([[*base, "--steps", str(args.steps), f"{last}..{head}"]] if last else []) + [[*base, f"{head}^!"]]
    for command in commands:
        status = run_asv(command)
        if status != 0:
            raise RuntimeError(f"asv run failed with status {status}")
    return commits, machine


def execute(args, argv) -> int:
    import pandas as pd

    from sgbench.bench.cli.gate import record_gate, resumable_gate
    from sgbench.bench.gate import cell_record
    from sgbench.bench.perf import dashboard
    from sgbench.bench.perf.asv_compare import changes

    if not args.factor > 1:
        raise ValueError(f"--factor must be a number > 1, got {args.factor}")
    integer_at_least("--steps", args.steps, 1)
    results = output_folder(args.results)
    state = load_state(results)
    config = None if args.no_asv else check_config(args.config)
    head, last = provenance.head_commit(), state["last_commit"]
    started = provenance.utc_now()
    print(f"nightly at {head[:8]}, last nightly run at {last[:8] if last else 'none'}")

    outcome = resumable_gate(args, results / "results.sqlite")
    gate_verdict, gate_page, failed = record_gate(outcome, results / "results.sqlite", results)
    print(gate_verdict)
    gate_failures = failed[failed["name"] != "baseline"]
    quality = failed[failed["name"] == "baseline"]
    undecided = int((outcome.cells["outcome"] == "INCONCLUSIVE").sum())

    speed, problems, site, commits = pd.DataFrame(), [], None, []
    if config is not None:
        try:
            commits, machine = _asv(args, config, last, head)
            if last and commits:
                speed = changes(dashboard.asv_dirs(config)[0], machine, last, head, args.factor)
            site = dashboard.publish(config, results / "site")
        except (RuntimeError, ValueError, dashboard.DashboardError) as error:
            problems.append(f"asv: {error}")
        except KeyboardInterrupt:
            record = cell_record.record_path(results / "results.sqlite", args.suite)
            raise KeyboardInterrupt(f"sgbench: nightly interrupted after its gate, whose cells are kept in {record}; "
                                    "asv keeps each commit's results once all its benchmarks have run; the same "
                                    "command reuses the gate's cells and runs asv again, skipping the commits it "
                                    "kept") from None
    slower = speed[speed["change"].isin(["slower", "failed"])] if len(speed) else speed
    regressed = {"gate": len(gate_failures), "quality": len(quality), "inconclusive": undecided,
                 "speed": len(slower), "asv": len(problems)}
    passed = not any(regressed.values())
    verdict = ("no regression" if passed else "REGRESSION: " + ", ".join(f"{kind} {n}" for kind, n in
                                                                         regressed.items() if n))
    verdict += f" (commits {last[:8] if last else 'first run'}..{head[:8]}; {gate_verdict})"
    run = {"started": started, "commit": head, "since": last, "asv_commits": len(commits), "passed": passed,
           **regressed}
    page = _summary(results, verdict, passed, gate_failures, quality, speed, problems, gate_page, site,
                    state["runs"] + [run])
    state = {"last_commit": head, "runs": state["runs"] + [{**run, "page": str(page)}]}
    (results / STATE_FILE).write_text(json.dumps(state, indent=2), encoding="utf-8")
    cell_record.clear(cell_record.record_path(results / "results.sqlite", args.suite))
    print(verdict)
    print(f"summary: {page}")
    return 0 if passed else 1


def _history(runs: list):
    """The runs of the state as a table, newest first, commits shortened."""
    import pandas as pd

    frame = pd.DataFrame(runs).drop(columns=["page"], errors="ignore").iloc[::-1]
    for column in ("commit", "since"):
        frame[column] = [value[:8] if isinstance(value, str) else "" for value in frame[column]]
    return frame


def _summary(results: Path, verdict, passed, gate_failures, quality, speed, problems, gate_page, site, runs) -> Path:
    """``results/index.html``: the verdict, each kind of regression, the links, the run history."""
    from markupsafe import Markup

    from sgbench.bench.html import render_page, table

    links = [f'<li><a href="{html.escape(Path(gate_page).name)}">the gate page</a></li>',
             f"<li>the results store: <code>{html.escape(str(results / 'results.sqlite'))}</code></li>"]
    if site is not None:
        links.append(f'<li><a href="site/index.html">the asv dashboard</a> (serve it: <code>python -m http.server '
                     f'-d {html.escape(str(site))}</code>)</li>')
    columns = ["cell", "name", "statistic", "detail"]
    sections = [
        ("Links", Markup("<ul>" + "".join(links) + "</ul>")),
        ("Speed: slower or failed at this commit", table(speed[speed["change"] != "same"]) if len(speed) else
         Markup("<p>nothing compared (no earlier nightly commit measured on this machine, or --no-asv)</p>")),
        ("Quality: metrics beyond their baseline tolerance", table(quality[[c for c in columns if c in quality]])),
        ("Gate: failed truth checks", table(gate_failures[[c for c in columns if c in gate_failures]])),
        ("Nightly runs, newest first", table(_history(runs))),
    ]
    if problems:
        sections.insert(1, ("asv did not finish", Markup("<ul>" + "".join(f"<li>{html.escape(p)}</li>"
                                                                          for p in problems) + "</ul>")))
    return render_page(results / "index.html", "Nightly run", sections, headline=verdict, passed=passed)
