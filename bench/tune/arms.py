r"""The arms of MAMBA: a uniform grid of hyperparameter tuples (MAMBA paper,
section 3.2 "Initialize" and section 4: "an equally spaced grid over batch sizes and step sizes").

An axis is a hyperparameter and its values: ``step_size`` for every sampler, ``batch_fraction``
:math:`\tau` (the minibatch is :math:`n = \lfloor\tau N\rfloor` of the :math:`N` data; appendix C,
tables 4, 6 and 8), and any numeric hyperparameter of the sampler's ``Params`` (``friction``). The
arms are the Cartesian product of the axes, in the order given, the last axis varying fastest.

Defaults (:func:`default_axes`; the paper's grids are for its data sets, ours scale with :math:`N`):

- ``step_size``: 11 values :math:`10^{k/2}/N`, :math:`k = -5..5` (half decades around the heuristic
  :math:`h = 1/N` of Brosse et al. 2018, as the paper's grids are half decades) on a data target; 7
  values :math:`10^{-3}, 10^{-2.5}, \dots, 1` on an analytic target;
- ``batch_fraction``: 1, 0.1, 0.01, 0.001 (appendix C.1.3), those with :math:`\lfloor\tau N\rfloor \ge 1`,
  on a target with minibatch gradient noise; 1 otherwise;
- ``friction`` (samplers that have one): its default and ten times it (MAMBA fixes 0.01).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from sgbench.base.arguments import integer_at_least, positive_finite

BATCH_FRACTION = "batch_fraction"
DEFAULT_BATCH_FRACTIONS = (1.0, 0.1, 0.01, 0.001)
MAX_ARMS = 10_000


@dataclasses.dataclass(frozen=True)
class Arm:
    """One hyperparameter tuple :math:`\\phi_s`: ``values`` pairs (name, value) in axis order."""

    values: tuple[tuple[str, float], ...]

    @property
    def batch_fraction(self) -> float:
        return dict(self.values).get(BATCH_FRACTION, 1.0)

    def sampler_params(self) -> dict:
        """The sampler's hyperparameters of this arm (everything but the batch fraction)."""
        return {name: value for name, value in self.values if name != BATCH_FRACTION}

    @property
    def label(self) -> str:
        return " ".join(f"{name}={value:.3g}" for name, value in self.values)


def minibatch_size(target, batch_fraction: float) -> int | None:
    r""":math:`\lfloor\tau N\rfloor` on a target with minibatch gradient noise, None on any other target.

    Raises:
        ValueError: :math:`\tau` outside (0, 1], a minibatch of no data, or :math:`\tau < 1` on a target
            without minibatch noise.
    """
    fraction = positive_finite(BATCH_FRACTION, batch_fraction)
    if fraction > 1:
        raise ValueError(f"{BATCH_FRACTION} must be a number in (0, 1], got {batch_fraction!r}")
    if target.params.get("noise") != "minibatch":
        if fraction != 1:
            raise ValueError(f"{BATCH_FRACTION} other than 1 needs a target with minibatch gradient noise "
                             f"(noise=minibatch); target {target.name!r} has noise {target.params.get('noise')!r}")
        return None
    size = math.floor(fraction * target.num_data)
    if size < 1:
        raise ValueError(f"{BATCH_FRACTION} must be >= 1/N = {1 / target.num_data:.3g} here (a minibatch of "
                         f"floor(tau N) >= 1 of the N = {target.num_data} data), got {batch_fraction!r}")
    return size


def parse_axis(text: str) -> tuple[str, tuple[float, ...]]:
    """``NAME=V1,V2,...`` (values) or ``NAME=LOW:HIGH:COUNT`` (COUNT log-spaced values from LOW to HIGH, both
    included, COUNT >= 2) as (name, values).

    Raises:
        ValueError: a malformed spec, naming it and the two accepted forms.
    """
    name, sep, values = text.partition("=")
    name = name.strip()
    form = "NAME=V1,V2,... or NAME=LOW:HIGH:COUNT (COUNT log-spaced values)"
    if not sep or not name.isidentifier() or not values.strip():
        raise ValueError(f"--arm takes {form}, got {text!r}")
    try:
        if ":" in values:
            low, high, count = values.split(":")
            count = integer_at_least(f"the COUNT of --arm {text}", int(count), 2, MAX_ARMS)
            low, high = positive_finite(f"LOW of --arm {text}", float(low)), positive_finite(
                f"HIGH of --arm {text}", float(high))
            points = tuple(float(v) for v in np.geomspace(low, high, count))
        else:
            points = tuple(float(v) for v in values.split(","))
    except ValueError as error:
        if "must be" in str(error):
            raise
        raise ValueError(f"--arm takes {form}, got {text!r}") from None
    if any(not math.isfinite(v) for v in points):
        raise ValueError(f"--arm {name} takes finite numbers, got {text!r}")
    if len(set(points)) != len(points):
        raise ValueError(f"--arm {name} lists a value twice: {text!r}")
    return name, points


def default_axes(sampler, target, base_params) -> dict[str, tuple[float, ...]]:
    """The default grid of this module's docstring for ``sampler`` (a Sampler) on ``target``; ``base_params`` (a
    validated ``sampler.Params``) gives the friction's default."""
    if target.params.get("noise") == "minibatch":
        n = target.num_data
        axes = {"step_size": tuple(10 ** (k / 2) / n for k in range(-5, 6)),
                BATCH_FRACTION: tuple(f for f in DEFAULT_BATCH_FRACTIONS if math.floor(f * n) >= 1)}
    else:
        axes = {"step_size": tuple(10 ** (k / 2) for k in range(-6, 1)), BATCH_FRACTION: (1.0,)}
    if "friction" in sampler.Params.leaf_names:
        default = float(np.max(base_params.friction))
        axes["friction"] = (default, 10 * default)
    return axes


def check_axes(sampler, target, axes: dict, base_params) -> dict[str, tuple[float, ...]]:
    """``axes`` validated: names are ``batch_fraction`` or hyperparameters of ``sampler`` that are numbers in
    ``base_params`` (a validated ``sampler.Params``: a schedule or a vector is not an axis); values are
    numbers; batch fractions give minibatches on ``target``.

    Raises:
        ValueError: naming the axis and what it accepts.
    """
    numeric = {name for name in sampler.Params.leaf_names
               if np.asarray(getattr(base_params, name)).dtype.kind in "iuf"
               and np.ndim(getattr(base_params, name)) == 0}
    for name, values in axes.items():
        if name != BATCH_FRACTION and name not in numeric:
            raise ValueError(f"--arm {name}: sampler {sampler.name!r} has no numeric hyperparameter {name!r}; "
                             f"an axis is one of {', '.join(sorted(numeric | {BATCH_FRACTION}))}")
        if not values:
            raise ValueError(f"--arm {name} needs at least one value")
        if name == BATCH_FRACTION:
            for v in values:
                minibatch_size(target, v)
    size = math.prod(len(v) for v in axes.values())
    if size > MAX_ARMS:
        raise ValueError(f"the grid must hold at most {MAX_ARMS} arms, got {size}")
    return {name: tuple(float(v) for v in values) for name, values in axes.items()}


def grid(axes: dict[str, tuple[float, ...]]) -> list[Arm]:
    """The Cartesian product of ``axes`` (name -> values), the last axis fastest."""
    names = list(axes)
    return [Arm(tuple(zip(names, combo))) for combo in itertools.product(*(axes[n] for n in names))]
