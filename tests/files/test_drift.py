"""Drift against the training rows when scoring (issue 47, item 8): per feature the share of rows out of the training
range with its interval and a distribution-shift score tested against chance at a 5% level for the whole table;
a clean sample of the same population raises a flag somewhere in at most about 5% of tables, a shifted copy names
the shifted columns in one line each, and a crafted record is ignored, never trusted."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairdash import data
from fairdash.files.drift import drift_record, drift_table
from fairdash.files.scoring import training_schema
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.experiments import fit_model


@pytest.fixture(scope="module")
def adult():
    table = data.load_sample("adult")
    task = data.build_task(table, data.TaskSpec("sex", "salary", ("Male",), (">50K",), drop=("fnlwgt",)))
    model = fit_model(task, "lr", target=make_target_spec("dp", 0.3), seed=0)
    test_rows = task.X.index.difference(task.X.index[model_train_rows(task)])
    return task, model, table.loc[task.X.index].loc[test_rows].reset_index(drop=True)


def model_train_rows(task):
    return data.split_task(task, seed=0).train


def _population(n, rng):
    """Fresh rows of one population: a continuous, a skewed and a count column, a text column of 20 levels of
    unequal shares and one of 3, and a label that depends on them."""
    levels = [f"L{i}" for i in range(20)]
    p = np.arange(20, 0, -1) / np.arange(20, 0, -1).sum()
    df = pd.DataFrame({"x": rng.normal(size=n), "income": rng.lognormal(3, 1, n), "visits": rng.poisson(1.5, n),
                       "region": rng.choice(levels, n, p=p), "kind": rng.choice(["a", "b", "c"], n, p=[.6, .3, .1]),
                       "g": rng.choice(["f", "m"], n)})
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-(df["x"] + 0.3 * df["visits"] - 0.5)))).astype(int)
    return df


def test_clean_samples_of_the_population_raise_few_false_alarms():
    """200 fresh samples of 400 rows from the population a model was trained on: the share of tables with any
    feature flagged beyond chance stays near the 5% the table shares among its features (Bonferroni); at most 8%
    here (binomial noise on 200 tables is about 1.5 points)."""
    rng = np.random.default_rng(0)
    task = data.build_task(_population(5000, rng), data.TaskSpec("g", "y", ("m",), ("1",)))
    model = fit_model(task, "lr", target=make_target_spec("dp", 0.3), seed=0)
    alarms = sum(bool(model.check_table(_population(400, rng)).drift["beyond chance"].any()) for _ in range(200))
    assert alarms / 200 <= 0.08, alarms


def test_a_shifted_copy_names_each_shifted_column_in_one_line(adult):
    task, model, held_out = adult
    new = held_out.iloc[:300].reset_index(drop=True)
    new.loc[:17, "age"] += 80  # 18 ages far out of range
    new.loc[20:34, "hours-per-week"] *= 3  # a feature tripled on 15 rows
    new.loc[40:140, "education"] = "Doctorate"  # a third of the rows moved to one category
    checked = model.check_table(new)
    lines = [n for n in checked.notes if n.startswith("Drift in column")]
    assert [n.split("'")[1] for n in lines] == ["age", "education", "hours-per-week"]
    assert "18 of 300 rows (6.0%, 95% interval" in lines[0] and "outside the training range 17 to 90" in lines[0]
    assert "chi-square test p < 0.001" in lines[1]
    assert not any("far outside" in n for n in checked.notes)  # one line a column: the far rows said in its drift line
    row = checked.drift.set_index("feature").loc["hours-per-week"]
    assert row["out of range lo"] <= row["out of range"] <= row["out of range hi"] and row["drifted"]


def test_a_discrete_column_is_compared_exactly_and_a_crafted_record_is_ignored():
    col = pd.Series([0] * 90 + [5] * 10)
    rec = drift_record(col, text=False)
    schema = {"n_rows": 100, "columns": {"x": {"kind": "number", "min": 0.0, "max": 5.0, **rec}}}
    same = drift_table(pd.DataFrame({"x": [0.0] * 900 + [5.0] * 100}), schema, [])
    assert same["shift"].iloc[0] == pytest.approx(0.0) and not same["drifted"].iloc[0]
    crafted = {"n_rows": 100, "columns": {"x": {"quantiles": [1e308, "a"], "at_or_below": [2], "below": [None]}}}
    assert drift_table(pd.DataFrame({"x": [1.0, 2.0]}), crafted, []).empty
    assert drift_table(pd.DataFrame({"x": [1.0]}), {"n_rows": "many", "columns": []}, []).empty


def test_the_training_schema_records_quantiles_and_category_shares(adult):
    task, _, _ = adult
    schema = training_schema(task)
    age, education = schema["columns"]["age"], schema["columns"]["education"]
    assert age["quantiles"][0] == age["min"] and age["quantiles"][-1] == age["max"]
    assert 0 < age["at_or_below"][0] <= age["at_or_below"][-1] == 1.0
    assert sum(education["shares"].values()) == pytest.approx(1.0)
