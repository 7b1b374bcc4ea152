"""Issue 27, item 5 (readable at 1280 px) and the dashboard half of item 4 (say what is thin): Compare's
figures with three runs and k groups keep their plot area (the legend below it) and write labels that neither
cover one another nor cross the plot's edge; the results table reads model, accuracy and worst gap first,
with per-group columns headed by the groups' names; every table shows its numbers with fixed decimals; every
advanced setting has one line of help; a long training says the time left; thin groups are named on the pages
that show a run's results. The browser's measurement at 1280 px is tests/e2e/test_compare_1280.py."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from fairdash import progress
from fairdash.evaluation.metrics import summarize
from fairdash.figures import plot_style, plots
from fairdash.targeting.criteria import DP

import app_state
from app_pages import APP, TIMEOUT, ok
from readable_cases import GROUP_NAMES, three_runs

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")

# The widths Compare's figures get in a 1280 px window (the sidebar open; measured in Chromium: 397 px and
# 810 px) and the plot area's height the figures keep
HALF, FULL, PLOT_H = 390, 800, 300


def _summary(groups: int) -> pd.DataFrame:
    return plots.population_view(summarize(three_runs(groups), by=("model", "label", "run", "target_rate")))


def _figures(groups: int) -> dict:
    s, names = _summary(groups), GROUP_NAMES[groups]
    return {"pr": plots.pr_scatter(s, highlight_target=0.3, group_names=names),
            "tpr": plots.tpr_scatter(s, highlight_target=0.3, group_names=names),
            "accuracy": plots.accuracy_fairness(s, DP, highlight_target=0.3)}


# --------------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("groups", [2, 4])
def test_the_legend_sits_below_the_plot_which_keeps_its_height(groups):
    for name, fig in _figures(groups).items():
        lay = fig.layout
        assert lay.legend.orientation == "h" and lay.legend.yanchor == "bottom" and lay.legend.y < 0.05, name
        assert lay.legend.yref == "container", name  # in the bottom margin, not over the plot
        # the legend's rows add to the figure's height: the plot area keeps its own
        assert lay.height - lay.margin.t - lay.margin.b == PLOT_H, name
        rows = plot_style.legend_rows([t.name for t in fig.data if t.name and t.showlegend is not False],
                                      plot_style.FULL_WIDTH if name == "accuracy" else plot_style.HALF_WIDTH)
        assert lay.margin.b >= plot_style.MARGIN["b"] + plot_style.LEGEND_ROW * rows, name


def _label_boxes(fig, width: float, height: float = PLOT_H, size: float = 11, char: float = 0.55):
    """Each written label's box in pixels of a plot area ``width`` x ``height``, from its text and position
    (a label's width taken generously: 0.55 of the font size per character, Chromium draws 0.44)."""
    (x0, x1), (y0, y1) = fig.layout.xaxis.range, fig.layout.yaxis.range
    boxes = []
    for t in fig.data:
        if not t.text or "text" not in (t.mode or ""):
            continue
        pos = t.textposition if isinstance(t.textposition, (list, tuple)) else [t.textposition] * len(t.x)
        for x, y, text, p in zip(t.x, t.y, t.text, pos):
            if not text:
                continue
            px, py = (float(x) - x0) / (x1 - x0) * width, (y1 - float(y)) / (y1 - y0) * height
            w, h, gap = len(text) * char * size, 1.2 * size, 6
            v, hz = p.split()
            left = {"left": px - gap - w, "center": px - w / 2, "right": px + gap}[hz]
            top = {"top": py - gap - h, "middle": py - h / 2, "bottom": py + gap}[v]
            boxes.append((text, left, top, left + w, top + h))
    return boxes


@pytest.mark.parametrize("groups", [2, 4])
def test_no_label_covers_another_or_crosses_the_plot_edge(groups):
    for name, fig in _figures(groups).items():
        width = (FULL if name == "accuracy" else HALF) - 80
        boxes = _label_boxes(fig, width)
        assert boxes, name
        for i, a in enumerate(boxes):
            assert a[1] >= -1 and a[3] <= width + 1 and a[2] >= -1 and a[4] <= PLOT_H + 1, (name, a)
            for b in boxes[i + 1:]:
                overlap = min(a[3], b[3]) - max(a[1], b[1]), min(a[4], b[4]) - max(a[2], b[2])
                assert overlap[0] <= 1 or overlap[1] <= 1, (name, a, b)  # (a pixel: a line box's leading)


def test_crowded_names_become_numbers_with_the_name_in_the_legend():
    fig = _figures(4)["pr"]  # three runs of two models over four groups: too many names for a half-width plot
    models = [t for t in fig.data if " · run " in (t.name or "")]
    keys = [re.match(r"^\((\d+)\) ", t.name) for t in models]
    assert all(keys), [t.name for t in models]
    written = {k for t in models for x in t.text if x for k in x.split(", ")}
    assert written == {k.group(1) for k in keys}
    assert not any(re.fullmatch(r"\d\.\d{3}", x) for t in models for x in t.text if x)  # hover gives the values


def test_few_points_keep_their_full_names():
    res = three_runs(2)
    one_run = res[res["label"].str.endswith("run 1")]
    fig = plots.pr_scatter(plots.population_view(summarize(one_run, by=("model", "label", "target_rate"))))
    named = {x for t in fig.data if t.text for x in t.text if x}
    assert named == {"FairLR · run 1", "LR · run 1"}


def test_group_names_in_figures_stay_text():
    """Group names come from the data: the page escapes them for Plotly (``text.figure_text``) and the figure
    keeps them as given, in ticks and axis titles, never as markup of its own."""
    from fairdash.app.ui.text import figure_text

    evil = ("<b>W</b>", "a&b", "<i>c</i>", "d")
    fig = plots.pr_scatter(_summary(4), group_names=figure_text(evil))
    assert list(fig.layout.xaxis.ticktext) == ["&lt;b&gt;W&lt;/b&gt;", "a&amp;b", "&lt;i&gt;c&lt;/i&gt;", "d"]
    fig = plots.pr_scatter(_summary(2), group_names=figure_text(evil[:2]))
    assert "&lt;b&gt;W&lt;/b&gt;" in fig.layout.xaxis.title.text and "<b>" not in fig.layout.xaxis.title.text


# --------------------------------------------------------------------------------------------------
# The results table
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("groups", [2, 4])
def test_results_table_reads_model_accuracy_worst_gap_first_with_group_names(groups):
    names = GROUP_NAMES[groups]
    tab = plots.results_table(three_runs(groups), DP, population=True, group_names=names)
    # several runs: the run's number first (issue 47, item 6), so two rows whose long labels are cut stay apart
    assert list(tab.columns[:5]) == ["run", "model", "accuracy", "worst gap", "target PR_t"]
    for rate in ("PR", "TPR"):
        assert [c for c in tab.columns if c.startswith(rate + " (")] == [f"{rate} ({n})" for n in names]
    assert not [c for c in tab.columns if re.fullmatch(r"t?pr_\d+", c)]
    # without names the headers still say which group: by number
    plain = plots.results_table(three_runs(groups), DP, population=True)
    assert "PR s=0" in plain.columns and "pr_0" not in plain.columns


def test_table_configs_give_every_float_column_three_decimals():
    from fairdash.app import tables

    frame = pd.DataFrame({"label": ["a"], "accuracy": [0.8322558693433141], "rows": [12], "gap": [0.1]})
    config = tables.number_columns(frame)
    assert set(config) == {"accuracy", "gap"}
    assert all(c["type_config"]["format"] == "%.3f" for c in config.values())
    results = plots.results_table(three_runs(2), DP, population=True, group_names=GROUP_NAMES[2])
    config = tables.results_columns(results)
    assert config["model"]["pinned"] is True and config["run"]["pinned"] is True
    # run, model, accuracy and worst gap fit in the page's 810 px at 1280 px, with room to spare
    assert sum(config[c]["width"] for c in ("run", "model", "accuracy", "worst gap")) <= 650


# --------------------------------------------------------------------------------------------------
# Time left
# --------------------------------------------------------------------------------------------------
durations = st.lists(st.floats(0.01, 1e4, allow_nan=False, allow_infinity=False), min_size=1, max_size=30)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(d=st.floats(0.01, 1e4), n=st.integers(3, 200), k=st.integers(2, 199))
def test_time_left_is_exact_for_fits_of_equal_length(d, n, k):
    k = min(k, n - 1)
    done_at = [d * (i + 1) for i in range(k)]
    assert progress.time_left(done_at, d * k, n) == pytest.approx(d * (n - k), rel=1e-9)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(ds=durations, extra=st.lists(st.floats(0, 1e4), min_size=2, max_size=2), n=st.integers(1, 60))
def test_time_left_never_grows_while_a_fit_runs_and_scales_with_time(ds, extra, n):
    done_at = list(np.cumsum(ds))
    early, late = sorted(done_at[-1] + e for e in extra)
    a, b = progress.time_left(done_at, early, n), progress.time_left(done_at, late, n)
    if len(done_at) < progress.MIN_FITS_FOR_ESTIMATE or len(done_at) >= n:
        assert a is None and b is None
        return
    assert 0 <= b <= a
    assert progress.time_left([2 * t for t in done_at], 2 * early, n) == pytest.approx(2 * a, rel=1e-9, abs=1e-9)
    # at least what the fits not yet started take at the mean pace
    assert a >= done_at[-1] / len(done_at) * (n - len(done_at) - 1) - 1e-9


@settings(max_examples=60, derandomize=True, deadline=None)
@given(seconds=st.floats(0, 1e6))
def test_time_left_in_words(seconds):
    words = progress.time_left_words(seconds)
    assert words.endswith("left")
    m = re.fullmatch(r"about (\d+) s left|about (\d+) min left|about (\d+) h (\d+) min left|a few seconds left", words)
    assert m, words
    if m.group(1):
        assert int(m.group(1)) >= seconds and int(m.group(1)) - seconds < 10.01
    elif m.group(2):
        assert abs(int(m.group(2)) * 60 - seconds) <= 30.01 or int(m.group(2)) == 1


def test_a_training_of_ten_fits_says_which_fit_and_the_time_left():
    now = [0.0]
    seen = []
    report = progress.counted_progress(lambda f, m: seen.append((f, m)), 10, clock=lambda: now[0])
    for i in range(10):  # ten fits of 47 s each (FairGP on a CPU)
        report(i / 10, f"Training FairGP (seed {i})")
        now[0] += 20
        report((i + 0.5) / 10, f"Training FairGP (seed {i}): epoch 5")
        now[0] += 27
    report(1.0, "Done")
    assert seen[0] == (0.0, "fit 1 of 10 · Training FairGP (seed 0)")  # no estimate before two fits are done
    assert seen[4][1] == "fit 3 of 10 · Training FairGP (seed 2) · about 6 min left"  # 8 fits x 47 s = 6.3 min
    assert seen[5][1] == "fit 3 of 10 · Training FairGP (seed 2): epoch 5 · about 6 min left"  # 5.9 min
    assert seen[-3][1].endswith("about 50 s left") and seen[-1] == (1.0, "Done")
    assert [f for f, _ in seen] == sorted(f for f, _ in seen)


def test_a_training_of_several_fits_reports_which_fit_it_is_on(compas_task):
    from fairdash.work.experiments import ExperimentPlan, run_experiment

    seen = []
    run_experiment(ExperimentPlan(compas_task, ["lr"], [None], [0, 1, 2]), progress=lambda f, m="": seen.append(m))
    assert any(m.startswith("fit 1 of 3 · Training LR (seed 0)") for m in seen), seen
    assert any(m.startswith("fit 3 of 3 · Training LR (seed 2)") for m in seen), seen
    assert seen[-1] == "Done"


# --------------------------------------------------------------------------------------------------
# The pages: help on every setting, formatted tables, thin groups named (AppTest)
# --------------------------------------------------------------------------------------------------
def test_every_advanced_setting_of_every_model_has_one_line_of_help():
    from fairdash.app.server.settings_help import setting_help
    from fairdash.app.ui.training import model_options
    from fairdash.models.registry import MODELS

    for m in MODELS:
        for p in model_options(m):
            text = setting_help(m, p)
            assert text and "\n" not in text and len(text) <= 160, (m, p, text)
    assert "1/eps" in setting_help("agarwal", "eps")


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=TIMEOUT).run()


def test_the_train_page_explains_each_setting_it_offers():
    from fairdash.models.registry import MODELS

    at = _app()
    at.switch_page("pages/train.py").run()
    at.checkbox(key="include_other_criteria").set_value(True).run()
    from fairdash.app.ui import training

    at.multiselect(key="train_models").set_value([m for m in MODELS if training.model_available(m)[0]]).run()
    ok(at)
    boxes = [n for n in at.number_input if n.key and n.key.startswith("opt_")]
    assert len(boxes) >= 10, [n.key for n in boxes]
    missing = [n.key for n in boxes if not (n.help or "").strip()]
    assert not missing, missing
    eps = [n for n in boxes if n.key == "opt_agarwal_eps"]
    assert eps and "multipliers" in eps[0].help


def _thin_task():
    """A task whose second group has 40 rows of 800: its balanced test rows are few."""
    from fairdash import data

    rng = np.random.default_rng(5)
    n = 800
    g = np.where(np.arange(n) < 40, "few", "many")
    x = rng.normal(size=n)
    df = pd.DataFrame({"g": g, "x": x, "z": rng.normal(size=n), "y": (x + rng.normal(size=n) > 0).astype(int)})
    return data.build_task(df, data.TaskSpec(s_column="g", y_column="y", s1_values=("many",), y1_values=("1",)))


def _with_run(at, task, results, page: str):
    from fairdash.files.run_spec import RunSpec
    from fairdash.targeting.target_spec import make_target_spec
    from fairdash.work.runs import Run

    spec = RunSpec(data="upload", task=task.spec, target=make_target_spec("dp", 0.3), models=("fair-lr", "lr"),
                   target_rates=(0.3,), seeds=(0, 1, 2), group_names=task.group_names)
    run = Run(spec, task, "thin.csv", results, number=1)
    app_state.put(at, "runs", [run])
    app_state.put(at, "run", run)
    at.switch_page(page).run()
    ok(at)
    return run


def _results_for(task) -> pd.DataFrame:
    res = three_runs(2)
    res = res[res["label"].str.endswith("run 1")].copy()
    res["label"] = res["label"].str.replace(" · run 1", "", regex=False)
    res = res.drop(columns="run")  # one run: its rows carry no run number
    names = task.group_names
    for c in ("pop_worst_gap_group", "bal_worst_gap_group"):
        res[c] = names[0]
    res["target"] = np.where(res["model"] == "fair-lr", "PR_t 0.300", "")
    res["ceiling_at_measured"], res["ceiling_at_target"] = 0.8722558693433141, 0.8611
    return res


@pytest.mark.parametrize("page", ["pages/train.py", "pages/compare.py"])
def test_thin_groups_are_named_where_results_are_shown(page):
    from fairdash.data import split_arrays
    from fairdash.evaluation.thin import thin_notes

    task = _thin_task()
    want = thin_notes(split_arrays(task, 0), task.group_names, criterion=DP, rule="threshold")
    assert want and "'few'" in want[0]
    at = _app()
    _with_run(at, task, _results_for(task), page)
    shown = " ".join(w.value for w in at.warning)
    assert "balanced test set" in shown and "few" in shown and "fewer than 30" in shown, shown


def test_the_train_page_tables_show_three_decimals():
    at = _app()
    task = app_state.get(at, "task")
    _with_run(at, task, _results_for(task), "pages/train.py")
    frames = {i: d for i, d in enumerate(at.dataframe)}
    assert len(frames) >= 2
    for d in frames.values():
        config = json.loads(d.proto.columns or "{}")
        floats = [c for c in d.value.columns if pd.api.types.is_float_dtype(d.value[c])]
        for c in floats:
            fmt = config.get(c, {}).get("type_config", {}).get("format")
            assert fmt and re.fullmatch(r"%\.\df", fmt), (c, config.get(c))
    bound = [d for d in at.dataframe if any(str(c).startswith("ceiling at") for c in d.value.columns)][0]
    config = json.loads(bound.proto.columns)
    assert config["ceiling at its measured rates"]["type_config"]["format"] == "%.3f"
    assert "below this" in config["ceiling at its measured rates"]["help"]
    columns = list(bound.value.columns)  # the numbers first, the target's long description last
    assert columns.index("ceiling at the target") < columns.index("target") == len(columns) - 1
    results = [d for d in at.dataframe if "worst gap" in d.value.columns][0]
    assert list(results.value.columns[:3]) == ["model", "accuracy", "worst gap"]
    assert f"PR ({task.group_names[0]})" in results.value.columns
