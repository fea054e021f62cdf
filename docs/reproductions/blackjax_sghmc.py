"""blackjax 1.7.1 SGHMC on N(0, 1), blackjax's public API only: the momentum refresh ignores the temperature,
and the L steps of one call share one minibatch. Prints each chain ensemble's variance against the exact one."""

import blackjax
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
CHAINS, CALLS, BURN = 4096, 3000, 500


def variance(temperature, noise_sd):
    # the "minibatch" is a draw of the gradient noise: grad log p(x) = -x, estimated as -x + noise
    sghmc = blackjax.sghmc(lambda x, noise: -x + noise, num_integration_steps=10, alpha=1.0)

    def chain(key):
        def one_call(x, key):
            noise_key, step_key = jax.random.split(key)
            minibatch = noise_sd * jax.random.normal(noise_key)
            x = sghmc.step(step_key, x, minibatch, 0.1, temperature)
            return x, x

        return jax.lax.scan(one_call, sghmc.init(jnp.asarray(0.0)), jax.random.split(key, CALLS))[1][BURN:]

    draws = jax.vmap(chain)(jax.random.split(jax.random.key(0), CHAINS))
    return float(jnp.var(draws))


for temperature, noise_sd in ((0.5, 0.0), (1.0, 0.0), (1.0, 2.0**0.5)):
    print(f"T = {temperature}, gradient-noise sd {noise_sd:.2f}: variance {variance(temperature, noise_sd):.3f} "
          f"(target {temperature})")
