"""FairLR: logistic regression trained on the fair (target-label) likelihood; LR: the same with the
identity table (docs/METHOD.md, "The fair likelihood").

``q(x) = sigmoid(w.x + b) = P(ybar=1 | x)`` and the observed ``y`` has likelihood
``d[s][0] (1 - q) + d[s][1] q``. The objective is scikit-learn's: ``sum_i -log P(y_i | x_i, s_i)
+ ||w||^2 / (2 C)`` with the intercept not penalised, so ``LR`` matches
``sklearn.linear_model.LogisticRegression(C=C)``.

Optimisers: ``"lbfgs"`` (default) is full-batch ``torch.optim.LBFGS`` with a strong-Wolfe line search
and an analytic gradient (the gradient of the fair log-likelihood with respect to the logit is
``r - q``, where ``r = P(ybar=1 | y, x, s)`` is the posterior of the target label), evaluated in row
chunks when the matrix is large, so it is deterministic and memory-bounded; preconditioned, and run to
where the answer no longer depends on the order of the sums (``solver.solve_logistic``), so another CPU
or another row order gives the same probabilities within ``_version.SAME_NUMBERS_BOUND``. ``"radam"`` is the paper's
set-up: RAdam, learning rate 1e-3, minibatches of 64, decoupled weight decay.
"""
from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin

from ..device import resolve_device, torch_generator
from ..progress import as_progress
from ..targeting.target_spec import TargetSpec
from .core import inputs as I
from .core import likelihood as L
from .core import params as P
from .core.base import FITTED_INPUT_ATTRIBUTES, example
from .core.solver import place_matrix, solve_logistic
from .core.state import make_state

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
    "random_state": [P.SEED, P.NONE],
    "device": [P.DEVICE, P.NONE],
    "progress": [P.CALLABLE, P.NONE],
}

_LOGISTIC_PARAMETERS = """C : float, default=1.0
        Inverse L2 strength, as scikit-learn's (the intercept is not penalised).
    max_iter : int or None, default=None
        L-BFGS iterations, or RAdam epochs; ``None``: 1000 / 100.
    tol : float, default=1e-9
        L-BFGS: the largest entry of the Newton step of the per-row objective, in the norm of its Hessian,
        at which it stops (``solver.solve_logistic``): a bound on the distance to the optimum, where the
        answer no longer depends on the order of the sums (another CPU, the rows shuffled).
    optimizer : {"lbfgs", "radam"}, default="lbfgs"
        Full-batch L-BFGS, or the paper's set-up (RAdam, learning rate 1e-3, minibatches).
    batch_size : int or None, default=None
        RAdam's minibatch rows (``None``: 64); L-BFGS: rows per chunk of the full-batch gradient.
    weight_decay : float, default=0.1
        RAdam's decoupled weight decay.
    precision : {"mixed", "double"}, default="mixed"
        L-BFGS: ``"mixed"`` runs a first round on the float32 matrix (its two matrix-vector products are
        2-3x faster; weights, losses and gradient sums stay float64), then refines in float64 to ``tol``;
        ``"double"`` is float64 throughout. Both end at the same optimum (``solver.solve_logistic``).
    random_state : int or None, default=0
        Seeds the fit's own generator (RAdam's minibatch order); the global random state is not touched.
    device : str, default="auto"
        Where torch trains (``fairdash.device.resolve_device``); prediction is always on the CPU.
    progress : callable or None, default=None
        ``progress(fraction, message)``, told how the fit advances."""

_LOGISTIC_ATTRIBUTES = """coef_ : ndarray of shape (1, n_features)
        The weights ``w`` of the logit ``w.x + b`` of ``q(x) = P(ybar=1 | x)``.
    intercept_ : ndarray of shape (1,)
        The intercept ``b``.
    """ + FITTED_INPUT_ATTRIBUTES + """
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


        t0 = time.perf_counter()
        report = as_progress(self.progress)
        X, y, s, strata, d_rows = L.begin_fair_fit(self, X, y, s, strata)

        dev = resolve_device(self.device)
        self.device_ = str(dev)
        dtype = torch.float64
        log_d = L.log_d_terms(d_rows, dtype=dtype, device=dev)
        yt = torch.as_tensor(y, device=dev)
        w0, w1 = L.select_log_d(log_d, yt)
        report(0.0, "fitting logistic regression")
        if self.optimizer == "lbfgs":
            coef, intercept, n_iter, converged = self._fit_lbfgs(X, w0, w1, dev, report)
        else:
            coef, intercept, n_iter, converged = self._fit_radam(place_matrix(X, dtype, dev), w0, w1, report)
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

    def _fit_lbfgs(self, X, w0, w1, dev, report):
        max_iter = 1000 if self.max_iter is None else int(self.max_iter)
        return solve_logistic(X, w0, w1, C=self.C, tol=float(self.tol), max_iter=max_iter,
                              mixed=self.precision == "mixed", dev=dev, chunk_rows=self.batch_size, report=report)

    def _fit_radam(self, Xt, w0, w1, report):
        import torch


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
        gen = torch_generator(self.random_state)
        for epoch in range(epochs):
            order = torch.randperm(n, generator=gen)
            for i in range(0, n, bs):
                idx = order[i:i + bs]
                rows = Xt[idx.to(Xt.device)].to(dev, non_blocking=True)
                z = torch.nn.functional.linear(rows, weight, bias).squeeze(-1)
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
        """Arrays + JSON metadata (see ``fairdash.models.core.state``); no pickle."""
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
        What to train for (:func:`fairdash.targeting.target_spec.make_target_spec`: criterion, ``PR_t`` or preset,
        keep-rate ``delta``, explicit TPR/TNR targets, per-stratum rates). ``None``: the paper's default,
        demographic parity at the ``avg`` preset. A frozen value, so ``clone`` keeps it.
    %s

    Attributes
    ----------
    %s

    %s
    """

    _parameter_constraints = {
        "target": [P.InstanceOf(TargetSpec, "a TargetSpec (fairdash.targeting.target_spec.make_target_spec)"), P.NONE],
        **_LOGISTIC_CONSTRAINTS,
    }

    def __init__(self, *, target=None, C=1.0, max_iter=None, tol=1e-9, optimizer="lbfgs", batch_size=None,
                 weight_decay=0.1, precision="mixed", random_state=0, device="auto", progress=None):
        self.target = target
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.weight_decay = weight_decay
        self.precision = precision
        self.random_state = random_state
        self.device = device
        self.progress = progress


FairLR.__doc__ = FairLR.__doc__ % (_LOGISTIC_PARAMETERS, _LOGISTIC_ATTRIBUTES, example(
    "from fairdash.models.fair_lr import FairLR\n    >>> from fairdash.targeting.target_spec import make_target_spec",
    'FairLR(target=make_target_spec(target_rate=0.4), device="cpu")',
    "    >>> model.predict(X[:3]).shape\n    (3,)\n    >>> round(float(model.target_rate_), 2)\n    0.4"))


class LR(I.BinaryClassifierMixin, ClassifierMixin, _LogisticFit, BaseEstimator):
    """Plain logistic regression: FairLR's fit with the identity table ``d[s] = (0, 1)`` (no target), the
    problem of ``sklearn.linear_model.LogisticRegression(C=C)``. ``s`` is accepted at fit and not used.

    Parameters
    ----------
    %s

    Attributes
    ----------
    %s

    %s
    """

    _parameter_constraints = dict(_LOGISTIC_CONSTRAINTS)

    def __init__(self, *, C=1.0, max_iter=None, tol=1e-9, optimizer="lbfgs", batch_size=None, weight_decay=0.1,
                 precision="mixed", random_state=0, device="auto", progress=None):
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.weight_decay = weight_decay
        self.precision = precision
        self.random_state = random_state
        self.device = device
        self.progress = progress


LR.__doc__ %= (_LOGISTIC_PARAMETERS, _LOGISTIC_ATTRIBUTES, example("from fairdash.models.fair_lr import LR",
                                                                   'LR(device="cpu")'))
