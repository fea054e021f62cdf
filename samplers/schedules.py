r"""Step-size schedules: the step size :math:`h_t` a sampler uses at step :math:`t = 0, 1, \dots`
(the counter held in its state), given the base step size :math:`h` of its ``Params``.

- :class:`Constant`: :math:`h_t = h`.
- :class:`PolynomialDecay`: :math:`h_t = h\,(b + t)^{-\gamma}` (Welling & Teh 2011, section 3, with
  :math:`a = h`); the defaults :math:`b = 1`, :math:`\gamma = 0.55` are the schedule
  :math:`\delta_t = \delta (1 + t)^{-0.55}` of the SGLRW paper (section 5 and eq. 120).
  :math:`0.5 < \gamma \le 1` meets the Robbins-Monro conditions; any :math:`0 < \gamma \le 1` is accepted.
- :class:`Cyclical`: :math:`h_t = h\,\{f + \tfrac{1-f}{2}[\cos(\pi\,\mathrm{mod}(t, K) / K) + 1]\}` with
  cycle length :math:`K` steps and final fraction :math:`f` (default 0: Zhang et al. 2020, eq. 1,
  with :math:`t = k - 1`; the PX paper, appendix C, writes the same with its counter starting at 1).
  Each cycle starts at the peak :math:`h` and ends near :math:`f h`; SMILE's cSGLD baseline
  (SMILE paper, appendix on the ResNet-18 runs: peak 5e-5, target 1e-6) is :math:`f = 0.02`.
  :meth:`Cyclical.phase` is :math:`r(t) = \mathrm{mod}(t, K)/K \in [0, 1)`, which cyclical SGLD
  compares with its exploration fraction.

Schedules are frozen, validated dataclasses and JAX pytrees like ``Params`` (a sampler's
``schedule`` field holds one), so a grid of step sizes with one schedule still runs as one
``vmap``. The cycle length is a compile-time constant (an exact integer ``mod`` in any dtype).
:func:`as_schedule` also accepts a name (``"constant"``) or a dict ``{"kind": name, **fields}``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sgbench.base.arguments import check_keywords, in_interval, integer_at_least, one_of, positive_finite
from sgbench.samplers._contract import hyperparameters, static_field


@hyperparameters
class Constant:
    """:math:`h_t = h`."""

    kind = "constant"

    def __call__(self, base, step, xp=np):
        """The step size at step ``step``: ``base``.

        Args:
            base: the base step size h of the sampler's Params.
            step: the step counter t.
            xp: ``numpy`` or ``jax.numpy``.

        Returns:
            ``base``.
        """
        return base


@hyperparameters
class PolynomialDecay:
    r""":math:`h_t = h\,(\mathrm{offset} + t)^{-\mathrm{exponent}}`; ``offset`` > 0, ``exponent`` in (0, 1]."""

    offset: float = 1.0
    exponent: float = 0.55
    kind = "polynomial_decay"

    def __post_init__(self):
        object.__setattr__(self, "offset", positive_finite("offset", self.offset))
        object.__setattr__(self, "exponent", in_interval("exponent", self.exponent, 0.0, 1.0, low_open=True))

    def __call__(self, base, step, xp=np):
        """The step size at step ``step``: ``base * (offset + step) ** -exponent``.

        Args:
            base: the base step size h of the sampler's Params.
            step: the step counter t.
            xp: ``numpy`` or ``jax.numpy``.

        Returns:
            the step size at step t.
        """
        return base * (self.offset + step) ** (-self.exponent)


@hyperparameters
class Cyclical:
    r""":math:`h_t = h\{f + \tfrac{1-f}2[\cos(\pi\,\mathrm{mod}(t, K)/K) + 1]\}`; ``cycle_length``
    :math:`K` >= 1 steps, ``final_fraction`` :math:`f` in [0, 1)."""

    cycle_length: int = static_field()
    final_fraction: float = 0.0
    kind = "cyclical"

    def __post_init__(self):
        object.__setattr__(self, "cycle_length", integer_at_least("cycle_length", self.cycle_length, 1))
        object.__setattr__(self, "final_fraction",
                           in_interval("final_fraction", self.final_fraction, 0.0, 1.0, high_open=True))

    def phase(self, step, xp=np):
        """:math:`r(t) = \\mathrm{mod}(t, K)/K`, the position of step ``t`` inside its cycle.

        Args:
            step: the step counter t.
            xp: ``numpy`` or ``jax.numpy``.

        Returns:
            the phase, in [0, 1).
        """
        return xp.mod(step, self.cycle_length) / self.cycle_length

    def __call__(self, base, step, xp=np):
        """The step size at step ``step`` on the cosine cycle (the class docstring).

        Args:
            base: the base step size h of the sampler's Params.
            step: the step counter t.
            xp: ``numpy`` or ``jax.numpy``.

        Returns:
            the step size at step t, in the dtype of ``base``.
        """
        phase = xp.asarray(self.phase(step, xp), dtype=xp.result_type(base))  # float32 chains stay float32
        return base * (self.final_fraction + (1 - self.final_fraction) / 2 * (xp.cos(np.pi * phase) + 1))


SCHEDULES = {cls.kind: cls for cls in (Constant, PolynomialDecay, Cyclical)}


def as_schedule(value):
    """A schedule from a schedule object, a name in ``SCHEDULES``, or ``{"kind": name, **fields}``.

    Args:
        value: a schedule object, a name in ``SCHEDULES``, or ``{"kind": name, **fields}``.

    Returns:
        the schedule object (``value`` itself if it is one).

    Raises:
        ValueError: an unknown name or kind, a field the schedule does not have, or a field outside its range.
        TypeError: any other ``value``.
    """
    if isinstance(value, tuple(SCHEDULES.values())):
        return value
    if isinstance(value, str):
        value = {"kind": one_of("schedule", value, SCHEDULES)}
    if isinstance(value, dict) and "kind" in value:
        fields = dict(value)
        cls = SCHEDULES[one_of("schedule kind", fields.pop("kind"), SCHEDULES)]
        check_keywords(f"schedule {cls.kind!r}", cls, fields)
        missing = [f.name for f in dataclasses.fields(cls)
                   if f.default is dataclasses.MISSING and f.name not in fields]
        if missing:
            raise ValueError(f"schedule {cls.kind!r} needs {', '.join(missing)}, e.g. "
                             f"{{'kind': {cls.kind!r}, {', '.join(repr(m) + ': ...' for m in missing)}}}")
        return cls(**fields)
    raise TypeError(f"schedule must be one of {sorted(SCHEDULES)}, a dict with a 'kind' key, or a schedule "
                    f"object, got {value!r}")


def describe(schedule) -> dict:
    """``{"kind": name, **fields}``: the JSON form that :func:`as_schedule` reads back.

    Args:
        schedule: a schedule object.

    Returns:
        dict: ``{"kind": name, **fields}``.
    """
    return {"kind": schedule.kind, **{name: getattr(schedule, name) for name in schedule.__dataclass_fields__}}
