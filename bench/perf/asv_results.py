"""asv results of several machines in one dashboard: merge their results folders, and the config that publishes
the merged folder.

An asv results folder holds ``benchmarks.json`` (what the benchmarks are) and one folder per machine
(``MACHINE/machine.json`` and a ``COMMIT-ENVIRONMENT.json`` per run). Results measured on different machines
(this CPU box, a GPU box, CI runners) are merged by copying every machine's folder into one results folder:
the dashboard then shows the machines side by side (asv's machine selector). ``benchmarks.json`` becomes the
union of the benchmarks of all folders. The same file of one machine in two folders must be the same file:
a machine measured twice at one commit in two places is refused, not silently overwritten.
"""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path

from sgbench.bench.perf.dashboard import has_results


def machines(results_dir: Path) -> list[str]:
    """The machine folders of an asv results folder (those holding a ``machine.json``), sorted."""
    return sorted(path.parent.name for path in Path(results_dir).glob("*/machine.json"))


def merge(results_dirs, into: Path) -> list[str]:
    """Copy every machine folder of ``results_dirs`` into ``into`` and write the union of their
    ``benchmarks.json``; returns the machines merged.

    Args:
        results_dirs: asv results folders (each with ``benchmarks.json`` and machine folders).
        into: the merged folder (created; files already there are kept).

    Returns:
        the machine names, sorted.

    Raises:
        ValueError: a folder without results, or one machine's file present in two folders with different
            contents.
    """
    into = Path(into)
    into.mkdir(parents=True, exist_ok=True)
    benchmarks: dict = {}
    found = set()
    for source in map(Path, results_dirs):
        if not (source / "benchmarks.json").is_file() or not has_results(source):
            raise ValueError(f"--results: {source} is not an asv results folder with results (it needs "
                             "benchmarks.json and MACHINE/*.json, as `sgbench asv` writes)")
        for name, spec in json.loads((source / "benchmarks.json").read_text(encoding="utf-8")).items():
            benchmarks.setdefault(name, spec)  # the first folder's definition of a benchmark
        for machine in machines(source):
            found.add(machine)
            for file in sorted((source / machine).glob("*.json")):
                target = into / machine / file.name
                if target.exists() and not filecmp.cmp(file, target, shallow=False):
                    raise ValueError(f"--results: {machine}/{file.name} differs between {source} and an earlier "
                                     "folder: the same machine measured twice at one commit; rename one machine "
                                     "(sgbench asv --machine NAME) or drop one folder")
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(file, target)
    (into / "benchmarks.json").write_text(json.dumps(benchmarks, indent=2, sort_keys=True), encoding="utf-8")
    return sorted(found)


def config_for(config: Path, results_dir: Path, folder: Path) -> Path:
    """A copy of the asv config ``config`` in ``folder`` whose results are ``results_dir``, its other paths made
    absolute (asv reads them relative to the config's folder); ``asv publish`` of it publishes the merged results.

    Args:
        config: the asv config file.
        results_dir: the merged results folder.
        folder: where the copy is written.

    Returns:
        the copy's path.
    """
    from asv.util import load_json

    config = Path(config).resolve()
    data = load_json(str(config), js_comments=True)
    for key in ("repo", "benchmark_dir", "env_dir", "html_dir"):
        if key in data and not (key == "repo" and "://" in data[key]):
            data[key] = str((config.parent / data[key]).resolve())
    data["results_dir"] = str(Path(results_dir).resolve())
    copy = Path(folder) / "asv.conf.json"
    copy.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return copy

