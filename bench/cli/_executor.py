"""``--executor local|dask``, ``--scheduler ADDRESS`` and ``--workers N``: where a sweep's runs are computed
(``bench.sweeps.dask_tasks``), for the commands that run sweeps."""

from __future__ import annotations

from bench.sweeps.dask_tasks import EXECUTORS, client_context


def add_executor_options(parser) -> None:
    """Add the three options to ``parser`` (their checks: ``bench.sweeps.dask_tasks.client_context``)."""
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


def executor_client(args):
    """``bench.sweeps.dask_tasks.client_context`` of the parsed options: a context giving None or the client."""
    return client_context(args.executor, args.scheduler, args.workers)
