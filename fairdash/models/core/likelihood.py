"""The fair likelihood of "Tuning Fairness by Balancing Target Labels", in log space.

A model gives ``q(x) = P(ybar=1 | x)``; the observed label's likelihood is (docs/METHOD.md)

    P(y=1 | x, s) = d[s][0] * (1 - q(x)) + d[s][1] * q(x)
    P(y=0 | x, s) = (1 - d[s][0]) * (1 - q(x)) + (1 - d[s][1]) * q(x)

with ``d[s][ybar] = P(y=1 | ybar, s)``. ``fair_log_likelihood`` evaluates it from ``log q`` and
``log(1 - q)`` by log-sum-exp over ``ybar`` (log-sigmoid of the logit for FairLR, log-Phi of the latent
for FairGP), so ``d`` values of 0 or 1 never produce ``log(0)`` or NaN gradients. With ``d[s] = (0, 1)``
it is exactly the Bernoulli log-likelihood. ``FairBernoulliLikelihood`` wraps it for gpytorch.
"""
from __future__ import annotations

import functools

import numpy as np
import torch

from ...device import torch_threads
from ...errors import FairDashError
from ...jsonable import int_keyed
from ...targeting import targets as T
from ...targeting.target_spec import TargetSpec, make_target_spec
from ...targeting.targets import identity_table
from .base import Estimator
from .inputs import check_s, check_strata, fit_inputs
from .state import check_state, table_from_state, table_to_state

# log(0) is replaced by this finite number: exp() of it is exactly 0 in float32 and float64, so a zero
# entry of d contributes nothing to the log-sum-exp (the identity table stays exact), yet gradients
# stay finite where both terms would otherwise be -inf.
LOG_ZERO = -1e30


def log_d_terms(d_rows, dtype=torch.float64, device=None) -> torch.Tensor:
    """Per-row ``[log d0, log d1, log(1-d0), log(1-d1)]`` (shape ``(n, 4)``) with ``log 0 -> LOG_ZERO``.

    ``d_rows`` is ``targets.row_d(d, s)`` (shape ``(n, 2)``). Precompute this once per fit.
    """
    d = torch.as_tensor(np.asarray(d_rows, dtype=np.float64), dtype=torch.float64)
    if d.ndim != 2 or d.shape[1] != 2:
        raise ValueError("d_rows must have shape (n, 2)")
    d = d.clamp(0.0, 1.0)
    with torch.no_grad():
        logs = torch.cat([torch.log(d), torch.log1p(-d)], dim=1)
        logs = torch.where(torch.isfinite(logs), logs, torch.full_like(logs, LOG_ZERO))
    return logs.to(dtype=dtype, device=device)


def select_log_d(log_d: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For each row the log-weights of ``ybar = 0`` and ``ybar = 1`` given the observed ``y``:
    ``(log P(y|ybar=0,s), log P(y|ybar=1,s))``. Precompute once per fit: it only depends on the data."""
    y1 = y.to(torch.bool)
    w0 = torch.where(y1, log_d[:, 0], log_d[:, 2])
    w1 = torch.where(y1, log_d[:, 1], log_d[:, 3])
    return w0, w1


def fair_log_likelihood(log_q: torch.Tensor, log_1mq: torch.Tensor, w0: torch.Tensor, w1: torch.Tensor) -> torch.Tensor:
    """Per-row ``log P(y | x, s) = logsumexp(w0 + log(1-q), w1 + log q)``.

    ``w0``, ``w1`` come from ``select_log_d`` and broadcast against ``log_q`` (e.g. quadrature points
    in leading dimensions). Never NaN for finite inputs, whatever the d values in [0, 1].
    """
    a = w0 + log_1mq
    b = w1 + log_q
    m = torch.maximum(a, b)
    return m + torch.log1p(torch.exp(-(a - b).abs()))


def fair_log_likelihood_from_d(log_q, log_1mq, d_rows, y) -> torch.Tensor:
    """Convenience form: per-row log-likelihood straight from ``d_rows`` ``(n, 2)`` and ``y`` in {0, 1}."""
    log_d = log_d_terms(d_rows, dtype=log_q.dtype, device=log_q.device)
    w0, w1 = select_log_d(log_d, torch.as_tensor(np.asarray(y), device=log_q.device))
    return fair_log_likelihood(log_q, log_1mq, w0, w1)


def logistic_log_q(logit: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(log q, log(1 - q))`` for ``q = sigmoid(logit)``."""
    return torch.nn.functional.logsigmoid(logit), torch.nn.functional.logsigmoid(-logit)


def probit_log_q(f: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(log q, log(1 - q))`` for ``q = Phi(f)`` (the GP's probit link)."""
    return torch.special.log_ndtr(f), torch.special.log_ndtr(-f)


# --------------------------------------------------------------------------------------------------
# gpytorch likelihood
# --------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _gpytorch_likelihood_class():
    import gpytorch

    class FairBernoulliLikelihood(gpytorch.likelihoods.Likelihood):
        """Probit fair likelihood for gpytorch: ``expected_log_prob`` integrates the fair
        log-likelihood over ``f ~ N(mu, var)`` by Gauss-Hermite quadrature.

        Call the ELBO as ``mll(output, y, w0=w0, w1=w1)`` with ``select_log_d``'s per-row weights
        of the minibatch. Without them it is the ordinary probit (Bernoulli) likelihood.
        """

        def __init__(self, *, num_locs: int = 20):
            super().__init__()
            self.quadrature = gpytorch.utils.quadrature.GaussHermiteQuadrature1D(num_locs=num_locs)

        @staticmethod
        def _weights(observations, w0, w1):
            if w0 is None or w1 is None:
                y1 = observations.to(torch.bool)
                zero = torch.zeros_like(observations, dtype=torch.get_default_dtype())
                w0 = torch.where(y1, torch.full_like(zero, LOG_ZERO), zero)
                w1 = torch.where(y1, zero, torch.full_like(zero, LOG_ZERO))
            return w0, w1

        def forward(self, function_samples, *args, **kwargs):
            return torch.distributions.Bernoulli(probs=torch.special.ndtr(function_samples))

        def log_marginal(self, observations, function_dist, *args, **kwargs):
            w0, w1 = self._weights(observations, kwargs.get("w0"), kwargs.get("w1"))
            ll = self.quadrature(lambda f: fair_log_likelihood(*probit_log_q(f), w0, w1).exp(), function_dist)
            return ll.log()

        def expected_log_prob(self, observations, function_dist, *args, **kwargs):
            w0, w1 = self._weights(observations, kwargs.get("w0"), kwargs.get("w1"))
            return self.quadrature(lambda f: fair_log_likelihood(*probit_log_q(f), w0, w1), function_dist)

    return FairBernoulliLikelihood


def __getattr__(name):  # lazy: importing this module must not require gpytorch
    if name == "FairBernoulliLikelihood":
        return _gpytorch_likelihood_class()
    raise AttributeError(name)


# --------------------------------------------------------------------------------------------------
# From a fairness request to each training row's d (shared by FairLR and FairGP)
# --------------------------------------------------------------------------------------------------
def resolve_target(y, s, strata=None, *, target=None, identity: bool = False):
    """The transition table a fair model trains on and each row's ``d`` (shape ``(n, 2)``).

    ``target`` is the :class:`~fairdash.targeting.target_spec.TargetSpec` (validated where it was built, by
    :func:`~fairdash.targeting.target_spec.make_target_spec`); ``None`` is the paper's default, demographic parity
    at the ``avg`` preset. ``identity``: the plain model, ``d[s] = (0, 1)`` (``table`` is ``None``).
    With ``strata``: conditional demographic parity, one table per stratum.

    Returns ``(table, d_rows, info)`` with ``info`` holding ``base_rates``, ``group_shares``,
    ``n_groups``, the resolved ``target_rate`` (``None`` where not one number) and the ``spec``.
    """

    n_groups = int(s.max()) + 1 if s.size else 1
    rates = T.base_rates(y, s, n_groups)
    shares = T.group_shares(s, n_groups)
    info = {"base_rates": rates, "group_shares": shares, "n_groups": n_groups, "target_rate": None, "spec": None}
    if identity:
        return None, T.row_d(T.identity_table(n_groups), s), info
    spec = make_target_spec() if target is None else target
    info["spec"] = spec
    if n_groups < 2 and strata is None:
        raise FairDashError(
            "A fair model needs the sensitive attribute with at least two groups; "
            "all training rows are in one group."
        )
    if strata is not None:
        table = spec.conditional_tables(y, s, strata, n_groups=n_groups)
        info["target_rate"] = None if spec.target_rate is None else float(spec.target_rate)
        return table, table.row_d(s, strata), info
    if not spec.explicit:
        T.check_base_rates(rates)
    table = spec.table(rates, shares)
    info["target_rate"] = spec.rate_for(rates)
    return table, T.row_d(table.d, s), info


# --------------------------------------------------------------------------------------------------
# What FairLR and FairGP share around their training loops: the target they fit, the fitted
# attributes that describe it, and those attributes' safe state
# --------------------------------------------------------------------------------------------------
class FairModelBase(Estimator):
    """What FairLR, FairGP and their plain twins LR and GP share as estimators: the base's validated ``fit``
    (strata taken) runs the model's ``_fit`` on the device module's torch thread budget (on the CPU
    ``device.fit_threads()`` threads, 1 unless ``FAIRDASH_THREADS``); a clear error before the model is fitted
    (``_fitted_attr`` names the attribute that exists only after ``fit``). A plain model has no target
    (:meth:`target_spec` is ``None``)."""

    _fitted_attr = "coef_"
    _takes_strata = True

    def _fit_context(self):
        return torch_threads()

    def target_spec(self):
        """The :class:`~fairdash.targeting.target_spec.TargetSpec` the model trains for; ``None``: a plain model."""
        return None

    def _check_fitted(self):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, self._fitted_attr)  # NotFittedError, as every estimator here


class FairTargetMixin:
    """The target parameter of FairLR and FairGP: ``target`` (a :class:`~fairdash.targeting.target_spec.TargetSpec`;
    ``None`` is the paper's default, demographic parity at the ``avg`` preset). One way to say it: a rate is
    ``target=make_target_spec(target_rate=...)``."""

    def target_spec(self):
        return make_target_spec() if self.target is None else self.target


def begin_fair_fit(est, X, y, s=None, strata=None):
    """Check a fair model's inputs (any two labels, encoded as 0/1 with ``classes_`` as given), resolve its
    target on the training data and record the fitted attributes FairLR and FairGP (and LR, GP) share
    (``transition_table_``, ``d_``, ``base_rates_``, ``group_shares_``, ``n_groups_``, ``target_rate_``,
    ``classes_``, ``n_features_in_``). Returns ``(X, y01, s, strata, d_rows)``."""

    X, y01 = fit_inputs(est, X, y)
    target = est.target_spec()
    s = check_s(s, len(y01), type(est).__name__, required=target is not None, min_groups=1)
    strata = check_strata(strata, len(y01))
    table, d_rows, info = resolve_target(y01, s, strata, target=target, identity=target is None)
    est.transition_table_ = table
    est.d_ = None if strata is not None else (
        np.asarray(table.d) if table is not None else identity_table(info["n_groups"])
    )
    est.base_rates_ = np.asarray(info["base_rates"])
    est.group_shares_ = np.asarray(info["group_shares"])
    est.n_groups_ = int(info["n_groups"])
    est.target_rate_ = info["target_rate"]
    return X, y01, s, strata, d_rows


def fair_target_state(est) -> tuple[dict, dict]:
    """The shared fitted attributes as ``(arrays, meta)`` for ``get_state``; the model adds its own
    arrays and its own entries to ``meta["fitted"]``."""

    arrays = {"base_rates": est.base_rates_, "group_shares": est.group_shares_}
    if est.d_ is not None:
        arrays["d"] = est.d_
    t_arrays, t_meta = table_to_state(est.transition_table_, "table")
    arrays.update(t_arrays)
    fitted = {
        "n_features_in": int(est.n_features_in_),
        "classes": est.classes_.tolist(),
        "n_groups": int(est.n_groups_),
        "target_rate": est.target_rate_,
        "device": est.device_,
        "fit_seconds": float(est.fit_seconds_),
    }
    return arrays, {"table": t_meta, "fitted": fitted}


def fair_model_from_state(cls, state: dict):
    """A model of ``cls`` built from its stored parameters, with the shared fitted attributes restored.
    Returns ``(model, arrays, fitted)`` so that the caller restores what is its own."""

    arrays, meta = check_state(state, cls)
    model = cls.from_params(target_params_from_state(meta["params"], cls))
    f = meta["fitted"]
    model.base_rates_ = np.asarray(arrays["base_rates"], dtype=np.float64)
    model.group_shares_ = np.asarray(arrays["group_shares"], dtype=np.float64)
    model.d_ = np.asarray(arrays["d"]) if "d" in arrays else None
    model.transition_table_ = table_from_state(arrays, meta["table"], "table")
    model.classes_ = np.asarray(f.get("classes", [0, 1]))
    model.n_features_in_ = int(f["n_features_in"])
    model.n_groups_ = int(f["n_groups"])
    model.target_rate_ = f["target_rate"]
    model.device_ = f["device"]
    model.fit_seconds_ = float(f["fit_seconds"])
    return model, arrays, f


# the target parameters of a model file's format 1 (before the TargetSpec was one parameter)
_FORMAT1_TARGET = ("criterion", "tpr_target", "tnr_target", "delta", "stratum_target_rates")
FORMAT1_TARGET = _FORMAT1_TARGET  # what a model file's loader lets through to target_params_from_state


def target_params_from_state(stored: dict, cls) -> dict:
    """The constructor parameters of ``cls`` from a model file's stored parameters: ``target`` back to a
    :class:`~fairdash.targeting.target_spec.TargetSpec`; a file of format 1 (loose ``criterion``, ``target_rate``,
    ``tpr_target``, ``tnr_target``, ``delta``, ``stratum_target_rates``) into the same spec those
    parameters made; a plain model (LR, GP) drops them (they did nothing for it)."""

    params = dict(stored)
    fair = issubclass(cls, FairTargetMixin)
    rate = params.pop("target_rate", None)  # also format 2's alias beside target, gone since issue 37
    if any(k in params for k in _FORMAT1_TARGET):
        old = {k: params.pop(k, None) for k in _FORMAT1_TARGET}
        if fair:
            params["target"] = make_target_spec(old["criterion"], rate, 1.0 if old["delta"] is None else old["delta"],
                                                old["tpr_target"], old["tnr_target"],
                                                stratum_target_rates=int_keyed(old["stratum_target_rates"]))
    elif fair and params.get("target") is not None:
        params["target"] = TargetSpec.from_dict(params["target"])
    elif fair and rate is not None:  # the alias alone: the target it stood for
        params["target"] = make_target_spec(target_rate=rate)
    return params
