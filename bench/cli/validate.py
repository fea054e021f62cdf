"""``sgbench validate MODULE:OBJECT [--param KEY=VALUE ...] [--claims NAME] [--targets icg|linreg|all]
[--chains C] [--steps N] [--seed S] [--out DIR]``: a sampler someone wrote (or an adapter) against truth
and the suite's implementation of what it claims (exit 1 when a check fails)."""

from __future__ import annotations

from base.arguments import integer_at_least
from bench.cli._common import MAX_GATE_SEED, output_folder, parse_key_values, progress
from bench.cli._report_folders import add_out_option



def add_parser(commands) -> None:
    validate = commands.add_parser("validate", help="validate a sampler (MODULE:OBJECT) against truth and "
                                                    "the suite's reference implementation")
    validate.add_argument("sampler", help="MODULE:OBJECT, a Sampler in the suite's contract or an adapter, "
                                          "e.g. bench.adapters.blackjax:sgld")
    validate.add_argument("--param", action="append", metavar="KEY=VALUE", help="hyperparameter (repeatable)")
    validate.add_argument("--claims", default=None,
                          help="the suite sampler it implements (default: the adapter's claim, or its name if "
                               "registered; the registered sampler itself is checked against its stored design "
                               "bias or exact truth, never against itself)")
    validate.add_argument("--targets", choices=("icg", "linreg", "all"), default="all",
                          help="which gate targets (default: all)")
    validate.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    validate.add_argument("--chains", type=int, default=64, help="chains per target (default: 64)")
    validate.add_argument("--steps", type=int, default=4000, help="steps per chain (default: 4000)")
    add_out_option(validate, "the verdict page")
    validate.set_defaults(handler=execute)


def execute(args, argv) -> int:
    from bench.adapters import load_sampler
    from bench.gate.validate import validate
    from bench.running.config import MAX_CHAINS, MAX_TOTAL_STEPS

    integer_at_least("--seed", args.seed, 0, MAX_GATE_SEED)
    integer_at_least("--chains", args.chains, 2, MAX_CHAINS)
    integer_at_least("--steps", args.steps, 1, MAX_TOTAL_STEPS)
    output_folder(args.out)
    verdict = validate(load_sampler(args.sampler), params=parse_key_values(args.param, "--param"),
                       claims=args.claims, targets=args.targets, seed=args.seed, num_chains=args.chains,
                       num_steps=args.steps, out=args.out, progress=progress)
    print(verdict.summary())
    return 0 if verdict.passed else 1
