r"""``sgbench validate`` on the held-out samplers of ``tests/heldout`` (issue 42): samplers written from the docs
alone, outside the verification code, each with the verdicts a correct validator may give, derived from theory
and from runs against truth, not from validate (``tests/heldout/__init__.py``, ``CASES``).

Every case runs as a user would run it, at validate's defaults (256 chains, 4000 warm-up and 4000 scored steps,
detect r = 0.1), on the case's targets, with the case's claim (``none`` where it claims nothing) and name map,
within a compute budget of ``BUDGET`` for its remedies (more chains, a longer warm-up, the step ladder).
The verdict must be among the case's expected ones: no false PASSED (a wrong sampler, or one that cannot be
checked), no false FAILED (a correct sampler at a hard setting); an INCONCLUSIVE is allowed where the case says
so. A case fails by chance (a correct case FAILED) with probability at most 1e-3, validate's error budget; the
FAILED cases' biases exceed their checks' detectable deviations several times (the case's reason gives them), so
a miss has probability far below 1e-3.

The default run takes the five fastest cases, one of each kind of finding (does not move, cannot forget its
start, wrong only on a nonlinear gradient, the reference diverges, the candidate diverges), each at the budget
``DEFAULT_RUN`` gives it (enough for the one step ladder among them); the rest run under ``-m integration``,
with the held-out set of issue 59 (``tests/heldout/decisive.py``, ``DECISIVE_CASES``), where an INCONCLUSIVE is
allowed for every case (the budget of a test is smaller than validate's default;
``reports/validate_decisive/measure.py`` measures how many are decided at the default budget). Cases that need
2e5 or more steps are left out (``sgbench validate --steps``); their settings are in the manifest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sgbench.bench.adapters import load_sampler
from sgbench.bench.validate import page as validate_page
from sgbench.bench.validate.claim import NO_CLAIM
from sgbench.bench.validate.validate import validate

REPO = Path(__file__).resolve().parents[1]
DEFAULT_RUN = {"frozen-claims-sgld": "40s", "sgld_tiny-icg": "40s", "smoothed-gmm": "3min",  # its step ladder
               "tamed-claims-sgld-linreg": "40s", "diverging-all-chains": "40s"}
BUDGET = "3min"
MAX_STEPS = 10_000


def _cases():
    import sys

    sys.path.insert(0, str(REPO))
    try:
        from tests.heldout import CASES
        from tests.heldout.decisive import DECISIVE_CASES
    finally:
        sys.path.remove(str(REPO))
    old = [pytest.param(c, False, id=c.name, marks=() if c.name in DEFAULT_RUN else pytest.mark.integration)
           for c in CASES if c.num_steps <= MAX_STEPS]
    return old + [pytest.param(c, True, id=f"decisive-{c.name}", marks=pytest.mark.integration)
                  for c in DECISIVE_CASES if c.num_steps <= MAX_STEPS]


@pytest.fixture(autouse=True)
def repository_importable(monkeypatch):
    """``tests.heldout`` is imported from the repository root, as ``sgbench validate`` imports from the
    current folder."""
    monkeypatch.syspath_prepend(str(REPO))


@pytest.mark.parametrize("case, decisive", _cases())
def test_heldout_verdict(case, decisive, tmp_path):
    options = {} if case.num_chains is None else {"num_chains": case.num_chains}
    validation = validate(load_sampler(case.sampler), dict(case.params), claims=case.claims or NO_CLAIM,
                          targets=",".join(case.targets), num_steps=case.num_steps, rename=case.param_map,
                          out=tmp_path, progress=lambda _: None,
                          budget=DEFAULT_RUN.get(case.name, BUDGET), **options)
    verdict = validation.verdict
    allowed = case.expected | {"INCONCLUSIVE"} if decisive else case.expected
    assert verdict.outcome.name in allowed, f"{case.reason}\n{verdict.summary()}"
    assert validate_page.write(validation).exists()
    print(verdict.headline())  # shown with -rA: the outcome and its reasons
