"""``sgbench validate MODULE:OBJECT [--param [TARGET:]KEY=VALUE ...] [--claims NAME|none] [--map NAME=NAME ...]
[--reference-param KEY=VALUE ...] [--targets KEYS] [--thorough] [--detect R] [--budget B] [--chains C] [--steps N]
[--warmup W] [--seed S] [--reseed N [--record FILE]] [--out DIR]``: a sampler someone wrote (or an adapter)
against truth and the suite's implementation of what it claims. Exit status 0 PASSED, 1 FAILED,
3 INCONCLUSIVE, 4 ERROR (the sampler's code broke), 2 bad input."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from sgbench.base.arguments import integer_at_least
from sgbench.bench.cli._common import MAX_GATE_SEED, UsageError, output_folder, parse_key_values, progress
from sgbench.bench.cli._report_folders import add_out_option

EPILOG = """outcomes (exit status): PASSED (0) every check passed, the chains forgot their overdispersed start, and
every check resolves the bias given by --detect; FAILED (1) a check found a disagreement, the chains do not move,
or the sampler diverged where its reference did not; INCONCLUSIVE (3) nothing was found wrong but the run could
not have found it (the chains did not forget their start, a check cannot resolve --detect, or the claimed
reference cannot be held to truth here) and the remedy that would decide does not fit in --budget: the output names
the budget that would run it; ERROR (4) the sampler's own code broke (it raised, returned a state of another shape
or dtype, cannot be traced by jax.jit, or started from non-finite values): one line names its file, function and
line (--traceback: the full traceback); 2 bad input. Within --budget, an INCONCLUSIVE's remedy runs by itself:
more chains, a longer warm-up, the step ladder (h, h/2, h/4, ...: does the error vanish as the step shrinks?), a
smaller step.
See docs/gates.md (the manual) and docs/tutorial.md."""


def add_parser(commands) -> None:
    from sgbench.bench.gate.resolution import DEFAULT_CHAINS, DEFAULT_DETECT
    from sgbench.bench.validate.budget import DEFAULT as DEFAULT_BUDGET
    from sgbench.bench.validate.targets import every_key, keys

    validate = commands.add_parser("validate", help="validate a sampler (MODULE:OBJECT) against truth and "
                                                    "the suite's reference implementation", epilog=EPILOG)
    validate.add_argument("sampler", help="MODULE:OBJECT, a Sampler in the suite's contract or an adapter, "
                                          "e.g. sgbench.bench.adapters.blackjax:sgld "
                                          "(MODULE is imported from the current "
                                          "folder or the environment)")
    validate.add_argument("--param", action="append", metavar="[TARGET:]KEY=VALUE",
                          help="hyperparameter (repeatable); TARGET:KEY=VALUE applies to one target only, e.g. "
                               "--param step_size=0.02 --param linreg:step_size=1e-3")
    validate.add_argument("--claims", default=None,
                          help="the suite sampler it implements, or 'none' to check against truth alone (default: "
                               "the adapter's claim, or its name if registered; the registered sampler itself is "
                               "held to its exact law, its stored design bias or truth, never to itself)")
    validate.add_argument("--map", action="append", metavar="CANDIDATE=REFERENCE",
                          help="the claimed sampler's name for one of the candidate's hyperparameters (repeatable), "
                               "e.g. --map lr=step_size")
    validate.add_argument("--reference-param", action="append", metavar="KEY=VALUE",
                          help="a hyperparameter of the claimed sampler that the candidate has no name for "
                               "(repeatable), e.g. --reference-param form=chen; the output lists those left at "
                               "their defaults")
    validate.add_argument("--targets", default="default",
                          help=f"comma-separated among {', '.join(every_key())}; 'default' (the first "
                               f"{len(keys('default'))}), 'all' (the suite's {len(keys())}) or 'external' "
                               f"({', '.join(keys('external'))}: posteriordb and Inference Gym) (default: default)")
    validate.add_argument("--thorough", action="store_true",
                          help="4 x the chains, 2 x the steps, and the targets of 'all' when --targets is default")
    validate.add_argument("--detect", type=float, default=DEFAULT_DETECT,
                          help=f"the relative variance error r the checks must resolve, > 0 (default: "
                               f"{DEFAULT_DETECT:g}; and a mean error of r standard deviations); a run that cannot is "
                               "INCONCLUSIVE")
    validate.add_argument("--budget", default=DEFAULT_BUDGET,
                          help="what the remedies of an INCONCLUSIVE may spend: a time (20min, 90s, 1.5h) or a number "
                               f"of gradient evaluations (2e9); shared by the targets (default: {DEFAULT_BUDGET})")
    validate.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    validate.add_argument("--chains", type=int, default=DEFAULT_CHAINS,
                          help=f"chains per target (default: {DEFAULT_CHAINS}; the claimed reference runs 4 x as many)")
    validate.add_argument("--steps", type=int, default=4000, help="scored steps per chain (default: 4000)")
    validate.add_argument("--warmup", type=int, default=None,
                          help="steps run from the overdispersed start before scoring (default: --steps)")
    validate.add_argument("--reseed", type=int, default=0, metavar="N",
                          help="run the same validation with seeds SEED..SEED+N-1 and report how often each outcome "
                               "came, with 95 %% Clopper-Pearson upper bounds (on a correct sampler: the measured "
                               "false-failure rate); resumes from --record")
    validate.add_argument("--record", type=Path, default=None,
                          help="with --reseed: the JSON-lines record of the runs (default: "
                               "OUT/validate_NAME_reseed.jsonl); runs already in it are not repeated")
    validate.add_argument("--traceback", action="store_true",
                          help="where the sampler's code broke (ERROR), print the full traceback too")
    add_out_option(validate, "the verdict page")
    validate.set_defaults(handler=execute, heartbeat=True)


def _names(pairs) -> dict:
    renamed = parse_key_values(pairs, "--map")
    bad = [f"{k}={v}" for k, v in renamed.items() if not isinstance(v, str)]
    if bad:
        raise UsageError(f"--map takes CANDIDATE=REFERENCE hyperparameter names, got {bad[0]!r}")
    return renamed


def execute(args, argv) -> int:
    import math
    import os

    from sgbench.bench.adapters import load_sampler
    from sgbench.bench.running.config import MAX_CHAINS, MAX_TOTAL_STEPS
    from sgbench.bench.validate import page as validate_page
    from sgbench.bench.validate.result import Interrupted
    from sgbench.samplers import MissingHyperparameter

    integer_at_least("--seed", args.seed, 0, MAX_GATE_SEED)
    integer_at_least("--reseed", args.reseed, 0, MAX_GATE_SEED - args.seed)
    integer_at_least("--chains", args.chains, 2, MAX_CHAINS)
    integer_at_least("--steps", args.steps, 4, MAX_TOTAL_STEPS)
    if args.warmup is not None:
        integer_at_least("--warmup", args.warmup, 0, MAX_TOTAL_STEPS)
    if not (math.isfinite(args.detect) and args.detect > 0):
        raise UsageError(f"--detect takes a finite number > 0 (a relative variance error), got {args.detect:g}")
    from sgbench.bench.validate.budget import Budget

    try:
        budget = Budget.parse(args.budget)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if args.record is not None and not args.reseed:
        raise UsageError("--record goes with --reseed N (the record of the reseeded runs)")
    output_folder(args.out)
    if os.getcwd() not in sys.path:  # MODULE is found in the current folder, as `python -m` finds it
        sys.path.insert(0, os.getcwd())
    sampler = load_sampler(args.sampler)
    options = dict(params=parse_key_values(args.param, "--param"), claims=args.claims, targets=args.targets,
                   num_chains=args.chains, num_steps=args.steps, warmup=args.warmup, detect=args.detect,
                   thorough=args.thorough, rename=_names(args.map), budget=budget,
                   reference_params=parse_key_values(args.reference_param, "--reference-param"))
    if args.reseed:
        return _reseed(sampler, options, args)
    try:
        verdict = _validated(sampler, args.seed, args.out, progress, options)
    except MissingHyperparameter as missing:
        raise UsageError(f"{missing}: give it with --param {missing.name}=VALUE") from None
    except Interrupted as stopped:
        decided = stopped.validation.verdict.outcomes
        if not decided:
            raise KeyboardInterrupt("sgbench: validate interrupted before any target was decided: no verdict and no "
                                    "page") from None
        page = validate_page.write(stopped.validation)
        raise KeyboardInterrupt(f"sgbench: validate interrupted: no verdict; {', '.join(decided)} decided (printed "
                                f"above), on the page {page}") from None
    print(verdict.summary())
    if args.traceback:
        for key, fault in verdict.faults.items():
            print(f"on {key}: {fault.traceback_text() or 'no traceback: ' + fault.line}", file=sys.stderr)
    return verdict.outcome.exit_status


def _validated(sampler, seed: int, out: Path, on_progress, options: dict, overwrite: bool = False):
    """One validation: computed (``sgbench.bench.validate.validate``), its page written
    (``sgbench.bench.validate.page``, beside an earlier run's unless ``overwrite``); its Verdict."""
    from sgbench.bench.validate import page as validate_page
    from sgbench.bench.validate.validate import validate

    validation = validate(sampler, seed=seed, out=out, progress=on_progress, **options)
    validate_page.write(validation, overwrite)
    return validation.verdict


def _reseed(sampler, options: dict, args) -> int:
    """``--reseed N``: the outcomes of N seeds (``sgbench.bench.validate.reseed``), each seed's page written
    as a single run's; exit 0 (a measurement)."""
    import pandas as pd

    from sgbench.bench.validate.reseed import finished, reseed, settings_key, summary

    record = args.record or args.out / f"validate_{re.sub(r'[^A-Za-z0-9_.-]+', '_', sampler.name)}_reseed.jsonl"
    # the suite's own modules without their package prefix, so that the records made before the suite had one
    # import name (reports/validate_reseed: `samplers.sgld:SAMPLER`) keep their key and resume
    settings = {"sampler": args.sampler.removeprefix("sgbench."), **options}
    try:
        runs = reseed(lambda seed: _validated(sampler, seed, args.out, lambda _: None, options, overwrite=True),
                      settings, range(args.seed, args.seed + args.reseed), record, progress=progress)
    except KeyboardInterrupt:
        kept = len(finished(record, settings_key(settings)))
        raise KeyboardInterrupt(f"sgbench: validate --reseed interrupted: {kept} finished runs are in {record}; run "
                                "the same command again to resume") from None
    pd.set_option("display.width", 200)
    print(summary(runs).to_string(index=False))
    per_target = pd.DataFrame(list(runs["outcomes"])).apply(lambda c: c.value_counts()).fillna(0).astype(int)
    per_target.index.name = "outcome"
    print("per target:\n" + per_target.to_string())
    print(f"record: {record}")
    return 0
