r"""Small Bayesian neural networks (MLPs) on data, after the MILE paper.

The network :math:`h_0 = f`, :math:`h_l = a(h_{l-1} W_l + b_l)` (:math:`l < L`),
:math:`o = h_{L-1} W_L + b_L`, with ReLU (MILE, section 4.1.1) or tanh activation :math:`a`. Its
parameters are one flat vector :math:`x` (each layer's :math:`W_l`, row-major (in, out), then
:math:`b_l`); :meth:`BayesianNeuralNetwork.unflatten` gives the layers back. Likelihoods
(MILE, appendix, "Regression tasks" and "Classification tasks"):

- ``task="regression"`` (default data: scikit-learn's diabetes): a distributional Gaussian
  likelihood whose two outputs are the location and the log-scale,
  :math:`\log p(y \mid o) = -\tfrac12\log 2\pi - o_2 - \tfrac12 (y - o_1)^2 e^{-2 o_2}`;
- ``task="classification"`` (default data: scikit-learn's digits): one output per class,
  :math:`\log p(y \mid o) = o_y - \log\sum_k e^{o_k}`.

Prior :math:`\mathcal N(0, s^2 I)` with ``prior_scale`` :math:`s` (MILE's standard prior: 1).
Defaults follow MILE: two hidden layers of 16 units, ReLU, a 70 % / 10 % / 20 % train / validation /
test split (from ``split_seed``); the likelihood sums over the training split. Features are
standardised with the training split's mean and standard deviation, and so are regression labels
(``label_mean``, ``label_scale`` undo it). The gradient is backpropagation written out in
:meth:`BayesianNeuralNetwork.backpropagate` (no autodiff in the NumPy path; the tests check it
against ``jax.grad``). No analytic truth (``truth`` is None), no exact sampler. Chains start at a
seeded random initialisation (``init_seed``): :math:`W_l \sim \mathcal N(0, g/\text{fan-in})` with
:math:`g = 2` for ReLU (He) and :math:`g = 1` for tanh (LeCun), :math:`b_l = 0`; MILE's
deep-ensemble start (``sgbench.samplers._deep_ensemble``, early stopping on
:meth:`BayesianNeuralNetwork.split_log_likelihood_terms` of the validation split) is what the
``mile`` sampler starts from.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from sgbench import targets
from sgbench.base.arguments import in_interval, integer_at_least, one_of, positive_finite
from sgbench.base.backend import namespace
from sgbench.targets._data import DataTarget
from sgbench.targets.datasets import BUNDLED, load, split_indices, standardise

TASKS = {"regression": "diabetes", "classification": "digits"}  # task -> default data set
ACTIVATIONS = ("relu", "tanh")
INIT_GAIN = {"relu": 2.0, "tanh": 1.0}
SPLITS = ("train", "validation", "test")
REFERENCE_POINTS = 20  # test points whose predictive means a NUTS reference keeps (reference_quantities)
MAX_PARAMETERS = 10**7  # weights and biases: a chain position, its gradient and its moments hold this many numbers


@targets.register("bnn")
class BayesianNeuralNetwork(DataTarget):
    """``task`` in ``TASKS``; ``dataset`` one of ``sgbench.targets.datasets.BUNDLED`` or "file" (default:
    the task's); ``path``, ``label`` (file only, label default "y"); ``hidden`` (units per hidden
    layer, default (16, 16)); ``activation`` in ``ACTIVATIONS`` (default "relu"); ``prior_scale`` > 0
    (default 1); ``train_fraction`` in (0, 1] (0.7), ``validation_fraction`` in
    [0, 1 - train_fraction] (0.1), the test split takes the rest; ``split_seed``, ``init_seed``;
    ``noise`` (default "minibatch") and its ``noise_*``."""

    name = "bnn"

    def __init__(self, task="regression", dataset=None, path=None, label=None, hidden=(16, 16), activation="relu",
                 prior_scale=1.0, train_fraction=0.7, validation_fraction=0.1, split_seed=0, init_seed=0,
                 noise="minibatch", **noise_params):
        one_of("task", task, TASKS)
        dataset = TASKS[task] if dataset is None else dataset
        one_of("dataset", dataset, (*BUNDLED, "file"))
        if not isinstance(hidden, tuple | list) or not all(isinstance(h, numbers.Integral) for h in hidden):
            raise TypeError(f"hidden must be a sequence of integers >= 1 (units per hidden layer), got {hidden!r}")
        hidden = tuple(integer_at_least(f"hidden[{i}]", h, 1) for i, h in enumerate(hidden))
        self.activation = one_of("activation", activation, ACTIVATIONS)
        self.prior_scale = positive_finite("prior_scale", prior_scale)
        train_fraction = in_interval("train_fraction", train_fraction, 0.0, 1.0, low_open=True)
        validation_fraction = in_interval("validation_fraction", validation_fraction, 0.0, 1.0 - train_fraction,
                                        low_open=False)
        split_seed = integer_at_least("split_seed", split_seed, 0)
        init_seed = integer_at_least("init_seed", init_seed, 0)
        raw_features, raw_labels, path, label = load(dataset, path, label)
        self.task, self.dataset = task, dataset

        fractions = dict(train=train_fraction, validation=validation_fraction,
                         test=1.0 - train_fraction - validation_fraction)
        self.split_indices = split_indices(raw_features.shape[0], fractions, split_seed)
        train = self.split_indices["train"]
        if train.size < 1:
            raise ValueError(f"train_fraction={train_fraction} leaves no training data of {raw_features.shape[0]}")
        if task == "classification":
            if not np.all((raw_labels >= 0) & (raw_labels == np.round(raw_labels))):
                raise ValueError(f"labels of dataset {dataset!r} must be integers 0, 1, ... (class numbers) for "
                                 f"task='classification', got values {np.unique(raw_labels)[:10].tolist()}")
            self.num_outputs = int(raw_labels.max()) + 1
            self.label_mean, self.label_scale = 0.0, 1.0
        else:
            self.num_outputs = 2
            self.label_mean = float(raw_labels[train].mean())
            self.label_scale = float(raw_labels[train].std()) or 1.0
        self.splits = {
            name: (standardise(raw_features[index], raw_features[train]),
                   (raw_labels[index] - self.label_mean) / self.label_scale)
            for name, index in self.split_indices.items()
        }
        self.layer_sizes = (raw_features.shape[1], *hidden, self.num_outputs)
        self.layer_shapes = list(zip(self.layer_sizes[:-1], self.layer_sizes[1:]))
        self.dim = sum(n_in * n_out + n_out for n_in, n_out in self.layer_shapes)
        if self.dim > MAX_PARAMETERS:
            raise ValueError(f"hidden={hidden} makes {self.dim:,} parameters (layers {self.layer_sizes}); at most "
                             f"{MAX_PARAMETERS:,}")
        self.truth = None
        features, labels = self.splits["train"]
        self._targets = self._encode(labels)
        super().__init__(features, labels, self.prior_scale**2, noise, **noise_params)
        self._initial = self._random_initialisation(init_seed)
        self.params = dict(task=task, dataset=dataset, path=path, label=label, hidden=hidden,
                           activation=activation, prior_scale=self.prior_scale, train_fraction=train_fraction,
                           validation_fraction=validation_fraction, split_seed=split_seed, init_seed=init_seed,
                           **self.noise_params())

    def unflatten(self, x) -> list:
        """The layers ``[(W_1, b_1), ..., (W_L, b_L)]`` of the flat parameters ``x`` (..., dim);
        ``W_l`` has shape (..., in, out), ``b_l`` (..., out).

        Args:
            x: flat parameters, shape (..., dim).

        Returns:
            list of (W_l, b_l), one pair per layer.

        Raises:
            ValueError: the last axis of ``x`` is not ``dim``.
        """
        if np.shape(x)[-1:] != (self.dim,):
            raise ValueError(f"flat parameters of target 'bnn' must have last axis {self.dim}, got shape {np.shape(x)}")
        lead, layers, start = np.shape(x)[:-1], [], 0
        for n_in, n_out in self.layer_shapes:
            stop = start + n_in * n_out
            layers.append((x[..., start:stop].reshape(lead + (n_in, n_out)), x[..., stop:stop + n_out]))
            start = stop + n_out
        return layers

    def flatten(self, layers) -> np.ndarray:
        """The flat parameters (..., dim) of ``layers`` (the inverse of :meth:`unflatten`).

        Args:
            layers: [(W_l, b_l), ...], W_l of shape (..., in, out), b_l (..., out).

        Returns:
            the flat parameters, shape (..., dim).

        Raises:
            ValueError: a layer's shapes do not match ``layer_shapes``.
        """
        xp = namespace(layers[0][0])
        parts = []
        for (n_in, n_out), (weights, bias) in zip(self.layer_shapes, layers, strict=True):
            if np.shape(weights)[-2:] != (n_in, n_out) or np.shape(bias)[-1:] != (n_out,):
                raise ValueError(f"layer shapes must be {self.layer_shapes} (and biases of the out sizes), got "
                                 f"{np.shape(weights)} and {np.shape(bias)}")
            parts += [weights.reshape(np.shape(weights)[:-2] + (-1,)), bias]
        return xp.concatenate(parts, axis=-1)

    def predict(self, x, features):
        """The network's outputs (n, num_outputs) at parameters ``x`` for standardised ``features``
        (e.g. ``splits["test"][0]``): location and log-scale (regression, in standardised units) or
        class logits.

        Args:
            x: the parameters, shape (dim,).
            features: standardised features, shape (n, p).

        Returns:
            shape (n, num_outputs).
        """
        return self._forward(x, features)[0]

    def _forward(self, x, features):
        """Outputs and the input of every layer."""
        xp = namespace(x)
        layers, inputs, h = self.unflatten(x), [], features
        for depth, (weights, bias) in enumerate(layers):
            inputs.append(h)
            h = h @ weights + bias
            if depth < len(layers) - 1:
                h = xp.maximum(h, 0.0) if self.activation == "relu" else xp.tanh(h)
        return h, inputs

    def _encode(self, labels):
        """Labels as the likelihood reads them: one-hot rows (classification) or the values."""
        return np.eye(self.num_outputs)[labels.astype(int)] if self.task == "classification" else labels

    def _data(self, x, indices):
        return self.rows(self.features, indices, x), self.rows(self._targets, indices, x)

    def log_likelihood_terms(self, x, indices=None):
        """Per-datum log likelihood on the training split: Gaussian with the network's location and log scale
        (regression), or the log softmax of the logits at the label (classification).

        Args:
            x: the parameters, shape (dim,).
            indices: training data indices (an integer array, repeats counted), or None for all of them.

        Returns:
            shape (len(indices),), or (N,) for None.
        """
        return self._log_likelihood(x, *self._data(x, indices))

    def split_log_likelihood_terms(self, x, split: str):
        """Per-datum log-likelihood on the named split (one of ``SPLITS``): the training split's is
        :meth:`log_likelihood_terms`; MILE's deep ensemble stops early on the validation split's.

        Args:
            x: the parameters, shape (dim,).
            split: ``"train"``, ``"validation"`` or ``"test"``.

        Returns:
            shape (n,), n the split's size.

        Raises:
            ValueError: an unknown split.
        """
        features, labels = self.splits[one_of("split", split, SPLITS)]
        return self._log_likelihood(x, self.rows(features, None, x), self.rows(self._encode(labels), None, x))

    def _log_likelihood(self, x, features, y):
        outputs = self._forward(x, features)[0]
        xp = namespace(x)
        if self.task == "regression":
            location, log_scale = outputs[:, 0], outputs[:, 1]
            z = (y - location) * xp.exp(-log_scale)
            return -0.5 * math.log(2 * math.pi) - log_scale - 0.5 * z * z
        top = xp.max(outputs, axis=1, keepdims=True)
        log_normaliser = top[:, 0] + xp.log(xp.sum(xp.exp(outputs - top), axis=1))
        return xp.sum(y * outputs, axis=1) - log_normaliser

    def _output_slope(self, outputs, y):
        r""":math:`\partial \log p(y \mid o) / \partial o`: :math:`(z e^{-o_2}, z^2 - 1)` with
        :math:`z = (y - o_1) e^{-o_2}` (regression); one-hot minus softmax (classification)."""
        xp = namespace(outputs)
        if self.task == "regression":
            inverse_scale = xp.exp(-outputs[:, 1])
            z = (y - outputs[:, 0]) * inverse_scale
            return xp.stack([z * inverse_scale, z * z - 1.0], axis=1)
        top = xp.max(outputs, axis=1, keepdims=True)
        weights = xp.exp(outputs - top)
        return y - weights / xp.sum(weights, axis=1, keepdims=True)

    def backpropagate(self, x, indices=None) -> list:
        r"""Per layer :math:`l`, its input :math:`h_{l-1}` (n, in) and the derivative :math:`\delta_l`
        (n, out) of each datum's log likelihood with respect to its pre-activation:
        :math:`\delta_L = \partial \log p / \partial o`, :math:`\delta_{l-1} = (\delta_l W_l^\top) \odot a'`,
        with :math:`a' = 1[h > 0]` (ReLU) or :math:`1 - h^2` (tanh) at the layer's output :math:`h`.
        The datum's gradient for :math:`W_l` is :math:`h_{l-1} \delta_l^\top`, for :math:`b_l` it is
        :math:`\delta_l`.

        Args:
            x: the parameters, shape (dim,).
            indices: training data indices (repeats counted), or None for all of them.

        Returns:
            list of (input, delta) pairs, one per layer, first layer first.
        """
        features, y = self._data(x, indices)
        outputs, inputs = self._forward(x, features)
        layers = self.unflatten(x)
        delta = self._output_slope(outputs, y)
        pairs = []
        for depth in reversed(range(len(layers))):
            pairs.append((inputs[depth], delta))
            if depth > 0:
                h = inputs[depth]
                slope = (h > 0) if self.activation == "relu" else 1.0 - h * h
                delta = (delta @ layers[depth][0].T) * slope
        return pairs[::-1]

    def grad_log_likelihood(self, x, indices=None):
        """The summed gradient of :meth:`log_likelihood_terms` by backpropagation (:meth:`backpropagate`), in the
        order of the flat parameters.

        Args:
            x: the parameters, shape (dim,).
            indices: training data indices (an integer array, repeats counted), or None for all of them.

        Returns:
            shape (dim,).
        """
        xp = namespace(x)
        parts = []
        for h, delta in self.backpropagate(x, indices):
            parts += [(h.T @ delta).reshape(-1), xp.sum(delta, axis=0)]
        return xp.concatenate(parts)

    def grad_log_likelihood_terms(self, x, indices=None):
        """Per-datum gradients of :meth:`log_likelihood_terms` by backpropagation, in the order of the flat parameters.

        Args:
            x: the parameters, shape (dim,).
            indices: training data indices (an integer array, repeats counted), or None for all of them.

        Returns:
            shape (len(indices), dim), or (N, dim) for None.
        """
        xp = namespace(x)
        parts = []
        for h, delta in self.backpropagate(x, indices):
            parts += [(h[:, :, None] * delta[:, None, :]).reshape(h.shape[0], -1), delta]
        return xp.concatenate(parts, axis=1)

    def _random_initialisation(self, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        gain = INIT_GAIN[self.activation]
        return self.flatten([(rng.normal(0.0, math.sqrt(gain / n_in), (n_in, n_out)), np.zeros(n_out))
                             for n_in, n_out in self.layer_shapes])

    def initial_position(self) -> np.ndarray:
        """The seeded random initialisation (``init_seed``) of the module docstring, a copy.

        Returns:
            float64 array of shape (dim,).
        """
        return self._initial.copy()

    # A NUTS reference of this target starts its chains from a deep ensemble (sgbench.reference.nuts_result), one
    # member per chain, as Izmailov et al. (2021) start HMC: from modes found by optimisation.
    reference_start = "deep_ensemble"

    @property
    def reference_quantities_label(self) -> str:
        """What :meth:`reference_quantities` are, in words (a NUTS reference's header records it)."""
        return (f"predictive means (location outputs, standardised labels) at the first {self.reference_point_count} "
                "test points")

    @property
    def reference_point_count(self) -> int:
        """How many test points :meth:`reference_quantities` predicts: ``REFERENCE_POINTS``, or all there are."""
        return min(REFERENCE_POINTS, self.splits["test"][0].shape[0])

    def reference_quantities(self, draws) -> np.ndarray:
        r"""Per-draw predictive means (the location output :math:`o_1`, standardised label units) at the first
        ``REFERENCE_POINTS`` test points: what a NUTS reference of the regression network checks and keeps, the
        function-space contract of Izmailov et al. (2021, "What are Bayesian neural network posteriors really
        like?"). The weights are not identified (permuting a layer's hidden units leaves the function alone),
        so chains in different copies of a mode disagree on every weight but agree on the predictions.

        Args:
            draws: flat parameters, shape (..., dim).

        Returns:
            float64 array of shape (..., ``reference_point_count``).

        Raises:
            ValueError: a classification network (its reference would keep class probabilities, not defined
                here), or no test points.
        """
        if self.task != "regression":
            raise ValueError("a function-space reference of target 'bnn' is defined for task='regression', got "
                             f"task={self.task!r}")
        if self.reference_point_count == 0:
            raise ValueError("target 'bnn' has no test points (train_fraction + validation_fraction = 1) to keep "
                             "in a reference")
        x = np.asarray(draws, dtype=np.float64)
        layers = self.unflatten(x)
        h = np.broadcast_to(self.splits["test"][0][:self.reference_point_count], x.shape[:-1] + (
            self.reference_point_count, self.layer_sizes[0]))
        for depth, (weights, bias) in enumerate(layers):
            h = np.einsum("...np,...po->...no", h, weights) + bias[..., None, :]
            if depth < len(layers) - 1:
                h = np.maximum(h, 0.0) if self.activation == "relu" else np.tanh(h)
        return h[..., 0]
