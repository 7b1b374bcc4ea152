"""One table per Compare (issue 47, item 4): runs trained on different tables or tasks are never drawn on one figure.
Where the chosen runs span several, Compare says so and draws one table's runs at a time (the newest run's table
first), the choice kept for the session; runs of one table are drawn together as before."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairdash import data
from fairdash.files.run_spec import RunSpec
from fairdash.targeting.criteria import DP
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.experiments import ExperimentPlan, run_experiment
from fairdash.work.runs import Run

import app_state
from app_pages import new_app, ok

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")


def _other_task():
    rng = np.random.default_rng(3)
    n = 1500
    df = pd.DataFrame({"colour": rng.choice(["teal", "amber"], n), "x": rng.normal(size=n),
                       "deny": rng.choice(["yes", "no"], n)})
    return data.build_task(df, data.TaskSpec("colour", "deny", ("teal",), ("yes",)))


def _run(task, name, number):
    target = make_target_spec("dp", 0.3)
    res = run_experiment(ExperimentPlan(task, ["lr"], [0.3], [0], target=target)).results
    spec = RunSpec(data=name, task=task.spec, target=target, models=("lr",), target_rates=(0.3,), seeds=(0,),
                   group_names=task.group_names)
    return Run(spec, task, name, res, number=number)


def test_runs_of_two_tables_are_drawn_one_table_at_a_time():
    at = new_app()
    adult = app_state.get(at, "task")
    runs = [_run(adult, "Adult", 1), _run(_other_task(), "loans.csv", 2)]
    app_state.put(at, "runs", runs)
    app_state.put(at, "run", runs[-1])
    at.switch_page("pages/compare.py").run()
    at.multiselect(key="compare_runs").set_value([1, 2]).run()
    ok(at)
    assert any("trained on 2 different tables or tasks" in w.value for w in at.warning)
    choice = at.radio(key="compare_table")
    assert choice.options == ["loans.csv, s = colour, y = deny (run 2)", "Adult, s = sex, y = salary (run 1)"]
    assert choice.value == runs[1].task.fingerprint  # the newest run's table first
    table = next(d.value for d in at.dataframe if "model" in d.value.columns)
    assert any("(amber)" in c or "(teal)" in c for c in table.columns)  # its groups, not Adult's
    assert not any("(Female)" in c for c in table.columns)
    choice.set_value(runs[0].task.fingerprint).run()
    ok(at)
    table = next(d.value for d in at.dataframe if "model" in d.value.columns)
    assert any("(Female)" in c for c in table.columns) and not any("(teal)" in c for c in table.columns)
    at.switch_page("pages/train.py").run()
    at.switch_page("pages/compare.py").run()
    ok(at)
    assert at.radio(key="compare_table").value == runs[0].task.fingerprint  # kept for the session


def test_runs_of_one_table_are_drawn_together_without_a_question():
    at = new_app()
    adult = app_state.get(at, "task")
    runs = [_run(adult, "Adult", 1), _run(adult, "Adult", 2)]
    app_state.put(at, "runs", runs)
    at.switch_page("pages/compare.py").run()
    at.multiselect(key="compare_runs").set_value([1, 2]).run()
    ok(at)
    assert not [r for r in at.radio if r.key == "compare_table"]
    assert not any("different tables" in w.value for w in at.warning)


def test_the_what_if_target_and_the_calibration_choice_are_kept_across_pages():
    """Issue 47, item 6: the what-if slider and "Calibration of" keep the analyst's choice when the page is left."""
    at = new_app()
    adult = app_state.get(at, "task")
    target = make_target_spec("dp", 0.3)
    res = run_experiment(ExperimentPlan(adult, ["lr", "fair-lr"], [0.2, 0.3, 0.4], [0], target=target,
                                        keep_models=True))
    spec = RunSpec(data="adult", task=adult.spec, target=target, models=("lr", "fair-lr"),
                   target_rates=(0.2, 0.3, 0.4), seeds=(0,), group_names=adult.group_names)
    run = Run(spec, adult, "Adult", res.results, models=res.models, number=1)
    app_state.put(at, "runs", [run])
    at.switch_page("pages/compare.py").run()
    ok(at)
    at.select_slider(key="compare_target").set_value(0.4).run()
    assert len(at.selectbox(key="calibration_model").options) > 1
    last = (1, list(run.models)[-1])
    at.selectbox(key="calibration_model").set_value(last).run()
    chosen = at.selectbox(key="calibration_model").value
    at.switch_page("pages/train.py").run()
    at.switch_page("pages/compare.py").run()
    ok(at)
    assert at.select_slider(key="compare_target").value == 0.4
    assert at.selectbox(key="calibration_model").value == chosen == last


def test_the_filter_by_model_and_rule_keeps_its_choice_and_shows_what_is_new():
    """Issue 47, item 6: with many series, Compare filters its rows by model and by rule; the choice is kept across
    pages, and a model trained since joins it (never hidden by an old choice)."""
    at = new_app()
    adult = app_state.get(at, "task")
    target = make_target_spec("dp", 0.3)
    res = run_experiment(ExperimentPlan(adult, ["lr", "fair-lr"], [0.3], [0], target=target,
                                        decisions=["threshold", "group-rates"])).results
    spec = RunSpec(data="adult", task=adult.spec, target=target, models=("lr", "fair-lr"), target_rates=(0.3,),
                   seeds=(0,), group_names=adult.group_names, decisions=("threshold", "group-rates"))
    app_state.put(at, "runs", [Run(spec, adult, "Adult", res, number=1)])
    at.switch_page("pages/compare.py").run()
    ok(at)
    models = at.multiselect(key="compare_models")
    assert models.value == ["lr", "fair-lr"] and at.multiselect(key="compare_rules").value == ["threshold",
                                                                                               "group-rates"]
    models.set_value(["lr"]).run()
    table = next(d.value for d in at.dataframe if "model" in d.value.columns)
    assert set(table["model"]) == {"LR", "LR [group-rates, decides with s]"}
    at.switch_page("pages/train.py").run()
    at.switch_page("pages/compare.py").run()
    assert at.multiselect(key="compare_models").value == ["lr"]  # kept
    tr = run_experiment(ExperimentPlan(adult, ["target-reduction"], [0.3], [0], target=target)).results
    spec2 = RunSpec(data="adult", task=adult.spec, target=target, models=("target-reduction",), target_rates=(0.3,),
                    seeds=(0,), group_names=adult.group_names)
    app_state.put(at, "runs", [Run(spec, adult, "Adult", res, number=1), Run(spec2, adult, "Adult", tr, number=2)])
    at.switch_page("pages/compare.py").run()
    at.multiselect(key="compare_runs").set_value([1, 2]).run()
    ok(at)
    assert at.multiselect(key="compare_models").value == ["lr", "target-reduction"]  # the new model joins


@pytest.mark.slow
def test_a_run_trained_after_a_reload_of_the_train_page_joins_compare(one_browser):
    """Issue 47, item 4: Compare shown (runs 1 and 2 chosen), the Train page reloaded (the session restored from the
    store under its address), a third run trained: Compare lists and shows it beside the kept choice."""
    from app_pages import address_of, open_address, train_lr

    at = new_app()
    at.selectbox(key="sample_choice").set_value("compas").run()
    train_lr(at, pr_t=0.4)
    train_lr(at, pr_t=0.5)
    at.switch_page("pages/compare.py").run()
    at.multiselect(key="compare_runs").set_value([1, 2]).run()
    ok(at)
    at.switch_page("pages/train.py").run()
    again = open_address(address_of(at))  # F5 on the Train page: the same session under the same token
    train_lr(again, pr_t=0.6)
    assert [r.number for r in app_state.get(again, "runs")] == [1, 2, 3]
    again.switch_page("pages/compare.py").run()
    ok(again)
    assert again.multiselect(key="compare_runs").value == [1, 2, 3]


def test_the_results_table_names_the_positive_rate_in_the_labels_words():
    """Issue 47, item 5: with y = ``deny`` (a denial), Compare's table heads each group's positive rate "denial rate
    (teal)", not "PR (teal)"; a task whose label names no outcome keeps "PR"."""
    from fairdash.app import compare
    from fairdash.figures import plots

    task = _other_task()
    run = _run(task, "mortgages.csv", 1)
    assert compare._rate_name([run]) == "denial rate"
    table = plots.results_table(run.results, DP, population=True, group_names=task.group_names,
                                rate_name=compare._rate_name([run]))
    assert {f"denial rate ({g})" for g in task.group_names} <= set(table.columns)
    assert not any(c.startswith("PR (") for c in table.columns)
    adult = app_state.get(new_app(), "task")
    assert compare._rate_name([_run(adult, "adult", 2)]) is None
