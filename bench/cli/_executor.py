"""``--executor local|dask``, ``--scheduler ADDRESS`` and ``--workers N``: where a sweep's runs are computed
(``sgbench.bench.sweeps.dask_tasks``), for the commands that run sweeps."""

from __future__ import annotations

from sgbench.bench.sweeps.dask_tasks import EXECUTORS, PER_TASK, client_context


def add_executor_options(parser, per_task: bool = False) -> None:
    """Add the three options to ``parser`` (their checks: ``sgbench.bench.sweeps.dask_tasks.client_context``), and
    ``--per-task point|entry`` where the command runs sweeps of entries (``per_task``)."""
    group = parser.add_argument_group("where the runs are computed")
    group.add_argument("--executor", choices=EXECUTORS, default="local",
                       help="local: in this process (the default); dask: each run a task on Dask distributed, "
                            "results stored by this process")
    group.add_argument("--scheduler", metavar="ADDRESS",
                       help="with --executor dask: a running scheduler, e.g. tcp://10.0.0.5:8786 (default: a "
                            "LocalCluster on this machine)")
    group.add_argument("--workers", type=int, metavar="N",
                       help="with --executor dask and no --scheduler: the LocalCluster's worker processes "
                            "(default: one per core)")
    if per_task:
        group.add_argument("--per-task", choices=PER_TASK, default="point",
                           help="with --executor dask: what one task computes, a grid point (the default: the most "
                                "tasks) or an entry's points in one vmapped program (fewer, faster per point)")


def executor_client(args):
    """``sgbench.bench.sweeps.dask_tasks.client_context`` of the parsed options: a context giving None or the client (a
    ``--per-task`` other than the default needs ``--executor dask``)."""
    if getattr(args, "per_task", "point") != "point" and args.executor != "dask":
        raise ValueError("--per-task needs --executor dask")
    return client_context(args.executor, args.scheduler, args.workers)
