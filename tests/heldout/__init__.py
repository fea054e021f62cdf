"""Held-out samplers for ``sgbench validate``: written from the public docs alone (docs/tutorial.md, "Adding a
sampler"; ``sgbench.samplers._contract``; the conventions of ``samplers/sgld.py`` and ``samplers/sghmc.py``), never
registered, without ``benchmarks``, independently of the verification code, so that a validator can be
tested against samplers it was not written beside.

Each module is one sampler, ``SAMPLER = samplers.Sampler.from_namespace(...)`` (load it with
``sgbench.bench.adapters.load_sampler("tests.heldout.NAME:SAMPLER")``; the repository root must be importable, as
it is for ``python -m ...`` run there, or with ``PYTHONPATH=.``). Its docstring gives the update, what is
right or wrong with it, the measurements behind its expectation, and the verdict a correct validator must
give.

``CASES`` is the manifest: for each case the sampler, its hyperparameters (by the sampler's own names), the
suite sampler it claims (or None), the targets, chains and steps, and the verdicts a correct validator may
give, with the reason. The expectations come from theory and from ``bench.run`` against ``target.truth``
(never from a validate command), with chains started at exact draws of the target (``target.sample``), as
validate starts them: see each module's docstring for the numbers. ``TARGETS`` gives the target presets the
measurements used, by the names of ``sgbench validate --targets`` (``icg`` is the gate's ``icg4``).

``tests.heldout.decisive`` (``DECISIVE_CASES``) is a second manifest, written for a validator that decides (adds
chains, lengthens the warm-up, runs a step ladder): each of its cases also says the verdict such a validator should
reach (``decided``).
"""

from __future__ import annotations

import dataclasses

OUTCOMES = frozenset({"PASSED", "FAILED", "INCONCLUSIVE"})
DECIDED = frozenset({"PASSED", "FAILED"})
KINDS = frozenset({"correct", "order-one", "order-h", "library"})

# The presets measured, as ``targets.get(name, **rest)`` arguments.
TARGETS = {
    "icg": dict(name="icg", dim=4, condition_number=4.0, rotation_seed=0, noise="isotropic", noise_variance=2.0),
    "linreg": dict(name="linreg", num_data=40, dim=2, noise="minibatch", noise_batch_size=8),
    "gmm": dict(name="gmm", extra_dims=1, grid_points=2, noise="isotropic", noise_variance=2.0),
    "logreg": dict(name="logreg", dataset="breast_cancer", noise="minibatch", noise_batch_size=32),
    "icg_stiff": dict(name="icg", dim=4, condition_number=16.0, rotation_seed=0, noise="isotropic",
                      noise_variance=16.0),
}

GAUSSIAN = ("icg", "linreg")


@dataclasses.dataclass(frozen=True)
class Case:
    """One validation a correct ``sgbench validate`` must answer with one of ``expected``.

    Attributes:
        name: the case's id, unique in ``CASES``.
        sampler: ``MODULE:OBJECT`` of the candidate.
        params: its hyperparameters, by its own names (``--param``).
        claims: the suite sampler it claims to be (``--claims``), or None (checked against exact truth).
        expected: the acceptable verdicts, a subset of ``OUTCOMES``.
        reason: why, in one line.
        targets: the targets it runs on (keys of ``TARGETS``; validate's ``--targets``).
        num_chains: the candidate's chains (``--chains``) at which the expectation was measured and holds
            (None: validate's default, more than the 64 the expectations were measured with).
        num_steps: its steps (``--steps``).
        param_map: the candidate's hyperparameter names -> the claimed sampler's, where they differ (None:
            the same names).
        decided: the verdict a decisive validator (one that adds chains, lengthens the warm-up and runs a step
            ladder within its budget) should reach, PASSED or FAILED, one of ``expected``; None where INCONCLUSIVE
            is the honest answer whatever the budget (``tests.heldout.decisive``).
        kind: what the case probes, for reports: ``correct`` (a correct sampler at a hard setting), ``order-one``
            (a bias that stays as h -> 0), ``order-h`` (a bias that vanishes with h), ``library`` (an adapter);
            None for the cases of ``CASES``.
    """

    name: str
    sampler: str
    params: dict
    claims: str | None
    expected: frozenset
    reason: str
    targets: tuple = GAUSSIAN
    num_chains: int | None = None
    num_steps: int = 4000
    param_map: dict | None = None
    decided: str | None = None
    kind: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "expected", frozenset(self.expected))
        object.__setattr__(self, "targets", tuple(self.targets))
        if not self.expected or not self.expected <= OUTCOMES:
            raise ValueError(f"case {self.name!r}: expected must be a non-empty subset of {sorted(OUTCOMES)}")
        if not set(self.targets) <= set(TARGETS):
            raise ValueError(f"case {self.name!r}: targets must be among {sorted(TARGETS)}")
        if self.decided is not None and (self.decided not in DECIDED or self.decided not in self.expected):
            raise ValueError(f"case {self.name!r}: decided must be None or one of {sorted(DECIDED)} in expected")
        if self.kind is not None and self.kind not in KINDS:
            raise ValueError(f"case {self.name!r}: kind must be None or one of {sorted(KINDS)}")

    @property
    def module(self) -> str:
        return self.sampler.partition(":")[0]


def _path(module: str) -> str:
    return f"tests.heldout.{module}:SAMPLER"


PASS_OR_INCONCLUSIVE = frozenset({"PASSED", "INCONCLUSIVE"})
FAILED = frozenset({"FAILED"})
INCONCLUSIVE = frozenset({"INCONCLUSIVE"})
PASSED = frozenset({"PASSED"})

CHEN = {"form": "chen", "friction": 0.1}
PRACTICAL = {"form": "practical", "friction": 10.0, "step_size": 0.05}

CASES = (
    # frozen: started at exact draws, its moments match truth; only "does it move" catches it.
    Case("frozen", _path("frozen"), {"step_size": 0.01}, None, FAILED,
         "the position never changes: it does not move, whatever its (exact) starting moments say"),
    Case("frozen-claims-sgld", _path("frozen"), {"step_size": 0.01}, "sgld", FAILED,
         "the position never changes; SGLD at h = 0.01 relaxes in about 200 steps on icg and 5 on linreg"),

    # sgld_tiny: correct, but cannot forget its start at 4000 steps.
    Case("sgld_tiny-icg", _path("sgld_tiny"), {"step_size": 1e-5}, None, PASS_OR_INCONCLUSIVE,
         "correct SGLD, but 4000 steps are 0.02 relaxation times on icg: its moments are its exact start's (never "
         "FAILED; a warm-up of 10 relaxation times, 4e6 steps, is beyond any budget of minutes)",
         targets=("icg",)),
    Case("sgld_tiny-claims-sgld", _path("sgld_tiny"), {"step_size": 1e-5}, "sgld", PASS_OR_INCONCLUSIVE,
         "it is SGLD (never FAILED), but neither it nor the reference forgets its start in 4000 steps",
         targets=("icg",)),
    Case("sgld_tiny-both", _path("sgld_tiny"), {"step_size": 1e-5}, None, PASS_OR_INCONCLUSIVE,
         "correct: unmixed on icg, about one relaxation time on linreg; never FAILED"),
    Case("sgld_tiny-tempered", _path("sgld_tiny"), {"step_size": 1e-5, "temperature": 0.5}, None,
         PASS_OR_INCONCLUSIVE,
         "r = 0.8 to 1.6 against 0.5 Sigma is the untempered start, unforgotten, not a bias: never FAILED",
         targets=("icg",)),
    Case("sgld_tiny-linreg", _path("sgld_tiny"), {"step_size": 1e-5}, None, PASS_OR_INCONCLUSIVE,
         "correct; on linreg (precision 20.6 to 29.7) 4000 steps are about one relaxation time: r 0.04, 0.02",
         targets=("linreg",)),
    Case("sgld_tiny-mixed", _path("sgld_tiny"), {"step_size": 1e-4}, None, PASS_OR_INCONCLUSIVE,
         "correct and mixed: 200 000 steps are 10 relaxation times of the slowest mean; r -0.07 to 0.03",
         targets=("icg",), num_steps=200_000),
    Case("sgld_tiny-mixed-long", _path("sgld_tiny"), {"step_size": 1e-5}, None, PASS_OR_INCONCLUSIVE,
         "correct, and forgets its start in 2e6 steps (10 relaxation times; slow: about 1 min per 64 chains)",
         targets=("icg",), num_steps=2_000_000),

    # smoothed_gradient_sgld: exact on Gaussians, wrong on the mixture.
    Case("smoothed-icg", _path("smoothed_gradient_sgld"), {"step_size": 0.01}, None, PASS_OR_INCONCLUSIVE,
         "on a Gaussian the averaged gradient is the gradient: it is SGLD, whose r at h = 0.01 is within 0.03",
         targets=("icg",)),
    Case("smoothed-claims-sgld-icg", _path("smoothed_gradient_sgld"), {"step_size": 0.01}, "sgld",
         PASS_OR_INCONCLUSIVE, "on a Gaussian it is the same chain as SGLD, draw for draw", targets=("icg",)),
    Case("smoothed-claims-sgld-linreg", _path("smoothed_gradient_sgld"), {"step_size": 1e-3}, "sgld",
         PASS_OR_INCONCLUSIVE, "the minibatch gradient of a linear regression is affine: it is SGLD, draw for draw",
         targets=("linreg",)),
    Case("smoothed-gmm", _path("smoothed_gradient_sgld"), {"step_size": 0.01}, None, FAILED,
         "on the mixture r = -0.19, -0.22 (SE 0.015) in the mixture coordinates, SGLD's +0.02, 0.00",
         targets=("gmm",)),
    Case("smoothed-claims-sgld-gmm", _path("smoothed_gradient_sgld"), {"step_size": 0.01}, "sgld", FAILED,
         "on the mixture it samples another density: r -0.2 where SGLD's bias is under 0.03", targets=("gmm",)),

    # sgld_noise_inflated: r about +0.2.
    Case("noise_inflated-icg", _path("sgld_noise_inflated"), {"step_size": 0.02}, None, FAILED,
         "injected variance 2h(1.2): r = 0.19 to 0.25 (SE 0.02 to 0.035) where SGLD's is 0.00 to 0.045",
         targets=("icg",)),
    Case("noise_inflated-claims-sgld-icg", _path("sgld_noise_inflated"), {"step_size": 0.02}, "sgld", FAILED,
         "r exceeds SGLD's by 0.2 (5 to 10 standard errors at 64 chains) and does not halve with the step",
         targets=("icg",)),
    Case("noise_inflated-claims-sgld-icg-h0.01", _path("sgld_noise_inflated"), {"step_size": 0.01}, "sgld",
         FAILED, "r 0.17 to 0.23 against SGLD's -0.02 to 0.03 (SE 0.03 to 0.05 at 64 chains)", targets=("icg",)),
    Case("noise_inflated-claims-sgld-linreg", _path("sgld_noise_inflated"), {"step_size": 1e-3}, "sgld", FAILED,
         "r 0.27, 0.28 (SE 0.02) against SGLD's 0.06, 0.07 on linreg", targets=("linreg",)),

    # sghmc_independent: a correct SGHMC claiming the suite's.
    Case("sghmc_independent-chen", _path("sghmc_independent"), {**CHEN, "step_size": 0.01}, "sghmc",
         PASS_OR_INCONCLUSIVE, "the suite's Chen-form chain draw for draw (r 0.085 to 0.11, the shared heating)",
         targets=("icg",)),
    Case("sghmc_independent-chen-small-step", _path("sghmc_independent"), {**CHEN, "step_size": 1e-3}, "sghmc",
         PASS_OR_INCONCLUSIVE, "the suite's Chen-form chain draw for draw; on linreg both heat to r 0.38, 0.57"),
    Case("sghmc_independent-practical", _path("sghmc_independent"), PRACTICAL, "sghmc", PASS_OR_INCONCLUSIVE,
         "Chen eq. (15) at C = 10, the suite's practical form's law: within 1.3 SE at 512 chains each"),
    Case("sghmc_independent-chen-noise-estimate", _path("sghmc_independent"),
         {**CHEN, "step_size": 0.01, "noise_estimate": 2.0}, None, PASS_OR_INCONCLUSIVE,
         "with the gradient-noise variance corrected its r is within 0.007 of 0 on icg: exact truth holds",
         targets=("icg",)),

    # sghmc_half_noise: r about -0.5.
    Case("sghmc_half_noise-chen", _path("sghmc_half_noise"), {**CHEN, "step_size": 0.01}, "sghmc", FAILED,
         "half the injected variance: r -0.39 to -0.41 against the reference's 0.085 to 0.11", targets=("icg",)),
    Case("sghmc_half_noise-chen-small-step", _path("sghmc_half_noise"), {**CHEN, "step_size": 1e-3}, "sghmc",
         FAILED, "r -0.48 to -0.50 on icg (reference about 0), -0.15, 0.04 on linreg (reference 0.38, 0.57)"),
    Case("sghmc_half_noise-practical", _path("sghmc_half_noise"), PRACTICAL, "sghmc", FAILED,
         "r -0.48 to -0.50 on icg (reference about 0), -0.31, -0.21 on linreg (reference 0.20, 0.30)"),

    # sgld_lr_names: SGLD under other names.
    Case("sgld_lr_names-icg", _path("sgld_lr_names"), {"lr": 0.01}, "sgld", PASS_OR_INCONCLUSIVE,
         "SGLD with step_size = lr, temperature = temp: the same chain as the reference's, draw for draw "
         "(at h = 0.01 on icg the default chains may not resolve r = 0.1: INCONCLUSIVE is then honest)",
         targets=("icg",), param_map={"lr": "step_size", "temp": "temperature"}),
    Case("sgld_lr_names-linreg", _path("sgld_lr_names"), {"lr": 1e-3, "temp": 1.0}, "sgld", PASSED,
         "SGLD under other names; the reference's bias on linreg (r 0.06, 0.07) is its own",
         targets=("linreg",), param_map={"lr": "step_size", "temp": "temperature"}),

    # tamed_sgld: the reference diverges where the candidate does not.
    Case("tamed-claims-sgld-linreg", _path("tamed_sgld"), {"step_size": 0.1}, "sgld", INCONCLUSIVE,
         "every SGLD chain diverges at h = 0.1 on linreg: no reference bias to hold it to; not its failure",
         targets=("linreg",)),
    Case("tamed-linreg", _path("tamed_sgld"), {"step_size": 0.1}, None, PASS_OR_INCONCLUSIVE,
         "no claim: r 7.3, 8.0 (SE 0.03) against exact truth at h = 0.1, but it is consistent (r about halves at "
         "h/2; the taming vanishes as h -> 0): an error that vanishes with the step is not a mistake",
         targets=("linreg",)),
    Case("tamed-claims-sgld-both", _path("tamed_sgld"), {"step_size": 0.1}, "sgld", FAILED,
         "on icg at h = 0.1 SGLD runs and the taming's r 0.50 to 0.63 disagrees with SGLD's 0.12 to 0.21"),

    # sgld_diverging: runs away.
    Case("diverging", _path("sgld_diverging"), {"step_size": 0.01}, None, FAILED,
         "gradient sign flipped: r 1e63 to 1e66 on icg (finite), every chain non-finite on linreg"),
    Case("diverging-claims-sgld", _path("sgld_diverging"), {"step_size": 0.01}, "sgld", FAILED,
         "runs away where SGLD at h = 0.01 is stable on both targets"),
    Case("diverging-all-chains", _path("sgld_diverging"), {"step_size": 0.1}, None, FAILED,
         "every chain non-finite on both targets: a failure with divergence counts, not a crash"),
)

__all__ = ["CASES", "DECIDED", "GAUSSIAN", "KINDS", "OUTCOMES", "TARGETS", "Case"]
