"""The integrity of ``tests/heldout/decisive.py`` (``DECISIVE_CASES``), the held-out set written for a decisive
``sgbench validate``: every case names a sampler that loads with ``sgbench.bench.adapters.load_sampler`` and
hyperparameters it accepts, a claim the claimed suite sampler accepts (translated by the adapter where the sampler is
one), targets of ``tests.heldout.TARGETS``, acceptable verdicts, and a ``decided`` verdict among them. Deterministic
and fast: nothing runs a chain (the statistical expectations are the held-out modules' docstrings; the test that
runs validate on these cases belongs with the validator).
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest

from sgbench import samplers
from sgbench.bench.adapters import load_sampler

REPO = Path(__file__).resolve().parents[1]
LIBRARIES = {"sgbench.bench.adapters.blackjax": "blackjax", "sgbench.bench.adapters.sgmcmcjax": "sgmcmcjax"}


@pytest.fixture(autouse=True)
def repository_importable(monkeypatch):
    """``tests.heldout`` is imported from the repository root, as ``sgbench validate`` imports from the current
    folder."""
    monkeypatch.syspath_prepend(str(REPO))


def _manifest():
    import sys

    sys.path.insert(0, str(REPO))
    try:
        from tests.heldout import CASES
        from tests.heldout.decisive import DECISIVE_CASES
    finally:
        sys.path.remove(str(REPO))
    return CASES, DECISIVE_CASES


def _cases():
    return [pytest.param(c, id=c.name) for c in _manifest()[1]]


def _needs_library(case):
    library = LIBRARIES.get(case.module)
    if library is not None and importlib.util.find_spec(library) is None:
        pytest.skip(f"{case.sampler} needs {library} installed")


def test_names_are_unique_and_new():
    cases, decisive = _manifest()
    names = [c.name for c in decisive]
    assert len(set(names)) == len(names)
    assert not set(names) & {c.name for c in cases}


def test_the_set_has_every_kind_in_proportion():
    from tests.heldout import KINDS

    _, decisive = _manifest()
    assert 25 <= len(decisive) <= 40
    counts = {kind: sum(c.kind == kind for c in decisive) for kind in KINDS}
    assert all(counts[kind] >= 5 for kind in KINDS), counts
    assert counts["correct"] >= len(decisive) // 4 and counts["order-one"] >= len(decisive) // 4, counts


@pytest.mark.parametrize("case", _cases())
def test_case_is_well_formed(case):
    from tests.heldout import DECIDED, KINDS, OUTCOMES, TARGETS

    assert case.expected and case.expected <= OUTCOMES
    assert case.decided is None or (case.decided in DECIDED and case.decided in case.expected)
    if case.decided is None:
        assert case.expected == {"INCONCLUSIVE"}, "without a decided verdict INCONCLUSIVE is the honest one"
    assert case.kind in KINDS
    assert case.targets and set(case.targets) <= set(TARGETS)
    assert case.reason.strip() and "\n" not in case.reason
    assert case.num_chains is None or case.num_chains >= 2
    assert case.num_steps >= 1 and case.param_map is None
    if case.kind in ("correct", "order-one"):
        assert case.decided != ("FAILED" if case.kind == "correct" else "PASSED")
    if case.kind == "order-h":
        assert case.decided == ("PASSED" if case.claims is None else "FAILED")


@pytest.mark.parametrize("case", _cases())
def test_sampler_loads_and_takes_its_params(case):
    _needs_library(case)
    sampler = load_sampler(case.sampler)
    assert isinstance(sampler, samplers.Sampler)
    params = sampler.params(**case.params)
    if case.module.startswith("tests.heldout."):
        module = importlib.import_module(case.module)
        assert sampler.benchmarks is None and sampler.name not in samplers.names()
        assert "Verdict" in module.__doc__
    if case.claims is None:
        return
    reference = samplers.get(case.claims)
    to_reference = getattr(sampler, "to_reference", None)
    if to_reference is not None:  # an adapter: its claim, with its translated hyperparameters
        assert sampler.claims == case.claims
        reference.params(**to_reference(params))
    else:
        reference.params(**case.params)


def test_presets_name_registered_targets():
    from sgbench import targets
    from tests.heldout import TARGETS

    _, decisive = _manifest()
    used = {t for c in decisive for t in c.targets}
    for key in used:
        kwargs = dict(TARGETS[key])
        assert targets.get(kwargs.pop("name"), **kwargs).dim >= 1


def test_the_laws_behind_the_numbers_agree_with_the_suite():
    """``tests/heldout/_decisive_laws.py`` (the exact laws the reasons quote) gives SGLD's stationary law as a
    discrete Lyapunov solve on icg and ``sgbench.reference.minibatch_laws`` on linreg do."""
    from tests.heldout import _decisive_laws

    assert _decisive_laws.check()
