"""FairGP: a sparse variational GP classifier trained on the fair (target-label) likelihood; GP: the
same with the identity table (docs/METHOD.md, "The fair likelihood").

Three parts, kept apart as in the gpytorch examples:

- ``SVGPModel``: the GP prior and variational family: learned inducing points (initialised by a
  sample of training rows stratified by ``(s, y)``), full-covariance Cholesky variational
  distribution, constant mean, ``ScaleKernel(RBFKernel(ard_num_dims=D))``.
- the likelihood: ``likelihood.FairBernoulliLikelihood`` (probit link, Gauss-Hermite expectation of
  the fair log-likelihood), given each minibatch's ``d`` weights.
- the training loop (``_train``): minibatch Adam on the negative ``VariationalELBO``, stopping when
  the epoch's ELBO stops improving, after ``max_epochs``, or after ``max_seconds``; the parameters of
  the epoch with the best ELBO are kept. It trains in ``device.training_dtype``'s precision: float64
  on the CPU, so that the same fit on another CPU gives the same numbers, and on a GPU with fast float64; else float32.

Prediction integrates over the latent variance: ``P(ybar=1 | x) = Phi(mu / sqrt(1 + var))``. It is
always computed on the CPU in float64 from the stored state, so a model trained on a GPU and the same
model restored by ``from_state`` predict identically.
"""
from __future__ import annotations

import math
import numbers
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ..device import resolve_device, torch_generator, torch_threads, training_dtype
from ..progress import as_progress
from ..targeting.target_spec import TargetSpec
from .core import inputs as I
from .core import likelihood as L
from .core import params as P
from .core.base import FITTED_INPUT_ATTRIBUTES, example
from .core.state import make_state

MAX_INDUCING = 2000
PREDICTOR_PREFIX = "predictor."  # the predictor's state_dict in a model file
JITTER = 1e-4  # the variational strategy's jitter, the same in training (any precision) and the float64 predictor


def _svgp_class():
    import gpytorch

    class SVGPModel(gpytorch.models.ApproximateGP):
        """Sparse variational GP prior with learned inducing points (Hensman et al., 2015)."""

        def __init__(self, *, inducing_points, lengthscale=None, natural=False):
            m, dims = inducing_points.shape
            if natural:
                dist = gpytorch.variational.TrilNaturalVariationalDistribution(m)
            else:
                dist = gpytorch.variational.CholeskyVariationalDistribution(m)
            strategy = gpytorch.variational.VariationalStrategy(
                self, inducing_points, dist, learn_inducing_locations=True, jitter_val=JITTER
            )
            super().__init__(strategy)
            self.q_u_ = (dist,)  # q(u), held in a tuple so that it is not registered twice as a submodule
            self.mean_module = gpytorch.means.ConstantMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=dims))
            if lengthscale is not None:
                self.covar_module.base_kernel.lengthscale = lengthscale

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

    return SVGPModel


def stratified_rows(y, s, m: int, rng) -> np.ndarray:
    """``m`` training row indices, sampled within each ``(s, y)`` cell in proportion to its size
    (at least one row per non-empty cell)."""
    cells = {}
    for i, key in enumerate(zip(s.tolist(), y.tolist())):
        cells.setdefault(key, []).append(i)
    n = y.shape[0]
    picks = []
    keys = sorted(cells)
    quotas = {k: max(1, int(round(m * len(cells[k]) / n))) for k in keys}
    while sum(quotas.values()) > m:  # rounding up may overshoot
        k = max(quotas, key=quotas.get)
        quotas[k] -= 1
    for k in keys:
        rows = np.asarray(cells[k])
        picks.append(rng.choice(rows, size=min(quotas[k], rows.size), replace=False))
    return np.sort(np.concatenate(picks))


def auto_batch_size(n: int) -> int:
    """Minibatch rows when ``batch_size=None``: about 8 steps per epoch, between 256 and 4096 rows.
    A step's cost is dominated by the inducing-point algebra, so large batches cost little extra."""
    return int(min(4096, max(256, n // 8)))


_GP_CONSTRAINTS = {
    "num_inducing": [P.Interval(numbers.Integral, 1, None)],
    "batch_size": [P.Interval(numbers.Integral, 1, None), P.NONE],
    "max_epochs": [P.Interval(numbers.Integral, 1, None)],
    "lr": [P.Interval(numbers.Real, 0, None, "neither")],
    "max_seconds": [P.Interval(numbers.Real, 0, None, "neither"), P.NONE],
    "tol": [P.Interval(numbers.Real, 0, None)],
    "patience": [P.Interval(numbers.Integral, 1, None)],
    "variational_optimizer": [P.Options(("ngd", "adam"))],
    "ngd_lr": [P.Interval(numbers.Real, 0, None, "neither")],
    "random_state": [P.SEED, P.NONE],
    "device": [P.DEVICE, P.NONE],
    "progress": [P.CALLABLE, P.NONE],
}

_GP_PARAMETERS = """num_inducing : int, default=200
        Inducing points (capped at the number of rows and at 2000), initialised by a sample of training
        rows stratified by ``(s, y)``.
    batch_size : int or None, default=None
        Minibatch rows (``None``: ``auto_batch_size(n)``).
    max_epochs : int, default=100
        Most epochs.
    lr : float, default=0.02
        Adam's learning rate (the hyperparameters; all parameters with ``variational_optimizer="adam"``).
    max_seconds : float or None, default=55.0
        Time cap for training (``None``: none). When it ends training the result depends on the machine's
        speed: pass ``None`` for strict repeats.
    tol : float, default=5e-4
        Stop when an epoch improves the ELBO per row by less than this, ``patience`` times in a row.
    patience : int, default=2
        See ``tol``.
    variational_optimizer : {"ngd", "adam"}, default="ngd"
        Natural gradient descent on q(u) (with Adam on the hyperparameters), or Adam on everything.
    ngd_lr : float, default=0.1
        The natural-gradient step.
    random_state : int or None, default=0
        Seeds the fit's own generators (the inducing-point sample, minibatch order and q(u)'s starting
        noise); the global random state is left as it was.
    device : str, default="auto"
        Where torch trains (``fairdash.device.resolve_device``); prediction is always on the CPU in float64.
    progress : callable or None, default=None
        ``progress(fraction, message)``, told of every epoch."""

_GP_ATTRIBUTES = FITTED_INPUT_ATTRIBUTES + """
    inducing_points_ : ndarray of shape (num_inducing, n_features_in_)
        The learned inducing points.
    variational_mean_, variational_chol_ : ndarray
        q(u) over the whitened inducing values: its mean and the Cholesky factor of its covariance.
    mean_constant_, outputscale_ : float
        The constant prior mean and the kernel's output scale.
    lengthscale_ : ndarray of shape (n_features_in_,)
        The RBF kernel's length scale per feature.
    predictor_state_ : dict of str to ndarray
        The float64 CPU predictor's full ``state_dict()`` (what the model file stores and prediction loads).
    elbo_history_ : ndarray of shape (n_epochs_,)
        The ELBO per row after each epoch.
    n_epochs_ : int
        Epochs run.
    stop_reason_ : str
        ``"plateau"`` (ELBO converged), ``"max_epochs"`` or ``"time"`` (``max_seconds`` reached).
    transition_table_, d_, base_rates_, group_shares_, n_groups_, target_rate_ :
        The target trained on, as FairLR's (the plain GP: identity table, ``target_rate_`` None).
    device_ : str
        Where the fit ran.
    fit_seconds_ : float
        Wall time of the fit."""


class _SVGPFit(L.FairModelBase):
    """Fit, prediction and safe state shared by FairGP and GP (the plain model has no target)."""

    _fitted_attr = "inducing_points_"

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
        rng = np.random.default_rng(self.random_state)

        n = X.shape[0]
        m = int(self.num_inducing)
        cap = min(n, MAX_INDUCING)
        if m > cap:
            warnings.warn(f"num_inducing={m} capped at {cap}.", RuntimeWarning, stacklevel=2)
            m = cap
        rows = stratified_rows(y, s, m, rng)
        # lengthscale initialised from the median distance between a sample of rows
        sample = X[rng.choice(n, size=min(n, 300), replace=False)]
        sq = (sample ** 2).sum(1)
        dist2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * sample @ sample.T, 0.0)
        med = float(np.sqrt(np.median(dist2[np.triu_indices_from(dist2, 1)]))) if sample.shape[0] > 1 else 1.0
        ls0 = max(med, 1e-2)

        dtype = training_dtype(dev)
        Xt = torch.tensor(X, dtype=dtype, device=dev)  # a copy (X may be read-only, which torch cannot share)
        log_d = L.log_d_terms(d_rows, dtype=dtype, device=dev)
        yt = torch.as_tensor(y, device=dev)
        w0, w1 = L.select_log_d(log_d, yt)
        yt = yt.to(dtype)

        natural = self.variational_optimizer == "ngd"
        model = _svgp_class()(inducing_points=Xt[torch.as_tensor(rows, device=dev)].clone(), lengthscale=ls0,
                              natural=natural).to(dev, dtype)
        likelihood = L.FairBernoulliLikelihood().to(dev, dtype)
        history = self._train(model, likelihood, Xt, yt, w0, w1, report, t0)
        self.elbo_history_ = np.asarray(history, dtype=np.float64)
        self.n_epochs_ = len(history)
        self._store_params(model)
        self.predictor_state_ = self._predictor_state()
        self._build_predictor()
        self.fit_seconds_ = time.perf_counter() - t0
        report(1.0, "done")
        return self

    def _train(self, model, likelihood, Xt, yt, w0, w1, report, t0):
        import gpytorch
        import torch

        n = Xt.shape[0]
        bs = int(min(self.batch_size or auto_batch_size(n), n))
        model.train()
        likelihood.train()
        mll = gpytorch.mlls.VariationalELBO(likelihood, model, num_data=n)
        self._initialise_q_u(model, Xt)
        if self.variational_optimizer == "ngd":
            var_params = list(model.variational_parameters())
            ids = {id(p) for p in var_params}
            hyper = [p for p in model.parameters() if id(p) not in ids]
            opts = [gpytorch.optim.NGD(var_params, num_data=n, lr=float(self.ngd_lr)),
                    torch.optim.Adam(hyper, lr=float(self.lr))]
        else:
            opts = [torch.optim.Adam(list(model.parameters()), lr=float(self.lr))]
        gen = torch_generator(self.random_state)
        history, best, stale, best_state = [], -math.inf, 0, None
        self.stop_reason_ = "max_epochs"
        max_epochs = int(self.max_epochs)
        for epoch in range(max_epochs):
            order = torch.randperm(n, generator=gen).to(Xt.device)
            total = 0.0
            for i in range(0, n, bs):
                idx = order[i:i + bs]
                for opt in opts:
                    opt.zero_grad(set_to_none=True)
                out = model(Xt[idx])
                loss = -mll(out, yt[idx], w0=w0[idx], w1=w1[idx])
                loss.backward()
                for opt in opts:
                    opt.step()
                total += float(loss.detach()) * idx.shape[0]
            elbo = -total / n
            history.append(elbo)
            report((epoch + 1) / max_epochs, f"epoch {epoch + 1}: ELBO per row {elbo:.4f}")
            if elbo > best:
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            if elbo > best + float(self.tol):
                best, stale = elbo, 0
            else:
                stale += 1
                best = max(best, elbo)
                if stale >= int(self.patience):
                    self.stop_reason_ = "plateau"
                    break
            if self.max_seconds is not None and time.perf_counter() - t0 > float(self.max_seconds):
                self.stop_reason_ = "time"
                break
        if best_state is not None:  # keep the epoch with the best ELBO, not merely the last one
            model.load_state_dict(best_state)
        return history

    def _initialise_q_u(self, model, Xt):
        """gpytorch initialises q(u) from the prior on the model's first call, with a little noise drawn from
        torch's global generator (it takes no generator of its own). That call is made here, on the global
        generator seeded with ``random_state`` inside ``torch.random.fork_rng``, which puts the caller's random state
        back afterwards: the fit is reproducible and leaves no trace in the global state."""
        import torch

        dev = Xt.device
        with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []), torch.no_grad():
            if self.random_state is not None:
                torch.default_generator.manual_seed(int(self.random_state))
                if dev.type == "cuda":
                    with torch.cuda.device(dev):
                        torch.cuda.manual_seed(int(self.random_state))
            model(Xt[:1])

    def _store_params(self, model):
        vs = model.variational_strategy
        dist = model.q_u_[0]
        k = model.covar_module
        self.inducing_points_ = vs.inducing_points.detach().cpu().double().numpy()
        import torch

        with torch.no_grad():
            q = dist()  # q(u) over the whitened inducing values, whatever the parameterisation
            mean = q.mean.detach().cpu().double()
            cov = q.covariance_matrix.detach().cpu().double()
            cov = 0.5 * (cov + cov.mT)
            chol, info = torch.linalg.cholesky_ex(cov)
            if int(info) != 0:
                chol = torch.linalg.cholesky(cov + 1e-8 * torch.eye(cov.shape[-1], dtype=cov.dtype))
        self.variational_mean_ = mean.numpy()
        self.variational_chol_ = chol.numpy()
        self.mean_constant_ = float(model.mean_module.constant.detach().cpu())
        self.lengthscale_ = k.base_kernel.lengthscale.detach().cpu().double().numpy().reshape(-1)
        self.outputscale_ = float(k.outputscale.detach().cpu())

    # ---------------------------------------------------------------------------------------------
    # Prediction: CPU, float64, from the stored parameters
    # ---------------------------------------------------------------------------------------------
    def _predictor_state(self) -> dict:
        """The float64 CPU predictor's full ``state_dict()`` (as numpy arrays) from the fitted values: a
        predictor is built, called once (gpytorch then marks q(u) as initialised: q(u) is not drawn from
        the prior again when the state is loaded) and given the fitted values through its parameters."""
        import torch

        z = torch.as_tensor(self.inducing_points_, dtype=torch.float64)
        model = _svgp_class()(inducing_points=z).double()
        with torch.random.fork_rng(devices=[]), torch.no_grad():  # that call's noise: the caller's state untouched
            model(z[:1])
        dist = model.q_u_[0]
        with torch.no_grad():
            dist.variational_mean.copy_(torch.as_tensor(self.variational_mean_))
            dist.chol_variational_covar.copy_(torch.as_tensor(self.variational_chol_))
            model.mean_module.constant.fill_(self.mean_constant_)
            model.covar_module.base_kernel.lengthscale = torch.as_tensor(self.lengthscale_).reshape(1, -1)
            model.covar_module.outputscale = torch.tensor(self.outputscale_, dtype=torch.float64)
        return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}

    def _build_predictor(self):
        """The predictor: a float64 SVGP on the CPU with ``predictor_state_`` loaded (``load_state_dict``)."""
        import torch

        z = torch.as_tensor(self.inducing_points_, dtype=torch.float64)
        model = _svgp_class()(inducing_points=z).double()
        model.load_state_dict({k: torch.as_tensor(v) for k, v in self.predictor_state_.items()})
        model.eval()
        self._predictor = model

    def latent(self, X, batch: int = 4096):
        """The latent ``f``'s posterior mean and variance at ``X``: ``(mu, var)``."""
        import gpytorch
        import torch

        self._check_fitted()
        X = I.predict_X(self, X)
        if getattr(self, "_predictor", None) is None:
            self._build_predictor()
        mus, vs = [], []
        # on one thread: the same sums in the same order in any process, however busy the machine (a thread count
        # chosen by load moved FairGP's float64 probabilities by 2e-9 between two processes)
        with torch_threads(1), torch.no_grad(), gpytorch.settings.fast_pred_var(False):
            for i in range(0, X.shape[0], batch):
                f = self._predictor(torch.tensor(X[i:i + batch]))
                mus.append(f.mean.numpy())
                vs.append(f.variance.clamp_min(0.0).numpy())
        if not mus:
            return np.zeros(0), np.zeros(0)
        return np.concatenate(mus), np.concatenate(vs)

    def decision_function(self, X):
        """``mu / sqrt(1 + var)``: the probit of ``P(ybar=1 | x)`` (its sign is the prediction)."""
        mu, var = self.latent(X)
        return mu / np.sqrt(1.0 + var)

    def predict_proba(self, X):
        """``(n, 2)``: ``[1 - p, p]`` with ``p = Phi(mu / sqrt(1 + var))``."""
        from scipy.special import ndtr

        p = ndtr(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """``P(ybar=1 | x) > 0.5``: the positive label ``classes_[1]``, else ``classes_[0]``."""
        return I.labels(self, self.decision_function(X) > 0.0)

    # ---------------------------------------------------------------------------------------------
    # Safe state
    # ---------------------------------------------------------------------------------------------
    _ARRAYS = ("inducing_points_", "variational_mean_", "variational_chol_", "lengthscale_", "elbo_history_")

    def get_state(self) -> dict:
        """Arrays + JSON metadata (see ``fairdash.models.core.state``); no pickle."""
        self._check_fitted()
        arrays, meta = L.fair_target_state(self)
        arrays.update({name.rstrip("_"): getattr(self, name) for name in self._ARRAYS})
        arrays.update({PREDICTOR_PREFIX + k: v for k, v in self.predictor_state_.items()})
        meta["fitted"].update({"mean_constant": self.mean_constant_, "outputscale": self.outputscale_,
                               "n_epochs": int(self.n_epochs_), "stop_reason": self.stop_reason_})
        return make_state(self, arrays, meta)

    @classmethod
    def from_state(cls, state: dict):
        """A fitted model from ``get_state()``'s output (predictions identical, on the CPU)."""
        model, arrays, f = L.fair_model_from_state(cls, state)
        for name in cls._ARRAYS:
            setattr(model, name, np.asarray(arrays[name.rstrip("_")], dtype=np.float64))
        model.mean_constant_ = float(f["mean_constant"])
        model.outputscale_ = float(f["outputscale"])
        model.n_epochs_ = int(f["n_epochs"])
        model.stop_reason_ = f.get("stop_reason", "unknown")
        stored = {k[len(PREDICTOR_PREFIX):]: np.asarray(v) for k, v in arrays.items() if k.startswith(PREDICTOR_PREFIX)}
        # a model file of format 1 holds the fitted values only: its predictor state is made from them
        model.predictor_state_ = stored or model._predictor_state()
        model._build_predictor()
        return model

    def __getstate__(self):  # joblib workers copy estimators; the predictor is rebuilt on demand
        state = self.__dict__.copy()
        state.pop("_predictor", None)
        return state


class FairGP(I.BinaryClassifierMixin, ClassifierMixin, L.FairTargetMixin, _SVGPFit, BaseEstimator):
    """Fair sparse variational GP classifier (the paper's FairGP): trained on the target-label likelihood.
    ``fit(X, y, s)``; ``s`` is not needed to predict.

    Parameters
    ----------
    target : TargetSpec or None, default=None
        What to train for (:func:`fairdash.targeting.target_spec.make_target_spec`); ``None``: the paper's default,
        demographic parity at the ``avg`` preset. A frozen value, so ``clone`` keeps it.
    %s

    Attributes
    ----------
    %s

    %s
    """

    _parameter_constraints = {
        "target": [P.InstanceOf(TargetSpec, "a TargetSpec (fairdash.targeting.target_spec.make_target_spec)"), P.NONE],
        **_GP_CONSTRAINTS,
    }

    def __init__(self, *, target=None, num_inducing=200, batch_size=None, max_epochs=100, lr=0.02, max_seconds=55.0,
                 tol=5e-4, patience=2, variational_optimizer="ngd", ngd_lr=0.1, random_state=0, device="auto",
                 progress=None):
        self.target = target
        self.num_inducing = num_inducing
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.lr = lr
        self.max_seconds = max_seconds
        self.tol = tol
        self.patience = patience
        self.variational_optimizer = variational_optimizer
        self.ngd_lr = ngd_lr
        self.random_state = random_state
        self.device = device
        self.progress = progress


_GP_EXAMPLE = "num_inducing=8, max_epochs=2, max_seconds=None, device=\"cpu\""
FairGP.__doc__ = FairGP.__doc__ % (_GP_PARAMETERS, _GP_ATTRIBUTES, example(
    "from fairdash.models.fair_gp import FairGP\n    >>> from fairdash.targeting.target_spec import make_target_spec",
    f"FairGP(target=make_target_spec(target_rate=0.4), {_GP_EXAMPLE})",
    "    >>> model.predict_proba(X[:3]).shape\n    (3, 2)"))


class GP(I.BinaryClassifierMixin, ClassifierMixin, _SVGPFit, BaseEstimator):
    """Plain sparse variational GP classifier: FairGP's fit with the identity table ``d[s] = (0, 1)`` (no
    target). ``s`` is accepted at fit (it stratifies the inducing-point sample) and not needed.

    Parameters
    ----------
    %s

    Attributes
    ----------
    %s

    %s
    """

    _parameter_constraints = dict(_GP_CONSTRAINTS)

    def __init__(self, *, num_inducing=200, batch_size=None, max_epochs=100, lr=0.02, max_seconds=55.0, tol=5e-4,
                 patience=2, variational_optimizer="ngd", ngd_lr=0.1, random_state=0, device="auto", progress=None):
        self.num_inducing = num_inducing
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.lr = lr
        self.max_seconds = max_seconds
        self.tol = tol
        self.patience = patience
        self.variational_optimizer = variational_optimizer
        self.ngd_lr = ngd_lr
        self.random_state = random_state
        self.device = device
        self.progress = progress


GP.__doc__ = GP.__doc__ % (_GP_PARAMETERS, _GP_ATTRIBUTES, example("from fairdash.models.fair_gp import GP",
                                                                   f"GP({_GP_EXAMPLE})"))
