r"""The posteriordb acceptance contract of a gold-standard reference (Magnusson et al. 2024,
"posteriordb: testing, benchmarking and developing Bayesian inference algorithms", reference
posteriors): at least ``min_chains`` chains, rank-normalised split :math:`\hat R` below ``max_rhat``
for every kept coordinate (the parameters, or a target's ``reference_quantities``), bulk and tail ESS of at
least ``min_ess`` on the thinned draws that are stored, at most ``max_divergences`` divergent transitions
(none by default),
and E-BFMI of at least ``min_bfmi`` in every chain, with

.. math:: \text{E-BFMI} = \frac{\sum_{t=2}^{T} (E_t - E_{t-1})^2}{\sum_{t=1}^{T} (E_t - \bar E)^2}

of the Hamiltonian energies :math:`E_t` of one chain (Betancourt 2016, "Diagnosing suboptimal
cotangent disintegrations in Hamiltonian Monte Carlo", eq. 5; the estimator of Stan and ArviZ).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sgbench.base.arguments import integer_at_least, positive_finite


@dataclasses.dataclass(frozen=True)
class Contract:
    """Thresholds of the acceptance checks; ``num_stored`` draws (all chains together) are kept."""

    min_chains: int = 4
    max_rhat: float = 1.01
    min_ess: float = 10_000
    min_bfmi: float = 0.2
    num_stored: int = 10_000
    max_divergences: int = 0

    def __post_init__(self):
        integer_at_least("min_chains", self.min_chains, 1)
        integer_at_least("num_stored", self.num_stored, 4)
        integer_at_least("max_divergences", self.max_divergences, 0)
        for name in ("max_rhat", "min_ess", "min_bfmi"):
            positive_finite(name, getattr(self, name))
        if self.max_rhat < 1:
            raise ValueError(f"max_rhat must be a finite number >= 1, got {self.max_rhat!r}")


def e_bfmi(energy) -> np.ndarray:
    """E-BFMI of each chain of ``energy`` (chains, draws), draws >= 2: (chains,)."""
    e = np.asarray(energy, dtype=np.float64)
    if e.ndim != 2 or e.shape[1] < 2:
        raise ValueError(f"energy must have shape (chains, draws) with draws >= 2, got shape {e.shape}")
    return np.sum(np.diff(e, axis=1) ** 2, axis=1) / np.sum((e - e.mean(axis=1, keepdims=True)) ** 2, axis=1)


def thin(draws, num_stored: int) -> np.ndarray:
    """Every k-th draw of each chain of ``draws`` (chains, draws, dim), k = floor(chains * draws /
    num_stored) (at least 1), keeping the last ``num_stored // chains`` of them per chain."""
    x = np.asarray(draws)
    chains, length = x.shape[:2]
    per_chain = max(num_stored // chains, 1)
    step = max(length // per_chain, 1)
    return x[:, ::-1][:, ::step][:, :per_chain][:, ::-1]


def violations(result, contract: Contract) -> tuple[list[str], dict, np.ndarray]:
    """The failed checks of ``result`` (a ``NutsResult``) as messages naming the check and its
    values, the diagnostics (a JSON-ready dict), and the thinned draws."""
    from sgbench.reference.metrics import ess, split_rhat  # ArviZ, imported when a contract is applied

    failures = []
    chains = result.draws.shape[0]
    if not np.all(np.isfinite(result.draws)):
        return [f"non-finite draws: {int(np.sum(~np.isfinite(result.draws)))} values"], {}, result.draws
    stored = thin(result.draws, contract.num_stored)
    diagnostics = {"chains": chains, "draws_per_chain": int(result.draws.shape[1]),
                   "stored_per_chain": int(stored.shape[1]), "divergences": int(result.divergent.sum())}
    if chains < contract.min_chains:
        failures.append(f"chains: at least {contract.min_chains} chains are required, got {chains}")
    if chains >= 2 and result.draws.shape[1] >= 4:
        rhat = split_rhat(result.draws)
        diagnostics["max_rhat"] = float(np.max(rhat))
        if not np.all(rhat < contract.max_rhat):
            worst = int(np.nanargmax(np.where(np.isnan(rhat), np.inf, rhat)))
            failures.append(f"rhat: split R-hat must be < {contract.max_rhat} for every kept coordinate, got "
                            f"{np.sum(~(rhat < contract.max_rhat))} above it, worst {rhat[worst]:.4f} at "
                            f"coordinate {worst}")
    if stored.shape[1] >= 4:
        for method in ("bulk", "tail"):
            values = ess(stored, method=method)
            diagnostics[f"min_{method}_ess"] = float(np.min(values))
            if not np.all(values >= contract.min_ess):
                failures.append(f"{method}_ess: {method} ESS after thinning must be >= {contract.min_ess:g}, got "
                                f"minimum {np.nanmin(values):.0f} at coordinate {int(np.nanargmin(values))}")
    if diagnostics["divergences"] > contract.max_divergences:
        failures.append(f"divergences: at most {contract.max_divergences} divergent transitions are allowed, got "
                        f"{diagnostics['divergences']}")
    bfmi = e_bfmi(result.energy)
    diagnostics["min_e_bfmi"] = float(np.min(bfmi))
    if not np.all(bfmi >= contract.min_bfmi):
        failures.append(f"e_bfmi: E-BFMI must be >= {contract.min_bfmi} in every chain, got "
                        f"{np.round(bfmi, 3).tolist()}")
    return failures, diagnostics, stored
