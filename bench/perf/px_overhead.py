r"""PX-SGHMC's time and memory overhead against SGHMC on the digits BNN (the PX paper's cost
analysis, appendix B.6 and Table 7 of the PX-SGMCMC paper: +5 % time and +1 % GPU
memory for c = d = 1 on a ResNet-20 with batch 256).

Both samplers run the practical form of the PX paper's Algorithm 3 at the same step size on
``targets.get("bnn", task="classification")`` with the JAX driver, float32, PX-SGHMC with expansion
(c, d) = (1, 1). Measured per sampler: ``us_per_chain_step`` (the best of ``--repeats`` runs,
compilation excluded), ``compile_s``, ``parameters``, ``state_bytes``, ``xla_temp_bytes``,
``xla_total_bytes``, and ``peak_rss_mb`` and ``rss_baseline_mb`` (unless ``--no-rss``); the
``overhead (relative)`` row is (PX - SGHMC) / SGHMC. Run::

    sgbench px-overhead [--chains 10] [--steps 2000] [--repeats 5] [--batch-size 32]

Timings depend on the machine and its load; the run prints its settings with the table.

What each column measures, and the measured overhead: docs/performance.md, section sgbench.bench.perf.px_overhead.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import jax
import numpy as np
import pandas as pd

from sgbench import samplers, targets
from sgbench.bench.running.config import RunConfig
from sgbench.bench.running.jax_driver import CompiledGrid

STEP_SIZE = 3e-4  # PX table 11's SGHMC peak step size (PX-SGHMC: 1e-4); the timing does not depend on it
SAMPLERS = {
    "sghmc": dict(step_size=STEP_SIZE, form="practical", friction=100.0),
    "px_sghmc": dict(step_size=STEP_SIZE),  # expansion (1, 1), friction 100 and 1 by default
}
SEED = 0


def bnn_params(hidden, batch_size) -> dict:
    params = {"task": "classification", "hidden": tuple(hidden)}
    if batch_size is not None:
        params["noise_batch_size"] = batch_size
    return params


def measure(name: str, target_params: dict, num_chains: int, num_steps: int, repeats: int,
            dtype: str = "float32") -> dict:
    """Time and state size of ``name`` (a key of ``SAMPLERS``) on the BNN of ``target_params``."""
    target = targets.get("bnn", **target_params)
    sampler = samplers.get(name)
    params = sampler.params_for(target, **SAMPLERS[name])
    config = RunConfig(num_chains=num_chains, num_steps=num_steps, seed=SEED, dtype=dtype)
    positions = target.check_positions(target.initial_position(), num_chains)
    program = CompiledGrid(sampler, target, [params], config, positions)
    trace = program()[0]  # the first execution, outside the timed runs
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        program()
        seconds.append(time.perf_counter() - start)
    analysis = program.memory_analysis()
    state = program._carry0.state
    sampled = state.base.position if hasattr(state, "base") else state.position
    return {
        "us_per_chain_step": 1e6 * min(seconds) / (num_chains * num_steps),
        "compile_s": program.compile_seconds,
        "parameters": int(np.shape(sampled)[-1]),
        "state_bytes": int(sum(np.asarray(leaf).nbytes for leaf in jax.tree.leaves(state))),
        "xla_temp_bytes": int(analysis.temp_size_in_bytes),
        "xla_total_bytes": int(analysis.temp_size_in_bytes + analysis.argument_size_in_bytes
                               + analysis.output_size_in_bytes),
        "diverged_chains": int(np.sum(trace.nonfinite_steps > 0)),
    }


_CHILD = """
import json, resource, sys
from sgbench import bench, samplers, targets
from sgbench.bench.perf.px_overhead import SAMPLERS, SEED
name, target_params, num_chains, num_steps, dtype, do_run = json.loads(sys.argv[1])
target = targets.get("bnn", **target_params)
params = samplers.get(name).params_for(target, **SAMPLERS[name])
if do_run:
    bench.run(name, target, params=params, num_chains=num_chains, num_steps=num_steps, seed=SEED, dtype=dtype)
try:  # VmHWM: this process's own high-water mark (ru_maxrss keeps the parent's across exec on Linux)
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    print(int(status["VmHWM"].split()[0]))
except OSError:
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_rss_mb(name: str, target_params: dict, num_chains: int, num_steps: int, dtype: str = "float32",
                run: bool = True) -> float:
    """Peak RSS (MB) of a fresh process that builds the target and the parameters and, if ``run``,
    makes one whole ``bench.run``."""
    payload = json.dumps([name, target_params, num_chains, num_steps, dtype, run])
    out = subprocess.run([sys.executable, "-c", _CHILD, payload], check=True, capture_output=True, text=True)
    return int(out.stdout.strip().splitlines()[-1]) / 1024  # kilobytes


def overhead_table(num_chains: int = 10, num_steps: int = 2000, repeats: int = 5, hidden=(16, 16),
                   batch_size: int | None = None, rss: bool = True, dtype: str = "float32") -> pd.DataFrame:
    """One row per sampler (columns: the measurements above) and the relative overhead of PX-SGHMC."""
    target_params = bnn_params(hidden, batch_size)
    rows = {}
    for name in SAMPLERS:
        rows[name] = measure(name, target_params, num_chains, num_steps, repeats, dtype)
        if rss:
            rows[name]["peak_rss_mb"] = peak_rss_mb(name, target_params, num_chains, num_steps, dtype)
            rows[name]["rss_baseline_mb"] = peak_rss_mb(name, target_params, num_chains, num_steps, dtype, run=False)
    table = pd.DataFrame(rows).T
    numeric = [c for c in table.columns if c not in ("compile_s", "diverged_chains")]
    overhead = (table.loc["px_sghmc", numeric].astype(float) - table.loc["sghmc", numeric].astype(float)) \
        / table.loc["sghmc", numeric].astype(float)
    table.loc["overhead (relative)"] = overhead
    return table
