"""The step's oracle for torch code: tensors of the suite's float64 arrays and back, and a log density that torch
differentiates (``torch.autograd`` or ``torch.func``) whose value and gradient are the oracle's, from one oracle
evaluation. Used by the posteriors adapter and the torch wrappers (``sgbench.bench.wrappers``)."""

from __future__ import annotations

import numpy as np
import torch


class OracleLogDensity(torch.autograd.Function):
    """``scale`` times the oracle's log density at ``position`` (summed over leading axes) and, for
    torch's backward pass, ``scale`` times its gradient: one oracle evaluation, in float64."""

    @staticmethod
    def forward(position, oracle, scale):
        value, gradient = oracle.value_and_grad(position.detach().numpy())
        value = torch.as_tensor(np.sum(value) * scale, dtype=torch.float64)
        return value, torch.as_tensor(np.asarray(gradient, dtype=np.float64) * scale)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_non_differentiable(output[1])
        ctx.save_for_backward(output[1])

    @staticmethod
    def backward(ctx, value_cotangent, gradient_cotangent):
        (gradient,) = ctx.saved_tensors
        return value_cotangent * gradient, None, None


def log_posterior(params, oracle, scale):
    """posteriors' ``log_posterior(params, batch)``: the batch is the step's oracle; no auxiliary output."""
    value, _ = OracleLogDensity.apply(params, oracle, scale)
    return value, torch.empty(0)


def as_tensor(x):
    return torch.from_numpy(np.array(x, dtype=np.float64))


def as_array(x):
    return x.detach().numpy().copy()
