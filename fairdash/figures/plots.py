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
``highlight_target``: the point(s) trained at the nearest target rate are ringed.
"""
from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..evaluation.blindness import land_words, landing_means, majority_accuracy, price_table
from ..evaluation.metric_table import EVAL, POP, column_of, groups_in, table_columns, unprefixed
from ..evaluation.metrics import format_mean_std, summarize
from ..targeting import targets
from ..targeting.criteria import DEFAULT, criterion_of_rate
from ..targeting.decision import PAPER_RULE
from ..targeting.target_spec import criterion_info
from .plot_style import (
    FULL_WIDTH,
    HALF_WIDTH,
    MARGIN,
    OKABE_ITO,
    PLOT_HEIGHT,
    RUN,
    label_styles,
    legend_below,
    place_labels,
    run_numbers,
)
from .plot_style import GRID as _GRID
from .plot_style import LAYOUT as _LAYOUT
from .plot_style import figure as _figure
from .plot_style import marker as _marker
from .plot_style import scatter as _scatter
from .plot_style import text_font as _text_font
from .plots_target import TARGET_LINE_NAME, target_view, target_view_note, worst_gaps  # noqa: F401

HIGHLIGHT_NAME = "selected target"
RING_SIZE = 22  # the ring around the points trained at the selected target
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


# --------------------------------------------------------------------------------------------------
# Results helpers
# --------------------------------------------------------------------------------------------------
def as_summary(summary_or_results: pd.DataFrame, by=("model", "label", RUN, "target_rate")) -> pd.DataFrame:
    """``summarize``'s table (``<metric>_mean``/``_std``): passed through if it already is one."""
    df = summary_or_results
    if df is None or len(df) == 0:
        return pd.DataFrame()
    # summarize's table has `repeats`; results rows (one per seed) may carry a `*_mean` column of their own
    if "repeats" in df.columns or ("seed" not in df.columns and any(c.endswith("_mean") for c in df.columns)):
        out = df.copy()
    else:
        out = summarize(df, by=by)
    if "label" not in out.columns:
        out["label"] = out["model"] if "model" in out.columns else "model"
    if "target_rate" not in out.columns:
        out["target_rate"] = np.nan
    return out


POPULATION = "the population (the ordinary test set, as the model will meet it)"
BALANCED = "the paper's balanced test set"


def population_view(summary_or_results) -> pd.DataFrame:
    """The summary with the population's measurements (``pop_*``) in place of the evaluation rows', so
    that every figure and table here can show either population with the same code."""
    df = as_summary(summary_or_results)
    out = df.copy()
    for c in df.columns:
        if (plain := unprefixed(c, POP)) is not None:
            out[plain] = df[c]
    return out


def measured_on(summary_or_results, population: bool, short: bool = False) -> str:
    """What a figure's numbers were measured on, for its title (``short``: without the explanation)."""
    df = summary_or_results
    e = df["eval_set"].dropna() if df is not None and "eval_set" in getattr(df, "columns", ()) else ()
    balanced = not population and (len(e) == 0 or str(e.iloc[0]).startswith("balanced"))
    if short:
        return "the paper's balanced test set" if balanced else "the population (ordinary test set)"
    return BALANCED if balanced else POPULATION


def _col(df, name):
    if f"{name}_mean" in df.columns:
        m = df[f"{name}_mean"].to_numpy(dtype=float)
        s = df[f"{name}_std"].to_numpy(dtype=float) if f"{name}_std" in df.columns else np.zeros(len(df))
        return m, np.nan_to_num(s)
    return np.full(len(df), np.nan), np.zeros(len(df))


def _nearest_rows(df: pd.DataFrame, highlight_target) -> pd.DataFrame:
    if highlight_target is None or "target_rate" not in df.columns:
        return df.iloc[:0]
    t = df["target_rate"].to_numpy(dtype=float)
    ok = np.isfinite(t)
    if not ok.any():
        return df.iloc[:0]
    dist = np.abs(t - float(highlight_target))
    best = np.nanmin(np.where(ok, dist, np.nan))
    return df[ok & np.isclose(dist, best, atol=1e-9)]


def _hover(df: pd.DataFrame) -> list[str]:
    out = []
    for _, r in df.iterrows():
        t = r.get("target_rate", np.nan)
        tt = f"PR_t {t:.3f}" if t is not None and np.isfinite(t) else "no target"
        acc = r.get("accuracy_mean", np.nan)
        reps = r.get("repeats", "")
        out.append(f"{r['label']}<br>{tt}<br>accuracy {acc:.3f}<br>repeats {reps}")
    return out


def _point_labels(label: str, g: pd.DataFrame) -> list[str]:
    """The text written beside a model's points: its label at its last point (the end of a sweep's line,
    with that point's target), so every line and point is named on the figure itself."""
    t = g["target_rate"].to_numpy(dtype=float)
    text = [""] * len(g)
    if len(g):
        text[-1] = label + (f" (PR_t {t[-1]:.3f})" if len(g) > 1 and np.isfinite(t[-1]) else "")
    return text


def _points_of(trace) -> list:
    x, y = np.asarray(trace["x"], dtype=float), np.asarray(trace["y"], dtype=float)
    text = list(trace.get("text") or [""] * len(x))
    return [(float(a), float(b), str(t or "")) for a, b, t in zip(x, y, text)]


def _shared_spots(pts: list, key: dict, sx: float, sy: float) -> dict:
    """:func:`label_points`' numbered labels: one per place (points within 4 px, ``sx``/``sy`` pixels a unit),
    ``{(trace, point, x, y): the keys of every labelled trace drawn there}``."""
    spots = {}
    for i, k, x, y, text in pts:
        if not text or i not in key or not np.isfinite(x) or not np.isfinite(y):
            continue
        here = next((s for s in spots if abs(s[2] - x) * sx < 4 and abs(s[3] - y) * sy < 4), None)
        if here is None:
            spots[(i, k, x, y)] = [key[i]]
        else:
            spots[here].append(key[i])
    return spots


def label_points(traces, *, xrange, yrange, width: float, height: float = PLOT_HEIGHT, rings=()) -> bool:
    """Place the labels of ``traces`` (their ``text``) so that none covers another, a marker or the plot's
    edge (:func:`fairdash.figures.plot_style.place_labels`, on a plot area ``width`` x ``height`` pixels). Where the
    names do not fit, each labelled trace gets a number instead: its point says ``3``, its legend entry
    ``(3) FairLR · run 2``, and points drawn at one place share one label (``1, 4``). Hover still gives every
    name and number. ``rings``: ``(x, y)`` of the selected target's rings, which labels avoid where they can.
    Sets each trace's ``textposition``; returns whether the full names were kept."""
    pts = [(i, k, *p) for i, t in enumerate(traces) for k, p in enumerate(_points_of(t))]

    def place(texts) -> bool:
        spots = [(x, y, texts.get((i, k), ""), True) for i, k, x, y, _ in pts]
        where, fits = place_labels(spots, xrange=xrange, yrange=yrange, width=width, height=height,
                                   obstacles=[(x, y, RING_SIZE) for x, y in rings])
        for t in traces:
            t["textposition"] = ["middle right"] * len(t["x"])
        for (i, k, *_), pos in zip(pts, where):
            if pos is not None:
                traces[i]["textposition"][k] = pos
        return fits

    if place({(i, k): text for i, k, _, _, text in pts if text}):
        return True
    labelled = [i for i, t in enumerate(traces) if any(p[2] for p in _points_of(t))]
    key = {i: n + 1 for n, i in enumerate(labelled)}
    spots = _shared_spots(pts, key, width / max(xrange[1] - xrange[0], 1e-12),
                          height / max(yrange[1] - yrange[0], 1e-12))
    for i in labelled:
        traces[i]["name"] = f"({key[i]}) {traces[i]['name']}"
        traces[i]["text"] = [""] * len(traces[i]["x"])
    texts = {}
    for (i, k, _, _), keys in spots.items():
        traces[i]["text"][k] = texts[(i, k)] = ", ".join(map(str, sorted(set(keys))))
    place(texts)
    return False


def _model_traces(df, xname, yname, *, show_error=True, xrange=(0.0, 1.0), yrange=(0.0, 1.0),
                  width: float = HALF_WIDTH, highlight_target=None) -> list:
    """One trace per label: its own colour-blind-safe colour and marker symbol, and its name written
    beside its last point where it fits (else a number, the legend giving the name: :func:`label_points`,
    for a figure ``width`` pixels wide)."""
    traces = []
    styles = label_styles(df["label"].astype(str), run_numbers(df))
    for i, (label, g) in enumerate(df.groupby("label", sort=False)):
        g = g.sort_values("target_rate")
        x, xs = _col(g, xname)
        y, ys = _col(g, yname)
        several = g["target_rate"].notna().sum() > 1
        style = styles[str(label)]
        traces.append(_scatter(
            x=x, y=y, name=str(label), mode="lines+markers+text" if several else "markers+text",
            marker=_marker(style), line=dict(width=1.5, color=style["colour"]), cliponaxis=False,
            text=_point_labels(str(label), g), textfont=_text_font(),
            error_x=dict(type="data", array=xs, visible=show_error, thickness=1),
            error_y=dict(type="data", array=ys, visible=show_error, thickness=1),
            customdata=_hover(g), hovertemplate="%{customdata}<br>x %{x:.3f}<br>y %{y:.3f}<extra></extra>",
        ))
    ringed = _nearest_rows(df, highlight_target)
    label_points(traces, xrange=xrange, yrange=yrange, width=width - MARGIN["l"] - MARGIN["r"],
                 rings=list(zip(_col(ringed, xname)[0], _col(ringed, yname)[0])))
    return traces


def _highlight_trace(df, xname, yname, highlight_target):
    sel = _nearest_rows(df, highlight_target)
    x, _ = _col(sel, xname)
    y, _ = _col(sel, yname)
    return _scatter(
        x=x, y=y, mode="markers", name=HIGHLIGHT_NAME if highlight_target is None
        else f"{HIGHLIGHT_NAME} (PR_t {float(highlight_target):.3f})",
        marker=dict(size=RING_SIZE, color="rgba(0,0,0,0)", line=dict(color="black", width=2.5)), hoverinfo="skip",
        visible=True if len(sel) else "legendonly",
    )


def _layout(title, xtitle, ytitle, xrange=None, yrange=None, square=False, *, traces=None, width=None,
            **extra) -> dict:
    """One layout dict (figures are built in one go: ``update_layout`` per property is slow). Given the
    ``traces`` and the figure's ``width`` in a 1280 px window, the legend goes below the plot
    (:func:`fairdash.figures.plot_style.legend_below`)."""
    xaxis = dict(_GRID, title=dict(text=xtitle))
    yaxis = dict(_GRID, title=dict(text=ytitle))
    if xrange is not None:
        xaxis["range"] = list(xrange)
    if yrange is not None:
        yaxis["range"] = list(yrange)
    if square:
        yaxis.update(scaleanchor="x", scaleratio=1)
    below = {} if traces is None else legend_below(_legend_names(traces), width or HALF_WIDTH)
    return dict(_LAYOUT, title=dict(text=title), xaxis=xaxis, yaxis=yaxis, **dict(below, **extra))


def _legend_names(traces) -> list[str]:
    return [str(t.get("name")) for t in traces if t.get("name") and t.get("showlegend", True) is not False]


def _empty(title, xtitle, ytitle, message="No results yet: train a model first.") -> go.Figure:
    note = dict(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    return _figure([], _layout(title, xtitle, ytitle, annotations=[note]))


def n_groups_of(df: pd.DataFrame) -> int:
    """How many groups a summary or results table measures (its per-group positive-rate columns)."""
    return groups_in(df.columns)


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
        return _empty(title, "group", what)
    ts = sorted(float(t) for t in df["target_rate"].dropna().unique())
    if len(ts) > 1:
        pick = highlight_target if highlight_target is not None else ts[len(ts) // 2]
        fair = _nearest_rows(df, pick)
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
    layout = _layout(title, "group", what, xrange, yrange, shapes=shapes, traces=traces, width=HALF_WIDTH)
    layout["xaxis"].update(tickmode="array", tickvals=list(range(G)), ticktext=names, zeroline=False)
    return _figure(traces, layout)


def _rate_scatter(summary_or_results, metric: str, title: str, xtitle: str, ytitle: str, target_rates=None,
                  highlight_target=None, group_names=None, show_targets=True) -> go.Figure:
    df = as_summary(summary_or_results)
    x_col, y_col = column_of(metric, EVAL, 0), column_of(metric, EVAL, 1)  # (the population view renames pop_*)
    if df.empty or x_col + "_mean" not in df.columns:
        return _empty(title, xtitle, ytitle)
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
    x, _ = _col(df, x_col)
    y, _ = _col(df, y_col)
    hi = float(np.nanmax(np.concatenate([x, y, ts, [0.05]])))  # the targets stay in view too
    lim = min(1.0, hi * 1.15 + 0.02)
    traces += _model_traces(df, x_col, y_col, xrange=(0, lim), yrange=(0, lim), highlight_target=highlight_target)
    traces.append(_highlight_trace(df, x_col, y_col, highlight_target))
    return _figure(traces, _layout(title, xtitle, ytitle, [0, lim], [0, lim], traces=traces, width=HALF_WIDTH))


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
def accuracy_fairness(summary_or_results, criterion: str = DEFAULT, *, rates=None, shares=None,
                      highlight_target=None, title: str | None = None, reference_rates=None,
                      reference_shares=None, reference_name: str = "ceiling on the training split") -> go.Figure:
    """Accuracy (y) against the fairness ratio (x): ``PR`` ratio (min/max over groups) for demographic
    parity, ``TPR`` ratio for equality of opportunity. With ``rates``/``shares`` (the base rates and
    group shares of the data the accuracy is measured on) the ceiling for each ratio is drawn; every
    point must lie on or below it. ``reference_rates``/``reference_shares`` add a second, dotted ceiling
    (for example the training split's, when accuracy is measured on the balanced test set, where the
    groups' base rates are equal and parity costs nothing in principle)."""
    crit = criterion_info(criterion)
    xname, xtitle = crit.ratio, crit.ratio_words
    title = title or "Accuracy against fairness (mean ± std over repeats)"
    df = as_summary(summary_or_results)
    if df.empty or f"{xname}_mean" not in df.columns:
        return _empty(title, xtitle, "accuracy")
    traces = []
    if rates is not None and shares is not None:
        rx, ry = crit.ratio_ceiling(rates, shares)
        traces.append(_scatter(x=rx, y=ry, mode="lines", name=crit.ceiling_name,
                                 line=dict(color=_BLUE, dash="dash", width=2),
                                 hovertemplate="ratio %{x:.3f}<br>ceiling %{y:.4f}<extra></extra>"))
    if reference_rates is not None and reference_shares is not None:
        rx, ry = crit.ratio_ceiling(reference_rates, reference_shares)
        traces.append(_scatter(x=rx, y=ry, mode="lines", name=reference_name,
                               line=dict(color="#7f7f7f", dash="dot", width=1.5),
                               hovertemplate="ratio %{x:.3f}<br>ceiling %{y:.4f}<extra></extra>"))
    y, ys = _col(df, "accuracy")
    if reference_rates is not None and reference_shares is not None:
        y = np.concatenate([y, ry])
        ys = np.concatenate([ys, np.zeros_like(ry)])
    lo = max(0.0, float(np.nanmin(np.concatenate([y - ys, [1.0]]))) - 0.05)
    traces += _model_traces(df, xname, "accuracy", xrange=(0, 1.05), yrange=(lo, 1.01), width=FULL_WIDTH,
                            highlight_target=highlight_target)
    traces.append(_highlight_trace(df, xname, "accuracy", highlight_target))
    return _figure(traces, _layout(title, xtitle, "accuracy", [0, 1.05], [lo, 1.01], traces=traces, width=FULL_WIDTH))


def result_columns(criterion, n_groups: int, group_names=None) -> list[tuple[str, str]]:
    """The results columns in reading order, ``(column, header)``: accuracy, then the criterion's own
    per-group rates and ratio, then the other rates (one order for every table, the report's too). A
    per-group column is headed with its group's name where ``group_names`` are given (``PR (Female)``),
    else with its number (``PR s=0``)."""
    crit = criterion_info(criterion)
    return table_columns(crit.rate, crit.other_rate, n_groups, group_names)  # names and headers from the one table


def results_table(summary_or_results, criterion: str = DEFAULT, population: bool = False,
                  group_names=None) -> pd.DataFrame:
    """A readable table: one row per model and target with ``mean ± std`` text columns (the mean alone
    for a single repeat; ``n/a`` for an empty ratio), on the evaluation rows or, with ``population``,
    on the ordinary test set. Given the results rows (not a summary) that carry it, the ``worst gap``
    column: the largest gap of a group's rate to its target, with the group (on the population, or on
    the balanced test set); otherwise, on the population, the mean ``target_gap`` of older results.

    Columns in reading order, the ones a decision rests on first: model, accuracy, the worst gap (or the
    target gap), the target, then the per-group rates headed with the groups' names (``group_names``: a
    header says ``PR (Female)``, never ``pr_0``), the ratios and the repeats."""

    df = as_summary(summary_or_results)
    if df.empty:
        return pd.DataFrame()
    # (the evaluation rows of a criterion the paper does not judge on the balanced set are the population)
    worst = worst_gaps(summary_or_results, population or not criterion_info(criterion).balanced_eval)
    if population:
        df = population_view(df)
    heads = result_columns(criterion, n_groups_of(df), group_names)
    cond, mean_gap = column_of("cond_pr_ratio", EVAL), column_of("target_gap", POP)
    heads += [(cond, cond)] + ([(mean_gap, mean_gap)] if population and worst is None else [])
    out = pd.DataFrame({"model": df["label"]})
    repeats = df["repeats"].to_numpy() if "repeats" in df.columns else np.ones(len(df), int)
    text = {}
    for c, h in heads:
        if f"{c}_mean" in df.columns and df[f"{c}_mean"].notna().any():
            text[h] = [format_mean_std(m, s, repeats=n) for m, s, n in zip(df[f"{c}_mean"], df[f"{c}_std"], repeats)]
    if "accuracy" in text:
        out["accuracy"] = text.pop("accuracy")
    if worst is not None:
        keys = pd.DataFrame({"label": df["label"].to_numpy(), "target_rate": df["target_rate"].to_numpy(dtype=float)})
        worst["target_rate"] = worst["target_rate"].astype(float)
        merged = keys.merge(worst, how="left", on=["label", "target_rate"])
        out["worst gap"] = merged["worst gap"].fillna("-").to_numpy()
    elif mean_gap in text:
        out[mean_gap] = text.pop(mean_gap)
    out["target PR_t"] = [f"{t:.3f}" if np.isfinite(t) else "-" for t in df["target_rate"].astype(float)]
    for h, values in text.items():
        out[h] = values
    if "repeats" in df.columns:
        out["repeats"] = df["repeats"].to_numpy()
    return out


PAPER_RULE_MODEL = "fair-lr"  # the paper's method: FairLR decided at 1/2 (the threshold rule)


def frontier_figure(results: pd.DataFrame, *, s_name: str = "s", title: str | None = None) -> go.Figure:
    """The price of deciding without s over a sweep of ``PR_t``: population accuracy (mean over repeats)
    against ``PR_t`` for every rule that lands on the target there (each group's mean population rate within
    :func:`fairdash.evaluation.matched_price.land_tolerance` of its target; solid: decides with s, dashed: without),
    the price's with-s side (the best rule with s at the blind rule's rates, :mod:`fairdash.evaluation.blindness`),
    and the paper's rule (FairLR at 1/2) beside them, whether it lands or not, with its worst gap written at each
    point."""

    title = title or f"Accuracy of the rules that land on the target, with and without {s_name}, over PR_t"
    xtitle, ytitle = "target rate PR_t", "accuracy on the population (mean over repeats)"
    if results is None or results.empty or "decides_with_s" not in results:
        return _empty(title, xtitle, ytitle)
    means = landing_means(results)
    means = means[np.isfinite(means["target_rate"].astype(float))].sort_values("target_rate")
    styles = label_styles(list(dict.fromkeys(means["label"])), run_numbers(results))
    traces = []
    for label, rows in means.groupby("label", sort=False):
        landed = rows[rows["lands"]]
        if landed.empty:
            continue
        with_s = bool(rows["decides_with_s"].iloc[0])
        style = styles[label]
        acc = landed[column_of("accuracy", POP)].astype(float)
        lo, hi = (landed[column_of("accuracy", POP) + b].astype(float) for b in ("_lo", "_hi"))
        traces.append(_scatter(x=landed["target_rate"].tolist(), y=acc.tolist(),
                               mode="lines+markers",
                               name=f"{label} (lands{', decides with ' + s_name if with_s else ''})",
                               line=dict(color=style["colour"], dash="solid" if with_s else "dash"),
                               marker=_marker(style),
                               error_y=dict(type="data", symmetric=False, array=(hi - acc).fillna(0).tolist(),
                                            arrayminus=(acc - lo).fillna(0).tolist(), thickness=1)))
    priced = price_table(results)
    priced = priced[np.isfinite(priced["with_s_accuracy"].astype(float))].sort_values("target_rate")
    if not priced.empty:  # the price's with-s side: the best rule with s, at the blind rule's own training rates
        traces.append(_scatter(x=priced["target_rate"].tolist(), y=priced["with_s_accuracy"].astype(float).tolist(),
                               mode="lines+markers", name=f"best rule with {s_name}, at the blind rule's rates (the "
                               "price's with-s side)", line=dict(color="black", dash="solid"),
                               marker=dict(symbol="diamond", size=9, color="black")))
    paper = means[(means["model"] == PAPER_RULE_MODEL) & (means["decision"] == PAPER_RULE)]
    if not paper.empty:
        traces.append(_scatter(x=paper["target_rate"].tolist(), y=paper[column_of("accuracy", POP)].tolist(),
                               mode="lines+markers+text", name="FairLR at 1/2 (the paper's rule), worst gap beside",
                               text=[f"gap {g:.3f}" for g in paper["worst_gap"]], textposition="top center",
                               line=dict(color="grey", dash="dot"), marker=dict(symbol="x", size=10, color="grey")))
    if not traces:
        return _empty(title, xtitle, ytitle, f"No rule landed on the target ({land_words('mean population rate')}).")
    plain = means[(means["model"] == "lr") & (means["decision"] == PAPER_RULE)]  # for scale: no target at all
    for y, name, dash in ((float(plain[column_of("accuracy", POP)].mean()) if len(plain) else np.nan,
                           "plain LR (no target), for scale", "dot"),
                          (majority_accuracy(results), "the majority class for everyone, for scale", "dashdot")):
        if np.isfinite(y):
            traces.append(_scatter(x=[0, 1], y=[y, y], mode="lines", name=name, line=dict(color="grey", dash=dash)))
    return _figure(traces, _layout(title, xtitle, ytitle, xrange=(0, 1), traces=traces, width=FULL_WIDTH))
