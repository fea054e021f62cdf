"""``sgbench reference build|check TARGET [--param KEY=VALUE ...] [options]``: gold-standard NUTS
references in reference/data/ (build: run NUTS, apply the posteriordb contract, store the draws;
check: rebuild with another seed and z-test against the stored reference)."""

from __future__ import annotations

import json
from pathlib import Path

from base.arguments import in_interval, integer_at_least, one_of, positive_finite
from bench.cli._common import command_line, parse_key_values

BACKENDS = ("numpyro", "blackjax")
MAX_SEED = 2**63 - 2  # build cross-checks with seed + 1
MAX_CHAINS = 1024


def add_parser(commands) -> None:
    from reference.contract import Contract

    defaults = Contract()
    reference_parser = commands.add_parser("reference", help="build or check a stored NUTS reference")
    actions = reference_parser.add_subparsers(dest="action", required=True)
    build = actions.add_parser("build", help="run NUTS, apply the posteriordb contract, store the draws")
    check = actions.add_parser("check", help="rebuild with another seed and z-test against the stored reference")
    for sub, seed in ((build, 0), (check, 1)):
        sub.add_argument("target", help="target name (see `sgbench list targets`)")
        sub.add_argument("--param", action="append", metavar="KEY=VALUE", help="target parameter (repeatable)")
        sub.add_argument("--backend", default="numpyro", help=f"{' or '.join(BACKENDS)} (default: numpyro)")
        sub.add_argument("--chains", type=int, default=4, help="NUTS chains (default: 4)")
        sub.add_argument("--warmup", type=int, default=1000, help="adaptation steps per chain (default: 1000)")
        sub.add_argument("--draws", type=int, default=2500, help="kept draws per chain (default: 2500)")
        sub.add_argument("--seed", type=int, default=seed, help=f"random seed (default: {seed})")
        sub.add_argument("--stored", type=int, default=defaults.num_stored,
                         help=f"thinned draws stored, all chains (default: {defaults.num_stored})")
        sub.add_argument("--min-ess", type=float, default=defaults.min_ess,
                         help=f"bulk and tail ESS required after thinning (default: {defaults.min_ess:g})")
        sub.add_argument("--target-accept", type=float, default=0.8,
                         help="NUTS target acceptance rate in (0, 1) (default: 0.8)")
        sub.add_argument("--dir", type=Path, default=None, help="reference folder (default: reference/data)")
        sub.add_argument("--progress", action="store_true", help="show NumPyro's progress bar")
        sub.add_argument("--alpha", type=float, default=1e-3,
                         help="family-wise false-failure rate of the agreement z-tests (default: 1e-3)")
    build.add_argument("--no-cross-check", action="store_true",
                       help="skip the cross-check run with the other NUTS implementation")
    reference_parser.set_defaults(handler=execute)


def execute(args, argv) -> int:
    import targets
    from reference.build import build
    from reference.reproducibility import rebuild_and_compare
    from reference.contract import Contract

    check_options(args)
    target = targets.get(args.target, **parse_key_values(args.param, "--param"))
    contract = Contract(num_stored=args.stored, min_ess=args.min_ess)
    options = dict(backend=args.backend, num_chains=args.chains, num_warmup=args.warmup, num_draws=args.draws,
                   seed=args.seed, contract=contract, directory=args.dir, target_accept=args.target_accept)
    if args.action == "build":
        npz, header = build(target, command=command_line(argv), progress=args.progress,
                            cross_check=not args.no_cross_check, alpha=args.alpha, **options)
        print(f"stored {npz} and {header}")
        cross = json.loads(header.read_text()).get("cross_check")
        if cross:
            print(f"cross-check with {cross['backend']} (seed {cross['seed']}) agrees: max |z| = "
                  f"{cross['max_abs_z']:.2f} at {cross['worst']}, threshold {cross['threshold']:.2f}")
        return 0
    result = rebuild_and_compare(target, alpha=args.alpha, **options)
    verdict = "agrees with" if result.passed else "DISAGREES with"
    print(f"rebuild (seed {args.seed}) {verdict} the stored reference: max |z| = {result.max_abs_z:.2f} at "
          f"{result.worst}, threshold {result.threshold:.2f} (family-wise alpha {args.alpha:g})")
    return 0 if result.passed else 1


def check_options(args) -> None:
    """A ValueError naming the first option outside its range, before NUTS runs (minutes)."""
    one_of("--backend", args.backend, BACKENDS)
    integer_at_least("--chains", args.chains, 1, MAX_CHAINS)
    integer_at_least("--warmup", args.warmup, 1)
    integer_at_least("--draws", args.draws, 1)
    integer_at_least("--seed", args.seed, 0, MAX_SEED)
    integer_at_least("--stored", args.stored, 4)
    positive_finite("--min-ess", args.min_ess)
    in_interval("--target-accept", args.target_accept, 0.0, 1.0, low_open=True, high_open=True)
    in_interval("--alpha", args.alpha, 0.0, 1.0, low_open=True, high_open=True)
