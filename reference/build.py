"""Build a gold-standard reference: run NUTS, accept it only under the posteriordb contract
(``sgbench.reference.contract``), cross-check it against the other NUTS implementation (numpyro against
blackjax's NUTS with window adaptation, or the reverse; ``sgbench.reference.agreement``), and store it
(``sgbench.reference.store``); a failing build keeps nothing."""

from __future__ import annotations

import numpy as np

from sgbench.base.arguments import one_of
from sgbench.base.provenance import library_versions
from sgbench.reference.agreement import compare
from sgbench.reference.contract import Contract, violations


class ContractError(ValueError):
    """A NUTS run that fails the acceptance contract; the message names each failed check."""


def backends() -> dict:
    """Backend name -> runner with the signature of :func:`sgbench.reference.nuts.run_numpyro`."""
    from sgbench.reference.blackjax_nuts import run_blackjax
    from sgbench.reference.nuts import run_numpyro

    return {"numpyro": run_numpyro, "blackjax": run_blackjax}


REFERENCE_PACKAGES = ("numpy", "jax", "jaxlib", "numpyro", "blackjax", "arviz", "sgmcmc-bench")


def kept_quantities(target, draws):
    """What a reference of ``target`` checks and keeps of NUTS draws (chains, draws, dim): the target's
    ``reference_quantities(draws)`` where it defines them (a posterior whose parameters are not
    identified, such as ``pmf``'s, whose latent coordinates can be permuted), else the draws."""
    quantities = getattr(target, "reference_quantities", None)
    return draws if quantities is None else quantities(draws)


def parameter_diagnostics(draws) -> dict:
    """Split R-hat and bulk and tail ESS of every parameter of NUTS ``draws`` (chains, draws, dim), summarised
    (worst values): recorded beside a reference that checks other quantities (``reference_quantities``), not
    required of it."""
    from sgbench.reference.metrics import ess, split_rhat

    x = np.asarray(draws)
    if x.shape[0] < 2 or x.shape[1] < 4:
        return {}
    return {"max_rhat": float(np.max(split_rhat(x))), "min_bulk_ess": float(np.min(ess(x, method="bulk"))),
            "min_tail_ess": float(np.min(ess(x, method="tail")))}


def run_accepted(target, backend="numpyro", num_chains=4, num_warmup=1000, num_draws=2500, seed=0,
                 contract: Contract | None = None, progress=False, target_accept=0.8):
    """Run NUTS and return (result, thinned draws, diagnostics); ContractError if a check fails. The contract
    is applied to, and the draws returned are, :func:`kept_quantities` of the NUTS draws; where those are not the
    parameters, the parameters' own diagnostics are recorded under ``diagnostics["parameters"]``."""
    one_of("backend", backend, set(backends()))
    contract = Contract() if contract is None else contract
    result = backends()[backend](target, num_chains=num_chains, num_warmup=num_warmup, num_draws=num_draws,
                                 seed=seed, progress=progress, target_accept=target_accept)
    parameters = parameter_diagnostics(result.draws) if hasattr(target, "reference_quantities") else None
    result = result._replace(draws=kept_quantities(target, result.draws))
    failures, diagnostics, stored = violations(result, contract)
    if parameters is not None:
        diagnostics["parameters"] = parameters
    if failures:
        raise ContractError(f"reference for {target!r} rejected ({backend}, seed {seed}): " + "; ".join(failures))
    diagnostics["seconds"] = result.seconds
    return result, stored, diagnostics


def other_backend(backend: str) -> str:
    """The NUTS implementation that cross-checks ``backend``'s."""
    return {"numpyro": "blackjax", "blackjax": "numpyro"}[one_of("backend", backend, set(backends()))]


def build(target, backend="numpyro", num_chains=4, num_warmup=1000, num_draws=2500, seed=0,
          contract: Contract | None = None, directory=None, command: str = "", progress=False, target_accept=0.8,
          cross_check: bool = True, alpha: float = 1e-3):
    """Build, check and store ``target``'s reference; return the (draws, header) paths.

    With ``cross_check`` the other backend (:func:`other_backend`) runs the same configuration with
    ``seed + 1``; it must pass the contract too, and every E[x_i] and E[x_i^2] of the two must agree
    (z-tests at family-wise false-failure rate ``alpha``), or the build fails (ContractError)."""
    from sgbench.reference import store

    contract = Contract() if contract is None else contract
    _, stored, diagnostics = run_accepted(target, backend, num_chains, num_warmup, num_draws, seed, contract,
                                          progress, target_accept)
    provenance = {"command": command, "seed": seed, "backend": backend, "num_warmup": num_warmup,
                  "num_draws": num_draws, "target_accept": target_accept, "contract": vars(contract),
                  "versions": library_versions(REFERENCE_PACKAGES)}
    if cross_check:
        other = other_backend(backend)
        _, other_stored, other_diagnostics = run_accepted(target, other, num_chains, num_warmup, num_draws, seed + 1,
                                                          contract, progress, target_accept)
        agreement = compare(store.summarize(stored), store.summarize(other_stored), alpha)
        if not agreement.passed:
            raise ContractError(f"reference for {target!r} rejected: {backend} (seed {seed}) and {other} "
                                f"(seed {seed + 1}) disagree, max |z| = {agreement.max_abs_z:.2f} at "
                                f"{agreement.worst} > {agreement.threshold:.2f} (family-wise alpha {alpha:g})")
        provenance["cross_check"] = {"backend": other, "seed": seed + 1, "alpha": alpha,
                                     "max_abs_z": agreement.max_abs_z, "threshold": agreement.threshold,
                                     "worst": agreement.worst, "diagnostics": other_diagnostics}
    return store.save(target, stored, diagnostics, provenance, directory)
