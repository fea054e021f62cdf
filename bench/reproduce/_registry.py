"""The reproductions ``sgbench reproduce NAME`` knows: one :class:`Reproduction` per paper table or figure,
registered by the module that computes it, so a new reproduction is one new file in ``sgbench.bench.reproduce``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from sgbench.base.registry import Registry

SCALES = ("quick", "paper")


@dataclasses.dataclass(frozen=True)
class Option:
    """A command-line option of one reproduction: ``--FLAG VALUE`` (``repeatable``: may be given several times,
    the values collected in a list), its value converted by ``type`` (``int``, ``float`` or ``str``)."""

    flag: str
    help: str
    type: type = int
    repeatable: bool = False

    @property
    def dest(self) -> str:
        """The option's name in the parsed arguments and in ``run``'s ``options``."""
        return self.flag.removeprefix("--").replace("-", "_")


@dataclasses.dataclass(frozen=True)
class Reproduction:
    """One table or figure of a paper.

    Attributes:
        name: the ``sgbench reproduce`` name (``paper-table1``).
        summary: one line: what it reproduces.
        source: the paper, by its short name in docs/bibliography.md, and section (``"SMILE paper, appendix D"``).
        scales: ``{"quick": what it runs, "paper": what it runs}``, in words.
        run: ``run(scale, options, db, out, progress) -> sgbench.bench.reproduce.outcome.Outcome``: ``scale`` one of
            ``SCALES``; ``options`` the values of ``options`` given (missing ones absent); ``db`` the results
            store's path, beside which its record keeps each finished unit (``sgbench.bench.reproduce._record``,
            ``record_path(db, name)``), so that an interrupted reproduction resumes; ``out`` the folder of its page.
        options: its own command-line options, beyond ``--scale``, ``--db``, ``--out`` and ``--no-progress``.
    """

    name: str
    summary: str
    source: str
    scales: dict
    run: Callable
    options: tuple[Option, ...] = ()

    def __post_init__(self):
        if set(self.scales) != set(SCALES):
            raise ValueError(f"scales must describe exactly {', '.join(SCALES)}, got {sorted(self.scales)}")


SEED_OPTION = Option("--seed", "random seed of the runs (default: 0)")
JOBS_OPTION = Option("--jobs", "units (runs, cells) computed at once, each in its own process (default: 1)")
# where a reproduction's runs are computed (executor_context checks them)
EXECUTOR_OPTIONS = (Option("--executor", "local (default) or dask: each run or cell a task on Dask distributed", str),
                    Option("--scheduler", "with --executor dask: a scheduler address (default: a LocalCluster)", str),
                    Option("--workers", "with --executor dask and no --scheduler: the LocalCluster's workers"))


def executor_context(options: dict, jobs: int):
    """The Dask client context of ``options`` (``sgbench.bench.sweeps.dask_tasks.client_context``: None for the local
    executor); a ValueError when ``--jobs`` local processes are asked for with ``--executor dask``."""
    from sgbench.bench.sweeps.dask_tasks import client_context

    executor = options.get("executor", "local")
    if executor != "local" and jobs != 1:
        raise ValueError("--jobs shares the runs between local processes; with --executor dask give --workers")
    return client_context(executor, options.get("scheduler"), options.get("workers"))


def jobs_of(options: dict, most: int = 64) -> int:
    """The ``--jobs`` of ``options`` (default 1), checked: an integer in [1, ``most``]."""
    from sgbench.base.arguments import integer_at_least

    return integer_at_least("--jobs", options.get("jobs", 1), 1, most)


def seed_of(options: dict) -> int:
    """The ``--seed`` of ``options`` (default 0), checked: an integer in [0, ``MAX_SEED``]."""
    from sgbench.base.arguments import integer_at_least
    from sgbench.bench.running.config import MAX_SEED

    return integer_at_least("--seed", options.get("seed", 0), 0, MAX_SEED)


def check_data_file(flag: str, path, **bnn_arguments) -> None:
    """Build the ``bnn`` target of a user's data file ``path`` once, before any run, so that a missing, unreadable or
    unusable file stops the command at once; a ValueError naming ``flag`` and the file otherwise.

    Args:
        flag: the option that gave the file (``--dataset-file``, or ``--data NAME=PATH``'s ``--data NAME``).
        path: the file (``.csv`` with a label column ``y``, or ``.npz``).
        **bnn_arguments: the rest of the ``bnn`` target's arguments the runs use (``task``, ``hidden``, ...).
    """
    from sgbench import targets

    try:
        targets.get("bnn", noise="none", dataset="file", path=path, **bnn_arguments)
    except (OSError, ValueError) as error:
        raise ValueError(f"{flag}: {error}") from error


REPRODUCTIONS: Registry[Reproduction] = Registry("reproduction", "sgbench.bench.reproduce")


def register(reproduction: Reproduction) -> Reproduction:
    """Add ``reproduction`` under its name; returns it."""
    return REPRODUCTIONS.register(reproduction.name, reproduction)


def get(name: str) -> Reproduction:
    """The reproduction ``name`` (an UnknownNameError listing the known ones otherwise)."""
    return REPRODUCTIONS.get(name)


def names() -> list[str]:
    """The known reproductions' names, sorted."""
    return REPRODUCTIONS.names()
