"""``sgbench reference build|check TARGET [--param KEY=VALUE ...] [options]``: gold-standard NUTS
references in reference/data/ (build: run NUTS, apply the posteriordb contract, store the draws;
check: rebuild with another seed and z-test against the stored reference)."""

from __future__ import annotations

import json
from pathlib import Path

from sgbench.base.arguments import in_interval, integer_at_least, one_of, positive_finite
from sgbench.bench.cli._common import command_line, parse_key_values
from sgbench.reference.contract import Contract

BACKENDS = ("numpyro", "blackjax")
MAX_SEED = 2**63 - 2  # build cross-checks with seed + 1
MAX_CHAINS = 1024
# (option, type, build default, help): a check reruns the stored reference's own settings unless told otherwise.
RUN_SETTINGS = (
    ("--chains", int, 4, "NUTS chains"),
    ("--warmup", int, 1000, "adaptation steps per chain"),
    ("--draws", int, 2500, "kept draws per chain"),
    ("--stored", int, Contract().num_stored, "thinned draws stored, all chains"),
    ("--min-ess", float, float(Contract().min_ess), "bulk and tail ESS required after thinning"),
    ("--target-accept", float, 0.8, "NUTS target acceptance rate in (0, 1)"),
)


def add_parser(commands) -> None:
    reference_parser = commands.add_parser("reference", help="build or check a stored NUTS reference")
    actions = reference_parser.add_subparsers(dest="action", required=True)
    build = actions.add_parser("build", help="run NUTS, apply the posteriordb contract, store the draws")
    check = actions.add_parser("check", help="rebuild with another seed and z-test against the stored reference")
    for sub, seed in ((build, 0), (check, 1)):
        sub.add_argument("target", help="target name (see `sgbench list targets`)")
        sub.add_argument("--param", action="append", metavar="KEY=VALUE", help="target parameter (repeatable)")
        sub.add_argument("--backend", default="numpyro", help=f"{' or '.join(BACKENDS)} (default: numpyro)")
        sub.add_argument("--seed", type=int, default=seed, help=f"random seed (default: {seed})")
        sub.add_argument("--dir", type=Path, default=None, help="reference folder (default: reference/data)")
        sub.add_argument("--progress", action="store_true", help="show NumPyro's progress bar")
        sub.add_argument("--alpha", type=float, default=1e-3,
                         help="family-wise false-failure rate of the agreement z-tests (default: 1e-3)")
        for option, kind, default, text in RUN_SETTINGS:
            if sub is build:
                shown = f"{default:g}" if isinstance(default, float) else default
                sub.add_argument(option, type=kind, default=default, help=f"{text} (default: {shown})")
            else:
                sub.add_argument(option, type=kind, default=None, help=f"{text} (default: the stored reference's)")
    build.add_argument("--no-cross-check", action="store_true",
                       help="skip the cross-check run with the other NUTS implementation")
    reference_parser.set_defaults(handler=execute)


def execute(args, argv) -> int:
    from sgbench import targets
    from sgbench.reference import store as reference_store
    from sgbench.reference.build import build
    from sgbench.reference.reproducibility import rebuild_and_compare

    target = targets.get(args.target, **parse_key_values(args.param, "--param"))
    if args.action == "check":
        fill_from_header(args, reference_store.read_header(target, args.dir))
    check_options(args)
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


def fill_from_header(args, header: dict) -> None:
    """Give every run setting a check was not told the value the stored reference was built with."""
    stored = {"chains": header["diagnostics"]["chains"], "warmup": header["num_warmup"],
              "draws": header["num_draws"], "stored": header["contract"]["num_stored"],
              "min_ess": header["contract"]["min_ess"], "target_accept": header["target_accept"]}
    for name, value in stored.items():
        if getattr(args, name) is None:
            setattr(args, name, value)


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
