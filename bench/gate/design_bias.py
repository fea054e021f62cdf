r"""The design bias of every gate cell: what the method itself, at the cell's step size, gives for
the standardised mean error and the relative second-moment error (``sgbench.bench.gate.replicates``),
stored with its standard error in ``reference/data/gate_design_bias.json``.

SG-MCMC samplers are biased by design (discretisation, gradient noise, PX's prior on the
factors, an adaptive step that shrinks), so a gate against truth needs the bias the method is
allowed. It is measured once, like a gold standard, from ``groups`` x the cell's chains (32 times the
gate's run by default, so its standard error is under a fifth of a gate run's) with seeds disjoint from
the gate's, from the cell's own start and warm-up, by the command recorded in the file; the gate's truth
checks then ask whether a run agrees with truth shifted by this bias, within both standard errors
(``sgbench.bench.gate.truth``). Each entry also stores the design run's autocorrelation time
(``autocorrelation_steps``, ``sgbench.bench.gate.start``, from all its chains): a cell that must forget its start
is designed with a warm-up of at least twice what the gate's rule asks for (``tests/test_gate_outcomes.py``). For
the linear samplers on Gaussian targets the stored bias is tied to theory:
``tests/test_gate.py`` checks it against the exact discrete-time stationary covariance.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from sgbench.base import provenance
from sgbench.bench.gate.cells import Cell, select, suite
from sgbench.bench.gate.replicates import STATISTICS, run_replicates
from sgbench.bench.running.progress_event import Counted

PATH = Path(__file__).resolve().parents[2] / "reference" / "data" / "gate_design_bias.json"
SEED = 700  # the gate's own runs use seeds 0 (fixed) and 1 (reseeded); the baselines 500
DEFAULT_GROUPS = 32


class DesignBiasError(LookupError):
    """The stored design bias is missing, unreadable, or lacks a cell."""


def measure(cell: Cell, groups: int = DEFAULT_GROUPS, seed: int = SEED) -> dict:
    """The design bias of ``cell`` from ``groups`` x ``cell.num_chains`` chains: per coordinate the
    mean over all chains, its standard error (chains are independent), the median (for the
    distribution-free check of heavy-tailed cells) and the excess kurtosis of the chains' values
    (which says whether a cell is heavy-tailed); the cell's start and warm-up; and the autocorrelation
    time of all its chains (``sgbench.bench.gate.start.travel``)."""
    rep = run_replicates(cell, groups=groups, seed=seed, keep_samples=True, thin=cell.thin,
                         keep_every=cell.keep_every)
    summary = rep.summary()
    return {"sampler": cell.sampler, "params": cell.params, "target": cell.target,
            "target_params": cell.target_params, "num_steps": cell.num_steps, "num_burnin": cell.num_burnin,
            "start_scale": cell.start_scale, "thin": cell.thin,
            "autocorrelation_steps": rep.travel().autocorrelation_steps,
            **{k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in summary.items()}}


def build(suite_name: str = "quick", groups: int = DEFAULT_GROUPS, command: str = "", path: Path | None = None,
          remeasure: bool = False, sampler: str | None = None, progress=print) -> Path:
    """Measure the cells of ``suite_name`` not yet stored with their settings and statistics, and
    write them merged into the cells already stored (entries of cells in no suite are dropped); the
    file is rewritten after each cell, so an interrupted build keeps what it measured.

    Args:
        suite_name: the gate suite.
        groups: 64-chain runs per cell.
        command: the command line, stored with each cell.
        path: the file (default ``PATH``).
        remeasure: measure every cell, not only those missing.
        sampler: only the cells of this registered sampler (a new one's).
        progress: called with a line per cell.

    Returns:
        the path written.
    """
    path = PATH if path is None else Path(path)
    document = load(path) if path.exists() else {"cells": {}}
    known = {c.design_twin.name for c in suite("full")}  # the full suite holds every cell
    stored = {name: entry for name, entry in document["cells"].items() if name in known}
    twins = {c.design_twin.name: c.design_twin for c in select(suite_name, sampler=sampler) if not c.exact_law}
    cells = [c for c in twins.values() if remeasure or not _matches(c, stored.get(c.name))]
    for k, cell in enumerate(cells):
        stored[cell.name] = {**measure(cell, groups), "command": command, "git_commit": provenance.git_commit()}
        document = {"command": command, "git_commit": provenance.git_commit(), "groups": groups, "seed": SEED,
                    "created": provenance.utc_now(),
                    "cells": dict(sorted(stored.items()))}
        path.write_text(json.dumps(document, indent=1) + "\n")
        progress(Counted(k + 1, len(cells), f"{cell.name}: relative second-moment bias "
                         f"{np.round(stored[cell.name]['second_moment_error'], 4).tolist()}"))
    return path


def _matches(cell: Cell, entry: dict | None, any_start: bool = False) -> bool:
    """Whether ``entry`` was measured with ``cell``'s settings and thinning (its start and warm-up too, unless
    ``any_start``) and holds every statistic the checks read."""
    same = (entry is not None and all(k in entry for k in STATISTICS)
            and entry["params"] == json.loads(json.dumps(cell.params))
            and entry["target_params"] == json.loads(json.dumps(cell.target_params))
            and entry["num_steps"] == cell.num_steps)
    return same and (any_start or (entry.get("num_burnin") == cell.num_burnin and entry.get("thin") == cell.thin
                                   and entry.get("start_scale") == cell.start_scale))


def load(path: Path | None = None) -> dict:
    """The stored document; DesignBiasError (naming the file and the command that makes it) if
    it is missing or not the JSON this module writes."""
    path = PATH if path is None else path
    try:
        document = json.loads(Path(path).read_text())
        if not isinstance(document.get("cells"), dict):
            raise ValueError("no 'cells' mapping")
    except (OSError, ValueError) as error:
        raise DesignBiasError(f"cannot read the design bias file {path}: {error}; rebuild it with "
                              "`sgbench design-bias --suite SUITE`") from error
    return document


def of_cell(cell: Cell, document: dict, any_start: bool = False) -> dict:
    """The design bias of ``cell``: computed from its exact law for an exact-law cell
    (``sgbench.bench.gate.exact_law``), else the stored entry of its design twin (itself, or the JAX cell
    of a reference cell's settings); DesignBiasError if absent or measured with other settings.
    ``any_start``: an entry measured from another start and warm-up will do (a stationary bias, for
    chains that forgot their start: ``sgbench validate``)."""
    if cell.exact_law:
        from sgbench.bench.gate import exact_law

        return exact_law.design(cell)
    cell = cell.design_twin
    entry = document["cells"].get(cell.name)
    if entry is None:
        raise DesignBiasError(f"no design bias stored for gate cell {cell.name!r}; measure it with "
                              "`sgbench design-bias --suite SUITE`")
    if not _matches(cell, entry, any_start):
        raise DesignBiasError(f"the design bias stored for {cell.name!r} was measured with other settings "
                              f"({entry['params']}, {entry.get('num_burnin', 0)} warm-up + {entry['num_steps']} "
                              f"steps from start scale {entry.get('start_scale', 1.0)}); re-measure it")
    return entry
