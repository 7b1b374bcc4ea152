"""The target view (issue 18): each group's rate for each model and run as a point against that group's
target, with the signed gap written beside the point, so a miss is read without hovering. Plus the few
summaries of the per-group gaps that the Compare page and the report show next to it: the worst gap with
its group, and the sentences saying a fair model moved a group away from its target.

It reads the per-group columns of the results rows (one row per model x target x seed):
``target_<g>`` (the group's target for the criterion's rate; NaN where the row has none),
``pop_gap_<g>``/``bal_gap_<g>`` (rate minus target on the population / the balanced test set),
``pop_worst_gap``/``pop_worst_gap_group`` (and ``bal_``), and ``moved_away``. Results from before these
columns existed get no target view, and :func:`target_view_note` says why in one line.
"""
from __future__ import annotations

import html
import re
import textwrap

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..evaluation.intervals import interval_over_splits
from ..evaluation.metric_table import EVAL, INTERVAL_BOUNDS, POP, TRAIN, column_of
from ..evaluation.metrics import format_mean_std
from ..targeting.criteria import DP, Criterion
from .plot_style import GRID, LAYOUT, TEXT, figure, label_styles, marker, run_numbers, scatter, text_font

TARGET_LINE_NAME = "each group's target"
NO_TARGET_COLUMNS = ("These runs were trained before FairDash recorded each group's target, so there is no target "
                     "view for them (train them again to see it).")
NO_TARGETS = "No run shown here has a target (plain models only), so there is no target view."
_TARGET = re.compile(r"^target_(\d+)$")


def _groups(df: pd.DataFrame) -> list[int]:
    return sorted(int(m.group(1)) for c in df.columns if (m := _TARGET.match(str(c))))


def target_view_note(results: pd.DataFrame | None) -> str | None:
    """``None`` when :func:`target_view` has something to draw; otherwise the one line that says why not."""
    if results is None or len(results) == 0:
        return NO_TARGETS
    groups = _groups(results)
    if not groups:
        return NO_TARGET_COLUMNS
    t = results[[column_of("target", TRAIN, g) for g in groups]].apply(pd.to_numeric, errors="coerce")
    t = t.to_numpy(dtype=float)
    return None if np.isfinite(t).any() else NO_TARGETS


def worst_gaps(results: pd.DataFrame, population: bool = True) -> pd.DataFrame | None:
    """Per label and target rate: ``worst gap`` as text, the mean (± std over repeats) of the largest
    absolute gap between a group's rate and its target, with that group's name (the most frequent over
    repeats), e.g. ``0.142 (Female)``. ``None`` for results without the column."""

    where = POP if population else EVAL
    col, group_col = column_of("worst_gap", where), column_of("worst_gap_group", where)
    if results is None or col not in getattr(results, "columns", ()) or "label" not in results.columns:
        return None
    df = results.copy()
    if "target_rate" not in df.columns:
        df["target_rate"] = np.nan
    df[col] = pd.to_numeric(df[col], errors="coerce")
    rows = []
    for (label, t), g in df.groupby(["label", "target_rate"], dropna=False, sort=False):
        v = g[col].dropna()
        if v.empty:
            text = "-"
        else:
            text = format_mean_std(float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0, repeats=len(v))
            names = g.get(group_col, pd.Series(dtype=object)).dropna().astype(str)
            names = names[names != ""]
            if len(names):
                text += f" ({names.mode().iloc[0]})"
        rows.append({"label": label, "target_rate": t, "worst gap": text})
    return pd.DataFrame(rows)


def _pick_targets(df: pd.DataFrame, highlight_target) -> pd.DataFrame:
    """For a label trained at several targets (a sweep), the rows at the target nearest ``highlight_target``
    (or its middle target): one point per label and group."""
    keep = []
    for _, g in df.groupby("label", sort=False):
        ts = sorted(float(t) for t in g["target_rate"].dropna().unique())
        if len(ts) > 1:
            pick = float(highlight_target) if highlight_target is not None else ts[len(ts) // 2]
            best = min(ts, key=lambda t: abs(t - pick))
            g = g[np.isclose(g["target_rate"].astype(float), best)]
        keep.append(g)
    return pd.concat(keep) if keep else df


def _points(df: pd.DataFrame, groups: list[int], metric: str, where: str) -> pd.DataFrame:
    """One row per label, target rate and group: the mean rate of ``metric`` on the set ``where`` (and its std),
    target and gap over repeats."""
    rows = []
    for (label, t), g in df.groupby(["label", "target_rate"], dropna=False, sort=False):
        for j in groups:
            rate_col, gap_col = column_of(metric, where, j), column_of("gap", where, j)
            if rate_col not in g.columns:
                continue
            rate = pd.to_numeric(g[rate_col], errors="coerce")
            target = pd.to_numeric(g[column_of("target", TRAIN, j)], errors="coerce")
            if rate.dropna().empty:
                continue
            gap = rate - target  # the recorded gap where there is one (it may come from finer cells)
            if gap_col in g.columns:
                gap = pd.to_numeric(g[gap_col], errors="coerce").fillna(gap)
            if rate.notna().sum() > 1:  # the mean's 95% interval over the repeats (evaluation.intervals)
                lo, hi = interval_over_splits(rate, within=(0.0, 1.0))
            else:  # one repeat: its own bootstrap interval, where the results carry it
                lo, hi = (float(pd.to_numeric(g[rate_col + b], errors="coerce").mean()) if rate_col + b in g.columns
                          else np.nan for b in INTERVAL_BOUNDS)
            rows.append({"label": str(label), "target_rate": t, "group": j, "rate": float(rate.mean()),
                         "std": float(rate.std(ddof=1)) if rate.notna().sum() > 1 else 0.0, "lo": lo, "hi": hi,
                         "target": float(target.mean()) if target.notna().any() else np.nan,
                         "gap": float(gap.mean()) if gap.notna().any() else np.nan,
                         "repeats": int(rate.notna().sum()), "own_target": bool(target.notna().any())})
    pts = pd.DataFrame(rows)
    if pts.empty:
        return pts
    # A row without a target of its own (plain LR beside FairLR) is held against its group's target where
    # every targeted row agrees on it, so the plain model's miss reads the same way.
    for j, g in pts.groupby("group"):
        ts = g["target"].dropna().unique()
        if len(ts) and np.allclose(ts, ts[0], atol=1e-9):
            free = (pts["group"] == j) & pts["target"].isna()
            pts.loc[free, "target"] = ts[0]
            pts.loc[free, "gap"] = pts.loc[free, "rate"] - ts[0]
    return pts


def target_view(results: pd.DataFrame, criterion: Criterion = DP, *, population: bool = True, group_names=None,
                highlight_target=None, title: str | None = None) -> go.Figure:
    """Each group's rate (x) for each model and run (one row each, grouped by group) against that group's
    target (a vertical line), with the signed gap (rate - target, e.g. ``-0.142``) written beside the
    point, on the side away from the target line. With repeats each point is the mean. Its bar is the 95%
    interval (``evaluation.intervals``: the corrected resampled t over the repeats, or one repeat's bootstrap interval).

    ``results``: the tidy results rows with the ``target_<g>`` and gap columns (a figure with a message
    where they are missing: see :func:`target_view_note`). ``population``: the population's rates
    (``pop_<rate>_<g>``, ``pop_gap_<g>``); otherwise the evaluation rows' (``<rate>_<g>``, ``bal_gap_<g>``).
    All text from the data (labels, group names) is escaped, since Plotly reads a little HTML."""
    what = criterion.rate_name
    repeats = 1
    note = target_view_note(results)
    base = title or f"{what.capitalize()} of each group against its target"
    if note is not None:
        return _message(base, what, note)
    df = results.copy()
    if "label" not in df.columns:
        df["label"] = df["model"] if "model" in df.columns else "model"
    if "target_rate" not in df.columns:
        df["target_rate"] = np.nan
    groups = _groups(df)
    pts = _points(_pick_targets(df, highlight_target), groups, criterion.rate, POP if population else EVAL)
    if pts.empty:
        return _message(base, what, "These results carry no per-group rates to draw.")
    repeats = int(pts["repeats"].max())
    title = title or base + (" (mean over repeats)" if repeats > 1 else "")
    names = {j: html.escape(str(group_names[j]) if group_names is not None and j < len(group_names) else f"s={j}")
             for j in groups}
    labels = list(dict.fromkeys(pts["label"]))
    styles = label_styles(labels, run_numbers(df))
    n = len(labels)
    # y: one row per (group, label), groups in blocks one row apart, top to bottom
    pts["y"] = [g * (n + 1) + labels.index(lb) for g, lb in zip(pts["group"], pts["label"])]
    traces = [_target_lines(pts, names)]
    traces += [_label_trace(pts[pts["label"] == label], label, styles[label], names) for label in labels]
    return figure(traces, _view_layout(pts, names, title, what, len(groups), len(traces)))


def _label_trace(p: pd.DataFrame, label: str, style, names: dict):
    """One model's (or run's) points of the target view: each group's rate, its gap written beside it on the side
    away from the target, its interval as a bar."""
    gap_text = [f"{v:+.3f}" if np.isfinite(v) else "no target" for v in p["gap"]]
    return scatter(
        x=p["rate"].tolist(), y=p["y"].tolist(), mode="markers+text", name=html.escape(label), cliponaxis=False,
        marker=marker(style, size=12), text=gap_text, textfont=text_font(12),
        textposition=["middle left" if np.isfinite(v) and v < 0 else "middle right" for v in p["gap"]],
        error_x=dict(type="data", symmetric=False, array=(p["hi"] - p["rate"]).clip(lower=0).fillna(0).tolist(),
                     arrayminus=(p["rate"] - p["lo"]).clip(lower=0).fillna(0).tolist(),
                     visible=bool(p["lo"].notna().any()), thickness=1),
        customdata=[_hover(label, names[j], r, t, v, k, own, a, b)
                    for j, r, t, v, k, own, a, b in zip(p["group"], p["rate"], p["target"], p["gap"], p["repeats"],
                                                        p["own_target"], p["lo"], p["hi"])],
        hovertemplate="%{customdata}<extra></extra>")


def _view_layout(pts: pd.DataFrame, names: dict, title: str, what: str, n_groups: int, n_traces: int) -> dict:
    """The target view's layout: a row per (group, label) named on the left, as tall as its label's lines, the
    x range padded around the rates and targets."""
    ys = sorted(pts["y"].unique())
    ticks = [_tick(names[g], lb) for g, lb in
             pts.drop_duplicates("y").sort_values("y")[["group", "label"]].itertuples(index=False)]
    row = max(30, 16 * max(t.count("<br>") + 1 for t in ticks) + 4)  # a row's height: its label's lines apart
    xs = np.concatenate([pts["rate"].to_numpy(float), pts["target"].dropna().to_numpy(float)])
    lo, hi = float(np.nanmin(xs)), float(np.nanmax(xs))
    pad = max(0.06, 0.25 * (hi - lo))
    return dict(
        LAYOUT, title=dict(text=title), height=int(190 + row * len(ys) + 12 * n_groups + 22 * n_traces),
        showlegend=True, legend=dict(orientation="h", yanchor="top", y=-0.18, x=0, xanchor="left"),
        xaxis=dict(GRID, title=dict(text=f"{what} (the gap to the target is written beside each point)"),
                   range=[max(-0.02, lo - pad), min(1.02, hi + pad)]),
        yaxis=dict(GRID, title=dict(text=""), autorange="reversed", tickmode="array", tickvals=ys,
                   ticktext=ticks,
                   showgrid=False, zeroline=False, automargin=True),
        margin=dict(l=20, r=40, t=60, b=55))


TICK_WIDTH = 34  # characters a line of a row's label holds before it wraps (long group names and rule labels)


def _tick(group: str, label: str) -> str:
    """A row's label, ``group · model``, wrapped at :data:`TICK_WIDTH` characters a line (never cut): long group
    names and rule labels would otherwise widen the margin until the plot is squeezed. ``group`` is escaped already."""
    text = f"{html.unescape(group)} · {label}"
    return "<br>".join(html.escape(line) for line in textwrap.wrap(text, TICK_WIDTH, break_long_words=True)) or \
        html.escape(text)


def _hover(label, group, rate, target, gap, repeats, own, lo=np.nan, hi=np.nan) -> str:
    t = f"target {target:.3f}" + ("" if own else " (its group's target in this figure)") if np.isfinite(target) \
        else "no target"
    g = f"gap {gap:+.3f}" if np.isfinite(gap) else "no gap"
    ci = f" (95%: {lo:.3f} to {hi:.3f})" if np.isfinite(lo) and np.isfinite(hi) else ""
    return f"{html.escape(label)}<br>{group}: rate {rate:.3f}{ci}<br>{t}<br>{g}<br>repeats {repeats}"


def _target_lines(pts: pd.DataFrame, names: dict) -> dict:
    """Each group's target as a vertical line across that group's rows (one segment per target value),
    its value written at the top: one legend entry."""
    x, y, text = [], [], []
    for (j, t), g in pts.dropna(subset=["target"]).groupby(["group", "target"], sort=False):
        top, bottom = float(g["y"].min()) - 0.5, float(g["y"].max()) + 0.5
        x += [t, t, None]
        y += [top, bottom, None]
        text += [f"target {t:.3f}", "", ""]
    return scatter(x=x, y=y, mode="lines+text", name=TARGET_LINE_NAME, text=text, textposition="top center",
                   textfont=text_font(11), line=dict(color=TEXT, width=2, dash="dash"), hoverinfo="skip")


def _message(title: str, what: str, message: str) -> go.Figure:
    note = dict(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    return figure([], dict(LAYOUT, title=dict(text=title), xaxis=dict(GRID, title=dict(text=what)),
                           yaxis=dict(GRID), annotations=[note]))
