"""An asv config file that keeps a run's results, environments and site in one folder of its own.

``write_config(folder)`` writes ``folder/asv.conf.json`` for this repository's asv benchmarks
(``bench/perf/asv/benchmarks``) with ``results_dir`` ``folder/results``, ``env_dir`` ``folder/env`` and ``html_dir``
``folder/html``, graphing the branch checked out. ``sgbench device-check`` records its asv part there, so its results
can be carried to another machine and merged into the dashboard (``sgbench dashboard --results folder/results``);
the tests use it for a throw-away asv run.
"""

from __future__ import annotations

import json
from pathlib import Path

from sgbench.base import provenance

REPOSITORY = Path(__file__).resolve().parents[2]  # bench/perf/ -> the repository (sgbench/bench links to bench/)
BENCHMARKS = Path("bench") / "perf" / "asv" / "benchmarks"
TIMEOUT_SECONDS = 120


def write_config(folder: Path, repository: Path = REPOSITORY, timeout_seconds: int = TIMEOUT_SECONDS) -> Path:
    """Write ``folder/asv.conf.json`` (module docstring) and return its path.

    Args:
        folder: where the config, and asv's results, environments and site, go (made if missing).
        repository: the repository whose benchmarks run (default: the one this file is in).
        timeout_seconds: asv's ``default_benchmark_timeout``.

    Returns:
        the config's path. ValueError when ``repository`` has no asv benchmarks (an installed package without
        its repository).
    """
    repository, folder = Path(repository).resolve(), Path(folder).resolve()
    benchmarks = repository / BENCHMARKS
    if not benchmarks.is_dir():
        raise ValueError(f"no asv benchmarks at {benchmarks}: asv runs from a checkout of the repository "
                         "(pip install -e .)")
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "asv.conf.json"
    config.write_text(json.dumps({
        "version": 1, "project": "sgmcmc-bench", "repo": str(repository), "dvcs": "git",
        "branches": [provenance.checked_out_branch(repository)], "environment_type": "virtualenv", "pythons": ["3.11"],
        "matrix": {}, "benchmark_dir": str(benchmarks), "env_dir": str(folder / "env"),
        "results_dir": str(folder / "results"), "html_dir": str(folder / "html"),
        "default_benchmark_timeout": timeout_seconds,
    }, indent=1), encoding="utf-8")
    return config
