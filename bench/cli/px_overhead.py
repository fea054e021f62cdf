"""``sgbench px-overhead [--chains N] [--steps N] [--repeats N] [--hidden H ...] [--batch-size B]
[--dtype float32|float64] [--no-rss]``: PX-SGHMC's time and memory against SGHMC on the digits BNN
(``sgbench.bench.perf.px_overhead``)."""

from __future__ import annotations

from sgbench.bench.cli._common import UsageError


def add_parser(commands) -> None:
    overhead = commands.add_parser("px-overhead", help="PX-SGHMC's time and memory overhead against SGHMC on the "
                                                       "digits BNN (the PX paper's cost analysis)")
    overhead.add_argument("--chains", type=int, default=10, help="chains (default: 10)")
    overhead.add_argument("--steps", type=int, default=2000, help="steps per chain (default: 2000)")
    overhead.add_argument("--repeats", type=int, default=5, help="timed runs, the best is kept (default: 5)")
    overhead.add_argument("--hidden", type=int, nargs="+", default=[16, 16],
                          help="hidden layer widths (default: 16 16)")
    overhead.add_argument("--batch-size", type=int, default=None, help="minibatch size (default: the target's, 32)")
    overhead.add_argument("--dtype", default="float32", choices=("float32", "float64"), help="(default: float32)")
    overhead.add_argument("--no-rss", action="store_true", help="skip the peak-RSS subprocesses")
    overhead.set_defaults(handler=execute)


def execute(args, argv) -> int:
    import pandas as pd

    from sgbench import targets
    from sgbench.base import provenance
    from sgbench.bench.perf.px_overhead import bnn_params, overhead_table

    for option in ("chains", "steps", "repeats"):
        if getattr(args, option) < 1:
            raise UsageError(f"--{option} must be an integer >= 1, got {getattr(args, option)}")
    target = targets.get("bnn", **bnn_params(args.hidden, args.batch_size))
    table = overhead_table(args.chains, args.steps, args.repeats, tuple(args.hidden), args.batch_size,
                           not args.no_rss, args.dtype)
    print(f"digits BNN, layers {target.layer_sizes}, batch {target.noise.batch_size}, {args.chains} chains x "
          f"{args.steps} steps, {args.dtype}, best of {args.repeats}; jax {provenance.library_version('jax')} "
          f"on {provenance.jax_devices()[0].platform}")
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4g}".format):
        print(table)
    return 0
