"""``sgbench reproduce mile-table5`` (``bench/reproduce/mile_table5.py``): the MILE paper's claims about Table 5 on
NaN chains as the paper counts them (frozen chains reported apart, in no claim), its table, and its outcome
rendered from the record alone."""

from __future__ import annotations

import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import _record, mile_table5
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, NOT_TESTABLE, WITHIN_NOISE


def _counts(mile_nan, naive_nan, naive_frozen=0, mile_frozen=0):
    return {"mile": {"nan": mile_nan, "frozen": mile_frozen}, "naive": {"nan": naive_nan, "frozen": naive_frozen}}


def test_the_claims_count_nan_chains_as_the_paper_does():
    # 10 NaN chains of 24 (interval 0.22-0.63): naive MCLMC fails, far less often than the paper's 78-86 %
    claims = mile_table5.claims(_counts(0, 10, naive_frozen=10), 24)
    optimizing, adjustments, importance, rates, mile, rows = claims
    assert [c.verdict for c in claims] == [HELD, NOT_TESTABLE, HELD, CONTRADICTED, HELD, NOT_TESTABLE]
    assert rates.words == "MCLMC exhibits failure rates between 78% and 86%" and "below 0.78" in rates.reason
    assert rates.ours == "naive MCLMC's NaN chains: 10 of 24 = 0.42 (95 % interval 0.22-0.63)"
    assert 0 < rates.error_rate <= 0.05 and mile.error_rate == 0.0 and importance.error_rate == 0.05
    assert all(c.where.startswith(("appendix A.1.2", "section 3.2", "Table 5")) for c in claims)
    assert "Airfoil" in rows.reason and "diabetes" in rows.reason
    # frozen chains are in no claim: 20 frozen and no NaN chain leave naive MCLMC's failure unshown
    claims = mile_table5.claims(_counts(0, 0, naive_frozen=20), 24)
    assert [c.verdict for c in claims] == [WITHIN_NOISE, NOT_TESTABLE, WITHIN_NOISE, CONTRADICTED, HELD,
                                           NOT_TESTABLE]
    # the paper's rates at the paper's 100 chains: inside the noise of the range; a NaN chain of MILE contradicts
    claims = mile_table5.claims(_counts(1, 82), 100)
    assert [c.verdict for c in claims] == [HELD, NOT_TESTABLE, HELD, WITHIN_NOISE, CONTRADICTED, NOT_TESTABLE]
    assert "1 of 100" in claims[4].ours


def test_table_reports_frozen_chains_apart():
    frame = mile_table5.table(_counts(0, 3, naive_frozen=9), 24).set_index("sampler")
    assert frame.loc["naive MCLMC", "NaN share"] == "0.12 ± 0.07" and frame.loc["MILE", "verdict"] == "within"
    assert frame.loc["naive MCLMC", "verdict"] == "differs"  # 0.125 against 0.82 ± 0.04
    assert frame.loc["naive MCLMC", "frozen chains (ours)"] == "9 of 24"
    assert frame.loc["naive MCLMC", "NaN or frozen (ours)"] == "12 of 24"


def _fake_run(name, target, starts, num_chains, phases, sampling_steps, seed):
    """A run's record entry: MILE's chains all spread; naive MCLMC's first chain NaN, its second frozen."""
    naive = name == "naive"
    return dict(spread=[1e-9 if naive and i == 1 else 1.0 for i in range(num_chains)],
                nonfinite_steps=[3 if naive and i == 0 else 0 for i in range(num_chains)],
                first_nonfinite=[600 if naive and i == 0 else -1 for i in range(num_chains)],
                grad_evals=[1] * num_chains)


def test_the_outcome_is_rendered_from_the_record_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(mile_table5, "_one_run", _fake_run)
    db = tmp_path / "results.sqlite"
    first = mile_table5.run("quick", {"chains": 4}, db, tmp_path, progress=False)
    assert first.table.loc[0, "NaN chains"] == "1 of 4" and first.table.loc[0, "frozen chains (ours)"] == "1 of 4"

    def no_run(*args, **kwargs):
        raise AssertionError("computed under recorded_only")

    monkeypatch.setattr(mile_table5, "_one_run", no_run)
    with _record.recorded_only():
        again = mile_table5.run("quick", {"chains": 4}, db, tmp_path, progress=False)
        assert again.table.equals(first.table) and again.claims == first.claims
        with pytest.raises(_record.NotRecorded):
            mile_table5.run("quick", {"chains": 5}, db, tmp_path, progress=False)


@pytest.mark.integration
def test_tiny_run_prints_its_claims_and_writes_its_page(tmp_path, capsys):
    """4 chains of each sampler through the command (about a minute on 2 cores, mostly compilation)."""
    status = main(["reproduce", "mile-table5", "--chains", "4", "--out", str(tmp_path), "--db",
                   str(tmp_path / "r.sqlite"), "--no-progress"])
    out = capsys.readouterr().out
    assert "“MCLMC exhibits failure rates between 78% and 86%”" in out and "claims: " in out
    assert status == (1 if "CONTRADICTED" in out else 0), out
    page = (tmp_path / "mile_table5.html").read_text()
    assert "frozen chains (ours)" in page and "data:image/png;base64" in page
