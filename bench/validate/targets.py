r"""The targets ``sgbench validate`` runs a sampler on: Gaussian, non-Gaussian analytic, and a data
posterior held to its stored NUTS gold standard.

========== ======================================================================= ============ ==========
key        target                                                                  truth        level
========== ======================================================================= ============ ==========
icg        ``icg4``: 4-d Gaussian, condition number 4, isotropic gradient noise     analytic     default
           of variance 2 (the gate's)
linreg     2-d Bayesian linear regression, minibatches of 8 of 40 points (the       analytic     default
           gate's)
gmm        3-d: two coordinates each an equal mixture of N(-1, 0.3) and N(1, 0.3),  analytic     default
           one standard normal; isotropic gradient noise of variance 2
logreg     31-d Bayesian logistic regression on the breast-cancer data,             NUTS         default
           minibatches of 32 of 569
icg_stiff  4-d Gaussian, condition number 16, gradient-noise variance 16            analytic     thorough
mesquite   posteriordb's log-log regression of mesquite weights (8-d), minibatches posteriordb   external
           of 8 of 46
gauss_mix  posteriordb's two-component normal mixture (5-d), minibatches of 100 of  posteriordb  external
           1000
schools    posteriordb's non-centred eight schools (10-d), exact gradients          posteriordb  external
brownian   Inference Gym's Brownian motion with missing middle observations (30-d),  Inference    external
           exact gradients                                                          Gym
irt        Inference Gym's item response theory (501-d), minibatches of 32 of       Inference    external
           30,012                                                                   Gym
========== ======================================================================= ============ ==========

The mixture's gradient is nonlinear (a responsibility-weighted pull towards two modes), so a mistake that
is exact on Gaussian targets (anything that is right only where the gradient is linear) shows there. The
curvature of the targets differs: the eigenvalues of the negative Hessian of the log density at the mean
are 0.5-2 on ``icg``, 21-30 on ``linreg`` and 1-59 on ``logreg``; on ``gmm`` the curvature is 1/0.3 = 3.3
inside a mode and -7.8 at the saddle between them. One step size has a different bias on each, and an
explicit method's stable step (about :math:`2/\lambda_{\max}` for Euler) differs too: hyperparameters can be
given per target (docs/tutorial.md, where the numbers are computed).

The external targets (``--targets external``) hold a sampler to truth that others computed (posteriordb's
reference draws, Inference Gym's NUTS truth; ``sgbench.targets.posteriordb``, ``sgbench.targets.inference_gym``),
on their unconstrained spaces. Their curvature is far larger (the largest eigenvalue of the negative Hessian at the
mean: 929 on ``mesquite``, 1.1e4 on ``gauss_mix``, 1.2 on ``schools``, 438 on ``brownian``, 5.6e3 on ``irt``;
docs/targets.md lists each target's), so they take per-target steps; the Inference Gym ones need the gym extra.
"""

from __future__ import annotations

import dataclasses

from sgbench.bench.gate.cells import ICG4, ICG4_STIFF, LINREG

LEVELS = ("default", "thorough")
EXTERNAL = "external"
GYM_TARGETS = ("inference_gym",)  # registered targets that need the gym extra


@dataclasses.dataclass(frozen=True)
class ValidationTarget:
    """A target of validation: its ``key`` (the ``--targets`` name and ``--param KEY:...`` prefix), the
    registered ``target`` with ``params``, a description in words (``what``), whether it is ``gaussian``
    (then its truth at a temperature T is N(mu, T Sigma); the others have a truth at T = 1 only), the gate
    cell of the same target (``gate_cell``, a name of ``samplers.GateSettings.heavy_tailed``: a claimed
    sampler whose chains are heavy-tailed there is checked without the CLT), and the ``level`` that includes
    it."""

    key: str
    target: str
    params: dict
    what: str
    gaussian: bool = False
    gate_cell: str | None = None
    level: str = "default"


TARGETS = (
    ValidationTarget("icg", "icg", dict(ICG4), "4-d Gaussian, condition number 4, gradient-noise variance 2",
                     gaussian=True, gate_cell="icg4"),
    ValidationTarget("linreg", "linreg", dict(LINREG), "2-d Bayesian linear regression, minibatches of 8 of 40",
                     gaussian=True, gate_cell="linreg"),
    ValidationTarget("gmm", "gmm", {"extra_dims": 1, "grid_points": 2, "noise": "isotropic", "noise_variance": 2.0},
                     "3-d non-Gaussian: two bimodal mixture coordinates and a normal one, gradient-noise variance 2"),
    ValidationTarget("logreg", "logreg", {"dataset": "breast_cancer", "noise": "minibatch", "noise_batch_size": 32},
                     "31-d breast-cancer logistic regression, minibatches of 32 of 569, NUTS gold standard"),
    ValidationTarget("icg_stiff", "icg", dict(ICG4_STIFF),
                     "4-d Gaussian, condition number 16, gradient-noise variance 16", gaussian=True, level="thorough"),
    ValidationTarget("mesquite", "posteriordb", {"posterior": "mesquite-logmesquite", "noise": "minibatch",
                                                 "noise_batch_size": 8},
                     "posteriordb mesquite log-log regression, 8-d, minibatches of 8 of 46", level=EXTERNAL),
    ValidationTarget("gauss_mix", "posteriordb", {"posterior": "low_dim_gauss_mix-low_dim_gauss_mix",
                                                  "noise": "minibatch", "noise_batch_size": 100},
                     "posteriordb two-component normal mixture, 5-d, minibatches of 100 of 1000", level=EXTERNAL),
    ValidationTarget("schools", "posteriordb", {"posterior": "eight_schools-eight_schools_noncentered"},
                     "posteriordb non-centred eight schools, 10-d, exact gradients", level=EXTERNAL),
    ValidationTarget("brownian", "inference_gym", {"model": "brownian_motion"},
                     "Inference Gym Brownian motion, missing middle observations, 30-d, exact gradients",
                     level=EXTERNAL),
    ValidationTarget("irt", "inference_gym", {"model": "item_response_theory", "noise": "minibatch",
                                              "noise_batch_size": 32},
                     "Inference Gym item response theory, 501-d, minibatches of 32 of 30,012", level=EXTERNAL),
)


def keys(level: str = "thorough") -> list[str]:
    """The keys of the suite's targets included at ``level`` (``default`` ones are in ``thorough`` too), or of the
    external ones (``level`` ``"external"``)."""
    if level == EXTERNAL:
        return [t.key for t in TARGETS if t.level == EXTERNAL]
    return [t.key for t in TARGETS if t.level != EXTERNAL and LEVELS.index(t.level) <= LEVELS.index(level)]


def every_key() -> list[str]:
    """The keys of every target, the suite's and the external ones."""
    return [t.key for t in TARGETS]


def get(key: str) -> ValidationTarget:
    """The validation target ``key``; ValueError listing the keys."""
    for target in TARGETS:
        if target.key == key:
            return target
    raise ValueError(f"targets must be among {', '.join(every_key())} (comma-separated), 'default', 'all' or "
                     f"'external', got {key!r}")


def select(spec: str, thorough: bool = False) -> list[ValidationTarget]:
    """The targets named by ``spec``: comma-separated keys, ``default`` (the default level's, or
    the thorough level's when ``thorough``), ``all`` (every one of the suite's) or ``external`` (the external ones).

    Returns:
        the targets, in the order of ``TARGETS``, without repeats; ValueError naming an unknown key, or an Inference
        Gym target where Inference Gym is not installed (naming the extra that installs it).
    """
    if spec in ("default", "all", EXTERNAL):
        chosen = set(keys(EXTERNAL if spec == EXTERNAL else "thorough" if spec == "all" or thorough else "default"))
    else:
        wanted = [k.strip() for k in str(spec).split(",") if k.strip()]
        if not wanted:
            raise ValueError(f"targets must name at least one of {', '.join(every_key())}, got {spec!r}")
        chosen = {get(k).key for k in wanted}
    selected = [t for t in TARGETS if t.key in chosen]
    needs_gym = [t.key for t in selected if t.target in GYM_TARGETS]
    if needs_gym:
        from sgbench.targets.inference_gym._models import gym

        try:
            gym()
        except ImportError as missing:
            raise ValueError(f"targets {', '.join(needs_gym)}: {missing}") from None
    return selected
