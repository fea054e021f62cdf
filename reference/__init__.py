"""Gold standards and the statistics that compare samples with them: ``sgbench.reference.metrics`` (the
metrics), ``sgbench.reference.checks`` (the tests with stated error rates), ``sgbench.reference.store`` (a
target's stored NUTS reference as a ``Truth``: ``sgbench.reference.store.load(target)``)."""
