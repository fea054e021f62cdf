"""Data sets of the data targets: bundled with scikit-learn, generated from a seed, or a user's file.

Every loader returns ``(features, labels)``: float64 arrays of shapes (n, p) and (n,), checked to
hold at least one row and one feature column of finite numbers.

- :func:`bundled`: breast cancer (569 x 30, labels 0/1), diabetes (442 x 10, real labels; the
  unscaled features), digits (1797 x 64, labels 0-9). They ship inside scikit-learn: no network.
- :func:`linear_regression_data`, :func:`logistic_regression_data`: the simulated data of the
  SGLRW paper (section 5.2) and of the MAMBA paper (appendix C.1).
- :func:`load_file`: a ``.csv`` file with a header row, one column of labels (named by ``label``)
  and numeric feature columns; or a ``.npz`` file with a 2-d array ``X`` and a 1-d array of labels
  (named by ``label``).
- :func:`standardise` and :func:`split_indices`: the preprocessing the targets share.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np

from base.arguments import one_of

BUNDLED = ("breast_cancer", "diabetes", "digits")
FILE_SUFFIXES = (".csv", ".npz")


def bundled(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The data set ``name`` (one of ``BUNDLED``) shipped with scikit-learn.

    Args:
        name: one of ``BUNDLED``.

    Returns:
        (features, labels): float64 arrays of shapes (n, p) and (n,).

    Raises:
        ValueError: an unknown name.
    """
    one_of("dataset", name, BUNDLED)
    from sklearn import datasets  # imported here: target discovery should not pay for scikit-learn

    if name == "breast_cancer":
        data = datasets.load_breast_cancer()
    elif name == "diabetes":
        data = datasets.load_diabetes(scaled=False)
    else:
        data = datasets.load_digits()
    return checked(data.data, data.target, f"scikit-learn's {name} data")


def load(dataset: str, path=None, label=None):
    """``(features, labels, path, label)`` of the bundled data set ``dataset``, or of the user's
    file ``path`` (label column ``label``, default "y") when ``dataset == "file"``; ``path`` and
    ``label`` come back as given to a target's parameters (str, or None for bundled data).

    Args:
        dataset: one of ``BUNDLED``, or ``"file"``.
        path: the file (``dataset="file"`` only).
        label: the name of its labels (``dataset="file"`` only; default ``"y"``).

    Returns:
        (features, labels, path, label).

    Raises:
        ValueError: ``path`` or ``label`` with bundled data, no ``path`` with ``"file"``, or a file that
            :func:`load_file` rejects.
        TypeError: a ``path`` or ``label`` of the wrong type.
    """
    if dataset != "file":
        if path is not None or label is not None:
            raise ValueError(f"path and label are only accepted with dataset='file', got dataset={dataset!r}")
        return (*bundled(dataset), None, None)
    if path is None:
        raise ValueError("dataset='file' needs path, a .csv or .npz file")
    label = "y" if label is None else label
    return (*load_file(path, label), str(path), label)


def linear_regression_data(num_data: int, dim: int, sigma2: float, seed: int):
    r"""Eq. (19) of the SGLRW paper (``seeds/002_f49e4b1a9ef6e505.txt``, section 5.2):
    :math:`y = X\theta^* + \varepsilon`, :math:`\varepsilon \sim \mathcal N(0, \sigma^2 I)`,
    :math:`\theta^* \sim \mathcal N(0, I)`. The paper does not state the law of the design
    matrix; here its entries are independent standard normal. Drawn in the order X, theta*, eps
    from ``np.random.default_rng(seed)``; returns ``(X, y, theta_star)``.

    Args:
        num_data: the number of data.
        dim: the dimension of theta*.
        sigma2: the noise variance.
        seed: the NumPy seed.

    Returns:
        (X, y, theta_star): shapes (num_data, dim), (num_data,) and (dim,).
    """
    rng = np.random.default_rng(seed)
    features = rng.standard_normal((num_data, dim))
    theta = rng.standard_normal(dim)
    labels = features @ theta + math.sqrt(sigma2) * rng.standard_normal(num_data)
    return features, labels, theta


def logistic_regression_data(num_data: int, dim: int, seed: int):
    r"""The simulated logistic-regression data of the MAMBA paper (``seeds/001_cba5cf4c86b7500e.txt``,
    appendix C.1): :math:`y_i \sim \text{Bernoulli}(1/(1 + e^{-\theta^{*\top} x_i}))`. The paper
    does not state the laws of the covariates and of :math:`\theta^*`; here
    :math:`x_i \sim \mathcal N(0, I_d)` and :math:`\theta^* \sim \mathcal N(0, I_d)`. Drawn in the
    order X, theta*, uniforms from ``np.random.default_rng(seed)``; returns ``(X, y, theta_star)``.

    Args:
        num_data: the number of data.
        dim: the dimension of theta*.
        seed: the NumPy seed.

    Returns:
        (X, y, theta_star): shapes (num_data, dim), (num_data,) (labels 0 or 1) and (dim,).
    """
    rng = np.random.default_rng(seed)
    features = rng.standard_normal((num_data, dim))
    theta = rng.standard_normal(dim)
    probability = 0.5 * (1 + np.tanh(0.5 * features @ theta))
    labels = (rng.random(num_data) < probability).astype(np.float64)
    return features, labels, theta


def load_file(path, label: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """Features and labels from a user's ``.csv`` (header row; ``label`` names the label column,
    every other column is a feature) or ``.npz`` (arrays ``X`` and ``label``) file.

    Args:
        path: a ``.csv`` or ``.npz`` file (str or pathlib.Path).
        label: the name of the label column (csv) or array (npz).

    Returns:
        (features, labels): float64 arrays of shapes (n, p) and (n,).

    Raises:
        TypeError: ``path`` is not a str or Path, or ``label`` is not a non-empty string.
        ValueError: another suffix, an unreadable file, a missing or non-numeric column or array, or data that
            :func:`checked` rejects.
    """
    if not isinstance(path, str | pathlib.Path):
        raise TypeError(f"path must be a str or pathlib.Path naming a .csv or .npz file, got {path!r}")
    if not isinstance(label, str) or not label:
        raise TypeError(f"label must be a non-empty string naming the labels in the file, got {label!r}")
    path = pathlib.Path(path)
    if path.suffix.lower() not in FILE_SUFFIXES:
        raise ValueError(f"path must name a .csv or .npz file, got {str(path)!r}")
    if not path.is_file():
        raise FileNotFoundError(f"data file {str(path)!r} does not exist")
    if path.suffix.lower() == ".csv":
        return _load_csv(path, label)
    return _load_npz(path, label)


def _load_csv(path: pathlib.Path, label: str):
    import pandas as pd  # imported here: target discovery should not pay for pandas

    try:
        frame = pd.read_csv(path)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as error:
        raise ValueError(f"data file {str(path)!r} is not a readable CSV file with a header row: {error}") from None
    columns = [str(c) for c in frame.columns]
    if label not in columns:
        raise ValueError(f"data file {str(path)!r} has no label column {label!r}; its columns are {columns}")
    for column in frame.columns:
        try:
            frame[column] = pd.to_numeric(frame[column])
        except (TypeError, ValueError) as error:
            raise ValueError(f"data file {str(path)!r}: column {str(column)!r} is not numeric ({error})") from None
    features = frame.drop(columns=[c for c in frame.columns if str(c) == label]).to_numpy(dtype=np.float64)
    return checked(features, frame[label].to_numpy(dtype=np.float64), f"data file {str(path)!r}")


def _load_npz(path: pathlib.Path, label: str):
    unreadable = ValueError(f"data file {str(path)!r} is not a readable .npz archive of numeric arrays (numpy.savez "
                            "of features and labels; object arrays are refused: loading them can run code)")
    try:  # numpy's own messages suggest allow_pickle, which would run code from the file: not repeated
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        raise unreadable from None
    with archive:
        missing = [name for name in ("X", label) if name not in archive.files]
        if missing:
            raise ValueError(f"data file {str(path)!r} lacks array(s) {missing}; it has {sorted(archive.files)}, "
                             f"and needs 'X' (features) and {label!r} (labels)")
        try:
            features, labels = archive["X"], archive[label]
        except (OSError, ValueError):
            raise unreadable from None
    return checked(features, labels, f"data file {str(path)!r}")


def checked(features, labels, source: str) -> tuple[np.ndarray, np.ndarray]:
    """``features`` (n, p) and ``labels`` (n,) as float64, or ValueError naming ``source`` and the
    problem: not numeric, wrong shapes, no rows or columns, NaN or infinite values.

    Args:
        features: array-like, shape (n, p).
        labels: array-like, shape (n,).
        source: where the data come from, for the messages.

    Returns:
        (features, labels): float64 arrays of shapes (n, p) and (n,).

    Raises:
        ValueError: the problem, named.
    """
    arrays = []
    for what, value, ndim in (("features", features, 2), ("labels", labels, 1)):
        value = np.asarray(value)
        if not (np.issubdtype(value.dtype, np.number) or value.dtype == bool):
            raise ValueError(f"{source}: {what} must be numeric, got dtype {value.dtype}")
        if value.ndim != ndim:
            raise ValueError(f"{source}: {what} must be a {ndim}-d array, got shape {value.shape}")
        arrays.append(value.astype(np.float64))
    features, labels = arrays
    if features.shape[0] != labels.shape[0]:
        raise ValueError(f"{source}: {features.shape[0]} rows of features but {labels.shape[0]} labels")
    if features.shape[0] < 1 or features.shape[1] < 1:
        raise ValueError(f"{source}: needs at least one row and one feature column, got features of shape "
                         f"{features.shape}")
    for what, value in (("features", features), ("labels", labels)):
        bad_rows = np.flatnonzero(~np.all(np.isfinite(value.reshape(value.shape[0], -1)), axis=1))
        if bad_rows.size:
            raise ValueError(f"{source}: {what} hold NaN or infinite values (rows {bad_rows[:5].tolist()}"
                             f"{' ...' if bad_rows.size > 5 else ''}, counting from 0)")
    return features, labels


def standardise(values: np.ndarray, reference: np.ndarray | None = None) -> np.ndarray:
    """``(values - mean) / std`` per column, with the mean and standard deviation of ``reference``
    (default: ``values``; the targets pass their training split); constant columns are only centred.

    Args:
        values: shape (n, p).
        reference: shape (m, p), whose column means and standard deviations are used (None: ``values``).

    Returns:
        shape (n, p).
    """
    reference = values if reference is None else reference
    mean, std = reference.mean(axis=0), reference.std(axis=0)
    return (values - mean) / np.where(std > 0, std, 1.0)


def split_indices(num_data: int, fractions: dict[str, float], seed: int) -> dict[str, np.ndarray]:
    """Disjoint sorted index sets covering ``range(num_data)``, in the order of ``fractions`` (which
    sum to 1): a permutation from ``np.random.default_rng(seed)`` cut at ``round(c * num_data)`` for
    the cumulative fractions ``c``.

    Args:
        num_data: N.
        fractions: dict from split name to fraction, in order, summing to 1.
        seed: the NumPy seed of the permutation.

    Returns:
        dict from split name to a sorted integer array of indices.
    """
    order = np.random.default_rng(seed).permutation(num_data)
    cumulative = np.cumsum(list(fractions.values()))[:-1]
    cuts = [0, *(min(num_data, round(c * num_data)) for c in cumulative), num_data]
    return {name: np.sort(order[a:b]) for name, a, b in zip(fractions, cuts[:-1], cuts[1:])}
