"""Agarwal et al. reports its progress (issue 13: it used to be silent for 18 s on Adult): every
best-response fit inside fairlearn's ExponentiatedGradient is reported, and counting them changes nothing
in the fitted model."""
import warnings

import numpy as np
import pytest

from fairdash.models.baselines import AgarwalReduction
from fairdash.models.core.common import one_blas_thread as _one_blas_thread
from fairdash.models.core.mixture import inner_lr


@pytest.mark.slow
def test_agarwal_reports_each_fit_and_fits_what_fairlearn_fits(compas_arrays):
    from fairlearn.reductions import ExponentiatedGradient

    a = compas_arrays
    seen = []
    m = AgarwalReduction(progress=lambda f, msg: seen.append((f, msg))).fit(a.X_train, a.y_train, a.s_train)
    fractions = [f for f, _ in seen]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0 and fractions == sorted(fractions)
    fit_reports = [msg for _, msg in seen if "best-response fit" in msg]
    assert 0 < len(fit_reports) <= m.n_oracle_calls_  # fairlearn's constant best responses are not fits
    assert f"done after {m.last_iter_ + 1} iteration(s)" in seen[-1][1]
    # the same fit without the counting wrapper: identical mixture, probabilities and labels
    eg = ExponentiatedGradient(inner_lr(C=1.0), constraints=m._constraint(), eps=0.1, max_iter=50)
    with warnings.catch_warnings(), _one_blas_thread():
        warnings.simplefilter("ignore", FutureWarning)
        eg.fit(a.X_train, a.y_train, sensitive_features=a.s_train)
    assert np.array_equal(np.asarray(eg._pmf_predict(a.X_test))[:, 1], m.predict_proba(a.X_test)[:, 1])
    assert np.array_equal(eg.predict(a.X_test, random_state=0), m.predict(a.X_test))
    # the callback is not part of the model's state
    assert m.get_state()["meta"]["params"]["progress"] is None
