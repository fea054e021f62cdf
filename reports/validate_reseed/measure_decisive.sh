#!/usr/bin/env bash
# The measured false-failure rate of the decisive `sgbench validate` (issue 59: the remedies within a budget, the
# sequential looks, the step ladder) on correct samplers in hard regimes, each chosen to make a remedy run
# (docs/gates_derivations.md, "sgbench validate: measured error rates"). Each line reseeds one validation at 64
# chains, so that the first look is short of power and the remedies decide, within a budget that lets its remedy
# run: 1 minute for more chains, 2 for a longer warm-up, 6 for a step ladder (whose first four rungs cost 15 times
# the first run: 8 to 15 s at 64 chains on these targets; where the fit is undecided, the chains that would decide
# it are beyond the 6 minutes, so those runs measure the ladder's first look). The records beside this script keep
# every finished run, so a rerun resumes.
#
#     bash reports/validate_reseed/measure_decisive.sh [RUNS [LADDER_RUNS]]
#
# RUNS (default 100) reseeds the two cheap regimes, LADDER_RUNS (default RUNS) the three ladder regimes (5 to 20 s
# a run each). Run from the repository root, with the venv's sgbench on PATH.
set -euo pipefail
runs=${1:-100}
ladder_runs=${2:-$runs}
r=reports/validate_reseed
v() { name=$1; n=$2; budget=$3; shift 3
      sgbench validate "$@" --chains 64 --budget "$budget" --reseed "$n" --seed 1 --record "$r/decisive_$name.jsonl" \
          --out /tmp/validate_reseed; }
# more chains in stages: the suite's SGLD held to its exact law, short of power at 64 chains
v sequential "$runs" 1min sgbench.samplers.sgld:SAMPLER --param step_size=0.02 --targets icg
# a longer warm-up: SGLD at h = 2e-3 (autocorrelation time about 2000 steps against a warm-up of 4000)
v warmup "$runs" 2min sgbench.samplers.sgld:SAMPLER --param step_size=2e-3 --targets icg
# the step ladder from far outside the small-step regime: SGLD at h lambda_max = 0.6, r +1.44 and +1.94 at h
v ladder_large_step "$ladder_runs" 6min tests.heldout.sgld_correct:SAMPLER --param step_size=0.02 --claims none \
    --targets linreg
# the ladder on an error that is O(h) only from h/8 on: BAO splitting with friction 20
v ladder_late_order "$ladder_runs" 6min tests.heldout.sghmc_bao:SAMPLER --param step_size=0.05 --param friction=20 \
    --claims none --targets icg
# the ladder on a second-order scheme (error O(h^2)) on the non-Gaussian mixture
v ladder_second_order "$ladder_runs" 6min tests.heldout.lm_langevin:SAMPLER --param step_size=0.3 \
    --param noise_estimate=2 --claims none --targets gmm
