r"""The design bias of an exact-law gate cell, computed rather than measured.

On the Gaussian ``icg4`` with isotropic additive gradient noise, SGLD (both conventions), SGLD-CV
(whose control variate cancels additive noise drawn once per step), pSGLD with a frozen
preconditioner (``smoothing = 1``) and SGHMC / SGHMC-CV (both forms, both integrators, noise
estimate, momentum refresh) are linear recursions (``sgbench.reference.linear_laws``). Their chains start
at draws of the target scaled about its mean by the cell's ``start_scale`` :math:`\kappa` (momentum 0,
as ``init`` sets it; :math:`\kappa = 2` in the gate's cells), so the start's second moment is
:math:`\kappa^2\Sigma`, the expected time average of :math:`(x_i - \mu_i)^2` over the steps the run reads
(every ``cell.thin``-th step after its ``num_burnin``) is :math:`\bar S_{ii}` of the exact second-moment
recursion, transient included, and the expected mean error is 0. The design bias is then
:math:`\beta^r_i = \bar S_{ii}/\Sigma_{ii} - 1` with standard error 0, so the gate's checks are
against theory and their power is that of the cell's 1024 chains alone.

On the Bayesian linear regression ``linreg`` with minibatch gradients, SGLD (both conventions) is a
linear recursion with a random matrix, whose second moments still follow exactly
(``sgbench.reference.minibatch_laws``): ``sgbench validate`` holds the suite's SGLD there to that law.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from sgbench.bench.gate.cells import Cell
from sgbench.reference.linear_laws import averaged_second_moment, hamiltonian_recursion, langevin_recursion
from sgbench.reference.minibatch_laws import minibatch_sgld_second_moment

LANGEVIN = ("sgld", "sgld_cv", "psgld")
HAMILTONIAN = ("sghmc", "sghmc_cv")
CONTROL_VARIATES = ("sgld_cv", "sghmc_cv")


def _noise_variance(cell: Cell, target) -> float:
    """The isotropic gradient-noise variance the sampler sees (0 where a control variate cancels it)."""
    if cell.sampler in CONTROL_VARIATES or target.params.get("noise") == "none":
        return 0.0
    if target.params.get("noise") != "isotropic":
        raise ValueError(f"exact-law cell {cell.name!r} needs isotropic or no gradient noise")
    return float(target.params["noise_variance"])


def expected_second_moment(cell: Cell) -> np.ndarray:
    r"""(dim,) the exact expected time average of :math:`(x_i-\mu_i)^2` over the cell's run."""
    target = cell.make_target()
    if cell.target == "linreg" and cell.sampler == "sgld" and cell.params.get("schedule") is None:
        sigma = np.asarray(target.truth.covariance, dtype=np.float64)
        return minibatch_sgld_second_moment(target, cell.params["step_size"], cell.params.get("temperature", 1.0),
                                            cell.num_steps, cell.start_scale**2 * sigma, cell.num_burnin,
                                            convention=cell.params.get("convention", "standard"), thin=cell.thin)[1]
    if not hasattr(target, "precision"):
        raise ValueError(f"exact-law cell {cell.name!r} needs a Gaussian target given by its precision (icg), "
                         f"got {cell.target!r}")
    p, sigma = np.asarray(target.precision), np.asarray(target.covariance)
    d, params, v = target.dim, cell.params, _noise_variance(cell, target)
    temperature = params.get("temperature", 1.0)
    if params.get("schedule") is not None:
        raise ValueError(f"exact-law cell {cell.name!r}: only constant steps are supported")
    if cell.sampler in LANGEVIN:
        step = params["step_size"] / (2 if params.get("convention") == "welling_teh" else 1)
        preconditioner = 1.0
        if cell.sampler == "psgld":
            if params.get("smoothing") != 1.0:
                raise ValueError(f"exact-law cell {cell.name!r}: pSGLD is linear only with smoothing = 1")
            preconditioner = 1 / (np.sqrt(params.get("initial_square_average", 0.0)) + params.get("epsilon", 1e-5))
        transition = langevin_recursion(p, step, temperature, v * np.eye(d) if v else None, preconditioner)
        return averaged_second_moment(cell.start_scale**2 * sigma, transition, cell.num_steps, d,
                                      num_burnin=cell.num_burnin, thin=cell.thin)
    if cell.sampler in HAMILTONIAN:
        form, step = params["form"], params["step_size"]
        big_a, big_b, w, c = hamiltonian_recursion(p, form, params.get("integrator", "euler"), step,
                                                   params["friction"], temperature, v,
                                                   params.get("noise_estimate", 0.0))
        if c < 0:
            raise ValueError(f"exact-law cell {cell.name!r}: negative injected noise variance {c}")
        s0 = scipy.linalg.block_diag(cell.start_scale**2 * sigma, np.zeros((d, d)))
        refresh_variance = step * temperature if form == "chen" else temperature
        return averaged_second_moment(s0, (big_a, big_b @ w @ big_b.T), cell.num_steps, d,
                                      params.get("refresh_every", 0), refresh_variance, cell.num_burnin, cell.thin)
    raise ValueError(f"no exact law for sampler {cell.sampler!r} (exact-law samplers: {LANGEVIN + HAMILTONIAN})")


def design(cell: Cell) -> dict:
    """The cell's design bias in the form ``sgbench.bench.gate.design_bias`` stores (standard errors 0)."""
    with np.errstate(over="ignore", invalid="ignore"):
        second_moment = expected_second_moment(cell)
    if not np.all(np.isfinite(second_moment)):
        raise ValueError(f"exact-law cell {cell.name!r}: the second moment diverges at these settings")
    target = cell.make_target()
    variance = np.diag(np.asarray(target.truth.covariance))
    r = second_moment / variance - 1
    zeros = np.zeros(target.dim)
    return {"sampler": cell.sampler, "params": cell.params, "target": cell.target,
            "target_params": cell.target_params, "num_steps": cell.num_steps, "exact_law": True,
            "num_chains": np.inf, "num_diverged": 0, "mean_error": zeros, "mean_error_se": zeros,
            "second_moment_error": r, "second_moment_error_se": zeros}
