"""The calibration figure (issue 36, item 1): each group's reliability curve, a model's mean score in each bin against
the share of its rows whose label is positive (``fairdash.evaluation.calibration.reliability``), with the diagonal
a calibrated model lies on. Marker sizes grow with the bin's rows, and each point's hover says them."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .plot_style import FULL_WIDTH, GRID, LAYOUT, OKABE_ITO, figure, legend_below, scatter


def _layout(title: str, names, message: str | None = None) -> dict:
    axes = dict(xaxis=dict(GRID, title=dict(text="mean score in the bin"), range=[-0.03, 1.03]),
                yaxis=dict(GRID, title=dict(text="share of the bin's rows with a positive label"), range=[-0.03, 1.03]))
    extra = {"annotations": [dict(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")]} \
        if message else legend_below(names, FULL_WIDTH)
    return dict(LAYOUT, title=dict(text=title), **axes, **extra)


def calibration_figure(curve: pd.DataFrame, *, group_names=None, title: str = "Calibration per group") -> go.Figure:
    """The reliability curves of ``curve`` (one row per group and bin), one per group, beside the diagonal."""
    if curve is None or curve.empty:
        return figure([], _layout(title, [], "No scores to show."))
    traces = [scatter(x=[0, 1], y=[0, 1], mode="lines", name="calibrated (score = outcome rate)",
                       line=dict(color="grey", dash="dot"))]
    biggest = float(curve["rows"].max())
    for k, (g, c) in enumerate(curve.groupby("group", sort=True)):
        name = str(group_names[int(g)]) if group_names is not None and int(g) < len(group_names) else f"s={int(g)}"
        traces.append(scatter(
            x=c["mean_score"].tolist(), y=c["positive_share"].tolist(), mode="lines+markers", name=name,
            line=dict(color=OKABE_ITO[k % len(OKABE_ITO)]),
            marker=dict(size=(6 + 14 * np.sqrt(c["rows"] / biggest)).tolist(), color=OKABE_ITO[k % len(OKABE_ITO)]),
            text=[f"{name}: scores {lo:.1f} to {hi:.1f}, {n} rows" for lo, hi, n in zip(c["lo"], c["hi"], c["rows"])],
            hovertemplate="%{text}<br>mean score %{x:.3f}, positive share %{y:.3f}<extra></extra>"))
    return figure(traces, _layout(title, [t.get("name") for t in traces]))
