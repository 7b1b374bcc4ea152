"""WeightedLR: logistic regression with per-row sample weights on FairDash's own L-BFGS solver.

The inner learner of Kamiran & Calders' reweighing and of Agarwal et al.'s reduction (fairlearn's
``ExponentiatedGradient`` clones it and fits one per best response, with ``sample_weight``). It solves
scikit-learn's problem,

    minimise over (w, b):  sum_i a_i * logloss(y_i, sigmoid(w.x_i + b)) + ||w||^2 / (2 C)

(``a`` = ``sample_weight``, the intercept ``b`` not penalised), so it agrees with
``sklearn.linear_model.LogisticRegression(C=C).fit(X, y, sample_weight=a)`` solved tightly:
coefficients within 1e-3 (relative) and the same predictions on Adult and COMPAS
(``tests/test_weighted_lr.py``), in a fraction of its time (``benchmarks/results_reductions.md``).

How: ``fair_lr.lbfgs_logistic`` (the solver FairLR uses) with the identity transition table and
row weights, in rounds (``WeightedLR._solve``): float32 rounds, then float64 to ``tol``, each
preconditioned by the Cholesky factor of the Hessian where it starts. The preconditioner keeps L-BFGS
quick where one-hot columns are collinear with the intercept; there only the penalty decides the
solution, and an unpreconditioned solver stopped at scikit-learn's default ``tol`` is still far from
it (28% in the largest coefficient on Adult), though it predicts the same. The fit is deterministic: no random numbers, torch
on ``device.fit_threads()`` CPU threads or on the device ``device.resolve_device(device)`` names;
nothing is seeded. Prediction is numpy in float64 on the CPU, the same expressions as scikit-learn's
linear classifiers.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import FairDashError
from ..validation import check_X

# The solver's rounds (``WeightedLR._solve``): the iterations on the Hessian at zero; the float32
# rounds' tolerance (about what float32 sums resolve on Adult-sized data) and the second one's cap; the
# cap of the float64 round on the float32 Hessian; then at most POLISH_ROUNDS rounds of at most
# POLISH_ROUND_ITERS iterations on the float64 Hessian
START_ROUND_ITERS = 6
FIRST_ROUND_TOL = 1e-5
FIRST_ROUND_ITERS = 60
SECOND_ROUND_ITERS = 10
POLISH_ROUNDS = 4
POLISH_ROUND_ITERS = 25
# rows per chunk on the CPU (4096 x 101 float64 = 3.3 MB stays in the cache between the two
# matrix-vector products): about 15% faster than whole-matrix products on Adult
CPU_CHUNK_ROWS = 4096


class WeightedLR(ClassifierMixin, BaseEstimator):
    """Binary logistic regression with ``sample_weight``; scikit-learn's ``LogisticRegression`` API.

    Parameters: ``C`` (inverse L2 strength, as scikit-learn's; the intercept is not penalised),
    ``tol`` (L-BFGS stops when the largest entry of the preconditioned gradient of the objective per
    unit of weight is below it; 1e-7 puts the coefficients within about 1e-4 of the exact optimum on
    Adult), ``max_iter`` (L-BFGS iterations), ``device`` (``"auto"``, ``"cpu"``, ``"cuda"``: where
    the solver runs, decided by ``fairdash.device.resolve_device``).

    ``fit(X, y, sample_weight=None)``: ``y`` holds exactly two label values (sorted into
    ``classes_``; the second is the positive class), ``sample_weight`` non-negative finite numbers
    with a positive sum (``None``: all 1). Fitted: ``coef_`` ``(1, d)``, ``intercept_`` ``(1,)``,
    ``n_iter_`` ``(1,)``, ``classes_``, ``n_features_in_``, ``converged_``, ``fit_seconds_``.
    """

    def __init__(self, C: float = 1.0, tol: float = 1e-7, max_iter: int = 1000, device="auto"):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.device = device

    def fit(self, X, y, sample_weight=None):
        import torch

        from ..device import resolve_device, torch_threads
        from .fair_lr import place_matrix

        t0 = time.perf_counter()
        if self.C is None or not float(self.C) > 0:
            raise FairDashError("The regularisation constant C must be a positive number.")
        X = check_X(X)
        y = np.asarray(y).ravel()
        if len(y) != len(X):
            raise FairDashError(f"X has {len(X)} rows but y has {len(y)} labels.")
        classes, y01 = np.unique(y, return_inverse=True)
        if len(classes) != 2:
            raise FairDashError(f"Logistic regression needs exactly two label values in y, not {len(classes)}.")
        weight = None
        if sample_weight is not None:
            weight = np.asarray(sample_weight, dtype=np.float64).ravel()
            if len(weight) != len(y):
                raise FairDashError(f"sample_weight has {len(weight)} values but X has {len(y)} rows.")
            if not np.all(np.isfinite(weight)) or weight.min() < 0 or not weight.sum() > 0:
                raise FairDashError("sample_weight must hold non-negative numbers with a positive sum.")

        dev = resolve_device(self.device)
        with torch_threads():
            dtype = torch.float64
            labels = torch.as_tensor(y01, dtype=dtype, device=dev)  # the identity table's shortcut
            aw = None if weight is None else torch.as_tensor(weight, dtype=dtype, device=dev)
            X32, X64 = place_matrix(X, torch.float32, dev), place_matrix(X, dtype, dev)
            coef, n_iter, converged = self._solve(X32, X64, labels, aw)
        self.coef_ = coef[:-1].reshape(1, -1)
        self.intercept_ = coef[-1:].copy()
        self.n_iter_ = np.array([n_iter])
        self.converged_ = bool(converged)
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self.device_ = str(dev)
        if not converged:
            warnings.warn(f"WeightedLR stopped after {n_iter} iterations before reaching tol={self.tol:g}; "
                          "increase max_iter for a tighter fit.", RuntimeWarning, stacklevel=2)
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _solve(self, X32, X64, labels, aw):
        """``(coef and intercept as one array, L-BFGS iterations, converged)``, in rounds of
        ``fair_lr.lbfgs_logistic``, each preconditioned by the Cholesky factor of a Hessian:

        1. from zero on the float32 matrix (its matrix-vector products are 2-10x faster than
           float64's): a few iterations on the Hessian at zero, then, on the Hessian there, to about
           what float32 sums resolve (24 iterations become 11 on Adult);
        2. on the float64 matrix to ``tol``, still on that (float32-summed) Hessian: enough where the
           penalty is not tiny beside the data, e.g. weights averaging 1 as Kamiran's and fairlearn's
           (1-2 iterations; a fresh Hessian would cost more than it saves);
        3. if that round did not finish within its cap, rounds on the Hessian where the last ended,
           summed in float64 (weights in the thousands make the penalty per unit of weight so small
           that float32 sums misjudge the directions only it curves: collinear one-hot columns).
        """
        import torch

        from .fair_lr import lbfgs_logistic, logistic_hessian_root

        budget = int(self.max_iter)
        coef = np.zeros(X32.shape[1] + 1)
        n_iter, converged, float32_done = 0, False, False
        first_tol = max(float(self.tol), FIRST_ROUND_TOL)
        rounds = [(X32, X32, first_tol, START_ROUND_ITERS), (X32, X32, first_tol, FIRST_ROUND_ITERS),
                  (X64, None, float(self.tol), SECOND_ROUND_ITERS)]
        rounds += [(X64, X64, float(self.tol), POLISH_ROUND_ITERS)] * POLISH_ROUNDS
        # on the CPU, row chunks that stay in the cache between the two matrix-vector products
        chunk = CPU_CHUNK_ROWS if labels.device.type == "cpu" else None
        P = None
        for matrix, hessian_matrix, tol, cap in rounds:
            cap = min(cap, budget - n_iter)
            if cap <= 0:
                break
            if matrix is X32 and float32_done:
                continue
            at = torch.as_tensor(coef, dtype=labels.dtype, device=labels.device)
            if hessian_matrix is not None:  # else the last round's preconditioner again
                P = logistic_hessian_root(hessian_matrix, aw, at, self.C, chunk)
            c, b, it, converged = lbfgs_logistic(matrix, None, None, labels=labels, C=self.C, tol=tol, max_iter=cap,
                                                 row_weight=aw, precondition=False if P is None else P, start=coef,
                                                 chunk_rows=chunk)
            coef = np.append(c, b)
            n_iter += it
            if it < cap:  # stopped by its own criteria, not by the cap
                if matrix is X64:
                    break
                float32_done = True
        return coef, n_iter, converged

    def decision_function(self, X) -> np.ndarray:
        """``X @ coef_.T + intercept_`` (the logit of the second class), as scikit-learn computes it."""
        check_is_fitted(self, "coef_")
        X = check_X(X)
        if X.shape[1] != self.n_features_in_:
            raise FairDashError(f"The model was trained on {self.n_features_in_} features, not {X.shape[1]}.")
        return (X @ self.coef_.T + self.intercept_).ravel()

    def predict_proba(self, X) -> np.ndarray:
        p1 = expit(self.decision_function(X))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X) -> np.ndarray:
        d = self.decision_function(X)
        return self.classes_[(d > 0).astype(np.int64)]
