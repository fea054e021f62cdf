r"""``sgbench conformance``: every adapter of the public SG-MCMC libraries, at each of its settings, validated.

The libraries are the modules of ``sgbench.bench.adapters`` named in ``LIBRARIES`` (blackjax, posteriors,
SGMCMCJax); their adapters are the module's :class:`~sgbench.bench.adapters.AdaptedSampler` attributes, and each
declares the :class:`~sgbench.bench.adapters.Setting` s it is run at. One *task* is one adapter at one setting:

- an adapter whose draws are the target's is run through :func:`sgbench.bench.validate.validate.validate` on the
  setting's targets, within the scale's budget per row, one target (three outcomes; held to the claimed suite
  sampler's run at the translated hyperparameters, and to truth; an adapter that claims none is held to truth
  alone, with its step ladder; an INCONCLUSIVE's remedies run within the budget, as in ``sgbench validate``);
- an adapter whose draws follow another density and carry importance weights (``log_weight``: blackjax's contour
  SGLD) is held to truth by the weighted check, :mod:`sgbench.bench.validate.weighted_truth`.

Each task gives one :class:`Row` per target: the outcome and its reason, the relative variance error
:math:`r` (worst coordinate) against the claimed reference and against truth with their intervals (estimate
:math:`\pm` the check's critical value times its standard error, the interval the check accepts at its
false-failure rate), the smallest :math:`r` the check detects with probability 0.9, and the speed of the
adapter beside the suite's implementation of the same method in the same run (gradient evaluations and
chain-steps per second, all chains together; the suite's twin is the claimed sampler's reference run, or for an
adapter that claims none the suite sampler of its ``method`` at its gate settings, run as long).

``SCALES`` sizes the runs: ``quick`` (CI: the first setting of each adapter, few chains and a small budget: it
exercises every adapter, and decides only what so little can), ``default`` (every setting, 256 JAX chains to start
and a budget of ``Scale.budget`` per row for the runs and remedies), ``full`` (4 times the chains and a larger budget).
Finished tasks are appended to a JSON-lines record as they finish and skipped when the record already holds
them (the same adapter, setting, scale with its budget, seed and library version): an interrupted run resumes.
A change of the suite's own code does not change the key: start a new record (``--record``) to measure it. Tasks run in
this process or as Dask tasks (``client``), each a ``run_task`` call.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sgbench.base import provenance
from sgbench.base.arguments import one_of
from sgbench.bench.running.progress_event import Counted
from sgbench.bench.validate.budget import Budget

if TYPE_CHECKING:  # the adapters import their libraries and JAX: `sgbench conformance --help` loads neither
    from sgbench.bench.adapters import AdaptedSampler, Setting

LIBRARIES = {"blackjax": "blackjax", "posteriors": "posteriors", "sgmcmcjax": "SGMCMCJax"}  # module: distribution
DETECT = 0.1  # the relative variance error every PASSED must resolve


@dataclasses.dataclass(frozen=True)
class Scale:
    """Chains and scored steps per backend (``jax``: all chains in one program; ``batched``: all chains in one
    eager torch update; ``numpy``: one chain at a time), how many of each adapter's settings run (None: all), and
    what each row (one target of a task) may spend on its runs and remedies (``budget``, as ``sgbench validate
    --budget`` takes it; a task of several targets has their sum, shared as validate shares it)."""

    name: str
    chains: dict
    steps: dict
    settings: int | None
    budget: str = "4min"


SCALES = {
    "quick": Scale("quick", chains={"jax": 32, "batched": 32, "numpy": 4},
                   steps={"jax": 300, "batched": 300, "numpy": 100}, settings=1,
                   budget="20s"),
    "default": Scale("default", chains={"jax": 256, "batched": 256, "numpy": 16},
                     steps={"jax": 2000, "batched": 2000, "numpy": 500}, settings=None,
                     budget="4min"),
    "full": Scale("full", chains={"jax": 1024, "batched": 1024, "numpy": 64},
                  steps={"jax": 2000, "batched": 2000, "numpy": 1000}, settings=None,
                  budget="10min"),
}


@dataclasses.dataclass(frozen=True)
class Task:
    """One adapter (``spec``, ``library:name``) at one of its settings (``setting``, its index)."""

    library: str
    spec: str
    setting: int


def library_version(library: str) -> str:
    """The installed version of ``library`` (a key of ``LIBRARIES``), or "not installed"."""
    return provenance.library_version(LIBRARIES[library])


def adapters_of(library: str) -> tuple[list[AdaptedSampler], str]:
    """The adapters of ``sgbench.bench.adapters.<library>`` in the order the module defines them, and "" (or, when
    the module cannot be imported, no adapters and the reason)."""
    from sgbench.bench.adapters import AdaptedSampler

    try:
        module = importlib.import_module(f"sgbench.bench.adapters.{library}")
    except ImportError as error:
        return [], f"sgbench.bench.adapters.{library} cannot be imported: {error}"
    return [value for value in vars(module).values() if isinstance(value, AdaptedSampler)], ""


def tasks(libraries, scale: Scale) -> tuple[list[Task], dict[str, str]]:
    """Every task of ``libraries`` at ``scale``, and per library that cannot run, why."""
    found, not_run = [], {}
    for library in libraries:
        adapters, why = adapters_of(library)
        if why:
            not_run[library] = why
        for adapter in adapters:
            count = len(adapter.settings) if scale.settings is None else min(scale.settings, len(adapter.settings))
            found += [Task(library, adapter.name, k) for k in range(count)]
    return found, not_run


def task_key(task: Task, scale: Scale, seed: int) -> str:
    """What makes a finished task reusable: the adapter, its setting (label, parameters, targets), the scale, the
    seed and the library's version (12 hex digits of a sha256)."""
    from sgbench.bench.adapters import load

    setting = load(task.spec).settings[task.setting]
    given = dataclasses.asdict(setting)
    if setting.steps_factor == 1:  # left out at its default: the records made before the field keep their keys
        del given["steps_factor"]
    text = json.dumps([task.spec, given, dataclasses.asdict(scale), seed,
                       library_version(task.library)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclasses.dataclass(frozen=True)
class Row:
    """One adapter at one setting on one target (module docstring). ``r_reference``/``r_truth``: the worst
    coordinate's relative variance error against the claimed reference's and against truth, with ``_low`` and
    ``_high`` the interval the check accepts; ``detectable``: the smallest r the deciding check finds with
    probability 0.9; ``*_per_s``: all chains together."""

    library: str
    version: str
    adapter: str
    claims: str
    setting: str
    params: dict
    probes: str
    target: str
    outcome: str
    reason: str
    chains: int
    steps: int
    r_reference: float = float("nan")
    r_reference_low: float = float("nan")
    r_reference_high: float = float("nan")
    r_truth: float = float("nan")
    r_truth_low: float = float("nan")
    r_truth_high: float = float("nan")
    detectable: float = float("nan")
    grad_evals_per_s: float = float("nan")
    chain_steps_per_s: float = float("nan")
    suite: str = ""
    suite_grad_evals_per_s: float = float("nan")
    suite_chain_steps_per_s: float = float("nan")
    seconds: float = float("nan")


def _interval(check) -> tuple[float, float, float]:
    """(r, low, high) of a second-moment check row: the estimate less what it is compared with, and that
    difference plus or minus the critical value times the standard error."""
    difference = float(check["estimate"]) - float(check["expected"])
    half = float(check["threshold"]) * float(check["standard_error"])
    return difference, difference - half, difference + half


def _speed(metrics, label: str, total_steps: int) -> tuple[float, float]:
    """(gradient evaluations per second, chain-steps per second), all chains together, of the run ``label``."""
    rows = metrics[metrics["sampler"] == label] if len(metrics) else metrics
    if not len(rows):
        return float("nan"), float("nan")
    row = rows.iloc[0]
    evals_per_s = 1e6 / float(row["microseconds_per_grad_eval"])
    return evals_per_s, evals_per_s * total_steps / float(row["grad_evals_per_chain"])


def _twin_speed(adapter: AdaptedSampler, target_key: str, chains: int, total_steps: int, seed: int):
    """The speed of the suite sampler of ``adapter``'s method (``adapter.method``) at its gate settings on the
    target, as many chains and steps (None where the adapter names none)."""
    from sgbench import samplers
    from sgbench.bench.running import run as running
    from sgbench.bench.validate import targets as validation_targets

    if adapter.method is None:
        return None
    target = validation_targets.get(target_key)
    params = dict(samplers.benchmark_settings(adapter.method).gate.icg4)
    result = running.run(adapter.method, target.target, target_params=target.params, params=params,
                         num_chains=chains, num_steps=total_steps, seed=seed)
    evals = result.trace.grad_evals.sum()
    evals_per_s = float(evals / result.trace.run_seconds)
    return f"suite {adapter.method}", evals_per_s, evals_per_s * total_steps / float(np.mean(result.trace.grad_evals))


def run_task(task: Task, scale: Scale, seed: int = 0) -> list[dict]:
    """Run one task (on this process or a Dask worker); its rows, as dicts of :class:`Row`.

    Args:
        task: the adapter and setting.
        scale: the chains and steps.
        seed: the runs' seed.

    Returns:
        one row per target of the setting.
    """
    from sgbench.bench.adapters import load

    adapter = load(task.spec)
    setting: Setting = adapter.settings[task.setting]
    chains, steps = scale.chains[adapter.backend], scale.steps[adapter.backend] * setting.steps_factor
    common = dict(library=task.library, version=library_version(task.library), adapter=adapter.name,
                  claims=adapter.claims or "none (truth alone)", setting=setting.label, params=dict(setting.params),
                  probes=setting.probes, chains=chains, steps=steps)
    started = time.perf_counter()
    if adapter.log_weight is not None:
        rows = _weighted_rows(adapter, setting, common, chains, steps, seed, scale.budget)
    else:
        targets = len([key for key in setting.targets.split(",") if key.strip()])
        rows = _validated_rows(adapter, setting, common, chains, steps, seed, Budget.parse(scale.budget).times(targets))
    seconds = time.perf_counter() - started
    return [dataclasses.asdict(dataclasses.replace(row, seconds=seconds / len(rows))) for row in rows]


def _validated_rows(adapter, setting: Setting, common: dict, chains: int, steps: int, seed: int,
                    budget: Budget) -> list[Row]:
    from sgbench.bench.validate.validate import validate

    with tempfile.TemporaryDirectory() as folder:  # validate's page is not written here; its path only
        validation = validate(adapter, dict(setting.params), targets=setting.targets, seed=seed, num_chains=chains,
                              num_steps=steps, detect=DETECT, out=Path(folder), progress=lambda line: None,
                              budget=budget)
    verdict = validation.verdict
    checks, metrics = verdict.checks, verdict.metrics
    rows = []
    for target, outcome in verdict.outcomes.items():
        values = {}
        moment = checks[(checks["target"] == target) & (checks["name"] == "second_moment")] if len(checks) else checks
        against_truth = moment["of"].str.contains("truth|gold standard") if len(moment) else []
        against_reference = moment["of"] == f"suite {adapter.claims}" if len(moment) else []
        for chosen, names in ((against_truth, ("r_truth", "r_truth_low", "r_truth_high")),
                              (against_reference, ("r_reference", "r_reference_low", "r_reference_high"))):
            found = moment[chosen] if len(moment) else moment
            if len(found):
                values.update(zip(names, _interval(found.iloc[0])))
                values["detectable"] = float(found.iloc[0]["largest_detectable"])
        on_target = metrics[metrics["target"] == target] if len(metrics) else metrics
        evals_per_s, chain_steps_per_s = _speed(on_target, adapter.name, 2 * steps)
        twin = f"suite {adapter.claims}" if adapter.claims else ""
        if twin and len(on_target[on_target["sampler"] == twin]):
            suite = (twin, *_speed(on_target, twin, 2 * steps))
        else:
            suite = _twin_speed(adapter, target, chains, 2 * steps, seed) or ("", float("nan"), float("nan"))
        rows.append(Row(**common, target=target, outcome=outcome.name, reason=verdict.reasons[target], **values,
                        grad_evals_per_s=evals_per_s, chain_steps_per_s=chain_steps_per_s, suite=suite[0],
                        suite_grad_evals_per_s=suite[1], suite_chain_steps_per_s=suite[2]))
    return rows


def _weighted_rows(adapter, setting: Setting, common: dict, chains: int, steps: int, seed: int,
                   budget: str) -> list[Row]:
    """The rows of an importance sampler: the weighted check against truth per target, its remedies within
    ``budget``; r at the worst coordinate, with the interval its second-moment check accepts (critical value times
    standard error)."""
    from sgbench.bench.validate.weighted_truth import check_weighted

    rows = []
    for target in [key.strip() for key in setting.targets.split(",") if key.strip()]:
        check = check_weighted(adapter, dict(setting.params), target_key=target, num_chains=chains, num_steps=steps,
                               seed=seed, detect=DETECT, budget=budget)
        values = {}
        errors = np.asarray(check.variance_error, dtype=float)
        if errors.size and np.all(np.isfinite(errors)):
            worst = int(np.argmax(np.abs(errors)))
            second = next(c for c in check.checks if c.name == "second_moment")
            half = float(second.threshold) * float(np.asarray(check.variance_error_se)[worst])
            values = {"r_truth": float(errors[worst]), "r_truth_low": float(errors[worst]) - half,
                      "r_truth_high": float(errors[worst]) + half, "detectable": float(np.max(check.detectable))}
        suite = _twin_speed(adapter, target, chains, 2 * steps, seed) or ("", float("nan"), float("nan"))
        rows.append(Row(**common, target=target, outcome=check.outcome.name, reason=check.reason, **values,
                        grad_evals_per_s=check.grad_evals_per_second, chain_steps_per_s=check.chain_steps_per_second,
                        suite=suite[0], suite_grad_evals_per_s=suite[1], suite_chain_steps_per_s=suite[2]))
    return rows


def finished(record: Path) -> dict[str, list[dict]]:
    """The tasks a JSON-lines record holds, by key (a missing file: none)."""
    done = {}
    if Path(record).exists():
        for line in Path(record).read_text().splitlines():
            if line.strip():
                entry = json.loads(line)
                done[entry["key"]] = entry["rows"]
    return done


def conformance(libraries=tuple(LIBRARIES), scale: str = "default", seed: int = 0,
                record: Path = Path("reports/latest/conformance/records.jsonl"), client=None, progress=print):
    """Run every task of ``libraries`` at ``scale`` not yet in ``record`` (module docstring).

    Args:
        libraries: keys of ``LIBRARIES``.
        scale: a key of ``SCALES``.
        seed: the runs' seed.
        record: the JSON-lines record, appended to as tasks finish.
        client: a ``distributed.Client`` to run the tasks on, or None (this process).
        progress: called with a line per task.

    Returns:
        (every row of the tasks, as dicts; per library that could not run, why). ValueError naming a bad
        argument, before anything runs.
    """
    for library in libraries:
        one_of("library", library, LIBRARIES)
    chosen = SCALES[one_of("scale", scale, SCALES)]
    todo, not_run = tasks(libraries, chosen)
    record = Path(record)
    record.parent.mkdir(parents=True, exist_ok=True)
    done = finished(record)
    keys = {task: task_key(task, chosen, seed) for task in todo}
    pending = [task for task in todo if keys[task] not in done]
    progress(f"conformance ({chosen.name}): {len(todo)} tasks, {len(todo) - len(pending)} already in {record}")
    for count, (task, rows) in enumerate(_results(pending, chosen, seed, client), start=1):
        with record.open("a") as file:
            file.write(json.dumps({"key": keys[task], "task": dataclasses.asdict(task), "rows": rows},
                                  default=_json_number) + "\n")
        done[keys[task]] = rows
        outcomes = ", ".join(f"{row['target']} {row['outcome']}" for row in rows)
        progress(Counted(count, len(pending), f"{task.spec} at {rows[0]['setting']!r}: {outcomes} "
                         f"({sum(row['seconds'] for row in rows):.0f} s)"))
    return [row for task in todo for row in done[keys[task]]], not_run


def _results(pending, scale: Scale, seed: int, client):
    """(task, rows) of each pending task as it finishes: in this process, or as Dask tasks."""
    if client is None:
        for task in pending:
            yield task, run_task(task, scale, seed)
        return
    from sgbench.bench.sweeps.dask_tasks import results_as_finished

    for index, rows in results_as_finished(client, run_task, [(task, scale, seed) for task in pending]):
        yield pending[index], rows


def _json_number(value):
    """NumPy numbers as Python numbers in the record."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
