"""The results store: schema version and WAL mode, migrations, round trip of a RunResult
(NaN and inf metrics included), immediate commits, the UNIQUE(config_hash, seed, git_commit)
rule, the queries it answers (runs of this code version, newest runs) and the provenance it records."""

import dataclasses
import json
import math
import sqlite3

import pytest

from sgbench.base import provenance
from sgbench.bench.running import run as running
from sgbench.bench.sweeps import store as store_module
from sgbench.bench.sweeps.store import DuplicateRunError, ResultsStore, SchemaVersionError, StoreError


@pytest.fixture(scope="module")
def result():
    """A real run of the NumPy reference driver (fast: no compilation)."""
    return running.run("sgld", "icg", params={"step_size": 1e-3}, num_chains=2, num_steps=100,
                       backend="numpy", target_params={"dim": 3, "noise": "isotropic"})


def test_new_store_has_current_schema_and_wal(tmp_path):
    path = tmp_path / "nested" / "folder" / "results.sqlite"
    with ResultsStore(path) as store:
        assert store.schema_version == store_module.SCHEMA_VERSION >= 1
        assert store.journal_mode == "wal"
        assert len(store) == 0
    assert path.is_file()
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == store_module.SCHEMA_VERSION


def test_store_refuses_a_newer_schema(tmp_path):
    path = tmp_path / "results.sqlite"
    ResultsStore(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute(f"PRAGMA user_version = {store_module.SCHEMA_VERSION + 1}")
    with pytest.raises(SchemaVersionError, match="newer"):
        ResultsStore(path)


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    path = tmp_path / "results.sqlite"
    path.write_bytes(b"not a database, just some text that is long enough to have a header" * 20)
    with pytest.raises(StoreError, match="not a usable results store"):
        ResultsStore(path)


def test_migrations_upgrade_an_older_store_in_order(tmp_path, monkeypatch, result):
    path = tmp_path / "results.sqlite"
    with ResultsStore(path) as store:
        store.add(result)
    extra = ("ALTER TABLE runs ADD COLUMN note TEXT", "UPDATE runs SET note = 'migrated'")
    monkeypatch.setattr(store_module, "MIGRATIONS", [*store_module.MIGRATIONS, extra])
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", store_module.SCHEMA_VERSION + 1)
    with ResultsStore(path) as store:
        assert store.schema_version == store_module.SCHEMA_VERSION
        frame = store.to_frame()
    assert frame["note"].tolist() == ["migrated"]


def test_round_trip_keeps_everything_including_nan_and_inf_metrics(tmp_path, result):
    metrics = {**result.metrics, "b2_mean_pooled": math.nan, "ratio": -math.inf}
    odd = dataclasses.replace(result, metrics=metrics)
    with ResultsStore(tmp_path / "results.sqlite") as store:
        row_id = store.add(odd, suite="unit")
        frame = store.to_frame()
        stored_metrics = store._conn.execute("SELECT metrics FROM runs").fetchone()[0]
    json.loads(stored_metrics, parse_constant=lambda token: pytest.fail(f"non-standard JSON {token}"))
    row = frame.iloc[0]
    assert row["id"] == row_id and row["suite"] == "unit"
    assert row["sampler"] == "sgld" and row["target"] == "icg"
    assert row["config_hash"] == result.config_hash and row["seed"] == result.config.seed
    assert math.isnan(row["b2_mean_pooled"]) and row["ratio"] == -math.inf
    assert row["b2_mean_chain_average"] == result.metrics["b2_mean_chain_average"]
    assert row["param_step_size"] == 1e-3 and row["target_dim"] == 3 and row["target_noise"] == "isotropic"
    assert row["num_chains"] == 2 and row["num_steps"] == 100 and row["backend"] == "numpy"
    assert row["grad_evals"] == result.grad_evals
    timings = result.timings
    assert row["wall_seconds"] == pytest.approx(timings["compile_seconds"] + timings["run_seconds"])
    assert row["chain_steps_per_second"] == pytest.approx(timings["chain_steps_per_second"])
    assert json.loads(row["params"]) == result.params
    assert json.loads(row["config"]) == dataclasses.asdict(result.config)
    assert json.loads(row["diagnostics"]) == result.diagnostics
    packages = {"python", "numpy", "jax", "jaxlib", "scipy", "pandas", "sgmcmc-bench"}
    assert set(json.loads(row["versions"])) == packages
    assert row["git_commit"] and "jax backend" in row["machine"]
    assert row["created_at"].endswith("+00:00")


def test_add_commits_at_once_and_refuses_duplicates(tmp_path, result):
    path = tmp_path / "results.sqlite"
    with ResultsStore(path) as store:
        assert not store.has(result.config_hash, result.config.seed)
        store.add(result)
        with sqlite3.connect(path) as other:  # another connection sees the row before close()
            assert other.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
        assert store.has(result.config_hash, result.config.seed)
        assert not store.has(result.config_hash, result.config.seed + 1)
        with pytest.raises(DuplicateRunError, match=result.config_hash):
            store.add(result)
        store.add(dataclasses.replace(result, config=dataclasses.replace(result.config, seed=1)))
        assert len(store) == 2


def test_new_code_measures_again(tmp_path, result, monkeypatch):
    with ResultsStore(tmp_path / "results.sqlite") as store:
        store.add(result)
        monkeypatch.setattr(provenance, "git_commit", lambda: "another-commit")
        assert not store.has(result.config_hash, result.config.seed)
        store.add(result)
        assert len(store) == 2
        assert store.has(result.config_hash, result.config.seed)


def test_empty_store_gives_an_empty_frame(tmp_path):
    with ResultsStore(tmp_path / "results.sqlite") as store:
        frame = store.to_frame()
    assert frame.empty and {"sampler", "config_hash", "seed"} <= set(frame.columns)


def _with_seed(result, seed):
    return dataclasses.replace(result, config=dataclasses.replace(result.config, seed=seed))


def test_runs_of_gives_the_asked_keys_of_this_code_version(tmp_path, result, monkeypatch):
    with ResultsStore(tmp_path / "results.sqlite") as store:
        first = store.add(result)
        store.add(_with_seed(result, 1))
        store.add(_with_seed(result, 2))
        monkeypatch.setattr(provenance, "git_commit", lambda: "another-commit")
        again = store.add(result)
        asked = [(result.config_hash, 0), (result.config_hash, 2), ("no-such-hash", 0)]
        assert store.runs_of(asked)["id"].tolist() == [again]  # seed 2 was stored by other code
        assert set(store.runs_of(asked)["git_commit"]) == {"another-commit"}
        monkeypatch.undo()
        frame = store.runs_of(asked)
        assert frame["id"].tolist() == [first, first + 2]
        assert frame["seed"].tolist() == [0, 2] and set(frame["git_commit"]) == {provenance.git_commit()}
        assert list(frame.columns) == list(store.to_frame().columns)
        assert store.runs_of([]).empty and store.runs_of([(result.config_hash, 5)]).empty


def test_runs_of_an_empty_store_is_empty_with_the_store_columns(tmp_path):
    with ResultsStore(tmp_path / "results.sqlite") as store:
        frame = store.runs_of([("hash", 0)])
    assert frame.empty and {"sampler", "config_hash", "seed", "git_commit"} <= set(frame.columns)


def test_newest_runs_keep_the_last_stored_run_of_each_key(tmp_path, result, monkeypatch):
    with ResultsStore(tmp_path / "results.sqlite") as store:
        old = store.add(result)
        only = store.add(_with_seed(result, 1))
        monkeypatch.setattr(provenance, "git_commit", lambda: "newer-commit")
        newer = store.add(result)
        frame = store.newest_runs()
    assert frame["id"].tolist() == [only, newer] and old not in frame["id"].tolist()
    assert frame.set_index("seed").loc[0, "git_commit"] == "newer-commit"


def test_runs_and_checks_record_what_provenance_gives(tmp_path, result, monkeypatch):
    """The store computes no provenance of its own: each field is the provenance module's."""
    monkeypatch.setattr(provenance, "git_commit", lambda: "commit-from-provenance")
    monkeypatch.setattr(provenance, "machine_summary", lambda: "machine-from-provenance")
    monkeypatch.setattr(provenance, "utc_now", lambda: "2001-02-03T04:05:06+00:00")
    monkeypatch.setattr(provenance, "library_versions",
                        lambda packages: {"python": "3", **dict.fromkeys(packages, "v")})
    with ResultsStore(tmp_path / "results.sqlite") as store:
        store.add(result)
        store.add_checks([{"cell": "c", "name": "n", "passed": True, "alpha": 0.01}], suite="s", seed=3)
        row, check = store.to_frame().iloc[0], store.checks_frame().iloc[0]
        assert store.has(result.config_hash, result.config.seed)
    assert (row["git_commit"], row["machine"], row["created_at"]) == (
        "commit-from-provenance", "machine-from-provenance", "2001-02-03T04:05:06+00:00")
    assert json.loads(row["versions"]) == {"python": "3", **dict.fromkeys(store_module.VERSIONED_PACKAGES, "v")}
    assert (check["git_commit"], check["machine"], check["created_at"]) == (
        "commit-from-provenance", "machine-from-provenance", "2001-02-03T04:05:06+00:00")


def test_unusable_files_say_what_they_are_and_what_to_do(tmp_path):
    """Another program's SQLite file, a file that is not SQLite, and a store another process holds locked: each
    StoreError says what the file is and what to do."""
    other = tmp_path / "other.sqlite"
    connection = sqlite3.connect(other)
    connection.execute("CREATE TABLE runs (x)")
    connection.commit()
    connection.close()
    text = tmp_path / "notes.sqlite"
    text.write_text("not a database " * 20)
    for path in (other, text):
        with pytest.raises(StoreError, match="this file is not an sgbench results store .*; give a new file"):
            ResultsStore(path)
    held = tmp_path / "held.sqlite"
    ResultsStore(held).close()
    holder = sqlite3.connect(held, isolation_level=None)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="another process holds it .*; wait for it to finish, or use another --db"):
            ResultsStore(held)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
