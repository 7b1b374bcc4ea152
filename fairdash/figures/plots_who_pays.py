"""The within-group figure of who pays for deciding without s (issue 49, item 3): among people of one group whom
the rule with s scores alike (bands of its score), how often the rule without s gives a positive decision to those
with a high value of the feature it leans on most and to the others
(``fairdash.evaluation.who_pays.measure.within_group``). Two lines a group (solid: high value; dashed: low), the rule
with s's own acceptance in the band dotted beside; a gap between a group's two lines is the within-group disparity of
Lipton, Chouldechova and McAuley (2018)."""
from __future__ import annotations

import html

import plotly.graph_objects as go

from .plot_style import FULL_WIDTH, GRID, LAYOUT, OKABE_ITO, figure, legend_below, scatter


def _layout(title: str, names, s_name: str, positive: str, message: str | None = None) -> dict:
    axes = dict(xaxis=dict(GRID, title=dict(text=f"score of the rule with {s_name} (band mean)"), range=[-0.03, 1.03]),
                yaxis=dict(GRID, title=dict(text=f"share {positive} without {s_name}"),
                           range=[-0.03, 1.03]))
    extra = {"annotations": [dict(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")]} \
        if message else legend_below(names, FULL_WIDTH)
    return dict(LAYOUT, title=dict(text=title), **axes, **extra)


def within_group_figure(table: dict, *, s_name: str = "s", group_names=None, title: str | None = None,
                        positive: str = "given a positive decision") -> go.Figure:
    """The figure of one target rate's who-pays ``table`` (:func:`fairdash.evaluation.who_pays.table.who_pays_table`):
    per group, the blind rule's acceptance of the people with a high and a low value of the feature leaned on most,
    band by band of the with-s score; ``positive``: the positive decision in the task's words ("denied",
    :func:`fairdash.data.meaning.outcome_words`). Every name from the table (``s_name``, the groups, the feature)
    is escaped: Plotly reads markup in titles and legends."""
    feature = html.escape(str(table["feature"])) if table.get("feature") else None
    s_name, positive = html.escape(str(s_name)), html.escape(str(positive))
    title = title or (f"Within each group, at the same score with {s_name}: deciding without {s_name} by {feature}"
                      if feature else f"Within-group differences of deciding without {s_name}")
    curve = table.get("curve") or []
    if not feature or not curve:
        return figure([], _layout(title, [], s_name, positive, "No band where the two rules disagree."))
    high = f"with {feature}" if " = " in feature else f"{feature} above the group's median"
    low = f"without {feature}" if " = " in feature else "at or below it"
    traces = []
    for g, bands in enumerate(curve):
        name = html.escape(str(group_names[g])) if group_names is not None and g < len(group_names) else f"s={g}"
        colour = OKABE_ITO[g % len(OKABE_ITO)]
        bands = [b for b in bands if len(b) == 6 and b[0] is not None]
        x = [b[0] for b in bands]
        for k, (which, dash, n_at, rate_at) in enumerate(((high, "solid", 1, 2), (low, "dash", 3, 4))):
            traces.append(scatter(
                x=x, y=[b[rate_at] for b in bands], mode="lines+markers", name=f"{name}: {which}",
                line=dict(color=colour, dash=dash), marker=dict(color=colour, symbol="circle" if k == 0 else "x"),
                text=[f"{name}, {which}: {b[n_at] or 0:.0f} people in the band" for b in bands],
                hovertemplate=f"%{{text}}<br>score with s %{{x:.3f}}, {positive} without s %{{y:.3f}}<extra></extra>"))
        traces.append(scatter(x=x, y=[b[5] for b in bands], mode="lines", name=f"{name}: the rule with {s_name}",
                              line=dict(color=colour, dash="dot", width=1)))
    return figure(traces, _layout(title, [t.get("name") for t in traces], s_name, positive))
