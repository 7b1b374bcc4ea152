"""Equality of opportunity that equalises (issue 26, item 3): with one PR_t every group's TPR target is
one common level, the TPR of the target labels over all groups together, and a per-group rule meets it."""
from __future__ import annotations

import numpy as np
import pytest

from fairdash import data
from fairdash.targeting import targets as T
from fairdash.targeting.criteria import EO
from fairdash.targeting.decision import fit_decision
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.experiments import ExperimentPlan, run_experiment


def test_one_pr_t_gives_every_group_the_same_tpr_target():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, 2000)
    y = (rng.random(2000) < np.where(s == 1, 0.3, 0.55)).astype(int)
    spec = make_target_spec("eo", 0.401)
    goal = spec.rate_targets(y, s)
    table = spec.table(T.base_rates(y, s, 2), T.group_shares(s, 2))
    own = table.p_ybar1_given_y[:, 1]
    assert own[1] == pytest.approx(1.0) and own[0] < 0.9  # unequal by construction
    pos = np.bincount(s, weights=y)
    assert goal.group[0] == goal.group[1] == pytest.approx(np.dot(own, pos) / pos.sum())
    # explicit targets: the TPR asked of every group
    explicit = make_target_spec("eo", tpr_target=0.9, tnr_target=0.8).rate_targets(y, s)
    np.testing.assert_allclose(explicit.group, [0.9, 0.9])


@pytest.mark.slow
def test_compas_race_eo_group_rates_equalises_tpr_above_the_majority_class(compas_task):
    spec = make_target_spec("eo", 0.401, decision="group-rates")
    r = run_experiment(ExperimentPlan(compas_task, ["lr"], seeds=range(5), target=spec)).results
    assert (r["target_0"] == r["target_1"]).all()
    assert r["pop_tpr_ratio"].mean() >= 0.95, r["pop_tpr_ratio"].tolist()
    majority = []
    for seed in range(5):
        y = data.split_arrays(compas_task, seed).y_test
        majority.append(max(y.mean(), 1 - y.mean()))
    assert r["pop_accuracy"].mean() >= np.mean(majority)
    assert (r["pop_accuracy"] >= np.asarray(majority)).all()


def test_on_the_training_rows_the_cuts_meet_the_common_tpr(compas_task):
    from fairdash.models.registry import make_model

    a = data.split_arrays(compas_task, 0)
    spec = make_target_spec("eo", 0.401, decision="group-rates")
    goal = spec.rate_targets(a.y_train, a.s_train)
    est = make_model("lr", seed=0, device="cpu").fit(a.X_train, a.y_train, a.s_train)
    d = fit_decision("group-rates", est, a.X_train, a.y_train, a.s_train, goal.group, goal.overall, EO)
    pred = d.decide(est, a.X_train, a.s_train)
    for g in (0, 1):
        rows = (a.s_train == g) & (a.y_train == 1)
        assert abs(pred[rows].mean() - goal.group[g]) <= 0.01


def test_explicit_tpr_and_tnr_report_the_tnr_gaps_beside_and_the_worst_gap_over_both(compas_task):
    spec = make_target_spec("eo", tpr_target=0.9, tnr_target=0.8, decision="group-rates")
    r = run_experiment(ExperimentPlan(compas_task, ["lr"], [None], [0], target=spec)).results.iloc[0]
    tnr = [r["pop_tnr_gap_0"], r["pop_tnr_gap_1"]]
    assert tnr == pytest.approx([r["pop_tnr_0"] - 0.8, r["pop_tnr_1"] - 0.8])
    worst = max(abs(r["pop_gap_0"]), abs(r["pop_gap_1"]), *map(abs, tnr))
    assert r["pop_worst_gap"] == pytest.approx(worst)
    assert abs(r["pop_gap_0"]) <= 0.05 and r["pop_worst_gap"] > 0.3  # the TPR is met, the TNR is not
    assert r["pop_worst_gap_group"].endswith("(TNR)")


def test_one_pr_t_has_no_tnr_gap_columns(compas_task):
    r = run_experiment(ExperimentPlan(compas_task, ["lr"], [0.401], [0], target=make_target_spec("eo", 0.401))).results
    assert not any(c.startswith("pop_tnr_gap") for c in r.columns)
