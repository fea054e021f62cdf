"""A paper's claims and their verdicts (``bench/reproduce/claims.py``): the ordering and existence tests at their
stated error rates, and how an outcome reports claims (``bench/reproduce/outcome.py``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sgbench.bench.reproduce import claims as c
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, NOT_TESTABLE, WITHIN_NOISE, Claim, Comparison
from sgbench.bench.reproduce.outcome import Outcome


def test_a_claim_states_its_error_rate_or_why_it_cannot_be_tested():
    with pytest.raises(ValueError, match="verdict must be one of held, contradicted, within noise, not testable"):
        Claim("x", "sec. 1", "passed", error_rate=0.05)
    with pytest.raises(ValueError, match="states its error rate"):
        Claim("x", "sec. 1", HELD)
    with pytest.raises(ValueError, match="gives its reason"):
        Claim("x", "sec. 1", NOT_TESTABLE)
    assert c.not_testable("x", "sec. 1", "no such data here").row()["error rate"] == ""


@pytest.mark.parametrize("lower, higher, verdict", [
    ((1.0, 0.1), (2.0, 0.1), HELD),            # z = 7
    ((2.0, 0.1), (1.0, 0.1), CONTRADICTED),    # z = -7
    ((1.0, 0.1), (1.2, 0.1), WITHIN_NOISE),    # z = 1.4 < 1.645
    ((1.2, 0.1), (1.0, 0.1), WITHIN_NOISE),    # z = -1.4
    ((math.inf, math.nan), (1.0, 0.1), CONTRADICTED),  # a failed run is above any finite value
    ((1.0, math.nan), (math.inf, math.nan), HELD),
    ((math.inf, math.nan), (math.inf, math.nan), WITHIN_NOISE),
])
def test_ordering_at_one_setting(lower, higher, verdict):
    claim = c.ordering("A is better than B", "sec. 2", [Comparison("x", *lower, *higher)], "A", "B")
    assert claim.verdict == verdict and claim.error_rate == 0.05


def test_ordering_over_settings_is_bonferroni_corrected_and_names_where_it_fails():
    assert c.critical_z(1) == pytest.approx(1.6449, abs=1e-4) and c.critical_z(21) == pytest.approx(2.8227, abs=1e-4)
    cells = [Comparison(f"B={b}", 1.0, 0.1, 1.0 + d, 0.1) for b, d in ((1, 1.0), (2, 0.25), (4, -0.5))]
    claim = c.ordering("A below B", "sec. 3", cells, "A", "B")
    assert claim.verdict == CONTRADICTED and "reversed beyond the noise at B=4" in claim.reason  # z = -3.5 < -2.13
    claim = c.ordering("A below B", "sec. 3", cells[:2], "A", "B")
    assert claim.verdict == WITHIN_NOISE and "inside the noise at B=2" in claim.reason  # z = 1.77 < 1.96
    assert "B=1: A 1 ± 0.1 vs B 2 ± 0.1 (z = 7.1)" in claim.ours


def test_somewhere_holds_at_one_setting_and_is_contradicted_only_everywhere():
    cells = [Comparison(f"B={b}", 1.0, 0.1, 1.0 + d, 0.1) for b, d in ((1, -1.0), (2, 1.0))]
    assert c.somewhere("A occasionally below B", "sec. 4", cells, "A", "B").verdict == HELD
    claim = c.somewhere("A occasionally below B", "sec. 4", cells[:1], "A", "B")
    assert claim.verdict == CONTRADICTED and claim.error_rate == 0.05
    assert c.somewhere("A occasionally below B", "sec. 4", cells, "A", "B").error_rate == 0.025


def test_the_ordering_test_calls_a_true_claim_contradicted_at_most_at_its_rate():
    """At the boundary (equal means, every setting), the family's false-contradiction rate is at most 5 %."""
    rng = np.random.default_rng(0)
    trials, settings = 4000, 6
    contradicted = 0
    for _ in range(trials):
        noise = rng.standard_normal((settings, 2)) * 0.1
        cells = [Comparison(str(k), 1.0 + a, 0.1, 1.0 + b, 0.1) for k, (a, b) in enumerate(noise)]
        contradicted += c.ordering("A below B", "s", cells, "A", "B").verdict == CONTRADICTED
    # binomial(4000, p <= 0.05): 5 % + 3 sd = 260; the Bonferroni rate here is 1 - (1 - 0.05/6)^6 = 4.9 %
    assert contradicted / trials <= 0.065


def test_an_outcome_with_a_contradicted_claim_fails_and_leads_with_its_claims(tmp_path):
    table = pd.DataFrame({"cell": ["a"], "ours": [1.0]})
    held = Claim("A is faster", "sec. 5, second sentence", HELD, paper="2x", ours="2.1x ± 0.1", error_rate=0.05)
    wrong = Claim("B is exact", "Table 3 caption", CONTRADICTED, ours="bias 0.3 ± 0.01", reason="biased",
                  error_rate=0.05)
    cannot = c.not_testable("C on ImageNet", "sec. 6", "ImageNet is not shipped")
    assert c.tally((held, wrong, cannot)) == "1 held, 1 contradicted, 0 within noise, 1 not testable"
    good, bad = (Outcome("demo-table", "Demo", table, claims=claims) for claims in ((held, cannot), (held, wrong)))
    assert not good.failed and bad.failed
    text = bad.text()
    assert text.index("claims: 1 held, 1 contradicted") < text.index("cell")
    assert " 2. CONTRADICTED (error rate 5 %): “B is exact” (Table 3 caption)" in text and "    reason: biased" in text
    page = bad.write_page(tmp_path).read_text()
    assert page.index("The paper&#39;s claims") < page.index("Ours beside the paper&#39;s") and "1 contradicted" in page
