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

Ratings (the ``pmf`` target) are triples ``(users, items, ratings)`` instead:

- :func:`matrix_factorisation_data`: a MovieLens-100k-shaped data set drawn from the PMF model of
  the MAMBA paper (appendix C.2.1), discretised to ratings 1 to 5.
- :func:`load_ratings`: a user's MovieLens ``u.data`` file (tab-separated user id, item id, rating,
  timestamp) or a ``.csv`` file with columns ``user``, ``item``, ``rating``.
"""

from __future__ import annotations

import csv
import io
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


# ----------------------------------------------------------------------------- ratings (pmf)

MOVIELENS_100K_RATING_COUNTS = (6110, 11370, 27145, 34174, 21201)
"""How many of the 100,000 MovieLens-100k ratings are 1, 2, 3, 4 and 5 (mean 3.53)."""
MIN_RATINGS_PER_USER = 20
"""Every MovieLens-100k user rated at least 20 movies; the generated data keep that floor."""
USER_ACTIVITY_SHAPE = 0.8
ITEM_POPULARITY_EXPONENT = 1.5
ITEM_POPULARITY_OFFSET = 1 / 32
RATING_SUFFIXES = (".csv",)  # every other name is read as MovieLens u.data
_RANK_BLOCK = 2**23  # keys ranked per block of users by the generator (32 MiB of float32)


def matrix_factorisation_data(num_users: int, num_items: int, num_ratings: int, latent_dim: int, seed: int,
                              alpha: float = 3.0, mu_0: float = 0.0, a0: float = 4.0, b0: float = 5.0):
    r"""A MovieLens-100k-shaped rating data set drawn from the PMF model of the MAMBA paper
    (``seeds/001_cba5cf4c86b7500e.txt``, appendix C.2.1) with :math:`\tau = (\alpha, \mu_0, a_0, b_0)`.
    The paper fits MovieLens; what it leaves open (the observation pattern, and how a Gaussian
    draw becomes a rating 1 to 5) is chosen here to look like MovieLens-100k (943 users, 1682
    items, 10^5 ratings, at least 20 per user, rating frequencies
    ``MOVIELENS_100K_RATING_COUNTS``). Drawn from ``np.random.default_rng(seed)`` in this order:

    1. The model: per :math:`W \in \{U, V\}`, precisions :math:`\Lambda_{W,k} \sim \text{Gamma}(a_0,
       \text{rate } b_0)` (:math:`k = 1..d`), :math:`\mu_W \sim \mathcal N(\mu_0, \Lambda_W^{-1})`,
       rows :math:`W_i \sim \mathcal N(\mu_W, \Lambda_W^{-1})` (U's then V's).
    2. Ratings per user (user activity): ``MIN_RATINGS_PER_USER`` each, plus a multinomial share of
       the remaining ones with weights :math:`\text{Gamma}(0.8, 1)` per user, capped at ``num_items``
       (the excess redrawn among the users below the cap): a skewed activity law (median about 70,
       largest about 800 at the default size; MovieLens-100k: 65 and 737).
    3. Which items (item popularity): a Zipf-Mandelbrot law, item of popularity rank :math:`k`
       (a random permutation of the items) has weight :math:`w \propto (k + q)^{-s}` with
       :math:`s = 1.5`, :math:`q = M/32`; each user's items are drawn from it without replacement
       (successive sampling, drawn as the :math:`n_i` smallest of :math:`E_{ij}/w_j`,
       :math:`E_{ij} \sim \text{Exp}(1)`). At the default size the most rated item has about 600
       ratings and the median item about 23 (MovieLens-100k: 583 and 27).
    4. The ratings: scores :math:`s_{ij} = U_i^\top V_j + \varepsilon_{ij}`,
       :math:`\varepsilon_{ij} \sim \mathcal N(0, \alpha^{-1})` (the model's likelihood), turned into
       ratings 1 to 5 by their rank: the lowest 6.11 % become 1, the next 11.37 % become 2, and so on
       with MovieLens-100k's frequencies (counts rounded from the cumulative fractions). The map
       is monotone, so the ratings keep the model's structure; with the paper's priors the scores
       spread over about :math:`\pm 10`, so rounding them would put almost every rating at 1 or 5.

    Args:
        num_users: the number of users, >= 1.
        num_items: the number of items, >= ``MIN_RATINGS_PER_USER``.
        num_ratings: the number of ratings, in [20 num_users, num_users num_items].
        latent_dim: d, >= 1.
        seed: the NumPy seed.
        alpha: the precision of the rating noise.
        mu_0: the hyper-prior mean of :math:`\mu_U`, :math:`\mu_V`.
        a0: the Gamma shape of the precisions.
        b0: the Gamma rate of the precisions.

    Returns:
        (users, items, ratings, latent): 0-based int64 user and item numbers and float64 ratings in
        {1, ..., 5}, shape (num_ratings,) each, sorted by user then item; ``latent`` is a dict of the
        drawn ``U`` (num_users, d), ``V`` (num_items, d), ``mu_U``, ``lambda_U``, ``mu_V``,
        ``lambda_V`` (d,) and the ``scores`` (num_ratings,).

    Raises:
        ValueError: ``num_ratings`` outside [20 num_users, num_users num_items].
    """
    low, high = MIN_RATINGS_PER_USER * num_users, num_users * num_items
    if not low <= num_ratings <= high:
        raise ValueError(f"num_ratings must be in [{low}, {high}] for {num_users} users and {num_items} items, got "
                         f"{num_ratings}")
    rng = np.random.default_rng(seed)
    latent = {}
    for name, rows in (("U", num_users), ("V", num_items)):
        precision = rng.gamma(a0, 1.0 / b0, latent_dim)
        mean = mu_0 + rng.standard_normal(latent_dim) / np.sqrt(precision)
        latent[name] = mean + rng.standard_normal((rows, latent_dim)) / np.sqrt(precision)
        latent[f"mu_{name}"], latent[f"lambda_{name}"] = mean, precision
    counts = _user_activity(rng, num_users, num_items, num_ratings)
    rank = rng.permutation(num_items)
    log_weight = -ITEM_POPULARITY_EXPONENT * np.log(rank + 1 + ITEM_POPULARITY_OFFSET * num_items)
    items = _successive_sample(rng, counts, log_weight)
    users = np.repeat(np.arange(num_users), counts)
    scores = np.sum(latent["U"][users] * latent["V"][items], axis=1) + rng.standard_normal(num_ratings) / math.sqrt(
        alpha)
    cuts = np.round(np.cumsum(MOVIELENS_100K_RATING_COUNTS) / sum(MOVIELENS_100K_RATING_COUNTS) * num_ratings)
    ratings = np.empty(num_ratings)
    ratings[np.argsort(scores, kind="stable")] = np.repeat(np.arange(1.0, 6.0), np.diff(cuts, prepend=0).astype(int))
    latent["scores"] = scores
    return users, items, ratings, latent


def _user_activity(rng, num_users, num_items, num_ratings):
    """Ratings per user: the floor plus a Gamma-weighted multinomial share, capped at ``num_items``."""
    weights = rng.gamma(USER_ACTIVITY_SHAPE, 1.0, num_users)
    counts = MIN_RATINGS_PER_USER + rng.multinomial(num_ratings - MIN_RATINGS_PER_USER * num_users,
                                                    weights / weights.sum())
    while counts.max() > num_items:
        excess = int(np.maximum(counts - num_items, 0).sum())
        counts = np.minimum(counts, num_items)
        open_weights = np.where(counts < num_items, weights, 0.0)
        counts += rng.multinomial(excess, open_weights / open_weights.sum())
    return counts


def _successive_sample(rng, counts, log_weight):
    """Per user ``i``, ``counts[i]`` distinct items drawn without replacement with probabilities
    proportional to ``exp(log_weight)``: the smallest keys ``E exp(-log_weight)``, E ~ Exp(1), sorted."""
    num_items = log_weight.shape[0]
    inverse_weight = np.exp(-(log_weight - log_weight.max())).astype(np.float32)
    block = max(1, _RANK_BLOCK // num_items)
    chosen = []
    for start in range(0, counts.shape[0], block):
        need = counts[start:start + block]
        keys = rng.standard_exponential((need.shape[0], num_items), dtype=np.float32) * inverse_weight
        most = int(need.max())
        if most < num_items:
            keys_order = np.argpartition(keys, most - 1, axis=1)[:, :most]
        else:
            keys_order = np.broadcast_to(np.arange(num_items), keys.shape)
        ranked = np.take_along_axis(keys_order, np.argsort(np.take_along_axis(keys, keys_order, axis=1), axis=1), 1)
        for row, n in zip(ranked, need):
            chosen.append(np.sort(row[:n]))
    return np.concatenate(chosen).astype(np.int64)


def load_ratings(path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ratings from a user's file: a ``.csv`` file with a header row naming (at least) the columns
    ``user``, ``item`` and ``rating`` (other columns, such as ``timestamp``, are ignored), or any other
    file in MovieLens-100k's ``u.data`` format: one rating a line, user id, item id, rating and
    (optionally) a timestamp, separated by tabs (or other white space), no header. Ids are integers
    >= 0 (MovieLens counts from 1); ratings are numbers in [1, 5] (MovieLens-100k's are 1, 2, 3, 4,
    5); each (user, item) pair occurs at most once; blank lines are skipped.

    Args:
        path: the file (str or pathlib.Path).

    Returns:
        (users, items, ratings): the ids as in the file (int64) and the ratings (float64), shape (n,)
        each, in the file's order.

    Raises:
        TypeError: ``path`` is not a str or Path.
        FileNotFoundError: the file does not exist.
        ValueError: the file is not UTF-8 text, holds no ratings, lacks a column, or has a malformed line, an id
            that is not an integer >= 0, a rating outside [1, 5] or a repeated (user, item) pair (the message names
            the line, counting from 1).
    """
    if not isinstance(path, str | pathlib.Path):
        raise TypeError(f"path must be a str or pathlib.Path naming a ratings file (u.data or .csv), got {path!r}")
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"ratings file {str(path)!r} does not exist")
    source = f"ratings file {str(path)!r}"
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{source} is not UTF-8 text (expected MovieLens u.data or a .csv file)") from None
    if path.suffix.lower() in RATING_SUFFIXES:
        rows = _csv_rating_rows(text, source)
    else:
        rows = _udata_rating_rows(text, source)
    users, items, ratings, first_line = [], [], [], {}
    for line_number, fields in rows:
        user = _rating_id(fields[0], "user id", source, line_number)
        item = _rating_id(fields[1], "item id", source, line_number)
        try:
            rating = float(fields[2])
        except ValueError:
            raise ValueError(f"{source}, line {line_number}: rating must be a number in [1, 5], got "
                             f"{fields[2]!r}") from None
        if not 1.0 <= rating <= 5.0:
            raise ValueError(f"{source}, line {line_number}: rating must be a number in [1, 5], got {fields[2]!r}")
        previous = first_line.setdefault((user, item), line_number)
        if previous != line_number:
            raise ValueError(f"{source}, line {line_number}: user {user} rated item {item} again (first on line "
                             f"{previous}); each (user, item) pair may occur once")
        users.append(user)
        items.append(item)
        ratings.append(rating)
    if not ratings:
        raise ValueError(f"{source} holds no ratings")
    return np.array(users, dtype=np.int64), np.array(items, dtype=np.int64), np.array(ratings, dtype=np.float64)


def _udata_rating_rows(text: str, source: str):
    """(line number, [user, item, rating]) of each non-blank line of u.data text."""
    for line_number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) not in (3, 4):
            raise ValueError(f"{source}, line {line_number}: expected 4 fields separated by tabs (user id, item id, "
                             f"rating, timestamp; MovieLens u.data format), got {len(fields)}: {line!r}")
        yield line_number, fields[:3]


def _csv_rating_rows(text: str, source: str):
    """(line number, [user, item, rating]) of each non-blank data row of CSV text with a header."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise ValueError(f"{source} holds no ratings (an empty .csv file; expected a header row user,item,rating)")
    names = [name.strip() for name in header]
    missing = [name for name in ("user", "item", "rating") if name not in names]
    if missing:
        raise ValueError(f"{source} lacks column(s) {missing} in its header row; it has {names}, and needs "
                         "user, item and rating")
    columns = [names.index(name) for name in ("user", "item", "rating")]
    for row in reader:
        if not any(field.strip() for field in row):
            continue
        if len(row) != len(names):
            raise ValueError(f"{source}, line {reader.line_num}: expected {len(names)} comma-separated fields like "
                             f"the header {names}, got {len(row)}: {','.join(row)!r}")
        yield reader.line_num, [row[c].strip() for c in columns]


def _rating_id(field: str, what: str, source: str, line_number: int) -> int:
    try:
        value = int(field)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"{source}, line {line_number}: {what} must be an integer >= 0, got {field!r}")
    return value
