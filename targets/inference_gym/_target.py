r"""An Inference Gym model as a suite target, on its unconstrained space.

The position :math:`u` is the model's event flattened (``_structure``) and mapped to :math:`\mathbb R^d` by the
inverse of Inference Gym's ``default_event_space_bijector``, one elementwise bijector per leaf (identity,
softplus, sigmoid or exp); the log density is the model's unnormalised log density on the constrained scale plus
the log Jacobian of the forward map, :math:`\log p(u) = \log \tilde p(b(u)) + \sum_k \log|b_k'(u_k)|`, with
gradients by ``jax.grad``.

Truth is Inference Gym's (``_truth``), stated on its quantities (``quantities``, the constrained parameters) and
carried to the position coordinate by coordinate where a coordinate's bijector is the identity and a quantity
equals it; the other coordinates' truth is NaN (``known`` marks which are stated).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from sgbench import targets
from sgbench.base.arguments import one_of
from sgbench.targets._contract import NoExactSamplerError
from sgbench.targets._jax_density import JaxDensityTarget
from sgbench.targets._jax_likelihood import JaxPerDatumTarget
from sgbench.targets.inference_gym._item_response import item_response_likelihood
from sgbench.targets.inference_gym._models import MODELS, construct, quiet
from sgbench.targets.inference_gym._structure import Layout, flatten, leaves
from sgbench.targets.inference_gym._truth import flat_values, gym_truth, restricted
from sgbench.targets.noise import make_noise

PROBES = (0.37, -0.61)
"""Two probe offsets: a coordinate equals a quantity when they agree at both points ``PROBES[k] + 0.01 i``."""


@targets.register("inference_gym")
class InferenceGymTarget(JaxPerDatumTarget, JaxDensityTarget):
    """``model``: one of ``MODELS`` (default ``"eight_schools"``); ``noise`` (default ``"none"``: the exact gradient;
    ``"minibatch"`` for ``item_response_theory``, whose likelihood is split per answer) and its ``noise_*``.
    Needs the gym extra (``_models.GYM_EXTRA``)."""

    name = "inference_gym"
    density_dtype = "float32"

    def __init__(self, model="eight_schools", noise="none", **noise_params):
        one_of("model", model, MODELS)
        self.model = model
        with quiet():
            self.gym_model = construct(model)
        self.layout = Layout(self.gym_model.event_shape)
        self.bijectors = [bijector for _, bijector in leaves(self.gym_model.default_event_space_bijector)]
        self.dtypes = [dtype for _, dtype in leaves(self.gym_model.dtype)]
        self.dim, self.coordinates = self.layout.dim, self.layout.coordinates
        transformation = self.gym_model.sample_transformations["identity"]
        self.quantity_coordinates = flat_values(transformation.ground_truth_mean)[0]
        self.quantity_truth = gym_truth(transformation, self._quantity_names(), f"Inference Gym ground truth of "
                                        f"{model} ({type(self.gym_model).__name__})")
        matches, identity = self._coordinate_matches()
        self.known = (matches >= 0) & identity
        self.truth = restricted(self.quantity_truth, np.where(self.known, matches, -1),
                                self.quantity_truth.source + ", on the unconstrained coordinates it states")
        self._start = self._start_from(matches)
        if model == "item_response_theory":
            self.split_likelihood(*item_response_likelihood(self.layout))
        self.noise = make_noise(noise, self, **noise_params)
        self.compile_density()
        self._quantities = jax.jit(jax.vmap(self._quantities_at))
        self.params = dict(model=model, **self.noise_params())

    def constrain(self, u):
        """The model's event at position ``u`` and the log Jacobian of the map.

        Args:
            u: one position, shape (dim,).

        Returns:
            (the event structure, the log Jacobian: a number).
        """
        values, log_jacobian = self._constrained_pieces(u)
        return self.layout.build(values), log_jacobian

    def _constrained_pieces(self, u):
        pieces = self.layout.pieces(u)
        values = [bijector.forward(piece) for bijector, piece in zip(self.bijectors, pieces, strict=True)]
        log_jacobian = sum(jnp.sum(bijector.forward_log_det_jacobian(piece, event_ndims=piece.ndim))
                           for bijector, piece in zip(self.bijectors, pieces, strict=True))
        return values, log_jacobian

    def _unconstrained_log_density(self, u):
        """In the model's own dtype (float32: Inference Gym's data are float32 and its distributions refuse mixed
        dtypes), returned in the position's."""
        pieces, log_jacobian = self._constrained_pieces(u)
        event = self.layout.build([piece.astype(dtype) for piece, dtype in zip(pieces, self.dtypes, strict=True)])
        with quiet():
            return self.gym_model.unnormalized_log_prob(event).astype(u.dtype) + log_jacobian

    def _quantities_at(self, u):
        with quiet():
            return flatten(self.gym_model.sample_transformations["identity"](self.constrain(u)[0]))

    def _quantity_names(self) -> list[str]:
        event = self.constrain(jnp.zeros(self.dim))[0]
        with quiet():
            return flat_values(self.gym_model.sample_transformations["identity"](event))[0]

    def _coordinate_matches(self) -> tuple[np.ndarray, np.ndarray]:
        """For each coordinate, the quantity equal to its constrained value at both probe points (-1: none), and
        whether its bijector is the identity there."""
        steps = 0.01 * jnp.arange(self.dim, dtype=jnp.float64)
        equal, identity = [], []
        for offset in PROBES:
            u = offset + steps
            constrained = np.asarray(flatten(self.constrain(u)[0]), dtype=np.float64)
            quantities = np.asarray(self._quantities_at(u), dtype=np.float64)
            equal.append(np.isclose(constrained[:, None], quantities[None, :], rtol=1e-6, atol=0))
            identity.append(np.isclose(constrained, np.asarray(u), rtol=1e-6, atol=0))
        both = equal[0] & equal[1]
        matches = np.where(both.sum(axis=1) == 1, both.argmax(axis=1), -1)
        return matches, identity[0] & identity[1]

    def _start_from(self, matches: np.ndarray) -> np.ndarray:
        """The truth's mean mapped leaf by leaf through the inverse bijectors where a coordinate has a quantity,
        else 0."""
        constrained = np.where(matches >= 0, self.quantity_truth.mean[np.maximum(matches, 0)], np.nan)
        pieces = self.layout.pieces(jnp.asarray(constrained))
        start = np.concatenate([np.asarray(bijector.inverse(piece), dtype=np.float64).reshape(-1)
                                for bijector, piece in zip(self.bijectors, pieces, strict=True)])
        return np.where(np.isfinite(start), start, 0.0)

    def quantities(self, x) -> np.ndarray:
        """Inference Gym's quantities (those its truth states, ``quantity_coordinates``) at positions ``x``.

        Args:
            x: positions, shape (n, dim).

        Returns:
            float64 array of shape (n, len(quantity_coordinates)).
        """
        with jax.enable_x64(True):
            return np.asarray(self._quantities(jnp.asarray(x, dtype=jnp.float64)), dtype=np.float64)

    def sample(self, key, n: int):
        """Inference Gym ships no draws: this always raises.

        Args:
            key: a JAX PRNG key (not read).
            n: the number of draws (not read).

        Raises:
            NoExactSamplerError: always (the truth is moments only).
        """
        raise NoExactSamplerError(f"target {self.name!r} ({self.model}) has no exact sampler: Inference Gym states "
                                  "moments, not draws")

    def initial_position(self) -> np.ndarray:
        """Inference Gym's mean, mapped to the unconstrained space leaf by leaf, where stated; 0 elsewhere (the
        non-centred volatilities); Inference Gym sets no starting point.

        Returns:
            float64 array of shape (dim,).
        """
        return np.array(self._start)
