"""The report's figures: Plotly figures from :mod:`fairdash.figures.plots`, sized for A4, as HTML fragments by
``plotly.io.to_html`` (plotly.js is inlined once for the whole page, so it opens offline)."""
from __future__ import annotations

import html
from typing import Any

import numpy as np
import pandas as pd

from ..evaluation.blindness import has_both_sides, land_words
from ..targeting.criteria import Criterion

# A4 portrait, 14 mm margins: 182 mm of width = 688 CSS pixels. Figures are drawn at this width.
FIG_WIDTH = 680
FIG_HEIGHT = 470
CONFIG = {"displaylogo": False, "responsive": False, "showSendToCloud": False,
          "toImageButtonOptions": {"format": "png"}}


def esc(value: Any) -> str:
    """Text for a Plotly label (which understands a little HTML): everything escaped, quotes included."""
    return "" if value is None else html.escape(str(value), quote=True)


def _escape_strings(df: pd.DataFrame) -> pd.DataFrame:
    """A copy with every text cell HTML-escaped (for Plotly, whose labels understand a little HTML)."""
    out = df.copy()
    for c in out.columns:
        if not (pd.api.types.is_numeric_dtype(out[c]) or pd.api.types.is_bool_dtype(out[c])):
            out[c] = out[c].map(lambda v: esc(v) if isinstance(v, str) else v)
    return out


def _sized(fig):
    # a taller figure (the target view: one row per group and model) keeps its height
    fig.update_layout(width=FIG_WIDTH, height=max(FIG_HEIGHT, fig.layout.height or 0), autosize=False,
                      legend=dict(orientation="h", yanchor="top", y=-0.16, xanchor="left", x=0.0, xref="paper",
                                  yref="paper"),  # (the dashboard's figures place it in the container's margin)
                      margin=dict(l=60, r=20, t=60, b=120))
    return fig


def make_figures(results: pd.DataFrame, summary: pd.DataFrame, criterion: Criterion, readout: dict | None,
                 group_names, eval_rates=None, population_rates=None, s_name: str = "s",
                 calibration=None) -> list[tuple[str, Any, str]]:
    """The report's figures as ``(title, figure, caption)``, each titled with what it was measured on:
    for demographic parity the population (the ordinary test set) first, then the paper's balanced test
    set, each with the group rates, accuracy against fairness and (for results that carry per-group
    targets) the target view; then the ceiling over the target rate. Every text in them is escaped."""
    from ..figures import plots  # lazy: heavy, defers plotly

    names = [esc(g) for g in group_names]
    target = None if not readout else readout.get("target_rate")
    views = [(True, population_rates), (False, eval_rates)] if criterion.balanced_eval else [(False, eval_rates)]
    safe, figs = _escape_strings(summary), []
    for population, rates_shares in views:
        figs += _measured_figures(plots, results, safe, criterion, group_names, target,
                                  population, rates_shares)
    if has_both_sides(results):  # a rule that decides with s beside blind ones: the price of deciding without s
        figs.append(_frontier_figure(plots, results, s_name))
        figs += _within_group_figures(results, group_names, s_name)
    if readout and "base_rates" in readout:
        figs.append(_ceiling_figure(plots, readout, target, names))
    if calibration is not None:  # (the model's words, its reliability curve): only where the report has the model
        from ..figures.plots_calibration import calibration_figure  # lazy: as plots above

        words, curve = calibration
        t = f"Calibration per group, on the population: {esc(words)}"
        figs.append((t, calibration_figure(curve, group_names=names, title=t),
                     "Each group's reliability curve: the model's mean score in each tenth of [0, 1] against the share "
                     "of those people with a positive label (bigger markers: more people). On the dotted diagonal a "
                     "score means the same chance in every group."))
    return [(t, _sized(f), c) for t, f, c in figs]


def _rate_caption(what: str, group_names) -> str:
    """The group-rate figure's caption: one line per model for several groups, one point for two."""
    if len(group_names) > 2:
        return (f"Each line is one model, mean ± std over repeats: the {what} of every group; the dashed line is "
                "the target. A flat line treats the groups alike.")
    return (f"Each point is one model (and target rate), mean ± std over repeats: the {what} of "
            f"{esc(group_names[0]) if group_names else 's=0'} (x) and "
            f"{esc(group_names[1]) if len(group_names) > 1 else 's=1'} (y). "
            "Points on the dashed diagonal treat both groups alike.")


def _measured_figures(plots, results: pd.DataFrame, safe: pd.DataFrame, criterion: Criterion, group_names, target,
                      population: bool, rates_shares) -> list[tuple[str, Any, str]]:
    """The figures of one set of rows (the population or the balanced test set): the group rates, accuracy against
    fairness and (for results that carry per-group targets) the target view."""
    metric, what = criterion.rate, criterion.rate_words
    fn = {"pr": plots.pr_scatter, "tpr": plots.tpr_scatter}[metric]
    data = plots.population_view(safe) if population else safe
    where = plots.measured_on(results, population)
    figs = [(f"Group {what}, on {where}", fn(data, group_names=[esc(g) for g in group_names], highlight_target=target,
                                             title=f"Group {what}, on {where}"), _rate_caption(what, group_names))]
    rates, shares = rates_shares if rates_shares is not None else (None, None)
    f2 = plots.accuracy_fairness(data, criterion, rates=rates, shares=shares, highlight_target=target,
                                 title=f"Accuracy against fairness, on {where}")
    figs.append((f"Accuracy against fairness, on {where}", f2,
                 "Up is more accurate, right is fairer (1 = equal rates). "
                 + ("The dashed curve is the highest accuracy any classifier can reach at each ratio on these "
                    "rows (Theorem 2)." if rates is not None else "")))
    if plots.target_view_note(results) is None:  # results from before per-group targets have no target view
        # the figure escapes the data's text itself: it is given the raw names
        t = f"Each group's {what[:-1]} against its target, on {where}"
        short = f"Each group's {what[:-1]} against its target<br><sup>on " \
                f"{plots.measured_on(results, population, short=True)}</sup>"
        figs.append((t, plots.target_view(results, criterion, population=population or not criterion.balanced_eval,
                                          group_names=group_names, highlight_target=target, title=short),
                     f"Each point is one model's {what[:-1]} for one group (mean over repeats); the dashed line "
                     "is that group's target, and the number beside the point is the gap, rate minus target "
                     "(negative: short of the target)."))
    return figs


def _frontier_figure(plots, results: pd.DataFrame, s_name: str) -> tuple[str, Any, str]:
    """The accuracy of the rules that land on the target, with and without s: the price of deciding without s."""
    t = f"Accuracy of the rules that land on the target, with and without {esc(s_name)}, on the population"
    return (t, plots.frontier_figure(_escape_strings(results), s_name=esc(s_name), title=t),
            f"Each line is one rule that lands on the target ({land_words('mean population rate')}), its "
            f"accuracy over PR_t; solid lines decide with {esc(s_name)}, dashed ones without. The black diamonds are "
            f"the best rule with {esc(s_name)} placed at the blind rule's own rates: the price of deciding without "
            f"{esc(s_name)} is measured against them. The paper's rule (FairLR at 1/2) is drawn beside them with its "
            "worst gap, whether it lands or not. Error bars are 95% intervals; the grey lines are plain LR (no "
            "target) and the majority class for everyone, for scale.")


def _within_group_figures(results: pd.DataFrame, group_names, s_name: str) -> list[tuple[str, Any, str]]:
    """Who pays for deciding without s: per target rate with a price, the within-group figure."""
    from ..evaluation.who_pays.table import who_pays_tables  # lazy: as plots (pandas work only a price needs)
    from ..figures.plots_who_pays import within_group_figure  # lazy: as plots

    out = []
    for t, table in who_pays_tables(results):
        title = (f"Who pays at PR_t {t:.2f}: within each group, deciding without {esc(s_name)} by "
                 f"{esc(table.get('feature', '-'))}")
        out.append((title, within_group_figure(table, s_name=s_name, group_names=group_names, title=title),
                    f"Each band holds people of one group whom the rule with {esc(s_name)} scores alike; solid: "
                    "people with a high value of the feature the rule without it leans on most, dashed: the others, "
                    f"dotted: the rule with {esc(s_name)}. Where a group's solid and dashed lines part, people of one "
                    "group with the same score are decided differently by how much they look like another group."))
    return out


def _ceiling_figure(plots, readout: dict, target, names: list) -> tuple[str, Any, str]:
    """Theorem 2's accuracy ceiling over the target rate, on the training split."""
    r = np.array([readout["base_rates"][k] for k in sorted(readout["base_rates"], key=int)], dtype=float)
    p = np.array([readout["group_share"][k] for k in sorted(readout["group_share"], key=int)], dtype=float)
    explicit = (readout.get("target") or {}).get("tpr_target") is not None
    return ("Accuracy ceiling over the target rate, on the training split",
            plots.ceiling_curve_figure(r, p, None if explicit else target, names),
            "Theorem 2: the highest accuracy a classifier can reach on the training data when every "
            "group's positive rate equals PR_t." + ("" if explicit else " The marked point is the chosen target."))


def figure_html(fig, div_id: str) -> str:
    """One figure as an HTML fragment (its data as JSON that cannot close the script element)."""
    import plotly.io as pio

    return pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=div_id, config=CONFIG,
                       default_width=f"{FIG_WIDTH}px", default_height=f"{FIG_HEIGHT}px")


def plotly_js() -> str:
    """plotly.js, to inline once in the page's head."""
    from plotly.offline import get_plotlyjs

    js = get_plotlyjs()
    # the bundle never contains a closing script tag; make sure of it
    return js.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")
