"""The dashboard through streamlit.testing.v1.AppTest: every page renders its defaults, the Target
page's readouts follow the slider with exactly the numbers `python -m fairdash rates` prints, bad
choices show an error box (never an exception), and a small FairLR run trains, compares and exports."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairdash import cli, data
from fairdash.targeting.target_spec import TargetSpec

import app_state
from app_pages import (
    CEILING,
    errors,
    frame,
    hand_made_run,
    metric,
    new_app,
    ok,
    pr_t_box,
    sidebar,
    upload,
    use,
)

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["pages/data.py", "pages/target.py", "pages/train.py", "pages/compare.py", "pages/export.py",
         "pages/how_it_works.py"]


def _cli_rates(capsys, pr_t: float) -> dict:
    capsys.readouterr()
    code = cli.main(["rates", "--data", "adult", "--s", "sex", "--s1", "Male", "--y", "salary", "--y1", ">50K",
                     "--pr-t", str(pr_t), "--json"])
    assert code == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def app():
    """One app session on its defaults (Adult, s = sex, y = salary), shared by the read-only tests."""
    return new_app()


# --------------------------------------------------------------------------------------------------
# Defaults
# --------------------------------------------------------------------------------------------------
def test_first_open_loads_adult_with_sex_and_salary(app):
    ok(app)
    spec = app_state.get(app, "spec")
    assert app_state.get(app, "table_id") == "sample:adult"
    assert (spec.s_column, spec.s1_values, spec.y_column, spec.y1_values) == ("sex", ("Male",), "salary", (">50K",))
    assert "fnlwgt" not in spec.features  # the paper's set-up drops it
    assert app.selectbox(key="s_column").value == "sex"
    assert app.selectbox(key="y_column").value == "salary"
    side = sidebar(app)
    assert "Adult" in side and "sex" in side and "salary" in side and "PR_t" in side and "Device" in side
    assert not errors(app)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_its_defaults(app, page):
    app.switch_page(page).run()
    ok(app)
    assert not errors(app)
    assert app.title, "each page has a title"


def test_data_page_shows_group_table_and_plain_positive_meaning(app):
    app.switch_page("pages/data.py").run()
    ok(app)
    assert any("Positive (y = 1) means" in m.value for m in app.markdown)
    table = frame(app, "base rate")
    assert list(table["rows"]) == [int((app_state.get(app, "task").s == j).sum()) for j in (0, 1)]


# --------------------------------------------------------------------------------------------------
# Target page: readouts follow the slider with the CLI's numbers
# --------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_default_target_is_the_avg_preset_and_matches_the_cli(app, capsys):
    app.switch_page("pages/target.py").run()
    ok(app)
    pr_t = app_state.pr_t(app)
    out = _cli_rates(capsys, pr_t)
    assert pr_t == pytest.approx(round(out["presets"]["avg"], 3))
    assert metric(app, CEILING) == f"{out['ceiling_at_target']:.4f}"


@pytest.mark.slow
@pytest.mark.parametrize("pr_t", [0.3, 0.12])
def test_slider_changes_readouts_to_what_fairdash_computes(app, capsys, pr_t):
    app.switch_page("pages/target.py").run()
    before = metric(app, CEILING)
    app_state.pr_t_slider(app).set_value(pr_t).run()
    ok(app)
    out = _cli_rates(capsys, pr_t)
    assert metric(app, CEILING) == f"{out['ceiling_at_target']:.4f}"
    assert metric(app, CEILING) != before
    # the headline: the share of each group whose labels move (issue 20); t_s in the detail table
    moved = {m.label.split(":")[0]: m.value for m in app.metric if m.label.endswith(": labels that move")}
    table = frame(app, "t_s")
    for j in ("0", "1"):
        tr, r = out["transition"][j], out["base_rates"][j]
        share = (1 - r) * tr["p_ybar1_given_y0"] + r * (1 - tr["p_ybar1_given_y1"])
        assert next(v for k, v in moved.items() if k.startswith(f"s={j}")) == f"{share:.1%}"
        assert table["t_s"].iloc[int(j)] == pytest.approx(out["t"][j], rel=1e-9)
    assert pr_t_box(app).value == pytest.approx(pr_t)
    assert app_state.pr_t(app) == pytest.approx(pr_t)
    assert f"PR_t:** {pr_t:.3f}" in sidebar(app)  # the sidebar follows the slider
    # the transition table shows the same probabilities
    tab = frame(app, "P(ybar=1 | y=1)")
    for j in (0, 1):
        tr = out["transition"][str(j)]
        assert tab["P(ybar=1 | y=1)"].iloc[j] == pytest.approx(tr["p_ybar1_given_y1"])
        assert tab["P(ybar=1 | y=0)"].iloc[j] == pytest.approx(tr["p_ybar1_given_y0"])
        assert tab["P(y=1 | ybar=0)"].iloc[j] == pytest.approx(tr["p_y1_given_ybar0"])


@pytest.mark.slow
def test_target_page_says_what_a_model_that_does_not_see_s_can_do(app):
    """Issue 18, item 3: the features' AUC for s (the readout's s_predictability), in one sentence."""
    from fairdash.analysis.separability import s_predictability

    app.switch_page("pages/target.py").run()
    ok(app)
    task = app_state.get(app, "task")
    auc = s_predictability(task, data.split_task(task, seed=0))
    assert auc == pytest.approx(0.93, abs=0.03)
    want = (f"The features tell the groups apart with AUC {auc:.2f}: a model that does not see sex can still treat "
            "the groups differently.")
    assert want in [t.value for t in app.text]
    app_state.pr_t_slider(app).set_value(0.25).run()  # the slider's readouts leave it as it is
    ok(app)
    assert want in [t.value for t in app.text]


@pytest.mark.slow
def test_number_box_and_presets_drive_the_same_state(app, capsys):
    app.switch_page("pages/target.py").run()
    pr_t_box(app).set_value(0.25).run()
    ok(app)
    assert app_state.pr_t_slider(app).value == pytest.approx(0.25)
    assert metric(app, CEILING) == f"{_cli_rates(capsys, 0.25)['ceiling_at_target']:.4f}"
    app.button(key="preset_max").click().run()
    ok(app)
    pmax = round(_cli_rates(capsys, 0.5)["presets"]["max"], 3)
    assert app_state.pr_t(app) == pytest.approx(pmax)
    assert app_state.pr_t_slider(app).value == pytest.approx(pmax)
    assert metric(app, CEILING) == f"{_cli_rates(capsys, pmax)['ceiling_at_target']:.4f}"
    app.button(key="preset_min").click().run()
    assert app_state.pr_t(app) == pytest.approx(round(_cli_rates(capsys, 0.5)["presets"]["min"], 3))


@pytest.mark.parametrize("bad", [0.0, 1.0])
def test_target_of_zero_or_one_is_unreachable_with_the_reason_shown(app, bad):
    """Issue 11, bug 6: the slider and the number box stop short of 0 and 1, and the page says why; a
    PR_t of 0 or 1 left in the session (an old state) is pulled back inside, never a failed training."""
    app_state.put(app, "target", TargetSpec(target_rate=bad, preset=None))  # built without make_target_spec's checks
    app.switch_page("pages/target.py").run()
    ok(app)
    slider = app_state.pr_t_slider(app)
    assert (slider.min, slider.max) == (0.001, 0.999)
    assert (pr_t_box(app).min, pr_t_box(app).max) == (0.001, 0.999)
    assert 0.001 <= app_state.pr_t(app) <= 0.999
    assert any("strictly between 0 and 1" in c.value for c in app.caption)
    assert not errors(app)
    app.switch_page("pages/train.py").run()
    assert not app.button(key="train_button").disabled


@pytest.mark.slow
def test_an_invalid_target_disables_train_with_the_reason():
    app = new_app()
    app.switch_page("pages/target.py").run()
    app.radio(key="criterion").set_value("eo-targets").run()
    app.number_input(key="tpr_target").set_value(0.3).run()
    app.number_input(key="tnr_target").set_value(0.5).run()
    ok(app)
    assert any("must be more than 1" in e for e in errors(app))
    app.switch_page("pages/train.py").run()
    ok(app)
    assert app.button(key="train_button").disabled
    assert any("not valid" in e for e in errors(app))


def test_target_survives_a_page_switch(app):
    app.switch_page("pages/target.py").run()
    app_state.pr_t_slider(app).set_value(0.277).run()
    app.switch_page("pages/data.py").run()
    app.switch_page("pages/target.py").run()
    ok(app)
    assert app_state.pr_t_slider(app).value == pytest.approx(0.277)


@pytest.mark.slow
def test_other_criteria_and_conditional_parity_render(capsys):
    at = new_app()
    at.switch_page("pages/target.py").run()
    at.radio(key="criterion").set_value("eo-targets").run()
    ok(at)
    assert not errors(at)
    metric(at, CEILING)
    at.number_input(key="tpr_target").set_value(0.9).run()
    ok(at)
    at.radio(key="criterion").set_value("eo").run()
    ok(at)
    metric(at, CEILING)
    at.radio(key="criterion").set_value("dp").run()
    at.selectbox(key="strata_column").set_value("education").run()
    ok(at)
    assert not errors(at)
    assert app_state.get(at, "spec").strata_column == "education"
    metric(at, CEILING)
    assert len(frame(at, "stratum")) == 2 * len(app_state.get(at, "task").strata_names)


def test_delta_too_small_shows_an_error():
    at = new_app()
    at.switch_page("pages/target.py").run()
    app_state.pr_t_slider(at).set_value(0.05).run()
    at.number_input(key="delta").set_value(0.5).run()
    ok(at)
    assert any("delta" in e for e in errors(at))


# --------------------------------------------------------------------------------------------------
# Bad choices on the Data page
# --------------------------------------------------------------------------------------------------
def test_label_with_a_single_value_shows_an_error_and_keeps_the_task():
    at = new_app()
    key_before = app_state.get(at, "task_key")
    at.multiselect(key="y1_values").set_value(["<=50K", ">50K"]).run()
    ok(at)
    assert any("only one value" in e for e in errors(at))
    assert app_state.get(at, "task_key") == key_before
    at.multiselect(key="y1_values").set_value([]).run()
    ok(at)
    assert any("Choose which values" in e for e in errors(at))
    at.multiselect(key="y1_values").set_value([">50K"]).run()
    assert not errors(at)
    # the same column for s and y
    at.selectbox(key="y_column").set_value("sex").run()
    ok(at)
    assert errors(at)
    assert app_state.get(at, "spec").y_column == "salary"


def test_numeric_sensitive_attribute_splits_by_a_threshold():
    at = new_app()
    at.selectbox(key="s_column").set_value("age").run()
    ok(at)
    assert not errors(at)
    assert at.number_input(key="s_threshold").value == pytest.approx(37.0)  # the median age
    spec = app_state.get(at, "spec")
    assert (spec.s_column, spec.s_threshold, spec.s1_values) == ("age", 37.0, ())
    assert "sex" in spec.features and "age" not in spec.features
    at.number_input(key="s_threshold").set_value(50.0).run()
    assert app_state.get(at, "task").group_names == ("age <= 50", "age > 50")
    at.radio(key="missing").set_value("impute").run()
    ok(at)
    assert app_state.get(at, "spec").missing == "impute"
    # one click back to the sample's standard task
    at.button(key="load_sample_button").click().run()
    ok(at)
    assert app_state.get(at, "spec").s_column == "sex"
    assert at.selectbox(key="s_column").value == "sex"
    at.run()
    assert at.button(key="load_sample_button").disabled


def test_a_failed_upload_keeps_the_previous_task():
    at = new_app()
    at.radio(key="data_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value(("junk.csv", bytes(range(256)) * 20, "text/csv")).run()
    ok(at)
    assert any("previous data set" in e for e in errors(at))
    assert app_state.get(at, "table_id") == "sample:adult"


def test_an_upload_too_small_to_split_is_refused_with_a_message():
    rows = ["grp,x,label"] + [f"a,{i},{i % 2}" for i in range(12)] + [f"b,{i},0" for i in range(6)] + ["b,99,1"]
    at = new_app()
    at.radio(key="data_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value(("tiny.csv", "\n".join(rows).encode(), "text/csv")).run()
    ok(at)
    assert (app_state.session(at).s_column, app_state.session(at).y_column) == ("grp", "label")
    at.multiselect(key="s1_values").set_value(["a"]).run()
    at.multiselect(key="y1_values").set_value(["1"]).run()
    ok(at)
    assert any("Too few rows to split into training and test sets: group" in e for e in errors(at)), errors(at)
    assert app_state.get(at, "table_id") == "sample:adult"  # nothing half-committed
    at.switch_page("pages/target.py").run()
    ok(at)
    metric(at, CEILING)


def test_switching_to_compas_says_what_positive_means():
    at = new_app()
    at.selectbox(key="sample_choice").set_value("compas").run()
    ok(at)
    assert app_state.get(at, "table_id") == "sample:compas"
    assert any("NOT a favourable outcome" in m.value for m in at.markdown)
    assert "COMPAS" in sidebar(at)
    at.switch_page("pages/target.py").run()
    ok(at)
    metric(at, CEILING)


def test_sessions_do_not_share_state(tmp_path):
    a = new_app()
    a.selectbox(key="sample_choice").set_value("compas").run()
    b = new_app()
    assert app_state.get(a, "table_id") == "sample:compas"
    assert app_state.get(b, "table_id") == "sample:adult"


# --------------------------------------------------------------------------------------------------
# Train -> Compare -> Export on a small upload
# --------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_train_fair_lr_on_a_small_upload_then_compare_and_export(adult_1000_csv):
    at = upload(new_app(), "adult_small.csv", adult_1000_csv)
    # the guessed roles are suggestions: nothing is committed, and Train waits, until the user confirms
    assert (app_state.session(at).s_column, app_state.session(at).y_column) == ("sex", "salary")
    assert any("Suggested from the column names" in i.value for i in at.info)
    assert app_state.get(at, "table_id") == "sample:adult"
    at.switch_page("pages/train.py").run()
    assert at.button(key="train_button").disabled
    at.switch_page("pages/data.py").run()
    at.button(key="confirm_task").click().run()
    ok(at)
    assert app_state.get(at, "table_name") == "adult_small.csv"
    assert any("now the current data set" in s.value for s in at.success)
    at.switch_page("pages/train.py").run()
    ok(at)
    assert "CPU" in " ".join(m.value for m in at.markdown)
    at.multiselect(key="train_models").set_value(["fair-lr", "lr"]).run()
    at.radio(key="train_mode").set_value("sweep").run()
    at.number_input(key="sweep_points").set_value(3).run()
    at.button(key="train_button").click().run(timeout=400)
    ok(at)
    assert not errors(at)
    run = app_state.get(at, "run")
    res = run.results
    assert set(res["model"]) == {"fair-lr", "lr"}
    assert res["target_rate"].notna().sum() == 3
    assert np.all(res["accuracy"].between(0, 1))
    # a repeated request is answered from session state at once
    at.button(key="train_button").click().run()
    assert any("already here" in s.value for s in at.success)

    at.switch_page("pages/compare.py").run()
    ok(at)
    charts = at.get("plotly_chart")
    from fairdash.figures.plots import target_view_note

    # the target view, for results with targets, and the calibration figure of a fitted model
    assert len(charts) == 3 + (target_view_note(res) is None) + 1
    swept = sorted(res["target_rate"].dropna().unique())
    at.select_slider(key="compare_target").set_value(swept[-1]).run()
    ok(at)
    assert f"{swept[-1]:.3f}" == metric(at, "Selected target PR_t")
    assert [d for d in at.get("download_button") if d.proto.label.startswith("Download results")]

    at.switch_page("pages/export.py").run()
    ok(at)
    labels = [d.proto.label for d in at.get("download_button")]
    assert "Download results (CSV)" in labels and "Download configuration (JSON)" in labels
    try:
        import fairdash.files.export  # noqa: F401
    except ImportError:
        pass
    else:
        assert any(label.startswith("Download the trained model (") and label.endswith(".fairdash)")
                   for label in labels)


def test_training_errors_are_messages_and_keep_the_session(monkeypatch, training_queue, adult_1000_csv):
    import fairdash.work.runs as runs
    from fairdash.errors import FairDashError

    def boom(*a, **k):
        raise FairDashError("The optimiser gave up.")

    monkeypatch.setattr(runs, "run_experiment", boom)  # what train_run calls
    training_queue(in_worker_process=False)  # (a worker process would not see the replacement)
    at = new_app()
    at.switch_page("pages/train.py").run()
    at.button(key="train_button").click().run()
    ok(at)
    assert any("The optimiser gave up." in e for e in errors(at))
    assert app_state.get(at, "task") is not None


def _target_figure(at) -> dict:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "fig_target" in c.proto.id][0]


def test_compare_shows_the_target_view_the_worst_gap_and_the_moved_away_sentence_as_text():
    from results_tables import target_results

    at = new_app()
    res = target_results(seeds=(0, 1), moved_away="FairLR moved Female away (row sentence)")
    fair, plain = res["model"] == "fair-lr", res["model"] == "lr"
    res.loc[fair, "pop_moved_0"] = "away"
    res.loc[plain, "pop_pr_0"] = 0.25  # plain LR lands nearer the target than FairLR's 0.163 (mean of 2 repeats)
    sentence = ("FairLR moved Female away from its target: positive rate 0.163 on the population against plain LR's "
                "0.250, target 0.300 (mean of 2 repeats).")
    hand_made_run(at, res, 0.3)
    keys = [c.proto.id for c in at.get("plotly_chart")]
    assert len(keys) == 4 and any("fig_target" in k for k in keys), keys
    target = _target_figure(at)
    fair = [t for t in target["data"] if t.get("name") == "FairLR"][0]
    assert fair["text"] == ["-0.137", "-0.041"]  # the mean over the two repeats, written beside the points
    assert "population" in target["layout"]["title"]["text"]
    # the sentence (averaged over the repeats) is plain text (st.text), never Markdown
    assert [t.value for t in at.text] == [sentence]
    table = [d.value for d in at.dataframe if "model" in d.value.columns][0]
    assert list(table["worst gap"]) == ["0.137 ± 0.007 (Female)", "-"] and "target_gap" not in table.columns
    # the balanced test set, one click away
    at.radio(key="compare_view").set_value("balanced").run()
    ok(at)
    target = _target_figure(at)
    assert [t for t in target["data"] if t.get("name") == "FairLR"][0]["text"] == ["-0.142", "-0.142"]
    assert "balanced" in target["layout"]["title"]["text"]


def test_compare_without_per_group_targets_says_why_in_one_line():
    from fairdash.figures.plots_target import NO_TARGET_COLUMNS

    from results_tables import results_table

    at = new_app()
    results = results_table(targets_=(0.2,), seeds=(0,))
    for c in ("pr_0", "pr_1", "tpr_0", "tpr_1", "pr_ratio", "tpr_ratio", "accuracy"):
        results[f"pop_{c}"] = results[c]
    hand_made_run(at, results, 0.2)
    assert len(at.get("plotly_chart")) == 3
    assert NO_TARGET_COLUMNS in [c.value for c in at.caption]


def test_the_train_page_trains_every_model_under_each_rule_in_one_run_and_prices_it():
    """Issue 34, item 8: one run of LR under every rule the page offers (the paper's, one cut for everyone, one cut
    per group) carries the price of deciding without s, as `sweep --decision` does."""
    at = new_app()
    at.selectbox(key="sample_choice").set_value("compas").run()
    at.switch_page("pages/train.py").run()
    ok(at)
    at.multiselect(key="train_models").set_value(["lr", "target-reduction"]).run()
    assert not at.checkbox(key="every_rule").value
    at.checkbox(key="every_rule").check().run()
    rules = list(at.radio(key="decision").options)
    assert len(rules) >= 2
    at.button(key="train_button").click().run(timeout=400)
    ok(at)
    assert not errors(at)
    run = app_state.get(at, "run")
    res = run.results
    assert len(run.spec.decisions) == len(rules) and len(res) == 2 * len(rules)
    assert res["decides_with_s"].any() and not res["decides_with_s"].all()
    assert (res["price_of_blindness"].notna().all()
            and (res["price_of_blindness_lo"] < res["price_of_blindness_hi"]).all())
    assert all(len(k) == 4 for k in run.models)  # each fitted model keyed by its rule too
    assert any(", decided by " in run.model_words(k) for k in run.models)


def test_compare_keeps_its_choice_of_runs_across_pages_and_adds_a_newer_run():
    """Issue 34, item 8: the runs chosen on Compare come back after another page; a run trained since joins them."""
    from types import SimpleNamespace

    from fairdash.app.compare import kept_runs

    history = [SimpleNamespace(number=n) for n in (1, 2, 3)]
    assert kept_runs([], history) == [3]  # never shown: the newest
    assert kept_runs([1], history, seen=3) == [1]  # kept as chosen
    assert kept_runs([1], history, seen=2) == [1, 3]  # run 3 was trained since
    assert kept_runs([7], history, seen=3) == [3]  # none left: the newest


def test_compare_s_choice_of_runs_survives_other_pages_in_the_app():
    at = new_app()
    at.selectbox(key="sample_choice").set_value("compas").run()
    at.switch_page("pages/train.py").run()
    at.multiselect(key="train_models").set_value(["lr"]).run()
    at.button(key="train_button").click().run(timeout=400)
    at.radio(key="decision").set_value("group-rates").run()
    at.button(key="train_button").click().run(timeout=400)
    ok(at)
    at.switch_page("pages/compare.py").run()
    assert at.multiselect(key="compare_runs").value == [2]  # first visit: the newest
    at.multiselect(key="compare_runs").set_value([1]).run()
    at.switch_page("pages/train.py").run()
    at.switch_page("pages/compare.py").run()
    ok(at)
    assert at.multiselect(key="compare_runs").value == [1]  # kept across pages
    at.switch_page("pages/train.py").run()
    at.radio(key="decision").set_value("overall-rate").run()
    at.button(key="train_button").click().run(timeout=400)
    at.switch_page("pages/compare.py").run()
    assert at.multiselect(key="compare_runs").value == [1, 3]  # and the run trained since joins it


def test_choosing_a_bundled_sample_loads_it_and_the_list_keeps_it():
    """Issue 36, item 4: choosing COMPAS in the list loads it (no second button), and the list still says COMPAS
    after another page."""
    at = new_app()
    at.selectbox(key="sample_choice").set_value("compas").run()
    ok(at)
    assert app_state.get(at, "table_id") == "sample:compas"
    assert any("Loaded" in s.value for s in at.success)
    assert at.button(key="load_sample_button").disabled  # its standard task is already the current one
    at.switch_page("pages/train.py").run()
    at.switch_page("pages/data.py").run()
    assert at.selectbox(key="sample_choice").value == "compas"


def test_after_use_only_the_confirmed_state_is_on_screen(adult_1000_csv):
    """Issue 36, item 4: once the upload is used, its "nothing is used until you confirm" note and the Discard
    button leave the page."""
    at = upload(new_app(), "adult_small.csv", adult_1000_csv)
    assert any("Nothing is used until you confirm" in i.value for i in at.info)
    assert [b for b in at.button if b.key == "discard_upload"]
    use(at)
    assert any("now the current data set" in s.value for s in at.success)
    assert not any("Nothing is used until you confirm" in i.value for i in at.info)
    assert not [b for b in at.button if b.key == "discard_upload"]


def _disadvantaged(at: AppTest) -> list[str]:
    return [c.value for c in at.caption if "disadvantaged group" in c.value]


def test_an_upload_whose_words_say_nothing_asks_before_use_and_names_no_disadvantaged_group_until_answered():
    """Issue 36, item 5: "favourable (assumed)" no longer names the disadvantaged group. Where the label's words
    (its meaning, its column name and positive values) do not say whether a positive label is good for the person,
    the question has no answer, the Use button is disabled and no sentence names a disadvantaged group; the answer
    names it (the lowest base rate of a favourable label, the highest of an unfavourable one)."""
    rng = np.random.default_rng(4)
    n = 800
    grp = rng.choice(["a", "b"], n)
    df = pd.DataFrame({"grp": grp, "x": rng.normal(size=n),
                       "label": np.where(rng.random(n) < np.where(grp == "a", 0.2, 0.5), "yes", "no")})
    at = upload(new_app(), "people.csv", df)
    assert (app_state.session(at).y_column, at.radio(key="positive_is").value) == ("label", None)
    assert at.button(key="confirm_task").disabled
    assert any("answer the question above" in w.value for w in at.warning)
    assert not _disadvantaged(at) and not [c for c in at.caption if "is the disadvantaged group" in c.value]
    assert any("not answered yet" in m.value for m in at.markdown)
    assert any("named once you say whether a positive label is favourable" in c.value for c in at.caption)
    for answer, group, rate in (("favourable", "a", "lowest"), ("unfavourable", "b", "highest")):
        at.radio(key="positive_is").set_value(answer).run()
        ok(at)
        assert not at.button(key="confirm_task").disabled
        sentences = [c for c in _disadvantaged(at) if "is the disadvantaged group" in c]
        assert (len(sentences) == 1
                and f"{group} is the disadvantaged group: it has the {rate} base rate" in sentences[0])
        assert "(assumed)" not in sentences[0] and "taken as favourable" not in sentences[0]
    at.button(key="confirm_task").click().run()
    ok(at)
    assert app_state.get(at, "spec").positive_favourable is False


@pytest.mark.parametrize("column, values, answer", [("two_year_recid", (0, 1), "unfavourable"),
                                                    ("salary", ("<=50K", ">50K"), "favourable")])
def test_an_upload_whose_label_words_answer_it_shows_them_and_can_be_changed(column, values, answer):
    """Where the label's own words answer it (COMPAS's two_year_recid: rearrest; Adult's salary >50K), the question
    is pre-filled, the page says from which words, the Use button is enabled, and the answer can be changed."""
    rng = np.random.default_rng(5)
    n = 600
    df = pd.DataFrame({"sex": rng.choice(["f", "m"], n), "x": rng.normal(size=n),
                       column: rng.choice(list(values), n, p=[0.7, 0.3])})
    at = upload(new_app(), "t.csv", df)
    assert app_state.session(at).y_column == column and at.radio(key="positive_is").value == answer
    assert any(c.value.startswith("Read from the words") and column.split("_")[-1] in c.value for c in at.caption)
    assert not at.button(key="confirm_task").disabled
    assert any("is the disadvantaged group" in c for c in _disadvantaged(at))
    other = "favourable" if answer == "unfavourable" else "unfavourable"
    at.radio(key="positive_is").set_value(other).run()
    ok(at)
    assert not any(c.value.startswith("Read from the words") for c in at.caption)
    at.button(key="confirm_task").click().run()
    assert app_state.get(at, "spec").positive_favourable is (other == "favourable")
