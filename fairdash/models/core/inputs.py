"""The estimators' side of scikit-learn's input contract, in one place: ``fit``'s ``X`` and ``y`` through
scikit-learn's ``validate_data`` (which records ``n_features_in_`` and, for a data frame,
``feature_names_in_``), any two labels encoded as 0/1 with ``classes_`` as given (the second of the sorted
labels is the positive one, as in ``LogisticRegression``), and ``predict``'s ``X`` checked the same way
(finite numbers, the fitted number of columns). scikit-learn's ``ValueError``\\ s come out as one plain
:class:`~fairdash.errors.FairDashError` (itself a ``ValueError``). Also the checks of FairDash's own arrays, with
messages a person can act on: the group codes of ``s`` and the strata (:func:`check_s`, :func:`check_strata`)
and a solver's matrix (:func:`check_X`); "not fitted" is scikit-learn's ``check_is_fitted``. The one home of input
validation (issue 28: the former ``validation`` module merged here).
"""
from __future__ import annotations

import numpy as np

from ...errors import FairDashError
from ...targeting.decision import row_draws


class BinaryClassifierMixin:
    """Tells scikit-learn (its tags) that the classifier takes two classes only. Listed before
    ``ClassifierMixin`` (which sets fresh classifier tags): ``class M(BinaryClassifierMixin, ClassifierMixin,
    BaseEstimator)``."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class InputTypeError(FairDashError, TypeError):
    """A value of the wrong type in the input (e.g. a dict in the feature matrix): a FairDashError for the
    dashboard and command line, and the ``TypeError`` scikit-learn's conventions expect."""


def _plain(error: Exception) -> FairDashError:
    text = str(error)
    if isinstance(error, TypeError):
        return InputTypeError(text.splitlines()[0] if text else "The input holds a value of the wrong type.")
    if "Reshape your data" in text:
        return FairDashError(text.splitlines()[0] + " " + text.splitlines()[-1].strip())
    if "NaN" in text or "infinity" in text:
        return FairDashError("The feature matrix holds missing or infinite values; preprocess it first.")
    if "Complex data not supported" in text:
        return FairDashError("Complex data not supported: the feature matrix must hold real numbers.")
    return FairDashError(text.splitlines()[0] if text else type(error).__name__)


def _numeric_X(X):
    """Sparse input is refused in the words scikit-learn's checks expect (the models need a dense matrix)."""
    import scipy.sparse

    if scipy.sparse.issparse(X):
        raise FairDashError("A sparse feature matrix is not supported; pass a dense array (e.g. X.toarray()).")


def fit_inputs(est, X, y):
    """``fit``'s ``X`` (float64, finite, 2-D, at least one row) and ``y`` (exactly two label values, any
    type) checked; sets ``est.classes_`` and ``est.n_features_in_``. Returns ``(X, y01)`` with ``y01`` the
    labels as 0/1 (``int64``: 1 for ``classes_[1]``)."""
    from sklearn.utils.multiclass import check_classification_targets, type_of_target
    from sklearn.utils.validation import validate_data

    _numeric_X(X)
    if y is None:
        raise FairDashError(f"{type(est).__name__} requires y to be passed, but the target y is None.")
    try:
        X, y = validate_data(est, X, y, dtype=np.float64, y_numeric=False)
        check_classification_targets(y)
    except (ValueError, TypeError) as e:
        raise _plain(e) from None
    classes, y01 = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise FairDashError("The training labels hold one class only; a classifier needs two (e.g. 0 and 1).")
    if len(classes) > 2 or type_of_target(y) != "binary":
        raise FairDashError(f"Only binary classification is supported. {type(est).__name__} needs labels y with "
                            f"exactly two values, not {len(classes)}.")
    est.classes_ = classes
    return X, y01.astype(np.int64).reshape(-1)


def predict_X(est, X) -> np.ndarray:
    """``predict``'s ``X``: float64, finite, 2-D, with the number of columns ``est`` was fitted on."""
    from sklearn.utils.validation import validate_data

    _numeric_X(X)
    try:
        return validate_data(est, X, dtype=np.float64, reset=False)
    except (ValueError, TypeError) as e:
        raise _plain(e) from None


def labels(est, positive: np.ndarray) -> np.ndarray:
    """Boolean decisions as ``est.classes_`` labels (``True``: the positive label ``classes_[1]``)."""
    return est.classes_[np.asarray(positive, dtype=bool).astype(np.int64)]


def randomised_labels(est, p1, seed, X=None) -> np.ndarray:
    """A randomised classifier's decisions: each row positive with its probability ``p1``. With the rows' features
    ``X``, each row's draw comes from the row itself (``targeting.decision.row_draws``), so the same row gets the
    same decision in any order, batch or file; without, as fairlearn's ``predict(random_state=seed)``, per position
    in the batch
    from ``seed`` (scikit-learn's ``check_random_state``: the baselines that reproduce fairlearn, and model files
    written before draws were per row)."""
    from sklearn.utils import check_random_state

    p1 = np.asarray(p1)
    u = row_draws(X, seed) if X is not None else check_random_state(seed).rand(len(p1))
    return labels(est, p1 >= u)




# --------------------------------------------------------------------------------------------------
# FairDash's own arrays: s, strata, a solver's matrix
# --------------------------------------------------------------------------------------------------
def check_X(X) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise FairDashError("The feature matrix must be two-dimensional (rows x features).")
    if not np.all(np.isfinite(X)):
        raise FairDashError("The feature matrix holds missing or infinite values; preprocess it first.")
    return X


def check_s(s, n: int, model: str, *, required: bool = True, min_groups: int = 2) -> np.ndarray:
    """The one check of ``s``, every model's: one whole-number group code >= 0 per training row (integers,
    booleans, or floats that hold whole numbers), as ``int64``. ``None``: refused where ``required`` (a model
    that needs the groups), else every row in one group. At least ``min_groups`` groups where ``required``."""
    if s is None:
        if required:
            raise FairDashError(f"{model} needs the sensitive attribute s at fit: fit(X, y, s) with every training "
                                "row's group code (0, 1, ...).")
        return np.zeros(n, dtype=np.int64)
    s = np.asarray(s)
    if s.ndim > 1 and s.size == n:
        s = s.ravel()
    if s.ndim != 1 or s.shape[0] != n:
        raise FairDashError(f"s has {s.size} values but X has {n} rows; give one group code per row.")
    if s.dtype.kind not in "iub":
        whole = s.dtype.kind == "f" and np.all(np.isfinite(s)) and np.all(s == np.round(s))
        if not whole:
            raise FairDashError("s must hold whole-number group codes 0, 1, ...; code the groups as numbers first.")
    s = s.astype(np.int64)
    if s.size and s.min() < 0:
        raise FairDashError("s must hold whole-number group codes 0, 1, ...; code the groups as numbers first.")
    if required and np.unique(s).size < min_groups:
        raise FairDashError(f"{model} needs at least two groups in s; the training rows hold only one.")
    return s


def check_strata(strata, n: int):
    """The strata of a conditional target: one whole-number code per row (``None``: none), as ``int64``."""
    if strata is None:
        return None
    strata = np.asarray(strata)
    if strata.ndim != 1 or strata.shape[0] != n:
        raise FairDashError("The strata must be one value per row of the feature matrix.")
    return strata.astype(np.int64)
