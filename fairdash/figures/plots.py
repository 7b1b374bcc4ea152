"""Plotly figure builders: results (or a rates table) in, ``go.Figure`` out.

Pure functions with no Streamlit import, shared by the dashboard and the HTML report:

- :func:`ceiling_curve_figure`: Theorem 2's accuracy ceiling over every ``PR_t`` with the current
  target marked (the Target page's curve).
- :func:`pr_scatter`: ``PR_s0`` against ``PR_s1`` (mean +- std over repeats) with the diagonal of
  perfect parity and the targets ``(PR_t, PR_t)`` marked.
- :func:`tpr_scatter`: the same for true positive rates (equality of opportunity).
- :func:`accuracy_fairness`: accuracy against the fairness ratio (PR ratio for demographic parity,
  TPR ratio for opportunity) with the accuracy ceiling for each ratio drawn.

Every results-based builder takes either the tidy results of ``run_experiment`` (one row per model,
target and seed) or the output of :func:`fairdash.evaluation.metrics.summarize`, and an optional
``highlight_target``: the point(s) trained at the nearest target rate are ringed. Their shared parts (traces,
labels, layout) are :mod:`fairdash.figures.plot_parts`. The Streamlit glue reaches every figure and the results
table through this module: the target view (:mod:`~fairdash.figures.plots_target`), the price's frontier
(:mod:`~fairdash.figures.plots_frontier`) and the results table (:mod:`~fairdash.figures.results_table`) are
named here too.
"""
from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..evaluation.metric_table import EVAL, column_of
from ..targeting import targets
from ..targeting.criteria import DP, Criterion, criterion_of_rate
from .plot_parts import (
    empty_figure,
    figure_layout,
    highlight_trace,
    label_points,
    model_traces,
    nearest_rows,
    value_column,
)
from .plot_style import FULL_WIDTH, HALF_WIDTH, MARGIN, OKABE_ITO, label_styles, run_numbers
from .plot_style import GRID as _GRID
from .plot_style import LAYOUT as _LAYOUT
from .plot_style import figure as _figure
from .plot_style import marker as _marker
from .plot_style import scatter as _scatter
from .plot_style import text_font as _text_font

# the glue's one door to the figures and the table (see the module's docstring)
from .plots_frontier import frontier_figure  # noqa: F401
from .plots_target import TARGET_LINE_NAME, target_view, target_view_note, worst_gaps  # noqa: F401
from .results_table import (  # noqa: F401
    POPULATION,
    as_summary,
    measured_on,
    n_groups_of,
    population_view,
    result_columns,
    results_table,
)

TARGET_NAME = "targets (PR_t, PR_t)"
DIAGONAL_NAME = "equal rates (parity)"
CEILING_NAME = "accuracy ceiling (Theorem 2)"
_BLUE, _VERMILLION = OKABE_ITO[4], OKABE_ITO[5]



# --------------------------------------------------------------------------------------------------
# Theorem 2 ceiling over PR_t
# --------------------------------------------------------------------------------------------------
def ceiling_curve_figure(rates, shares, target_rate=None, group_names=None, *, grid=None,
                         highlight_target=None, title: str | None = None) -> go.Figure:
    """Theorem 2's ceiling ``1 - sum_s p_s |PR_t - PR_b^s|`` over ``PR_t`` in [0, 1], the base rates as
    dotted lines and the current ``target_rate`` (or ``highlight_target``) marked with its value.

    Built in one go (shapes and annotations as layout dicts, no ``add_vline``): this figure is redrawn
    on every slider move, so it must cost milliseconds."""
    rates = np.asarray(rates, dtype=float)
    shares = np.asarray(shares, dtype=float)
    x, y = targets.accuracy_ceiling_curve(rates, shares, grid)
    names = list(group_names) if group_names is not None else [f"group {j}" for j in range(len(rates))]
    traces = [_scatter(x=x, y=y, mode="lines", name=CEILING_NAME, line=dict(color=_BLUE, width=2.5),
                         hovertemplate="PR_t %{x:.3f}<br>ceiling %{y:.4f}<extra></extra>")]
    shapes, notes = [], []
    for j, r in enumerate(rates):
        shapes.append(dict(type="line", xref="x", yref="paper", x0=float(r), x1=float(r), y0=0, y1=1,
                           line=dict(color="#999999", dash="dot", width=1)))
        notes.append(dict(x=float(r), y=0.02 + 0.07 * (j % 3), xref="x", yref="paper", showarrow=False,
                          xanchor="left", font=dict(size=10, color="#666666"),
                          text=f" base rate s={j}" + (f" ({names[j]})" if j < len(names) else "")))
    mark = highlight_target if highlight_target is not None else target_rate
    if mark is not None and np.isfinite(float(mark)):
        t = float(mark)
        c = targets.accuracy_ceiling(rates, shares, t)
        traces.append(_scatter(x=[t], y=[c], mode="markers+text", name=f"PR_t = {t:.3f}",
                                 marker=dict(size=13, color=_VERMILLION, line=dict(color="white", width=2)),
                                 text=[f"{c:.4f}"], textposition="top center",
                                 hovertemplate="PR_t %{x:.3f}<br>ceiling %{y:.4f}<extra></extra>"))
        shapes.append(dict(type="line", xref="x", yref="paper", x0=t, x1=t, y0=0, y1=1,
                           line=dict(color=_VERMILLION, width=1.5)))
    layout = dict(_LAYOUT, title=dict(text=title or "Accuracy ceiling over the target positive rate"),
                  xaxis=dict(_GRID, title=dict(text="target positive rate PR_t"), range=[0, 1]),
                  yaxis=dict(_GRID, title=dict(text="highest possible accuracy"),
                             range=[max(0.0, float(np.min(y)) - 0.02), 1.01]),
                  shapes=shapes, annotations=notes, showlegend=True)
    return _figure(traces, layout)


def group_rates_figure(summary_or_results, metric: str = "pr", *, group_names=None, highlight_target=None,
                       title: str | None = None, show_targets: bool = True) -> go.Figure:
    """For any number of groups: each group's rate (x = group) per model, mean ± std over repeats, with the
    target PR_t as a dashed line. With several targets, the models trained at ``highlight_target`` (or the
    middle one) are shown. Where a 2-D scatter cannot show k > 2 groups, this reads the same way."""
    what = {"pr": "positive rate", "tpr": "true positive rate"}[metric]
    title = title or f"{what.capitalize()} per group (mean ± std over repeats)"
    df = as_summary(summary_or_results)
    G = n_groups_of(df) if not df.empty else 0
    if df.empty or G == 0:
        return empty_figure(title, "group", what)
    ts = sorted(float(t) for t in df["target_rate"].dropna().unique())
    if len(ts) > 1:
        pick = highlight_target if highlight_target is not None else ts[len(ts) // 2]
        fair = nearest_rows(df, pick)
        df = pd.concat([fair, df[df["target_rate"].isna()]])
        ts = [float(fair["target_rate"].iloc[0])] if len(fair) else []
    names = [str(group_names[j]) if group_names is not None and j < len(group_names) else f"s={j}" for j in range(G)]
    traces = []
    styles = label_styles(df["label"].astype(str), run_numbers(df))
    n = len(df)
    step = min(0.6 / max(n, 1), 0.15)  # each model's points a little apart within its group, none hidden behind another
    values = n <= 2  # each rate written beside its point only where there is room: otherwise hover gives it
    hi = 0.05
    for i, (_, r) in enumerate(df.iterrows()):
        style = styles[str(r["label"])]
        y = [r.get(column_of(metric, EVAL, j) + "_mean", np.nan) for j in range(G)]
        e = [np.nan_to_num(r.get(column_of(metric, EVAL, j) + "_std", 0.0)) for j in range(G)]
        hi = max([hi] + [v + d for v, d in zip(y, e) if np.isfinite(v)])
        t = r.get("target_rate", np.nan)
        name = str(r["label"]) + (f" (PR_t {t:.3f})" if np.isfinite(t) else "")
        hover = name
        text = [f"{v:.3f}" if values and np.isfinite(v) else "" for v in y]
        text[-1] = f"{text[-1]} {r['label']}".strip()
        traces.append(_scatter(x=[j + (i - (n - 1) / 2) * step for j in range(G)], y=y, mode="lines+markers+text",
                               name=name, marker=_marker(style), line=dict(width=1.5, color=style["colour"]), text=text,
                               cliponaxis=False, textfont=_text_font(), error_y=dict(type="data", array=e, thickness=1),
                               customdata=names, hovertemplate="%{customdata}: %{y:.3f}<extra>" + hover + "</extra>"))
    shapes = []
    if show_targets and not criterion_of_rate(metric).positives_only:  # the targets PR_t are rates of every row
        for t in ts:
            hi = max(hi, t)
            shapes.append(dict(type="line", xref="paper", x0=0, x1=1, y0=t, y1=t,
                               line=dict(color="#444444", dash="dash", width=1.5)))
            traces.append(_scatter(x=[-0.45], y=[t], mode="markers", name=f"target PR_t {t:.3f}",
                                   marker=dict(symbol="x", size=9, color="#444444"), hoverinfo="skip"))
    xrange, yrange = (-0.6, G - 0.4), (0.0, min(1.05, hi * 1.15 + 0.05))
    label_points(traces, xrange=xrange, yrange=yrange, width=HALF_WIDTH - MARGIN["l"] - MARGIN["r"])
    layout = figure_layout(title, "group", what, xrange, yrange, shapes=shapes, traces=traces, width=HALF_WIDTH)
    layout["xaxis"].update(tickmode="array", tickvals=list(range(G)), ticktext=names, zeroline=False)
    return _figure(traces, layout)


def _rate_scatter(summary_or_results, metric: str, title: str, xtitle: str, ytitle: str, target_rates=None,
                  highlight_target=None, group_names=None, show_targets=True) -> go.Figure:
    df = as_summary(summary_or_results)
    x_col, y_col = column_of(metric, EVAL, 0), column_of(metric, EVAL, 1)  # (the population view renames pop_*)
    if df.empty or x_col + "_mean" not in df.columns:
        return empty_figure(title, xtitle, ytitle)
    if n_groups_of(df) > 2:
        return group_rates_figure(df, metric, group_names=group_names, highlight_target=highlight_target,
                                  title=title, show_targets=show_targets)
    if group_names is not None and len(group_names) >= 2:
        xtitle, ytitle = _axis_title(xtitle, group_names[0]), _axis_title(ytitle, group_names[1])
    traces = [_scatter(x=[0, 1], y=[0, 1], mode="lines", name=DIAGONAL_NAME,
                         line=dict(color="#999999", dash="dash", width=1), hoverinfo="skip")]
    ts = np.empty(0)
    if show_targets:
        ts = target_rates if target_rates is not None else df["target_rate"].dropna().unique()
        ts = np.asarray(sorted(float(t) for t in ts if t is not None and np.isfinite(t)))
        if ts.size:
            traces.append(_scatter(x=ts, y=ts, mode="markers", name=TARGET_NAME,
                                     marker=dict(symbol="x", size=9, color="#444444"),
                                     hovertemplate="target PR_t %{x:.3f}<extra></extra>"))
    x, _ = value_column(df, x_col)
    y, _ = value_column(df, y_col)
    hi = float(np.nanmax(np.concatenate([x, y, ts, [0.05]])))  # the targets stay in view too
    lim = min(1.0, hi * 1.15 + 0.02)
    traces += model_traces(df, x_col, y_col, xrange=(0, lim), yrange=(0, lim), highlight_target=highlight_target)
    traces.append(highlight_trace(df, x_col, y_col, highlight_target))
    return _figure(traces, figure_layout(title, xtitle, ytitle, [0, lim], [0, lim], traces=traces, width=HALF_WIDTH))


AXIS_TITLE_WIDTH = 40  # characters an axis title holds on one line (a half-width figure's side at 1280 px)


def _axis_title(title: str, group: str) -> str:
    """``title (group)``, the group on lines of its own where the whole would not fit the axis (a long group name
    would run past the figure's edge); broken between words only, so an escaped character is never split."""
    text = f"{title} ({group})"
    if len(text) <= AXIS_TITLE_WIDTH:
        return text
    return "<br>".join([title] + textwrap.wrap(f"({group})", AXIS_TITLE_WIDTH, break_long_words=False))


def pr_scatter(summary_or_results, target_rates=None, *, highlight_target=None, group_names=None,
               title: str = "Positive rates per group (mean ± std over repeats)") -> go.Figure:
    """``PR_s0`` (x) against ``PR_s1`` (y) per model and target: the dashed diagonal is perfect
    demographic parity, crosses are the targets ``(PR_t, PR_t)``."""
    return _rate_scatter(summary_or_results, "pr", title, "positive rate PR_s0", "positive rate PR_s1",
                         target_rates, highlight_target, group_names)


def tpr_scatter(summary_or_results, target_rates=None, *, highlight_target=None, group_names=None,
                title: str = "True positive rates per group (mean ± std over repeats)") -> go.Figure:
    """``TPR_s0`` (x) against ``TPR_s1`` (y): the diagonal is equality of opportunity."""
    return _rate_scatter(summary_or_results, "tpr", title, "true positive rate TPR_s0",
                         "true positive rate TPR_s1", target_rates, highlight_target, group_names, show_targets=False)


# --------------------------------------------------------------------------------------------------
# Accuracy against fairness, with the ceiling
# --------------------------------------------------------------------------------------------------
def accuracy_fairness(summary_or_results, criterion: Criterion = DP, *, rates=None, shares=None,
                      highlight_target=None, title: str | None = None, reference_rates=None,
                      reference_shares=None, reference_name: str = "ceiling on the training split") -> go.Figure:
    """Accuracy (y) against the fairness ratio (x): ``PR`` ratio (min/max over groups) for demographic
    parity, ``TPR`` ratio for equality of opportunity. With ``rates``/``shares`` (the base rates and
    group shares of the data the accuracy is measured on) the ceiling for each ratio is drawn; every
    point must lie on or below it. ``reference_rates``/``reference_shares`` add a second, dotted ceiling
    (for example the training split's, when accuracy is measured on the balanced test set, where the
    groups' base rates are equal and parity costs nothing in principle)."""
    xname, xtitle = criterion.ratio, criterion.ratio_words
    title = title or "Accuracy against fairness (mean ± std over repeats)"
    df = as_summary(summary_or_results)
    if df.empty or f"{xname}_mean" not in df.columns:
        return empty_figure(title, xtitle, "accuracy")
    traces = []
    if rates is not None and shares is not None:
        rx, ry = criterion.ratio_ceiling(rates, shares)
        traces.append(_scatter(x=rx, y=ry, mode="lines", name=criterion.ceiling_name,
                                 line=dict(color=_BLUE, dash="dash", width=2),
                                 hovertemplate="ratio %{x:.3f}<br>ceiling %{y:.4f}<extra></extra>"))
    if reference_rates is not None and reference_shares is not None:
        rx, ry = criterion.ratio_ceiling(reference_rates, reference_shares)
        traces.append(_scatter(x=rx, y=ry, mode="lines", name=reference_name,
                               line=dict(color="#7f7f7f", dash="dot", width=1.5),
                               hovertemplate="ratio %{x:.3f}<br>ceiling %{y:.4f}<extra></extra>"))
    y, ys = value_column(df, "accuracy")
    if reference_rates is not None and reference_shares is not None:
        y = np.concatenate([y, ry])
        ys = np.concatenate([ys, np.zeros_like(ry)])
    lo = max(0.0, float(np.nanmin(np.concatenate([y - ys, [1.0]]))) - 0.05)
    traces += model_traces(df, xname, "accuracy", xrange=(0, 1.05), yrange=(lo, 1.01), width=FULL_WIDTH,
                            highlight_target=highlight_target)
    traces.append(highlight_trace(df, xname, "accuracy", highlight_target))
    return _figure(traces, figure_layout(title, xtitle, "accuracy", [0, 1.05], [lo, 1.01], traces=traces,
                                         width=FULL_WIDTH))
