"""A sampler's own benchmark settings, declared in its file beside its parts (DESIGN.md: a new
sampler is one file).

A sampler module defines ``benchmarks = BenchmarkSettings(...)`` before it registers (or passes
``benchmarks=`` to a wrapper such as ``control_variates.wrap`` or ``px.px``), and every consumer
reads it from the registry (``samplers.benchmark_settings(name)``):

- the gate (``bench/gate/cells.py``): ``gate``, a :class:`GateSettings`;
- the reference-vs-optimized equivalence test (``tests/test_equivalence.py``): ``equivalence``;
- the speed workload (``bench/perf/speed_workload.py``: ``sgbench speed``, ``tests/benchmarks``): ``speed``;
- asv (``bench/perf/asv/benchmarks/_workloads.py``, ``asv_params``): ``speed`` on every asv target, except where
  ``asv`` declares the target's own hyperparameters (a smaller step on linreg or the bnn); the asv suite owns its
  targets, so adding one edits no sampler file;
- all of them: ``wrapper``, the target adapter the sampler needs, by name (a key of ``targets.ADAPTERS``,
  applied by ``targets.adapted``; a sampler file names it and never imports ``targets``).

The settings hold the sampler's own hyperparameters only; what is the same for every sampler (the
targets, the gate's temperature 0.5, chain and step counts) stays with the consumer. Presets are
named by strings, so that sampler files never import ``bench`` or ``tests``.
"""

from __future__ import annotations

import dataclasses

from sgbench.base.arguments import integer_at_least, one_of

# The gate's target presets a variant may run on (``sgbench.bench.gate.cells``): icg4 (condition number 4,
# gradient-noise variance 2) and icg4_stiff (condition number 16, gradient-noise variance 16).
GATE_TARGETS = ("icg4", "icg4_stiff")
# Gate cells that can be declared heavy-tailed: every icg4 cell, the icg4 cells with exact gradients
# (the full suite's), the linreg cell.
HEAVY_TAILED_CELLS = ("icg4", "icg4_exact", "linreg")
# The full suite's external posteriors (posteriordb's, with minibatches; their presets in sgbench.bench.gate.cells).
EXTERNAL_GATE_TARGETS = ("mesquite", "gauss_mix")

# Step-size schedules of the equivalence settings, shared so that every sampler's schedules are the same.
DECAY = {"kind": "polynomial_decay", "offset": 1.0, "exponent": 0.55}
CYCLES = {"kind": "cyclical", "cycle_length": 300}


def _hyperparameters(field: str, value) -> dict:
    """``value`` if it is a dict of hyperparameters by name; TypeError naming ``field`` otherwise."""
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        raise TypeError(f"benchmark setting {field} must be a dict of hyperparameters by name, got {value!r}")
    return value


def _tuple_of(field: str, values, check) -> tuple:
    """``values`` (a list or tuple) as a tuple, each checked by ``check(f"{field}[k]", value)``."""
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"benchmark setting {field} must be a tuple, got {values!r}")
    return tuple(check(f"{field}[{k}]", value) for k, value in enumerate(values))


@dataclasses.dataclass(frozen=True)
class GateVariant:
    """A gate cell at a setting the sampler's main cell does not exercise.

    Args:
        label: tells the cell apart in its name (``sampler@icg4-...-LABEL``).
        params: its hyperparameters.
        target: the gate's target preset, one of ``GATE_TARGETS``.
    """

    label: str
    params: dict
    target: str = "icg4"

    def __post_init__(self):
        if not isinstance(self.label, str) or not self.label:
            raise ValueError(f"gate variant label must be a non-empty string, got {self.label!r}")
        _hyperparameters(f"gate variant {self.label!r} params", self.params)
        one_of(f"gate variant {self.label!r} target", self.target, GATE_TARGETS)


@dataclasses.dataclass(frozen=True)
class GateSettings:
    """The sampler's gate cells (``bench/gate/cells.py``). A sampler with a ``temperature`` runs
    every cell at the gate's temperature, which is not given here.

    Args:
        icg4: hyperparameters on ``icg4``, with a ``step_size`` (the full suite multiplies it by
            ``large_step_scale``).
        linreg: hyperparameters on ``linreg`` (minibatches, N/B = 5); None for a full-batch method.
        posteriors: for a minibatch method, hyperparameters on each external posterior of the full suite, by key
            (``mesquite`` and ``gauss_mix``, posteriordb's, minibatches; ``sgbench.bench.gate.cells``), with a
            ``step_size`` (``reports/gate_external/choose_steps.py`` says how each was chosen).
        posteriors_burnin: the warm-up of those cells where the external cells' own
            (``sgbench.bench.gate.cells.EXTERNAL_WARMUP``) and ``num_burnin`` are too short for its chains.
        variants: :class:`GateVariant` cells where a setting the main cell does not exercise matters.
        exact_law: hyperparameters of cells checked against the exact discrete law
            (``sgbench.bench.gate.exact_law``): only for a sampler that declares its ``linear_law``
            (``sgbench.samplers._linear_law``), at hyperparameters where its step is linear.
        heavy_tailed: cells whose chains are heavy-tailed (checked without the CLT), from
            ``HEAVY_TAILED_CELLS``.
        num_burnin: steps of its measured cells that are not scored, where the gate's warm-up
            (``sgbench.bench.gate.cells.WARMUP``) is too short: adaptation, or chains whose autocorrelation time
            asks for more (the gate's cells must forget their start, ``sgbench.bench.gate.start``); its NumPy
            reference cell runs up to 250 of them.
        stationary: False for a sampler whose step adapts through the whole run (SMILE's eq. 7): its law
            depends on how long it ran, so its cells are not asked to forget their start (only to move)
            and are compared with design runs from the same start and warm-up.
        exact_gradients: its icg4 cells get exact gradients (a full-batch tuner).
        large_step_scale: the full suite's larger step over the icg4 one (2 unless the sampler
            diverges there), in (1, 4].
    """

    icg4: dict
    linreg: dict | None = None
    posteriors: dict | None = None
    posteriors_burnin: int = 0
    variants: tuple[GateVariant, ...] = ()
    exact_law: tuple[dict, ...] = ()
    heavy_tailed: tuple[str, ...] = ()
    num_burnin: int = 0
    stationary: bool = True
    exact_gradients: bool = False
    large_step_scale: float = 2.0

    def __post_init__(self):
        if "step_size" not in _hyperparameters("gate.icg4", self.icg4):
            raise ValueError(f"benchmark setting gate.icg4 must give a step_size (the full suite scales it), "
                             f"got {self.icg4!r}")
        if self.linreg is not None:
            _hyperparameters("gate.linreg", self.linreg)
        if self.posteriors is not None:
            if not isinstance(self.posteriors, dict) or set(self.posteriors) != set(EXTERNAL_GATE_TARGETS):
                raise ValueError(f"benchmark setting gate.posteriors must give hyperparameters for each of "
                                 f"{', '.join(EXTERNAL_GATE_TARGETS)}, got {self.posteriors!r}")
            for key, params in self.posteriors.items():
                if "step_size" not in _hyperparameters(f"gate.posteriors[{key!r}]", params):
                    raise ValueError(f"benchmark setting gate.posteriors[{key!r}] must give a step_size, "
                                     f"got {params!r}")

        def variant(field, value):
            if not isinstance(value, GateVariant):
                raise TypeError(f"benchmark setting {field} must be a GateVariant, got {value!r}")
            return value

        object.__setattr__(self, "variants", _tuple_of("gate.variants", self.variants, variant))
        labels = [v.label for v in self.variants]
        if len(set(labels)) != len(labels):
            raise ValueError(f"benchmark setting gate.variants has repeated labels: {labels}")
        object.__setattr__(self, "exact_law", _tuple_of("gate.exact_law", self.exact_law, _hyperparameters))
        object.__setattr__(self, "heavy_tailed", _tuple_of(
            "gate.heavy_tailed", self.heavy_tailed, lambda field, value: one_of(field, value, HEAVY_TAILED_CELLS)))
        object.__setattr__(self, "num_burnin", integer_at_least("gate.num_burnin", self.num_burnin, 0))
        object.__setattr__(self, "posteriors_burnin",
                           integer_at_least("gate.posteriors_burnin", self.posteriors_burnin, 0))
        if not isinstance(self.stationary, bool):
            raise TypeError(f"benchmark setting gate.stationary must be True or False, got {self.stationary!r}")
        if not isinstance(self.exact_gradients, bool):
            raise TypeError(f"benchmark setting gate.exact_gradients must be True or False, "
                            f"got {self.exact_gradients!r}")
        if not (isinstance(self.large_step_scale, (int, float)) and 1 < self.large_step_scale <= 4):
            raise ValueError(f"benchmark setting gate.large_step_scale must be a number in (1, 4], "
                             f"got {self.large_step_scale!r}")

    def parameter_sets(self) -> dict[str, dict]:
        """Every hyperparameter dict here by its field (``gate.variants[0].params`` ...).

        Returns:
            dict from each field's path (``"gate.icg4"``, ``"gate.linreg"``, ``"gate.variants[k].params"``,
            ``"gate.exact_law[k]"``) to its hyperparameter dict.
        """
        sets = {"gate.icg4": self.icg4, **({"gate.linreg": self.linreg} if self.linreg is not None else {})}
        sets.update({f"gate.variants[{k}].params": v.params for k, v in enumerate(self.variants)})
        sets.update({f"gate.exact_law[{k}]": params for k, params in enumerate(self.exact_law)})
        return sets


@dataclasses.dataclass(frozen=True)
class BenchmarkSettings:
    """Everything the benchmarks need to know about one sampler (see the module docstring).

    Args:
        gate: its gate cells.
        equivalence: hyperparameter sets at which the reference and optimized steps must agree
            (``tests/test_equivalence.py``: every set on the icg with and without gradient noise).
        speed: hyperparameters on the speed workload (the 10-d icg, isotropic noise of variance 256); asv runs
            them on every asv target ``asv`` does not name.
        asv: hyperparameters by asv target name (``ASV_TARGETS`` of ``bench/perf/asv/benchmarks/_workloads.py``,
            which checks the names), only for the targets where they differ from ``speed``.
        wrapper: the target adapter it needs, a key of ``targets.ADAPTERS`` (None: the target as it is).
    """

    gate: GateSettings
    equivalence: tuple[dict, ...]
    speed: dict
    asv: dict[str, dict] = dataclasses.field(default_factory=dict)
    wrapper: str | None = None

    def __post_init__(self):
        if not isinstance(self.gate, GateSettings):
            raise TypeError(f"benchmark setting gate must be a GateSettings, got {self.gate!r}")
        object.__setattr__(self, "equivalence", _tuple_of("equivalence", self.equivalence, _hyperparameters))
        if not self.equivalence:
            raise ValueError("benchmark setting equivalence must hold at least one hyperparameter set")
        _hyperparameters("speed", self.speed)
        if not isinstance(self.asv, dict) or not all(isinstance(kind, str) for kind in self.asv):
            raise TypeError(f"benchmark setting asv must be a dict of hyperparameters by asv target name, "
                            f"got {self.asv!r}")
        for kind, params in self.asv.items():
            _hyperparameters(f"asv[{kind!r}]", params)
        if self.wrapper is not None and not isinstance(self.wrapper, str):
            raise TypeError(f"benchmark setting wrapper must be the name of a target adapter "
                            f"(targets.ADAPTERS) or None, got {self.wrapper!r}")

    def parameter_sets(self) -> dict[str, dict]:
        """Every hyperparameter dict of the settings by its field, to check against a sampler's ``Params``.

        Returns:
            dict from each field's path (the gate's, ``"equivalence[k]"``, ``"speed"``, ``"asv['icg']"``, ...)
            to its hyperparameter dict.
        """
        return {**self.gate.parameter_sets(), **{f"equivalence[{k}]": p for k, p in enumerate(self.equivalence)},
                "speed": self.speed, **{f"asv[{kind!r}]": p for kind, p in self.asv.items()}}
