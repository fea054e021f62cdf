r"""Streaming, mergeable moments of :math:`x` and :math:`x^2`, per chain and per dimension.

Welford's update and Chan, Golub & LeVeque's (1979) pairwise merge of (count, mean, M2) for
:math:`x` and for :math:`y = x^2`; :math:`E[x^4] = M_2(y)/n + E[y]^2`. So a run of any length
keeps O(chains x dim) numbers, and chunks or chains combine exactly. The same code runs on NumPy
arrays (reference driver) and inside ``jax.jit`` (optimized driver).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from sgbench.base.backend import namespace


class Moments(NamedTuple):
    """count: (...,); mean, m2 of x and mean_sq, m2_sq of x^2: (..., dim)."""

    count: Any
    mean: Any
    m2: Any
    mean_sq: Any
    m2_sq: Any

    @classmethod
    def empty(cls, batch_shape: tuple, dim: int, xp=np) -> Moments:
        """The moments of no draws: every field 0.

        Args:
            batch_shape: the leading shape (...,), e.g. ``(chains,)``.
            dim: the dimension.
            xp: ``numpy`` or ``jax.numpy``.

        Returns:
            Moments with count of shape ``batch_shape`` and the other fields of shape ``batch_shape + (dim,)``, float64.
        """
        zeros = xp.zeros(batch_shape + (dim,), dtype=xp.float64)
        return cls(xp.zeros(batch_shape, dtype=xp.float64), zeros, zeros, zeros, zeros)

    @classmethod
    def of_draws(cls, x, keep=None) -> Moments:
        """Moments of the draws ``x`` (..., draws, dim) where ``keep`` (..., draws) is true
        (all if None), computed in float64 in two vectorised passes.

        Args:
            x: draws, shape (..., draws, dim), NumPy or JAX.
            keep: which draws count, boolean of shape (..., draws), or None for all.

        Returns:
            Moments with count (...,) and the other fields (..., dim), float64.
        """
        xp = namespace(x)
        x = x.astype(xp.float64)
        keep = xp.ones(x.shape[:-1], dtype=bool) if keep is None else keep
        count = keep.sum(axis=-1).astype(xp.float64)
        weight = (keep / xp.maximum(count, 1)[..., None])[..., None]
        x = xp.where(keep[..., None], x, 0.0)
        mean = (weight * x).sum(axis=-2)
        y = x**2
        mean_sq = (weight * y).sum(axis=-2)
        mask = keep[..., None]
        m2 = xp.where(mask, (x - mean[..., None, :]) ** 2, 0.0).sum(axis=-2)
        m2_sq = xp.where(mask, (y - mean_sq[..., None, :]) ** 2, 0.0).sum(axis=-2)
        return cls(count, mean, m2, mean_sq, m2_sq)

    @classmethod
    def of_shifted_sums(cls, x, keep, shift) -> Moments:
        r"""Moments of the draws ``x`` (..., draws, dim) where ``keep`` (..., draws) is true, from
        one float64 pass of power sums :math:`S_k = \sum u^k` (k = 1..4) of :math:`u = x - c`,
        ``shift`` :math:`c` (..., dim):

        .. math:: \bar x = c + S_1/n,\quad M_2 = S_2 - S_1^2/n,\quad
                  \overline{x^2} = c^2 + (S_2 + 2cS_1)/n,\quad
                  M_2(x^2) = S_4 + 4cS_3 + 4c^2S_2 - (S_2 + 2cS_1)^2/n.

        With :math:`c` near the draws' mean (the optimized driver passes the running mean) the sums
        do not cancel; one pass instead of ``of_draws``' two (measured: float32 sums were slower on
        XLA's CPU backend than float64 ones).

        Args:
            x: draws, shape (..., draws, dim), NumPy or JAX.
            keep: which draws count, boolean of shape (..., draws).
            shift: the shift :math:`c`, shape (..., dim).

        Returns:
            Moments with count (...,) and the other fields (..., dim), float64 (a set with count 0 has mean and
            mean_sq 0).
        """
        xp = namespace(x)
        u = xp.where(keep[..., None], x.astype(xp.float64) - shift[..., None, :], 0.0)
        u2 = u * u
        s1, s2, s3, s4 = (part.sum(axis=-2) for part in (u, u2, u2 * u, u2 * u2))
        count = keep.sum(axis=-1).astype(xp.float64)
        n = xp.maximum(count, 1)[..., None]
        c = xp.asarray(shift, dtype=xp.float64)
        linear = s2 + 2 * c * s1  # sum of x^2 - c^2
        zero = (count == 0)[..., None]
        return cls(count, xp.where(zero, 0.0, c + s1 / n), xp.maximum(s2 - s1**2 / n, 0.0),
                   xp.where(zero, 0.0, c**2 + linear / n),
                   xp.maximum(s4 + 4 * c * s3 + 4 * c**2 * s2 - linear**2 / n, 0.0))

    @classmethod
    def of_samples(cls, x, axis: int = -2) -> Moments:
        """Moments of stored samples, ``axis`` indexing the draws.

        Args:
            x: stored samples, e.g. (chains, draws, dim).
            axis: the axis that indexes the draws.

        Returns:
            Moments over that axis, float64 NumPy arrays.
        """
        return cls.of_draws(np.moveaxis(np.asarray(x, dtype=np.float64), axis, -2))

    @classmethod
    def stack(cls, parts: list[Moments], axis: int = 0) -> Moments:
        """Moments of several sets stacked along a new ``axis`` (NumPy).

        Args:
            parts: Moments of equal shapes.
            axis: where the new axis goes.

        Returns:
            Moments whose fields are the parts' fields stacked.
        """
        return cls(*(np.stack([np.asarray(part[i]) for part in parts], axis=axis) for i in range(len(cls._fields))))

    def update(self, x, keep) -> Moments:
        """Add one draw ``x`` (..., dim) where ``keep`` (...,) is true; other entries unchanged.

        Args:
            x: one draw per entry, shape (..., dim).
            keep: which entries take the draw, boolean of shape (...,).

        Returns:
            the updated Moments (Welford's update).
        """
        xp = namespace(x)
        keep_d = keep[..., None]
        count = self.count + keep
        safe_count = xp.maximum(count, 1)[..., None]
        x = xp.where(keep_d, x.astype(xp.float64), self.mean)
        y = xp.where(keep_d, x**2, self.mean_sq)
        delta, delta_sq = x - self.mean, y - self.mean_sq
        mean = self.mean + delta / safe_count
        mean_sq = self.mean_sq + delta_sq / safe_count
        return Moments(count, mean, self.m2 + delta * (x - mean), mean_sq, self.m2_sq + delta_sq * (y - mean_sq))

    def merge(self, other: Moments) -> Moments:
        """The moments of the union of both sets of draws (Chan et al. 1979).

        Args:
            other: Moments of the other set, of the same shapes (broadcastable).

        Returns:
            the merged Moments.
        """
        xp = namespace(self.mean)
        count = self.count + other.count
        w = xp.where(count > 0, other.count / xp.maximum(count, 1), 0.0)[..., None]
        cross = (self.count * w[..., 0])[..., None]
        delta, delta_sq = other.mean - self.mean, other.mean_sq - self.mean_sq
        return Moments(
            count,
            self.mean + delta * w, self.m2 + other.m2 + delta**2 * cross,
            self.mean_sq + delta_sq * w, self.m2_sq + other.m2_sq + delta_sq**2 * cross,
        )

    @property
    def variance(self):
        """Var[x], the population (1/n) variance of the draws."""
        return self.m2 / np.maximum(self.count, 1)[..., None]

    @property
    def second_moment(self):
        """E[x^2]."""
        return self.mean_sq

    @property
    def fourth_moment(self):
        """E[x^4] = Var[x^2] + E[x^2]^2."""
        return self.m2_sq / np.maximum(self.count, 1)[..., None] + self.mean_sq**2
