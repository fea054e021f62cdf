"""The Inference Gym models the suite uses, by the suite's name: each a constructor of ``inference_gym.using_jax``
with the settings its ground truth was computed at (Inference Gym ships truth for these settings only).

Ground truth of the first eight: long CmdStan NUTS runs by the Inference Gym authors (means, standard deviations,
standard errors of the means); of the last three: analytic (no standard errors).
"""

from __future__ import annotations

import contextlib
import importlib
import warnings

GYM_EXTRA = "python -m pip install 'sgmcmc-bench[gym]'"

CONSTRUCTORS = {
    "eight_schools": ("EightSchools", {}),
    "brownian_motion": ("BrownianMotionMissingMiddleObservations", {"use_markov_chain": False}),
    "brownian_motion_unknown_scales": ("BrownianMotionUnknownScalesMissingMiddleObservations",
                                       {"use_markov_chain": False}),
    "lorenz_bridge": ("ConvectionLorenzBridge", {"use_markov_chain": False}),
    "lorenz_bridge_unknown_scales": ("ConvectionLorenzBridgeUnknownScales", {"use_markov_chain": False}),
    "item_response_theory": ("SyntheticItemResponseTheory", {}),
    "stochastic_volatility": ("VectorizedStochasticVolatilitySP500Small", {"centered": False, "use_fft": True}),
    "log_gaussian_cox_process": ("SyntheticLogGaussianCoxProcess", {}),
    "banana": ("Banana", {"ndims": 2, "curvature": 0.03}),
    "neals_funnel": ("NealsFunnel", {"ndims": 10}),
    "ill_conditioned_gaussian": ("IllConditionedGaussian", {"ndims": 100, "gamma_shape_parameter": 0.5, "seed": 10}),
}
MODELS = tuple(CONSTRUCTORS)


def gym():
    """``inference_gym.using_jax``, imported on first use (it takes seconds and an optional extra).

    Returns:
        the module.

    Raises:
        ImportError: Inference Gym (or tfp-nightly) is absent; the message names the extra that installs it.
    """
    try:
        return importlib.import_module("inference_gym.using_jax")
    except ImportError as missing:
        raise ImportError(f"the inference_gym targets need inference-gym and tfp-nightly, which sgmcmc-bench installs "
                          f"with its gym extra: {GYM_EXTRA}") from missing


def construct(model: str):
    """The Inference Gym model ``model`` (one of ``MODELS``) at its ground truth's settings.

    Args:
        model: the suite's name of the model.

    Returns:
        the ``inference_gym`` model object.
    """
    class_name, settings = CONSTRUCTORS[model]
    return getattr(gym().targets, class_name)(**settings)


@contextlib.contextmanager
def quiet():
    """TensorFlow Probability's own deprecation warnings silenced for the duration (its JAX backend calls JAX in ways
    JAX deprecates; nothing a user of the suite can act on), without touching the global warning filters.

    Returns:
        a context manager (the generator's; nothing is bound by ``as``).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"tensorflow_probability\.")
        yield
