"""``sgbench speed [--steps N] [--numpy-steps N] [--grid-steps N] [--no-bnn] [--sampler S ...]``:
per-chain-step times of every sampler against its random-number floor, SGLD against other libraries
(``bench/perf/speed.py``)."""

from __future__ import annotations

from sgbench.bench.cli._common import UsageError, output_folder, progress
from sgbench.bench.cli._report_folders import add_out_option


def add_parser(commands) -> None:
    speed = commands.add_parser("speed", help="time every sampler against its random-number floor, SGLD against "
                                "blackjax, posteriors and NumPy, a 22-step-size grid and the bnn overhead")
    speed.add_argument("--steps", type=int, default=1_000_000, help="JAX steps per run (default: 10^6)")
    speed.add_argument("--numpy-steps", type=int, default=2000, help="steps of the Python loops (default: 2000)")
    speed.add_argument("--grid-steps", type=int, default=1_000_000,
                       help="steps of the SGLD 22-step-size grid (default: 10^6; 0 leaves it out)")
    speed.add_argument("--no-bnn", action="store_true", help="leave out the 10^5-parameter bnn overhead")
    speed.add_argument("--sampler", action="append", help="only these samplers in the per-sampler table (repeatable)")
    speed.add_argument("--repeats", type=int, default=3, help="timed runs, the best is kept (default: 3)")
    add_out_option(speed, "speed.html")
    speed.set_defaults(handler=execute, heartbeat=True)


def execute(args, argv) -> int:
    import pandas as pd

    from sgbench import samplers
    from sgbench.bench.perf import speed

    for option in ("steps", "numpy_steps", "repeats"):
        if getattr(args, option) < 1:
            raise UsageError(f"--{option.replace('_', '-')} must be an integer >= 1, got {getattr(args, option)}")
    if args.grid_steps < 0:
        raise UsageError(f"--grid-steps must be an integer >= 0 (0 leaves the grid out), got {args.grid_steps}")
    output_folder(args.out)
    names = args.sampler or samplers.names()
    for name in names:
        samplers.get(name)  # an unknown name lists the registered ones
    progress(f"speed: {len(names)} samplers, SGLD against other libraries"
             + (f", the {args.grid_steps}-step grid" if args.grid_steps else "") + ("" if args.no_bnn else ", the bnn"))
    try:
        report = speed.measure(names, args.steps, args.numpy_steps, args.grid_steps or None, not args.no_bnn,
                               args.repeats, progress=progress)
    except KeyboardInterrupt:
        raise KeyboardInterrupt("sgbench: speed interrupted: nothing was written (its tables and page are written once "
                                "every timing has finished: timings are compared only within one run); run it again, "
                                "or time a part with --sampler, --grid-steps 0, --no-bnn") from None
    print(report.sgld.round(4).to_string())
    print(report.samplers.round(4).to_string())
    for part in (report.grid, report.bnn):
        if part is not None:
            print(pd.Series(part).to_string())
    args.out.mkdir(parents=True, exist_ok=True)
    report.samplers.to_csv(args.out / "speed_samplers.csv")
    report.sgld.to_csv(args.out / "speed_sgld.csv")
    print(f"report: {report.write(args.out / 'speed.html')}")
    return 0
