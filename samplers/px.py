r"""Parameter expansion (PX-SGMCMC): any sampler run on an expanded parametrisation of a network's
layer matrices, with its samples mapped back to the network's parameters.

Kim, Nam, Yun, Yang & Lee (2025), "Parameter Expanded Stochastic Gradient Markov Chain Monte Carlo"
(PX-SGMCMC paper), section 3, eq. (9): every layer's weight matrix and bias are
products of new parameters,

.. math:: \mathbf W = \mathbf P_{1:c}\,\mathbf V\,\mathbf Q_{1:d}, \qquad \mathbf b = \mathbf P_{1:c}\,\mathbf a,
          \qquad \mathbf P_{1:c} = \mathbf P_c \cdots \mathbf P_1, \quad
          \mathbf Q_{1:d} = \mathbf Q_1 \cdots \mathbf Q_d,

in the paper's orientation :math:`\mathbf h \mapsto \mathbf W \mathbf h + \mathbf b` (eq. 2); the targets use
the row convention :math:`h \mapsto h W + b`, so :math:`W = \mathbf W^\top`. The base sampler runs unchanged
on the expanded position :math:`\theta` (eq. 10), whose log density is
:math:`\log p(\mathcal D \mid W(\theta), b(\theta)) + \log \mathcal N(\theta; 0, \sigma^2 I)` (eq. 6), with the
chain rule written by hand (appendix A.1, eq. 18). Chains start at :math:`\mathbf P_i = \mathbf Q_j = I`,
:math:`V = W`, :math:`a = b`; ``low_rank`` :math:`k > 0` stores every expanded matrix as
:math:`\mathrm{diag}(\mathbf d) + \mathbf U \mathbf L^\top` (appendix B.6). SGHMC's ``friction`` acts on
:math:`V, a`, ``expanded_friction`` (default ``friction / 100``, table 11) on :math:`\mathbf P, \mathbf Q`.
A PX sampler's ``State`` is ``(position, base)``: :math:`(W(\theta), b(\theta))` in the target's flat
layout, and the base sampler's state over :math:`\theta`. The samples' law on :math:`W` is not the
target's posterior (with expansion (0, 0) it is).

Derivation and notes: docs/derivations.md, section sgbench.samplers.px.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from sgbench import samplers
from sgbench.base.arguments import integer_at_least, number_or_vector, positive_finite, vector_length_matches
from sgbench.base.backend import namespace
from sgbench.samplers._contract import static_field

DEFAULT_FRICTION_RATIO = 100.0  # PX table 11: friction 100 for V, 1 for P and Q
CITATION = "Kim et al. (2025), PX-SGMCMC paper, eq. (9)"


# --------------------------------------------------------------------------------------------
# Layout of the expanded vector


class Factor(NamedTuple):
    """One expanded matrix (p x p) stored at ``start``: full (``rank`` 0, p*p numbers, row-major) or
    diag(d) + U L^T (``rank`` k: d, then U and L, each p x k row-major)."""

    start: int
    size: int
    rank: int

    @property
    def length(self) -> int:
        """The numbers the factor takes in the expanded vector: p*p (full) or p(1 + 2k) (rank k)."""
        return self.size * self.size if self.rank == 0 else self.size * (1 + 2 * self.rank)


class LayerSlots(NamedTuple):
    """Where one layer's parts lie: ``weights`` (n_in x n_out, row-major, our orientation), ``bias``
    (n_out; None without bias) in the base block; ``left`` = (P_1, ..., P_c) (out x out) and
    ``right`` = (Q_1, ..., Q_d) (in x in) in the expanded block."""

    n_in: int
    n_out: int
    weights: int
    bias: int | None
    left: tuple
    right: tuple


class Layout(NamedTuple):
    """Where every part of the expanded position lies.

    Attributes:
        dim: the target's dimension (the base block's length).
        expanded_dim: the expanded position's length.
        layers: one LayerSlots per layer.
    """

    dim: int  # the target's dimension (the base block's length)
    expanded_dim: int
    layers: tuple


@functools.lru_cache(maxsize=64)
def layout(layers: tuple, expansion: tuple, low_rank: int = 0) -> Layout:
    """The slots of ``layers`` ((n_in, n_out, has_bias), ...) under ``expansion`` (c, d).

    Args:
        layers: ((n_in, n_out, has_bias), ...), one per layer.
        expansion: (c, d), the left and right expanded matrices per layer.
        low_rank: k, the rank of every expanded matrix's low-rank part (0: full matrices).

    Returns:
        the Layout.
    """
    c, d = expansion
    start, base = 0, []
    for n_in, n_out, has_bias in layers:
        base.append((start, start + n_in * n_out if has_bias else None))
        start += n_in * n_out + (n_out if has_bias else 0)
    dim, slots = start, []
    for (n_in, n_out, _), (weights, bias) in zip(layers, base):
        factors = []
        for size, count in ((n_out, c), (n_in, d)):
            group = []
            for _ in range(count):
                group.append(Factor(start, size, low_rank))
                start += group[-1].length
            factors.append(tuple(group))
        slots.append(LayerSlots(n_in, n_out, weights, bias, *factors))
    return Layout(dim, start, tuple(slots))


def expanded_dim(params) -> int:
    """The length of the expanded position for ``params`` (its ``layers`` must be filled in).

    Args:
        params: PX Params.

    Returns:
        int: the expanded position's length.

    Raises:
        ValueError: ``params.layers`` is not set.
    """
    return _layout_of(params).expanded_dim


def _layout_of(params) -> Layout:
    if params.layers is None:
        raise ValueError("the PX sampler's layers are not set: build its parameters with "
                         "Sampler.params_for(target, ...) (bench.run does), which reads them from the target")
    return layout(params.layers, params.expansion, params.low_rank)


# --------------------------------------------------------------------------------------------
# The map theta -> (W, b), its pullback, and the starting point


def _factor(theta, factor: Factor, xp):
    p, k, s = factor.size, factor.rank, factor.start
    if k == 0:
        return theta[s:s + p * p].reshape(p, p)
    diagonal = theta[s:s + p]
    u = theta[s + p:s + p + p * k].reshape(p, k)
    low = theta[s + p + p * k:s + p + 2 * p * k].reshape(p, k)
    return xp.diag(diagonal) + u @ low.T


def _factor_grad(theta, factor: Factor, grad, xp):
    """The gradient for the stored numbers of ``factor`` from the gradient ``grad`` for its matrix."""
    p, k, s = factor.size, factor.rank, factor.start
    if k == 0:
        return grad.reshape(-1)
    u = theta[s + p:s + p + p * k].reshape(p, k)
    low = theta[s + p + p * k:s + p + 2 * p * k].reshape(p, k)
    return xp.concatenate([xp.diagonal(grad), (grad @ low).reshape(-1), (grad.T @ u).reshape(-1)])


def _product(matrices):
    """X_1 X_2 ... X_k (k >= 1), or None for k = 0 (the identity)."""
    if not matrices:
        return None
    out = matrices[0]
    for matrix in matrices[1:]:
        out = out @ matrix
    return out


def _product_grads(matrices, grad):
    """Gradients for X_1, ..., X_k of M = X_1 ... X_k from ``grad`` for M (appendix A.1, eq. 18):
    (X_1 ... X_{j-1})^T grad (X_{j+1} ... X_k)^T."""
    k = len(matrices)
    out = []
    for j in range(k):
        g = grad
        before, after = _product(matrices[:j]), _product(matrices[j + 1:])
        if before is not None:
            g = before.T @ g
        if after is not None:
            g = g @ after.T
        out.append(g)
    return out


class _Layer(NamedTuple):
    """One layer's forward intermediates: the left and right factor matrices (as stored: P_1..P_c,
    Q_1..Q_d), their products A = P_c...P_1 and B = Q_1...Q_d (None: identity), V (our orientation),
    a, and B^T V."""

    left: list
    right: list
    a_product: Any
    b_product: Any
    base: Any
    bias: Any
    bt_v: Any


def forward(theta, params, xp=np):
    """(flat (W, b) of every layer in the target's layout, the intermediates the pullback reuses).

    Args:
        theta: the expanded position, shape (expanded_dim,).
        params: PX Params with ``layers`` set.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        (position, cache): the flat (W, b), shape (dim,), and one set of intermediates per layer.
    """
    lay = _layout_of(params)
    pieces, cache = [], []
    for slot in lay.layers:
        left = [_factor(theta, f, xp) for f in slot.left]
        right = [_factor(theta, f, xp) for f in slot.right]
        a_product, b_product = _product(left[::-1]), _product(right)  # P_c ... P_1 and Q_1 ... Q_d
        base = theta[slot.weights:slot.weights + slot.n_in * slot.n_out].reshape(slot.n_in, slot.n_out)
        bt_v = base if b_product is None else b_product.T @ base
        weights = bt_v if a_product is None else bt_v @ a_product.T
        pieces.append(weights.reshape(-1))
        bias = None
        if slot.bias is not None:
            bias = theta[slot.bias:slot.bias + slot.n_out]
            pieces.append(bias if a_product is None else a_product @ bias)
        cache.append(_Layer(left, right, a_product, b_product, base, bias, bt_v))
    return xp.concatenate(pieces), cache


def pullback(theta, cache, grad, params, xp=np):
    r""":math:`J(\theta)^\top` ``grad``: the gradient for the expanded position of a function of
    :math:`(W, b)` whose gradient there is ``grad`` (flat, the target's layout).

    Args:
        theta: the expanded position, shape (expanded_dim,).
        cache: the intermediates :func:`forward` returned at ``theta``.
        grad: the gradient for (W, b), shape (dim,).
        params: PX Params with ``layers`` set.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        the gradient for ``theta``, shape (expanded_dim,).
    """
    lay = _layout_of(params)
    base_pieces, expanded_pieces = [], []
    for slot, layer in zip(lay.layers, cache):
        g = grad[slot.weights:slot.weights + slot.n_in * slot.n_out].reshape(slot.n_in, slot.n_out)
        g_a = g if layer.a_product is None else g @ layer.a_product  # G A
        base_pieces.append((g_a if layer.b_product is None else layer.b_product @ g_a).reshape(-1))  # B G A
        g_bias = None
        if slot.bias is not None:
            g_bias = grad[slot.bias:slot.bias + slot.n_out]
            base_pieces.append(g_bias if layer.a_product is None else layer.a_product.T @ g_bias)
        if layer.left:
            g_product = g.T @ layer.bt_v  # paper orientation: G B^T V^T, (out x out)
            if g_bias is not None:
                g_product = g_product + xp.outer(g_bias, layer.bias)
            grads = _product_grads(layer.left[::-1], g_product)[::-1]  # back to P_1, ..., P_c
            expanded_pieces += [_factor_grad(theta, f, gm, xp) for f, gm in zip(slot.left, grads)]
        if layer.right:
            g_product = layer.base @ g_a.T  # paper orientation: V^T A^T G, (in x in)
            grads = _product_grads(layer.right, g_product)
            expanded_pieces += [_factor_grad(theta, f, gm, xp) for f, gm in zip(slot.right, grads)]
    return xp.concatenate(base_pieces + expanded_pieces)


def expand(position, params, xp=np):
    """The expanded position whose mapped-back parameters are ``position``: V = W, a = b, every
    expanded matrix the identity (low rank: d = 1, U = L = 0).

    Args:
        position: (W, b) in the target's flat layout, shape (dim,).
        params: PX Params with ``layers`` set.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        the expanded position, shape (expanded_dim,).
    """
    lay = _layout_of(params)
    pieces = [position]
    for slot in lay.layers:
        for factor in slot.left + slot.right:
            if factor.rank == 0:
                pieces.append(xp.eye(factor.size, dtype=position.dtype).reshape(-1))
            else:
                pieces += [xp.ones(factor.size, dtype=position.dtype),
                           xp.zeros(2 * factor.size * factor.rank, dtype=position.dtype)]
    return xp.concatenate(pieces)


def expanded_grad_fn(grad_fn, params, xp=np):
    r"""The stochastic gradient of the expanded log density from the driver's oracle ``grad_fn``:
    :math:`J^\top(\hat g(W) + \tau W) - \theta/\sigma^2` with :math:`\tau` the target's prior
    precision (``target_prior_precision``) and :math:`\sigma` the ``prior_scale``.

    Args:
        grad_fn: the driver's gradient oracle for the target, bound to this step's minibatch or noise draw.
        params: PX Params with ``layers``, ``prior_scale`` and ``target_prior_precision`` set.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        the oracle, a function of the expanded position (one call of ``grad_fn`` per call).
    """
    variance = params.prior_scale ** 2

    def oracle(theta):
        position, cache = forward(theta, params, xp)
        likelihood_grad = grad_fn(position) + params.target_prior_precision * position
        return pullback(theta, cache, likelihood_grad, params, xp) - theta / variance

    return oracle


# --------------------------------------------------------------------------------------------
# Targets: the layer structure and the prior to remove


def layer_structure(target) -> tuple:
    """((n_in, n_out, has_bias), ...) of ``target``'s layers; ValueError for a target without them.
    A network target has ``layer_shapes`` [(n_in, n_out)] and ``unflatten``; its flat layout (per
    layer W row-major (n_in, n_out), then b) is checked by unflattening a probe vector.

    Args:
        target: a Target.

    Returns:
        tuple of (n_in, n_out, has_bias).

    Raises:
        ValueError: ``target`` has no layer matrices, or they do not match its dimension or layout.
    """
    # an adapter that declares its layers (sgbench.targets.single_layer)
    declared = getattr(target, "matrix_layers", None)
    if declared is not None:
        return tuple(declared)
    shapes = getattr(target, "layer_shapes", None)
    if shapes is None or not callable(getattr(target, "unflatten", None)):
        raise ValueError(f"expansion needs a target with layer matrices (like 'bnn', which has layer_shapes and "
                         f"unflatten); target {getattr(target, 'name', target)!r} has none; wrap a vector target "
                         f"with sgbench.targets.single_layer(target)")
    layers = tuple((int(n_in), int(n_out), True) for n_in, n_out in shapes)
    lay = layout(layers, (0, 0))
    probe = np.arange(target.dim, dtype=np.float64)
    if lay.dim != target.dim:
        raise ValueError(f"target {target.name!r}: its layer_shapes {list(shapes)} with biases hold {lay.dim} "
                         f"parameters, but its dimension is {target.dim}")
    for slot, (weights, bias) in zip(lay.layers, target.unflatten(probe)):
        expected_w = probe[slot.weights:slot.weights + slot.n_in * slot.n_out].reshape(slot.n_in, slot.n_out)
        if not (np.array_equal(weights, expected_w) and np.array_equal(bias, probe[slot.bias:slot.bias + slot.n_out])):
            raise ValueError(f"target {target.name!r} does not store each layer as W (n_in, n_out) row-major "
                             "followed by b, the layout the expansion assumes")
    return layers


def target_prior_precision(target) -> float:
    r""":math:`\tau` of the target's prior :math:`\mathcal N(0, \tau^{-1} I)` (0 for a single-layer
    adapter, which has no prior of its own); ValueError unless ``grad_log_prior`` is :math:`-\tau x`.

    Args:
        target: a Target with ``grad_log_prior`` and ``prior_variance``.

    Returns:
        float: the precision.

    Raises:
        ValueError: ``target`` has no isotropic zero-mean Gaussian prior.
    """
    if not callable(getattr(target, "grad_log_prior", None)) or getattr(target, "prior_variance", None) is None:
        raise ValueError(f"expansion removes the target's prior from its gradient, but target {target.name!r} has no "
                         "grad_log_prior and prior_variance (an isotropic Gaussian prior)")
    precision = 1.0 / float(target.prior_variance)
    probe = np.linspace(-1.0, 1.0, target.dim)
    if not np.allclose(np.asarray(target.grad_log_prior(probe)), -precision * probe, rtol=1e-12, atol=1e-12):
        raise ValueError(f"target {target.name!r}: grad_log_prior is not -x / prior_variance; the expansion can "
                         "only remove an isotropic zero-mean Gaussian prior")
    return precision


def target_prior_scale(target) -> float:
    """The target's own prior standard deviation: the default ``prior_scale`` of the expansion.

    Args:
        target: a Target with ``prior_scale`` or ``prior_variance``.

    Returns:
        float: the standard deviation.
    """
    if getattr(target, "prior_scale", None) is not None:
        return float(target.prior_scale)
    return math.sqrt(float(target.prior_variance))


# --------------------------------------------------------------------------------------------
# The PX sampler's hyperparameters: the base sampler's, then the expansion's


def _check_expansion(value) -> tuple:
    if isinstance(value, str) or not isinstance(value, tuple | list) or len(value) != 2:
        raise ValueError(f"expansion must be a pair (c, d) of integers >= 0 (left and right expanded matrices "
                         f"per layer), got {value!r}")
    return tuple(integer_at_least(f"expansion[{i}]", v, 0) for i, v in enumerate(value))


def _check_layers(value):
    if value is None:
        return None
    try:
        layers = tuple((n_in, n_out, bias) for n_in, n_out, bias in value)
        valid = bool(layers) and all(isinstance(n, numbers.Integral) and not isinstance(n, bool) and n >= 1
                                     for n_in, n_out, _ in layers for n in (n_in, n_out))
    except (TypeError, ValueError):
        valid = False
    if not valid:
        raise ValueError(f"layers must be a sequence of (n_in, n_out, has_bias) with n_in, n_out >= 1 (filled in "
                         f"from the target by Sampler.params_for), got {value!r}")
    return tuple((int(n_in), int(n_out), bool(bias)) for n_in, n_out, bias in layers)


@dataclasses.dataclass(frozen=True)
class Expansion:
    r"""The expansion's hyperparameters, which a PX sampler's ``Params`` (:func:`expanded_params_class`) adds
    after its base sampler's. Construction runs the base's checks, then these fields'.

    Attributes:
        expansion: (c, d), static: the left and right expanded matrices per layer (eq. 9).
        layers: ((n_in, n_out, has_bias), ...), static; filled in from the target by ``prepare``.
        prior_scale: :math:`\sigma` > 0 of the prior :math:`\mathcal N(0, \sigma^2 I)` on every expanded parameter
            (eq. 6); ``prepare`` fills in the target's own prior scale, so that expansion (0, 0) is the base
            sampler on the target.
        target_prior_precision: :math:`\tau` of the target's prior :math:`\mathcal N(0, \tau^{-1} I)`, a number,
            filled in by ``prepare``: the steps remove that prior from the driver's gradient.
        low_rank: k >= 0, static: 0 full expanded matrices, k > 0 diag + rank k (appendix B.6).
    """

    expansion: tuple = static_field((1, 1))
    layers: tuple | None = static_field(None)
    prior_scale: Any = None
    target_prior_precision: Any = None
    low_rank: int = static_field(0)

    def __post_init__(self):
        base_checks = getattr(super(), "__post_init__", None)  # the base Params' (absent where it checks nothing)
        if base_checks is not None:
            base_checks()
        object.__setattr__(self, "expansion", _check_expansion(self.expansion))
        object.__setattr__(self, "low_rank", integer_at_least("low_rank", self.low_rank, 0))
        object.__setattr__(self, "layers", _check_layers(self.layers))
        if self.prior_scale is not None:
            object.__setattr__(self, "prior_scale", positive_finite("prior_scale", self.prior_scale))
        if self.target_prior_precision is not None:
            object.__setattr__(self, "target_prior_precision",
                               number_or_vector("target_prior_precision", self.target_prior_precision))
            if np.ndim(self.target_prior_precision):
                raise ValueError("target_prior_precision must be a number (the target's prior is isotropic)")


@dataclasses.dataclass(frozen=True)
class ExpansionWithFriction(Expansion):
    """:class:`Expansion` for a base sampler with ``friction`` (SGHMC): its friction acts on the V, a
    coordinates, ``expanded_friction`` on the P, Q ones (section 5, table 11).

    Attributes:
        expanded_friction: > 0, a number or a vector of the expanded coordinates' count (default ``friction / 100``,
            table 11's 1 against 100).
    """

    expanded_friction: Any = None

    def __post_init__(self):
        super().__post_init__()
        _check_expanded_friction(self, self.base_class)


def expanded_params_class(base_sampler: samplers.Sampler, expansion: tuple, defaults: dict, module: str) -> type:
    """The ``Params`` of the PX version of ``base_sampler``: a frozen, validated dataclass (made with
    :func:`samplers.hyperparameters`) subclassing :class:`Expansion` (:class:`ExpansionWithFriction` for a base
    with ``friction``) and the base's ``Params``, so its fields are the base's, then the expansion's. The default
    of ``expansion`` is ``expansion`` and ``defaults`` replace the defaults of the fields they name. The class's
    ``base_class`` is the base's ``Params`` (:func:`base_params`, the friction's check).

    Args:
        base_sampler: the Sampler to expand.
        expansion: the default (c, d), already checked.
        defaults: new defaults of the base's or the expansion's hyperparameters, by name.
        module: the name of the module that binds the class as its attribute ``Params`` (pickle, and so the gate
            and Dask, find the class there).

    Returns:
        the Params class.

    Raises:
        ValueError: a key of ``defaults`` names no hyperparameter.
    """
    BaseParams = base_sampler.Params
    base_fields = {f.name: f for f in dataclasses.fields(BaseParams)}
    expansion_class = ExpansionWithFriction if "friction" in base_fields else Expansion
    fields = {**base_fields, **{f.name: f for f in dataclasses.fields(expansion_class)}}
    body = {"__module__": module, "__annotations__": {}, "base_class": BaseParams,
            "__doc__": f"{BaseParams.__name__} of {base_sampler.name!r} and the expansion's parameters "
                       f"(see sgbench.samplers.px.px)."}
    for key, value in {"expansion": expansion, **defaults}.items():
        if key not in fields:
            raise ValueError(f"px({base_sampler.name!r}): no parameter {key!r} to give a default; it has "
                             f"{', '.join(fields)}")
        body[key] = dataclasses.field(default=value, metadata=fields[key].metadata)  # static stays static
        body["__annotations__"][key] = Any
    return samplers.hyperparameters(type("Params", (expansion_class, BaseParams), body))


def base_params(params, xp=np):
    """The base sampler's parameters over the expanded position (validation bypassed: the fields
    were validated as ``params``, and inside ``jit`` the leaves are tracers), with ``friction`` the
    per-coordinate vector of ``friction`` (V, a coordinates) and ``expanded_friction`` (P, Q).

    Args:
        params: PX Params with ``layers`` set.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        an instance of the base sampler's Params.
    """
    BaseParams = type(params).base_class
    out = object.__new__(BaseParams)
    for field in dataclasses.fields(BaseParams):
        object.__setattr__(out, field.name, getattr(params, field.name))
    lay = _layout_of(params)
    if isinstance(params, ExpansionWithFriction) and lay.expanded_dim > lay.dim:
        friction = xp.concatenate([xp.broadcast_to(params.friction, (lay.dim,)),
                                   xp.broadcast_to(params.expanded_friction, (lay.expanded_dim - lay.dim,))])
        object.__setattr__(out, "friction", friction)
    return out


def _check_expanded_friction(params, BaseParams) -> None:
    """Fill in and validate ``expanded_friction`` (default friction / 100) with the base's checks
    (the Euler integrator's per-step friction < 2, a non-negative injected noise variance)."""
    value = params.expanded_friction
    if value is None:
        if np.ndim(params.friction):
            raise ValueError("expanded_friction is required when friction is a vector (it would be friction / "
                             f"{DEFAULT_FRICTION_RATIO:g} per V coordinate, which does not fit the P, Q coordinates)")
        value = params.friction / DEFAULT_FRICTION_RATIO
    value = number_or_vector("expanded_friction", value, 0.0, minimum_open=True)
    object.__setattr__(params, "expanded_friction", value)
    fields = {f.name: getattr(params, f.name) for f in dataclasses.fields(BaseParams)}
    try:
        BaseParams(**{**fields, "friction": value})
    except ValueError as error:
        raise ValueError(f"expanded_friction {value}: {error}") from None


# --------------------------------------------------------------------------------------------
# The PX sampler: the base sampler's state over theta, and the mapped-back position


class State(NamedTuple):
    """``position``: :math:`(W, b)(\\theta)` flat in the target's layout; ``base``: the base
    sampler's state over the expanded position :math:`\\theta`."""

    position: Any
    base: Any


def mapped_back(theta, params, xp=np):
    r"""The network's parameters at the expanded position, eq. (9): per layer
    :math:`W = \mathbf Q_{1:d}^\top V \mathbf P_{1:c}^\top` (our orientation) and :math:`b = \mathbf P_{1:c}\,a`,
    flat in the target's layout (what the drivers record).

    Args:
        theta: the expanded position, shape (expanded_dim,).
        params: PX Params with ``layers`` set.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        the flat (W, b), shape (dim,).
    """
    return forward(theta, params, xp)[0]


def expanded_step(base_step, state: State, grad_fn, draws, params, xp=np):
    r"""One PX step: the base sampler's step on the expanded position :math:`\theta` (eq. 10) fed the
    stochastic gradient of the expanded log density (eq. 6, :func:`expanded_grad_fn`),

    .. math:: \widehat{\nabla\log\tilde p}(\theta) = J(\theta)^\top \big(\hat g(W(\theta)) + \tau W(\theta)\big)
              - \theta/\sigma^2,

    then the new position mapped back to :math:`(W, b)` (eq. 9, :func:`mapped_back`).

    Args:
        base_step: the base sampler's ``reference_step`` (with ``xp`` NumPy) or ``optimized_step`` (``jax.numpy``).
        state: the PX State.
        grad_fn: the GradientOracle of this step, of the target at (W, b).
        draws: this step's draws of the base sampler's ``draw_spec`` over the expanded dimension.
        params: validated PX Params with ``layers``, ``prior_scale`` and ``target_prior_precision`` set.
        xp: ``numpy`` or ``jax.numpy``.

    Returns:
        (new State, Info): the mapped-back position and the base's new state, and the base step's Info.
    """
    oracle = expanded_grad_fn(grad_fn, params, xp)
    base, info = base_step(state.base, oracle, draws, base_params(params, xp))
    return State(mapped_back(base.position, params, xp), base), info


@dataclasses.dataclass(frozen=True, eq=False)
class ExpandedParts:
    """The contract's parts of the PX version of ``base``, registered as ``name``; each method is the part of its
    name (``sgbench.samplers._contract``).

    Args:
        base: the base Sampler.
        name: the PX sampler's name (in error messages).
    """

    base: samplers.Sampler
    name: str

    def prepare(self, target, params: dict) -> dict:
        """``params`` with ``layers`` and ``target_prior_precision`` read from ``target`` (a given value must
        match it) and ``prior_scale`` (the target's prior scale unless given).

        Args:
            target: the Target the chains run on: one with layer matrices and an isotropic Gaussian prior.
            params: the hyperparameters given, a dict (not modified).

        Returns:
            a new dict with those three filled in.

        Raises:
            ValueError: ``target`` has no layer matrices or no isotropic Gaussian prior, or a given ``layers`` or
                ``target_prior_precision`` is not the target's.
        """
        params = dict(params)
        try:
            layers = layer_structure(target)
        except ValueError as error:
            raise ValueError(f"sampler {self.name!r}: {error}") from None
        given = _check_layers(params.get("layers"))
        if given is not None and given != layers:
            raise ValueError(f"sampler {self.name!r}: layers {given} do not match target {target.name!r}'s {layers}")
        params["layers"] = layers
        precision = target_prior_precision(target)
        given = params.get("target_prior_precision")
        matches = (isinstance(given, numbers.Real) and not isinstance(given, bool)
                   and np.isclose(float(given), precision, rtol=1e-12, atol=0.0))
        if given is not None and not matches:
            raise ValueError(f"sampler {self.name!r}: target_prior_precision {given!r} is not target "
                             f"{target.name!r}'s prior precision {precision}; leave it out (it is read from the "
                             "target)")
        params["target_prior_precision"] = precision
        if params.get("prior_scale") is None:
            params["prior_scale"] = target_prior_scale(target)
        return params

    def init(self, position, params) -> State:
        """The chain's first State: the base's ``init`` at the expanded position :func:`expand` gives for
        ``position`` (every expanded matrix the identity), and ``position`` mapped back through it.

        Args:
            position: (W, b) in the target's flat layout, shape (dim,).
            params: validated PX Params, from ``Sampler.params_for`` (``layers`` and the priors set).

        Returns:
            the PX State.

        Raises:
            ValueError: ``position`` does not fit the layers, the priors are not set, or a friction vector does
                not fit its coordinates.
        """
        xp = namespace(position)
        lay = _layout_of(params)
        if np.shape(position)[-1:] != (lay.dim,):
            raise ValueError(f"the position has dimension {np.shape(position)[-1]}, but the layers {params.layers} "
                             f"hold {lay.dim} parameters")
        if params.prior_scale is None or params.target_prior_precision is None:
            raise ValueError("prior_scale and target_prior_precision are not set: build the parameters with "
                             "Sampler.params_for(target, ...) (bench.run does)")
        if isinstance(params, ExpansionWithFriction):
            vector_length_matches("friction", params.friction, position)
            if np.ndim(params.expanded_friction) == 1 and np.shape(params.expanded_friction)[0] != \
                    lay.expanded_dim - lay.dim:
                raise ValueError(f"expanded_friction has length {np.shape(params.expanded_friction)[0]}, but there "
                                 f"are {lay.expanded_dim - lay.dim} expanded coordinates")
        theta = expand(position, params, xp)
        base = self.base.init(theta, base_params(params, xp))
        return State(mapped_back(theta, params, xp), base)

    def draw_spec(self, dim, params) -> dict:
        """The base's draws over the expanded dimension.

        Args:
            dim: the target's dimension (the layers' parameter count).
            params: validated PX Params with ``layers`` set.

        Returns:
            the base sampler's ``draw_spec`` at the expanded dimension.

        Raises:
            ValueError: ``dim`` is not the layers' parameter count.
        """
        lay = _layout_of(params)
        if dim != lay.dim:
            raise ValueError(f"draw_spec of {self.name!r} got dimension {dim}, but the layers hold {lay.dim} "
                             "parameters")
        return self.base.draw_spec(lay.expanded_dim, params)

    def reference_step(self, state: State, grad_fn, draws, params):
        """:func:`expanded_step` with the base's NumPy step.

        Args:
            state: the PX State.
            grad_fn: the GradientOracle of this step.
            draws: this step's draws of ``draw_spec``.
            params: validated PX Params.

        Returns:
            (new State, Info).
        """
        return expanded_step(self.base.reference_step, state, grad_fn, draws, params, np)

    def optimized_step(self, state: State, grad_fn, draws, params):
        """:func:`expanded_step` with the base's JAX step.

        Args:
            state: the PX State.
            grad_fn: the GradientOracle of this step.
            draws: this step's draws of ``draw_spec``.
            params: validated PX Params.

        Returns:
            (new State, Info).
        """
        return expanded_step(self.base.optimized_step, state, grad_fn, draws, params, jnp)


def px(base_sampler, expansion=(1, 1), name=None, citation=None, benchmarks=None, *, module: str,
       **defaults) -> samplers.Sampler:
    """The PX version of ``base_sampler`` (a :class:`samplers.Sampler`) with default ``expansion``
    (c, d), registered-able under ``name`` (default ``"px_" + base name``), with its own ``benchmarks``
    settings. ``defaults`` override the defaults of the base's hyperparameters (e.g.
    ``form="practical"``) or of the PX ones.

    ``Params`` (:func:`expanded_params_class`): the base's fields, then :class:`Expansion`'s (and, for a base
    with ``friction``, ``expanded_friction``). The other parts are :class:`ExpandedParts`': ``prepare`` reads the
    layers and the prior from the target, ``init`` starts at the identity factors (:func:`expand`), the steps are
    :func:`expanded_step`.

    Args:
        base_sampler: the Sampler to expand (one without ``prepare`` and ``prime``).
        expansion: the default (c, d).
        name: the sampler's name (None: ``"px_" + base_sampler.name``).
        citation: its citation (None: the PX paper's and the base's).
        benchmarks: its BenchmarkSettings, or None.
        module: the name of the module that binds the sampler's ``Params`` as its attribute ``Params``
            (``__name__`` there; the class is pickled by that name).
        **defaults: new defaults of the base's or the expansion's hyperparameters.

    Returns:
        the PX Sampler (not yet registered).

    Raises:
        TypeError: ``base_sampler`` is not a Sampler.
        ValueError: ``base_sampler`` has ``prepare`` or ``prime``, ``expansion`` is invalid, or a default
            names no hyperparameter.
    """
    if not isinstance(base_sampler, samplers.Sampler):
        raise TypeError(f"base_sampler must be a samplers.Sampler, got {type(base_sampler).__name__}")
    if base_sampler.prepare is not None:
        raise ValueError(f"sampler {base_sampler.name!r} fills target-dependent parameters (prepare), which live in "
                         "the target's space, not the expanded one; px wraps samplers without them")
    if base_sampler.prime is not None:
        raise ValueError(f"sampler {base_sampler.name!r} caches log densities at its position (prime); px wraps "
                         "samplers that only call the gradient oracle")
    name = f"px_{base_sampler.name}" if name is None else name
    citation = f"{CITATION}; base: {base_sampler.citation}" if citation is None else citation
    Params = expanded_params_class(base_sampler, _check_expansion(expansion), defaults, module)
    parts = ExpandedParts(base_sampler, name)
    return samplers.Sampler(name=name, citation=citation, Params=Params, State=State, init=parts.init,
                            reference_step=parts.reference_step, optimized_step=parts.optimized_step,
                            draw_spec=parts.draw_spec, prepare=parts.prepare, benchmarks=benchmarks)
