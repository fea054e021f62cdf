"""MAMBA: tuning an SGMCMC sampler's hyperparameters by successive halving on a Stein-discrepancy reward
(the MAMBA paper of Coullon, South & Nemeth, Algorithm 1).

Parts, one concept each: :mod:`~sgbench.bench.tune.halving` (Algorithm 1 on any reward function, and the
bound of Theorem 1), :mod:`~sgbench.bench.tune.arms` (the uniform grid of hyperparameter tuples),
:mod:`~sgbench.bench.tune.budget` (gradient-evaluation and wall-clock budgets), :mod:`~sgbench.bench.tune.rewards`
(-KSD, -FSSD-opt), :mod:`~sgbench.bench.tune.arm_runs` (running a round's arms as vmapped programs),
:mod:`~sgbench.bench.tune.mamba` (the tuner and its baselines), :mod:`~sgbench.bench.tune.page` (the HTML page).
"""
