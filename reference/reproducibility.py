"""Reproducibility of a stored reference (``sgbench reference check``): rebuild with another seed and z-test its moments
against the stored ones (``sgbench.reference.agreement``)."""

from __future__ import annotations

from sgbench.reference import store
from sgbench.reference.agreement import Agreement, compare
from sgbench.reference.build import run_accepted


def rebuild_and_compare(target, seed: int, backend="numpyro", num_chains=4, num_warmup=1000, num_draws=2500,
                        contract=None, directory=None, alpha: float = 1e-3, target_accept=0.8) -> Agreement:
    """Rebuild ``target``'s reference with ``seed`` (not stored) and compare it with the stored one."""
    header = store.read_header(target, directory)
    if seed == header.get("seed"):
        raise ValueError(f"seed must differ from the stored reference's seed {header.get('seed')}, got {seed}")
    _, stored, _ = run_accepted(target, backend, num_chains, num_warmup, num_draws, seed, contract,
                               target_accept=target_accept)
    return compare(store.summarize(stored), header["moments"], alpha)
