r"""asv benchmark suite of sgmcmc-bench (see ``bench/perf/asv/asv.conf.json``).

Modules:

- ``samplers``: time of one chain-step (``TimeStep``) and of a whole run (``TimeRun``) of every
  registered sampler, optimized (``jax``) and reference (``numpy``), and of the blackjax and
  posteriors adapters that claim one, over dimension (10, 10^3, 10^5), chains (1, 10, 1000) and
  target (``icg``, ``bnn``); peak memory of long runs (``PeakMemRun``, 10^3 to 10^6 steps);
- ``quality``: b^2 on the icg and on Rosenbrock, gradient evaluations until b^2 < 0.01 on the icg,
  KL of the Gaussian fit on ``linreg``, each the median over 5 groups of 10 chains at 2 x 10^5
  gradient evaluations per chain (``TrackICG``, ``TrackRosenbrock``, ``TrackLinreg``);
- ``sgld_icg``, ``ksd``, ``stochastic_gradients``: SGLD on the 10-d icg, KSD, one stochastic
  gradient of every target (names kept: their history is recorded);
- ``_workloads`` (hyperparameters, targets, run-length and memory rules) and ``_diagonal_icg`` are
  helpers, not benchmarks.

Combinations that cannot run (no implementation in a library, the bnn at d = 10, more than 4 GiB of
memory) are skipped by asv with the reason (NotImplementedError in ``setup``). The whole suite
takes hours; the full run and a history over commits::

    asv machine --yes --config bench/perf/asv/asv.conf.json
    asv run --python=same --show-stderr --config bench/perf/asv/asv.conf.json
    asv run --config bench/perf/asv/asv.conf.json HEAD~10..HEAD

Quick subset. ``asv run --bench REGEX`` (repeatable) matches a parametrised benchmark's name with its
parameters, ``samplers.TimeStep.time_step('sgld', 'jax', 10, 10, 'icg')`` (asv 0.6 filters each
parameter combination this way), so a few cheap combinations run with (about a minute on 2 cores)::

    asv run --python=same --quick --show-stderr --config bench/perf/asv/asv.conf.json \
        --bench "samplers\.Time\w+\.time_\w+\('sgld', '(jax|numpy|posteriors_baoa)', 10, 10, 'icg'\)" \
        --bench "samplers\.PeakMemRun\.peakmem_run\('sgld', 'jax', 10000\)" \
        --bench "quality\.TrackICG\.track_\w+\('sgld', 'jax'\)"

(the ``posteriors_baoa`` combination shows a skip). ``--bench samplers.TimeStep`` alone selects all
1710 combinations of that benchmark. ``sgbench asv --quick --bench ...`` does the same on a machine named
after its accelerator and keeps the results for ``sgbench dashboard``; ``tox -e asv-quick`` runs the subset
that way.

The project must be importable in the environment (``pip install -e ".[bench]"``; the adapter
backends also need blackjax, torch and posteriors, else they are skipped).

The benchmarks run in JAX's 64-bit mode, as the ``sgbench`` command does (``sgbench.base.float64``): their
setups build the inputs of the drivers and steps themselves, in each implementation's explicit dtype.
"""

import jax

jax.config.update("jax_enable_x64", True)
