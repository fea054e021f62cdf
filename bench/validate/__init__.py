"""``sgbench validate`` and ``sgbench.validate``: a sampler held to truth, to its claimed reference and to its own
step ladder, with a stated error rate and a budget (docs/gates.md). Built on the checking pieces of
``sgbench.bench.gate`` (cells, replicates, truth, exact laws, outcomes), below it; ``sgbench.bench.conformance``
runs it over the public libraries' samplers."""
