"""Export page: download a trained model (``fairdash.export``), the HTML report (``fairdash.report``),
the results and the configuration. Both modules are looked up when the page runs, so the page offers
what exists."""
from __future__ import annotations

import importlib
import json

import numpy as np
import streamlit as st

from fairdash import ui

ss = st.session_state

st.title("Export")
ui.ensure_state()
run = ss.get("fd_run")
if run is None:
    st.info("Nothing trained yet: train a model on the Train page, then download it here.")
    st.page_link("pages/train.py", label="Go to Train", icon=":material/model_training:")
    st.stop()


def _module(name: str):
    try:
        return importlib.import_module(f"fairdash.{name}")
    except ImportError:
        return None


export = _module("export")
report = _module("report")
results = run["results"]
task = ss["fd_task"]
same_task = run["task_key"] == ss.get("fd_task_key")

# --------------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------------
st.subheader("Trained model")
models = run.get("models") or {}
keys = list(models)


def _describe(k) -> str:
    name, t, seed = k
    label = models[k].label if hasattr(models[k], "label") else name
    tt = "" if t is None or (isinstance(t, float) and np.isnan(t)) else f", PR_t {float(t):.3f}"
    return f"{label}{tt}, repeat {seed}"


if not keys:
    st.info("This run kept no fitted models.")
else:
    pr_t = ss.get("fd_pr_t")
    default = min(range(len(keys)), key=lambda i: (not models[keys[i]].name.startswith("fair"),
                                                   abs(float(keys[i][1]) - float(pr_t or 0))
                                                   if keys[i][1] is not None and not np.isnan(keys[i][1]) else 9,
                                                   keys[i][2]))
    if ss.get("export_model") not in range(len(keys)):
        ss["export_model"] = default
    i = st.selectbox("Model to download", range(len(keys)), format_func=lambda j: _describe(keys[j]),
                     key="export_model")
    trained = models[keys[i]]
    if export is not None and hasattr(export, "model_bytes"):
        try:
            blob = export.model_bytes(trained)
        except Exception as e:  # noqa: BLE001
            ui.show_error(e, "This model cannot be saved: ")
        else:
            fname = f"{trained.name}{'' if trained.target_rate is None else f'_prt{trained.target_rate:.3f}'}" \
                    f"_seed{trained.seed}.fairdash"
            st.download_button("Download the trained model", blob, fname, "application/octet-stream",
                               key="download_model", type="primary")
            st.caption("A `.fairdash` file: load it with `fairdash.load_model(path)` or "
                       "`python -m fairdash predict`; it needs the feature columns, not the sensitive attribute.")
    else:
        st.info("Model files are not available in this version (fairdash.export is missing); "
                "the results and configuration below are.")

# --------------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------------
st.subheader("Report")
if report is not None and hasattr(report, "build_report"):
    if st.button("Build the HTML report", key="build_report_button"):
        try:
            desc = report.describe_task(task, dataset=ss.get("fd_table_name"),
                                        description=ss.get("fd_table_desc"),
                                        positive_meaning=task.spec.positive_meaning) \
                if hasattr(report, "describe_task") and same_task else {"group_names": list(run["group_names"])}
            t = ss.get("fd_pr_t")
            targets_run = sorted(float(x) for x in results["target_rate"].dropna().unique())
            if targets_run and (t is None or not any(np.isclose(t, targets_run))):
                t = targets_run[len(targets_run) // 2]
            readout = ui.readout(t) if same_task else None
            html = report.build_report(results, task_description=desc, readout=readout,
                                       criterion=run["criterion"], seeds=run["config"]["seeds"],
                                       config=run["config"],
                                       eval_rates=ui.eval_rates(run["criterion"]) if same_task else None)
            ss["fd_report_html"] = (run["key"], html)
        except Exception as e:  # noqa: BLE001
            ui.show_error(e, "The report could not be built: ")
    rep = ss.get("fd_report_html")
    if rep is not None and rep[0] == run["key"]:
        st.download_button("Download the report (HTML)", rep[1].encode("utf-8"), "fairdash_report.html",
                           "text/html", key="download_report")
        st.caption("One self-contained page that opens offline and prints to A4.")
else:
    st.info("The HTML report is not available in this version (fairdash.report is missing).")

# --------------------------------------------------------------------------------------------------
# Results and configuration
# --------------------------------------------------------------------------------------------------
st.subheader("Results and configuration")
cfg = dict(run["config"])
cfg.update({"task_spec": task.spec.to_dict() if same_task else None, "data": ss.get("fd_table_name"),
            "group_names": list(run["group_names"])})
c1, c2 = st.columns(2)
c1.download_button("Download results (CSV)", ui.csv_bytes(results), "fairdash_results.csv", "text/csv",
                   key="download_results_export")
c2.download_button("Download configuration (JSON)", json.dumps(cfg, indent=2, default=str).encode("utf-8"),
                   "fairdash_config.json", "application/json", key="download_config")
