"""Issue 12 through the dashboard (AppTest): an upload is a suggestion until confirmed; a leak is listed
and one click drops it; a 3-group task and an intersectional task train and plot; the population and
the paper's balanced test set both appear on Compare (each figure titled with its rows) and in the
report; several runs show together on Compare, and the history clears with one button (issue 13)."""
import numpy as np
import pandas as pd
import pytest

from fairdash import data

import app_state
from app_pages import errors, new_app, ok, upload, use

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")


def _figure_titles(at) -> list[str]:
    import json

    return [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]


def _target_views(results) -> int:
    """1 where Compare draws the target view (results with per-group targets), else 0."""
    from fairdash.figures.plots import target_view_note

    return int(target_view_note(results) is None)


@pytest.fixture(scope="module")
def adult_table_12k() -> pd.DataFrame:
    return data.load_sample("adult").sample(12000, random_state=1).reset_index(drop=True)


def test_a_leak_is_listed_and_one_click_drops_it():
    rng = np.random.default_rng(0)
    n = 1500
    y = rng.integers(0, 2, n)
    df = pd.DataFrame({"gender": rng.choice(["f", "m"], n), "x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "approved_copy": np.where(rng.random(n) < 0.01, 1 - y, y), "outcome": y})
    at = upload(new_app(), "loans.csv", df)
    assert (app_state.session(at).s_column, app_state.session(at).y_column) == ("gender", "outcome")
    assert any("approved_copy" in m.value and "gives **y** away" in m.value for m in at.markdown)
    at.button(key="drop_leak_approved_copy").click().run()
    ok(at)
    assert "approved_copy" not in app_state.session(at).features
    assert not any("gives **y** away" in m.value for m in at.markdown)
    use(at)  # answering first where the page asks whether a positive label is favourable
    ok(at)
    assert "approved_copy" not in app_state.get(at, "task").features


def test_a_column_that_gives_both_s_and_y_away_is_one_line_with_one_button():
    """A column that gives s and y away alike (a coded case id, say) was listed twice with two buttons of one key,
    and the Data page stopped on Streamlit's duplicate-key error: it is one line naming both, one button."""
    rng = np.random.default_rng(2)
    n = 1500
    s, y = rng.integers(0, 2, n), rng.integers(0, 2, n)
    df = pd.DataFrame({"gender": np.where(s == 1, "m", "f"), "x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "case_code": 10 * s + y + rng.normal(scale=0.01, size=n), "outcome": y})
    at = upload(new_app(), "cases.csv", df)
    assert (app_state.session(at).s_column, app_state.session(at).y_column) == ("gender", "outcome")
    lines = [m.value for m in at.markdown if "case_code" in m.value and "away" in m.value]
    assert len(lines) == 1 and "**y** away" in lines[0] and "**s** away" in lines[0], lines
    at.button(key="drop_leak_case_code").click().run()
    ok(at)
    assert "case_code" not in app_state.session(at).features


def test_a_one_hot_sibling_is_never_guessed_as_the_label():
    rng = np.random.default_rng(1)
    n = 800
    m = rng.integers(1, 4, n)
    df = pd.DataFrame({"LIMIT_BAL": rng.integers(1, 50, n) * 1000, "SEX": rng.integers(1, 3, n),
                       "MARRIAGE_1": (m == 1).astype(int), "MARRIAGE_2": (m == 2).astype(int),
                       "MARRIAGE_3": (m == 3).astype(int), "default payment next month": rng.integers(0, 2, n)})
    at = upload(new_app(), "credit.csv", df)
    assert app_state.session(at).y_column == "default payment next month"
    assert app_state.get(at, "table_id") == "sample:adult"  # not committed before the user confirms


def _train(at, models=("fair-lr", "lr")):
    at.switch_page("pages/train.py").run()
    ok(at)
    at.multiselect(key="train_models").set_value(list(models)).run()
    at.button(key="train_button").click().run(timeout=400)
    ok(at)
    assert not errors(at), errors(at)


@pytest.mark.slow
def test_three_groups_and_an_intersection_train_and_plot(adult_table_12k):
    at = upload(new_app(), "adult3000.csv", adult_table_12k)
    at.selectbox(key="s_column").set_value("race").run()
    at.radio(key="s_mode").set_value("each").run()
    ok(at)
    use(at)  # answering first where the page asks whether a positive label is favourable
    ok(at)
    task = app_state.get(at, "task")
    assert task.n_groups == 5 and "race" not in task.features
    _train(at)
    res = app_state.get(at, "run").results
    assert {f"pop_pr_{j}" for j in range(5)} <= set(res.columns)
    at.switch_page("pages/compare.py").run()
    ok(at)
    titles = _figure_titles(at)
    # the group rates, accuracy against fairness, the target view where there are targets, and calibration
    assert len(titles) == 3 + _target_views(res) + 1 and all("population" in t for t in titles), titles

    # race × sex on the whole Adult sample (a 12,000-row subset leaves some of the 10 cells without
    # positives, which the page refuses with that reason): every combination its own group, with the
    # names flowing into the readouts
    at = new_app()
    at.selectbox(key="s_column").set_value("race").run()
    at.radio(key="s_mode").set_value("cross").run()
    at.selectbox(key="s_with").set_value("sex").run()
    ok(at)
    task = app_state.get(at, "task")
    assert task.n_groups == 10 and "White × Male" in task.group_names
    assert "sex" not in task.features and "race" not in task.features
    at.switch_page("pages/target.py").run()
    ok(at)
    assert any("White × Male" in m.value for m in at.markdown)
    _train(at, ("fair-lr",))
    assert {f"pr_{j}" for j in range(10)} <= set(app_state.get(at, "run").results.columns)
    at.switch_page("pages/compare.py").run()
    ok(at)
    assert len(_figure_titles(at)) == 3 + _target_views(app_state.get(at, "run").results) + 1


@pytest.mark.slow
def test_population_and_balanced_views_on_compare_and_in_the_report(adult_table_12k):
    at = upload(new_app(), "adult3000.csv", adult_table_12k)
    use(at)  # answering first where the page asks whether a positive label is favourable
    _train(at)
    at.switch_page("pages/compare.py").run()
    ok(at)
    assert all("population" in t for t in _figure_titles(at))
    at.radio(key="compare_view").set_value("balanced").run()
    ok(at)
    assert all("balanced test set" in t for t in _figure_titles(at))
    at.switch_page("pages/export.py").run()
    at.button(key="build_report_button").click().run(timeout=200)
    ok(at)
    assert not errors(at), errors(at)
    import html as html_lib

    text = html_lib.unescape(app_state.get(at, "report_html")[2])
    assert "on the population (the ordinary test set" in text and "on the paper's balanced test set" in text


@pytest.mark.slow
def test_two_runs_show_together_and_the_history_clears(adult_table_12k):
    at = upload(new_app(), "adult3000.csv", adult_table_12k)
    use(at)  # answering first where the page asks whether a positive label is favourable
    _train(at, ("lr",))
    at.switch_page("pages/target.py").run()
    app_state.pr_t_slider(at).set_value(0.3).run()
    _train(at, ("fair-lr",))
    assert [r.number for r in app_state.get(at, "runs")] == [1, 2]
    at.switch_page("pages/compare.py").run()
    at.multiselect(key="compare_runs").set_value([1, 2]).run()
    ok(at)
    table = [d.value for d in at.dataframe if "model" in d.value.columns][0]
    assert {"LR · run 1", "FairLR · run 2"} <= set(table["model"])
    at.button(key="clear_runs").click().run()
    ok(at)
    assert app_state.get(at, "runs") == []
    assert any("Nothing trained yet" in i.value for i in at.info)


def test_train_page_warns_about_a_leak_of_s_unless_s_is_seen_on_purpose():
    """Issue 19, item 13: a copy of s among the features is warned about before training."""
    rng = np.random.default_rng(3)
    n = 1500
    g = rng.choice(["f", "m"], n)
    df = pd.DataFrame({"gender": g, "gender_code": (g == "m").astype(int), "x1": rng.normal(size=n),
                       "outcome": rng.integers(0, 2, n)})
    at = upload(new_app(), "copy.csv", df)
    use(at)  # answering first where the page asks whether a positive label is favourable
    ok(at)
    at.switch_page("pages/train.py").run()
    ok(at)
    assert any("`gender_code` give(s) the sensitive attribute s away" in w.value for w in at.warning)
    at.checkbox(key="s_as_feature").check().run()  # the run sees s on purpose: no warning about s
    ok(at)
    assert app_state.get(at, "task").spec.s_as_feature
    assert not any("sensitive attribute s away" in w.value for w in at.warning)


def test_a_joint_leak_is_listed_once_and_one_click_drops_its_columns():
    """Issue 19, item 11: drop-first dummies of a text label (no column alone gives y away) are one leak."""
    rng = np.random.default_rng(4)
    n = 1500
    lab = rng.choice(["a", "b", "c"], n)
    df = pd.DataFrame({"gender": rng.choice(["f", "m"], n), "x1": rng.normal(size=n),
                       "lab_b": (lab == "b").astype(int), "lab_c": (lab == "c").astype(int),
                       "outcome": (lab == "a").astype(int)})
    at = upload(new_app(), "labels.csv", df)
    assert (app_state.session(at).s_column, app_state.session(at).y_column) == ("gender", "outcome")
    joint = [m.value for m in at.markdown if "give **y** away together" in m.value]
    assert len(joint) == 1 and "`lab_b`" in joint[0] and "`lab_c`" in joint[0]
    at.button(key="drop_joint_y").click().run()
    ok(at)
    assert not {"lab_b", "lab_c"} & set(app_state.session(at).features)
    assert not any("away together" in m.value for m in at.markdown)
