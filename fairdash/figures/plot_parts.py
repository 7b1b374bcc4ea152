"""The parts every results scatter is built from: a column's values, the rows nearest the selected target, the
hover text, the points' labels placed where they cover no other label (``label_points``), one trace per model, the
ring at the selected target, the layout and the empty figure.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .plot_style import GRID as _GRID
from .plot_style import (
    HALF_WIDTH,
    MARGIN,
    PLOT_HEIGHT,
    label_styles,
    legend_below,
    place_labels,
    run_numbers,
)
from .plot_style import LAYOUT as _LAYOUT
from .plot_style import figure as _figure
from .plot_style import marker as _marker
from .plot_style import scatter as _scatter
from .plot_style import text_font as _text_font

HIGHLIGHT_NAME = "selected target"
RING_SIZE = 22  # the ring around the points trained at the selected target


def value_column(df, name):
    if f"{name}_mean" in df.columns:
        m = df[f"{name}_mean"].to_numpy(dtype=float)
        s = df[f"{name}_std"].to_numpy(dtype=float) if f"{name}_std" in df.columns else np.zeros(len(df))
        return m, np.nan_to_num(s)
    return np.full(len(df), np.nan), np.zeros(len(df))


def nearest_rows(df: pd.DataFrame, highlight_target) -> pd.DataFrame:
    if highlight_target is None or "target_rate" not in df.columns:
        return df.iloc[:0]
    t = df["target_rate"].to_numpy(dtype=float)
    ok = np.isfinite(t)
    if not ok.any():
        return df.iloc[:0]
    dist = np.abs(t - float(highlight_target))
    best = np.nanmin(np.where(ok, dist, np.nan))
    return df[ok & np.isclose(dist, best, atol=1e-9)]


def hover_texts(df: pd.DataFrame) -> list[str]:
    out = []
    for _, r in df.iterrows():
        t = r.get("target_rate", np.nan)
        tt = f"PR_t {t:.3f}" if t is not None and np.isfinite(t) else "no target"
        acc = r.get("accuracy_mean", np.nan)
        reps = r.get("repeats", "")
        out.append(f"{r['label']}<br>{tt}<br>accuracy {acc:.3f}<br>repeats {reps}")
    return out


def point_labels(label: str, g: pd.DataFrame) -> list[str]:
    """The text written beside a model's points: its label at its last point (the end of a sweep's line,
    with that point's target), so every line and point is named on the figure itself."""
    t = g["target_rate"].to_numpy(dtype=float)
    text = [""] * len(g)
    if len(g):
        text[-1] = label + (f" (PR_t {t[-1]:.3f})" if len(g) > 1 and np.isfinite(t[-1]) else "")
    return text


# how near (px) numbered points must be to share one label: points drawn at one place first, then ever wider
# neighbourhoods until every label has a place of its own (the last is taken whatever it leaves)
SHARED_LABEL_RADII = (4, 8, 16, 32)


def _points_of(trace) -> list:
    x, y = np.asarray(trace["x"], dtype=float), np.asarray(trace["y"], dtype=float)
    text = list(trace.get("text") or [""] * len(x))
    return [(float(a), float(b), str(t or "")) for a, b, t in zip(x, y, text)]


def _shared_spots(pts: list, key: dict, sx: float, sy: float, radius: float = 4) -> dict:
    """:func:`label_points`' numbered labels: one per place (points within ``radius`` px, ``sx``/``sy`` pixels a
    unit), ``{(trace, point, x, y): the keys of every labelled trace drawn there}``."""
    spots = {}
    for i, k, x, y, text in pts:
        if not text or i not in key or not np.isfinite(x) or not np.isfinite(y):
            continue
        here = next((s for s in spots if abs(s[2] - x) * sx < radius and abs(s[3] - y) * sy < radius), None)
        if here is None:
            spots[(i, k, x, y)] = [key[i]]
        else:
            spots[here].append(key[i])
    return spots


def label_points(traces, *, xrange, yrange, width: float, height: float = PLOT_HEIGHT, rings=()) -> bool:
    """Place the labels of ``traces`` (their ``text``) so that none covers another, a marker or the plot's
    edge (:func:`fairdash.figures.plot_style.place_labels`, on a plot area ``width`` x ``height`` pixels). Where the
    names do not fit, each labelled trace gets a number instead: its point says ``3``, its legend entry
    ``(3) FairLR · run 2``, and points drawn at one place, or too near to be labelled apart, share one label
    (``1, 4``; :data:`SHARED_LABEL_RADII`). Hover still gives every
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
    for i in labelled:
        traces[i]["name"] = f"({key[i]}) {traces[i]['name']}"
    scale = (width / max(xrange[1] - xrange[0], 1e-12), height / max(yrange[1] - yrange[0], 1e-12))
    for radius in SHARED_LABEL_RADII:  # points too close to be labelled apart share one label ("5, 6")
        for i in labelled:
            traces[i]["text"] = [""] * len(traces[i]["x"])
        texts = {}
        for (i, k, _, _), keys in _shared_spots(pts, key, *scale, radius=radius).items():
            traces[i]["text"][k] = texts[(i, k)] = ", ".join(map(str, sorted(set(keys))))
        if place(texts):
            break
    return False


def model_traces(df, xname, yname, *, show_error=True, xrange=(0.0, 1.0), yrange=(0.0, 1.0),
                  width: float = HALF_WIDTH, highlight_target=None) -> list:
    """One trace per label: its own colour-blind-safe colour and marker symbol, and its name written
    beside its last point where it fits (else a number, the legend giving the name: :func:`label_points`,
    for a figure ``width`` pixels wide)."""
    traces = []
    styles = label_styles(df["label"].astype(str), run_numbers(df))
    for i, (label, g) in enumerate(df.groupby("label", sort=False)):
        g = g.sort_values("target_rate")
        x, xs = value_column(g, xname)
        y, ys = value_column(g, yname)
        several = g["target_rate"].notna().sum() > 1
        style = styles[str(label)]
        traces.append(_scatter(
            x=x, y=y, name=str(label), mode="lines+markers+text" if several else "markers+text",
            marker=_marker(style), line=dict(width=1.5, color=style["colour"]), cliponaxis=False,
            text=point_labels(str(label), g), textfont=_text_font(),
            error_x=dict(type="data", array=xs, visible=show_error, thickness=1),
            error_y=dict(type="data", array=ys, visible=show_error, thickness=1),
            customdata=hover_texts(g), hovertemplate="%{customdata}<br>x %{x:.3f}<br>y %{y:.3f}<extra></extra>",
        ))
    ringed = nearest_rows(df, highlight_target)
    label_points(traces, xrange=xrange, yrange=yrange, width=width - MARGIN["l"] - MARGIN["r"],
                 rings=list(zip(value_column(ringed, xname)[0], value_column(ringed, yname)[0])))
    return traces


def highlight_trace(df, xname, yname, highlight_target):
    sel = nearest_rows(df, highlight_target)
    x, _ = value_column(sel, xname)
    y, _ = value_column(sel, yname)
    return _scatter(
        x=x, y=y, mode="markers", name=HIGHLIGHT_NAME if highlight_target is None
        else f"{HIGHLIGHT_NAME} (PR_t {float(highlight_target):.3f})",
        marker=dict(size=RING_SIZE, color="rgba(0,0,0,0)", line=dict(color="black", width=2.5)), hoverinfo="skip",
        visible=True if len(sel) else "legendonly",
    )


def figure_layout(title, xtitle, ytitle, xrange=None, yrange=None, square=False, *, traces=None, width=None,
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


def empty_figure(title, xtitle, ytitle, message="No results yet: train a model first.") -> go.Figure:
    note = dict(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    return _figure([], figure_layout(title, xtitle, ytitle, annotations=[note]))
