#!/usr/bin/env bash
# The measured false-failure rate of `sgbench validate` on correct samplers in hard regimes
# (docs/gates_derivations.md, "sgbench validate: measured error rates"). Each line reseeds one validation; the
# records beside this script keep every finished run, so a rerun resumes. Run from the repository root.
set -euo pipefail
runs=${1:-100}
r=reports/validate_reseed
v() { name=$1; shift; sgbench validate "$@" --chains 64 --reseed "$runs" --seed 1 --record "$r/$name.jsonl" --out /tmp/validate_reseed; }
# a step whose autocorrelation time (about 2000 steps) is near the forgetting rule's limit (warm-up 4000)
v small_step sgbench.samplers.sgld:SAMPLER --param step_size=2e-3 --targets icg
# 200 scored steps: one or two effective draws per chain, so per-chain r is skewed (chi-square-like)
v few_draws sgbench.samplers.sgld:SAMPLER --param step_size=0.02 --targets icg --steps 200 --warmup 4000
# temperature 0.5, held to the exact discrete-time law
v tempered sgbench.samplers.sgld:SAMPLER --param step_size=0.02 --param temperature=0.5 --targets icg
# underdamped SGHMC (friction 0.1 per step), written outside the suite, against the suite's sghmc
v underdamped tests.heldout.sghmc_independent:SAMPLER --param form=chen --param friction=0.1 --param step_size=0.01 --claims sghmc --targets icg
# overdamped SGHMC (friction 10, practical form) against the suite's sghmc
v overdamped tests.heldout.sghmc_independent:SAMPLER --param form=practical --param friction=10 --param step_size=0.05 --claims sghmc --targets icg
# a library's SGLD against the suite's on the non-Gaussian mixture, the reference held by halving its step
v adapter_mixture sgbench.bench.adapters.blackjax:sgld --param step_size=0.02 --targets gmm
# no claim, against exact truth on the mixture at a small step (a failed check is followed by halving the step)
v truth_mixture sgbench.bench.adapters.blackjax:sgld --param step_size=5e-3 --claims none --targets gmm
# at validate's default 256 chains, where the checks resolve r = 0.1 (how often a correct sampler PASSES)
d() { name=$1; shift; sgbench validate "$@" --reseed "$runs" --seed 1 --record "$r/$name.jsonl" --out /tmp/validate_reseed; }
d default_in_place sgbench.samplers.sgld:SAMPLER --param step_size=0.02 --targets icg,linreg
d default_adapter sgbench.bench.adapters.blackjax:sgld --param step_size=0.02 --targets icg,gmm
