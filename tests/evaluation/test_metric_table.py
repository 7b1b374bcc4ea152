"""Issue 28, item 1: one table of metrics (fairdash.evaluation.metric_table). Every column the table lists is
produced by some run, every column a run produces is listed, the results file and ``train --json`` name a figure
alike, and the evaluation, the results file and the tables read their names from the table."""
import numpy as np
import pandas as pd
import pytest

from fairdash import data
from fairdash.evaluation.metric_table import (
    EVAL,
    METRICS,
    POP,
    columns,
    is_listed,
    lead_columns,
    metric_of,
    summarized_columns,
)
from fairdash.evaluation.metrics import flag_below_majority, summarize
from fairdash.files.results_file import from_file, row_to_file, to_file
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.experiments import RESULT_COLUMNS, ExperimentPlan, run_experiment


def _cut_task():
    """A table with a column of 80 levels, more than a column keeps: its results name it (``folded_levels``)."""
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({"g": rng.choice(["a", "b"], n), "y": rng.integers(0, 2, n), "x": rng.normal(size=n),
                       "city": [f"c{i % 80}" for i in range(n)]})
    return data.build_task(df, data.TaskSpec("g", "y", ("b",), ("1",)))


@pytest.fixture(scope="module")
def produced(compas_task):
    """The results of every kind of run: demographic parity over two targets, equality of opportunity, explicit
    TPR/TNR targets, a legitimate factor, two decision rules (one deciding with s: the price columns), and a
    model below the majority class."""
    strata = data.build_task(data.load_sample("compas"), data.TaskSpec("race", "two-year-recid", ("Caucasian",),
                                                                       ("1",), strata_column="sex"))
    runs = [(compas_task, ["fair-lr", "lr"], [0.3, 0.5], make_target_spec("dp", 0.4), None),
            (compas_task, ["fair-lr", "lr"], [None], make_target_spec("eo", 0.4), None),
            (compas_task, ["fair-lr", "lr"], [None], make_target_spec("eo", None, tpr_target=0.7, tnr_target=0.8),
             None),
            (strata, ["fair-lr", "lr"], [None], make_target_spec("dp", 0.45, strata_column="sex"), None),
            (compas_task, ["lr"], [None], make_target_spec("dp", 0.4), ["threshold", "group-rates"]),
            (_cut_task(), ["lr"], [None], make_target_spec("dp", 0.4), None)]
    out = [run_experiment(ExperimentPlan(task, models, grid, [0], target=spec, decisions=rules)).results
           for task, models, grid, spec, rules in runs]
    below = flag_below_majority(out[0], {0: 0.99})  # every row below a majority of 0.99: the flag's columns
    return out + [below]


def test_every_produced_column_is_listed_and_every_listed_one_produced(produced):
    seen = list(dict.fromkeys(c for res in produced for c in res.columns))
    assert [c for c in seen if not is_listed(c)] == []
    listed = {c for m in METRICS for c in columns(m)}
    assert sorted(listed - set(seen)) == []  # (so no listed-but-never-produced name, as pop_acc_* once was)


def test_the_results_file_columns_are_listed_and_read_back(produced):
    for res in produced:
        f = to_file(res)
        assert [c for c in f.columns if c != "results_format" and not is_listed(c)] == []
        back = from_file(f)
        assert set(back.columns) == set(res.columns)


def test_train_json_names_a_figure_as_the_results_file_does(produced):
    for res in produced[:2]:  # the balanced test set (dp) and the ordinary test set (eo)
        row = res.iloc[0].to_dict()
        named = row_to_file(row)
        f = to_file(res.iloc[:1])
        assert list(named) == [c for c in f.columns if c != "results_format"]
        for k, v in named.items():
            w = f[k].iloc[0]
            assert (pd.isna(v) and pd.isna(w)) or v == w or str(v) == str(w), k
    assert "bal_accuracy" in row_to_file(produced[0].iloc[0].to_dict())


def test_the_evaluation_reads_its_order_and_its_population_columns_from_the_table(produced):
    assert RESULT_COLUMNS == lead_columns()
    res = produced[0]
    for m in METRICS:
        if m.where == (EVAL, POP) and not m.prefixed and not m.names and not m.per_group:
            assert m.column(POP) in res.columns, m.name
    assert metric_of("pop_pr_1")[0].name == "pr" and metric_of("pop_pr_1")[1:] == (POP, 1)
    assert metric_of("bal_accuracy")[1] == EVAL and metric_of("nothing") is None


def test_summaries_average_the_table_s_summarized_columns(produced):
    res = produced[0]
    s = summarize(res)
    want = summarized_columns(res.columns)
    assert {"accuracy", "pr_0", "pop_pr_1", "pop_tnr_0", "acc_1", "target_gap", "pop_worst_gap"} <= set(want)
    assert [c for c in s.columns if c.endswith("_mean")] == [f"{c}_mean" for c in want]
    assert np.isfinite(s["accuracy_mean"]).all()


def test_a_metric_s_column_for_a_group_and_a_set():
    """Issue 28, item 3: the figures name the columns they read with ``column_of``, never by hand."""
    from fairdash.evaluation.metric_table import TRAIN, column_of

    assert [column_of("pr", EVAL, 0), column_of("pr", POP, 1), column_of("tpr", EVAL, 1)] == \
        ["pr_0", "pop_pr_1", "tpr_1"]
    assert [column_of("gap", EVAL, 0), column_of("gap", POP, 0), column_of("target", TRAIN, 2)] == \
        ["bal_gap_0", "pop_gap_0", "target_2"]
    assert [column_of("worst_gap", POP), column_of("worst_gap_group", EVAL), column_of("accuracy", POP)] == \
        ["pop_worst_gap", "bal_worst_gap_group", "pop_accuracy"]
    assert column_of("n", EVAL) == "n" and column_of("n", EVAL, 0) == "n_0"  # two rows named n: summary, per group
    for name, where, group in (("pr", TRAIN, 0), ("accuracy", EVAL, 0), ("nonesuch", EVAL, None)):
        with pytest.raises(KeyError):
            column_of(name, where, group)
    for m in METRICS:  # every listed column is what column_of gives for its metric, set and group
        for w in m.where:
            assert column_of(m.name, w, 0 if m.per_group else None) == m.column(w, 0 if m.per_group else None)
