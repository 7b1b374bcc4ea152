"""Moves and ceilings that mean what they say (issue 26, item 5): toward/away from the means over all
repeats, every fair model (post-processing and reductions too) against plain LR under the paper's rule,
and no "within the ceiling" for a run that did not reach its target."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairdash.evaluation.gaps import (
    CANNOT_TELL,
    LANDS,
    MISSES,
    NO_TARGET,
    ceiling_table,
    ceiling_verdict,
    landing_verdict,
    mark_moves,
    moved_away_summary,
)
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.experiments import ExperimentPlan, run_experiment


def _rows(fair_rates, plain_rates, target=0.5, model="fair-lr", label="FairLR"):
    rows = []
    for seed, (f, p) in enumerate(zip(fair_rates, plain_rates)):
        for m, lb, r in ((model, label, f), ("lr", "LR", p)):
            rows.append({"model": m, "label": lb, "seed": seed, "criterion": "dp", "decision": "threshold",
                         "target_rate": target, "target_0": target, "pop_pr_0": r})
    return pd.DataFrame(rows)


def test_moved_away_is_judged_on_the_means_over_all_repeats():
    # two repeats move away by 0.05, three move toward by 0.04: the means show no move away
    res = mark_moves(_rows([0.30, 0.30, 0.44, 0.44, 0.44], [0.35, 0.35, 0.40, 0.40, 0.40]))
    assert (res.loc[res["model"] == "fair-lr", "pop_moved_0"] == "away").sum() == 2
    assert moved_away_summary(res) == []
    # a real move away of the mean is said, with every repeat counted
    res = mark_moves(_rows([0.30] * 5, [0.40] * 5))
    assert moved_away_summary(res) == ["FairLR moved group 0 away from its target: positive rate 0.300 on the "
                                       "population against plain LR's 0.400, target 0.500 (mean of 5 repeats)."]


def test_a_post_processing_model_is_compared_with_plain_lr_under_the_papers_rule():
    res = _rows([0.45], [0.30], model="threshold-optimizer", label="Threshold optimizer")
    res.loc[res["model"] == "threshold-optimizer", "decision"] = "post-processing"
    assert mark_moves(res).loc[0, "pop_moved_0"] == "toward"


@pytest.mark.slow
def test_compas_threshold_optimizer_moves_caucasians_toward_0401(compas_task):
    r = run_experiment(ExperimentPlan(compas_task, ["lr", "threshold-optimizer", "agarwal"], [0.401], [0],
                                      target=make_target_spec("dp", 0.401))).results
    row = r[r["model"] == "threshold-optimizer"].iloc[0]
    assert compas_task.group_names[1] == "Caucasian" and row["pop_moved_1"] == "toward"


@pytest.mark.slow
def test_compas_eo_overall_rate_fairlr_says_no_move_away_over_five_repeats(compas_task):
    r = run_experiment(ExperimentPlan(compas_task, ["fair-lr", "lr"], [0.401], range(5),
                                      target=make_target_spec("eo", 0.401, decision="overall-rate"))).results
    assert (r["pop_moved_0"] == "away").sum() >= 1  # single repeats do move away...
    assert moved_away_summary(r, compas_task.group_names) == []  # ...the means over all five do not


def test_a_run_that_missed_its_target_is_never_within_the_ceiling():
    assert ceiling_verdict(0.886, 0.90, (MISSES, "misses the target: Female ...")) == (
        "misses the target: Female ...; the ceiling at PR_t does not apply")
    assert ceiling_verdict(0.80, 0.81, (LANDS, "lands")) == "yes"
    assert ceiling_verdict(0.80, 0.81, (CANNOT_TELL, "too few rows to tell")).endswith("does not apply")
    res = pd.DataFrame({"label": ["FairLR", "FairLR [group-rates]"], "target": ["t", "t"], "accuracy": [0.886, 0.81],
                        "ceiling_at_measured": [0.95, 0.83], "ceiling_at_target": [0.814, 0.814],
                        "target_0": [0.3, 0.3], "target_1": [0.3, 0.3], "pop_n_0": [5000, 5000],
                        "pop_n_1": [10000, 10000], "pop_gap_0": [-0.142, -0.010], "pop_gap_0_lo": [-0.155, -0.022],
                        "pop_gap_0_hi": [-0.130, 0.002], "pop_gap_1": [0.05, 0.004], "pop_gap_1_lo": [0.04, -0.006],
                        "pop_gap_1_hi": [0.06, 0.014]})
    verdicts = list(ceiling_table(res, group_names=("Female", "Male"))["reached the target, within the ceiling"])
    assert verdicts[0].startswith("misses the target: Female (5000 test rows): gap -0.142, 95% interval -0.155 to "
                                  "-0.130, against ±0.030") and verdicts[1] == "yes"


def test_a_group_too_small_to_tell_is_said_with_its_rows_and_interval():
    one = pd.DataFrame({"target_0": [0.4], "target_1": [0.4], "pop_n_0": [800], "pop_n_1": [40],
                        "pop_gap_0": [0.005], "pop_gap_0_lo": [-0.02], "pop_gap_0_hi": [0.03 - 1e-9],
                        "pop_gap_1": [-0.02], "pop_gap_1_lo": [-0.17], "pop_gap_1_hi": [0.13]})
    verdict, words = landing_verdict(one, ("big", "small"))
    assert verdict == CANNOT_TELL
    assert words == ("too few rows to tell whether it lands: small (40 test rows): gap -0.020, 95% interval -0.170 to "
                     "+0.130, against ±0.030")
    # over splits: the corrected resampled t over the splits' gaps, the rows a split said as such
    three = pd.concat([one] * 3, ignore_index=True).assign(pop_gap_1=[-0.005, 0.0, 0.005],
                                                           pop_gap_0=[0.0, 0.001, 0.002])
    verdict, words = landing_verdict(three, ("big", "small"))
    assert verdict == LANDS, words
    # gaps of -0.01, 0 and 0.01: Student's t alone (half-width 0.025) said "lands"; the correction for overlapping
    # splits (1/3 + 0.25 of the variance, not 1/3: half-width 0.033) cannot tell
    wider = three.assign(pop_gap_1=[-0.01, 0.0, 0.01])
    verdict, words = landing_verdict(wider, ("big", "small"))
    assert verdict == CANNOT_TELL and "95% interval -0.033 to +0.033" in words, words
    assert landing_verdict(one.assign(pop_gap_0=np.nan), None)[0] == NO_TARGET


def test_the_ceiling_table_reads_the_population_and_never_says_yes_beside_no_ceiling():
    """Issue 36, item 5: the verdict is read where the landing is judged (the population), and a rule that lands
    with no ceiling at its rates is not marked "yes"."""
    res = pd.DataFrame({"label": ["A"], "target": ["t"], "accuracy": [0.824], "ceiling_at_measured": [0.814],
                        "pop_accuracy": [0.80], "pop_ceiling_at_measured": [0.81], "pop_ceiling_at_target": [0.82],
                        "target_0": [0.3], "target_1": [0.3], "pop_gap_0": [0.0], "pop_gap_0_lo": [-0.01],
                        "pop_gap_0_hi": [0.01], "pop_gap_1": [0.0], "pop_gap_1_lo": [-0.01], "pop_gap_1_hi": [0.01]})
    tab = ceiling_table(res, prefix="pop_")
    assert tab["accuracy"].iloc[0] == 0.80 and tab["reached the target, within the ceiling"].iloc[0] == "yes"
    assert ceiling_verdict(0.80, float("nan"), (LANDS, "lands")) == "lands; no ceiling at its rates to compare with"
