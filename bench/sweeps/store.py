"""The results store: one SQLite row per run (one :class:`sgbench.bench.running.result.RunResult`).

Stdlib ``sqlite3`` in WAL journal mode (readers never block the writer), every ``add`` committed
at once so an interrupted sweep loses no finished row, and ``UNIQUE(config_hash, seed,
git_commit)`` so a resumed sweep never repeats one. A run is identified by its configuration,
its seed and the code that ran it (the commit, ``+dirty`` with uncommitted changes to tracked
files): the same sweep on the same code resumes, on new code it measures again. Adding a run
already stored raises :class:`DuplicateRunError`: a sweep asks :meth:`ResultsStore.has` first.

Concurrent sweeps into one store share the work: before computing a run, a sweep claims its key
(:meth:`ResultsStore.claim`, one transaction under the write lock). A key stored or claimed by a
live process (:mod:`sgbench.bench.sweeps.claims`) is not computed again; storing a run or
:meth:`ResultsStore.release` drops the claim, and a claim whose process died is taken over.

The schema is versioned with ``PRAGMA user_version``: ``MIGRATIONS[i]`` takes a database from
version ``i`` to ``i + 1``, so a later version adds a column by appending one migration. A
database written by newer code than this (a higher version) is refused with
:class:`SchemaVersionError` rather than misread.

JSON columns hold standard JSON: NaN is stored as ``null`` and +-inf as ``"Infinity"`` /
``"-Infinity"``; metrics decode back to NaN and +-inf.

What a row records of where and when it was made (the commit, the machine, the library versions, the time) is
what :mod:`sgbench.base.provenance` gives. The store answers the queries asked of it, so no module outside it
reads its tables: :meth:`ResultsStore.has`, :meth:`ResultsStore.runs_of`, :meth:`ResultsStore.newest_runs`,
:meth:`ResultsStore.to_frame` and :meth:`ResultsStore.checks_frame`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
from pathlib import Path
from typing import NamedTuple, Self

import numpy as np
import pandas as pd

from sgbench.base import provenance
from sgbench.bench.running.result import RunResult
from sgbench.bench.sweeps.claims import Owner, is_live, new_owner

MIGRATIONS: list[tuple[str, ...]] = [
    (
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at TEXT NOT NULL,
            suite TEXT,
            sampler TEXT NOT NULL,
            params TEXT NOT NULL,
            target TEXT NOT NULL,
            target_params TEXT NOT NULL,
            config TEXT NOT NULL,
            config_hash TEXT NOT NULL,
            seed INTEGER NOT NULL,
            metrics TEXT NOT NULL,
            diagnostics TEXT NOT NULL,
            grad_evals INTEGER NOT NULL,
            wall_seconds REAL NOT NULL,
            compile_seconds REAL NOT NULL,
            run_seconds REAL NOT NULL,
            chain_steps_per_second REAL,
            git_commit TEXT NOT NULL,
            machine TEXT NOT NULL,
            versions TEXT NOT NULL,
            UNIQUE (config_hash, seed, git_commit)
        )""",
        "CREATE INDEX runs_by_sampler_target ON runs (sampler, target)",
    ),
    ("ALTER TABLE runs ADD COLUMN curves TEXT NOT NULL DEFAULT '{}'",),
    (
        """CREATE TABLE checks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at TEXT NOT NULL,
            suite TEXT NOT NULL,
            cell TEXT NOT NULL,
            seed INTEGER NOT NULL,
            name TEXT NOT NULL,
            passed INTEGER NOT NULL,
            alpha REAL NOT NULL,
            statistic REAL,
            threshold REAL,
            detectable REAL,
            git_commit TEXT NOT NULL,
            machine TEXT NOT NULL
        )""",
    ),
    (
        """CREATE TABLE claims (
            config_hash TEXT NOT NULL,
            seed INTEGER NOT NULL,
            git_commit TEXT NOT NULL,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            token TEXT NOT NULL,
            claimed_at TEXT NOT NULL,
            PRIMARY KEY (config_hash, seed, git_commit)
        )""",
    ),
]
SCHEMA_VERSION = len(MIGRATIONS)

VERSIONED_PACKAGES = ("numpy", "jax", "jaxlib", "scipy", "pandas", "sgmcmc-bench")
_JSON_COLUMNS = ("params", "target_params", "config", "diagnostics", "curves", "versions")


class StoreError(ValueError):
    """A results store that cannot be used as asked."""


class SchemaVersionError(StoreError):
    """The database was written by a newer version of sgmcmc-bench than this one."""


class DuplicateRunError(StoreError):
    """A run with this (config_hash, seed) is already stored for this code version."""


def _encode(value):
    """``value`` with NumPy types made plain, NaN -> None and +-inf -> "Infinity"/"-Infinity"."""
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_encode(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def to_json(value) -> str:
    """Standard JSON (no NaN tokens) of ``value``; keys sorted."""
    return json.dumps(_encode(value), sort_keys=True, allow_nan=False)


class Claimed(NamedTuple):
    """What :meth:`ResultsStore.claim` found for each key asked: claimed now by this store
    connection (``mine``), stored already (``stored``), or claimed by another live process
    (``others``: key -> its owner)."""

    mine: list[tuple[str, int]]
    stored: list[tuple[str, int]]
    others: dict[tuple[str, int], Owner]


def _decode_number(value):
    if value is None:
        return math.nan
    if value in ("Infinity", "-Infinity"):
        return math.inf if value == "Infinity" else -math.inf
    return value


def metrics_from_json(text: str) -> dict:
    """Metrics as stored, with null decoded to NaN and "Infinity"/"-Infinity" to +-inf."""
    return {name: _decode_number(v) for name, v in json.loads(text).items()}


def _advice(error: sqlite3.DatabaseError) -> str:
    """What an SQLite error opening a store means for the user, and what to do."""
    text = str(error)
    if "locked" in text or "busy" in text:
        return f"another process holds it ({text}); wait for it to finish, or use another --db"
    if "already exists" in text or "no such table" in text or "file is not a database" in text:
        return f"this file is not an sgbench results store ({text}); give a new file or an sgbench store as --db"
    return text


class ResultsStore:
    """An SQLite results store at ``path`` (created, with its parent folders, if missing).

    Use as a context manager or call :meth:`close`. Every :meth:`add` is committed immediately.
    """

    def __init__(self, path):
        self.path = Path(path)
        self.owner = new_owner()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA busy_timeout=10000")
            self._migrate()
        except sqlite3.DatabaseError as error:
            self._conn.close()
            raise StoreError(f"{self.path} is not a usable results store: {_advice(error)}") from error
        except BaseException:
            self._conn.close()
            raise

    def _migrate(self) -> None:
        """Apply the missing migrations, one transaction each; the version is read inside the
        write lock, so two processes opening a new store do not both migrate it."""
        while True:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                version = self.schema_version
                if version > SCHEMA_VERSION:
                    raise SchemaVersionError(
                        f"results store {self.path} has schema version {version}, newer than version "
                        f"{SCHEMA_VERSION} known to this sgmcmc-bench; upgrade sgmcmc-bench to read it"
                    )
                if version == SCHEMA_VERSION:
                    self._conn.execute("COMMIT")
                    return
                for statement in MIGRATIONS[version]:
                    self._conn.execute(statement)
                self._conn.execute(f"PRAGMA user_version = {version + 1:d}")
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    @property
    def schema_version(self) -> int:
        return self._conn.execute("PRAGMA user_version").fetchone()[0]

    @property
    def journal_mode(self) -> str:
        return self._conn.execute("PRAGMA journal_mode").fetchone()[0]

    def add(self, result: RunResult, suite: str | None = None, ran_on: str | None = None) -> int:
        """Store ``result`` (committed at once) and return its row id; DuplicateRunError if its
        (config_hash, seed) is already stored for this code version. ``ran_on``: the
        :func:`sgbench.base.provenance.machine_summary` of the machine that computed it, where that is not this one
        (a Dask worker)."""
        timings = result.timings
        row = {
            "created_at": provenance.utc_now(),
            "suite": suite,
            "sampler": result.sampler,
            "params": to_json(result.params),
            "target": result.target,
            "target_params": to_json(result.target_params),
            "config": to_json(dataclasses.asdict(result.config)),
            "config_hash": result.config_hash,
            "seed": result.config.seed,
            "metrics": to_json(result.metrics),
            "diagnostics": to_json(result.diagnostics),
            "curves": to_json(result.curves),
            "grad_evals": result.grad_evals,
            "wall_seconds": timings["compile_seconds"] + timings["run_seconds"],
            "compile_seconds": timings["compile_seconds"],
            "run_seconds": timings["run_seconds"],
            "chain_steps_per_second": _encode(timings["chain_steps_per_second"]),
            "git_commit": provenance.git_commit(),
            "machine": ran_on or provenance.machine_summary(),
            "versions": to_json(provenance.library_versions(VERSIONED_PACKAGES)),
        }
        columns = ", ".join(row)
        placeholders = ", ".join(f":{name}" for name in row)
        try:
            with self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                cursor = self._conn.execute(f"INSERT INTO runs ({columns}) VALUES ({placeholders})", row)
                self._conn.execute("DELETE FROM claims WHERE config_hash = ? AND seed = ? AND git_commit = ?",
                                   (row["config_hash"], row["seed"], row["git_commit"]))
        except sqlite3.IntegrityError as error:
            raise DuplicateRunError(
                f"results store {self.path} already holds a run with config_hash "
                f"{row['config_hash']} and seed {row['seed']} from code {row['git_commit']}"
            ) from error
        return cursor.lastrowid

    def claim(self, keys) -> Claimed:
        """Claim every ``(config_hash, seed)`` of ``keys`` that is neither stored for this code
        version nor claimed by a live process (a dead one's claim is taken over), in one
        transaction; return what was found for each key."""
        commit, mine, stored, others = provenance.git_commit(), [], [], {}
        with self._conn:
            self._conn.execute("BEGIN IMMEDIATE")
            for config_hash, seed in dict.fromkeys((h, int(s)) for h, s in keys):
                key = (config_hash, seed)
                if self.has(config_hash, seed):
                    stored.append(key)
                    continue
                held = self._conn.execute(
                    "SELECT host, pid, token, claimed_at FROM claims WHERE config_hash = ? AND seed = ? "
                    "AND git_commit = ?", (config_hash, seed, commit)).fetchone()
                if held is not None and Owner(*held[:3]) != self.owner and is_live(Owner(*held[:3]), held[3]):
                    others[key] = Owner(*held[:3])
                    continue
                self._conn.execute(
                    "INSERT OR REPLACE INTO claims (config_hash, seed, git_commit, host, pid, token, claimed_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)", (config_hash, seed, commit, *self.owner, provenance.utc_now()))
                mine.append(key)
        return Claimed(mine, stored, others)

    def release(self, keys) -> None:
        """Drop this connection's claims on ``keys`` (runs it will not compute after all)."""
        with self._conn:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.executemany(
                "DELETE FROM claims WHERE config_hash = ? AND seed = ? AND git_commit = ? AND token = ?",
                [(h, int(s), provenance.git_commit(), self.owner.token) for h, s in keys])

    def add_checks(self, rows: list[dict], suite: str, seed: int) -> None:
        """Store the outcome of gate checks (``CheckResult.as_row()`` with a ``cell`` key), one row
        each, committed together."""
        stamp = {"created_at": provenance.utc_now(), "suite": suite, "seed": int(seed),
                 "git_commit": provenance.git_commit(), "machine": provenance.machine_summary()}
        columns = ("cell", "name", "passed", "alpha", "statistic", "threshold", "detectable")
        records = [{**stamp, **{c: _encode(row.get(c)) if c in ("statistic", "threshold", "detectable")
                                else row[c] for c in columns}} for row in rows]
        names = (*stamp, *columns)
        with self._conn:
            self._conn.execute("BEGIN")
            self._conn.executemany(f"INSERT INTO checks ({', '.join(names)}) VALUES "
                                   f"({', '.join(':' + n for n in names)})", records)

    def checks_frame(self) -> pd.DataFrame:
        """All stored gate checks, one row each, ordered by id."""
        frame = pd.read_sql_query("SELECT * FROM checks ORDER BY id", self._conn)
        for column in ("statistic", "threshold", "detectable"):
            frame[column] = [_decode_number(v) for v in frame[column]]
        frame["passed"] = frame["passed"].astype(bool)
        return frame

    def has(self, config_hash: str, seed: int) -> bool:
        """Whether a run with this ``config_hash`` and ``seed`` is stored for this code version."""
        found = self._conn.execute(
            "SELECT 1 FROM runs WHERE config_hash = ? AND seed = ? AND git_commit = ? LIMIT 1",
            (config_hash, int(seed), provenance.git_commit()),
        ).fetchone()
        return found is not None

    def __len__(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def to_frame(self) -> pd.DataFrame:
        """All runs, one row each, ordered by id. Metrics become columns named as the metrics,
        sampler params ``param_<name>`` columns, target params ``target_<name>`` columns and
        RunConfig fields columns of their own names; the JSON columns stay as JSON text."""
        cursor = self._conn.execute("SELECT * FROM runs ORDER BY id")
        names = [d[0] for d in cursor.description]
        rows = []
        for values in cursor.fetchall():
            stored = dict(zip(names, values))
            config = json.loads(stored["config"])
            config.pop("seed")
            rows.append({
                **{k: v for k, v in stored.items() if k not in ("metrics", "chain_steps_per_second")},
                "chain_steps_per_second": _decode_number(stored["chain_steps_per_second"]),
                **{f"param_{k}": v for k, v in json.loads(stored["params"]).items()},
                **{f"target_{k}": v for k, v in json.loads(stored["target_params"]).items()},
                **config,
                **metrics_from_json(stored["metrics"]),
            })
        frame = pd.DataFrame(rows, columns=None if rows else [n for n in names if n != "metrics"])
        first = [c for c in ("id", "created_at", "suite", "sampler", "target", "config_hash", "seed")
                 if c in frame]
        return frame[first + [c for c in frame.columns if c not in first and c not in _JSON_COLUMNS]
                     + list(_JSON_COLUMNS)]

    def runs_of(self, keys) -> pd.DataFrame:
        """The runs of ``keys`` stored by this code version (:func:`sgbench.base.provenance.git_commit`): what a
        sweep of those keys measured, or found already measured, on this code.

        Args:
            keys: ``(config_hash, seed)`` pairs.

        Returns:
            the rows of :meth:`to_frame` (its columns: those of every run in the store) whose key is among ``keys``
            and whose ``git_commit`` is this code's, in the order of their ids.
        """
        keys = {(config_hash, int(seed)) for config_hash, seed in keys}
        frame = self.to_frame()
        asked = [key in keys for key in zip(frame["config_hash"], frame["seed"])]
        return frame[pd.Series(asked, index=frame.index, dtype=bool) & (frame["git_commit"] == provenance.git_commit())]

    def newest_runs(self) -> pd.DataFrame:
        """The newest run of each ``(config_hash, seed)``: of a run stored by several code versions, the one stored
        last.

        Returns:
            the rows of :meth:`to_frame`, one per ``(config_hash, seed)``, in the order of their ids.
        """
        return self.to_frame().drop_duplicates(["config_hash", "seed"], keep="last")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
