"""The price of deciding without s (issue 26, item 2): the best landing rule with s beside the best blind
one, per split and over the means of the repeats, and the sentence Compare and the report show."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairdash.evaluation.blindness import LAND_TOLERANCE, add_price_columns, price_sentence, price_table
from fairdash.work.experiments import run_experiment
from fairdash.target.target_spec import make_target_spec


def _row(label, with_s, pr0, pr1, acc, seed=0, t=0.3):
    return {"model": label.lower(), "label": label, "criterion": "dp", "decides_with_s": with_s, "target_rate": t,
            "seed": seed, "target_0": t, "target_1": t, "pop_pr_0": pr0, "pop_pr_1": pr1, "pop_accuracy": acc}


def test_price_compares_the_best_landing_rules_on_each_side():
    res = pd.DataFrame([
        _row("A with s", True, 0.29, 0.30, 0.81),
        _row("B with s", True, 0.20, 0.30, 0.90),  # more accurate but misses the target: not a candidate
        _row("C blind", False, 0.28, 0.31, 0.78),
        _row("D blind", False, 0.29, 0.29, 0.79),
        _row("E blind", False, 0.10, 0.25, 0.85),  # misses
    ])
    out = add_price_columns(res)
    assert out["pop_with_s_accuracy"].iloc[0] == pytest.approx(0.81)
    assert out["pop_blind_accuracy"].iloc[0] == pytest.approx(0.79)
    np.testing.assert_allclose(out["price_of_blindness"], 0.02)
    table = price_table(res)
    assert table["with_s_label"].iloc[0] == "A with s" and table["blind_label"].iloc[0] == "D blind"
    sentence = price_sentence(table.iloc[0], "sex")
    assert sentence.startswith("Deciding without sex costs 2.0 points of accuracy at PR_t 0.30 on this table")


def test_the_mean_over_repeats_decides_whether_a_rule_lands():
    # one split misses by 0.04, the other by -0.02: the mean (0.31) is within the tolerance
    res = pd.DataFrame([_row("W", True, 0.30, 0.30, 0.80, seed=k) for k in (0, 1)]
                       + [_row("B", False, 0.34, 0.30, 0.75, seed=0), _row("B", False, 0.28, 0.30, 0.77, seed=1)])
    per_split = add_price_columns(res)
    assert np.isnan(per_split.loc[per_split["seed"] == 0, "price_of_blindness"]).all()  # seed 0 misses by 0.04
    assert per_split.loc[per_split["seed"] == 1, "price_of_blindness"].iloc[0] == pytest.approx(0.03)
    table = price_table(res)
    assert table["price_of_blindness"].iloc[0] == pytest.approx(0.80 - 0.76)
    assert table["repeats"].iloc[0] == 2


def test_no_landing_blind_rule_is_said_and_a_table_without_a_with_s_rule_is_left_alone():
    res = pd.DataFrame([_row("W", True, 0.30, 0.30, 0.80), _row("B", False, 0.10, 0.30, 0.85)])
    assert "No rule that decides without race landed" in price_sentence(price_table(res).iloc[0], "race")
    blind_only = pd.DataFrame([_row("B", False, 0.30, 0.30, 0.85)])
    assert list(add_price_columns(blind_only).columns) == list(blind_only.columns)
    assert price_table(blind_only).empty
    assert LAND_TOLERANCE == 0.03


def test_adult_sex_price_at_030_reports_both_accuracies(adult_task):
    """Models x rules in one sweep: LR under group-rates (with s) and the target reduction (without s)."""
    res = run_experiment(adult_task, ["lr", "target-reduction"], [0.30], [0], target=make_target_spec("dp", 0.30),
                         decisions=["threshold", "group-rates"]).results
    assert set(res["decision"]) == {"threshold", "group-rates"}
    table = price_table(res).iloc[0]
    assert table["with_s_label"].startswith("LR [group-rates") and table["blind_label"].startswith("Target reduction")
    assert table["with_s_accuracy"] >= 0.81 and table["blind_accuracy"] >= 0.79
    assert 0 < table["price_of_blindness"] < 0.03
    assert res["price_of_blindness"].notna().all()


def test_nothing_is_said_where_no_rule_of_either_side_landed():
    from fairdash.evaluation.blindness import price_sentences

    res = pd.DataFrame([_row("W", True, 0.10, 0.30, 0.80), _row("B", False, 0.10, 0.30, 0.85)])
    assert price_sentences(res, "sex") == []
    assert price_sentence(price_table(res).iloc[0], "sex").startswith("No rule landed")
