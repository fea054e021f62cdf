"""``sgbench conformance``: every adapter of a public library (blackjax, posteriors, SGMCMCJax) through
``sgbench.bench.validate`` at its settings, beside the suite's sampler of the same method, as a table and a page
(docs/conformance.md)."""
