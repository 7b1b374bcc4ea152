"""Export page: download a trained model (``fairdash.files.export``), the HTML report (``fairdash.report``),
the results and the configuration of one run from the session's history. Everything describes the run
itself (its own task, target and data name), whatever data is loaded now."""
from __future__ import annotations

import json

import streamlit as st

from fairdash import report
from fairdash.files import export
from fairdash.app import state, target_state, ui
from fairdash.files.results_file import to_file

ss = st.session_state

st.title("Export")
ui.ensure_state()
history = ui.runs()
if not history:
    st.info("Nothing trained yet: train a model on the Train page, then download it here.")
    st.page_link("pages/train.py", label="Go to Train", icon=":material/model_training:")
    st.stop()

by_number = {r.number: r for r in history}
if ss.get(state.EXPORT_RUN) not in by_number:
    ss[state.EXPORT_RUN] = history[-1].number
number = st.selectbox("Run", list(by_number), key=state.EXPORT_RUN, format_func=lambda n: by_number[n].title,
                      help=" | ".join(r.description for r in by_number.values()))
run = by_number[number]
results = run.results
st.caption(ui.literal(f"Trained on {run.data_name} at {run.created} (UTC); target: {run.spec.target.describe()}."))

# --------------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------------
st.subheader("Trained model")
keys = list(run.models)
if not keys:
    st.info("This run kept no fitted models.")
else:
    if ss.get(state.EXPORT_MODEL) not in range(len(keys)):
        ss[state.EXPORT_MODEL] = keys.index(run.default_model(target_state.current_or_default().target_rate))
    i = st.selectbox("Model to download", range(len(keys)), format_func=lambda j: run.model_words(keys[j]),
                     key=state.EXPORT_MODEL)
    trained = run.models[keys[i]]
    try:
        blob = export.model_bytes(trained)
    except Exception as e:  # noqa: BLE001
        ui.show_error(e, "This model cannot be saved: ")
    else:
        st.download_button("Download the trained model", blob, export.model_file_name(trained, run.number),
                           "application/octet-stream",
                           key="download_model", type="primary", on_click=ui.log_export, args=("model", len(blob)))
        st.caption(f"Fitted at {trained.fitted_at} (UTC) in {trained.fit_seconds:.2f} s. A `.fairdash` file: load it "
                   "with `fairdash.load_model(path)` or `fairdash predict`; "
                   + (f"it needs the feature columns and the sensitive attribute {ui.literal(trained.spec.s_column, code=True)}"
                      ": it decides with s." if trained.decides_with_s else
                      "it needs the feature columns, not the sensitive attribute."))

# --------------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------------
st.subheader("Report")
if st.button("Build the HTML report", key="build_report_button"):
    try:
        html = report.report_for_run(run)
        ss[state.REPORT_HTML] = state.ReportHtml(run.key, number, html)
    except Exception as e:  # noqa: BLE001
        ui.show_error(e, "The report could not be built: ")
rep = ss.get(state.REPORT_HTML)
if rep is not None and (rep.run_key, rep.number) == (run.key, number):
    st.download_button("Download the report (HTML)", rep.html.encode("utf-8"), "fairdash_report.html",
                       "text/html", key="download_report", on_click=ui.log_export, args=("report", len(rep.html)))
    st.caption("One self-contained page that opens offline and prints to A4.")

# --------------------------------------------------------------------------------------------------
# Results and configuration
# --------------------------------------------------------------------------------------------------
st.subheader("Results and configuration")
st.caption("The configuration is the same format the command line's `sweep` writes: `fairdash report --results "
           "fairdash_results.csv --out report.html` reads it when it lies beside the results as "
           "`fairdash_results.csv.json`.")
c1, c2 = st.columns(2)
c1.download_button("Download results (CSV)", ui.csv_bytes(to_file(results)), "fairdash_results.csv", "text/csv",
                   key="download_results_export", on_click=ui.log_export, args=("results", 0))
c2.download_button("Download configuration (JSON)", json.dumps(run.spec.to_dict(), indent=2).encode("utf-8"),
                   "fairdash_results.csv.json", "application/json", key="download_config",
                   on_click=ui.log_export, args=("config", 0))
