"""Scoring a run on predictive moments against a function-space reference (``reference/function_space.py``): on
a stand-in target whose "predictions" are its coordinates, with a stored reference of exact N(0, 1) draws."""

from __future__ import annotations

import numpy as np
import pytest

from sgbench.reference import function_space, store


class Coordinates:
    """A target whose reference keeps its 5 coordinates as the predictions."""

    name, params, dim = "coordinates", {"dim": 5}, 5
    reference_quantities_label = "the coordinates"

    def reference_quantities(self, draws):
        return np.asarray(draws)


@pytest.fixture()
def reference_dir(tmp_path):
    store.save(Coordinates(), np.random.default_rng(0).standard_normal((4, 2500, 5)), {}, {}, tmp_path)
    return tmp_path


def test_exact_draws_score_as_exact_and_errors_are_caught(reference_dir):
    # 4 x 500 exact draws: each z is standard normal (both Monte Carlo errors counted), so max |z| over 5 points
    # exceeds 4 with probability 5 x 6.3e-5 = 3e-4; the mean error in sds has sd about sqrt(1/2000 + 1/10000)
    # = 0.024, the sd error about 0.02
    rng = np.random.default_rng(1)
    target = Coordinates()
    exact = function_space.predictive_moment_scores(target, rng.standard_normal((4, 500, 5)), reference_dir)
    assert exact["predictive_mean_max_abs_z"] < 4 and exact["predictive_mean_error_sd"] < 0.1
    assert exact["predictive_std_relative_error"] < 0.1
    shifted = function_space.predictive_moment_scores(target, 0.3 + rng.standard_normal((4, 500, 5)), reference_dir)
    assert shifted["predictive_mean_max_abs_z"] > 8 and abs(shifted["predictive_mean_error_sd"] - 0.3) < 0.1
    wide = function_space.predictive_moment_scores(target, 2 * rng.standard_normal((4, 500, 5)), reference_dir)
    assert abs(wide["predictive_std_relative_error"] - 1.0) < 0.1


def test_a_run_needs_finite_draws_and_a_stored_reference(reference_dir, tmp_path_factory):
    target = Coordinates()
    assert function_space.has_reference(target, reference_dir)
    assert not function_space.has_reference(target, tmp_path_factory.mktemp("empty"))
    with pytest.raises(ValueError, match="finite draws of shape"):
        function_space.predictive_moment_scores(target, np.full((2, 10, 5), np.nan), reference_dir)


def test_the_stored_bnn_gold_standard_met_the_function_space_contract():
    from sgbench import targets
    from sgbench.reference.contract import Contract

    target = targets.get("bnn", hidden=(8,), activation="tanh")
    assert function_space.has_reference(target)  # noise settings do not change the posterior, nor the file
    header = store.read_header(target)  # checksum verified
    contract, diagnostics = Contract(), header["diagnostics"]
    assert header["quantities"] == target.reference_quantities_label
    assert diagnostics["max_rhat"] < contract.max_rhat and diagnostics["divergences"] == 0
    assert min(diagnostics["min_bulk_ess"], diagnostics["min_tail_ess"]) >= contract.min_ess
    assert diagnostics["parameters"]["max_rhat"] > diagnostics["max_rhat"]  # recorded, not required
    assert store.load_draws(target).shape == (4, 10_000, 20)
    assert not function_space.has_reference(targets.get("bnn"))  # the default 2 x 16 ReLU network has none
