"""FairLR: logistic regression trained on the fair (target-label) likelihood; LR: the same with the
identity table (docs/METHOD.md, "The fair likelihood").

``q(x) = sigmoid(w.x + b) = P(ybar=1 | x)`` and the observed ``y`` has likelihood
``d[s][0] (1 - q) + d[s][1] q``. The objective is scikit-learn's: ``sum_i -log P(y_i | x_i, s_i)
+ ||w||^2 / (2 C)`` with the intercept not penalised, so ``LR`` matches
``sklearn.linear_model.LogisticRegression(C=C)``.

Optimisers: ``"lbfgs"`` (default) is full-batch ``torch.optim.LBFGS`` with a strong-Wolfe line search
and an analytic gradient (the gradient of the fair log-likelihood with respect to the logit is
``r - q``, where ``r = P(ybar=1 | y, x, s)`` is the posterior of the target label), evaluated in row
chunks when the matrix is large, so it is deterministic and memory-bounded. ``"radam"`` is the paper's
set-up: RAdam, learning rate 1e-3, minibatches of 64, decoupled weight decay.
"""
from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin

from ..target.target_spec import TargetSpec
from . import inputs as I
from . import likelihood as L
from . import params as P
from .state import make_state

# Above this many matrix elements per chunk, the full-batch gradient is accumulated over row chunks.
CHUNK_ELEMENTS = 50_000_000


def place_matrix(X, dtype, dev):
    """``X`` as the torch tensor ``lbfgs_logistic`` reads: on ``dev``; on a GPU too small to hold it in
    half its free memory, in pinned host memory instead (the solver moves row chunks over)."""
    import torch

    Xt = torch.tensor(X, dtype=dtype)  # a copy: X may be read-only, which torch cannot share (and warns about)
    if dev.type == "cuda":
        free = torch.cuda.mem_get_info(dev)[0]
        if Xt.numel() * Xt.element_size() < 0.5 * free:
            Xt = Xt.to(dev)
        else:  # too large for the GPU at once: rows stay in (pinned) host memory, chunks move over
            Xt = Xt.pin_memory()
    return Xt


def lbfgs_logistic(Xt, w0, w1, *, C, tol, max_iter, chunk_rows=None, report=None, row_weight=None,
                   precondition=False, start=None, labels=None, transposed=None):
    """The one full-batch L-BFGS solver of FairDash's logistic regressions (FairLR, LR, WeightedLR).

    Minimises ``sum_i a_i * (-log P(y_i | x_i)) + ||w||^2 / (2 C)`` over ``(w, b)`` (the intercept
    ``b`` is not penalised), with ``P(y | x) = exp(w0) (1 - q) + exp(w1) q``, ``q = sigmoid(w.x + b)``:
    ``w0``, ``w1`` are the per-row log-terms of the transition table (``likelihood.select_log_d``;
    the identity table gives the ordinary logistic loss) and ``a = row_weight`` (``None``: all 1).
    ``labels`` (the 0/1 labels as a float64 tensor, with ``w0 = w1 = None``) is the identity table's
    shortcut: ``log P(y | x) = y z - softplus(z)`` and its gradient ``y - q`` without the log-sum-exp,
    the same numbers (``exp`` of the table's ``log 0`` is exactly 0) for half the elementwise work.
    The objective is divided by ``sum(a)`` (``n`` without weights), so ``tol`` does not depend on the
    number of rows; the minimiser is the same.

    ``Xt``: the ``(n, p)`` matrix as a torch tensor (float32 for mixed precision, float64 otherwise; on
    the device or in pinned host memory, moved over in chunks of ``chunk_rows`` rows); ``w0``, ``w1``,
    ``row_weight``: float64 tensors on the device. ``tol``: the largest entry of the gradient that
    L-BFGS stops at.

    ``start``: the starting ``(w, b)`` as one array of ``p + 1`` numbers (``None``: zeros).

    ``precondition``: ``True`` solves in the coordinates ``u`` with ``(w, b) = P u``, ``P = L^-T``
    from the Cholesky factor ``L`` of the logistic loss's Hessian at the start
    (``logistic_hessian_root``, one pass of ``n p^2``), so the problem L-BFGS sees is well conditioned
    even where one-hot columns are collinear with the intercept (there only the small penalty curves
    the objective, and plain L-BFGS needs hundreds of iterations to settle), and its first step is
    Newton's. A tensor is used as ``P`` as it is; ``False`` (or ``None`` from a failed factorisation)
    solves in ``(w, b)`` itself. ``tol`` then bounds the gradient in ``u``, a Newton-decrement-like
    measure (the distance to the optimum in the Hessian's norm).

    ``transposed``: with ``Xt`` a sparse CSR tensor (on the device), the CSR tensor of ``X^T``: the two
    products are then sparse matrix-vector products over the whole matrix (no row chunks); on
    one-hot data (Adult: 12% non-zeros) a float64 evaluation costs less than a dense float32 one.
    ``precondition`` must then be ``False`` or a tensor.

    Returns ``(coef (p,), intercept, n_iter, converged)`` as numpy / Python numbers.
    """
    import torch

    report = report or (lambda fraction, message="": None)
    n, p = Xt.shape
    dev = (w0 if labels is None else labels).device
    max_iter = int(max_iter)
    inv_c = 1.0 / float(C)
    chunk = chunk_rows or max(1024, CHUNK_ELEMENTS // max(p, 1))
    chunks = [(i, min(i + chunk, n)) for i in range(0, n, chunk)] if transposed is None else [(0, n)]
    dtype = torch.float64  # weights, losses, gradient sums; Xt may be float32 ("mixed")
    xdt = Xt.dtype
    aw = row_weight
    # per-row (per unit of weight) objective: tolerances do not depend on n
    scale = 1.0 / n if aw is None else 1.0 / float(aw.sum().item())
    coef0 = torch.zeros(p + 1, dtype=dtype, device=dev)
    if start is not None:
        coef0 = torch.as_tensor(np.asarray(start, dtype=np.float64), dtype=dtype, device=dev)
    if precondition is True:
        P = logistic_hessian_root(Xt, aw, coef0, C, chunk_rows)
    else:
        P = precondition if precondition is not False else None
    if P is None:
        theta = coef0.clone().requires_grad_(True)
    else:  # u with P u = coef0
        theta = torch.linalg.solve_triangular(P, coef0.reshape(-1, 1), upper=True).reshape(-1).requires_grad_(True)
    opt = torch.optim.LBFGS(
        [theta], lr=1.0, max_iter=max_iter, max_eval=int(max_iter * 1.25) + 25,
        tolerance_grad=float(tol), tolerance_change=1e-12, history_size=10,
        line_search_fn="strong_wolfe",
    )
    evals = [0]
    last = {}  # the last point evaluated and its gradient: the end point, unless the line search backed off

    # log-odds of ybar=1 given y and s; r = P(ybar=1|y,x,s) = sigmoid(k + z)
    k = None if labels is not None else w1 - w0

    def closure():
        with torch.no_grad():
            coef = theta if P is None else P @ theta  # (w, b)
            w, b = coef[:p], coef[p]
            loss = 0.5 * inv_c * torch.dot(w, w)
            gw = inv_c * w
            gb = torch.zeros((), dtype=dtype, device=dev)
            wx = w.to(xdt)
            for lo, hi in chunks:
                Xc = Xt[lo:hi].to(dev, non_blocking=True) if transposed is None else Xt
                z = torch.mv(Xc, wx).to(dtype) + b
                sp = torch.nn.functional.softplus(z)  # -log(1 - q)
                if labels is None:
                    # log P(y|x,s) = logaddexp(w0 + log(1-q), w1 + log q), log q = z - softplus(z)
                    ll = torch.logaddexp(w0[lo:hi] - sp, w1[lo:hi] - sp + z)
                    # dlogL/dz = r - q
                    g = torch.sigmoid(k[lo:hi] + z).sub_(torch.sigmoid(z))
                else:  # the identity table: r = y
                    ll = z * labels[lo:hi] - sp
                    g = labels[lo:hi] - torch.sigmoid(z)
                if aw is not None:
                    ll = ll * aw[lo:hi]
                    g = g.mul_(aw[lo:hi])
                loss = loss - ll.sum()
                gw = gw - torch.mv(Xc.T if transposed is None else transposed, g.to(xdt)).to(dtype)
                gb = gb - g.sum()
            grad = torch.cat([gw, gb.reshape(1)]) * scale
            theta.grad = grad if P is None else P.T @ grad
            last["at"], last["grad"] = theta.detach().clone(), theta.grad
            evals[0] += 1
            if evals[0] % 10 == 0:
                report(min(evals[0] / max_iter, 0.99), f"L-BFGS evaluation {evals[0]}")
            return loss * scale

    opt.step(closure)
    state = opt.state[theta]
    n_iter = int(state.get("n_iter", 0))
    with torch.no_grad():
        if not torch.equal(last["at"], theta.detach()):
            closure()
        converged = bool(last["grad"].abs().max().item() <= float(tol) * 1.0001) or n_iter < max_iter
        th = theta if P is None else P @ theta
    th = th.detach().cpu().numpy().astype(np.float64)
    return th[:p], float(th[p]), n_iter, converged


def logistic_hessian_root(Xt, row_weight, coef, C, chunk_rows=None):
    """``L^-T`` (upper triangular) for the Cholesky factor ``L`` of the logistic objective's Hessian at
    ``coef`` = ``(w, b)`` (a float64 tensor of ``p + 1`` numbers), per unit of weight:
    ``([X 1]^T diag(a q (1 - q)) [X 1] + diag(1/C, ..., 1/C, 0)) / sum(a)``; ``lbfgs_logistic``'s
    preconditioner. The sums are taken in ``Xt``'s precision (float32 is plenty for a
    preconditioner), the factor in float64. ``None`` if the matrix is not numerically positive
    definite (then ``lbfgs_logistic`` runs without preconditioning)."""
    import torch

    n, p = Xt.shape
    dtype, dev = coef.dtype, coef.device
    xdt = Xt.dtype
    aw = row_weight
    chunk = chunk_rows or max(1024, CHUNK_ELEMENTS // max(p, 1))
    H = torch.zeros(p + 1, p + 1, dtype=dtype, device=dev)
    wx, b = coef[:p].to(xdt), coef[p]
    for lo in range(0, n, chunk):
        Xc = Xt[lo:lo + chunk].to(dev, non_blocking=True)
        q = torch.sigmoid(torch.mv(Xc, wx).to(dtype) + b)
        h = q * (1.0 - q)
        if aw is not None:
            h = h * aw[lo:lo + chunk]
        H[:p, :p] += (Xc.T @ (Xc * h.to(xdt)[:, None])).to(dtype)
        H[:p, p] += torch.mv(Xc.T, h.to(xdt)).to(dtype)
        H[p, p] += h.sum()
    H[p, :p] = H[:p, p]
    H[:p, :p] += torch.eye(p, dtype=dtype, device=dev) / float(C)
    H /= float(n) if aw is None else float(aw.sum().item())
    return preconditioner_of(H)


def preconditioner_of(H):
    """``L^-T`` of the Cholesky factor ``H = L L^T`` of a Hessian (L-BFGS's preconditioner), or ``None``
    where ``H`` is not positive definite."""
    import torch

    L, info = torch.linalg.cholesky_ex(H)
    if int(info.item()) != 0:
        return None
    eye = torch.eye(H.shape[0], dtype=H.dtype, device=H.device)
    return torch.linalg.solve_triangular(L.T, eye, upper=True)


_OPTIMIZERS = ("lbfgs", "radam")
_PRECISIONS = ("mixed", "double")

_LOGISTIC_CONSTRAINTS = {
    "C": [P.Interval(numbers.Real, 0, None, "neither")],
    "max_iter": [P.Interval(numbers.Integral, 1, None), P.NONE],
    "tol": [P.Interval(numbers.Real, 0, None, "neither")],
    "optimizer": [P.Options(_OPTIMIZERS)],
    "batch_size": [P.Interval(numbers.Integral, 1, None), P.NONE],
    "weight_decay": [P.Interval(numbers.Real, 0, None)],
    "precision": [P.Options(_PRECISIONS)],
    "seed": [P.SEED, P.NONE],
    "device": [P.DEVICE, P.NONE],
    "progress": [P.CALLABLE, P.NONE],
}

_LOGISTIC_PARAMETERS = """C : float, default=1.0
        Inverse L2 strength, as scikit-learn's (the intercept is not penalised).
    max_iter : int or None, default=None
        L-BFGS iterations, or RAdam epochs; ``None``: 1000 / 100.
    tol : float, default=1e-4
        L-BFGS: the largest gradient entry of the per-row objective it stops at (scikit-learn's default).
    optimizer : {"lbfgs", "radam"}, default="lbfgs"
        Full-batch L-BFGS, or the paper's set-up (RAdam, learning rate 1e-3, minibatches).
    batch_size : int or None, default=None
        RAdam's minibatch rows (``None``: 64); L-BFGS: rows per chunk of the full-batch gradient.
    weight_decay : float, default=0.1
        RAdam's decoupled weight decay.
    precision : {"mixed", "double"}, default="mixed"
        L-BFGS: ``"mixed"`` keeps the matrix in float32 for the two matrix-vector products (2-3x faster),
        with weights, losses and gradient sums in float64; ``"double"`` is float64 throughout.
    seed : int or None, default=0
        Seeds the fit's own generator (RAdam's minibatch order); the global random state is not touched.
    device : str, default="auto"
        Where torch trains (``fairdash.device.resolve_device``); prediction is always on the CPU.
    progress : callable or None, default=None
        ``progress(fraction, message)``, told how the fit advances."""

_LOGISTIC_ATTRIBUTES = """coef_ : ndarray of shape (1, n_features)
        The weights ``w`` of the logit ``w.x + b`` of ``q(x) = P(ybar=1 | x)``.
    intercept_ : ndarray of shape (1,)
        The intercept ``b``.
    classes_ : ndarray of shape (2,)
        The two labels seen at fit, sorted; the second is the positive label.
    n_features_in_ : int
        Number of feature columns seen at fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of a data frame ``X`` at fit (only then).
    n_iter_ : ndarray of shape (1,)
        Iterations (L-BFGS) or epochs (RAdam) run.
    converged_ : bool
        Whether L-BFGS reached ``tol``.
    transition_table_ : TransitionTable, ConditionalTables or None
        The table trained on (``None`` for the plain model).
    d_ : ndarray of shape (n_groups, 2) or None
        ``d[s][ybar] = P(y=1 | ybar, s)`` (``None`` with strata).
    base_rates_ : ndarray of shape (n_groups,)
        Each group's positive rate in the training labels.
    group_shares_ : ndarray of shape (n_groups,)
        Each group's share of the training rows.
    n_groups_ : int
        Number of groups of ``s``.
    target_rate_ : float or None
        The ``PR_t`` trained on, where one number (``None`` for explicit TPR/TNR targets, per-stratum presets
        and the plain model).
    device_ : str
        Where the fit ran.
    fit_seconds_ : float
        Wall time of the fit."""


class _LogisticFit(L.FairModelBase):
    """Fit, prediction and safe state shared by FairLR and LR (the plain model has no target)."""

    # ---------------------------------------------------------------------------------------------
    # Fitting
    # ---------------------------------------------------------------------------------------------
    def _fit(self, X, y, s, strata):
        import torch

        from ..device import resolve_device
        from ..progress import as_progress

        t0 = time.perf_counter()
        report = as_progress(self.progress)
        X, y, s, strata, d_rows = L.begin_fair_fit(self, X, y, s, strata)

        dev = resolve_device(self.device)
        self.device_ = str(dev)
        dtype = torch.float64
        log_d = L.log_d_terms(d_rows, dtype=dtype, device=dev)
        yt = torch.as_tensor(y, device=dev)
        w0, w1 = L.select_log_d(log_d, yt)
        mixed = self.precision == "mixed" and self.optimizer == "lbfgs"
        Xt = place_matrix(X, torch.float32 if mixed else dtype, dev)
        report(0.0, "fitting logistic regression")
        if self.optimizer == "lbfgs":
            coef, intercept, n_iter, converged = self._fit_lbfgs(Xt, w0, w1, report)
        else:
            coef, intercept, n_iter, converged = self._fit_radam(Xt, w0, w1, report)
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([intercept])
        self.n_iter_ = np.array([n_iter])
        self.converged_ = bool(converged)
        if not converged:
            warnings.warn(
                f"FairLR stopped after {n_iter} iterations before reaching tol={self.tol:g}; "
                "increase max_iter for a tighter fit.", RuntimeWarning, stacklevel=2,
            )
        self.fit_seconds_ = time.perf_counter() - t0
        report(1.0, "done")
        return self

    def _fit_lbfgs(self, Xt, w0, w1, report):
        max_iter = 1000 if self.max_iter is None else int(self.max_iter)
        return lbfgs_logistic(Xt, w0, w1, C=self.C, tol=self.tol, max_iter=max_iter,
                              chunk_rows=self.batch_size, report=report)

    def _fit_radam(self, Xt, w0, w1, report):
        import torch

        from ..device import torch_generator

        n, p = Xt.shape
        dev = w0.device
        epochs = 100 if self.max_iter is None else int(self.max_iter)
        bs = int(self.batch_size or 64)
        # zero start, as torch.nn.Linear zeroed after its (global-generator) random initialisation was
        weight = torch.zeros(1, p, dtype=Xt.dtype, device=dev, requires_grad=True)
        bias = torch.zeros(1, dtype=Xt.dtype, device=dev, requires_grad=True)
        opt = torch.optim.RAdam(
            [{"params": [weight], "weight_decay": float(self.weight_decay)},
             {"params": [bias], "weight_decay": 0.0}],
            lr=1e-3, decoupled_weight_decay=True,
        )
        gen = torch_generator(self.seed)
        for epoch in range(epochs):
            order = torch.randperm(n, generator=gen)
            for i in range(0, n, bs):
                idx = order[i:i + bs]
                z = torch.nn.functional.linear(Xt[idx.to(Xt.device)].to(dev, non_blocking=True), weight, bias).squeeze(-1)
                idx = idx.to(dev)
                ll = L.fair_log_likelihood(*L.logistic_log_q(z), w0[idx], w1[idx])
                loss = -ll.mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            report((epoch + 1) / epochs, f"epoch {epoch + 1} of {epochs}")
        coef = weight.detach().cpu().numpy().ravel().astype(np.float64)
        return coef, float(bias.detach().cpu().item()), epochs, True

    # ---------------------------------------------------------------------------------------------
    # Prediction (numpy, float64, on the CPU: identical wherever the model was trained)
    # ---------------------------------------------------------------------------------------------
    def decision_function(self, X):
        """The logit ``w.x + b`` of ``q(x) = P(ybar=1 | x)``."""
        self._check_fitted()
        X = I.predict_X(self, X)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict_proba(self, X):
        """``(n, 2)``: ``[1 - q(x), q(x)]`` with ``q(x) = P(ybar=1 | x)``."""
        q = expit(self.decision_function(X))
        return np.column_stack([1.0 - q, q])

    def predict(self, X):
        """``q(x) > 0.5``: the positive label ``classes_[1]``, else ``classes_[0]``."""
        return I.labels(self, self.decision_function(X) > 0.0)

    # ---------------------------------------------------------------------------------------------
    # Safe state
    # ---------------------------------------------------------------------------------------------
    def get_state(self) -> dict:
        """Arrays + JSON metadata (see ``fairdash.models.state``); no pickle."""
        self._check_fitted()
        arrays, meta = L.fair_target_state(self)
        arrays.update({"coef": self.coef_, "intercept": self.intercept_})
        meta["fitted"].update({"n_iter": int(self.n_iter_[0]), "converged": bool(self.converged_)})
        return make_state(self, arrays, meta)

    @classmethod
    def from_state(cls, state: dict):
        """A fitted model from ``get_state()``'s output (predictions identical, on the CPU)."""
        model, arrays, f = L.fair_model_from_state(cls, state)
        model.coef_ = np.asarray(arrays["coef"], dtype=np.float64).reshape(1, -1)
        model.intercept_ = np.asarray(arrays["intercept"], dtype=np.float64).reshape(1)
        model.n_iter_ = np.array([int(f["n_iter"])])
        model.converged_ = bool(f["converged"])
        return model


class FairLR(I.BinaryClassifierMixin, ClassifierMixin, L.FairTargetMixin, _LogisticFit, BaseEstimator):
    """Fair logistic regression (the paper's FairLR): logistic regression trained on the target-label
    likelihood. ``fit(X, y, s)``; ``s`` is not needed to predict.

    Parameters
    ----------
    target : TargetSpec or None, default=None
        What to train for (:func:`fairdash.target.target_spec.make_target_spec`: criterion, ``PR_t`` or preset,
        keep-rate ``delta``, explicit TPR/TNR targets, per-stratum rates). ``None``: the paper's default,
        demographic parity at the ``avg`` preset. A frozen value, so ``clone`` keeps it.
    target_rate : float, {"min", "avg", "max"} or None, default=None
        Shorthand for ``target=make_target_spec(target_rate=...)`` (demographic parity at that ``PR_t``).
        Given with ``target``, it must say the same as ``target``; else a ``FairDashError``.
    %s

    Attributes
    ----------
    %s
    """

    _parameter_constraints = {
        "target": [P.InstanceOf(TargetSpec, "a TargetSpec (fairdash.target.target_spec.make_target_spec)"), P.NONE],
        "target_rate": [P.Interval(numbers.Real, 0, 1, "neither"), P.Options(("min", "avg", "max")), P.NONE],
        **_LOGISTIC_CONSTRAINTS,
    }

    def __init__(self, target=None, target_rate=None, C=1.0, max_iter=None, tol=1e-4, optimizer="lbfgs",
                 batch_size=None, weight_decay=0.1, precision="mixed", seed=0, device="auto", progress=None):
        self.target = target
        self.target_rate = target_rate
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.weight_decay = weight_decay
        self.precision = precision
        self.seed = seed
        self.device = device
        self.progress = progress


FairLR.__doc__ = FairLR.__doc__ % (_LOGISTIC_PARAMETERS, _LOGISTIC_ATTRIBUTES)


class LR(I.BinaryClassifierMixin, ClassifierMixin, _LogisticFit, BaseEstimator):
    """Plain logistic regression: FairLR's fit with the identity table ``d[s] = (0, 1)`` (no target), the
    problem of ``sklearn.linear_model.LogisticRegression(C=C)``. ``s`` is accepted at fit and not used.

    Parameters
    ----------
    %s

    Attributes
    ----------
    %s
    """

    _parameter_constraints = dict(_LOGISTIC_CONSTRAINTS)

    def __init__(self, C=1.0, max_iter=None, tol=1e-4, optimizer="lbfgs", batch_size=None, weight_decay=0.1,
                 precision="mixed", seed=0, device="auto", progress=None):
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.weight_decay = weight_decay
        self.precision = precision
        self.seed = seed
        self.device = device
        self.progress = progress


LR.__doc__ = LR.__doc__ % (_LOGISTIC_PARAMETERS, _LOGISTIC_ATTRIBUTES)
