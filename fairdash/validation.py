"""Checks of estimator input in one place, with messages a person can act on: the feature matrix, the
0/1 labels, the group codes of ``s`` and the strata. Every model of ``fairdash.models`` validates its
``fit`` arguments here; "not fitted" is scikit-learn's ``check_is_fitted`` (``NotFittedError``)."""
from __future__ import annotations

import numpy as np

from .errors import FairDashError


def check_X(X) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise FairDashError("The feature matrix must be two-dimensional (rows x features).")
    if not np.all(np.isfinite(X)):
        raise FairDashError("The feature matrix holds missing or infinite values; preprocess it first.")
    return X


def check_predict_X(X, n_features: int) -> np.ndarray:
    """``predict``'s feature matrix: the checks of ``fit`` (2-D, every value finite) plus the number of
    columns the model was trained on. Every model calls it before scoring, so a missing value is refused
    at prediction as at training instead of being scored as some class."""
    X = check_X(X)
    if X.shape[1] != int(n_features):
        raise FairDashError(f"The model was trained on {int(n_features)} feature columns, not {X.shape[1]}.")
    return X


def check_Xy(X, y) -> tuple[np.ndarray, np.ndarray]:
    X = check_X(X)
    y = np.asarray(y).ravel()
    if len(y) != len(X):
        raise FairDashError(f"X has {len(X)} rows but y has {len(y)} labels.")
    if not np.isin(y, (0, 1)).all():
        raise FairDashError("The labels y must be 0 or 1.")
    y = y.astype(np.int64)
    if len(np.unique(y)) < 2:
        raise FairDashError("The training labels hold only one class; a classifier needs both 0 and 1.")
    return X, y


def check_s(s, n: int, model: str) -> np.ndarray:
    if s is None:
        raise FairDashError(f"{model} needs the sensitive attribute s at training time.")
    s = np.asarray(s).ravel()
    if len(s) != n:
        raise FairDashError(f"s has {len(s)} values but X has {n} rows.")
    if not np.issubdtype(s.dtype, np.integer):
        if not np.all(np.isfinite(s.astype(float))) or not np.all(s == np.round(s)):
            raise FairDashError("s must hold integer group codes 0, 1, ...")
    s = s.astype(np.int64)
    if s.min() < 0:
        raise FairDashError("s must hold integer group codes 0, 1, ...")
    if len(np.unique(s)) < 2:
        raise FairDashError(f"{model} needs at least two groups in s; the training data hold only one.")
    return s


def check_fit_inputs(X, y, s=None, strata=None):
    """Validate ``fit``'s arrays: ``X`` 2-D finite floats, ``y`` in {0, 1} with both values, ``s`` integer
    codes 0..G-1 (``None``: one group), ``strata`` integer codes (optional). Returns them as numpy."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise FairDashError("The feature matrix must be two-dimensional (rows x features).")
    if not np.all(np.isfinite(X)):
        raise FairDashError("The feature matrix contains missing or infinite values; preprocess it first.")
    y = np.asarray(y)
    if y.dtype == bool:
        y = y.astype(np.int64)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise FairDashError("The label must be one value per row of the feature matrix.")
    if not np.all(np.isin(y, (0, 1))):
        raise FairDashError("The label must be coded 0/1 (1 = the positive label).")
    y = y.astype(np.int64)
    if np.unique(y).size < 2:
        raise FairDashError("The label has a single value in the training data; there is nothing to learn.")
    if s is None:
        s = np.zeros(X.shape[0], dtype=np.int64)
    else:
        s = np.asarray(s)
        if s.ndim != 1 or s.shape[0] != X.shape[0]:
            raise FairDashError("The sensitive attribute must be one value per row of the feature matrix.")
        if s.dtype.kind not in "iub" and not (s.dtype.kind == "f" and np.all(s % 1 == 0)):
            raise FairDashError("The sensitive attribute must be coded as group numbers 0, 1, ...")
        s = s.astype(np.int64)
        if s.size and s.min() < 0:
            raise FairDashError("Group codes of the sensitive attribute must be 0, 1, ...")
    if strata is not None:
        strata = np.asarray(strata)
        if strata.ndim != 1 or strata.shape[0] != X.shape[0]:
            raise FairDashError("The strata must be one value per row of the feature matrix.")
        strata = strata.astype(np.int64)
    return X, y, s, strata
