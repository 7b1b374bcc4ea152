"""Score new data page: upload a table, choose a run of the session's history and one of its models, and read
the scoring contract's refusals and warnings, the decisions' rates per group against the run's target (error
rates where the table has labels) and download the decisions, the same as ``fairdash predict`` writes them
(glue: fairdash.app.audit). The upload stays in this session's memory; nothing of it is written to disk."""
from __future__ import annotations

import streamlit as st

from fairdash.app import audit
from fairdash.app.server import session, state
from fairdash.app.ui import text, upload, workspace

ss = state.current()

st.title("Score new data")
workspace.ensure_state()
history = session.runs()
if not history:
    st.info("Nothing trained yet: train a model on the Train page, then score new data with it here.")
    st.page_link("pages/train.py", label="Go to Train", icon=":material/model_training:")
    text.end_page()

by_number = {r.number: r for r in history if r.models}
if not by_number:
    st.info("No run of this session kept a fitted model to score with.")
    text.end_page()
if ss.audit_run not in by_number:
    ss.audit_run = max(by_number)
number = st.selectbox("Run", list(by_number), key=state.AUDIT_RUN, format_func=lambda n: by_number[n].title)
run = by_number[number]
keys = list(run.models)
chosen = state.run_choice(state.AUDIT_MODEL, number)
if ss.widget(chosen) not in range(len(keys)):
    ss.set_widget(chosen, audit.first_model(run))
i = st.selectbox("Model", range(len(keys)), format_func=lambda j: run.model_words(keys[j]), key=chosen)
st.caption(audit.model_caption(run, run.models[keys[i]]))

up = st.file_uploader("Upload a table to score (CSV, TSV, gzip-compressed CSV, Parquet or Excel; at most 200 MB)",
                      type=audit.UPLOAD_TYPES, key="audit_upload",
                      help="The first line must hold the column names. The file stays in this browser session; "
                           "nothing is shared with other users or written to disk.")
if up is None:
    st.info("Upload a table with the columns the model was trained on: its rows are scored as "
            "`fairdash predict` scores a file.")
    text.end_page()
try:
    result = audit.audited(up, run, i)
except Exception as e:  # noqa: BLE001 - a refusal or a parser failure is a message, never a traceback
    text.show_error(e, "This table cannot be scored: ")
    text.end_page()

audit.show_warnings(result)
blob = audit.decisions_download(result)
st.download_button("Download the decisions (CSV)", blob, audit.DECISIONS_FILE, "text/csv", key="download_decisions",
                   type="primary", on_click=upload.log_export, args=("decisions", len(blob)))
st.caption("The table as uploaded with two columns added, the probability of the positive label and the decision: "
           "the same file `fairdash predict` writes for this table and the downloaded model.")
audit.show_rates(result, run)
