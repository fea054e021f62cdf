"""sgmcmc-bench: reference and optimized stochastic-gradient MCMC samplers, targets with known truth, and the
statistics, gates and benchmarks that check them.

The subpackages, imports only downward (docs/architecture.md):

- ``sgbench.base``: argument checks, registries, random variates, provenance, the scoped float64 mode, figures;
- ``sgbench.targets`` and ``sgbench.samplers``: what is sampled and the samplers (one file each);
- ``sgbench.reference``: gold standards and the metrics and checks that compare samples with them;
- ``sgbench.bench``: drivers, sweeps, gates, performance, reproductions, tuning and the ``sgbench`` CLI.

Importing any of them changes no global state (JAX's configuration included).

``sgbench.validate`` (loaded on first use: ``sgbench.bench.validate.api``) is the Python API of ``sgbench
validate``; ``sgbench.bench.wrappers`` makes a sampler as its author wrote it (a JAX step, an optax- or
blackjax-style pair, a torch optimizer or step, a posteriors transform) a sampler of the suite's contract.
docs/quickstart.md shows both.
"""


def __getattr__(name: str):
    if name == "validate":
        from sgbench.bench.validate.api import validate

        return validate
    raise AttributeError(f"module 'sgbench' has no attribute {name!r}")
