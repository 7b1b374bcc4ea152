"""Compare page: any set of this session's runs side by side, mean ± std over repeats. Positive rates per
group (diagonal = parity, crosses = targets), true positive rates per group, accuracy against fairness
with the accuracy ceiling, and the results table with a CSV download. Every figure says what it was
measured on: the population (the ordinary test set, as the model will meet it; the default) or the
paper's balanced test set, one click away. A slider over the swept targets rings the selected point."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from fairdash import plots, ui
from fairdash.experiments import evaluation_rates
from fairdash.metrics import one_class_notes, summarize
from fairdash.target_spec import criterion_info

ss = st.session_state
CHART = {"displayModeBar": False}
VIEWS = {"population": "The population (ordinary test set)", "balanced": "The paper's balanced test set"}

st.title("Compare")
ui.ensure_state()
history = ui.runs()
if not history:
    st.info("Nothing trained yet. Train FairLR (and any baselines) on the Train page; a sweep over targets "
            "makes the what-if slider here scrub through the results.")
    st.page_link("pages/train.py", label="Go to Train", icon=":material/model_training:")
    st.stop()

by_number = {r.number: r for r in history}
ss["compare_runs"] = [n for n in ss.get("compare_runs", []) if n in by_number] or [history[-1].number]
c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
chosen = c1.multiselect("Runs to compare", list(by_number), key="compare_runs",
                        format_func=lambda n: by_number[n].title)
if c2.button("Clear the run history", key="clear_runs"):
    ss["fd_runs"], ss["fd_run"] = [], None
    ss.pop("compare_runs", None)
    st.rerun()
if not chosen:
    st.info("Choose at least one run.")
    st.stop()
runs = [by_number[n] for n in chosen]
criteria = {r.spec.target.criterion for r in runs}
if len(criteria) > 1:
    st.warning("These runs judge different criteria (parity and opportunity); compare runs of one criterion.")
    st.stop()
criterion = criteria.pop()
first = runs[0]
names = ui.figure_text(first.task.group_names)  # user text: shown literally in the figures
frames = []
for r in runs:
    f = r.results.copy()
    if len(runs) > 1:
        f["label"] = f["label"].astype(str) + f" · run {r.number}"
    frames.append(f)
results = pd.concat(frames, ignore_index=True)

view = "population"
if criterion == "dp":
    ui.remember("compare_view", "population")
    view = st.radio("Measured on", list(VIEWS), key="compare_view", horizontal=True, format_func=VIEWS.get)
    st.caption("The population is what the model will meet, so its rates are the ones to hold against PR_t. The "
               "paper's balanced test set cuts both groups to the same base rate, which lowers the rates of the "
               "group with the higher base rate: there the points sit below the target by design.")
population = view == "population"
summary = summarize(results, by=("model", "label", "target_rate"))
shown = plots.population_view(summary) if population else summary
where = plots.measured_on(results, population)
on = "<br><sup>on " + plots.measured_on(results, population, short=True) + "</sup>"  # figure subtitles

swept = sorted(float(t) for t in results["target_rate"].dropna().unique())
highlight = None
if len(swept) > 1:
    if ss.get("compare_target") not in swept:
        ss["compare_target"] = min(swept, key=lambda t: abs(t - float(ss.get("fd_pr_t", swept[0]))))
    highlight = st.select_slider("Highlight target PR_t (what-if)", options=swept, key="compare_target",
                                 format_func=lambda t: f"{t:.3f}",
                                 help="Scrub through the trained targets; the ringed points in every figure "
                                      "are the models trained at this target.")
elif swept:
    highlight = swept[0]

key = criterion_info(criterion).ratio
if highlight is not None:
    sel = shown[np.isclose(shown["target_rate"].astype(float), highlight)]
    cols = st.columns(max(1, len(sel)) + 1)
    cols[0].metric("Selected target PR_t", f"{highlight:.3f}")
    for i, (_, r) in enumerate(sel.iterrows()):
        ratio = r[f"{key}_mean"]
        cols[i + 1].metric(f"{r['label']} accuracy", f"{r['accuracy_mean']:.3f}",
                           help=f"{key.replace('_', ' ')} " + ("n/a (0/0)" if not np.isfinite(ratio) else
                                                               f"{ratio:.3f} ± {r[f'{key}_std']:.3f}") + f", on {where}")

same_task = all(r.task is first.task for r in runs)
rates = shares = None
ref = {}
if same_task:
    rates, shares = evaluation_rates(first.task, criterion, population=population)
    if criterion == "dp" and not population:
        tr = ui.training_rates(first.task)
        ref = {"reference_rates": tr.base_rates, "reference_shares": tr.group_shares}
f3 = plots.accuracy_fairness(shown, criterion, rates=rates, shares=shares, highlight_target=highlight,
                             title="Accuracy against fairness" + on, **ref)
left, right = st.columns(2)
with left:
    st.plotly_chart(plots.pr_scatter(shown, highlight_target=highlight, group_names=names,
                                     title="Positive rates per group" + on), key="fig_pr", config=CHART)
with right:
    st.plotly_chart(plots.tpr_scatter(shown, highlight_target=highlight, group_names=names,
                                      title="True positive rates per group" + on), key="fig_tpr", config=CHART)
st.plotly_chart(f3, key="fig_accuracy_fairness", config=CHART)
if not same_task:
    st.caption("The runs were trained on different tasks, so no single ceiling is drawn.")
elif population or criterion == "eo":
    st.caption(f"Accuracy on {where}. The dashed curve is the highest accuracy a classifier can reach at each ratio "
               "on these rows (Theorem 2, seed-0 split).")
else:
    st.caption("Accuracy on the balanced test set, as in the paper's parity experiments. There both groups have the "
               "same base rate, so the dashed ceiling for those rows is 1 at every ratio: parity costs nothing there "
               "in principle. The dotted curve is the ceiling on data distributed like the training split (the "
               "Target page's numbers).")
for note in one_class_notes(results):
    st.warning(ui.literal(note), icon=":material/warning:")

st.subheader("Results table")
st.caption(f"Measured on {where}." + (" Target gap: mean over groups of |PR_s − PR_t| on the population."
                                      if population else ""))
st.dataframe(plots.results_table(summary, criterion, population=population), key="compare_table", hide_index=True,
             column_config=ui.RESULTS_COLUMNS)
c1, c2 = st.columns(2)
c1.download_button("Download results (CSV, one row per fit)", ui.csv_bytes(results), "fairdash_results.csv",
                   "text/csv", key="download_results_csv")
c2.download_button("Download summary (CSV, mean and std)", ui.csv_bytes(summary), "fairdash_summary.csv",
                   "text/csv", key="download_summary_csv")
