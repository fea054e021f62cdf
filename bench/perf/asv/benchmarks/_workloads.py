"""What the asv benchmarks run: the implementation of a (sampler, backend) pair, its target, its
hyperparameters (``asv_params``), the length of a whole run, and the memory rule that skips what cannot fit.
Shared by ``samplers.py`` (timings, peak memory) and ``quality.py`` (statistical quality).

Hyperparameters (``asv_params``): a registered sampler runs its ``speed`` settings (its file's
``BenchmarkSettings``) on every asv target (``ASV_TARGETS``), except on the targets its ``asv`` setting names,
where it runs what it declares there (e.g. a smaller step on linreg or the bnn); an adapter runs its
``ADAPTER_SETTINGS`` entry. A new asv target thus edits no sampler file: every sampler runs its speed settings on
it until its file declares otherwise. The names a file declares are checked here, where asv reads them: an
unknown target is an error naming the sampler; so is a target on which the speed settings are not valid
hyperparameters (``Implementation.params``: the sampler's ``prepare`` rejects them), naming what to declare.

Backends (the ``backend`` parameter):

- ``jax``: the suite's optimized implementation (``optimized_step``) under the JAX driver
  (``sgbench.bench.running.jax_driver.CompiledGrid``), float32;
- ``numpy``: the suite's reference implementation (``reference_step``) under the NumPy driver
  (``sgbench.bench.running.numpy_driver.run_chains``), float64, one chain at a time;
- ``blackjax``: the blackjax adapter that claims the sampler (``AdaptedSampler.claims``; adapters of
  sgld, sghmc, sgnht, mclmc), on the JAX driver, float32;
- ``posteriors``: the posteriors adapter that claims it (sgld, sghmc, sgnht, sglrw), on the NumPy
  driver; ``posteriors_baoa``: posteriors' BAOA, which claims sghmc (with the splitting
  integrator), the second posteriors implementation of that sampler.

A pair without an implementation raises NotImplementedError (asv's skip) saying why.

Timing targets (``timing_target``):

- ``icg``: ``targets.get("icg", dim=D, noise="isotropic", noise_variance=256.0)`` for D <= 1000. At
  D = 10^5 the icg cannot be built (its dense rotation, covariance, precision and Cholesky factor
  take 80 GB each), so the rotation-free icg of ``_diagonal_icg.py`` stands in: the same
  eigenvalues and noise, O(D) gradients;
- ``bnn``: ``targets.get("bnn", task="classification", hidden=(H, H))`` (digits, 64-H-H-10, minibatch
  noise of 32), H chosen so that the parameter count H^2 + 76 H + 10 is nearest to D (D = 1000:
  H = 11, 967 parameters; D = 10^5: H = 280, 99 690). D = 10 is impossible (H = 1 has 87).

PX samplers need layer matrices: on the icg they run through the ``wrapper`` their files declare
(``single_layer``: one 1 x D layer, expanded with a D x D factor), on the bnn on its own layers.
Control-variate samplers are centred at the target's initial position in the timings (the icg's mean, which is its mode;
the bnn's random initialisation), so no MAP search precedes them; their cost per step does not
depend on the centre.

Length of a whole run (``run_steps``): a fixed work budget in chain-coordinate-steps,

    steps = clamp(RUN_BUDGET[driver] // (chains * (D + STEP_OVERHEAD[driver])), MIN_STEPS, MAX_STEPS)

with the JAX driver's budget 2^24, no overhead, 10 to 10^5 steps (10 chains on the 10-d icg: 10^5
steps, the length of the speed figure in docs/performance.md), and the NumPy driver's 2^20, 1 to 1000 steps and
an overhead of 1000 coordinates per chain-step: its Python loop has a fixed cost per chain-step
(30 to 140 us at d = 10 in the table of docs/performance.md), which the arithmetic of a coordinate matches only
at about d = 1000. The work (chains x steps x coordinates) of a run is then about the same at
every size, and the whole grid stays feasible.

Memory (``check_memory``): a combination whose estimated memory exceeds ``MEMORY_LIMIT_BYTES`` (4 GiB)
is skipped with NotImplementedError giving the estimate. The estimates count the sampler's state
(its shapes from ``jax.eval_shape``), one step's random numbers, and, for a whole JAX run, the
driver's float64 running moments (4 arrays of chains x D, held twice) and one block of draws and
positions. The JAX driver's ``block_size`` (steps of random numbers drawn at once; by default the largest up to 1024
that divides the steps) is lowered so that a block holds at most 2^26 numbers (``block_size``).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math

import jax
import jax.numpy as jnp
import numpy as np

from sgbench import samplers, targets
from sgbench.base.arguments import one_of
from sgbench.bench.perf.speed_workload import JAX_DTYPE, SEED, TARGET_PARAMS  # noqa: F401 (SEED: workloads.SEED)
from sgbench.samplers._contract import GradientOracle

from ._diagonal_icg import DiagonalICG

DIMS = (10, 1000, 100_000)
CHAINS = (1, 10, 1000)
TIMING_TARGETS = ("icg", "bnn")
# Every target the suite runs a sampler on: the timing targets and the quality ones (quality.QUALITY_TARGETS).
ASV_TARGETS = ("icg", "rosenbrock", "linreg", "bnn")
BACKENDS = ("jax", "numpy", "blackjax", "posteriors", "posteriors_baoa")
# the speed figure's gradient noise (SMILE appendix C), seed and JAX dtype, at every size of the grid
ISOTROPIC_NOISE = {key: value for key, value in TARGET_PARAMS.items() if key != "dim"}
DENSE_ICG_MAX_DIM = 1000
BNN_TASK = "classification"  # digits: 64 inputs, 10 classes

RUN_BUDGET = {"jax": 2**24, "numpy": 2**20}  # chain-coordinate-steps of one whole run
STEP_OVERHEAD = {"jax": 0, "numpy": 1000}  # per chain-step, in coordinates
MIN_STEPS = {"jax": 10, "numpy": 1}
MAX_STEPS = {"jax": 100_000, "numpy": 1000}
MEMORY_LIMIT_BYTES = 4 * 2**30
FLOAT_BYTES = {"float32": 4, "float64": 8}
MOMENT_BYTES = 4 * 8  # the drivers' running moments: 4 float64 numbers per coordinate
BLOCK_NUMBERS = 2**26  # at most this many random numbers and positions in one block of the JAX driver
DEFAULT_BLOCK_SIZE = 1024

# Adapter modules and the attributes that are adapters, per backend label.
ADAPTERS = {
    "blackjax": ("sgbench.bench.adapters.blackjax", ("sgld", "sghmc", "sgnht", "mclmc")),
    "posteriors": ("sgbench.bench.adapters.posteriors", ("sgld", "sghmc", "sgnht", "sglrw")),
    "posteriors_baoa": ("sgbench.bench.adapters.posteriors", ("baoa",)),
}

# Hyperparameters per implementation and target: a suite sampler's are its file's (``asv_params``: its
# ``BenchmarkSettings.speed``, or its ``asv`` entry where the speed settings do not fit the target,
# ``samplers/_benchmarks.py``), an adapter's (by its name) are here. Chosen
# by 20-chain probes of 10^5 gradient evaluations (5000 steps on the bnn) among a few step sizes per
# target, keeping every chain finite; every quality run (quality.py: 50 chains, 2 x 10^5 gradient
# evaluations, 10^3 for posteriors) then had no diverged chain, and track_diverged_chains watches it.
# - icg (10-d, eigenvalues 1e-2 to 1e2, isotropic noise of variance 256): step 1e-2, as in
#   tests/benchmarks/test_bench_samplers.py, whose speed figures these continue; the PX samplers
#   smaller (the expansion's preconditioning makes larger steps diverge). The eigenvalues do not
#   depend on the dimension, so the same steps hold at every D. The gate's settings (``gate.icg4``)
#   are for a 4-d icg with condition number 4 and do not fit (SGLD's 0.02 is at the edge of
#   stability at precision 100).
# - rosenbrock (10-d, Q = 0.1, the same noise): curvatures up to ~300 in the banana's arms; Langevin
#   steps of 1e-2 diverge there, 3e-3 do not (clipped SGLD 1e-3).
# - linreg (N = 1000, d = 20, minibatches of 32): the largest precision is about 10^3; Langevin steps
#   3e-5 (1e-4 is stable but biased: b^2 0.02), momentum samplers with more friction.
# - bnn (digits 64-H-H-10, minibatches of 32 of 1258, timing only): Langevin steps 1e-4; SGHMC and
#   SGNHT in the practical form (PX Algorithms 3-4: step size epsilon, friction rate gamma) at PX
#   table 11's step 3e-4 and friction 100 (PX-SGHMC 1e-4).
# - Adapters: blackjax's and posteriors' SGHMC and SGNHT are explicit Euler, stable only when
#   step * precision < friction (samplers/_hamiltonian.py); their steps and alphas equal the suite's
#   practical-form steps and frictions (diffusions for SGNHT), which to_reference translates to the
#   Chen form h = epsilon^2, per-step friction alpha * epsilon. blackjax's SGHMC makes its default 10
#   integration steps (10 gradients) per step. posteriors' num_data is 1 (the suite's scale).
ADAPTER_SETTINGS: dict[str, dict[str, dict]] = {
    "blackjax:sgld": {"icg": {"step_size": 1e-2}, "rosenbrock": {"step_size": 3e-3}, "linreg": {"step_size": 3e-5},
                      "bnn": {"step_size": 1e-4}},
    "blackjax:sghmc": {"icg": {"step_size": 1e-2, "alpha": 10.0}, "rosenbrock": {"step_size": 1e-2, "alpha": 10.0},
                       "linreg": {"step_size": 1e-3, "alpha": 100.0}, "bnn": {"step_size": 3e-4, "alpha": 100.0}},
    "blackjax:sgnht": {"icg": {"step_size": 1e-2, "alpha": 1.0}, "rosenbrock": {"step_size": 1e-2, "alpha": 1.0},
                       "linreg": {"step_size": 3e-3, "alpha": 1.0}, "bnn": {"step_size": 3e-4, "alpha": 100.0}},
    "blackjax:mclmc": {"icg": {"step_size": 0.1, "L": 3.0}, "rosenbrock": {"step_size": 0.1, "L": 3.0},
                       "linreg": {"step_size": 0.01, "L": 0.2}, "bnn": {"step_size": 1e-2, "L": 1.0}},
    "posteriors:sgld": {"icg": {"lr": 1e-2}, "rosenbrock": {"lr": 3e-3}, "linreg": {"lr": 3e-5}, "bnn": {"lr": 1e-4}},
    "posteriors:sglrw": {"icg": {"lr": 1e-2}, "rosenbrock": {"lr": 3e-3}, "linreg": {"lr": 3e-5}, "bnn": {"lr": 1e-4}},
    "posteriors:sghmc": {"icg": {"lr": 1e-2, "alpha": 10.0}, "rosenbrock": {"lr": 1e-2, "alpha": 10.0},
                         "linreg": {"lr": 1e-3, "alpha": 100.0}, "bnn": {"lr": 3e-4, "alpha": 100.0}},
    "posteriors:sgnht": {"icg": {"lr": 1e-2, "alpha": 1.0}, "rosenbrock": {"lr": 1e-2, "alpha": 1.0},
                         "linreg": {"lr": 3e-3, "alpha": 1.0}, "bnn": {"lr": 3e-4, "alpha": 100.0}},
    "posteriors:baoa": {"icg": {"lr": 1e-2, "alpha": 10.0}, "rosenbrock": {"lr": 1e-2, "alpha": 10.0},
                        "linreg": {"lr": 1e-3, "alpha": 100.0}, "bnn": {"lr": 3e-4, "alpha": 100.0}},
}


@dataclasses.dataclass(frozen=True)
class Implementation:
    """The implementation of the suite sampler ``sampler_name`` that the ``backend`` label names:
    ``sampler`` (a registered sampler or an adapter) runs under the ``driver`` ("jax" or "numpy")."""

    sampler_name: str
    backend: str
    sampler: samplers.Sampler
    driver: str

    @property
    def dtype(self) -> str:
        return JAX_DTYPE if self.driver == "jax" else "float64"

    def params(self, target_kind: str, target, timing: bool):
        """Validated hyperparameters on ``target`` (of ``target_kind``) from ``asv_params``; in
        ``timing`` workloads a control variate is centred at the initial position (no MAP search).

        Args:
            target_kind: one of ``ASV_TARGETS``.
            target: the target the chains run on, as the sampler sees it (``for_sampler``).
            timing: a timing workload (centre a control variate at the initial position).

        Returns:
            the sampler's validated ``Params``.

        Raises:
            SpeedSettingsDoNotFitError: a suite sampler whose speed settings (its default on a target its
                ``asv`` setting does not name) are rejected on ``target``; it names what to declare.
            ValueError: declared hyperparameters that the sampler rejects on ``target``.
        """
        given = dict(asv_params(self.sampler.name, target_kind))
        if timing and "centre" in {f.name for f in dataclasses.fields(self.sampler.Params)}:
            given.setdefault("centre", target.initial_position())
        try:
            return self.sampler.params_for(target, **given)
        except ValueError as error:
            if self.sampler.name in ADAPTER_SETTINGS:
                raise
            declared = samplers.benchmark_settings(self.sampler.name)
            if target_kind in declared.asv:
                raise
            raise SpeedSettingsDoNotFitError(
                f"sampler {self.sampler.name!r} cannot run the asv target {target_kind!r} with its speed settings "
                f"{declared.speed!r} ({error}): declare its hyperparameters on {target_kind!r} in its file, "
                f"`benchmarks = samplers.BenchmarkSettings(..., asv={{{target_kind!r}: {{...}}}})`") from error


def implementation(sampler_name: str, backend: str) -> Implementation:
    """The implementation of ``sampler_name`` (a registered sampler) for ``backend`` (one of
    ``BACKENDS``); NotImplementedError where the backend's library has none."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend in ("jax", "numpy"):
        return Implementation(sampler_name, backend, samplers.get(sampler_name), backend)
    module_name, attributes = ADAPTERS[backend]
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:  # torch or posteriors missing
        raise NotImplementedError(f"backend {backend!r} cannot be imported: {error}") from None
    for attribute in attributes:
        adapter = getattr(module, attribute)
        if adapter.claims == sampler_name:
            # a batched adapter is timed one chain at a time, as its asv history was (its batched speed is in
            # sgbench conformance's speed column)
            return Implementation(sampler_name, backend, adapter, "jax" if adapter.backend == "jax" else "numpy")
    claimed = ", ".join(getattr(module, a).claims for a in attributes)
    raise NotImplementedError(f"backend {backend!r} has no implementation of {sampler_name!r}: its adapters "
                              f"({module_name}: {', '.join(attributes)}) claim {claimed}")


class SpeedSettingsDoNotFitError(ValueError):
    """A sampler's speed settings, its default on an asv target, are not valid hyperparameters on that target."""


def asv_params(name: str, target_kind: str) -> dict:
    """The hyperparameters of implementation ``name`` on the asv target ``target_kind``.

    Args:
        name: a registered sampler or an adapter (a key of ``ADAPTER_SETTINGS``).
        target_kind: one of ``ASV_TARGETS``.

    Returns:
        a registered sampler's ``BenchmarkSettings.asv[target_kind]`` where its file declares it, its
        ``BenchmarkSettings.speed`` otherwise; an adapter's ``ADAPTER_SETTINGS[name][target_kind]``.

    Raises:
        ValueError: ``target_kind`` is not an asv target, or the sampler's file declares asv hyperparameters
            for a target the suite does not have (a misspelt name would silently run the speed settings).
        MissingBenchmarkSettingsError: a registered sampler whose file declares no benchmark settings (a new
            sampler must say how it is benchmarked: the benchmark fails, it is not skipped).
        LookupError: an adapter without hyperparameters for ``target_kind``.
    """
    one_of("asv target", target_kind, ASV_TARGETS)
    if name in ADAPTER_SETTINGS:
        if target_kind not in ADAPTER_SETTINGS[name]:
            raise LookupError(f"adapter {name!r} has no hyperparameters for target {target_kind!r} (ADAPTER_SETTINGS)")
        return ADAPTER_SETTINGS[name][target_kind]
    settings = samplers.benchmark_settings(name)
    unknown = sorted(set(settings.asv) - set(ASV_TARGETS))
    if unknown:
        raise ValueError(f"sampler {name!r} declares asv hyperparameters for {', '.join(map(repr, unknown))}, "
                         f"which the asv suite does not run; its targets are {', '.join(ASV_TARGETS)}")
    return settings.asv.get(target_kind, settings.speed)


# --- targets ------------------------------------------------------------------------------------------------------


def bnn_parameters(hidden: int) -> int:
    """Parameters of the digits network 64-H-H-10: 64H + H + H^2 + H + 10H + 10."""
    return hidden * hidden + 76 * hidden + 10


def bnn_hidden_width(dim: int) -> int:
    """The width H of two equal hidden layers whose parameter count is nearest to ``dim`` (the
    smaller H on a tie); NotImplementedError where even H = 1 has more than ``dim`` parameters."""
    if bnn_parameters(1) > dim:
        raise NotImplementedError(f"the bnn has no size near dim={dim}: the smallest digits network (64-1-1-10) "
                                  f"already has {bnn_parameters(1)} parameters")
    width = max(1, int((-76 + math.sqrt(76**2 - 4 * (10 - dim))) / 2))
    return min((width, width + 1), key=lambda h: abs(bnn_parameters(h) - dim))


@functools.lru_cache(maxsize=4)
def timing_target(kind: str, dim: int):
    """The target of the timing benchmarks (see the module docstring), built once per process."""
    if kind == "icg":
        if dim <= DENSE_ICG_MAX_DIM:
            return targets.get("icg", dim=dim, **ISOTROPIC_NOISE)
        return DiagonalICG(dim=dim, **ISOTROPIC_NOISE)
    if kind == "bnn":
        return targets.get("bnn", task=BNN_TASK, hidden=(bnn_hidden_width(dim),) * 2)
    raise ValueError(f"target must be one of {', '.join(TIMING_TARGETS)}, got {kind!r}")


def for_sampler(implementation: Implementation, target):
    """``target`` as ``implementation``'s suite sampler sees it: a vector target adapted by the
    ``wrapper`` its file declares (one layer for a PX sampler); a target with layers (the bnn) as it is."""
    if getattr(target, "layer_shapes", None) is not None:
        return target
    return targets.adapted(target, samplers.benchmark_settings(implementation.sampler_name).wrapper)


# --- run length and memory ----------------------------------------------------------------------------------------


def run_steps(driver: str, chains: int, dim: int) -> int:
    """Steps of a whole run of ``chains`` chains in ``dim`` dimensions (rule in the module docstring)."""
    steps = RUN_BUDGET[driver] // (chains * (dim + STEP_OVERHEAD[driver]))
    return int(min(max(steps, MIN_STEPS[driver]), MAX_STEPS[driver]))


def block_size(chains: int, numbers_per_step: int) -> int:
    """The JAX driver's block size: at most ``BLOCK_NUMBERS`` numbers per block, at most the default."""
    return int(min(max(BLOCK_NUMBERS // (chains * numbers_per_step), 1), DEFAULT_BLOCK_SIZE))


def run_block_size(implementation: Implementation, target, params, chains: int) -> int:
    """``block_size`` for a JAX run: a block holds each step's draws and emitted positions."""
    return block_size(chains, draw_numbers(implementation.sampler, target, params) + target.dim)


def draw_numbers(sampler, target, params) -> int:
    """Random numbers one step of one chain consumes (the sampler's and the gradient's)."""
    spec = {"sampler": sampler.draw_spec(target.dim, params), "gradient": target.draw_spec}
    leaves = jax.tree.leaves(spec, is_leaf=lambda v: isinstance(v, samplers.Variate))
    return sum(math.prod(v.shape) for v in leaves)


def state_numbers(sampler, target, params) -> int:
    """Numbers in one chain's state after ``Sampler.start`` (shapes only, nothing allocated; an adapter
    whose start cannot be traced, a torch library's, is started on zeros)."""
    try:
        shapes = jax.eval_shape(lambda x: sampler.start(x, params, GradientOracle.exact(target)),
                                jax.ShapeDtypeStruct((target.dim,), jnp.float64))
    except Exception:  # noqa: BLE001  (untraceable NumPy/torch code)
        shapes = sampler.start(np.zeros(target.dim), params, GradientOracle.exact(target))
    return sum(math.prod(np.shape(leaf)) for leaf in jax.tree.leaves(shapes))


def step_memory(implementation: Implementation, target, params, chains: int) -> tuple[float, str]:
    """(bytes, what) of one step of every chain: the state three times (input, output, temporaries) and
    the draws twice, for all chains at once (JAX) or for one (NumPy: the chains share one state)."""
    numbers = state_numbers(implementation.sampler, target, params)
    draws = draw_numbers(implementation.sampler, target, params)
    at_once = chains if implementation.driver == "jax" else 1
    return (at_once * FLOAT_BYTES[implementation.dtype] * (3 * numbers + 2 * draws),
            f"one {implementation.driver} step of {chains} chain(s) of {numbers} state numbers")


def run_memory(implementation: Implementation, target, params, chains: int) -> tuple[float, str]:
    """(bytes, what) of a whole run: JAX: the initial and the running carry (three copies of the
    state's numbers, the float64 moments) and one block of draws, positions and their float64
    moments; NumPy: every chain's moments, kept until they are stacked, and the state."""
    numbers = state_numbers(implementation.sampler, target, params)
    itemsize, dim = FLOAT_BYTES[implementation.dtype], target.dim
    what = f"a {implementation.driver} run of {chains} chain(s) x {dim} coordinates ({numbers} state numbers each"
    if implementation.driver == "numpy":
        return 2 * chains * dim * MOMENT_BYTES + 3 * itemsize * numbers, what + ")"
    block = run_block_size(implementation, target, params, chains)
    per_step = draw_numbers(implementation.sampler, target, params) + dim
    carries = 2 * chains * (3 * itemsize * numbers + MOMENT_BYTES * dim)
    one_block = block * chains * (itemsize * per_step + MOMENT_BYTES * dim)
    return carries + one_block, what + f", blocks of {block} steps)"


def check_memory(estimate_bytes: float, what: str) -> None:
    """NotImplementedError (asv's skip) when ``estimate_bytes`` exceed ``MEMORY_LIMIT_BYTES``."""
    if estimate_bytes > MEMORY_LIMIT_BYTES:
        raise NotImplementedError(f"{what} would need about {estimate_bytes / 2**30:.1f} GiB, more than the suite's "
                                  f"limit of {MEMORY_LIMIT_BYTES / 2**30:.0f} GiB")
