"""Export page: download a trained model, the HTML report, the results and the configuration of one run
from the session's history (their bytes and file names: ``fairdash.app.export``). Everything describes the run
itself (its own task, target and data name), whatever data is loaded now."""
from __future__ import annotations

import streamlit as st

from fairdash.app import export, session_file
from fairdash.app.server import session, state
from fairdash.app.ui import text, upload, workspace

ss = state.current()

st.title("Export")
workspace.ensure_state()
history = session.runs()

# --------------------------------------------------------------------------------------------------
# The whole session, as one file the analyst keeps
# --------------------------------------------------------------------------------------------------
st.subheader("This session")
make_session_file, session_file_name = session_file.save_download()
st.download_button("Save this session", make_session_file, session_file_name, "application/octet-stream",
                   key="save_session", icon=":material/save:", help=session_file.SAVE_HELP,
                   on_click="ignore")  # (the file is made, and logged, when pressed)
st.caption(f"The table, task, target and {len(history)} run(s) with their models, as one "
           f"`{session_file.SUFFIX}` file: open it on the Data page of any FairDash, after a restart or on a "
           "colleague's machine, and carry on with the same numbers.")
if not history:
    st.info("Nothing trained yet: train a model on the Train page, then download it here.")
    st.page_link("pages/train.py", label="Go to Train", icon=":material/model_training:")
    text.end_page()

by_number = {r.number: r for r in history}
if ss.export_run not in by_number:
    ss.export_run = history[-1].number
number = st.selectbox("Run", list(by_number), key=state.EXPORT_RUN, format_func=lambda n: by_number[n].title,
                      help=" | ".join(r.description for r in by_number.values()))
run = by_number[number]
st.caption(text.literal(f"Trained on {run.data_name} at {run.created} (UTC); target: {run.spec.target.describe()}."))

# --------------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------------
st.subheader("Trained model")
keys = list(run.models)
if not keys:
    st.info("This run kept no fitted models.")
else:
    chosen = state.run_choice(state.EXPORT_MODEL, number)
    if ss.widget(chosen) not in range(len(keys)):
        ss.set_widget(chosen, export.first_model(run))
    i = st.selectbox("Model to download", range(len(keys)), format_func=lambda j: run.model_words(keys[j]),
                     key=chosen)
    try:
        trained, blob, file_name = export.model_download(run, i)
    except Exception as e:  # noqa: BLE001
        text.show_error(e, "This model cannot be saved: ")
    else:
        st.download_button(f"Download the trained model ({file_name})", blob, file_name, "application/octet-stream",
                           key="download_model", type="primary", on_click=upload.log_export, args=("model", len(blob)))
        st.caption(export.model_note(trained))

# --------------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------------
st.subheader("Report")
if st.button("Build the HTML report", key="build_report_button"):
    try:
        html = export.report_html(run)
        ss.report_html = state.ReportHtml(run.key, number, html)
    except Exception as e:  # noqa: BLE001
        text.show_error(e, "The report could not be built: ")
rep = ss.report_html
if rep is not None and (rep.run_key, rep.number) == (run.key, number):
    st.download_button("Download the report (HTML)", rep.html.encode("utf-8"), export.REPORT_FILE,
                       "text/html", key="download_report", on_click=upload.log_export, args=("report", len(rep.html)))
    st.caption("One self-contained page that opens offline and prints to A4.")

# --------------------------------------------------------------------------------------------------
# Results and configuration
# --------------------------------------------------------------------------------------------------
st.subheader("Results and configuration")
st.caption("The configuration is the same format the command line's `sweep` writes: `fairdash report --results "
           "fairdash_results.csv --out report.html` reads it when it lies beside the results as "
           "`fairdash_results.csv.json`.")
c1, c2 = st.columns(2)
c1.download_button("Download results (CSV)", export.results_csv(run), export.RESULTS_FILE, "text/csv",
                   key="download_results_export", on_click=upload.log_export, args=("results", 0))
c2.download_button("Download configuration (JSON)", export.config_json(run), export.CONFIG_FILE, "application/json",
                   key="download_config", on_click=upload.log_export, args=("config", 0))
