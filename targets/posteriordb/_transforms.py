r"""Stan's transforms from the unconstrained space to a parameter's constrained one, each with the log
absolute Jacobian determinant that the density on the unconstrained space adds (Stan Reference Manual,
"Constraint transforms"):

- lower bound 0: :math:`\sigma = e^u`, :math:`\log|J| = u`;
- interval :math:`(a, b)`: :math:`\theta = a + (b - a)\,\mathrm{logit}^{-1}(u)`,
  :math:`\log|J| = \log(b - a) + \log\mathrm{logit}^{-1}(u) + \log(1 - \mathrm{logit}^{-1}(u))`;
- ordered :math:`(\mu_1 < \mu_2 < \dots)`: :math:`\mu_1 = u_1`, :math:`\mu_k = \mu_{k-1} + e^{u_k}`,
  :math:`\log|J| = \sum_{k \ge 2} u_k`.

Each ``to_*`` maps unconstrained values to ``(constrained, log_jacobian)`` and each ``from_*`` is its inverse
(NumPy or JAX arrays alike); the bounds may be arrays (a bound that depends on another parameter).
"""

from __future__ import annotations

from sgbench.base.backend import namespace


def to_positive(u):
    """Lower bound 0.

    Args:
        u: unconstrained values.

    Returns:
        ``(exp(u), sum(u))``: the values and the log Jacobian.
    """
    xp = namespace(u)
    return xp.exp(u), xp.sum(u)


def from_positive(sigma):
    """The inverse of :func:`to_positive`.

    Args:
        sigma: positive values.

    Returns:
        ``log(sigma)``.
    """
    return namespace(sigma).log(sigma)


def to_interval(u, lower, upper):
    """The interval ``(lower, upper)``, the log-sigmoids computed without overflow.

    Args:
        u: unconstrained values.
        lower: the lower bounds.
        upper: the upper bounds.

    Returns:
        ``(lower + (upper - lower) sigmoid(u), log|J|)``.
    """
    xp = namespace(u)
    log_sigmoid, log_one_minus = -xp.logaddexp(0.0, -u), -xp.logaddexp(0.0, u)
    value = lower + (upper - lower) * xp.exp(log_sigmoid)
    return value, xp.sum(xp.log(upper - lower) + log_sigmoid + log_one_minus)


def from_interval(theta, lower, upper):
    """The inverse of :func:`to_interval`.

    Args:
        theta: values in ``(lower, upper)``.
        lower: the lower bounds.
        upper: the upper bounds.

    Returns:
        ``logit((theta - lower) / (upper - lower))``.
    """
    xp = namespace(theta)
    fraction = (theta - lower) / (upper - lower)
    return xp.log(fraction) - xp.log1p(-fraction)


def to_ordered(u):
    """An increasing vector.

    Args:
        u: an unconstrained vector.

    Returns:
        ``(cumsum([u_1, exp(u_2), ...]), sum(u_2, ...))``.
    """
    xp = namespace(u)
    steps = xp.concatenate([u[:1], xp.exp(u[1:])])
    return xp.cumsum(steps), xp.sum(u[1:])


def from_ordered(mu):
    """The inverse of :func:`to_ordered`.

    Args:
        mu: an increasing vector.

    Returns:
        ``[mu_1, log(mu_2 - mu_1), ...]``.
    """
    xp = namespace(mu)
    return xp.concatenate([mu[:1], xp.log(xp.diff(mu))])
