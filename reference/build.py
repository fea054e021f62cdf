"""Build a gold-standard reference: run NUTS, accept it only under the posteriordb contract
(``reference.contract``), and store it (``reference.store``); a failing build keeps nothing."""

from __future__ import annotations


from reference.contract import Contract, violations
from samplers._checks import one_of
from samplers._provenance import library_versions


class ContractError(ValueError):
    """A NUTS run that fails the acceptance contract; the message names each failed check."""


def backends() -> dict:
    """Backend name -> runner with the signature of :func:`reference.nuts.run_numpyro`."""
    from reference.blackjax_nuts import run_blackjax
    from reference.nuts import run_numpyro

    return {"numpyro": run_numpyro, "blackjax": run_blackjax}


REFERENCE_PACKAGES = ("numpy", "jax", "jaxlib", "numpyro", "blackjax", "arviz", "sgmcmc-bench")


def run_accepted(target, backend="numpyro", num_chains=4, num_warmup=1000, num_draws=2500, seed=0,
                 contract: Contract | None = None, progress=False, target_accept=0.8):
    """Run NUTS and return (result, thinned draws, diagnostics); ContractError if a check fails."""
    one_of("backend", backend, set(backends()))
    contract = Contract() if contract is None else contract
    result = backends()[backend](target, num_chains=num_chains, num_warmup=num_warmup, num_draws=num_draws,
                                 seed=seed, progress=progress, target_accept=target_accept)
    failures, diagnostics, stored = violations(result, contract)
    if failures:
        raise ContractError(f"reference for {target!r} rejected ({backend}, seed {seed}): " + "; ".join(failures))
    diagnostics["seconds"] = result.seconds
    return result, stored, diagnostics


def build(target, backend="numpyro", num_chains=4, num_warmup=1000, num_draws=2500, seed=0,
          contract: Contract | None = None, directory=None, command: str = "", progress=False, target_accept=0.8):
    """Build, check and store ``target``'s reference; return the (draws, header) paths."""
    from reference import store

    contract = Contract() if contract is None else contract
    _, stored, diagnostics = run_accepted(target, backend, num_chains, num_warmup, num_draws, seed, contract,
                                          progress, target_accept)
    provenance = {"command": command, "seed": seed, "backend": backend, "num_warmup": num_warmup,
                  "num_draws": num_draws, "target_accept": target_accept, "contract": vars(contract),
                  "versions": library_versions(REFERENCE_PACKAGES)}
    return store.save(target, stored, diagnostics, provenance, directory)
