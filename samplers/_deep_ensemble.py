r"""Deep-ensemble (DE) initialisation of MILE (MILE paper).

MILE, section 3.1: before sampling, :math:`K` networks are fitted by optimisation; their parameters
:math:`\theta^{*(k)}` start the :math:`K` chains (and form a deep ensemble). Appendix, "Optimization &
sampling": ADAM with decoupled weight decay (AdamW), the negative log-likelihood as objective, early
stopping on the validation split (70 / 10 / 20 % train / validation / test). Section 3.2.1: MCLMC's
initial step size is the optimiser's learning rate (``DeepEnsemble.learning_rate``).

Member :math:`k` starts at ``target._random_initialisation(seed * 1_000_003 + k)`` (He / LeCun) and,
each epoch, takes AdamW steps on the mean training negative log likelihood of a batch :math:`B`,

.. math:: L_B(x) = -\frac{1}{|B|} \sum_{i \in B} \log p(y_i \mid f_i, x), \qquad
          x \leftarrow x - \eta \Big(\frac{\hat m}{\sqrt{\hat v} + \varepsilon} + \lambda x\Big)

(:math:`\hat m, \hat v` Adam's bias-corrected moments of :math:`\nabla L_B`, :math:`\beta = (0.9,
0.999)`, :math:`\varepsilon = 10^{-8}`; ``optax.adamw``). ``batch_size=None`` is one full-batch step
per epoch; otherwise an epoch is the :math:`\lfloor N/b \rfloor` batches of a fresh permutation of the
training data (the last :math:`N \bmod b` of it unused), drawn from ``jax.random.fold_in(PRNGKey(seed),
k)``. After each epoch the validation NLL :math:`V = -\frac{1}{N_v}\sum_{i \in \text{val}} \log p(y_i
\mid f_i, x)` is compared with the best so far (initially the start's): a strictly lower :math:`V`
keeps :math:`x`; ``patience`` epochs in a row without one, or ``max_epochs`` epochs, stop the member.
Members are vmapped in one jitted ``lax.while_loop`` over epochs; a stopped member no longer changes.

Defaults (the paper's text gives none): learning rate :math:`10^{-3}`, weight decay :math:`10^{-3}`,
500 epochs at most, patience 10 are those of the configuration shipped with the MILE code
(``experiments/replicate_uci/mclmc.yaml``, which also sets ``step_size_init`` = the learning rate);
that file uses batches of 32, our default is the full batch (our choice: deterministic given the
starts); pass ``batch_size=32`` to follow it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from sgbench.base.arguments import in_interval, integer_at_least, positive_finite
from sgbench.base.float64 import in_float64_mode

LEARNING_RATE = 1e-3
WEIGHT_DECAY = 1e-3
MAX_EPOCHS = 500
PATIENCE = 10
SEED_STRIDE = 1_000_003  # member k of seed s starts from the initialisation seed s * SEED_STRIDE + k


class DeepEnsemble(NamedTuple):
    """The fitted members; ``learning_rate`` is MILE's initial MCLMC step size (section 3.2.1).

    Attributes:
        positions: (num_members, dim) float64, each member's parameters at its best validation NLL.
        learning_rate: the optimiser's constant learning rate.
        epochs: (num_members,) int, the epochs each member ran before it stopped.
        validation_nll: (num_members,) float, the mean validation NLL at ``positions``.
        gradient_evaluations: (num_members,) int, the optimiser's gradient evaluations each member made: ``epochs``
            times the batches per epoch (1 full batch, or floor(N / b) minibatches of ``b``), each
            the gradient of the mean NLL of one batch (the validation NLLs are not differentiated).
    """

    positions: np.ndarray  # (num_members, dim) float64: each member's parameters at its best validation NLL
    learning_rate: float  # the optimiser's (constant, hence final) learning rate
    epochs: np.ndarray  # (num_members,) int: epochs run by each member before it stopped
    validation_nll: np.ndarray  # (num_members,) float: mean validation NLL at ``positions``
    gradient_evaluations: np.ndarray  # (num_members,) int: the optimiser's gradient evaluations of each member


class _Member(NamedTuple):
    x: jax.Array
    opt_state: optax.OptState
    key: jax.Array
    best_x: jax.Array
    best_nll: jax.Array
    wait: jax.Array  # epochs since the last improvement
    epochs: jax.Array
    stopped: jax.Array


@in_float64_mode
def deep_ensemble(target, num_members: int, seed: int = 0, *, learning_rate=LEARNING_RATE,
                  weight_decay=WEIGHT_DECAY, max_epochs=MAX_EPOCHS, patience=PATIENCE,
                  batch_size=None) -> DeepEnsemble:
    """Fit ``num_members`` networks of the data ``target`` by AdamW with early stopping (module
    docstring; MILE section 3.1 and appendix "Optimization & sampling").

    Args:
        target: a data target with a non-empty validation split (``bnn``).
        num_members: the number of members K, >= 1.
        seed: >= 0; seeds the members' starts and their minibatch permutations.
        learning_rate: AdamW's learning rate, > 0.
        weight_decay: AdamW's weight decay, >= 0.
        max_epochs: the most epochs per member, >= 1.
        patience: epochs in a row without improvement before a member stops, >= 1.
        batch_size: the minibatch size, in [1, N], or None for one full-batch step per epoch.

    Returns:
        the DeepEnsemble.

    Raises:
        ValueError: ``target`` has no validation split, or an argument outside its range.
    """
    check_data_target(target)
    num_members = integer_at_least("num_members", num_members, 1)
    seed = integer_at_least("seed", seed, 0)
    learning_rate = positive_finite("learning_rate", learning_rate)
    weight_decay = in_interval("weight_decay", weight_decay, 0.0, math.inf, high_open=True)
    max_epochs = integer_at_least("max_epochs", max_epochs, 1)
    patience = integer_at_least("patience", patience, 1)
    if batch_size is not None:
        batch_size = integer_at_least("batch_size", batch_size, 1)
        if batch_size > target.num_data:
            raise ValueError(f"batch_size must be an integer in [1, {target.num_data}] (the training data) or None "
                             f"(full batch), got {batch_size!r}")
    starts = np.stack([np.asarray(target._random_initialisation(seed * SEED_STRIDE + k), dtype=np.float64)
                       for k in range(num_members)])
    keys = jnp.stack([jax.random.fold_in(jax.random.PRNGKey(seed), k) for k in range(num_members)])
    positions, epochs, nll = fit_members(target, starts, keys, learning_rate, weight_decay,
                                         max_epochs, patience, batch_size)
    epochs = np.asarray(epochs, dtype=np.int64)
    batches = 1 if batch_size is None else target.num_data // batch_size  # adam_steps per epoch (fit_members)
    return DeepEnsemble(np.asarray(positions, dtype=np.float64), learning_rate, epochs,
                        np.asarray(nll, dtype=np.float64), epochs * batches)


def has_validation_split(target) -> bool:
    """Whether ``target`` is a data target with named train / validation / test splits (``bnn``): it
    has ``splits`` and ``split_log_likelihood_terms``, the capability the deep ensemble asks for.

    Args:
        target: a Target.

    Returns:
        bool.
    """
    splits, terms = getattr(target, "splits", None), getattr(target, "split_log_likelihood_terms", None)
    return isinstance(splits, dict) and callable(terms)


def check_data_target(target) -> None:
    """ValueError unless ``target`` is a data target with a non-empty validation split (to stop
    early on) and seeded random starts (``bnn``).

    Args:
        target: a Target.

    Raises:
        ValueError: ``target`` has no splits, no ``split_log_likelihood_terms``, or an empty validation split.
    """
    if not isinstance(getattr(target, "splits", None), dict):
        raise ValueError(f"the deep ensemble needs a data target (with train and validation splits), "
                         f"got target {getattr(target, 'name', type(target).__name__)!r}")
    if not has_validation_split(target):
        raise ValueError(f"the deep ensemble needs a validation split for early stopping; target {target.name!r} "
                         "has none (no split_log_likelihood_terms)")
    if np.shape(target.splits["validation"][1])[0] == 0:
        raise ValueError(f"validation_fraction must be > 0 for early stopping: target {target.name!r} has an empty "
                         "validation split")


def fit_members(target, starts, keys, learning_rate, weight_decay, max_epochs, patience, batch_size):
    """Best positions (K, dim), epochs (K,) and validation NLLs (K,) of members started at ``starts``
    (K, dim) with minibatch keys ``keys`` (K, 2): the procedure of the module docstring, one jitted program.

    Args:
        target: a data target with a validation split.
        starts: the members' starting points, shape (K, dim).
        keys: the members' JAX keys, shape (K, 2).
        learning_rate: AdamW's learning rate.
        weight_decay: AdamW's weight decay.
        max_epochs: the most epochs per member.
        patience: epochs in a row without improvement before a member stops.
        batch_size: the minibatch size, or None for the full batch.

    Returns:
        (positions, epochs, validation NLLs) as JAX arrays.
    """
    optimiser = optax.adamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, weight_decay=weight_decay)
    num_data = target.num_data

    def validation_nll(x):
        return -jnp.mean(target.split_log_likelihood_terms(x, "validation"))

    def adam_step(carry, indices):
        x, opt_state = carry
        grad = jax.grad(lambda y: -jnp.mean(target.log_likelihood_terms(y, indices)))(x)
        updates, opt_state = optimiser.update(grad, opt_state, x)
        return (optax.apply_updates(x, updates), opt_state), None

    def start(x, key):
        nll = validation_nll(x)
        zero = jnp.zeros((), dtype=jnp.int64)
        return _Member(x, optimiser.init(x), key, x, nll, zero, zero, jnp.zeros((), dtype=bool))

    def epoch(member):
        key = member.key
        if batch_size is None:
            (x, opt_state), _ = adam_step((member.x, member.opt_state), None)
        else:
            key, draw = jax.random.split(key)
            num_batches = num_data // batch_size
            batches = jax.random.permutation(draw, num_data)[:num_batches * batch_size].reshape(num_batches,
                                                                                                 batch_size)
            (x, opt_state), _ = jax.lax.scan(adam_step, (member.x, member.opt_state), batches)
        nll = validation_nll(x)
        better = nll < member.best_nll
        wait = jnp.where(better, 0, member.wait + 1)
        epochs = member.epochs + 1
        new = _Member(x, opt_state, key, jnp.where(better, x, member.best_x), jnp.where(better, nll, member.best_nll),
                      wait, epochs, (wait >= patience) | (epochs >= max_epochs))
        return jax.tree.map(lambda old, value: jnp.where(member.stopped, old, value), member, new)

    @jax.jit
    def run(starts, keys):
        members = jax.vmap(start)(starts, keys)
        members = jax.lax.while_loop(lambda m: ~jnp.all(m.stopped), jax.vmap(epoch), members)
        return members.best_x, members.epochs, members.best_nll

    return run(jnp.asarray(starts, dtype=jnp.float64), jnp.asarray(keys))
