"""``sgbench device-check [--quick] [--skip scaling|bnn|asv|gate ...] [--out DIR] [--repeats N] [--machine NAME]``:
one prepared run that records what a (GPU) machine does, in about 8 minutes on one GPU (issue 46).

It installs nothing. It reports the environment (JAX, jaxlib, its backend and devices, the CUDA plugin packages,
``nvidia-smi``), then measures, writing each part into the folder as it finishes
(``sgbench.bench.perf.device_check``; the gate: ``sgbench.bench.gate.dtypes``): per-chain-step time of SGLD,
SGHMC, MCLMC and SMILE at 10, 1,000 and 100,000 chains; SGLD's overhead on the d = 10^5 bnn; the asv quick subset
(``sgbench.bench.cli.asv.QUICK_BENCHMARKS``) recorded under this machine's asv name into ``DIR/asv/results``
(merge it: ``sgbench dashboard --results DIR/asv/results``); the quick gate's JAX cells in float32 and float64.
``--quick`` (for a CPU): 10 and 1,000 chains, 10^5 chain-steps a run, SGLD's gate cells only. The folder defaults
to ``reports/device_check/<machine name>/``.

JAX is kept from taking most of the GPU's memory at its start (``XLA_PYTHON_CLIENT_PREALLOCATE=false`` unless the
caller set it), so that asv's benchmark processes find memory.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sgbench.base.arguments import integer_at_least
from sgbench.bench.cli._common import UsageError, output_folder, progress
from sgbench.bench.cli.asv import QUICK_BENCHMARKS, asv_run_command, check_machine_name, run_asv

DEFAULT_ROOT = Path("reports") / "device_check"
PARTS = ("scaling", "bnn", "asv", "gate")
MAX_REPEATS = 100


def add_parser(commands) -> None:
    check = commands.add_parser("device-check", help="environment, chain scaling, bnn overhead, asv quick subset and "
                                "the quick gate in float32 and float64, into one folder (about 8 minutes on a GPU)")
    check.add_argument("--quick", action="store_true",
                       help="10 and 1,000 chains, 10^5 chain-steps a run, SGLD's gate cells only (a CPU's run)")
    check.add_argument("--skip", action="append", default=[], metavar="PART",
                       help=f"leave out a part: {', '.join(PARTS)} (repeatable)")
    check.add_argument("--repeats", type=int, default=3, help="timed runs of each timing, the best kept (default: 3)")
    check.add_argument("--machine", help="asv machine name (default: <hostname>-gpu-<model> or "
                                         "<hostname>-cpu-<N>cores, from what JAX sees)")
    check.add_argument("--out", type=Path, default=None,
                       help=f"the folder (default: {DEFAULT_ROOT}/<machine name>/)")
    check.set_defaults(handler=execute, heartbeat=True)


def check_arguments(args) -> None:
    """UsageError (exit 2, one line) for a bad ``--skip``, ``--repeats`` or ``--machine``."""
    for part in args.skip:
        if part not in PARTS:
            raise UsageError(f"--skip must be one of {', '.join(PARTS)}, got {part!r}")
    try:
        integer_at_least("--repeats", args.repeats, 1, MAX_REPEATS)
    except ValueError as error:
        raise UsageError(str(error)) from None
    check_machine_name(args.machine)


def execute(args, argv) -> int:
    check_arguments(args)
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # before JAX's backend starts
    from sgbench.base import provenance
    from sgbench.bench.perf import asv_machine, device_check, device_environment

    machine = args.machine or asv_machine.machine_name(provenance.jax_devices())
    out = output_folder(args.out if args.out is not None else DEFAULT_ROOT / machine)
    folder = device_check.DeviceCheckFolder(out, machine, device_environment.report())
    folder.start()
    progress(f"device-check: {folder.environment['label']}, asv machine {machine}, into {out}")
    parts = [part for part in PARTS if part not in args.skip]
    part = "the environment"
    try:
        for part in parts:
            run_part(part, args, folder, machine)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"sgbench: device-check interrupted during {part}: kept in {out}: "
                                f"{', '.join(folder.written())} (each part is written when it finishes; the "
                                "scaling table a row at a time); run the rest with --skip for the finished parts") \
            from None
    print(f"report: {out / device_check.PAGE}")
    return 0


def run_part(part: str, args, folder, machine: str) -> None:
    """Measure one part and keep it in ``folder``."""
    from sgbench.bench.perf import asv_config, chain_scaling, device_check, speed

    if part == "scaling":
        counts, budget = ((device_check.QUICK_CHAIN_COUNTS, device_check.QUICK_BUDGET) if args.quick
                          else (chain_scaling.CHAIN_COUNTS, chain_scaling.BUDGET))
        chain_scaling.measure(chain_scaling.SAMPLERS, counts, budget, args.repeats, progress=progress,
                              on_row=lambda table: folder.keep("scaling", table))
    elif part == "bnn":
        import pandas as pd

        folder.keep("bnn", pd.DataFrame([speed.bnn_overhead(repeats=args.repeats, progress=progress)]))
    elif part == "asv":
        import pandas as pd

        from sgbench.bench.perf.asv_machine import AsvError, register_machine

        config = asv_config.write_config(folder.folder / "asv")
        try:
            register_machine(config, name=machine)
            status = run_asv(asv_run_command(config, machine, True, QUICK_BENCHMARKS))
        except AsvError as error:
            status = error.returncode
            print(f"sgbench: device-check: asv: {error}", file=sys.stderr)
        results = config.parent / "results"
        files = sorted(str(path.relative_to(results)) for path in results.rglob("*.json")) if results.is_dir() else []
        folder.keep("asv", pd.DataFrame([{"asv status": status, "machine": machine, "results": str(results),
                                          "result files": ", ".join(files) or "none",
                                          "merge": f"sgbench dashboard --results {results}"}]))
    else:
        from sgbench.bench.gate import dtypes

        dtypes.gate_by_dtype(dtypes.DTYPES, args.quick, progress=progress,
                             on_row=lambda table: folder.keep("gate", table))
