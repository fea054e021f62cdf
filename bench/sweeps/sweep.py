"""Sweeps: run the entries of a suite into a results store, resuming where a previous run stopped.

Each grid point is identified by its ``(config_hash, seed)``, computed from the same validated
inputs :class:`bench.running.result.RunResult` hashes. Points already in the store are skipped; the
missing points of an entry run in one :func:`bench.run_grid` call (one compilation) and each
result is committed as soon as the call returns, so an interruption loses at most the entry
being run and never repeats a stored row.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from tqdm import tqdm

import samplers
import targets
from bench.running.result import RunResult, config_hash, params_dict
from bench.running.run import run_grid
from bench.sweeps.store import DuplicateRunError, ResultsStore
from bench.sweeps.run_suites import Entry


class Point(NamedTuple):
    """One grid point of an entry: its params dict as given and its store key."""

    params: dict
    config_hash: str
    seed: int


def points(entry: Entry) -> list[Point]:
    """The grid points of ``entry`` with their store keys (validates params and target)."""
    sampler = samplers.get(entry.sampler)
    target = targets.get(entry.target, **entry.target_params)
    return [
        Point(p, config_hash(sampler.name, params_dict(sampler.params_for(target, **p)), target.name,
                             dict(target.params), entry.config), entry.config.seed)
        for p in entry.params_grid
    ]


def _label(entry: Entry) -> str:
    return f"{entry.sampler} on {entry.target}"


def run_suite(entries, store: ResultsStore, suite_name: str | None = None,
              progress: bool = True) -> list[RunResult]:
    """Run every grid point of ``entries`` not yet in ``store`` and add it (tagged
    ``suite_name``); return the new results. A tqdm bar counts chain-steps (with their rate)
    unless ``progress`` is False (or output is not a terminal)."""
    entries = list(entries)
    planned = [points(entry) for entry in entries]  # validates every entry before running any
    missing = [[p.params for p in entry_points if not store.has(p.config_hash, p.seed)] for entry_points in planned]
    chain_steps = [len(m) * entry.config.num_chains * entry.config.total_steps for entry, m in zip(entries, missing)]
    new: list[RunResult] = []
    with tqdm(total=sum(chain_steps), unit="chain-step", unit_scale=True,
              disable=None if progress else True) as bar:
        for entry, entry_missing in zip(entries, missing):
            if not entry_missing:
                continue
            bar.set_description(f"{_label(entry)}, {len(entry_missing)} points")
            results = run_grid(entry.sampler, entry.target, target_params=entry.target_params,
                               params_grid=entry_missing, progress=bar.update, **dataclasses.asdict(entry.config))
            for result in results:
                try:
                    store.add(result, suite=suite_name)
                    new.append(result)
                except DuplicateRunError:
                    pass  # another process stored this point while this one ran it
    return new
