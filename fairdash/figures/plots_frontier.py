"""The price of deciding without s over a sweep of ``PR_t``, as a figure (``frontier_figure``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..evaluation.blindness import land_words, landing_means, majority_accuracy, price_table
from ..evaluation.metric_table import POP, column_of
from ..targeting.decision import PAPER_RULE
from .plot_parts import empty_figure, figure_layout
from .plot_style import FULL_WIDTH, label_styles, run_numbers
from .plot_style import figure as _figure
from .plot_style import marker as _marker
from .plot_style import scatter as _scatter

PAPER_RULE_MODEL = "fair-lr"  # the paper's method: FairLR decided at 1/2 (the threshold rule)
LABEL_GAP = 0.08  # a written label's least distance from the last one along PR_t (about 90 px at full width)


def gap_labels(targets: list[float], gaps: list[float]) -> tuple[list[str], list[str]]:
    """The worst gaps written beside the paper's rule's points, ``(texts, positions)``: a label only where it is at
    least :data:`LABEL_GAP` along ``PR_t`` from the last one written, above and below in turn, so that no two overprint
    however dense the sweep (every point's gap is in its hover text)."""
    texts, where, last, up = [], [], -np.inf, True
    for t, g in zip(targets, gaps):
        show = t - last >= LABEL_GAP and np.isfinite(g)
        texts.append(f"gap {g:.3f}" if show else "")
        where.append("top center" if up else "bottom center")
        if show:
            last, up = t, not up
    return texts, where


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
        return empty_figure(title, xtitle, ytitle)
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
        text, where = gap_labels(paper["target_rate"].astype(float).tolist(), paper["worst_gap"].astype(float).tolist())
        traces.append(_scatter(x=paper["target_rate"].tolist(), y=paper[column_of("accuracy", POP)].tolist(),
                               mode="lines+markers+text", name="FairLR at 1/2 (the paper's rule), worst gap beside",
                               text=text, textposition=where, hovertext=[f"worst gap {g:.3f}" for g in
                                                                          paper["worst_gap"].astype(float)],
                               line=dict(color="grey", dash="dot"), marker=dict(symbol="x", size=10, color="grey")))
    if not traces:
        return empty_figure(title, xtitle, ytitle,
                            f"No rule landed on the target ({land_words('mean population rate')}).")
    plain = means[(means["model"] == "lr") & (means["decision"] == PAPER_RULE)]  # for scale: no target at all
    for y, name, dash in ((float(plain[column_of("accuracy", POP)].mean()) if len(plain) else np.nan,
                           "plain LR (no target), for scale", "dot"),
                          (majority_accuracy(results), "the majority class for everyone, for scale", "dashdot")):
        if np.isfinite(y):
            traces.append(_scatter(x=[0, 1], y=[y, y], mode="lines", name=name, line=dict(color="grey", dash=dash)))
    return _figure(traces, figure_layout(title, xtitle, ytitle, xrange=(0, 1), traces=traces, width=FULL_WIDTH))
