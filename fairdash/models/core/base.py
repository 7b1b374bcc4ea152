"""The one estimator base of FairDash's models, shaped like scikit-learn's (issue 37 item 4).

:class:`Estimator` is a ``BaseEstimator`` whose ``fit`` validates: it checks the constructor's parameters
against the class's ``_parameter_constraints`` (:func:`~fairdash.models.core.params.check_params`) before any data is
looked at, refuses strata where the model takes none, then runs the model's own ``_fit`` inside its
``_fit_context`` (the torch thread budget, numpy's BLAS on one thread). No model calls the check by hand.

The conventions every model keeps: the constructor is keyword-only and only stores its parameters; the seed
is ``random_state``; fitted attributes end in ``_``; a model is rebuilt from its stored parameters with
:meth:`Estimator.from_params`, which reads the names an earlier FairDash stored (``seed``) as today's.

Also the docstring blocks the estimators share (``EXAMPLE_DATA``: the tiny data of every Examples section),
so each class's numpydoc ``Examples`` runs as a doctest (tests/models/test_estimator_examples.py).
"""
from __future__ import annotations

import contextlib

from sklearn.base import BaseEstimator

from ...errors import FairDashError
from .params import check_params
from .state import renamed_params


class Estimator(BaseEstimator):
    """A FairDash model: ``fit(X, y, s=None)`` (``strata`` too where ``_takes_strata``), validated here."""

    _parameter_constraints: dict = {}
    _takes_strata = False  # FairLR, FairGP (and the target reduction, which refuses a conditional target)
    _words = ""  # what messages call the model; its class name where empty

    def fit(self, X, y, s=None, strata=None, **fit_params):
        """Fit on features ``X``, two-valued labels ``y`` (the second of the sorted labels is the positive one)
        and whole-number group codes ``s`` (one per row; fit time only; ``inputs.check_s``). Returns the fitted
        estimator. ``fit_params`` (keywords) go to ``_fit`` as they are: a model whose ``fit`` takes other
        arguments (``WeightedLR``: ``sample_weight``, ``memory``) declares its own ``fit`` that hands them here."""
        check_params(self)
        if strata is not None and not self._takes_strata:
            raise FairDashError(f"{self._words or type(self).__name__} does not take strata (a legitimate factor); "
                                "leave them out or choose FairLR or FairGP.")
        with self._fit_context():
            if self._takes_strata:
                return self._fit(X, y, s, strata, **fit_params)
            return self._fit(X, y, s, **fit_params)

    def _fit_context(self):
        """What a fit runs inside (a model overrides it: torch's threads, one BLAS thread)."""
        return contextlib.nullcontext()

    def _fit(self, X, y, s, strata=None):  # pragma: no cover - every model has its own
        raise NotImplementedError

    @classmethod
    def from_params(cls, params: dict):
        """An unfitted model from stored parameters (a model file's, the fit cache's): names an earlier FairDash
        stored read as today's (``state.RENAMED_PARAMS``)."""
        return cls(**renamed_params(params))


# --------------------------------------------------------------------------------------------------
# Docstring blocks shared by the estimators' numpydoc sections
# --------------------------------------------------------------------------------------------------
EXAMPLE_DATA = """    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> s = np.repeat([0, 1], 40)
    >>> X = rng.normal(size=(80, 2)) + s[:, None]
    >>> y = (X[:, 0] + rng.normal(size=80) > 0.5).astype(int)"""

FITTED_INPUT_ATTRIBUTES = """classes_ : ndarray of shape (2,)
        The two labels seen at fit, sorted; the second is the positive label.
    n_features_in_ : int
        Number of feature columns seen at fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of a data frame ``X`` at fit (only then)."""

RANDOM_STATE_OF_DRAWS = """random_state : int or None, default=0
        The seed of ``predict``'s draws."""


def example(imports: str, make: str, then: str = "") -> str:
    """A numpydoc ``Examples`` section (its heading at the indent of a ``%s`` line of the docstring):
    ``imports`` (``"from fairdash.models.fair_lr import FairLR"``), the shared tiny data, ``model = make`` fitted
    on it with ``s``, then ``then`` (doctest lines; default: three predictions)."""
    lines = ["Examples\n    --------", f"    >>> {imports}", EXAMPLE_DATA, f"    >>> model = {make}",
             "    >>> model = model.fit(X, y, s)"]
    lines.append(then or "    >>> model.predict(X[:3]).shape\n    (3,)")
    return "\n".join(lines)
