"""Figure builders in fairdash.plots: pure functions from results/rates to Plotly figures."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdash import plots, targets
from fairdash.metrics import summarize

ROOT = Path(__file__).resolve().parent.parent


def _results(targets_=(0.15, 0.2, 0.25), seeds=(0, 1, 2)) -> pd.DataFrame:
    """A tidy results table like run_experiment's: FairLR at several targets, LR once per seed."""
    rng = np.random.default_rng(0)
    rows = []
    for seed in seeds:
        for t in targets_:
            rows.append({"model": "fair-lr", "label": "FairLR", "criterion": "dp", "target_rate": t, "seed": seed,
                         "accuracy": 0.85 - 0.1 * abs(t - 0.2) + rng.normal(0, 0.005),
                         "pr_0": t - 0.01 + rng.normal(0, 0.01), "pr_1": t + 0.01 + rng.normal(0, 0.01),
                         "tpr_0": 0.6 + rng.normal(0, 0.02), "tpr_1": 0.65 + rng.normal(0, 0.02)})
        rows.append({"model": "lr", "label": "LR", "criterion": "dp", "target_rate": np.nan, "seed": seed,
                     "accuracy": 0.86 + rng.normal(0, 0.005), "pr_0": 0.08, "pr_1": 0.2,
                     "tpr_0": 0.5, "tpr_1": 0.65})
    df = pd.DataFrame(rows)
    df["pr_ratio"] = np.minimum(df.pr_0, df.pr_1) / np.maximum(df.pr_0, df.pr_1)
    df["tpr_ratio"] = np.minimum(df.tpr_0, df.tpr_1) / np.maximum(df.tpr_0, df.tpr_1)
    return df


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
    res = _results()
    a = plots.pr_scatter(res)
    b = plots.pr_scatter(summarize(res, by=("model", "label", "target_rate")))
    assert [t.name for t in a.data] == [t.name for t in b.data]
    for ta, tb in zip(a.data, b.data):
        np.testing.assert_allclose(np.asarray(ta.x, dtype=float), np.asarray(tb.x, dtype=float))


def test_pr_scatter_has_diagonal_targets_models_and_mean_std():
    res = _results()
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
    res = _results()
    fig = builder(res, highlight_target=0.21)  # nearest swept target: 0.2
    ring = _trace(fig, plots.HIGHLIGHT_NAME)
    sel = res[np.isclose(res.target_rate, 0.2)]
    assert ring.x[0] == pytest.approx(sel[f"{metric}_0"].mean())
    assert ring.y[0] == pytest.approx(sel[f"{metric}_1"].mean())
    assert "0.210" in ring.name
    # no highlight: the ring trace is present but empty (legend only), so trace order is stable
    fig2 = builder(res)
    assert len(_trace(fig2, plots.HIGHLIGHT_NAME).x) == 0


def test_tpr_scatter_does_not_mark_rate_targets():
    fig = plots.tpr_scatter(_results())
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
    res = _results()
    r, p = np.array([0.11, 0.31]), np.array([0.32, 0.68])
    fig = plots.accuracy_fairness(res, "dp", rates=r, shares=p, highlight_target=0.25)
    ceil = _trace(fig, plots.CEILING_NAME)
    assert ceil.y[-1] == pytest.approx(targets.accuracy_ceiling(r, p, targets.best_target_rate(r, p)))
    assert "positive-rate ratio" in fig.layout.xaxis.title.text
    fair = _trace(fig, "FairLR")
    summ = summarize(res[res.model == "fair-lr"], by=("target_rate",))
    np.testing.assert_allclose(fair.x, summ["pr_ratio_mean"])
    np.testing.assert_allclose(fair.y, summ["accuracy_mean"])
    ring = _trace(fig, plots.HIGHLIGHT_NAME)
    assert ring.x[0] == pytest.approx(summ.loc[np.isclose(summ.target_rate, 0.25), "pr_ratio_mean"].iloc[0])
    eo = plots.accuracy_fairness(res, "eo", rates=r, shares=p)
    assert "true-positive-rate ratio" in eo.layout.xaxis.title.text
    np.testing.assert_allclose(_trace(eo, "FairLR").x,
                               summarize(res[res.model == "fair-lr"], by=("target_rate",))["tpr_ratio_mean"])
    # without rates no ceiling is drawn
    assert plots.CEILING_NAME not in [t.name for t in plots.accuracy_fairness(res, "dp").data]


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
    tab = plots.results_table(_results())
    assert list(tab["model"]) == ["FairLR", "FairLR", "FairLR", "LR"]
    assert "±" in tab["accuracy"].iloc[0]
    assert tab["target PR_t"].iloc[-1] == "-"
    assert plots.results_table(pd.DataFrame()).empty


def test_plots_does_not_import_streamlit():
    code = "import sys, fairdash.plots; print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_figure_is_valid_plotly():
    """The builders skip plotly.py's per-property validation for speed; a validated rebuild proves
    that every property they set is a real Plotly property with a valid value."""
    res = _results()
    r, p = np.array([0.11, 0.31]), np.array([0.32, 0.68])
    figs = [plots.ceiling_curve_figure(r, p, 0.2, ("a", "b")), plots.ceiling_curve_figure(r, p, None),
            plots.pr_scatter(res, highlight_target=0.2, group_names=("a", "b")), plots.tpr_scatter(res),
            plots.accuracy_fairness(res, "dp", rates=r, shares=p, highlight_target=0.3),
            plots.accuracy_fairness(res, "eo", rates=r, shares=p), plots.pr_scatter(pd.DataFrame())]
    for fig in figs:
        go.Figure(fig.to_dict())  # raises on any invalid property
        assert fig.to_json()
        fig.update_layout(width=680)  # later edits (as the HTML report makes) still work


def test_ceiling_figure_is_fast_enough_for_a_slider():
    import time

    r, p = np.array([0.11, 0.31]), np.array([0.32, 0.68])
    plots.ceiling_curve_figure(r, p, 0.2).to_json()
    t0 = time.perf_counter()
    for t in np.linspace(0.1, 0.4, 10):
        plots.ceiling_curve_figure(r, p, t).to_json()
    # generous: about 5 ms each on an idle laptop; the budget for a whole slider move is 50 ms
    assert (time.perf_counter() - t0) / 10 < 0.2


def test_accuracy_fairness_reference_ceiling_is_drawn_dotted():
    res = _results()
    r, p = np.array([0.11, 0.31]), np.array([0.32, 0.68])
    fig = plots.accuracy_fairness(res, "dp", rates=np.array([0.2, 0.2]), shares=p, reference_rates=r,
                                  reference_shares=p)
    assert np.allclose(_trace(fig, plots.CEILING_NAME).y, 1.0)  # equal base rates: no price for parity
    ref = _trace(fig, "ceiling on the training split")
    assert ref.line.dash == "dot"
    assert ref.y[-1] == pytest.approx(targets.accuracy_ceiling(r, p, targets.best_target_rate(r, p)))
    go.Figure(fig.to_dict())


def test_rate_scatter_keeps_the_target_markers_in_view():
    import pandas as pd

    from fairdash import plots

    res = pd.DataFrame({"model": ["fair-lr"] * 2, "label": ["FairLR"] * 2, "target_rate": [0.305, 0.305],
                        "seed": [0, 1], "pr_0": [0.15, 0.16], "pr_1": [0.16, 0.17], "tpr_0": [0.7, 0.7],
                        "tpr_1": [0.6, 0.6], "accuracy": [0.88, 0.89]})
    fig = plots.pr_scatter(res)
    assert fig.layout.xaxis.range[1] >= 0.305 and fig.layout.yaxis.range[1] >= 0.305
