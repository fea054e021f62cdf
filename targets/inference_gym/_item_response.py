r"""The per-datum likelihood of Inference Gym's synthetic item response theory model (the minibatch split).

Student :math:`s_i` answers question :math:`q_i` correctly (:math:`y_i = 1`) with probability
:math:`\sigma(\mu + a_{s_i} - d_{q_i})`: :math:`\mu` the mean student ability, :math:`a` the centred abilities,
:math:`d` the question difficulties, priors :math:`\mu \sim N(0.75, 1)`, :math:`a_s, d_q \sim N(0, 1)`, N = 30,012
answers (``inference_gym.targets.item_response_theory``; written here per datum, and tested equal to Inference
Gym's dense log density). :math:`\log p(y_i \mid \cdot) = y_i \ell_i - \log(1 + e^{\ell_i})`,
:math:`\ell_i` the logit.
"""

from __future__ import annotations

import importlib

import jax.numpy as jnp
import jax.scipy.stats as stats
from jax.nn import softplus

from sgbench.targets.inference_gym._structure import Layout


def item_response_likelihood(layout: Layout) -> tuple:
    """The model's prior and per-answer likelihood on the flat position of ``layout``, as
    ``JaxPerDatumTarget.split_likelihood`` takes them.

    Args:
        layout: the model's event layout (leaves ``centered_student_ability``, ``mean_student_ability``,
            ``question_difficulty``; all unconstrained, so no Jacobian).

    Returns:
        (log_prior, log_term, data).
    """
    data = importlib.import_module("inference_gym.dynamic.backend_jax.internal.data").synthetic_item_response_theory()

    def parts(u):
        return dict(zip(layout.names, layout.pieces(u), strict=True))

    def log_prior(u):
        p = parts(u)
        return (jnp.sum(stats.norm.logpdf(p["centered_student_ability"])) + jnp.sum(
            stats.norm.logpdf(p["question_difficulty"])) + stats.norm.logpdf(p["mean_student_ability"], 0.75, 1.0))

    def log_term(u, datum):
        p = parts(u)
        logit = (p["mean_student_ability"] + p["centered_student_ability"][datum["student"]]
                 - p["question_difficulty"][datum["question"]])
        return datum["correct"] * logit - softplus(logit)

    return log_prior, log_term, {
        "student": data["train_student_ids"], "question": data["train_question_ids"],
        "correct": jnp.asarray(data["train_correct"], dtype=jnp.float64)}
