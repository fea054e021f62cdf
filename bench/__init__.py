"""Running things: drivers (``sgbench.bench.running``: ``running.run.run``, ``running.run.run_grid``,
``running.config.RunConfig``), sweeps, gates, performance, reproductions, tuning and the ``sgbench`` CLI.

Nothing is imported here, so that ``sgbench --help`` loads neither JAX nor ArviZ."""
