"""How well all the features together tell ``s`` (or ``y``) apart: the cross-validated ROC AUC of a plain
logistic regression on a task's training split. One function, two uses:

* :func:`s_predictability`: how far a model that does not see ``s`` can still treat the groups
  differently (``rates --json``, the Target page); about 0.93 on Adult (sex), 0.65 on COMPAS (race);
* :func:`joint_leaks`: features that give ``s`` or ``y`` away only together (drop-first dummies of a text
  label: no column alone, all of them exactly), a cross-validated AUC of at least
  :data:`JOINT_LEAK_AUC`, with the columns that carry it (:mod:`fairdash.analysis.proxies` checks single features).

Quick by design: at most :data:`MAX_ROWS` training rows (a fixed, stratified subset; :func:`s_predictability`
reads them all, :data:`S_ROWS`), numeric columns
median-imputed and standardised, categorical ones one-hot over their most frequent values. Nothing
imports streamlit.
"""
from __future__ import annotations

import hashlib
import threading
import warnings
import weakref
from collections import OrderedDict

import numpy as np
import pandas as pd

from ..data import split_task
from ..errors import FairDashError

JOINT_LEAK_AUC = 0.99  # all features together predicting s or y with at least this AUC is a leak
MAX_ROWS = 10_000  # training rows used at most (a fixed stratified subset) ...
FOLDS = 5  # ... cross-validation folds ...
TOL = 1e-4  # ... and the solver's tolerance, for s_predictability (scikit-learn's default)
# the leak check (every upload, every change of features) is quicker: an AUC of 1 is 1 on any number of
# rows, and on a rougher fit
LEAK_ROWS, LEAK_FOLDS, LEAK_TOL = 3_000, 3, 1e-3
LEVELS = 50  # one-hot columns per categorical feature at most (the rest share one)
NAMED_AT_MOST = 6  # a joint leak names at most this many columns
_SEED = 12345


# --------------------------------------------------------------------------------------------------
# The design matrix and the cross-validated AUC
# --------------------------------------------------------------------------------------------------
def _design(X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``(Z, owner)``: numeric columns median-imputed and standardised, other columns one-hot over their
    ``LEVELS`` most frequent values (missing is a value; the rest share one column); ``owner[j]`` is the
    index in ``X`` of the column that made ``Z``'s column ``j``."""
    blocks, owner = [], []
    for i, c in enumerate(X.columns):
        col = X[c]
        if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            v = col.to_numpy(dtype=np.float64, na_value=np.nan)
            v = np.where(np.isfinite(v), v, np.nan)
            if np.isnan(v).all():
                continue
            v = np.where(np.isnan(v), np.nanmedian(v), v)
            sd = v.std()
            if sd == 0:
                continue
            blocks.append(((v - v.mean()) / sd)[:, None])
            owner.append(i)
        else:
            codes, uniq = pd.factorize(col, use_na_sentinel=False)
            if len(uniq) < 2:
                continue
            counts = np.bincount(codes, minlength=len(uniq))
            top = np.argsort(-counts, kind="stable")[:LEVELS]
            lookup = np.full(len(uniq), len(top))  # rarer values: one shared column
            lookup[top] = np.arange(len(top))
            onehot = np.eye(len(top) + 1)[lookup[codes]]
            onehot = onehot[:, onehot.std(axis=0) > 0]
            blocks.append(onehot)
            owner += [i] * onehot.shape[1]
    if not blocks:
        return np.empty((len(X), 0)), np.empty(0, dtype=int)
    return np.hstack(blocks), np.asarray(owner)


def _one_blas_thread():
    """lbfgs makes many small matrix products: on a busy 2-core machine several BLAS threads made one
    fit on Adult 35 times slower (7.2 s against 0.2 s); one thread is fast and reproducible."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _model(tol: float = TOL):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=300, tol=tol)


def cross_validated_auc(Z: np.ndarray, t: np.ndarray, folds: int = FOLDS, tol: float = TOL) -> float | None:
    """ROC AUC of a plain logistic regression (stopping at ``tol``) predicting the codes ``t`` from ``Z``,
    out of fold (stratified ``folds``-fold, fixed seed); with more than two codes the one-vs-rest macro
    average. ``None`` when there is nothing to learn from (no column, or a code with fewer than two rows)."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    groups, counts = np.unique(t, return_counts=True)
    if Z.shape[1] == 0 or len(groups) < 2 or counts.min() < 2:
        return None
    cv = StratifiedKFold(n_splits=int(min(folds, counts.min())), shuffle=True, random_state=_SEED)
    with _one_blas_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence on separable data: the AUC is still right
        proba = cross_val_predict(_model(tol), Z, t, cv=cv, method="predict_proba")
    if len(groups) == 2:
        return float(roc_auc_score(t == groups[1], proba[:, 1]))
    return float(roc_auc_score(t, proba, multi_class="ovr", average="macro", labels=groups))


def _sample_rows(t: np.ndarray, max_rows: int) -> np.ndarray:
    """At most ``max_rows`` positions of ``t``, the same share of each code (fixed seed), sorted."""
    if max_rows is None or len(t) <= max_rows:  # None: every row
        return np.arange(len(t))
    rng = np.random.default_rng(_SEED)
    keep = []
    for g in np.unique(t):
        idx = np.flatnonzero(t == g)
        size = min(len(idx), max(2, int(round(len(idx) * max_rows / len(t)))))
        keep.append(rng.choice(idx, size=size, replace=False))
    return np.sort(np.concatenate(keep))


# --------------------------------------------------------------------------------------------------
# On a task: one memo, so that a readout asked again (every slider move) costs nothing
# --------------------------------------------------------------------------------------------------
_MEMO: OrderedDict = OrderedDict()  # (task's id, ...) -> AUC, for live tasks only
_MEMO_SIZE = 64
_LOCK = threading.RLock()
_LIVE: dict = {}  # id(task) -> its finalizer, which forgets its entries when the task goes


def _live_key(task) -> int:
    """The task's id while it lives (hashing a big task's content would cost more than the memo saves:
    0.7 s for 171,000 x 143); its entries go with it."""
    k = id(task)
    with _LOCK:
        if k not in _LIVE:
            _LIVE[k] = weakref.finalize(task, _forget, k)
    return k


def _forget(k: int) -> None:
    with _LOCK:
        for key in [key for key in _MEMO if key[0] == k]:
            del _MEMO[key]
        _LIVE.pop(k, None)


def _train_rows(task, split) -> np.ndarray:
    if split is None:
        split = split_task(task, seed=0)
    return np.asarray(split.train)


def _codes(task, of: str) -> np.ndarray:
    if of not in ("s", "y"):
        raise FairDashError("Separability is measured for 's' or 'y'.")
    return np.asarray(task.s if of == "s" else task.y)


class _Design:
    """The design matrix of a task's features on at most ``max_rows`` of the training ``rows`` (one
    subset for ``s`` and ``y`` alike, stratified by both), built when first asked for and shared by every
    check of one call: a subset of the features is a subset of its columns."""

    def __init__(self, task, rows: np.ndarray, max_rows: int = MAX_ROWS, folds: int = FOLDS, tol: float = TOL):
        self.task, self.rows, self.max_rows, self.folds, self.tol = task, rows, max_rows, folds, tol
        self._built = None

    def parts(self, of: str, columns: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(Z, owner, t)`` for ``columns``: ``owner`` indexes ``columns``, ``t`` holds the codes of ``of``."""
        task = self.task
        if self._built is None:
            cell = _codes(task, "s")[self.rows] * 2 + _codes(task, "y")[self.rows]
            pick = self.rows[_sample_rows(cell, self.max_rows)]
            self._built = (pick, *_design(task.X.iloc[pick]))
        pick, Z, owner = self._built
        index = {c: i for i, c in enumerate(task.features)}
        wanted = np.array([index[c] for c in columns], dtype=int)
        keep = np.isin(owner, wanted)
        where = {w: j for j, w in enumerate(wanted)}
        return Z[:, keep], np.array([where[o] for o in owner[keep]], dtype=int), _codes(task, of)[pick]


def separability(task, of: str = "s", split=None, columns=None, max_rows: int = MAX_ROWS,
                 folds: int = FOLDS) -> float | None:
    """The cross-validated ROC AUC of predicting ``of`` (``"s"`` or ``"y"``) from ``columns`` (default:
    every feature) with a plain logistic regression on the training split of ``split`` (default: the
    seed-0 split), on at most ``max_rows`` of its rows (a fixed subset, stratified by ``s`` and ``y``);
    k groups: the one-vs-rest macro average. ``None`` when no column carries anything. Remembered per
    task (while it lives), split, columns and settings."""
    return _separability(_Design(task, _train_rows(task, split), max_rows, folds), of, columns)


def _separability(design: _Design, of: str, columns=None, remember: bool = True) -> float | None:
    task = design.task
    columns = list(task.features if columns is None else columns)
    key = None
    if remember:
        key = (_live_key(task), of, hashlib.sha256(design.rows.tobytes()).hexdigest()[:16], tuple(columns),
               design.max_rows, design.folds, design.tol)
        with _LOCK:
            if key in _MEMO:
                _MEMO.move_to_end(key)
                return _MEMO[key]
    Z, _, t = design.parts(of, columns)
    auc = cross_validated_auc(Z, t, design.folds, design.tol)
    auc = None if auc is None else round(auc, 4)
    if key is None:
        return auc
    with _LOCK:
        _MEMO[key] = auc
        while len(_MEMO) > _MEMO_SIZE:
            _MEMO.popitem(last=False)
    return auc


def _blind_columns(task) -> list:
    """The features without ``s`` itself (and the column crossed with it), which a run that sees ``s``
    has among its features."""
    spec = task.spec
    return [c for c in task.features if c not in (spec.s_column, spec.s_with)]


# s_predictability reads every training row: on a 10,000-row subset it was 0.029 low (Adult, race, 5 groups)
S_ROWS = None


def s_predictability(task, split=None) -> float | None:
    """How well the features (``s`` itself left out) tell the groups apart: :func:`separability` of
    ``s`` on the whole training split (k groups: the one-vs-rest macro average). Near 0.5, a model that
    does not see ``s`` moves every group together; near 1, it can still treat the groups differently."""
    return separability(task, "s", split, _blind_columns(task), max_rows=S_ROWS)


def _carriers(design: _Design, of: str, columns: list) -> list:
    """The fewest columns, taken in order of the weight a logistic regression on all of them gives each
    (the sum of its one-hot columns' absolute coefficients), that together reach ``JOINT_LEAK_AUC``; at
    most ``NAMED_AT_MOST`` (then the heaviest that many)."""
    Z, owner, t = design.parts(of, columns)
    with _one_blas_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coef = np.abs(np.atleast_2d(_model(design.tol).fit(Z, t).coef_)).sum(axis=0)
    weight = np.bincount(owner, weights=coef, minlength=len(columns))
    ranked = [columns[i] for i in np.argsort(-weight, kind="stable") if weight[i] > 0][:NAMED_AT_MOST]
    for m in range(1, len(ranked) + 1):
        auc = _separability(design, of, ranked[:m], remember=False)
        if auc is not None and auc >= JOINT_LEAK_AUC:
            return ranked[:m]
    return ranked


def joint_leaks(task, exclude=(), split=None) -> list[dict]:
    """Leaks of ``s`` and ``y`` that only the features together give away: for each of ``s`` and ``y``,
    when the features (but ``exclude``, the single-feature leaks already found, and ``s`` itself) predict
    it with a cross-validated AUC of at least ``JOINT_LEAK_AUC``, one entry per column that carries it,
    ``{"column", "of", "score", "with"}``: ``score`` is the AUC of all features together, ``with`` the
    columns that reach it together (:func:`_carriers`). Quicker than :func:`s_predictability`: at most
    ``LEAK_ROWS`` training rows, ``LEAK_FOLDS`` folds, tolerance ``LEAK_TOL``."""
    design = _Design(task, _train_rows(task, split), LEAK_ROWS, LEAK_FOLDS, LEAK_TOL)
    out = []
    for of in ("y", "s"):
        columns = [c for c in _blind_columns(task) if (c, of) not in set(exclude)]
        if not columns:
            continue
        auc = _separability(design, of, columns, remember=False)
        if auc is None or auc < JOINT_LEAK_AUC:
            continue
        named = _carriers(design, of, columns)
        out += [{"column": c, "of": of, "score": auc, "with": list(named)} for c in named]
    return out
