"""The PX expansion ablation (``bench/reproduce/px_table4.py``): the distances between consecutive samples
(``reference/metrics/parameter_diversity.py``) and the singular values against closed forms, the claims of
section 5.2.3 on constructed chains (held, contradicted, within noise, at every expansion they name), the rendering
from the record alone, bad options, a tiny run through the command, and its runs in worker processes equal to those
computed here."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import _record, docs_blocks, px_cold_posterior as pxc, px_table4 as pxt
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, NOT_TESTABLE, WITHIN_NOISE
from sgbench.reference.metrics import consecutive_distances


def test_consecutive_distances_plain_and_normalised():
    samples = np.array([[[3.0, 4.0], [3.0, 0.0], [0.0, 0.0], [1.0, 0.0]]])  # one chain, 4 draws
    np.testing.assert_allclose(consecutive_distances(samples), [[4.0, 3.0, 1.0]])
    normalised = consecutive_distances(samples, normalise=True)
    np.testing.assert_allclose(normalised[0, :2], [4.0 / 5.0, 3.0 / 3.0])
    assert math.isnan(normalised[0, 2])  # from the origin: no norm to divide by
    with_nan = consecutive_distances(np.array([[0.0, 0.0], [np.nan, 1.0], [1.0, 1.0], [1.0, 2.0]]))
    assert np.isnan(with_nan[:2]).all() and with_nan[2] == 1.0
    with pytest.raises(ValueError, match="shape"):
        consecutive_distances(np.zeros(3))
    with pytest.raises(TypeError, match="normalise"):
        consecutive_distances(samples, normalise=1)


def test_the_exploration_measures_of_constructed_samples():
    """Two samples whose weight matrices are diagonal-like with known singular values, biases 0."""
    target = pxc.digits_bnn()

    def sample(scale):
        layers = []
        for k, (n_in, n_out) in enumerate(target.layer_shapes):
            weights = np.zeros((n_in, n_out))
            weights[np.arange(min(n_in, n_out)), np.arange(min(n_in, n_out))] = scale * np.linspace(1, 2, min(
                n_in, n_out)) * (k + 1)
            layers.append((weights, np.zeros(n_out)))
        return target.flatten(layers)

    samples = np.stack([sample(1.0), sample(3.0)])
    out = pxt.exploration(target, samples)
    np.testing.assert_allclose(out[pxt.DISTANCE], [2 * np.linalg.norm(samples[0])])
    np.testing.assert_allclose(out[pxt.NORMALISED], [2.0])
    np.testing.assert_allclose(out[pxt.LARGEST], [[2.0, 4.0, 6.0], [6.0, 12.0, 18.0]])
    np.testing.assert_allclose(out[pxt.SMALLEST], [[1.0, 2.0, 3.0], [3.0, 6.0, 9.0]])
    assert len(out[pxt.TRAIN_ERR]) == len(out[pxt.VALIDATION_ERR]) == 2 and 0 <= out[pxt.TRAIN_ERR][0] <= 1
    rows = pxt.trace_rows("SGHMC (0, 0)", 0, out)
    assert [r["cycle"] for r in rows] == [1, 2] and math.isnan(rows[0][pxt.DISTANCE])
    assert rows[1][pxt.LARGEST] == 18.0 and rows[1][pxt.SMALLEST] == 3.0  # over the layers
    assert rows[1][f"{pxt.SMALLEST}, layer 2"] == 6.0


SPREAD = (-0.003, -0.001, 0.001, 0.003)  # 4 chains around each mean: sd 0.0026


def _frames(scores, measures):
    """Constructed chains: ``scores`` (c, d) -> (ERR, NLL, AMB), ``measures`` (c, d) -> (d, d normalised, largest,
    smallest), each mean spread over 4 chains by ``SPREAD`` (a NaN score: a failed run; an expansion missing from
    ``measures``: no measures); 3 cycles and 2 layers per chain."""
    rows, trace = [], []
    for e, values in scores.items():
        for chain, spread in enumerate(SPREAD):
            rows.append({"T": 1.0, "schedule": pxc.CYCLICAL, "sampler": pxt.label(e), "chain": chain,
                         "split": pxt.SPLIT, **{k: v + spread for k, v in zip(pxc.SCORES, values)}})
            if e in measures:
                d, normalised, largest, smallest = (v + spread for v in measures[e])
                trace += pxt.trace_rows(pxt.label(e), chain, {
                    pxt.DISTANCE: [d] * 2, pxt.NORMALISED: [normalised] * 2, pxt.LARGEST: [[largest, 1.0]] * 3,
                    pxt.SMALLEST: [[smallest, 5.0]] * 3, pxt.TRAIN_ERR: [0.1] * 3, pxt.VALIDATION_ERR: [0.2] * 3})
    return pd.DataFrame(rows), pd.DataFrame(trace)


PAPER_LIKE_SCORES = {(0, 0): (0.13, 0.44, 0.19), (1, 0): (0.12, 0.40, 0.21), (1, 1): (0.11, 0.37, 0.25),
                     (2, 2): (0.11, 0.37, 0.28)}
GROWING = {(0, 0): (1.0, 0.1, 2.0, 0.5), (1, 0): (2.0, 0.2, 3.0, 0.4), (1, 1): (3.0, 0.3, 4.0, 0.3),
           (2, 2): (4.0, 0.4, 5.0, 0.2)}


def test_claims_at_every_expansion_they_name():
    amb, bma, distances, largest, smallest, converge = pxt.claims(*_frames(PAPER_LIKE_SCORES, GROWING))
    assert [c.verdict for c in (amb, bma, distances, largest, smallest)] == [HELD] * 5
    assert converge.verdict == NOT_TESTABLE and "no measure of the speed" in converge.reason
    assert all(f"AMB, (c, d) = {e}: SP (c = d = 0) 0.19" in amb.ours for e in ("(1, 0)", "(1, 1)", "(2, 2)"))
    assert "AMB 0.278 ± 0.006" in amb.paper and "px-cold-posterior tests the same sentence at (1, 1)" in amb.reason
    assert "(1, 1)" not in bma.ours and "NLL, (c, d) = (2, 2): EP 0.37" in bma.ours
    assert "px-cold-posterior's claim" in bma.reason
    assert distances.ours.count("e = ") == 6 and "d normalised, e = 3 → 5: smaller e 0.3" in distances.ours
    assert "largest singular value, e = 1 → 2: smaller e 2 " in largest.ours  # the larger of 2 and 1 (layer 2)
    assert "smallest singular value, e = 3 → 5: larger e 0.2 " in smallest.ours  # the smaller of 0.2 and 5
    assert "critical |z| = 2.39" in distances.reason and "Welch's t over the chains" in distances.reason


def test_claims_contradicted_and_within_noise():
    scores = {**PAPER_LIKE_SCORES, (2, 2): (0.2, 0.5, 0.1905)}  # (2, 2) worse in ERR and NLL, AMB level with SP
    measures = {**GROWING, (1, 1): (1.0, 0.3, 4.0, 0.6)}  # (1, 1)'s d falls back to SP's; its smallest rises
    amb, bma, distances, largest, smallest, _ = pxt.claims(*_frames(scores, measures))
    assert amb.verdict == WITHIN_NOISE and "inside the noise at AMB, (c, d) = (2, 2)" in amb.reason
    assert bma.verdict == CONTRADICTED and "ERR, (c, d) = (2, 2); NLL, (c, d) = (2, 2)" in bma.reason
    assert distances.verdict == CONTRADICTED and "at d, e = 2 → 3" in distances.reason
    assert largest.verdict == HELD and smallest.verdict == CONTRADICTED
    # a failed run counts against its expansion in Table 4's scores; its exploration settings are left out
    scores = {**PAPER_LIKE_SCORES, (1, 0): (math.nan,) * 3}
    amb, bma, distances, *_ = pxt.claims(*_frames(scores, {e: m for e, m in GROWING.items() if e != (1, 0)}))
    assert amb.verdict == CONTRADICTED and "EP -inf" in amb.ours and bma.verdict == CONTRADICTED
    assert distances.verdict == HELD and distances.ours.count("e = ") == 2 and "e = 3 → 5" in distances.ours
    assert "no measures of PX-SGHMC (1, 0)" in distances.reason


def _fake_chains(target, sampler, step_size, temperature, chains, cycle_length, cycles, seed, splits=pxc.SPLITS,
                 schedule=pxc.CYCLICAL, params=None, measures=None):
    """A stand-in for the runs: (2, 2) diverges above 1e-4; more matrices, better scores and more exploration."""
    e = pxt.matrices((params or {}).get("expansion", (0, 0)))
    if e == 5 and step_size > 1e-4:
        return None
    out = []
    for c in range(chains):
        jitter = 1 + 0.01 * c
        chain = {split: {"ERR": 0.2 / e * jitter - step_size, "NLL": 0.5 / e * jitter - step_size,
                         "AMB": 0.1 * e * jitter} for split in splits}
        if measures is not None:
            chain["measures"] = {pxt.DISTANCE: [e * jitter] * (cycles - 1), pxt.NORMALISED: [0.1 * e * jitter] * (
                cycles - 1), pxt.LARGEST: [[e * jitter, 1.0, 1.0]] * cycles, pxt.SMALLEST: [[1 / e * jitter, 1.0, 1.0]]
                * cycles, pxt.TRAIN_ERR: [0.1] * cycles, pxt.VALIDATION_ERR: [0.2] * cycles}
        out.append(chain)
    return out


def test_the_outcome_renders_from_the_record_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(pxc, "run_chains", _fake_chains)
    db = tmp_path / "results.sqlite"
    outcome = pxt.run("quick", {}, db, tmp_path, progress=False)
    first = docs_blocks.outcome_markdown(outcome)
    assert "**claims: 5 held, 0 contradicted, 0 within noise, 1 not testable**" in first
    assert "| PX-SGHMC | (2, 2) | 0.0001 |" in first and "| SGHMC | (0, 0) | 0.01 |" in first
    assert "| (2, 2) | 5 | 5.08 ± 0.065 |" in first  # the exploration table: d of (2, 2), mean ± sd over chains
    assert "| (1, 1) | 3 (16 x 10) |" in first  # the singular values per layer
    assert outcome.write_page(tmp_path).read_text().count("data:image/png;base64") == 2  # Figures 2 and 3

    def no_run(*args, **kwargs):
        raise AssertionError("a recorded run was computed again")

    monkeypatch.setattr(pxc, "run_chains", no_run)
    with _record.recorded_only():
        assert docs_blocks.outcome_markdown(pxt.run("quick", {}, db, tmp_path, progress=False)) == first
        with pytest.raises(_record.NotRecorded):
            pxt.run("quick", {"seed": 1}, db, tmp_path, progress=False)


@pytest.mark.parametrize("argv, message", [
    (["--cycles", "1"], "--cycles must be an integer >= 2"),
    (["--chains", "1"], "--chains must be an integer >= 2"),
    (["--seed", "-1"], "--seed must be an integer >= 0"),
    (["--jobs", "0"], "--jobs must be an integer >= 1, got 0"),
    (["--jobs", "2", "--executor", "dask"], "--jobs shares the runs between local processes; with --executor dask"),
    (["--particles", "30"], "--particles is an option of sglrw-covariance, sglrw-table1, sglrw-table2, not of "
                            "px-table4"),
])
def test_bad_options_are_one_line_and_exit_2(tmp_path, capsys, argv, message):
    status = main(["reproduce", "px-table4", *argv, "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
                   "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and message in err[0], err


@pytest.mark.integration
def test_tiny_run_through_the_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(pxc.SCALES, "quick", {"chains": 2, "cycle_length": 20, "cycles": 2})
    monkeypatch.setattr(pxc, "STEP_GRID", (1e-4, 1e-3))
    argv = ["reproduce", "px-table4", "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"), "--no-progress"]
    status = main(argv)
    out = capsys.readouterr().out
    assert "claims: " in out and "increased AMB" in out and "largest singular value rises" in out
    assert status == (1 if "CONTRADICTED" in out else 0), out
    page = (tmp_path / "px_table4.html").read_text()
    assert "Step-size search" in page and page.count("data:image/png;base64") == 2
    assert (tmp_path / "px_table4_runs.jsonl").is_file()

    def no_run(*args, **kwargs):
        raise AssertionError("a finished run was computed again")

    monkeypatch.setattr(pxc, "run_chains", no_run)
    assert main(argv) == status and capsys.readouterr().out.splitlines()[:8] == out.splitlines()[:8]


@pytest.mark.integration
def test_runs_in_worker_processes_equal_those_computed_here(tmp_path):
    """Both stages (the step-size trials, then each expansion's run) computed in 2 spawned processes give the frames
    computed here one after another, bit for bit (none holds a wall time), and the same record."""
    tiny = {"chains": 2, "cycle_length": 20, "cycles": 2, "seed": 0, "grid": (1e-4, 1e-3)}
    here = pxt.compute(**tiny, record=tmp_path / "here_runs.jsonl", jobs=1)
    there = pxt.compute(**tiny, record=tmp_path / "there_runs.jsonl", jobs=2)
    for ours, theirs in zip(here[:3], there[:3]):
        pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
    assert here[3] == there[3] and len(here[1]) == 4 * 2 * 2  # 4 expansions x 2 chains x 2 cycles: every run ran
    lines = [sorted((tmp_path / f"{where}_runs.jsonl").read_text().splitlines()) for where in ("here", "there")]
    assert len(lines[0]) == 4 * 2 + 4 and lines[0] == lines[1]
