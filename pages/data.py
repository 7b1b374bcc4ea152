"""Data page: choose a bundled sample or upload a table, then say which column is the sensitive
attribute ``s`` (and which of its values form group 1), which is the label ``y`` (and which values are
positive), which columns are features and how to treat missing values. Thin: calls fairdash.app.task_choices."""
from __future__ import annotations

import streamlit as st

from fairdash.app import session_file, task_choices
from fairdash.app.server import state
from fairdash.app.ui import navigation, text, upload, workspace
from fairdash.errors import FairDashError

ss, lit = state.current(), text.literal  # user text (names, values, meanings) is shown literally, never as markup
SOURCES = ["Bundled sample", "Upload a file"]
S_MODES = {"two": "Two groups: the chosen values against the rest", "each": "Every value its own group",
           "cross": "Intersection with another column (e.g. race × sex)"}

st.title("Data")
st.caption("Load a table, then say which column is the sensitive attribute and which is the label. "
           "Everything else follows from these choices.")

workspace.ensure_state()

# --------------------------------------------------------------------------------------------------
# A saved session (Export, "Save this session"): its table, task, target and runs
# --------------------------------------------------------------------------------------------------
with st.expander("Open a session file", icon=":material/folder_open:",
                 expanded=ss.open_session_file is not None):
    st.file_uploader(f"A session file saved with \"Save this session\" ({session_file.SUFFIX})",
                     key=state.OPEN_SESSION_FILE, help=session_file.OPEN_HELP,  # (any name: the file says what it is)
                     on_change=session_file.open_uploaded)  # opened before the page is drawn from the file's session
    opened_note = st.empty()
    session_file.show_note(opened_note)

# --------------------------------------------------------------------------------------------------
# Source: a bundled sample or an upload
# --------------------------------------------------------------------------------------------------
current_id = ss.get(state.Session.table_id, "")


def _sample_chosen() -> None:
    ss.sample_chosen = True


def _back_to_samples() -> None:
    ss.data_source = SOURCES[0]

navigation.restore(state.DATA_SOURCE, SOURCES[1] if current_id.startswith("upload:") or ss.pending else SOURCES[0])
source = st.radio("Where does the data come from?", SOURCES, key=state.DATA_SOURCE, horizontal=True)

if source == SOURCES[0]:
    del ss.pending  # an upload that never became valid is dropped when going back to samples
    del ss.choices_kept
    names = task_choices.sample_names()
    navigation.restore("sample_choice", current_id.split(":", 1)[1] if current_id.startswith("sample:") else names[0])
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    name = c1.selectbox("Bundled sample", names, format_func=task_choices.sample_title, key="sample_choice",
                        on_change=_sample_chosen)  # choosing a sample loads it
    loaded = False
    if ss.pop(state.Session.sample_chosen) and current_id != f"sample:{name}":
        with text.guard():
            workspace.load_sample_task(name)
            del ss.widgets_for  # every choice below starts again from the sample's task
            loaded = True
        current_id = ss.get(state.Session.table_id, "")
    standard = current_id == f"sample:{name}" and ss.spec == workspace.sample_task_spec(name)
    load = c2.button("Load this sample" if current_id != f"sample:{name}" else "Reset to the sample's task",
                     key="load_sample_button", type="primary", disabled=standard,
                     help="Load the sample with its standard task (as in the paper).")
    st.caption(task_choices.sample_caption(name))
    if load:
        with text.guard():
            workspace.load_sample_task(name)
            del ss.widgets_for  # every choice below starts again from the sample's task
            loaded = True
    if loaded:
        st.success(f"Loaded {task_choices.sample_title(name)}.")
else:
    up = st.file_uploader("Upload a table (CSV, TSV, gzip-compressed CSV, Parquet or Excel; at most 200 MB)",
                          type=["csv", "tsv", "txt", "gz", "parquet", "pq", "xlsx", "xls"], key="upload_file",
                          help="The first line must hold the column names. The file stays in this browser "
                               "session; nothing is shared with other users.")
    if up is not None:
        try:
            df_new, new_id = upload.read_upload_file(up)  # read once; later reruns reuse it
        except FairDashError as e:
            kept_name = ss.get(state.Session.table_name, "none")
            st.error(lit(f"{e} The previous data set ({kept_name}) is kept."), icon=":material/warning:")
        except Exception as e:  # noqa: BLE001 - a parser failure is still only a message
            text.show_error(e, "This file could not be read. The previous data set is kept. ")
        else:
            if new_id != ss.table_id and getattr(ss.pending, "table_id", None) != new_id:
                ss.pending = state.Pending(df_new, new_id, up.name)

# --------------------------------------------------------------------------------------------------
# The working table: a new upload waiting for valid choices, or the current task's table
# --------------------------------------------------------------------------------------------------
pending = ss.pending
if pending is not None:
    df, table_id, table_name = pending
    pending_note = st.empty()
    pending_note.info(f"New table **{lit(table_name)}**: {len(df):,} rows, {df.shape[1]} columns. Choose the columns "
                      f"below; until the choices are valid the current task ({lit(ss.table_name)}) stays.")
    discard_slot = st.empty()  # (emptied once the upload is confirmed: only the confirmed state stays on screen)
    discard_slot.button("Discard this upload", key="discard_upload", icon=":material/delete:",
              on_click=_back_to_samples,  # the samples' branch drops it
              help=f"Forget {lit(table_name)} and the choices made for it; the current task stays.")
else:
    df, table_id, table_name = ss.table, ss.table_id, ss.table_name

prof = upload.profile(df, table_id)
columns = list(df.columns)

choices = task_choices.Choices(df, prof, table_id)
choices.prepare()

with st.expander(f"Preview and column profile: {lit(table_name)} ({len(df):,} rows x {df.shape[1]} columns)",
                 expanded=False):
    tab1, tab2 = st.tabs(["Preview (first 200 rows)", "Column profile"])
    tab1.dataframe(df.head(200), key="data_preview", hide_index=True)
    tab2.dataframe(prof, key="data_profile", hide_index=True)
    if choices.flagged_caption():
        tab2.caption(choices.flagged_caption())

# --------------------------------------------------------------------------------------------------
# Choices
# --------------------------------------------------------------------------------------------------
ss.set_previous_column("s", ss.s_column)
ss.set_previous_column("y", ss.y_column)
st.subheader("Who is compared, and what is predicted")
left, right = st.columns(2)
with left:
    s_col = st.selectbox("Sensitive attribute s", columns, key=state.S_COLUMN, on_change=choices.column_changed,
                         args=("s",), help="The attribute the fairness criterion is about (for example sex or race).")
    navigation.restore(state.S_MODE, "two")
    s_mode = st.radio("Groups", list(S_MODES), key=state.S_MODE, format_func=S_MODES.get,
                      help="Two groups as in the paper, every value of s its own group, or every combination of s "
                           "and a second column (intersectional groups).")
    if s_mode == "cross":
        st.selectbox(f"Cross {lit(s_col, code=True)} with", choices.cross_candidates(s_col, ss.y_column),
                     key=state.S_WITH,
                     help="Every combination of the two columns' values is its own group; neither is a feature.")
    elif s_mode == "two" and choices.threshold(s_col):
        st.number_input(f"Group 1 = rows where {lit(s_col, code=True)} is above", key=state.S_THRESHOLD)
    elif s_mode == "two":
        st.multiselect(f"Values of {lit(s_col, code=True)} that form group 1", choices.values(s_col),
                       key=state.S1_VALUES,
                       help="Every other value forms group 0. The disadvantaged group follows from the base rates and "
                            "whether a positive label is favourable, unless you name the protected group below them.")
    st.text_input("Names for the groups (optional, comma-separated, in group order)", key=state.GROUP_LABELS,
                  placeholder="e.g. female, male for a column coded 0/1",
                  help="Shown instead of the column's values in every readout, figure and report.")
with right:
    y_col = st.selectbox("Label y", columns, key=state.Y_COLUMN, on_change=choices.column_changed, args=("y",),
                         help="The outcome the model predicts.")
    if choices.threshold(y_col):
        st.number_input(f"Positive = rows where {lit(y_col, code=True)} is above", key=state.Y_THRESHOLD)
    else:
        st.multiselect(f"Values of {lit(y_col, code=True)} that count as positive (y = 1)", choices.values(y_col),
                       key=state.Y1_VALUES)
    choices.label_meaning()
choices.meaning_line(y_col)

st.subheader("Features and missing values")
feature_choices = choices.feature_candidates(s_col, y_col)
st.multiselect("Feature columns the model learns from", feature_choices, key=state.FEATURES,
               help=f"{lit(s_col, code=True)} itself is never a feature (it is needed only at training time).")
if len(feature_choices) > 30:  # many (e.g. one-hot) columns: whole groups in or out with one click
    choices.column_groups(feature_choices)
for note in choices.left_out_notes((s_col, y_col, *ss.get(state.Session.features, []))):  # id-like, constant, empty
    st.warning(lit(note), icon=":material/badge:")
st.radio("Rows with a missing feature value", ["drop", "impute"], key=state.MISSING, horizontal=True,
         format_func=lambda m: {"drop": "Drop those rows", "impute": "Fill in (median / 'missing' category)"}[m])
choices.keep()  # a pending upload's choices survive a page switch until confirmed or discarded

# --------------------------------------------------------------------------------------------------
# Apply: a valid choice becomes the current task; an upload's first choices only when confirmed; an
# invalid one shows why and changes nothing
# --------------------------------------------------------------------------------------------------
spec = choices.spec()
task = None
try:
    if pending is None:
        task = workspace.set_task(df, table_id, table_name, spec)
    else:
        task = workspace.candidate_task(df, table_id, spec)
except FairDashError as e:
    st.error(lit(f"{e} The current task ({ss.table_name}: s = {ss.spec.s_column}, "
                 f"y = {ss.spec.y_column}) is unchanged."), icon=":material/warning:")
except Exception as e:  # noqa: BLE001
    text.show_error(e)

# --------------------------------------------------------------------------------------------------
# Leaks and proxies of the chosen task
# --------------------------------------------------------------------------------------------------
if task is not None:
    choices.leaks_and_proxies(task)

# --------------------------------------------------------------------------------------------------
# Confirm an upload
# --------------------------------------------------------------------------------------------------
if pending is not None:
    guess = ss.guess
    if guess is not None and guess.table_id == table_id:
        g = guess.roles
        pending_note.info(f"New table **{lit(table_name)}**: {len(df):,} rows, {df.shape[1]} columns. Suggested from "
                          f"the column names and values (check them): s = {lit(g.s_reason)} y = {lit(g.y_reason)} "
                          f"Nothing is used until you confirm; until then the current task ({lit(ss.table_name)}) "
                          "stays.")
    # whether a positive label is favourable is asked before the table can be used (the warning under the label says so)
    if task is not None and st.button(f"Use {lit(table_name)} with these choices", key="confirm_task", type="primary",
                                      disabled=not choices.answered()):
        try:
            workspace.set_task(df, table_id, table_name, spec, task=task)
        except FairDashError as e:
            st.error(lit(e), icon=":material/warning:")
        else:
            del ss.pending
            del ss.guess
            pending_note.empty()
            discard_slot.empty()
            st.success(f"{lit(table_name)} is now the current data set ({len(df):,} rows, {df.shape[1]} columns).")
            pending = None

# --------------------------------------------------------------------------------------------------
# Groups and base rates
# --------------------------------------------------------------------------------------------------
if task is not None:
    st.subheader("Groups and base rates" + (" (not yet confirmed)" if pending is not None else ""))
    table = task.group_table()
    st.dataframe(table, key="group_table", hide_index=True,
                 column_config={"base rate": st.column_config.NumberColumn(format="%.4f"),
                                "share": st.column_config.NumberColumn(format="%.4f")})
    r = table["base rate"].to_numpy()
    role = choices.protected_group(task, r)
    st.caption(f"Base rate = the share of a group with a positive label ({lit(task.spec.y_column)} = "
               f"{lit(task.label_names[1])}) in the whole table. {role} "
               f"{len(task.y):,} rows used, {len(task.features)} features. "
               f"Base rates differ by up to {choices.base_rate_spread(r):.3f}: the Target page sets how to close that "
               "gap.")
    for w in task.warnings:
        st.warning(lit(w))
    if pending is None:
        st.page_link("pages/target.py", label="Next: choose the target rate", icon=":material/tune:")
session_file.show_note(opened_note)  # again: a table used in this run takes the note away now, not on the next run
