"""Figure builders in fairdash.figures.plots: pure functions from results/rates to Plotly figures."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdash.evaluation.metrics import summarize
from fairdash.figures import plot_parts, plot_style, plots, plots_target
from fairdash.targeting import targets
from fairdash.targeting.criteria import DP, EO

from results_tables import results_table, target_results

ROOT = Path(__file__).resolve().parents[2]


def _trace(fig, name):
    found = [t for t in fig.data if t.name == name or (t.name or "").startswith(name)]
    assert found, f"no trace named {name!r} in {[t.name for t in fig.data]}"
    return found[0]


# --------------------------------------------------------------------------------------------------
# Ceiling curve
# --------------------------------------------------------------------------------------------------
def test_ceiling_curve_marks_the_target_at_theorem_2_value():
    r, p = np.array([0.11, 0.31]), np.array([0.32, 0.68])
    fig = plots.ceiling_curve_figure(r, p, 0.25, ("Female", "Male"))
    assert isinstance(fig, go.Figure)
    curve = _trace(fig, plots.CEILING_NAME)
    x, y = targets.accuracy_ceiling_curve(r, p)
    np.testing.assert_allclose(curve.x, x)
    np.testing.assert_allclose(curve.y, y)
    mark = _trace(fig, "PR_t = 0.250")
    assert mark.x[0] == pytest.approx(0.25)
    assert mark.y[0] == pytest.approx(targets.accuracy_ceiling(r, p, 0.25))


def test_ceiling_curve_highlight_overrides_target_and_none_draws_curve_only():
    r, p = np.array([0.2, 0.4]), np.array([0.5, 0.5])
    fig = plots.ceiling_curve_figure(r, p, 0.3, highlight_target=0.35)
    assert _trace(fig, "PR_t = 0.350").x[0] == pytest.approx(0.35)
    fig2 = plots.ceiling_curve_figure(r, p, None)
    assert [t.name for t in fig2.data] == [plots.CEILING_NAME]


# --------------------------------------------------------------------------------------------------
# Rate scatters
# --------------------------------------------------------------------------------------------------
def test_pr_scatter_from_results_and_from_summary_agree():
    res = results_table()
    a = plots.pr_scatter(res)
    b = plots.pr_scatter(summarize(res, by=("model", "label", "target_rate")))
    assert [t.name for t in a.data] == [t.name for t in b.data]
    for ta, tb in zip(a.data, b.data):
        np.testing.assert_allclose(np.asarray(ta.x, dtype=float), np.asarray(tb.x, dtype=float))


def test_pr_scatter_has_diagonal_targets_models_and_mean_std():
    res = results_table()
    fig = plots.pr_scatter(res, group_names=("Female", "Male"))
    diag = _trace(fig, plots.DIAGONAL_NAME)
    assert list(diag.x) == [0, 1] and list(diag.y) == [0, 1]
    tg = _trace(fig, plots.TARGET_NAME)
    np.testing.assert_allclose(tg.x, [0.15, 0.2, 0.25])
    np.testing.assert_allclose(tg.y, [0.15, 0.2, 0.25])
    fair = _trace(fig, "FairLR")
    summ = summarize(res[res.model == "fair-lr"], by=("target_rate",))
    np.testing.assert_allclose(fair.x, summ["pr_0_mean"])
    np.testing.assert_allclose(fair.y, summ["pr_1_mean"])
    np.testing.assert_allclose(fair.error_x.array, summ["pr_0_std"])
    assert "Female" in fig.layout.xaxis.title.text and "Male" in fig.layout.yaxis.title.text
    _trace(fig, "LR")


@pytest.mark.parametrize("builder,metric", [(plots.pr_scatter, "pr"), (plots.tpr_scatter, "tpr")])
def test_highlight_rings_the_points_at_the_nearest_target(builder, metric):
    res = results_table()
    fig = builder(res, highlight_target=0.21)  # nearest swept target: 0.2
    ring = _trace(fig, plot_parts.HIGHLIGHT_NAME)
    sel = res[np.isclose(res.target_rate, 0.2)]
    assert ring.x[0] == pytest.approx(sel[f"{metric}_0"].mean())
    assert ring.y[0] == pytest.approx(sel[f"{metric}_1"].mean())
    assert "0.210" in ring.name
    # no highlight: the ring trace is present but empty (legend only), so trace order is stable
    fig2 = builder(res)
    assert len(_trace(fig2, plot_parts.HIGHLIGHT_NAME).x) == 0


def test_tpr_scatter_does_not_mark_rate_targets():
    fig = plots.tpr_scatter(results_table())
    assert plots.TARGET_NAME not in [t.name for t in fig.data]


def test_empty_results_give_a_figure_with_a_message():
    for fig in (plots.pr_scatter(pd.DataFrame()), plots.tpr_scatter(pd.DataFrame()),
                plots.accuracy_fairness(pd.DataFrame())):
        assert isinstance(fig, go.Figure)
        assert fig.layout.annotations and "No results" in fig.layout.annotations[0].text


# --------------------------------------------------------------------------------------------------
# Accuracy against fairness
# --------------------------------------------------------------------------------------------------
def test_accuracy_fairness_dp_and_eo_axes_and_ceiling():
    res = results_table()
    r, p = np.array([0.11, 0.31]), np.array([0.32, 0.68])
    fig = plots.accuracy_fairness(res, DP, rates=r, shares=p, highlight_target=0.25)
    ceil = _trace(fig, plots.CEILING_NAME)
    assert ceil.y[-1] == pytest.approx(targets.accuracy_ceiling(r, p, targets.best_target_rate(r, p)))
    assert "positive-rate ratio" in fig.layout.xaxis.title.text
    fair = _trace(fig, "FairLR")
    summ = summarize(res[res.model == "fair-lr"], by=("target_rate",))
    np.testing.assert_allclose(fair.x, summ["pr_ratio_mean"])
    np.testing.assert_allclose(fair.y, summ["accuracy_mean"])
    ring = _trace(fig, plot_parts.HIGHLIGHT_NAME)
    assert ring.x[0] == pytest.approx(summ.loc[np.isclose(summ.target_rate, 0.25), "pr_ratio_mean"].iloc[0])
    eo = plots.accuracy_fairness(res, EO, rates=r, shares=p)
    assert "true-positive-rate ratio" in eo.layout.xaxis.title.text
    np.testing.assert_allclose(_trace(eo, "FairLR").x,
                               summarize(res[res.model == "fair-lr"], by=("target_rate",))["tpr_ratio_mean"])
    # without rates no ceiling is drawn
    assert plots.CEILING_NAME not in [t.name for t in plots.accuracy_fairness(res, DP).data]


def test_pr_ratio_ceiling_ends():
    r, p = np.array([0.11, 0.31]), np.array([0.32, 0.68])
    ratio, ceil = targets.pr_ratio_ceiling(r, p)
    assert ratio[0] == 0 and ratio[-1] == 1
    assert ceil[0] == pytest.approx(1.0)
    assert ceil[-1] == pytest.approx(targets.accuracy_ceiling(r, p, targets.best_target_rate(r, p)))
    assert np.all(np.diff(ceil) <= 1e-12)  # fairer can only cost accuracy


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0.01, 0.99), min_size=2, max_size=3), st.data())
def test_pr_ratio_ceiling_bounds_every_classifier(rates, data):
    """Any group rates rhat: Theorem 2's bound at rhat never exceeds the ceiling at rhat's ratio."""
    r = np.asarray(rates)
    w = np.asarray(data.draw(st.lists(st.floats(0.05, 1.0), min_size=len(r), max_size=len(r))))
    p = w / w.sum()
    rhat = np.asarray(data.draw(st.lists(st.floats(0.01, 1.0), min_size=len(r), max_size=len(r))))
    ratio = rhat.min() / rhat.max()
    grid, ceil = targets.pr_ratio_ceiling(r, p, n=201)
    # the ceiling at the largest grid ratio not above this classifier's ratio
    k = np.searchsorted(grid, ratio, side="right") - 1
    assert targets.accuracy_ceiling(r, p, rhat) <= ceil[k] + 1e-9
    # and the ceiling is reached: rates clipped into [ratio*T, T] at the best T hit it (exactness)
    assert ceil[0] == pytest.approx(1.0)


def test_tpr_ratio_ceiling():
    r, p = np.array([0.4, 0.6]), np.array([0.3, 0.7])
    ratio, ceil = targets.tpr_ratio_ceiling(r, p)
    assert ceil[-1] == pytest.approx(1.0)
    assert ceil[0] == pytest.approx(1 - 0.12)


def test_results_table_formats_mean_and_std():
    tab = plots.results_table(results_table())
    assert list(tab["model"]) == ["FairLR", "FairLR", "FairLR", "LR"]
    assert "±" in tab["accuracy"].iloc[0]
    assert tab["target PR_t"].iloc[-1] == "-"
    assert plots.results_table(pd.DataFrame()).empty


def test_plots_does_not_import_streamlit():
    code = "import sys, fairdash.figures.plots; print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_figure_is_valid_plotly():
    """The builders skip plotly.py's per-property validation for speed; a validated rebuild proves
    that every property they set is a real Plotly property with a valid value."""
    res = results_table()
    r, p = np.array([0.11, 0.31]), np.array([0.32, 0.68])
    figs = [plots.ceiling_curve_figure(r, p, 0.2, ("a", "b")), plots.ceiling_curve_figure(r, p, None),
            plots.pr_scatter(res, highlight_target=0.2, group_names=("a", "b")), plots.tpr_scatter(res),
            plots.accuracy_fairness(res, DP, rates=r, shares=p, highlight_target=0.3),
            plots.accuracy_fairness(res, EO, rates=r, shares=p), plots.pr_scatter(pd.DataFrame())]
    for fig in figs:
        go.Figure(fig.to_dict())  # raises on any invalid property
        assert fig.to_json()
        fig.update_layout(width=680)  # later edits (as the HTML report makes) still work


def test_a_slider_move_redraws_the_ceiling_figure_in_one_go_and_moves_only_the_target(monkeypatch):
    """The ceiling figure is redrawn on every slider move. It is built in one go from trace and layout
    dicts (no add_trace / add_vline / update_layout afterwards, each of which validates the figure again),
    and a move changes the target's marker and line only. How fast that is, is a benchmark's figure
    (benchmarks/bench_slider_latency.py, "library only"; the goal is under 50 ms), not a test's."""
    def refused(name):
        def call(*args, **kwargs):
            raise AssertionError(f"the ceiling figure was edited after it was built ({name})")
        return call

    for name in ("add_trace", "add_traces", "add_shape", "add_vline", "add_hline", "add_annotation",
                 "update_layout", "update_traces", "update_xaxes", "update_yaxes"):
        monkeypatch.setattr(go.Figure, name, refused(name))
    r, p = np.array([0.11, 0.31]), np.array([0.32, 0.68])
    moves = [float(t) for t in np.linspace(0.1, 0.4, 10)]
    figs = [plots.ceiling_curve_figure(r, p, t).to_dict() for t in moves]
    monkeypatch.undo()
    first = figs[0]
    for t, fig in zip(moves, figs):
        curve, marker = fig["data"]
        assert curve == first["data"][0]  # the curve itself does not change with the target
        c = targets.accuracy_ceiling(r, p, t)
        assert (marker["x"], marker["y"], marker["text"]) == ([t], [c], [f"{c:.4f}"])
        assert marker["name"] == f"PR_t = {t:.3f}"
        *base_rates, target_line = fig["layout"]["shapes"]
        assert base_rates == first["layout"]["shapes"][:-1] and (target_line["x0"], target_line["x1"]) == (t, t)
        rest = {k: v for k, v in fig["layout"].items() if k != "shapes"}
        assert rest == {k: v for k, v in first["layout"].items() if k != "shapes"}
        assert plots.ceiling_curve_figure(r, p, t).to_json()


def test_accuracy_fairness_reference_ceiling_is_drawn_dotted():
    res = results_table()
    r, p = np.array([0.11, 0.31]), np.array([0.32, 0.68])
    fig = plots.accuracy_fairness(res, DP, rates=np.array([0.2, 0.2]), shares=p, reference_rates=r,
                                  reference_shares=p)
    assert np.allclose(_trace(fig, plots.CEILING_NAME).y, 1.0)  # equal base rates: no price for parity
    ref = _trace(fig, "ceiling on the training split")
    assert ref.line.dash == "dot"
    assert ref.y[-1] == pytest.approx(targets.accuracy_ceiling(r, p, targets.best_target_rate(r, p)))
    go.Figure(fig.to_dict())


def test_rate_scatter_keeps_the_target_markers_in_view():
    import pandas as pd

    from fairdash.figures import plots

    res = pd.DataFrame({"model": ["fair-lr"] * 2, "label": ["FairLR"] * 2, "target_rate": [0.305, 0.305],
                        "seed": [0, 1], "pr_0": [0.15, 0.16], "pr_1": [0.16, 0.17], "tpr_0": [0.7, 0.7],
                        "tpr_1": [0.6, 0.6], "accuracy": [0.88, 0.89]})
    fig = plots.pr_scatter(res)
    assert fig.layout.xaxis.range[1] >= 0.305 and fig.layout.yaxis.range[1] >= 0.305


# --------------------------------------------------------------------------------------------------
# Accessible figures (issue 20, item 7): colour-blind-safe colours, a marker per model and run, labels
# written on the figure
# --------------------------------------------------------------------------------------------------
def test_every_model_has_an_okabe_ito_colour_and_its_own_marker():
    styles = plot_style.MODEL_STYLES
    assert all(c in plot_style.OKABE_ITO for c, _ in styles.values())
    symbols = [s for _, s in styles.values()]
    assert len(set(symbols)) == len(symbols)  # colour is never the only cue between two models
    assert len(set(styles.values())) == len(styles)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(plot_style.MODEL_STYLES) + ["Mystery model", "Other"]),
                          st.integers(1, 4)), min_size=1, max_size=12, unique=True),
       st.sampled_from(["", " (decides with s)", " (made for dp)"]))
def test_no_two_labels_drawn_together_share_a_marker_symbol(pairs, suffix):
    """Several runs of several models on one figure: every label gets a marker symbol of its own, so two
    runs of FairLR never look alike, whatever the viewer's colour vision."""
    labels = [f"{m}{suffix} · run {r}" for m, r in pairs]
    styles = plot_style.label_styles(labels, {f"{m}{suffix} · run {r}": r for m, r in pairs})  # the run as data
    assert len({styles[lb]["symbol"] for lb in labels}) == len(labels)
    for lb in labels:  # the model's own colour and base symbol, whatever suffix the label carries
        model = lb.split(" · run ")[0].removesuffix(suffix)
        if model in plot_style.MODEL_STYLES:
            colour, symbol = plot_style.MODEL_STYLES[model]
            assert styles[lb]["colour"] == colour and styles[lb]["symbol"].startswith(symbol)
        assert styles[lb]["colour"] in plot_style.OKABE_ITO


def test_models_are_labelled_on_the_figure_and_never_only_by_colour():
    res = results_table()
    res2 = res.copy()
    res["label"], res["run"] = res["label"] + " · run 1", 1
    res2["label"], res2["run"] = res2["label"] + " · run 2", 2
    both = pd.concat([res, res2], ignore_index=True)
    for fig in (plots.pr_scatter(both), plots.tpr_scatter(both), plots.accuracy_fairness(both, DP)):
        models = [t for t in fig.data if t.name and " · run " in t.name]
        assert len(models) == 4
        assert len({t.marker.symbol for t in models}) == 4
        assert {t.marker.color for t in models} <= set(plot_style.OKABE_ITO)
        # each is named on the figure: by its name beside its point, or (where the names do not fit, issue 27)
        # by its number there, the legend saying whose number it is; two runs drawn at one place share a label
        written = [x for t in models for x in t.text if x]
        for t in models:
            assert "text" in t.mode
            key = re.match(r"^\((\d+)\) ", t.name)
            if key is None:
                assert t.name in [x for x in t.text if x][0], (t.name, t.text)
            else:
                assert any(key.group(1) in x.split(", ") for x in written), (t.name, written)


def test_a_name_near_the_right_edge_turns_inwards():
    assert plot_style.text_position(0) == "top right"
    assert plot_style.text_position(0, where=0.95) == "top left"
    assert plot_style.text_position(1, where=0.05) == "top right"
    fig = plots.accuracy_fairness(results_table(), DP)  # FairLR's ratio is near 1, at the right edge
    fair = _trace(fig, "FairLR")
    assert not [p for p, x in zip(fair.textposition, fair.text) if x][0].endswith("right")  # never past the edge
    assert _trace(fig, "FairLR").cliponaxis is False


def test_per_group_figure_writes_each_rate_beside_its_point():
    res = results_table(targets_=(0.2,), seeds=(0, 1))
    res["pr_2"] = res["pr_1"] + 0.05
    fig = plots.pr_scatter(res, group_names=("a", "b", "c"))
    fair = _trace(fig, "FairLR")
    summ = summarize(res[res.model == "fair-lr"], by=("target_rate",))
    assert list(fair.text[:2]) == [f"{summ['pr_0_mean'].iloc[0]:.3f}", f"{summ['pr_1_mean'].iloc[0]:.3f}"]
    assert fair.text[2].endswith("FairLR")
    go.Figure(fig.to_dict())


def _points(fig, name):
    t = _trace(fig, name)
    return list(np.asarray(t.x, dtype=float)), list(t.text)


def test_target_view_puts_each_groups_rate_against_its_target_with_the_gap_written():
    fig = plots.target_view(target_results(), DP, group_names=("Female", "Male"))
    x, text = _points(fig, "FairLR")
    assert x == pytest.approx([0.158, 0.259])
    assert text == ["-0.142", "-0.041"]  # the women's miss is read without hovering
    # plain LR has no target of its own: it is held against its group's target, which every run agrees on
    x, text = _points(fig, "LR")
    assert x == pytest.approx([0.08, 0.31]) and text == ["-0.220", "+0.010"]
    line = _trace(fig, plots.TARGET_LINE_NAME)
    assert {v for v in line.x if v is not None} == {0.3}
    assert "target 0.300" in line.text
    ticks = list(fig.layout.yaxis.ticktext)
    assert ticks == ["Female · FairLR", "Female · LR", "Male · FairLR", "Male · LR"]
    # each gap is written on the side away from the target line
    assert list(_trace(fig, "LR").textposition) == ["middle left", "middle right"]
    go.Figure(fig.to_dict())


def test_target_view_balanced_set_and_opportunity_read_their_own_columns():
    res = target_results()
    bal = plots.target_view(res, DP, population=False)
    x, text = _points(bal, "FairLR")
    assert x == pytest.approx([0.158, 0.158]) and text == ["-0.142", "-0.142"]
    eo = target_results()
    eo["pop_gap_0"], eo["pop_gap_1"] = eo["pop_tpr_0"] - eo["target_0"], eo["pop_tpr_1"] - eo["target_1"]
    fig = plots.target_view(eo, EO)
    x, text = _points(fig, "FairLR")
    assert x == pytest.approx([0.52, 0.61]) and text == ["+0.220", "+0.310"]
    assert "true positive rate" in fig.layout.xaxis.title.text


def test_target_view_with_repeats_shows_the_mean_and_says_so():
    res = target_results(seeds=(0, 1, 2))
    fig = plots.target_view(res, DP)
    x, text = _points(fig, "FairLR")
    assert x[0] == pytest.approx(np.mean([0.158, 0.168, 0.178]))
    assert text[0] == f"{np.mean([0.158, 0.168, 0.178]) - 0.3:+.3f}"
    assert "mean over repeats" in fig.layout.title.text
    assert _trace(fig, "FairLR").error_x.visible


def test_target_view_of_a_sweep_shows_the_highlighted_target_and_k_groups():
    rows = []
    for t in (0.2, 0.3, 0.4):
        r = target_results(group_count=3).iloc[[0]].copy()
        r["target_rate"] = t
        for g in range(3):
            r[f"target_{g}"] = t
            r[f"pop_gap_{g}"] = r[f"pop_pr_{g}"] - t
        rows.append(r)
    res = pd.concat(rows, ignore_index=True)
    fig = plots.target_view(res, DP, highlight_target=0.39, group_names=("a", "b", "c"))
    line = _trace(fig, plots.TARGET_LINE_NAME)
    assert {v for v in line.x if v is not None} == {0.4}
    assert len(_trace(fig, "FairLR").x) == 3


def test_target_view_escapes_text_from_the_data():
    res = target_results()
    res["label"] = res["label"].replace({"FairLR": "FairLR <a href='x'>"})
    fig = plots.target_view(res, DP, group_names=("<b>F</b>", "[m](http://x.example)"))
    shown = " ".join(fig.layout.yaxis.ticktext) + " ".join(t.name for t in fig.data)
    assert "<a" not in shown and "<b>" not in shown and "&lt;b&gt;" in shown


def test_results_without_target_columns_get_no_target_view_and_one_line_why():
    old = results_table()
    assert plots.target_view_note(old) == plots_target.NO_TARGET_COLUMNS
    fig = plots.target_view(old, DP)
    assert fig.layout.annotations[0].text == plots_target.NO_TARGET_COLUMNS
    only_lr = target_results()
    only_lr = only_lr[only_lr.model == "lr"]
    assert plots.target_view_note(only_lr) == plots_target.NO_TARGETS
    assert plots.target_view_note(target_results()) is None


def test_results_table_shows_the_worst_gap_with_its_group_not_the_mean_gap():
    res = target_results(seeds=(0, 1))
    res["target_gap"] = 0.092
    tab = plots.results_table(res, DP, population=True)
    assert "target_gap" not in tab.columns
    assert list(tab["worst gap"]) == ["0.137 ± 0.007 (Female)", "-"]
    assert list(plots.results_table(res, DP)["worst gap"]) == ["0.142 ± 0.000 (Female)", "-"]
    # equality of opportunity is judged on the ordinary test set: its evaluation rows are the population
    assert list(plots.results_table(res, EO)["worst gap"]) == ["0.137 ± 0.007 (Female)", "-"]
    older = results_table()
    older["pop_pr_0"], older["pop_pr_1"], older["target_gap"] = older["pr_0"], older["pr_1"], 0.05
    tab = plots.results_table(older, DP, population=True)
    assert "worst gap" not in tab.columns and "target_gap" in tab.columns


def test_results_rows_with_a_mean_column_of_their_own_are_still_summarised():
    """Results rows may carry a `*_mean` column (the conditional ratio's share-weighted mean): they are
    still rows to summarise over seeds, not a summary."""
    res = target_results(seeds=(0, 1))
    res["cond_pr_ratio_mean"] = 0.8
    tab = plots.results_table(res, DP, population=True)
    assert list(tab["model"]) == ["FairLR", "LR"] and list(tab["repeats"]) == [2, 2]


def test_moved_away_sentences_are_collected_once_each():
    from fairdash.evaluation.gaps import moved_away_summary

    s = "FairLR moved Caucasian away from its target: 0.181 on the population against plain LR's 0.238, target 0.401."
    res = target_results(seeds=(0, 1), moved_away=s)
    assert moved_away_summary(res.drop(index=res.index[res["model"] == "lr"])) == [s]
    assert moved_away_summary(target_results()) == []
    assert moved_away_summary(results_table()) == []

def test_the_report_draws_the_target_view_on_both_test_sets_and_none_for_older_results():
    from fairdash.report.figures import make_figures

    res = target_results(seeds=(0, 1))
    summary = summarize(res, by=("model", "label", "target_rate"))
    names = ("<b>Female</b>", "Male")
    figs = make_figures(res, summary, DP, {"target_rate": 0.3}, names)
    views = [(t, f) for t, f, _ in figs if t.startswith("Each group's positive rate against its target")]
    assert [("population" in t, "balanced" in t) for t, _ in views] == [(True, False), (False, True)]
    assert list(_trace(views[0][1], "FairLR").text) == ["-0.137", "-0.041"]
    assert list(_trace(views[1][1], "FairLR").text) == ["-0.142", "-0.142"]
    assert views[0][1].layout.yaxis.ticktext[0] == "&lt;b&gt;Female&lt;/b&gt; · FairLR"  # escaped once
    old = results_table()
    assert not [t for t, _, _ in make_figures(old, summarize(old, by=("model", "label", "target_rate")), DP,
                                              {"target_rate": 0.2}, ("a", "b")) if "against its target" in t]


def test_legend_rows_follow_plotlys_grid_of_equal_columns_once_one_row_is_not_enough():
    """Plotly puts a horizontal legend's entries in one row where they all fit, each as wide as it is; else every
    entry takes the widest entry's width. Seen in Chromium (tests/e2e/test_compare_1280.py, four groups): eight
    entries, the longest 46 characters, in two columns of four rows at 800 px; packing them by their own widths
    counted three rows, the plot area lost a row's height and two point labels placed for the taller plot met."""
    names = ["accuracy ceiling (Theorem 2)", "(1) FairLR [group-rates, decides with s] · run 3",
             "(2) LR [group-rates, decides with s] · run 3", "(3) FairLR · run 1", "(4) LR · run 1",
             "(5) FairLR [overall-rate] · run 2", "(6) LR [overall-rate] · run 2", "selected target (PR_t 0.300)"]
    assert plot_style.legend_rows(names, plot_style.FULL_WIDTH) == 4
    assert plot_style.legend_rows(names[:3], plot_style.FULL_WIDTH) == 2  # 3 entries in a grid of 2 columns
    assert plot_style.legend_rows(["LR", "FairLR"], plot_style.HALF_WIDTH) == 1  # they fit: one row
    assert plot_style.legend_rows([], plot_style.HALF_WIDTH) == 1


def test_numbered_points_too_near_to_label_apart_share_one_label():
    """Four models at ratio 0 within 30 px of one another on the plot's left edge (Compare, four groups, seen in
    Chromium): no nine-way position gives each its own number, so the nearest share one ("1, 2") and no label
    covers another."""
    ys = (0.8253, 0.8319, 0.8070, 0.8170)
    traces = [{"x": [0.0], "y": [y], "text": [f"FairLR [group-rates, decides with s] · run {n}"], "name": f"m{n}"}
              for n, y in enumerate(ys, 1)]
    traces.append({"x": [0.44], "y": [0.8186], "text": ["LR · run 5"], "name": "m5"})
    kept = plot_parts.label_points(traces, xrange=(0, 1.05), yrange=(0.757, 1.01), width=plot_style.FULL_WIDTH)
    assert not kept  # the names do not fit: numbers, the legend giving the names
    spots = [(t["x"][0], t["y"][0], t["text"][0], True) for t in traces]
    _, fits = plot_style.place_labels(spots, xrange=(0, 1.05), yrange=(0.757, 1.01), width=plot_style.FULL_WIDTH,
                                      height=plot_style.PLOT_HEIGHT)
    assert fits, [t["text"] for t in traces]
    assert sorted(n for t in traces for n in t["text"][0].split(", ") if n) == ["1", "2", "3", "4", "5"]


def test_every_style_drawn_together_is_a_marker_plotly_accepts():
    """Issue 47: 1 to 8 runs of every model with a style of its own and of 12 labels without one (the target
    reduction, the threshold optimizer, a user's own names), each look made into plotly's marker."""
    import plotly.graph_objects as go

    from fairdash.figures.plot_style import MODEL_STYLES, label_styles, marker

    names = list(MODEL_STYLES) + [f"Unnamed model {k}" for k in range(12)]
    for runs in range(1, 9):
        labels = [f"{n} (run {r})" for n in names for r in range(runs)]
        styles = label_styles(labels, {label: i % runs + 1 for i, label in enumerate(labels)})
        for style in styles.values():
            go.scatter.Marker(**marker(style))  # raises ValueError on a symbol plotly does not have
        looks = {(s["colour"], s["symbol"]) for s in styles.values()}
        if runs <= 4:  # up to four runs of each model by the symbol's fill: no two labels drawn together look alike
            assert len(looks) == len(labels), runs


def test_a_model_keeps_its_colour_in_every_run_and_rule():
    """Issue 47, item 6: on Compare with 9 runs a model's colour never changes from run to run (LR stays blue, the
    target reduction keeps one colour and symbol); runs differ by the symbol's fill and the number in the label."""
    labels = [f"{m} · run {r}" for r in range(1, 10) for m in (
        "LR", "LR [group-rates, decides with s]", "Target reduction (decides without s, randomised)",
        "Target reduction [group-rates, decides with s]", "Threshold optimizer (post-processing, decides with s)")]
    styles = plot_style.label_styles(labels, {lb: int(lb.rsplit(" ", 1)[1]) for lb in labels})
    for model in ("LR", "Target reduction", "Threshold optimizer"):
        looks = {(styles[lb]["colour"], styles[lb]["symbol"].split("-")[0]) for lb in labels
                 if plot_style.model_words(lb) == model}
        assert len(looks) == 1, (model, looks)
    assert {styles[lb]["colour"] for lb in labels if lb.startswith("LR")} == {plot_style.MODEL_COLOURS["LR"]}
    assert styles["LR · run 1"]["symbol"] != styles["LR · run 2"]["symbol"]  # runs by fill
    assert plot_style.model_words("Target reduction (decides without s, randomised) · run 3") == "Target reduction"
