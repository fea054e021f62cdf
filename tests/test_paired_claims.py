"""Claims on paired differences over a few replicates (``bench/reproduce/paired_claims.py``): Student's t at the
replicates' degrees of freedom, Bonferroni over the settings, and the false-contradiction rate it states."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sgbench.bench.reproduce import claims as c, paired_claims
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, WITHIN_NOISE
from sgbench.bench.reproduce.paired_claims import Paired


def test_t_and_its_critical_value():
    setting = Paired("a", (1.0, 2.0, 3.0))
    assert setting.t() == pytest.approx(2.0 / (1.0 / math.sqrt(3)))  # mean 2, sd 1
    assert setting.critical(1) == pytest.approx(2.920, abs=1e-3)  # t_2^-1(0.95)
    assert setting.critical(2) == pytest.approx(4.303, abs=1e-3)  # t_2^-1(0.975), not the normal 1.96
    assert math.isnan(Paired("a", (1.0,)).t()) and math.isnan(Paired("a", (1.0, math.nan)).critical(1))
    assert Paired("a", (0.5, 0.5)).t() == math.inf and Paired("a", (0.0, 0.0)).t() == 0.0
    assert Paired("a", (1.0, 2.0, 3.0, math.inf)).t() == setting.t()  # a replicate without a value is left out
    assert setting.text("gain", 2) == "a: gain +2 ± 0.58 over 3 (t = 3.5, critical 4.3)"


@pytest.mark.parametrize("differences, verdict", [
    (((1.0, 1.1, 0.9), (2.0, 2.2, 1.9)), HELD),                 # t = 17 and 19 > 4.3
    (((1.0, 1.1, 0.9), (-2.0, -2.2, -1.9)), CONTRADICTED),      # t = -19 < -4.3
    (((1.0, 1.1, 0.9), (0.1, -0.2, 0.3)), WITHIN_NOISE),       # t = 0.4
    (((1.0, 1.1, 0.9), (1.0,)), WITHIN_NOISE),                 # one replicate: no spread to judge by
])
def test_paired_ordering_at_every_setting(differences, verdict):
    settings = [Paired(name, d) for name, d in zip(("diabetes", "friedman1"), differences)]
    claim = paired_claims.paired_ordering("consistently better", "sec. 1", settings, "gain")
    assert claim.verdict == verdict and claim.error_rate == 0.05
    if verdict != HELD:
        assert "friedman1" in claim.reason and "diabetes" not in claim.reason.split(";")[0]


def test_paired_somewhere_holds_at_one_setting_and_is_contradicted_only_everywhere():
    good, bad, flat = Paired("a", (1.0, 1.1, 0.9)), Paired("b", (-1.0, -1.1, -0.9)), Paired("c", (0.1, -0.1, 0.0))
    claim = paired_claims.paired_somewhere("often better", "sec. 2", [good, bad], "gain")
    assert claim.verdict == HELD and "beyond the noise at a" in claim.reason and claim.error_rate == 0.025
    assert paired_claims.paired_somewhere("often better", "sec. 2", [bad], "gain").verdict == CONTRADICTED
    assert paired_claims.paired_somewhere("often better", "sec. 2", [bad, flat], "gain").verdict == WITHIN_NOISE
    with pytest.raises(ValueError, match="at least one setting"):
        paired_claims.paired_somewhere("often better", "sec. 2", [], "gain")


def test_a_true_claim_is_called_contradicted_at_most_at_the_stated_rate():
    """At the boundary (mean difference 0 at every setting), 3 normal replicates at 4 settings: the family's
    false-contradiction rate is 1 - (1 - 0.05 / 4)^4 = 4.9 %; the normal critical value of ``claims.ordering``
    (2.24) would give about 4 x P(t_2 < -2.24) = 31 %."""
    rng = np.random.default_rng(1)
    trials, contradicted, normal = 4000, 0, 0
    for _ in range(trials):
        settings = [Paired(str(k), tuple(rng.standard_normal(3))) for k in range(4)]
        contradicted += paired_claims.paired_ordering("w", "s", settings, "gain").verdict == CONTRADICTED
        normal += min(s.t() for s in settings) < -c.critical_z(4)
    # binomial(4000, 0.049): sd 0.0034, so 0.065 is 4.7 sd above the rate
    assert contradicted / trials <= 0.065 and normal / trials > 0.2
