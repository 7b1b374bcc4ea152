"""Compare page: the trained models side by side, mean ± std over repeats. Positive rates per group
(diagonal = parity, crosses = targets), true positive rates per group, accuracy against fairness with
the accuracy ceiling, and the results table with a CSV download. A slider over the swept targets
rings the selected point in every figure."""
from __future__ import annotations

import numpy as np
import streamlit as st

from fairdash import plots, ui
from fairdash.metrics import summarize

ss = st.session_state
CHART = {"displayModeBar": False}

st.title("Compare")
ui.ensure_state()
run = ss.get("fd_run")
if run is None:
    st.info("Nothing trained yet. Train FairLR (and any baselines) on the Train page; a sweep over targets "
            "makes the what-if slider here scrub through the results.")
    st.page_link("pages/train.py", label="Go to Train", icon=":material/model_training:")
    st.stop()

results = run["results"]
criterion = run["criterion"]
names = run.get("group_names") or ss["fd_task"].group_names
if run["task_key"] != ss.get("fd_task_key"):
    st.warning("These results were trained on a different task than the current one; the ceiling drawn "
               "below uses the current task's data.")

summary = summarize(results, by=("model", "label", "target_rate"))
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

if highlight is not None:
    sel = summary[np.isclose(summary["target_rate"].astype(float), highlight)]
    cols = st.columns(max(1, len(sel)) + 1)
    cols[0].metric("Selected target PR_t", f"{highlight:.3f}")
    for i, (_, r) in enumerate(sel.iterrows()):
        key = "pr_ratio" if criterion == "dp" else "tpr_ratio"
        cols[i + 1].metric(f"{r['label']} accuracy", f"{r['accuracy_mean']:.3f}",
                           help=f"{key.replace('_', ' ')} {r[f'{key}_mean']:.3f} ± {r[f'{key}_std']:.3f}")

try:
    rates, shares = ui.eval_rates(criterion)
except Exception:  # noqa: BLE001 - without the data the ceiling is simply not drawn
    rates = shares = None

ref = {}
if criterion == "dp" and run["task_key"] == ss.get("fd_task_key"):
    tr = ui.task_rates()
    ref = {"reference_rates": tr.base_rates, "reference_shares": tr.group_shares}
f3 = plots.accuracy_fairness(summary, criterion, rates=rates, shares=shares, highlight_target=highlight, **ref)

left, right = st.columns(2)
with left:
    st.plotly_chart(plots.pr_scatter(summary, highlight_target=highlight, group_names=names), key="fig_pr",
                    config=CHART)
with right:
    st.plotly_chart(plots.tpr_scatter(summary, highlight_target=highlight, group_names=names), key="fig_tpr",
                    config=CHART)
st.plotly_chart(f3, key="fig_accuracy_fairness", config=CHART)
st.caption(("Accuracy on the balanced test set, as in the paper's parity experiments. There both groups have the "
            "same base rate, so the dashed ceiling for those rows is 1 at every ratio: parity costs nothing there "
            "in principle. The dotted curve is the ceiling on data distributed like the training split (the "
            "Target page's numbers)." if criterion == "dp" else
            "Accuracy on the ordinary test set. The dashed curve is the highest accuracy a classifier can reach "
            "at each true-positive-rate ratio on these rows (seed-0 split)."))

st.subheader("Results table")
st.dataframe(plots.results_table(summary, criterion), key="compare_table", hide_index=True)
c1, c2 = st.columns(2)
c1.download_button("Download results (CSV, one row per fit)", ui.csv_bytes(results), "fairdash_results.csv",
                   "text/csv", key="download_results_csv")
c2.download_button("Download summary (CSV, mean and std)", ui.csv_bytes(summary), "fairdash_summary.csv",
                   "text/csv", key="download_summary_csv")
