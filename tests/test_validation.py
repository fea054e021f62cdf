"""Bad input gets a clear error naming the parameter and the accepted range."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.bench.running import run as running


@pytest.mark.parametrize("step_size", [-0.1, 0.0, math.nan, math.inf])
def test_step_size_must_be_finite_and_positive(step_size):
    with pytest.raises(ValueError, match=r"step_size must be a finite number > 0"):
        samplers.get("sgld").params(step_size=step_size)
    with pytest.raises(ValueError, match=r"step_size"):
        running.run("sgld", "icg", params={"step_size": step_size}, num_steps=10)


def test_step_size_must_be_a_number():
    with pytest.raises(TypeError, match="step_size must be a real number"):
        samplers.get("sgld").params(step_size="0.1")


def test_other_sgld_parameters_are_checked():
    with pytest.raises(ValueError, match="temperature"):
        samplers.get("sgld").params(step_size=0.1, temperature=-1.0)
    with pytest.raises(ValueError, match="convention must be one of"):
        samplers.get("sgld").params(step_size=0.1, convention="euler")


def test_unknown_names_list_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown sampler 'sgldd'; known samplers: .*sgld"):
        samplers.get("sgldd")
    with pytest.raises(ValueError, match=r"unknown target 'gauss'; known targets: .*icg"):
        targets.get("gauss")
    with pytest.raises(ValueError, match="unknown sampler"):
        running.run("nope", "icg", params={"step_size": 0.1})
    with pytest.raises(ValueError, match=r"unknown noise model 'anisotropic'; known noise models: .*isotropic"):
        targets.get("icg", noise="anisotropic")


def test_unknown_target_parameters_are_named():
    with pytest.raises(ValueError, match="target 'icg' has no parameter 'dimension'; it accepts: dim"):
        targets.get("icg", dimension=3)
    with pytest.raises(ValueError, match="noise_scale"):
        targets.get("icg", noise="isotropic", noise_scale=2.0)
    with pytest.raises(ValueError, match="dim must be an integer >= 1"):
        targets.get("icg", dim=0)
    for value in (0.5, -4):  # one message, the range the code enforces
        with pytest.raises(ValueError, match=r"condition_number must be a number in \[1, 1e\+12\]"):
            targets.get("icg", condition_number=value)
    with pytest.raises(ValueError, match="it accepts: dim, condition_number, rotation_seed, noise, and its "
                                         "gradient-noise model's parameters as noise_NAME"):
        targets.get("icg", nope=1)
    with pytest.raises(ValueError, match="noise_variance must be a finite number > 0"):
        targets.get("icg", noise="isotropic", noise_variance=-1.0)


@pytest.mark.parametrize("shape", [(9,), (3, 11), (2, 10), (3, 10, 1)])
def test_initial_position_must_match_the_dimension(shape):
    with pytest.raises(ValueError, match=r"initial_position must have shape \(10,\) or \(3, 10\)"):
        running.run("sgld", "icg", params={"step_size": 0.1}, num_chains=3, num_steps=10,
                    initial_position=np.zeros(shape))


@pytest.mark.parametrize("num_chains", [0, -2])
def test_num_chains_must_be_at_least_one(num_chains):
    with pytest.raises(ValueError, match="num_chains must be an integer >= 1"):
        running.run("sgld", "icg", params={"step_size": 0.1}, num_chains=num_chains)


def test_run_configuration_is_checked():
    run = lambda **kw: running.run("sgld", "icg", params={"step_size": 0.1}, **kw)  # noqa: E731
    with pytest.raises(TypeError, match="num_chains must be an integer >= 1"):
        run(num_chains=2.5)
    with pytest.raises(ValueError, match="num_steps must be an integer >= 1"):
        run(num_steps=0)
    with pytest.raises(ValueError, match=r"thin must be an integer in \[1, num_steps=10\]"):
        run(num_steps=10, thin=11)
    with pytest.raises(ValueError, match="backend must be one of"):
        run(backend="torch")
    with pytest.raises(ValueError, match="dtype must be one of"):
        run(dtype="float16")
    with pytest.raises(ValueError, match="dtype must be 'float64' for the numpy backend"):
        run(backend="numpy", dtype="float32")
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        run(seed=-1)


def test_grid_may_vary_only_numeric_fields():
    with pytest.raises(ValueError, match="may differ only in numeric fields, not in convention"):
        running.run_grid("sgld", "icg",
                         params_grid=[{"step_size": 0.1}, {"step_size": 0.1, "convention": "welling_teh"}])
    with pytest.raises(ValueError, match="at least one"):
        running.run_grid("sgld", "icg", params_grid=[])


def test_initial_position_must_be_finite():
    with pytest.raises(ValueError, match="initial_position must be finite"):
        running.run("sgld", "icg", params={"step_size": 0.1}, num_steps=10, initial_position=np.full(10, np.nan))


def test_unknown_sampler_parameters_are_named():
    with pytest.raises(ValueError, match="sampler 'psgld' has no parameter 'smoothng'; it accepts: .*smoothing"):
        samplers.get("psgld").params(step_size=0.1, smoothng=0.9)


@pytest.mark.parametrize("smoothing", [-0.1, 1.5, math.nan])
def test_psgld_smoothing_factor_must_lie_in_the_unit_interval(smoothing):
    with pytest.raises(ValueError, match=r"smoothing must be a number in \[0, 1\]"):
        samplers.get("psgld").params(step_size=0.1, smoothing=smoothing)


def test_psgld_epsilon_and_initial_square_average_are_checked():
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        samplers.get("psgld").params(step_size=0.1, epsilon=0.0)
    with pytest.raises(ValueError, match="initial_square_average must be a finite number >= 0"):
        samplers.get("psgld").params(step_size=0.1, initial_square_average=-1.0)
    with pytest.raises(ValueError, match="initial_square_average has length 3, but the position has dimension 10"):
        running.run("psgld", "icg", params={"step_size": 0.1, "initial_square_average": [1.0, 2.0, 3.0]}, num_steps=10)


CYCLICAL = {"kind": "cyclical", "cycle_length": 100}


@pytest.mark.parametrize("fraction", [-0.1, 1.01, math.inf])
def test_csgld_exploration_fraction_must_lie_in_the_unit_interval(fraction):
    with pytest.raises(ValueError, match=r"exploration_fraction must be a number in \[0, 1\]"):
        samplers.get("csgld").params(step_size=0.1, schedule=CYCLICAL, exploration_fraction=fraction)


def test_csgld_needs_a_cyclical_schedule():
    with pytest.raises(ValueError, match="schedule must be cyclical for csgld"):
        samplers.get("csgld").params(step_size=0.1)


@pytest.mark.parametrize("cycle_length", [0, -5])
def test_cycle_length_must_be_a_positive_integer(cycle_length):
    with pytest.raises(ValueError, match="cycle_length must be an integer >= 1"):
        samplers.get("csgld").params(step_size=0.1, schedule={"kind": "cyclical", "cycle_length": cycle_length})
    with pytest.raises(TypeError, match="cycle_length must be an integer >= 1"):
        samplers.get("sgld").params(step_size=0.1, schedule={"kind": "cyclical", "cycle_length": 10.5})


def test_schedules_are_checked():
    with pytest.raises(ValueError, match=r"exponent must be a number in \(0, 1\]"):
        samplers.get("sgld").params(step_size=0.1, schedule={"kind": "polynomial_decay", "exponent": 1.5})
    with pytest.raises(ValueError, match="offset must be a finite number > 0"):
        samplers.get("sgld").params(step_size=0.1, schedule={"kind": "polynomial_decay", "offset": 0.0})
    with pytest.raises(ValueError, match=r"final_fraction must be a number in \[0, 1\)"):
        samplers.get("sgld").params(step_size=0.1, schedule={"kind": "cyclical", "cycle_length": 5,
                                                              "final_fraction": 1.0})
    with pytest.raises(ValueError, match="schedule must be one of"):
        samplers.get("sgld").params(step_size=0.1, schedule="exponential")
    with pytest.raises(ValueError, match="schedule 'cyclical' has no parameter 'period'"):
        samplers.get("sgld").params(step_size=0.1, schedule={"kind": "cyclical", "period": 5})


def test_control_variate_centre_must_match_the_target():
    with pytest.raises(ValueError, match=r"centre has shape \(3,\), but the target has dimension 10"):
        running.run("sgld_cv", "icg", params={"step_size": 0.1, "centre": [0.0, 0.0, 0.0]}, num_steps=10)
    with pytest.raises(ValueError, match=r"centre_grad has shape \(3,\), but the target has dimension 10"):
        running.run("sgld_cv", "icg", params={"step_size": 0.1, "centre": np.zeros(10), "centre_grad": np.zeros(3)},
                    num_steps=10)  # refused before the MAP search
    sampler = samplers.get("sgld_cv")
    with pytest.raises(ValueError, match=r"centre has dimension 3, but the position has dimension 10"):
        sampler.init(np.zeros(10), sampler.params(step_size=0.1, centre=np.zeros(3), centre_grad=np.zeros(3)))
    with pytest.raises(ValueError, match=r"centre must be a finite vector \(1-d\), got shape \(2, 5\)"):
        samplers.get("sgld_cv").params(step_size=0.1, centre=np.zeros((2, 5)), centre_grad=np.zeros((2, 5)))
    with pytest.raises(ValueError, match="centre_grad must have the shape of centre"):
        samplers.get("sgld_cv").params(step_size=0.1, centre=np.zeros(10), centre_grad=np.zeros(9))
    with pytest.raises(ValueError, match="centre is required"):
        samplers.get("sgld_cv").params(step_size=0.1)


@pytest.mark.parametrize("name", ["sghmc", "sghmc_cv"])
@pytest.mark.parametrize("friction", [0.0, -0.01, math.nan, [0.01, 0.0]])
def test_sghmc_friction_must_be_positive(name, friction):
    centre = {"centre": [0.0, 0.0], "centre_grad": [0.0, 0.0]} if name == "sghmc_cv" else {}
    with pytest.raises(ValueError, match=r"friction must be a finite number > 0 or a vector of them"):
        samplers.get(name).params(step_size=0.01, friction=friction, **centre)


@pytest.mark.parametrize("params,condition", [
    (dict(step_size=0.01, friction=0.01, noise_estimate=2.5),
     r"2 \* friction \* temperature - step_size \* noise_estimate >= 0"),
    (dict(step_size=0.01, friction=0.01, noise_estimate=1.5, temperature=0.5), "2 \\* friction"),
    (dict(step_size=0.1, form="practical", friction=1.0, noise_estimate=30.0), r"friction \(the rate gamma\)"),
    (dict(step_size=0.01, friction=0.01, integrator="splitting", noise_estimate=2.0),
     r"temperature \* \(1 - exp\(-2 \* friction\)\) - step_size \* noise_estimate >= 0"),
    # the check is at the schedule's peak: offset 0.5 makes h_0 = 0.01 * 0.5**-0.55 = 0.0146
    (dict(step_size=0.01, friction=0.01, noise_estimate=1.5,
          schedule={"kind": "polynomial_decay", "offset": 0.5, "exponent": 0.55}), "noise_estimate is too large"),
])
def test_sghmc_noise_estimate_cannot_make_the_injected_variance_negative(params, condition):
    with pytest.raises(ValueError, match="noise_estimate is too large: the injected noise variance is -") as error:
        samplers.get("sghmc").params(**params)
    assert error.match(condition)


def test_sghmc_noise_estimate_at_the_limit_is_accepted():
    # 2 alpha T - h beta = 0: all the momentum noise comes from the gradient
    assert samplers.get("sghmc").params(step_size=0.01, friction=0.01, noise_estimate=2.0).noise_estimate == 2.0


def test_sghmc_euler_friction_per_step_must_be_below_two():
    with pytest.raises(ValueError, match=r"friction must be a number in \(0, 2\)"):
        samplers.get("sghmc").params(step_size=0.01, friction=2.0)
    with pytest.raises(ValueError, match=r"friction \* step_size must be a number in \(0, 2\)"):
        samplers.get("sghmc").params(step_size=0.1, form="practical", friction=25.0)
    # the splitting integrator takes the friction step exactly: any positive friction is stable
    assert samplers.get("sghmc").params(step_size=0.1, form="practical", friction=25.0, integrator="splitting")


def test_sghmc_choices_and_vector_lengths_are_checked():
    sghmc = samplers.get("sghmc")
    with pytest.raises(ValueError, match=r"form must be one of \['chen', 'practical'\]"):
        sghmc.params(step_size=0.01, form="blackjax")
    with pytest.raises(ValueError, match=r"integrator must be one of \['euler', 'explicit_euler', 'splitting'\]"):
        sghmc.params(step_size=0.01, integrator="leapfrog")
    with pytest.raises(ValueError, match="refresh_every must be an integer >= 0"):
        sghmc.params(step_size=0.01, refresh_every=-1)
    with pytest.raises(ValueError, match="noise_estimate must be a finite number >= 0"):
        sghmc.params(step_size=0.01, noise_estimate=-1.0)
    with pytest.raises(ValueError, match="friction has length 3, but the position has dimension 10"):
        running.run("sghmc", "icg", params={"step_size": 0.01, "friction": [0.01] * 3}, num_steps=10)
