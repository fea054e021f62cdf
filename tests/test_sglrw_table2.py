"""``sgbench reproduce sglrw-table2`` (``bench/reproduce/sglrw_table2.py``): the paper's grid, a tiny run against
the stored NUTS reference, the summary's verdicts and the claims of appendix A.5.1."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import sglrw_table2


def test_paper_table_is_table_2():
    assert len(sglrw_table2.PAPER_TABLE2) == 21
    assert sglrw_table2.PAPER_TABLE2[1, 1.0]["sgld"] == math.inf
    assert sglrw_table2.PAPER_TABLE2[64, 0.01] == {"sgld": 1.2267, "sglrw": 0.6490, "clipped_sgld": 0.6169}


def _runs(rows):
    return pd.DataFrame([{"batch_size": b, "step_size": h, "sampler": s, "seed": seed, "kl": kl, "se": 0.1,
                          "diverged": 0} for b, h, s, seed, kl in rows])


def test_summary_averages_seeds_and_judges_infinities():
    summary = sglrw_table2.summarise(_runs([
        (1, 1.0, "sgld", 0, 30.0), (1, 1.0, "sgld", 1, 50.0),      # finite where the paper's failed
        (2, 1.0, "sgld", 0, math.inf), (2, 1.0, "sgld", 1, 5.0),    # one seed failed: inf, as the paper's
        (1, 1.0, "sglrw", 0, 8.3), (1, 1.0, "sglrw", 1, 8.5),
        (2, 1.0, "sglrw", 0, 7.0), (2, 1.0, "sglrw", 1, 7.0)]))
    rows = summary.set_index(["B", "sampler"])
    # the mean's standard error from the seeds' bootstrap errors: sqrt(0.1^2 + 0.1^2) / 2
    assert rows.loc[(1, "SGLD"), "KL ours"] == 40.0 and math.isclose(rows.loc[(1, "SGLD"), "se"], math.sqrt(0.02) / 2)
    assert rows.loc[(1, "SGLD"), "verdict"].startswith("differs (the paper's run failed")
    assert rows.loc[(2, "SGLD"), "verdict"] == "within (both inf)"
    assert rows.loc[(1, "SGLRW"), "verdict"] == "within"  # |8.4 - 8.35| < 2 x 0.071
    assert rows.loc[(2, "SGLRW"), "verdict"] == "differs"  # 7 against 7.67 ± 0.071
    agreement = sglrw_table2.seed_agreement(_runs([(1, 1.0, "sgld", 0, 30.0), (1, 1.0, "sgld", 1, 30.2)]))
    assert agreement["differences"].item() == 2 and math.isclose(agreement["largest"].item(), 0.2 / math.sqrt(0.02))


def _claims(sglrw, sgld, clipped, se=0.1):
    """The claims of a summary at B = 1, 2, 4 and δ = 1 with the given KLs per B (one seed, bootstrap se)."""
    rows = [(b, 1.0, sampler, 0, kl) for sampler, kls in (("sglrw", sglrw), ("sgld", sgld), ("clipped_sgld", clipped))
            for b, kl in zip((1, 2, 4), kls)]
    return sglrw_table2.claims(sglrw_table2.summarise(_runs(rows).assign(se=se)))


def test_claims_are_tested_at_every_cell_the_paper_states_them_for():
    inf = math.inf
    claims = _claims(sglrw=(8.0, 7.0, 3.0), sgld=(inf, inf, 20.0), clipped=(9.0, 8.0, 2.0))
    sgld, clipped, failure, small, larger = claims
    assert sgld.verdict == "held" and "critical |z| = 2.13" in sgld.reason  # 3 cells: Phi^-1(1 - 0.05 / 3)
    assert clipped.verdict == "contradicted" and "B=4, δ=1" in clipped.reason  # 2 against 3 ± 0.14: z = -7
    assert failure.verdict == "held" and failure.error_rate == 0.0
    assert small.verdict == "held" and larger.verdict == "held"
    # SGLD finite where the paper's failed: the failure claim is contradicted; a 0.1 gap is inside the noise
    claims = _claims(sglrw=(8.0, 7.0, 3.0), sgld=(30.0, inf, 3.1), clipped=(8.1, 8.0, 4.0))
    sgld, clipped, failure, small, larger = claims
    assert failure.verdict == "contradicted" and "B=1, δ=1: 30" in failure.ours
    assert sgld.verdict == "within noise" and "B=4, δ=1" in sgld.reason
    assert small.verdict == "within noise" and larger.verdict == "contradicted"
    assert all(c.where.startswith("appendix A.5.1") for c in claims)


@pytest.mark.integration
def test_tiny_run_against_the_nuts_reference(tmp_path, monkeypatch, capsys):
    full = sglrw_table2.compute
    runs = full(48, seeds=[0], batch_sizes=(64,), step_sizes=(1.0, 0.01), samplers=("sgld", "sglrw"),
                num_iterations=200, progress=False)
    assert len(runs) == 4 and np.all(np.isfinite(runs["kl"])) and np.all(runs["kl"] > 0)
    # a cloud far from the posterior has a larger KL than the reference's own fit has to itself
    assert sglrw_table2.fit_kl(sglrw_table2._reference_fit(), np.full((48, 31), 5.0)
                               + np.random.default_rng(0).standard_normal((48, 31)), np.random.default_rng(1))[0] \
        > runs["kl"].max()
    monkeypatch.setattr(sglrw_table2, "compute", functools.partial(full, batch_sizes=(64,), step_sizes=(1.0,),
                                                                   num_iterations=100))
    argv = ["reproduce", "sglrw-table2", "--particles", "40", "--seeds", "1", "--out", str(tmp_path), "--db",
            str(tmp_path / "r.sqlite"), "--no-progress"]
    status = main(argv)
    out = capsys.readouterr().out
    assert status == (1 if "CONTRADICTED" in out else 0) and "Clipped SGLD" in out and "claims: " in out
    assert "data:image/png;base64" in (tmp_path / "sglrw_table2.html").read_text()
    # a rerun reads every (seed, B, sampler) back from the record beside the store: the same table, no run
    monkeypatch.setattr(sglrw_table2, "final_positions", None)
    assert main(argv) == status and capsys.readouterr().out.splitlines()[:6] == out.splitlines()[:6]
