"""The self-contained HTML report: one file that opens offline and prints to A4 without losing content.

:func:`build_report` takes a sweep's tidy results (one row per model, target and seed), a description
of the task (:func:`describe_task`), the target-rate readout (:func:`fairdash.rates.rates_readout`) and
the command that reproduces the numbers, and returns the HTML text. :func:`build_report_from_sweep`
does the same from the results CSV and the configuration JSON that ``python -m fairdash sweep`` writes.

Safety: every piece of text that can come from the user's data (column names, category values, group
names, file names, the command) goes through :func:`html.escape`; text inside the Plotly figures is
escaped too (Plotly shows entities as the characters) and the figure JSON escapes ``<``, ``>`` and
``&`` as ``\\u003c``-style sequences, so nothing can close the ``<script>`` element it lives in. The
page carries a Content-Security-Policy that forbids every network request; plotly.js is inlined once.
"""
from __future__ import annotations

import datetime as _dt
import html
import json
from typing import Any

import numpy as np
import pandas as pd

from .errors import FairDashError
from .metrics import format_mean_std, one_class_notes, summarize

# A4 portrait, 14 mm margins: 182 mm of width = 688 CSS pixels. Figures are drawn at this width.
FIG_WIDTH = 680
FIG_HEIGHT = 470

_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
        "font-src data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'")

_CSS = """
:root { --ink: #1d2330; --muted: #5b6475; --rule: #d9dde5; --accent: #b3261e; --bg-soft: #f5f6f8; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--ink); line-height: 1.45; margin: 0; background: #fff; }
main { max-width: 980px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.7rem; margin: 0 0 4px; }
h2 { font-size: 1.25rem; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 2px solid var(--rule); }
h3 { font-size: 1.02rem; margin: 18px 0 6px; }
p, li { max-width: 75ch; }
.sub { color: var(--muted); margin: 0 0 16px; }
.note { color: var(--muted); font-size: 0.9rem; }
.warn { border-left: 4px solid #e0a800; background: #fff8e1; padding: 6px 10px; }
.key { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; }
.key dt { color: var(--muted); }
.key dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 12px; font-size: 0.88rem; }
th, td { border-bottom: 1px solid var(--rule); padding: 4px 6px; text-align: left; vertical-align: top;
         overflow-wrap: anywhere; }
th { background: var(--bg-soft); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; overflow-wrap: normal; }
td:first-child { white-space: nowrap; overflow-wrap: normal; }  /* model names read on one line */
.table-wrap { overflow-x: auto; }
tr.fair td:first-child { font-weight: 600; }
.figure { width: 100%; max-width: 690px; margin: 10px auto 18px; break-inside: avoid; page-break-inside: avoid; }
.figure .plot { width: 680px; height: 470px; max-width: 100%; }
.figure p { font-size: 0.88rem; color: var(--muted); margin: 4px 0 0; }
pre { background: var(--bg-soft); padding: 8px 10px; white-space: pre-wrap; overflow-wrap: anywhere;
      font-size: 0.85rem; border-radius: 4px; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace; }
.summary { background: var(--bg-soft); border-radius: 6px; padding: 4px 14px; }
details > summary { cursor: pointer; color: var(--muted); }
footer { margin-top: 32px; color: var(--muted); font-size: 0.8rem; }
@page { size: A4 portrait; margin: 14mm; }
@media print {
  main { max-width: none; padding: 0; }
  body { font-size: 10pt; }
  h2 { break-after: avoid; page-break-after: avoid; }
  h3 { break-after: avoid; page-break-after: avoid; }
  table { font-size: 8pt; }
  th, td { padding: 3px 4px; }
  td.num, th.num { white-space: normal; }
  tr, .key, .summary { break-inside: avoid; page-break-inside: avoid; }
  thead { display: table-header-group; }
  details > *:not(summary) { display: block; }
  .modebar-container { display: none !important; }
  a { color: inherit; text-decoration: none; }
}
"""

_FAIR_MODELS_HINT = "uses the target rate"


# --------------------------------------------------------------------------------------------------
# Escaping
# --------------------------------------------------------------------------------------------------
def esc(value: Any) -> str:
    """Text for HTML: everything escaped, quotes included."""
    if value is None:
        return ""
    return html.escape(str(value), quote=True)


def script_json(value: Any) -> str:
    """JSON that is safe inside ``<script>``: ``<``, ``>``, ``&`` and the JavaScript line separators
    become ``\\uXXXX`` escapes, so no ``</script>`` or ``<!--`` can appear in it."""
    from plotly.utils import PlotlyJSONEncoder

    text = json.dumps(value, cls=PlotlyJSONEncoder, ensure_ascii=False, allow_nan=True)
    text = text.replace("NaN", "null") if "NaN" in text and _has_bare_nan(text) else text
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _has_bare_nan(text: str) -> bool:
    # PlotlyJSONEncoder already writes NaN as null; this guards against a stray float NaN anyway.
    import re

    return re.search(r"(?<![\"\w])(NaN|-?Infinity)(?![\"\w])", text) is not None


def _readable_time(iso: str) -> str:
    try:
        t = _dt.datetime.fromisoformat(str(iso))
    except ValueError:
        return str(iso)
    return t.strftime("%d %b %Y, %H:%M") + (" UTC" if t.utcoffset() == _dt.timedelta(0) else "")


def _fmt(v, digits: int = 3, pct: bool = False) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "n/a"
    if not np.isfinite(f):
        return "n/a"
    return f"{100 * f:.1f}%" if pct else f"{f:.{digits}f}"


def _escape_strings(df: pd.DataFrame) -> pd.DataFrame:
    """A copy with every text cell HTML-escaped (for Plotly, whose labels understand a little HTML)."""
    out = df.copy()
    for c in out.columns:
        if not (pd.api.types.is_numeric_dtype(out[c]) or pd.api.types.is_bool_dtype(out[c])):
            out[c] = out[c].map(lambda v: esc(v) if isinstance(v, str) else v)
    return out


# --------------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------------
def describe_task(task, *, dataset: str | None = None, description: str | None = None,
                  positive_meaning: str | None = None, source: str | None = None) -> dict:
    """The ``task_description`` that :func:`build_report` takes, from a :class:`fairdash.data.Task`."""
    from .experiments import data_fingerprint

    spec = task.spec
    gt = task.group_table()
    return {
        "dataset": dataset or source or "uploaded table",
        "description": description or "",
        "source": source or "",
        "n_rows": int(len(task.y)),
        "n_rows_read": int(task.n_rows_read or len(task.y)),
        "n_dropped_missing_sy": int(task.n_dropped_missing_sy),
        "n_dropped_missing_features": int(task.n_dropped_missing_features),
        "s_column": spec.s_column,
        "y_column": spec.y_column,
        "s1_values": list(spec.s1_values),
        "y1_values": list(spec.y1_values),
        "positive_meaning": positive_meaning or spec.positive_meaning or "",
        "group_names": list(task.group_names),
        "label_names": list(task.label_names),
        "groups": [{"group": str(r["group"]), "rows": int(r["rows"]), "positives": int(r["positives"]),
                    "base_rate": float(r["base rate"]), "share": float(r["share"])} for _, r in gt.iterrows()],
        "features": list(task.features),
        "numeric_features": list(task.numeric_features),
        "categorical_features": list(task.categorical_features),
        "strata_column": spec.strata_column,
        "spec": spec.to_dict(),
        "warnings": list(task.warnings),
        "data_fingerprint": data_fingerprint(task),
    }


def _versions() -> dict:
    from .export import _versions as v

    out = v()
    try:
        from importlib import metadata

        out["plotly"] = metadata.version("plotly")
    except Exception:  # pragma: no cover
        pass
    return out


# --------------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------------
def _plots():
    try:
        from . import plots
        return plots
    except ImportError:  # pragma: no cover - plots.py is part of the package
        return None


def _sized(fig):
    fig.update_layout(width=FIG_WIDTH, height=FIG_HEIGHT, autosize=False,
                      legend=dict(orientation="h", yanchor="top", y=-0.16, xanchor="left", x=0.0),
                      margin=dict(l=60, r=20, t=60, b=120))
    return fig


def make_figures(results: pd.DataFrame, summary: pd.DataFrame, criterion: str, readout: dict | None,
                 group_names, eval_rates=None, population_rates=None) -> list[tuple[str, Any, str]]:
    """The report's figures as ``(title, figure, caption)``, each titled with what it was measured on:
    for demographic parity the population (the ordinary test set) first, then the paper's balanced test
    set; then the ceiling over the target rate. Every text in them is escaped."""
    plots = _plots()
    names = [esc(g) for g in group_names]
    safe = _escape_strings(summary)
    metric = "pr" if criterion == "dp" else "tpr"
    what = "positive rates" if criterion == "dp" else "true positive rates"
    target = None if not readout else readout.get("target_rate")
    fn = plots.pr_scatter if metric == "pr" else plots.tpr_scatter
    if len(group_names) > 2:
        caption = (f"Each line is one model, mean ± std over repeats: the {what} of every group; the dashed line is "
                   "the target. A flat line treats the groups alike.")
    else:
        caption = (f"Each point is one model (and target rate), mean ± std over repeats: the {what} of "
                   f"{esc(group_names[0]) if group_names else 's=0'} (x) and "
                   f"{esc(group_names[1]) if len(group_names) > 1 else 's=1'} (y). "
                   "Points on the dashed diagonal treat both groups alike.")
    views = [(True, population_rates), (False, eval_rates)] if criterion == "dp" else [(False, eval_rates)]
    figs = []
    for population, rates_shares in views:
        data = plots.population_view(safe) if population else safe
        where = plots.measured_on(results, population)
        figs.append((f"Group {what}, on {where}", fn(data, group_names=names, highlight_target=target,
                                                     title=f"Group {what}, on {where}"), caption))
        rates, shares = rates_shares if rates_shares is not None else (None, None)
        f2 = plots.accuracy_fairness(data, criterion, rates=rates, shares=shares, highlight_target=target,
                                     title=f"Accuracy against fairness, on {where}")
        figs.append((f"Accuracy against fairness, on {where}", f2,
                     "Up is more accurate, right is fairer (1 = equal rates). "
                     + ("The dashed curve is the highest accuracy any classifier can reach at each ratio on these "
                        "rows (Theorem 2)." if rates is not None else "")))
    if readout and "base_rates" in readout:
        r = np.array([readout["base_rates"][k] for k in sorted(readout["base_rates"], key=int)], dtype=float)
        p = np.array([readout["group_share"][k] for k in sorted(readout["group_share"], key=int)], dtype=float)
        explicit = (readout.get("target") or {}).get("tpr_target") is not None
        figs.append(("Accuracy ceiling over the target rate, on the training split",
                     plots.ceiling_curve_figure(r, p, None if explicit else target, names),
                     "Theorem 2: the highest accuracy a classifier can reach on the training data when every "
                     "group's positive rate equals PR_t." + ("" if explicit else " The marked point is the chosen "
                                                                                  "target.")))
    return [(t, _sized(f), c) for t, f, c in figs]


def _figure_html(fig, div_id: str) -> str:
    spec = fig.to_plotly_json()
    config = {"displaylogo": False, "responsive": False, "showLink": False, "showSendToCloud": False,
              "showEditInChartStudio": False, "toImageButtonOptions": {"format": "png"}}
    return (f'<div class="plot" id="{div_id}"></div>\n<script>Plotly.newPlot("{div_id}", {script_json(spec["data"])}, '
            f'{script_json(spec["layout"])}, {script_json(config)});</script>')


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    js = get_plotlyjs()
    # the bundle never contains a closing script tag; make sure of it
    return js.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")


# --------------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------------
def _table(headers, rows, num_cols=(), row_classes=None) -> str:
    h = "".join(f'<th class="num">{esc(x)}</th>' if i in num_cols else f"<th>{esc(x)}</th>" for i, x in enumerate(headers))
    body = []
    for k, r in enumerate(rows):
        cls = f' class="{row_classes[k]}"' if row_classes and row_classes[k] else ""
        cells = "".join(f'<td class="num">{esc(x)}</td>' if i in num_cols else f"<td>{esc(x)}</td>" for i, x in enumerate(r))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f'<div class="table-wrap"><table><thead><tr>{h}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _dl(items) -> str:
    return '<dl class="key">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items if v not in (None, "")) + "</dl>"


def _uses_target(model: str) -> bool:
    from .models.registry import MODELS

    info = MODELS.get(str(model))
    return bool(info and info.uses_target_rate)


def _group_name(desc, readout, k) -> str:
    names = desc.get("group_names") or []
    if readout and "groups" in readout and str(k) in readout["groups"]:
        return str(readout["groups"][str(k)])
    return str(names[int(k)]) if int(k) < len(names) else f"group {k}"


def _section_data(desc: dict, readout: dict | None) -> str:
    parts = ["<h2>1. The data and its groups</h2>"]
    if desc.get("description"):
        parts.append(f"<p>{esc(desc['description'])}</p>")
    y1 = ", ".join(map(str, desc.get("y1_values") or [])) or (desc.get("label_names") or ["", ""])[-1]
    dropped = int(desc.get("n_dropped_missing_sy", 0) or 0) + int(desc.get("n_dropped_missing_features", 0) or 0)
    feats = desc.get("features") or []
    parts.append(_dl([
        ("Data set", desc.get("dataset")),
        ("File", desc.get("source")),
        ("Rows used", f"{desc['n_rows']:,}" + (f" ({dropped:,} dropped for missing values)" if dropped else "")
         if "n_rows" in desc else None),
        ("Sensitive attribute (s)", desc.get("s_column")),
        ("Label (y)", desc.get("y_column")),
        ("Positive label (y = 1)", y1),
        ("What positive means", desc.get("positive_meaning")),
        ("Features", f"{len(feats)}: " + ", ".join(map(str, feats)) if feats else None),
        ("Legitimate factor (conditional parity)", desc.get("strata_column")),
    ]))
    groups = desc.get("groups")
    if groups:
        rows = [[g["group"], f"{g['rows']:,}", f"{g['positives']:,}", _fmt(g["base_rate"]), _fmt(g["share"])] for g in groups]
        parts.append("<h3>Groups (whole table)</h3>")
        parts.append(_table(["group", "rows", "positives", "base rate P(y=1|s)", "share P(s)"], rows, num_cols=(1, 2, 3, 4)))
        parts.append('<p class="note">Group s=0 is the group marked as protected. The readouts below use the '
                     "training split, so their rates differ slightly from these.</p>")
    for w in desc.get("warnings") or []:
        parts.append(f'<p class="warn">{esc(w)}</p>')
    return "\n".join(parts)


def _section_choices(desc: dict, readout: dict | None, criterion: str, results: pd.DataFrame, seeds) -> str:
    from .models.registry import MODELS

    crit = ("demographic parity (equal positive rates), evaluated on the balanced test set" if criterion == "dp"
            else "equality of opportunity (equal true positive rates), evaluated on the ordinary test set")
    models = list(dict.fromkeys(results["model"].astype(str))) if "model" in results.columns else []
    labels = [MODELS[m].label if m in MODELS else m for m in models]
    targets = sorted({float(t) for t in results.get("target_rate", pd.Series(dtype=float)).dropna()})
    items = [("Fairness criterion", crit),
             ("Target", readout.get("target_text") if readout else None),
             ("Models", ", ".join(labels)),
             ("Target rates PR_t tried", ", ".join(f"{t:.3f}" for t in targets) or "none (no fair model)"),
             ("Repeats (seeds)", f"{len(seeds)}: {', '.join(map(str, seeds))}" if seeds else None)]
    if readout:
        items.append(("Keep-rate delta", _fmt(readout.get("delta", 1.0))))
        if "n_train" in readout:
            items.append(("Split (seed %s)" % readout.get("seed", 0),
                          f"{readout['n_train']:,} training rows, {readout['n_test']:,} test rows "
                          f"({readout.get('n_test_balanced', 0):,} in the balanced test set)"))
    return "<h2>2. Choices</h2>\n" + _dl(items)


def _section_readout(desc: dict, readout: dict | None, results: pd.DataFrame) -> str:
    from .rates import describe_t

    parts = ["<h2>3. What the target rate means</h2>"]
    if not readout:
        parts.append('<p class="note">No target-rate readout was supplied.</p>')
        return "\n".join(parts)
    t = readout.get("target_rate")
    pre = readout.get("presets") or {}
    explicit = (readout.get("target") or {}).get("tpr_target") is not None
    what = (f"<strong>{esc(readout['target_text'])}</strong>" if readout.get("target_text")
            else f"target positive rate <strong>PR_t = {_fmt(t, 4)}</strong> for every group")
    exact = "" if explicit or t is None else f"PR_t = {_fmt(t, 4)}; "
    parts.append(f"<p>Target: {what} ({exact}presets on the training split: min {_fmt(pre.get('min'), 4)}, avg "
                 f"{_fmt(pre.get('avg'), 4)}, max {_fmt(pre.get('max'), 4)}). The fair models are trained to predict a "
                 "target label ȳ with the target's rates in each group; the table says how ȳ relates to the observed "
                 "label y.</p>")
    keys = sorted(readout.get("base_rates", {}), key=int)
    rows = []
    for k in keys:
        tr = readout["transition"][k]
        ts = readout["t"].get(k)
        rows.append([f"s={k}: {_group_name(desc, readout, k)}", _fmt(readout["group_share"][k]), _fmt(readout["base_rates"][k]),
                     _fmt(ts) if ts is not None else "∞", _fmt(tr["p_ybar1_given_y1"]), _fmt(tr["p_ybar1_given_y0"]),
                     _fmt(tr["p_y1_given_ybar0"]), _fmt(tr["p_y1_given_ybar1"])])
    parts.append(_table(["group", "share", "base rate", "t_s", "P(ȳ=1|y=1)", "P(ȳ=1|y=0)", "P(y=1|ȳ=0)", "P(y=1|ȳ=1)"],
                        rows, num_cols=(1, 2, 3, 4, 5, 6, 7)))
    flips = readout.get("flips") or {}
    parts.append("<ul>" + "".join(f"<li>{esc(describe_t(readout['t'].get(k), f's={k} ({_group_name(desc, readout, k)})', flips.get(k)))}</li>"
                                  for k in keys) + "</ul>")
    bound = readout.get("accuracy_bound")
    rates_text = ("the positive rates these TPR/TNR targets imply in each group" if explicit
                  else f"positive rate PR_t = {_fmt(t, 3)} in every group")
    parts.append(f"<p><strong>Theorem 2 ceiling:</strong> no classifier with the {rates_text} can be more than "
                 f"<strong>{_fmt(bound, 4)}</strong> accurate on the training split.</p>")
    if readout.get("strata"):
        parts.append(f"<p><strong>Conditional parity:</strong> the target holds within every stratum; weighted by the "
                     f"strata's shares of the training rows the ceiling is <strong>"
                     f"{_fmt(readout.get('strata_accuracy_bound'), 4)}</strong>.</p>")
    parts.append(_ceiling_table(results, None if explicit else t))
    return "\n".join(parts)


def _ceiling_table(results: pd.DataFrame, t) -> str:
    need = {"model", "target_rate", "accuracy", "accuracy_bound"}
    if t is None or not need <= set(results.columns):
        return ""
    tr = results["target_rate"].astype(float)
    near = results[np.isfinite(tr) & np.isclose(tr, float(t), atol=5e-4)]
    if near.empty:
        return ('<p class="note">No model in these results was trained at exactly this target, so no measured '
                "accuracy is shown beside the ceiling.</p>")
    metrics = [m for m in ("accuracy", "accuracy_bound", "ceiling_at_target") if m in near.columns]
    by = [c for c in ("model", "label") if c in near.columns]
    s = summarize(near, by=by, metrics=metrics)
    rows = []
    for _, r in s.iterrows():
        ok = r["accuracy_mean"] <= r["accuracy_bound_mean"] + 1e-9
        rows.append([r.get("label", r["model"]), _cell(r, "accuracy"), _cell(r, "accuracy_bound"),
                     _cell(r, "ceiling_at_target"), "yes" if ok else "no (check the data)"])
    return ("<h3>Measured accuracy beside the ceiling (evaluation data)</h3>"
            + _table(["model", "measured accuracy", "ceiling at its own group rates", "ceiling at PR_t", "within ceiling"],
                     rows, num_cols=(1, 2, 3))
            + '<p class="note">Both ceilings are computed on the same evaluation rows as the accuracy: the first at '
              "the positive rates the model actually produced, the second at the target.</p>")


RESULT_METRICS = ("accuracy", "pr_0", "pr_1", "pr_ratio", "tpr_0", "tpr_1", "tpr_ratio")


def _cell(r, k) -> str:
    """``mean ± std`` over repeats; the mean alone where there was one run (no spread to show)."""
    mean, std = r.get(f"{k}_mean", np.nan), r.get(f"{k}_std", np.nan)
    if int(r.get("repeats", 1)) <= 1:
        return _fmt(mean)
    return format_mean_std(mean, std).replace("± ", "±\u00a0")


def _results_table(summary: pd.DataFrame, criterion: str, prefix: str) -> str:
    groups = range(max(2, _plots().n_groups_of(summary)))
    pr = [(f"pr_{j}", f"PR s={j}") for j in groups] + [("pr_ratio", "PR ratio")]
    tpr = [(f"tpr_{j}", f"TPR s={j}") for j in groups] + [("tpr_ratio", "TPR ratio")]
    cols = [("accuracy", "accuracy")] + (pr + tpr if criterion == "dp" else tpr + pr)
    if prefix:
        cols.append(("target_gap", "target gap"))
    cols = [(k if k == "target_gap" else prefix + k, h) for k, h in cols]
    cols = [(k, h) for k, h in cols if f"{k}_mean" in summary.columns]
    rows, classes = [], []
    for _, r in summary.iterrows():
        t = r.get("target_rate", np.nan)
        rows.append([r.get("label", r["model"]), _fmt(t) if pd.notna(t) else "–"] + [_cell(r, k) for k, _ in cols]
                    + [int(r.get("repeats", 1))])
        classes.append("fair" if _uses_target(r["model"]) else "")
    return _table(["model", "PR_t"] + [h for _, h in cols] + ["runs"], rows,
                  num_cols=tuple(range(1, len(cols) + 3)), row_classes=classes)


def _one_class_notes(results: pd.DataFrame) -> str:
    return "".join(f'<p class="warn">{esc(n)}</p>' for n in one_class_notes(results))


def _section_results(summary: pd.DataFrame, criterion: str, group_names, results: pd.DataFrame) -> str:
    groups_text = ", ".join(f"s={j} is {esc(g)}" for j, g in enumerate(map(str, group_names))) or "s=0 and s=1"
    eval_set = "balanced test set" if criterion == "dp" else "test set"
    if "eval_set" in results.columns and results["eval_set"].notna().any():
        e = str(results["eval_set"].dropna().iloc[0])
        eval_set = e if e.endswith("set") else e + " set"
    parts = ["<h2>4. Results against the baselines</h2>",
             "<p>Mean ± standard deviation over repeats. PR = positive rate P(ŷ=1|s), TPR = true positive rate; ratios "
             f"are the smallest group value over the largest (1 is fair). {groups_text}. Models in "
             "bold are trained towards the target.</p>"]
    if any(c.startswith("pop_") for c in summary.columns) and criterion == "dp":
        parts += ["<h3>On the population the model will meet (the ordinary test set)</h3>",
                  "<p>The held-out rows as they come, distributed like the data the model will score. Target gap = mean "
                  "over groups of |PR_s − PR_t|.</p>", _results_table(summary, criterion, "pop_")]
        parts += [f"<h3>On the paper's {esc(eval_set)}</h3>",
                  "<p>The paper's protocol: both groups are cut to the same base rate, so the rates here are lower than "
                  "in the population for the group with the higher base rate, and they sit below PR_t by design.</p>"]
    else:
        parts.append(f"<p>Measured on the {esc(eval_set)}.</p>")
    parts.append(_results_table(summary, criterion, ""))
    parts.append(_one_class_notes(results))
    return "\n".join(parts)


def plain_summary(summary: pd.DataFrame, criterion: str, readout: dict | None, desc: dict) -> list[str]:
    """Plain-language sentences about the trade-off, from the summary table (no HTML)."""
    key = "pr_ratio" if criterion == "dp" else "tpr_ratio"
    what = ("positive-rate ratio (how evenly the two groups receive positive predictions; 1 is equal)"
            if criterion == "dp" else
            "true-positive-rate ratio (how evenly the groups' actual positives are recognised; 1 is equal)")
    out = []
    if summary.empty or f"{key}_mean" not in summary.columns:
        return ["There are no results to summarise."]
    s = summary.copy()
    s["_fair"] = [_uses_target(m) for m in s["model"]]
    labels = s.get("label", s["model"]).astype(str)
    s["_label"] = labels
    plain = s[~s["_fair"]]
    ref = None
    if "lr" in set(plain["model"]):
        ref = plain[plain["model"] == "lr"].iloc[0]
    elif not plain.empty:
        ref = plain.sort_values("accuracy_mean", ascending=False).iloc[0]
    if ref is not None:
        out.append(f"The reference model {ref['_label']} is right on {_fmt(ref['accuracy_mean'], pct=True)} of the "
                   f"evaluation rows; its {what} is {_fmt(ref[f'{key}_mean'], 2)}.")
    t = readout.get("target_rate") if readout else None
    for label, g in s[s["_fair"]].groupby("_label", sort=False):
        g = g[g[f"{key}_mean"].notna()]
        if g.empty:
            continue
        best = g.sort_values(f"{key}_mean", ascending=False).iloc[0]
        sent = (f"{label} at PR_t = {_fmt(best['target_rate'])} reaches a ratio of {_fmt(best[f'{key}_mean'], 2)} "
                f"with accuracy {_fmt(best['accuracy_mean'], pct=True)}")
        if ref is not None and np.isfinite(ref["accuracy_mean"]):
            diff = 100 * (best["accuracy_mean"] - ref["accuracy_mean"])
            sent += (f", {abs(diff):.1f} percentage points {'less' if diff < 0 else 'more'} than {ref['_label']}"
                     if abs(diff) >= 0.05 else f", the same accuracy as {ref['_label']}")
        out.append(sent + ".")
        if len(g) > 1:
            out.append(f"Across the {len(g)} target rates tried, {label}'s ratio ranges from "
                       f"{_fmt(g[f'{key}_mean'].min(), 2)} to {_fmt(g[f'{key}_mean'].max(), 2)} and its accuracy from "
                       f"{_fmt(g['accuracy_mean'].min(), pct=True)} to {_fmt(g['accuracy_mean'].max(), pct=True)}: "
                       "the target rate is the dial between the two.")
    fairest = s.sort_values(f"{key}_mean", ascending=False).iloc[0]
    most_acc = s.sort_values("accuracy_mean", ascending=False).iloc[0]
    out.append(f"Most accurate: {most_acc['_label']} ({_fmt(most_acc['accuracy_mean'], pct=True)}). Fairest by this "
               f"ratio: {fairest['_label']} ({_fmt(fairest[f'{key}_mean'], 2)}).")
    if t is not None and readout.get("accuracy_bound") is not None:
        out.append(f"Theorem 2 says that a classifier giving both groups the positive rate {_fmt(t)} cannot be more "
                   f"than {_fmt(readout['accuracy_bound'], pct=True)} accurate on the training data; part of any "
                   "accuracy lost is the price of the target itself, not a weakness of the model.")
    reps = int(s["repeats"].max()) if "repeats" in s.columns else 1
    if reps > 1:
        out.append(f"Each number is an average over {reps} random splits; differences smaller than the ± spreads "
                   "are within the noise.")
    else:
        out.append("These numbers come from a single split; repeat with more seeds before drawing firm conclusions.")
    meaning = desc.get("positive_meaning")
    if meaning:
        out.append(f"Remember what a positive prediction means here: {meaning}.")
    return out


def _section_repro(command, seeds, fingerprint, versions, results, config, created) -> str:
    devices = sorted(set(map(str, results["device"].dropna()))) if "device" in results.columns else []
    parts = ["<h2>7. Reproducibility</h2>",
             _dl([("Report created", created), ("Seeds", ", ".join(map(str, seeds)) if seeds else None),
                  ("Data fingerprint", fingerprint),
                  ("Trained on", ", ".join(devices) if devices else None),
                  ("Package versions", ", ".join(f"{k} {v}" for k, v in versions.items()))])]
    if command:
        parts.append("<h3>Command that reproduces these numbers</h3>")
        parts.append(f"<pre><code>{esc(command)}</code></pre>")
    if config:
        parts.append("<h3>Configuration (JSON)</h3>"
                     f"<pre><code>{esc(json.dumps(config, indent=2, default=str))}</code></pre>")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------------
def build_report(results: pd.DataFrame, *, task_description: dict, readout: dict | None = None,
                 command: str | None = None, criterion: str | None = None, seeds=None,
                 data_fingerprint: str | None = None, versions: dict | None = None, config: dict | None = None,
                 eval_rates=None, title: str | None = None, created: str | None = None,
                 population_rates=None) -> str:
    """One self-contained HTML page (plotly.js inlined; no network) for a sweep's ``results``.

    ``task_description``: :func:`describe_task`'s dict (any subset of its keys). ``readout``:
    :func:`fairdash.rates.rates_readout` at the chosen target. ``command``: the ``python -m fairdash``
    command line that reproduces ``results``. ``criterion`` defaults to the results' own; ``seeds`` to
    those in the results; ``eval_rates=(base_rates, group_shares)`` of the evaluation rows draws the
    ceiling in the accuracy/fairness figure. Every user-supplied text is escaped.
    """
    if not isinstance(results, pd.DataFrame) or results.empty:
        raise FairDashError("There are no results to report; run a sweep first.")
    if "model" not in results.columns or "accuracy" not in results.columns:
        raise FairDashError("These results lack the 'model' and 'accuracy' columns a report needs.")
    desc = dict(task_description or {})
    results = results.copy()
    if "label" not in results.columns:
        from .models.registry import MODELS

        results["label"] = [MODELS[m].label if m in MODELS else m for m in results["model"].astype(str)]
    if "target_rate" not in results.columns:
        results["target_rate"] = np.nan
    results["target_rate"] = pd.to_numeric(results["target_rate"], errors="coerce")
    criterion = criterion or (str(results["criterion"].dropna().iloc[0]) if "criterion" in results.columns
                              and results["criterion"].notna().any() else "dp")
    if criterion not in ("dp", "eo"):
        raise FairDashError("The criterion must be 'dp' or 'eo'.")
    seeds = list(seeds) if seeds is not None else (sorted(map(int, results["seed"].dropna().unique()))
                                                    if "seed" in results.columns else [])
    group_names = desc.get("group_names") or ([readout["groups"][k] for k in sorted(readout["groups"], key=int)]
                                              if readout and "groups" in readout else ["s=0", "s=1"])
    summary = summarize(results, by=("model", "label", "target_rate"))
    versions = versions or _versions()
    created = created or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    fingerprint = data_fingerprint or desc.get("data_fingerprint")
    title = title or f"FairDash report: {desc.get('dataset') or 'results'}"

    figs = make_figures(results, summary, criterion, readout, group_names, eval_rates, population_rates)
    fig_html = []
    for i, (ftitle, fig, caption) in enumerate(figs):
        fig_html.append(f'<div class="figure"><h3>Figure {i + 1}. {esc(ftitle)}</h3>{_figure_html(fig, f"fig{i + 1}")}'
                        f"<p>{caption}</p></div>")
    sentences = plain_summary(summary, criterion, readout, desc)
    crit_word = "demographic parity" if criterion == "dp" else "equality of opportunity"
    body = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="sub">Tuning fairness by balancing target labels · {esc(crit_word)} · created '
        f'{esc(_readable_time(created))}</p>',
        _section_data(desc, readout),
        _section_choices(desc, readout, criterion, results, seeds),
        _section_readout(desc, readout, results),
        _section_results(summary, criterion, group_names, results),
        "<h2>5. Figures</h2>" + "\n".join(fig_html),
        '<h2>6. The trade-off in plain words</h2><div class="summary"><ul>'
        + "".join(f"<li>{esc(s)}</li>" for s in sentences) + "</ul></div>",
        _section_repro(command, seeds, fingerprint, versions, results, config, created),
        '<footer>Made with FairDash, an implementation of "Tuning Fairness by Balancing Target Labels". '
        "This page is self-contained: it makes no network requests and prints to A4.</footer>",
    ]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{esc(title)}</title>\n<style>{_CSS}</style>\n"
        f"<script>{_plotly_js()}</script>\n</head>\n<body>\n<main>\n"
        + "\n".join(body) + "\n</main>\n</body>\n</html>\n"
    )


# --------------------------------------------------------------------------------------------------
# From a sweep's files
# --------------------------------------------------------------------------------------------------
def eval_rates_for(task, criterion: str, seed: int = 0):
    """Base rates and group shares of the evaluation rows (see :func:`fairdash.experiments.evaluation_rates`)."""
    from .experiments import evaluation_rates

    return evaluation_rates(task, criterion, seed)


def build_report_from_sweep(results: pd.DataFrame, config) -> str:
    """The report for a results CSV and its configuration JSON (:class:`fairdash.run_spec.RunSpec`'s
    format, written alike by ``python -m fairdash sweep`` and the dashboard's Export page).

    The configuration names the data (a sample, a file or a ``paper`` set-up), the task and the target;
    the data is read again for the group table, the readout and the fingerprint. If it cannot be read
    (moved, deleted) the report is still built from the results alone, with a note saying so. A
    malformed configuration is a :class:`FairDashError`."""
    from . import data
    from .experiments import evaluation_rates
    from .rates import rates_readout
    from .run_spec import RunSpec

    run = RunSpec.from_dict(config)
    config = run.to_dict()
    criterion = run.target.criterion
    seeds = list(run.seeds)
    results = results.copy()
    if "target_rate" in results.columns:
        results["target_rate"] = pd.to_numeric(results["target_rate"], errors="coerce")
    try:
        task = run.load_task()
    except (FairDashError, OSError) as e:
        desc = {"dataset": str(run.data or run.paper or "unknown"), "group_names": list(run.group_names),
                "warnings": [f"The data could not be read again ({e}); the readouts below are missing."]}
        return build_report(results, task_description=desc, readout=None, command=run.command,
                            criterion=criterion, seeds=seeds, config=config)
    source = data.paper_setup(run.paper).sample if run.paper else str(run.data)
    sample = data.SAMPLES.get(source)
    desc = describe_task(task, dataset=sample.title if sample else source,
                         description=sample.description if sample else "",
                         positive_meaning=run.task.positive_meaning or (sample.positive_meaning if sample else None),
                         source=source)
    seed0 = seeds[0] if seeds else 0
    spec = run.target
    targets_tried = sorted({float(t) for t in results.get("target_rate", pd.Series(dtype=float)).dropna()})
    if targets_tried and not spec.explicit and not (spec.conditional and spec.target_rate is None):
        from . import rates as _rates

        avg = spec.rate_for(_rates.training_rates(task, seed=seed0).base_rates)
        spec = spec.with_rate(min(targets_tried, key=lambda t: abs(t - avg)))
    readout = rates_readout(task, spec, seed=seed0)
    return build_report(results, task_description=desc, readout=readout, command=run.command, criterion=criterion,
                        seeds=seeds, config=config, eval_rates=eval_rates_for(task, criterion, seed0),
                        population_rates=evaluation_rates(task, criterion, seed0, population=True))
