"""WeightedLR: logistic regression with per-row sample weights on FairDash's own L-BFGS solver.

The inner learner of Kamiran & Calders' reweighing and of Agarwal et al.'s reduction (fairlearn's
``ExponentiatedGradient`` clones it and fits one per best response, with ``sample_weight``). It solves
scikit-learn's problem,

    minimise over (w, b):  sum_i a_i * logloss(y_i, sigmoid(w.x_i + b)) + ||w||^2 / (2 C)

(``a`` = ``sample_weight``, the intercept ``b`` not penalised), so it agrees with
``sklearn.linear_model.LogisticRegression(C=C).fit(X, y, sample_weight=a)`` solved tightly:
coefficients within 1e-3 (relative) and the same predictions on Adult and COMPAS
(``tests/models/test_weighted_lr.py``), in a fraction of its time (``benchmarks/results/2026-11-26-reductions.md``).

How: ``solver.lbfgs_logistic`` (the solver FairLR uses) with the identity transition table and
row weights, preconditioned by the Cholesky factor of the Hessian (``WeightedLR._solve``). The
preconditioner keeps L-BFGS quick where one-hot columns are collinear with the intercept; there only
the penalty decides the solution, and an unpreconditioned solver stopped at scikit-learn's default
``tol`` is still far from it (28% in the largest coefficient on Adult), though it predicts the same.
Two ways to evaluate the objective, chosen by the matrix (``_Design``):

- sparse (a matrix shared by the fits of a ``FitMemory``, on the CPU, with at most
  ``SPARSE_DENSITY`` of its entries non-zero, e.g. one-hot data: Adult 12%): the whole solve in
  float64 on CSR copies of ``X`` and ``X^T``, Hessians included; a float64 evaluation then costs
  less than a dense float32 one (making the copies costs more than one fit saves);
- dense (other matrices, and always on CUDA, whose sparse products are not deterministic): float32
  rounds (matrix-vector products 2-10x faster than float64's), then a float64 round to ``tol``
  (float32 sums cannot resolve the directions only the tiny penalty curves).

``fit(..., memory=FitMemory())`` shares work between the many fits of one reduction on the same
matrix (fairlearn's ``ExponentiatedGradient`` fits one per best response): the prepared matrix, and
each fit's solution and preconditioner, from which the next fit with the same labels starts (the
weights change little between best responses); the very same problem again gets the stored
solution. Every fit still stops by the same criterion at ``tol``, so it gives the same solution
within the solver's tolerance. The fit is deterministic: no random numbers, torch on
``device.fit_threads()`` CPU threads or on the device ``device.resolve_device(device)`` names;
nothing is seeded. Prediction is numpy in float64 on the CPU, the same expressions as scikit-learn's
linear classifiers.
"""
from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
from scipy.special import expit
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ...device import resolve_device, torch_threads
from ...errors import FairDashError
from .base import Estimator
from .inputs import BinaryClassifierMixin, check_X, fit_inputs, predict_X
from .params import DEVICE, Interval
from .solver import lbfgs_logistic, logistic_hessian_root, place_matrix, preconditioner_of

# The solver's rounds (``WeightedLR._solve``): the iterations on the Hessian at zero; the float32
# rounds' tolerance (about what float32 sums resolve on Adult-sized data) and the second one's cap; the
# cap of the float64 round on the float32 Hessian; the cap of the sparse design's float64 round; then
# at most POLISH_ROUNDS rounds of at most POLISH_ROUND_ITERS iterations on the float64 Hessian where
# the last round ended
START_ROUND_ITERS = 6
FIRST_ROUND_TOL = 1e-5
FIRST_ROUND_ITERS = 60
SECOND_ROUND_ITERS = 10
SPARSE_ROUND_ITERS = 40
POLISH_ROUNDS = 4
POLISH_ROUND_ITERS = 25
# rows per chunk on the CPU (4096 x 101 float64 = 3.3 MB stays in the cache between the two
# matrix-vector products): about 15% faster than whole-matrix products on Adult
CPU_CHUNK_ROWS = 4096
# the largest share of non-zero entries for which the solve runs on sparse (CSR) float64 copies of X:
# a CSR entry takes 16 bytes (value and column) against a dense float32 entry's 4
SPARSE_DENSITY = 0.25


class _Design:
    """The training matrix as the solver reads it on device ``dev``: ``X`` (checked, float64 numpy),
    and either ``sparse`` CSR float64 tensors of ``X`` and ``X^T`` (with ``rows``, the row of every
    stored entry, for the Hessian) or ``X32`` and ``X64``, dense tensors (``solver.place_matrix``)."""

    def __init__(self, *, X: np.ndarray, dev, shared: bool = False):
        import torch


        self.X, self.dev = X, dev
        # sparse only for a matrix shared by many fits (a FitMemory's): for one fit, making the CSR
        # copies (about 40 ms on Adult) costs more than they save; and on the CPU only: CUDA's sparse
        # products sum in no fixed order (two fits would differ in the last digits), and its dense
        # float32 products are fast anyway
        self.sparse = shared and dev.type == "cpu" and np.count_nonzero(X) <= SPARSE_DENSITY * X.size
        if self.sparse:
            with warnings.catch_warnings():  # torch: "Sparse CSR tensor support is in beta state"
                warnings.filterwarnings("ignore", message="Sparse CSR tensor support", category=UserWarning)
                # X is only read (a read-only array is fine)
                warnings.filterwarnings("ignore", message="The given NumPy array is not writable", category=UserWarning)
                # torch 2.11 still says so with check_invariants=False given (our CSR arrays come from torch itself)
                warnings.filterwarnings("ignore", message="Sparse invariant checks are implicitly disabled",
                                        category=UserWarning)
                self.X64 = torch.as_tensor(X, dtype=torch.float64).to_sparse_csr()
                csc = self.X64.to_sparse_csc()  # its arrays are those of the CSR form of X^T
                self.XT64 = torch.sparse_csr_tensor(csc.ccol_indices(), csc.row_indices(), csc.values(),
                                                    X.shape[::-1], check_invariants=False)
            counts = self.X64.crow_indices().diff()
            self.rows = torch.repeat_interleave(torch.arange(X.shape[0], device=dev), counts)
            self.X32 = None
        else:
            self.X32, self.X64 = place_matrix(X, torch.float32, dev), place_matrix(X, torch.float64, dev)
            self.XT64 = self.rows = None


def _sparse_hessian_root(design: _Design, aw, coef, C):
    """``solver.logistic_hessian_root`` on the sparse design, summed in float64: ``L^-T`` for the
    Cholesky factor of ``([X 1]^T diag(a q (1 - q)) [X 1] + diag(1/C, ..., 1/C, 0)) / sum(a)`` at
    ``coef``; ``None`` if not numerically positive definite."""
    import torch


    Xs, XTs = design.X64, design.XT64
    n, p = Xs.shape
    dtype, dev = coef.dtype, coef.device
    q = torch.sigmoid(torch.mv(Xs, coef[:p]) + coef[p])
    h = q * (1.0 - q)
    if aw is not None:
        h = h * aw
    Xh = torch.sparse_csr_tensor(Xs.crow_indices(), Xs.col_indices(), Xs.values() * h[design.rows], (n, p),
                                 check_invariants=False)  # the structure of X64, which torch made
    H = torch.empty(p + 1, p + 1, dtype=dtype, device=dev)
    H[:p, :p] = (XTs @ Xh).to_dense() + torch.eye(p, dtype=dtype, device=dev) / float(C)
    H[:p, p] = torch.mv(XTs, h)
    H[p, :p] = H[:p, p]
    H[p, p] = h.sum()
    H /= float(n) if aw is None else float(aw.sum().item())
    return preconditioner_of(H)


class FitMemory:
    """What the fits of one reduction share (``WeightedLR.fit(..., memory=...)``): the prepared
    training matrix (for the one array object the fits are given, on one device), and per label
    vector the solution and preconditioner of the last fit with those labels, where the next fit with
    them starts; a fit of the very same problem (labels and weights) gets the stored solution.

    Made by the reduction for one of its fits and dropped after it (``AgarwalReduction``); nothing is
    global. scikit-learn's ``clone`` deep-copies an estimator's parameters, so a deep copy of a memory
    is the memory itself: the clones fairlearn makes of the inner learner share it.
    """

    def __init__(self):
        self._given = None  # the array object the design was made from (kept, so its id stays unique)
        self._design = None
        self.starts = {}  # digest of the labels (and C, tol, max_iter) -> (coef, preconditioner)
        self.solved = {}  # digest of the labels, weights (and C, tol, max_iter) -> (coef, n_iter, converged)

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        return "FitMemory()"

    def design(self, X, dev) -> _Design:
        """The prepared matrix of ``X``: made once per array object and device (the first time,
        after ``check_X``); a different array replaces it and forgets the solutions."""
        d = self._design
        if d is None or X is not self._given or d.dev != dev or np.shape(X) != d.X.shape:
            self._given, self._design = X, _Design(X=check_X(X), dev=dev, shared=True)
            self.starts, self.solved = {}, {}
        return self._design

    def holds(self, X) -> bool:
        """Whether ``X`` is the array object the prepared matrix was made from (already checked)."""
        return self._design is not None and X is self._given

    def scores(self, model: "WeightedLR") -> np.ndarray:
        """``model.decision_function`` of the held matrix (the reduction's training rows, which
        fairlearn predicts after every fit): on the sparse design a float64 sparse product, 30x
        faster than the dense one on Adult, equal to it up to the order of the float64 sums (a label
        could differ only where the score is within about 1e-15 of 0)."""
        import torch


        d = self._design
        if not d.sparse:
            return model.decision_of_prepared(d.X)
        with torch_threads():
            coef = torch.as_tensor(model.coef_.ravel(), dtype=torch.float64, device=d.dev)
            z = torch.mv(d.X64, coef) + float(model.intercept_[0])
            return z.cpu().numpy()


def _digest(*arrays) -> bytes:
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.digest()


class WeightedLR(BinaryClassifierMixin, ClassifierMixin, Estimator):
    """Binary logistic regression with ``sample_weight``; scikit-learn's ``LogisticRegression`` API.

    Parameters: ``C`` (inverse L2 strength, as scikit-learn's; the intercept is not penalised),
    ``tol`` (L-BFGS stops when the largest entry of the preconditioned gradient of the objective per
    unit of weight is below it, the last float64 round stopping on nothing else; at 1e-9 fits on rows in
    shuffled orders, and on CPUs with other vector widths, give probabilities within 1e-7 of each other
    on Adult and COMPAS, weights in the thousands included: benchmarks/results/2026-11-28-convergence.md),
    ``max_iter`` (L-BFGS iterations), ``device`` (``"auto"``, ``"cpu"``, ``"cuda"``: where
    the solver runs, decided by ``fairdash.device.resolve_device``).

    ``fit(X, y, sample_weight=None, *, memory=None)``: ``y`` holds exactly two label values (sorted
    into ``classes_``; the second is the positive class), ``sample_weight`` non-negative finite
    numbers with a positive sum (``None``: all 1); ``memory`` a :class:`FitMemory` shared by the
    fits of one reduction on the same ``X`` (see the module's notes), or ``None``. Fitted: ``coef_`` ``(1, d)``,
    ``intercept_`` ``(1,)``,
    ``n_iter_`` ``(1,)``, ``classes_``, ``n_features_in_``, ``converged_``, ``fit_seconds_``.
    """

    _parameter_constraints = {  # scikit-learn's convention, checked by the base's fit (params.check_params) first
        "C": [Interval(numbers.Real, 0, None, "neither")],
        "tol": [Interval(numbers.Real, 0, None, "neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, "left")],
        "device": [DEVICE],
    }

    def __init__(self, *, C: float = 1.0, tol: float = 1e-9, max_iter: int = 1000, device="auto"):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.device = device

    def fit(self, X, y, sample_weight=None, *, memory: FitMemory | None = None):
        """Fit on ``X``, ``y`` with ``sample_weight``. ``memory``: a :class:`FitMemory` shared with
        other fits on the same ``X`` (a reduction's best responses), or ``None``. Validated as every
        FairDash estimator is: the base's ``fit`` checks the parameters, then runs ``_fit`` (this signature
        stays, so that scikit-learn and fairlearn see ``sample_weight``)."""
        return super().fit(X, y, sample_weight=sample_weight, memory=memory)

    def _fit(self, X, y, s=None, *, sample_weight=None, memory: FitMemory | None = None):
        import torch


        t0 = time.perf_counter()
        dev = resolve_device(self.device)
        checked, y01 = fit_inputs(self, X, y)  # scikit-learn's input contract (models.inputs): classes_, n_features_in_
        with torch_threads():
            design = None if memory is None else memory.design(X, dev)  # (the memory knows the given array)
        X = checked if design is None else design.X
        weight = None
        if sample_weight is not None:
            weight = np.asarray(sample_weight, dtype=np.float64).ravel()
            if len(weight) != len(y01):
                raise FairDashError(f"sample_weight has {len(weight)} values but X has {len(y01)} rows.")
            if not np.all(np.isfinite(weight)) or weight.min() < 0 or not weight.sum() > 0:
                raise FairDashError("sample_weight must hold finite non-negative numbers, not all zero.")

        with torch_threads():
            if design is None:
                design = _Design(X=X, dev=dev)
            dtype = torch.float64
            labels = torch.as_tensor(y01, dtype=dtype, device=dev)  # the identity table's shortcut
            aw = None if weight is None else torch.tensor(np.asarray(weight, dtype=np.float64), dtype=dtype, device=dev)
            if memory is None:
                coef, n_iter, converged, _ = self._solve(design, labels, aw)
            else:
                params = np.array([self.C, self.tol, self.max_iter], dtype=np.float64)
                label_key = _digest(y01, params)
                key = _digest(y01, params, np.zeros(0) if weight is None else weight)
                if key in memory.solved:  # the very same problem again
                    coef, _, converged = memory.solved[key]
                    coef, n_iter = coef.copy(), 0
                else:
                    start, P = memory.starts.get(label_key, (None, None))
                    coef, n_iter, converged, P = self._solve(design, labels, aw, start, P)
                    memory.starts[label_key] = (coef, P)
                    memory.solved[key] = (coef, n_iter, converged)
        self.coef_ = coef[:-1].reshape(1, -1)
        self.intercept_ = coef[-1:].copy()
        self.n_iter_ = np.array([n_iter])
        self.converged_ = bool(converged)
        self.device_ = str(dev)
        if not converged:
            warnings.warn(f"WeightedLR stopped after {n_iter} iterations before reaching tol={self.tol:g}; "
                          "increase max_iter for a tighter fit.", RuntimeWarning, stacklevel=4)  # fit's caller
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _solve(self, design: _Design, labels, aw, start=None, P=None):
        """``(coef and intercept as one array, L-BFGS iterations, converged, the last preconditioner)``,
        in the rounds of :meth:`_rounds`, each ``solver.lbfgs_logistic`` preconditioned by the Cholesky
        factor ``P`` of a Hessian (:meth:`_hessian_root`). From ``start`` with ``P`` (a memory's earlier fit
        with the same labels) the first rounds go; else from zero. A round that ends within its cap ends
        the float32 rounds, or, on the float64 matrix at ``tol``, the solve."""
        chunk = CPU_CHUNK_ROWS if labels.device.type == "cpu" else None
        tol = float(self.tol)
        start, rounds = self._rounds(design, start, P)
        budget = int(self.max_iter)
        coef = np.zeros(design.X.shape[1] + 1) if start is None else np.asarray(start, dtype=np.float64)
        n_iter, converged, float32_done = 0, False, False
        for precision, source, round_tol, cap in rounds:
            cap = min(cap, budget - n_iter)
            if cap <= 0:
                break
            if precision == 32 and (float32_done or design.sparse):
                if not design.sparse:
                    continue
                precision = 64  # the sparse design has one precision
            if source == "start":
                P = self._hessian_root(design, aw, labels, precision, coef)
            matrix = design.X64 if precision == 64 else design.X32
            c, b, it, converged = lbfgs_logistic(
                matrix, None, None, labels=labels, C=self.C, tol=round_tol, max_iter=cap, row_weight=aw,
                precondition=False if P is None else P, start=coef, chunk_rows=chunk,
                transposed=design.XT64 if design.sparse else None, settle=precision == 64 and round_tol <= tol)
            coef = np.append(c, b)
            n_iter += it
            if it < cap:  # stopped by its own criteria, not by the cap
                if precision == 64 and round_tol <= tol:
                    break
                float32_done = True
        return coef, n_iter, converged, P

    def _rounds(self, design: _Design, start, P):
        """``(start, rounds)``: where :meth:`_solve` starts (``None``: zero, where no ``P`` is given) and its
        rounds as ``(precision, where the preconditioner comes from, tolerance, iteration cap)``, the source
        ``"start"`` the Hessian where the round starts, ``"last"`` the last round's, ``"given"`` ``P``:

        1. from zero, a few iterations on the Hessian at zero, then a Hessian there (24 iterations become
           11 on Adult);
        2. sparse design: float64 to ``tol``. Dense design: on the float32 matrix to about what float32
           sums resolve, then on the float64 matrix to ``tol``, still on that (float32-summed)
           Hessian: enough where the penalty is not tiny beside the data, e.g. weights averaging 1 as
           Kamiran's and fairlearn's (1-2 iterations; a fresh Hessian would cost more than it saves);
        3. if that round did not finish within its cap, rounds on the Hessian where the last ended,
           summed in float64 (weights in the thousands make the penalty per unit of weight so small
           that float32 sums misjudge the directions only it curves: collinear one-hot columns).
        """
        tol = float(self.tol)
        first_tol = max(tol, FIRST_ROUND_TOL)
        if start is None or P is None:
            start, rounds = None, [(32, "start", first_tol, START_ROUND_ITERS)]
            first = "start"
        else:
            rounds, first = [], "given"
        if design.sparse:
            rounds += [(64, first, tol, SPARSE_ROUND_ITERS)]
        else:
            rounds += [(32, first, first_tol, FIRST_ROUND_ITERS), (64, "last", tol, SECOND_ROUND_ITERS)]
        rounds += [(64, "start", tol, POLISH_ROUND_ITERS)] * POLISH_ROUNDS
        return start, rounds

    def _hessian_root(self, design: _Design, aw, labels, precision: int, coef):
        """The preconditioner at ``coef`` (``solver.logistic_hessian_root``, summed on the float32 or the
        float64 matrix; on the sparse design always float64, ``_sparse_hessian_root``)."""
        import torch

        at = torch.as_tensor(coef, dtype=labels.dtype, device=labels.device)
        if design.sparse:
            return _sparse_hessian_root(design, aw, at, self.C)
        chunk = CPU_CHUNK_ROWS if labels.device.type == "cpu" else None
        return logistic_hessian_root(design.X32 if precision == 32 else design.X64, aw, at, self.C, chunk)

    def decision_function(self, X) -> np.ndarray:
        """``X @ coef_.T + intercept_`` (the logit of the second class), as scikit-learn computes it."""
        check_is_fitted(self, "coef_")
        return self.decision_of_prepared(predict_X(self, X))

    def decision_of_prepared(self, X: np.ndarray) -> np.ndarray:
        """``decision_function`` of an ``X`` already checked (``check_X``), e.g. a :class:`FitMemory`'s."""
        if X.shape[1] != self.n_features_in_:
            raise FairDashError(f"The model was trained on {self.n_features_in_} features, not {X.shape[1]}.")
        return (X @ self.coef_.T + self.intercept_).ravel()

    def predict_proba(self, X) -> np.ndarray:
        p1 = expit(self.decision_function(X))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X) -> np.ndarray:
        return self.labels_of_decision(self.decision_function(X))

    def labels_of_decision(self, d: np.ndarray) -> np.ndarray:
        """The labels (``classes_``) of decision values ``d``: the second class where ``d > 0``."""
        return self.classes_[(d > 0).astype(np.int64)]
