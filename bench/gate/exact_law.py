r"""The design bias of an exact-law gate cell, computed rather than measured.

A sampler that declares its linear law (``sgbench.samplers._linear_law``: SGLD in both conventions, SGLD-CV, pSGLD
with a frozen preconditioner, SGHMC and SGHMC-CV in both forms and integrators, with noise estimate and momentum
refresh) is, on the Gaussian ``icg4`` with isotropic additive gradient noise, a linear recursion of its centred
state. Its chains start at draws of the target scaled about its mean by the cell's ``start_scale`` :math:`\kappa`
(the auxiliary coordinates, momentum, at 0, as ``init`` sets them; :math:`\kappa = 2` in the gate's cells), so the
start's second moment is :math:`\kappa^2\Sigma`, the expected time average of :math:`(x_i - \mu_i)^2` over the
steps the run reads (every ``cell.thin``-th step after its ``num_burnin``) is :math:`\bar S_{ii}` of the exact
second-moment recursion, transient included (``sgbench.reference.linear_laws``), and the expected mean error is
0. The design bias is then :math:`\beta^r_i = \bar S_{ii}/\Sigma_{ii} - 1` with standard error 0, so the gate's
checks are against theory and their power is that of the cell's 1024 chains alone.

On the Bayesian linear regression ``linreg`` with minibatch gradients, a sampler whose law is SGLD's step on the
oracle's own gradient (``LinearLaw.langevin``: SGLD in both conventions, pSGLD with a frozen preconditioner) is a
linear recursion with a random matrix, whose second moments still follow exactly
(``sgbench.reference.minibatch_laws``): ``sgbench validate`` holds the suite's SGLD there to that law.

Which samplers have a law, and where their parameters make the step nonlinear, is their own files' declaration:
a cell without one raises ``sgbench.samplers.NoLinearLawError`` saying why.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from sgbench import samplers
from sgbench.bench.gate.cells import Cell
from sgbench.reference import minibatch_laws
from sgbench.reference.linear_laws import averaged_second_moment
from sgbench.samplers import LinearLaw, NoLinearLawError


def _noise_covariance(cell: Cell, target) -> np.ndarray | None:
    """The covariance of the additive gradient noise the sampler sees (None: exact gradients)."""
    noise = target.params.get("noise")
    if noise == "none":
        return None
    if noise != "isotropic":
        raise NoLinearLawError(f"exact-law cell {cell.name!r} needs isotropic or no gradient noise")
    variance = float(target.params["noise_variance"])
    return variance * np.eye(target.dim) if variance else None


def _law(cell: Cell, precision, noise_covariance) -> LinearLaw:
    """The cell's sampler's law at its hyperparameters, refused where it is only an approximation."""
    law = samplers.get(cell.sampler).law(cell.params, precision, noise_covariance)
    if law.approximation:
        raise NoLinearLawError(f"exact-law cell {cell.name!r}: the law of {cell.sampler!r} is an approximation "
                               f"(it neglects {law.approximation})")
    return law


def expected_second_moment(cell: Cell) -> np.ndarray:
    r"""(dim,) the exact expected time average of :math:`(x_i-\mu_i)^2` over the cell's run.

    Args:
        cell: a gate cell on a Gaussian target given by its precision (``icg``) or on ``linreg``.

    Returns:
        the expected time averages.

    Raises:
        NoLinearLawError: the cell's sampler has no exact law there (the message says why).
    """
    target = cell.make_target()
    if hasattr(target, "precision"):
        law = _law(cell, np.asarray(target.precision), _noise_covariance(cell, target))
        d = target.dim
        start = cell.start_scale**2 * np.asarray(target.covariance)
        s0 = scipy.linalg.block_diag(start, np.zeros((law.transition.shape[0] - d,) * 2))
        return averaged_second_moment(s0, law, cell.num_steps, d, cell.num_burnin, cell.thin)
    if cell.target == "linreg":
        law = _law(cell, minibatch_laws.precision(target), None)
        if law.langevin is None:
            raise NoLinearLawError(f"exact-law cell {cell.name!r}: the minibatch law needs SGLD's step on the "
                                   f"oracle's own gradient, and {cell.sampler!r}'s law is not one")
        start = cell.start_scale**2 * np.asarray(target.truth.covariance, dtype=np.float64)
        return minibatch_laws.minibatch_sgld_second_moment(target, law.langevin, cell.num_steps, start,
                                                           cell.num_burnin, thin=cell.thin)[1]
    raise NoLinearLawError(f"exact-law cell {cell.name!r} needs a Gaussian target given by its precision (icg) "
                           f"or linreg, got {cell.target!r}")


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
