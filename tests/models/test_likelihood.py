"""The fair likelihood in log space (docs/METHOD.md, "The fair likelihood")."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdash.errors import FairDashError
from fairdash.models.core import likelihood as L
from fairdash.targeting import targets as T
from fairdash.targeting.target_spec import make_target_spec


def _bernoulli(logit, y):
    return torch.where(y.bool(), torch.nn.functional.logsigmoid(logit), torch.nn.functional.logsigmoid(-logit))


def test_identity_table_is_exactly_bernoulli_logistic():
    rng = np.random.default_rng(0)
    f = torch.as_tensor(rng.normal(scale=5, size=500))
    y = torch.as_tensor(rng.integers(0, 2, 500))
    d = T.row_d(T.identity_table(2), rng.integers(0, 2, 500))
    ll = L.fair_log_likelihood_from_d(*L.logistic_log_q(f), d, y)
    assert torch.equal(ll, _bernoulli(f, y))


def test_identity_table_is_exactly_bernoulli_probit():
    f = torch.linspace(-8, 8, 201, dtype=torch.float64)
    y = torch.arange(201) % 2
    ll = L.fair_log_likelihood_from_d(*L.probit_log_q(f), np.tile([0.0, 1.0], (201, 1)), y)
    ref = torch.where(y.bool(), torch.special.log_ndtr(f), torch.special.log_ndtr(-f))
    assert torch.equal(ll, ref)


def test_matches_direct_formula():
    rng = np.random.default_rng(1)
    n = 300
    f = torch.as_tensor(rng.normal(size=n))
    y = rng.integers(0, 2, n)
    d = rng.uniform(0.05, 0.95, size=(n, 2))
    q = torch.sigmoid(f).numpy()
    p1 = d[:, 0] * (1 - q) + d[:, 1] * q
    ref = np.log(np.where(y == 1, p1, 1 - p1))
    ll = L.fair_log_likelihood_from_d(*L.logistic_log_q(f), d, torch.as_tensor(y)).numpy()
    np.testing.assert_allclose(ll, ref, rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    d0=st.sampled_from([0.0, 1.0]),
    d1=st.sampled_from([0.0, 1.0]),
    y=st.integers(0, 1),
    f=st.floats(-60, 60, allow_nan=False),
    link=st.sampled_from(["logit", "probit"]),
)
def test_finite_at_d_corners(d0, d1, y, f, link):
    """d at the corners of [0, 1]^2 never gives NaN or +-inf, nor a NaN gradient."""
    ft = torch.tensor([f], dtype=torch.float64, requires_grad=True)
    lq = L.logistic_log_q(ft) if link == "logit" else L.probit_log_q(ft)
    ll = L.fair_log_likelihood_from_d(*lq, np.array([[d0, d1]]), torch.tensor([y]))
    assert torch.isfinite(ll).all()
    assert ll.item() <= 1e-12
    ll.sum().backward()
    assert torch.isfinite(ft.grad).all()


def test_gpytorch_likelihood_identity_matches_probit_expectation():
    import gpytorch

    lik = L.FairBernoulliLikelihood()
    mu = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64)
    var = torch.tensor([0.5, 1.0, 0.1], dtype=torch.float64)
    dist = gpytorch.distributions.MultivariateNormal(mu, torch.diag(var))
    y = torch.tensor([1, 0, 1])
    w0, w1 = L.select_log_d(L.log_d_terms(np.tile([0.0, 1.0], (3, 1))), y)
    with_d = lik.expected_log_prob(y, dist, w0=w0, w1=w1)
    plain = lik.expected_log_prob(y, dist)
    torch.testing.assert_close(with_d, plain)
    # Monte Carlo check of the expectation
    g = torch.Generator().manual_seed(0)
    f = mu + var.sqrt() * torch.randn(200_000, 3, generator=g, dtype=torch.float64)
    mc = torch.where(y.bool(), torch.special.log_ndtr(f), torch.special.log_ndtr(-f)).mean(0)
    torch.testing.assert_close(plain, mc, atol=5e-3, rtol=0)


def test_resolve_target_modes():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, 2000)
    y = (rng.random(2000) < np.where(s == 1, 0.3, 0.1)).astype(int)
    table, d_rows, info = L.resolve_target(y, s)
    assert info["target_rate"] == pytest.approx(np.mean(info["base_rates"]))
    np.testing.assert_allclose(d_rows, table.d[s])
    _, d_id, _ = L.resolve_target(y, s, identity=True)
    np.testing.assert_array_equal(d_id, np.tile([0.0, 1.0], (2000, 1)))
    eo, _, _ = L.resolve_target(y, s, target=make_target_spec("eo", tpr_target=0.8, tnr_target=0.9))
    np.testing.assert_allclose(eo.p_ybar1_given_y[:, 1], 0.8)
    mode1, _, _ = L.resolve_target(y, s, target=make_target_spec("eo", 0.25))
    dp, _, _ = L.resolve_target(y, s, target=make_target_spec("dp", 0.25))
    np.testing.assert_allclose(mode1.d, dp.d)
    strata = rng.integers(0, 3, 2000)
    cond, d_c, _ = L.resolve_target(y, s, strata)
    np.testing.assert_allclose(d_c, cond.row_d(s, strata))
    with pytest.raises(FairDashError):
        L.resolve_target(y, s, target=make_target_spec(target_rate=1.0))
    with pytest.raises(FairDashError):
        L.resolve_target(y, s, target=make_target_spec("xx"))
    with pytest.raises(FairDashError):
        L.resolve_target(y, np.zeros_like(s))


def test_one_check_of_s_and_strata():
    """One check of ``s`` (issue 37 item 4: ``inputs.check_s``, every model's): whole-number codes >= 0, one per row."""
    from fairdash.models.core.inputs import check_s, check_strata

    for bad in ([0, 1, 2], [0, -1, 1, 0], [0.5, 1, 1, 0], ["a", "b", "a", "b"]):
        with pytest.raises(FairDashError):
            check_s(bad, 4, "FairLR")
    with pytest.raises(FairDashError, match="needs the sensitive attribute s"):
        check_s(None, 4, "FairLR")
    with pytest.raises(FairDashError, match="at least two groups"):
        check_s([1, 1, 1, 1], 4, "FairLR")
    assert check_s(None, 4, "LR", required=False).tolist() == [0, 0, 0, 0]
    assert check_s(np.array([0.0, 1.0, 1.0, 0.0]), 4, "FairLR").dtype == np.int64
    assert check_s([True, False, True, False], 4, "FairLR").tolist() == [1, 0, 1, 0]
    assert check_strata(None, 4) is None and check_strata([0, 1, 1, 0], 4).dtype == np.int64
    with pytest.raises(FairDashError):
        check_strata([0, 1], 4)
