"""95% intervals on the numbers a decision rests on (issue 34, item 1; docs/METHOD.md, "Intervals"): a bootstrap of
the test rows stratified by group for one split, Nadeau and Bengio's corrected resampled t over the splits for
several; carried by the metric table as ``<column>_lo`` / ``<column>_hi`` on both sets, in the results file and
``train --json``."""
from __future__ import annotations

import numpy as np
import pytest

from fairdash.evaluation.intervals import bootstrap_intervals, interval_over_splits
from fairdash.evaluation.metric_table import METRICS, is_listed
from fairdash.evaluation.metrics import group_metrics, summarize
from fairdash.files.results_file import from_file, to_file
from fairdash.targeting.criteria import DP
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.experiments import ExperimentPlan, run_experiment


def test_the_intervals_cover_a_known_rate_about_95_times_in_100():
    """100 synthetic tables drawn from a known population: group 0 (300 rows) decided positive with
    probability 0.30, group 1 (150 rows) with 0.55; each table's interval of each group's positive rate, and of
    their difference, holds the population's value in 90 to 99 of them."""
    rng = np.random.default_rng(2026)
    truth = {"pr_0": 0.30, "pr_1": 0.55, "pr_diff": 0.25}
    held = dict.fromkeys(truth, 0)
    for _ in range(100):
        s = np.repeat([0, 1], [300, 150])
        p = (rng.random(s.size) < np.where(s == 0, 0.30, 0.55)).astype(int)
        y = rng.integers(0, 2, s.size)
        got = bootstrap_intervals(y, p, s, 2)
        for k, v in truth.items():
            held[k] += got[k + "_lo"] <= v <= got[k + "_hi"]
    assert all(90 <= n <= 99 for n in held.values()), held


def test_an_interval_holds_its_own_value_and_is_the_same_every_time():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 3, 500)
    y = rng.integers(0, 2, 500)
    p = rng.integers(0, 2, 500)
    point = group_metrics(y, p, s, 3)
    a = bootstrap_intervals(y, p, s, 3, criterion=DP, targets=[0.4, 0.4, 0.4], prefix="pop_")
    assert a == bootstrap_intervals(y, p, s, 3, criterion=DP, targets=[0.4, 0.4, 0.4], prefix="pop_")  # seeded
    for k in ("accuracy", "pr_0", "tpr_2", "fpr_1", "precision_0", "pr_ratio", "fnr_diff"):
        assert a[k + "_lo"] <= point[k] <= a[k + "_hi"], k
    assert a["pop_gap_0_lo"] == pytest.approx(a["pr_0_lo"] - 0.4) and a["pop_worst_gap_lo"] >= 0


def test_no_interval_where_nothing_can_be_measured():
    s = np.array([0, 0, 0, 1, 1, 1])
    y = np.array([0, 0, 0, 1, 0, 1])  # group 0 has no positives: its TPR is undefined in every draw
    got = bootstrap_intervals(y, np.array([1, 0, 1, 1, 0, 0]), s, 2)
    assert np.isnan(got["tpr_0_lo"]) and np.isnan(got["tpr_0_hi"])
    everyone = bootstrap_intervals(y, np.ones(6, int), s, 2)  # one class for everyone: no ratio, no interval
    assert np.isnan(everyone["pr_ratio_lo"]) and everyone["pr_0_lo"] == 1.0


def test_the_mean_over_splits_has_the_corrected_resampled_t_interval_clipped_to_the_metric_s_range():
    """Nadeau and Bengio's correction: the splits' variance times 1/R + n_test/n_train (0.25 for FairDash's 80/20
    splits), not 1/R alone."""
    values = [0.60, 0.64, 0.62, 0.66, 0.58]
    lo, hi = interval_over_splits(values)
    assert ((lo + hi) / 2 == pytest.approx(0.62)
            and (hi - lo) / 2 == pytest.approx(2.776445 * 0.0316228 * (1 / 5 + 0.25) ** 0.5, rel=1e-4))
    plain = interval_over_splits(values, test_to_train=0.0)  # Student's t, as if the splits were independent
    assert (plain[1] - plain[0]) / 2 == pytest.approx(2.776445 * 0.0316228 / 5 ** 0.5, rel=1e-4)
    assert interval_over_splits([0.95, 0.99], within=(0.0, 1.0))[1] == 1.0
    assert np.isnan(interval_over_splits([0.5])[0])


def test_a_run_carries_every_interval_on_both_sets_and_the_file_keeps_them(compas_task):
    exp = run_experiment(ExperimentPlan(compas_task, ["fair-lr", "lr"], [0.401], [0, 1], target=make_target_spec("dp")))
    res = exp.results
    bounded = [m for m in METRICS if m.interval]
    assert {"accuracy", "pr", "fpr", "pr_ratio", "gap", "worst_gap"} <= {m.name for m in bounded}
    for c in ("pop_accuracy", "pop_pr_1", "pop_fnr_0", "pop_gap_1", "pop_worst_gap", "bal_gap_0", "pr_0", "tpr_diff"):
        lo, hi = res[c + "_lo"], res[c + "_hi"]
        assert ((lo <= res[c] + 1e-12) & (res[c] <= hi + 1e-12)).all(), c
        assert is_listed(c + "_lo") and is_listed(c + "_hi")
    f = to_file(res)
    assert "bal_pr_0_lo" in f.columns and "pop_pr_0_hi" in f.columns and "pr_0_lo" not in f.columns
    back = from_file(f)
    assert set(back.columns) == set(res.columns)
    s = summarize(res, metrics=["pop_accuracy"])
    assert ((s["pop_accuracy_lo"] < s["pop_accuracy_mean"]).all()
            and (s["pop_accuracy_mean"] < s["pop_accuracy_hi"]).all())


@pytest.mark.slow
def test_the_price_carries_the_interval_of_its_splits_prices(compas_task):
    from fairdash.evaluation.blindness import price_sentences, price_table

    exp = run_experiment(ExperimentPlan(compas_task, ["lr", "target-reduction"], [0.401], [0, 1, 2],
                                        target=make_target_spec("dp"), decisions=["threshold", "group-rates"]))
    row = price_table(exp.results).iloc[0]
    own = exp.results.groupby("seed")["price_of_blindness"].first().dropna()
    assert row["price_splits"] == len(own) >= 2
    assert (row["price_lo"], row["price_hi"]) == pytest.approx(interval_over_splits(own, within=(-1.0, 1.0)))
    said = price_sentences(exp.results, "race")[0]
    assert f"95% interval {100 * row['price_lo']:+.2f} to {100 * row['price_hi']:+.2f} points" in said
    assert "Nadeau and Bengio's corrected resampled t over the" in said
    assert ("cannot tell" in said) == (row["price_lo"] <= 0 <= row["price_hi"])
    one = price_sentences(exp.results[exp.results["seed"] == 0], "race")[0]
    assert ("a bootstrap of this split's test rows, stratified by group and paired across the two rules: it covers "
            "the test rows' sampling noise, not what a refit on other training rows would give" in one
            or "No rule" in one)


def test_the_report_gives_each_group_s_error_rates_with_intervals_harmful_error_first(compas_task):
    from fairdash.report.content import error_rates_table

    exp = run_experiment(ExperimentPlan(compas_task, ["fair-lr"], [0.401], [0], target=make_target_spec("dp")))
    s = summarize(exp.results, by=("model", "label", "target_rate"))
    rearrest = error_rates_table(s, compas_task.group_names, favourable=False)  # a positive label is unfavourable
    assert rearrest["headers"][2:] == ["wrongly flagged (FPR)", "wrongly cleared (FNR)", "precision",
                                       "calibration error (score vs outcome)"]
    row = exp.results.iloc[0]
    first = rearrest["rows"][0]
    assert first[1] == compas_task.group_names[0]
    assert first[2] == f"{row['pop_fpr_0']:.3f} ({row['pop_fpr_0_lo']:.3f} to {row['pop_fpr_0_hi']:.3f})"
    loan = error_rates_table(s, compas_task.group_names, favourable=True)
    assert loan["headers"][2] == "wrongly passed over (FNR)"


def test_the_target_view_draws_each_rate_s_95_interval(compas_task):
    from fairdash.figures.plots_target import target_view

    exp = run_experiment(ExperimentPlan(compas_task, ["fair-lr"], [0.401], [0], target=make_target_spec("dp")))
    fig = target_view(exp.results, DP, population=True, group_names=compas_task.group_names)
    trace = next(t for t in fig.data if t.name == "FairLR")
    row = exp.results.iloc[0]
    assert trace.error_x.visible and trace.error_x.symmetric is False
    for j, (x, up, down) in enumerate(zip(trace.x, trace.error_x.array, trace.error_x.arrayminus)):
        assert x + up == pytest.approx(row[f"pop_pr_{j}_hi"]) and x - down == pytest.approx(row[f"pop_pr_{j}_lo"])
    three = run_experiment(ExperimentPlan(compas_task, ["fair-lr"], [0.401], [0, 1, 2],
                                          target=make_target_spec("dp"))).results
    trace = next(t for t in target_view(three, DP).data if t.name == "FairLR")
    lo, hi = interval_over_splits(three["pop_pr_1"], within=(0.0, 1.0))
    assert (trace.x[1] - trace.error_x.arrayminus[1] == pytest.approx(lo)
            and trace.x[1] + trace.error_x.array[1] == pytest.approx(hi))
