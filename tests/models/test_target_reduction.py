"""The target reduction (issue 26, item 1): each group's population rate held at the analyst's target
while deciding without s, on the bundled Adult and COMPAS tables."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairdash.errors import FairDashError
from fairdash.models.registry import make_model, model_info
from fairdash.models.target_reduction import TargetRateMoment, TargetReduction
from fairdash.targeting.criteria import DP, EO
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.experiments import ExperimentPlan, fit_model, run_experiment


def _toy(n=400, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(size=n) + s, rng.normal(size=n)])
    y = ((X[:, 0] + rng.normal(scale=0.7, size=n)) > 0.8).astype(int)
    return X, y, s


def test_the_moment_measures_each_groups_rate_against_its_own_target():
    X, y, s = _toy()
    m = TargetRateMoment(targets=[0.3, 0.3], tolerance=0.01, criterion=DP)
    m.load_data(X, y, sensitive_features=s)
    pred = (X[:, 0] > 0.5).astype(float)
    gamma = m.gamma(lambda X_: pred)
    for g in (0, 1):
        rate = pred[s == g].mean()
        assert gamma["+", g] == pytest.approx(rate - 0.3) and gamma["-", g] == pytest.approx(0.3 - rate)
    # the signed weights are -n times the derivative of sum_k lambda_k gamma_k in each row's prediction
    lam = pd.Series([2.0, 0.0, 0.0, 5.0], index=m.index)
    w = m.signed_weights(lam).to_numpy()
    i0, i1 = np.flatnonzero(s == 0)[0], np.flatnonzero(s == 1)[0]
    assert w[i0] == pytest.approx(-len(y) * 2.0 / (s == 0).sum())
    assert w[i1] == pytest.approx(len(y) * 5.0 / (s == 1).sum())
    # under equality of opportunity only the group's positives count
    m_eo = TargetRateMoment(targets=[0.8, 0.8], tolerance=0.01, criterion=EO)
    m_eo.load_data(X, y, sensitive_features=s)
    g = m_eo.gamma(lambda X_: pred)
    assert g["+", 0] == pytest.approx(pred[(s == 0) & (y == 1)].mean() - 0.8)


def test_the_moment_checks_its_settings_when_made_and_takes_any_group_labels():
    for bad in ({"targets": [0.3, 1.2]}, {"targets": []}, {"tolerance": 0}, {"tolerance": 1.5}, {"criterion": "xx"}):
        with pytest.raises(FairDashError):
            TargetRateMoment(**{"targets": [0.3, 0.3], "criterion": DP, **bad})
    X, y, s = _toy()
    named = np.where(s == 1, "women", "men")
    by_code = TargetRateMoment(targets=[0.3, 0.5], criterion=DP)
    by_code.load_data(X, y, sensitive_features=s)
    by_name = TargetRateMoment(targets={"men": 0.3, "women": 0.5}, criterion=DP)
    by_name.load_data(X, y, sensitive_features=named)
    pred = (X[:, 0] > 0.5).astype(float)
    np.testing.assert_array_equal(by_code.gamma(lambda X_: pred), by_name.gamma(lambda X_: pred))
    with pytest.raises(FairDashError, match="no target"):
        TargetRateMoment(targets={"men": 0.3, "others": 0.5}, criterion=DP).load_data(X, y, sensitive_features=named)


def test_tolerance_is_validated_and_a_conditional_target_refused():
    X, y, s = _toy()
    for bad in (0, 1.5, -0.1):
        with pytest.raises(FairDashError):
            TargetReduction(tolerance=bad).fit(X, y, s)
    cond = make_target_spec("dp", 0.3, strata_column="edu")
    with pytest.raises(FairDashError, match="legitimate factor"):
        TargetReduction(target=cond).fit(X, y, s)


def test_label_says_it_decides_without_s_and_is_randomised():
    label = model_info("target-reduction").label
    assert "without s" in label and "randomised" in label
    assert not getattr(TargetReduction, "needs_s_to_predict", False)


@pytest.mark.slow
def test_draws_are_reproducible_from_the_seed_and_leave_global_state_alone():
    X, y, s = _toy()
    spec = make_target_spec("dp", 0.45)
    a = make_model("target-reduction", spec, seed=3).fit(X, y, s)
    b = make_model("target-reduction", spec, seed=3).fit(X, y, s)
    c = make_model("target-reduction", spec, seed=4).fit(X, y, s)
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    pa = a.predict(X)
    assert (np.random.get_state()[1] == before).all()
    np.testing.assert_array_equal(pa, b.predict(X))
    p1 = a.predict_proba(X)[:, 1]
    if ((p1 > 0) & (p1 < 1)).any():
        assert (pa != c.predict(X)).any()
    again = TargetReduction.from_state(a.get_state())
    np.testing.assert_array_equal(again.predict(X), pa)
    np.testing.assert_allclose(again.predict_proba(X), a.predict_proba(X))
    assert again.target == spec and np.allclose(again.targets_, a.targets_)


def test_eo_holds_each_groups_tpr_at_its_target_on_the_training_rows():
    X, y, s = _toy(1000)
    spec = make_target_spec("eo", 0.45)
    est = make_model("target-reduction", spec).fit(X, y, s)
    goal = spec.rate_targets(y, s)
    assert goal.rate == "tpr"
    np.testing.assert_allclose(est.targets_, goal.group)
    assert np.all(np.abs(est.train_rates_ - est.targets_) <= 0.01 + 1e-3)


@pytest.mark.slow
def test_adult_sex_lands_on_030_without_s(adult_task):
    """Both groups within 0.03 of 0.30 on the population, accuracy at least 0.79 (its fit time, at most 10 s on
    two cores, is a benchmark's figure, not this test's: benchmarks/results/2026-11-26-target-reduction.md)."""
    tm = fit_model(adult_task, "target-reduction", target=make_target_spec("dp", 0.30), seed=0)
    m = tm.metrics
    assert abs(m["pop_pr_0"] - 0.30) <= 0.03 and abs(m["pop_pr_1"] - 0.30) <= 0.03, (m["pop_pr_0"], m["pop_pr_1"])
    assert m["pop_accuracy"] >= 0.79
    assert np.all(np.abs(tm.estimator.train_rates_ - 0.30) <= 0.01 + 1e-6)


@pytest.mark.slow
def test_compas_race_lands_on_0401_over_five_repeats(compas_task):
    ex = run_experiment(ExperimentPlan(compas_task, ["target-reduction"], seeds=range(5),
                                       target=make_target_spec("dp", 0.401)))
    r = ex.results
    assert not r["decides_with_s"].any()
    for g in (0, 1):
        assert abs(r[f"pop_pr_{g}"].mean() - 0.401) <= 0.04, r[f"pop_pr_{g}"].tolist()


def test_the_sampling_error_of_a_groups_rate_is_said():
    from fairdash.evaluation.gaps import sampling_errors, sampling_noise_sentence

    s = np.array([0] * 813 + [1] * 420)
    np.testing.assert_allclose(sampling_errors([0.401, 0.401], s), np.sqrt(0.401 * 0.599 / np.array([813, 420])))
    sentence = sampling_noise_sentence([0.401, 0.401], s, ["Non-Caucasian", "Caucasian"])
    assert "Caucasian ±0.024 (420 rows)" in sentence
