"""A sampler author's project, written apart from the suite: samplers in six forms, each correct or subtly wrong,
and the few lines that wrap each for ``sgbench.validate`` (issue 60's held-out set; nothing here imports a private
module of the suite). Each ``CASES`` entry: (name, the wrapped sampler's maker, its hyperparameters, what a right
verdict is: "correct" (not FAILED) or "wrong" (not PASSED), what is wrong, and the targets).
"""

import math

import jax
import jax.numpy as jnp
import torch

# --- the author's samplers, as they wrote them -------------------------------------------------------------------


def sgld_jax(key, x, grad, step_size, temperature=1.0):
    return x + step_size * grad(x) + jnp.sqrt(2 * step_size * temperature) * jax.random.normal(key, x.shape, x.dtype)


def sgld_jax_noise_115(key, x, grad, step_size):  # the noise variance 1.15 times the right one
    return x + step_size * grad(x) + jnp.sqrt(2.3 * step_size) * jax.random.normal(key, x.shape, x.dtype)


def sghmc_jax(key, state, grad, step_size, friction=1.0):  # Chen et al. 2014 eq. 15, v in position units
    x, v = state
    v = (1 - friction * step_size) * v + step_size * grad(x) \
        + jnp.sqrt(2 * friction * step_size) * jax.random.normal(key, x.shape, x.dtype) * jnp.sqrt(step_size)
    return (x + v, v)


def sghmc_jax_noise_120(key, state, grad, step_size, friction=1.0):  # the noise variance 1.2 times the right one
    x, v = state
    v = (1 - friction * step_size) * v + step_size * grad(x) \
        + jnp.sqrt(2.4 * friction * step_size) * jax.random.normal(key, x.shape, x.dtype) * jnp.sqrt(step_size)
    return (x + v, v)


def sgld_optax(step_size, temperature=1.0):
    def init(x):
        return ()

    def update(gradient, state, x, key):  # gradient of the loss -log p, optax's convention
        noise = jnp.sqrt(2 * step_size * temperature) * jax.random.normal(key, x.shape, x.dtype)
        return -step_size * gradient + noise, state

    return init, update


def sgld_optax_drift_115(step_size):  # the drift 1.15 times too long: temperature 1/1.15
    def update(gradient, state, x, key):
        return -1.15 * step_size * gradient + jnp.sqrt(2 * step_size) * jax.random.normal(key, x.shape, x.dtype), state

    return (lambda x: ()), update


class Algorithm(tuple):  # blackjax's SamplingAlgorithm is a NamedTuple(init, step)
    @property
    def init(self):
        return self[0]

    @property
    def step(self):
        return self[1]


def my_blackjax_sgld(grad_estimator):
    def step(rng_key, position, minibatch, step_size, temperature=1.0):
        noise = jax.random.normal(rng_key, position.shape, position.dtype)
        drift = step_size * grad_estimator(position, minibatch)
        return position + drift + jnp.sqrt(2 * step_size * temperature) * noise

    return Algorithm((lambda position: position, step))


def my_blackjax_sgld_temperature_in_drift(grad_estimator):  # divides the drift by T too: samples p^(1/T^2)
    def step(rng_key, position, minibatch, step_size, temperature=1.0):
        noise = jax.random.normal(rng_key, position.shape, position.dtype)
        return position + step_size / temperature * grad_estimator(position, minibatch) \
            + jnp.sqrt(2 * step_size * temperature) * noise

    return Algorithm((lambda position: position, step))


class SGLDOptimizer(torch.optim.Optimizer):
    def __init__(self, params, lr, temperature=1.0):
        super().__init__(params, {"lr": lr, "temperature": temperature})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                noise = torch.randn_like(p) * math.sqrt(2 * group["lr"] * group["temperature"])
                p.add_(-group["lr"] * p.grad + noise)


class SGHMCOptimizer(torch.optim.Optimizer):  # Chen et al. 2014, momentum buffer in position units
    def __init__(self, params, lr, friction=1.0):
        super().__init__(params, {"lr": lr, "friction": friction})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            h, a = group["lr"], group["friction"]
            for p in group["params"]:
                v = self.state[p].setdefault("v", torch.zeros_like(p))
                v.mul_(1 - a * h).add_(-h * p.grad + math.sqrt(2 * a * h) * math.sqrt(h) * torch.randn_like(p))
                p.add_(v)


class SGLDWeightDecay(SGLDOptimizer):  # torch's weight decay left on: an extra Gaussian prior, another posterior
    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                p.add_(-group["lr"] * (p.grad + 0.2 * p) + torch.randn_like(p) * math.sqrt(2 * group["lr"]))


class SGLDGlobalNorm(SGLDOptimizer):  # a gradient clipped by the norm of the whole tensor: couples the chains
    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad * min(1.0, 100.0 / (float(p.grad.norm()) + 1e-12))
                p.add_(-group["lr"] * g + torch.randn_like(p) * math.sqrt(2 * group["lr"]))


def sgld_torch(generator, x, grad, step_size):
    return x + step_size * grad(x) + math.sqrt(2 * step_size) * torch.randn(x.shape, generator=generator, dtype=x.dtype)


def sgld_torch_gradient_scaled(generator, x, grad, step_size):  # 0.9 of the gradient: the posterior widened
    return x + 0.9 * step_size * grad(x) + math.sqrt(2 * step_size) * torch.randn(x.shape, generator=generator,
                                                                                  dtype=x.dtype)


def sgld_torch_stateful(generator, state, grad, step_size):  # a state of its own: (x, last gradient)
    x, _ = state
    g = grad(x)
    return (x + step_size * g + math.sqrt(2 * step_size) * torch.randn(x.shape, generator=generator, dtype=x.dtype),
            g)


class Transform:
    def __init__(self, init, update):
        self.init, self.update = init, update


def my_posteriors_sgld(log_posterior, lr, temperature=1.0):
    def init(params):
        return {"params": params}

    def update(state, batch):
        grad = torch.func.grad(lambda p: log_posterior(p, batch)[0])(state["params"])
        noise = torch.randn_like(state["params"]) * math.sqrt(2 * lr * temperature)
        return {"params": state["params"] + lr * grad + noise}, None

    return Transform(init, update)


def my_posteriors_sgld_noise_107(log_posterior, lr):  # the noise 1.07 times too large (variance 1.145)
    def update(state, batch):
        grad = torch.func.grad(lambda p: log_posterior(p, batch)[0])(state["params"])
        return {"params": state["params"] + lr * grad + torch.randn_like(state["params"]) * math.sqrt(2 * lr) * 1.07}, \
            None

    return Transform(lambda params: {"params": params}, update)
