"""Data page: choose a bundled sample or upload a table, then say which column is the sensitive
attribute ``s`` (and which of its values form group 1), which is the label ``y`` (and which values are
positive), which columns are features and how to treat missing values. Thin: calls fairdash.data."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from fairdash import data, ui
from fairdash.errors import FairDashError

ss = st.session_state
SOURCES = ["Bundled sample", "Upload a file"]
GUESS_S = ("sex", "gender", "race", "ethnicity", "age_group", "age-group", "nationality")
GUESS_Y = ("label", "target", "y", "class", "outcome", "salary", "income", "two-year-recid", "recid")

st.title("Data")
st.caption("Load a table, then say which column is the sensitive attribute and which is the label. "
           "Everything else follows from these choices.")

ui.ensure_state()

# --------------------------------------------------------------------------------------------------
# Source: a bundled sample or an upload
# --------------------------------------------------------------------------------------------------
current_id = ss.get("fd_table_id", "")
ui.restore("data_source", SOURCES[1] if current_id.startswith("upload:") else SOURCES[0])
source = st.radio("Where does the data come from?", SOURCES, key="data_source", horizontal=True)

if source == SOURCES[0]:
    ss.pop("fd_pending", None)  # an upload that never became valid is dropped when going back to samples
    names = list(data.SAMPLES)
    ui.restore("sample_choice", current_id.split(":", 1)[1] if current_id.startswith("sample:") else names[0])
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    name = c1.selectbox("Bundled sample", names, format_func=lambda n: data.SAMPLES[n].title, key="sample_choice")
    standard = current_id == f"sample:{name}" and ss["fd_spec"] == ui.sample_task_spec(name)
    load = c2.button("Load this sample" if current_id != f"sample:{name}" else "Reset to the sample's task",
                     key="load_sample_button", type="primary", disabled=standard,
                     help="Load the sample with its standard task (as in the paper).")
    smp = data.SAMPLES[name]
    st.caption(f"{smp.description} Positive label: **{smp.positive_meaning}**.")
    if load:
        with ui.guard():
            ui.load_sample_task(name)
            ss.pop("fd_widgets_for", None)  # every choice below starts again from the sample's task
            st.toast(f"Loaded {smp.title}.")
else:
    up = st.file_uploader("Upload a table (CSV, TSV, gzip-compressed CSV, Parquet or Excel; at most 200 MB)",
                          type=["csv", "tsv", "txt", "gz", "parquet", "pq", "xlsx", "xls"], key="upload_file",
                          help="The first line must hold the column names. The file stays in this browser "
                               "session; nothing is shared with other users.")
    if up is not None:
        try:
            raw = up.getvalue()
            df_new, new_id = ui.read_upload(raw, up.name)
        except FairDashError as e:
            st.error(f"{e} The previous data set ({ss.get('fd_table_name', 'none')}) is kept.", icon=":material/warning:")
        except Exception as e:  # noqa: BLE001 - a parser failure is still only a message
            ui.show_error(e, "This file could not be read. The previous data set is kept. ")
        else:
            if new_id != ss.get("fd_table_id") and (ss.get("fd_pending") or (None, ""))[1] != new_id:
                ss["fd_pending"] = (df_new, new_id, up.name)

# --------------------------------------------------------------------------------------------------
# The working table: a new upload waiting for valid choices, or the current task's table
# --------------------------------------------------------------------------------------------------
pending = ss.get("fd_pending")
if pending is not None:
    df, table_id, table_name = pending
    pending_note = st.empty()
    pending_note.info(f"New table **{table_name}**: {len(df):,} rows, {df.shape[1]} columns. Choose the columns "
                      f"below; until the choices are valid the current task ({ss.get('fd_table_name')}) stays in use.")
else:
    df, table_id, table_name = ss["fd_table"], ss["fd_table_id"], ss["fd_table_name"]

prof = ui.profile(df) if pending is None else data.profile_columns(df)
columns = list(df.columns)


def _guess(cands, exclude=(), last=True):
    """A column named like one of ``cands``, else the last (or first) two-valued column."""
    lower = {c.lower(): c for c in columns}
    for g in cands:
        if g in lower and lower[g] not in exclude:
            return lower[g]
    binary = [c for c in prof.loc[prof["kind"] == "binary", "column"] if c not in exclude]
    rest = [c for c in columns if c not in exclude]
    pick = binary or rest
    return pick[-1] if last else pick[0]


def _is_threshold_column(col: str) -> bool:
    row = prof.set_index("column").loc[col]
    return row["kind"] == "numeric" and int(row["distinct"]) > 10


def _reset_widgets_for_table():
    """New working table: every choice widget takes the current spec (same table) or a guess."""
    known = table_id == ss.get("fd_table_id")
    if known:
        spec = ss["fd_spec"]
    else:
        y_col = _guess(GUESS_Y)
        spec = data.TaskSpec(_guess(GUESS_S, exclude=(y_col,), last=False), y_col)
    for k in ("s_column", "y_column", "s1_values", "y1_values", "s_threshold", "y_threshold", "features",
              "missing", "positive_meaning"):
        ss.pop(k, None)
    ss["s_column"], ss["y_column"] = spec.s_column, spec.y_column
    _fill_values("s", spec if known else None)
    _fill_values("y", spec if known else None)
    ss["features"] = list(spec.features) if spec.features is not None else \
        ui.default_features(df, prof, spec.s_column, spec.y_column, _sample_drop())
    ss["missing"] = spec.missing
    ss["positive_meaning"] = spec.positive_meaning
    ss["fd_widgets_for"] = table_id


def _sample_drop():
    return data.SAMPLES[table_id.split(":", 1)[1]].drop if table_id.startswith("sample:") else ()


def _fill_values(role: str, spec=None):
    col = ss[f"{role}_column"]
    vals = data.column_values(df, col)
    if spec is not None and getattr(spec, f"{role}_column") == col:
        chosen = list(getattr(spec, f"{role}1_values"))
        thr = getattr(spec, f"{role}_threshold")
    else:
        chosen = ui.default_group1(vals) if role == "s" else ui.default_positive(vals)
        thr = None
    ss[f"{role}1_values"] = [v for v in chosen if v in vals]
    if _is_threshold_column(col):
        ss[f"{role}_threshold"] = float(thr) if thr is not None else float(pd.to_numeric(df[col]).median())


def _on_column_change(role: str):
    _fill_values(role)
    if role == "y" and ss.get("fd_widgets_for"):
        ss["positive_meaning"] = ""
    feats = [c for c in ss.get("features", []) if c not in (ss["s_column"], ss["y_column"])]
    old = ss.get(f"_fd_prev_{role}")  # the column that was s (or y) becomes an ordinary feature again
    flagged = set(prof.loc[prof["flags"] != "", "column"])
    if old and old in columns and old not in feats and old not in (ss["s_column"], ss["y_column"]) \
            and old not in flagged and old not in _sample_drop():
        feats.append(old)
    ss["features"] = [c for c in columns if c in feats]


if ss.get("fd_widgets_for") != table_id or "s_column" not in ss:
    _reset_widgets_for_table()

with st.expander(f"Preview and column profile: {table_name} ({len(df):,} rows x {df.shape[1]} columns)",
                 expanded=False):
    tab1, tab2 = st.tabs(["Preview (first 200 rows)", "Column profile"])
    tab1.dataframe(df.head(200), key="data_preview", hide_index=True)
    tab2.dataframe(prof, key="data_profile", hide_index=True)
    flagged = prof[prof["flags"] != ""]
    if len(flagged):
        tab2.caption("Flagged columns: " + "; ".join(f"`{r.column}`: {r.flags}" for r in flagged.itertuples()))

# --------------------------------------------------------------------------------------------------
# Choices
# --------------------------------------------------------------------------------------------------
ss["_fd_prev_s"], ss["_fd_prev_y"] = ss["s_column"], ss["y_column"]
st.subheader("Who is compared, and what is predicted")
left, right = st.columns(2)
with left:
    s_col = st.selectbox("Sensitive attribute s", columns, key="s_column", on_change=_on_column_change, args=("s",),
                         help="The attribute the fairness criterion is about (for example sex or race).")
    if _is_threshold_column(s_col):
        st.number_input(f"Group 1 = rows where {s_col} is above", key="s_threshold")
    else:
        st.multiselect(f"Values of {s_col} that form group 1", data.column_values(df, s_col), key="s1_values",
                       help="Group 1 is usually the advantaged group; every other value forms group 0, the "
                            "protected group.")
with right:
    y_col = st.selectbox("Label y", columns, key="y_column", on_change=_on_column_change, args=("y",),
                         help="The outcome the model predicts.")
    if _is_threshold_column(y_col):
        st.number_input(f"Positive = rows where {y_col} is above", key="y_threshold")
    else:
        st.multiselect(f"Values of {y_col} that count as positive (y = 1)", data.column_values(df, y_col),
                       key="y1_values")
    st.text_input("What does a positive label mean, in plain words?", key="positive_meaning",
                  placeholder="e.g. income above $50K a year (favourable), or rearrested (not favourable)")

meaning = ss.get("positive_meaning") or (
    f"{y_col} is " + (f"above {ss.get('y_threshold')}" if _is_threshold_column(y_col)
                      else " or ".join(map(repr, ss.get("y1_values", []))) or "(nothing chosen)"))
st.markdown(f"**Positive (y = 1) means:** {meaning}. The target positive rate PR_t is the share of *each* group "
            "that the fair model will label positive, so a positive should be what you want to share out fairly "
            "(or, as in COMPAS, what you want to be equally likely across groups even if it is unfavourable).")

st.subheader("Features and missing values")
feature_choices = [c for c in columns if c not in (s_col, y_col)]
st.multiselect("Feature columns the model learns from", feature_choices, key="features",
               help=f"{s_col} itself is never a feature (it is needed only at training time).")
left_out = data.left_out_by_default(prof, exclude=(s_col, y_col, *ss.get("features", [])))
for column, why in left_out.items():  # id-like: one distinct value per row; constant; empty
    st.warning(data.left_out_note(column, why) + " Add it above if it should be a feature.", icon=":material/badge:")
st.radio("Rows with a missing feature value", ["drop", "impute"], key="missing", horizontal=True,
         format_func=lambda m: {"drop": "Drop those rows", "impute": "Fill in (median / 'missing' category)"}[m])

# --------------------------------------------------------------------------------------------------
# Apply: a valid choice becomes the current task; an invalid one shows why and changes nothing
# --------------------------------------------------------------------------------------------------
spec = data.TaskSpec(
    s_column=s_col, y_column=y_col,
    s1_values=() if _is_threshold_column(s_col) else tuple(ss.get("s1_values", [])),
    y1_values=() if _is_threshold_column(y_col) else tuple(ss.get("y1_values", [])),
    s_threshold=float(ss["s_threshold"]) if _is_threshold_column(s_col) else None,
    y_threshold=float(ss["y_threshold"]) if _is_threshold_column(y_col) else None,
    features=tuple(ss.get("features", [])), missing=ss.get("missing", "drop"),
    strata_column=ss["fd_spec"].strata_column if table_id == ss.get("fd_table_id") else None,
    positive_meaning=ss.get("positive_meaning", ""),
)
try:
    task = ui.set_task(df, table_id, table_name, spec)
    if pending is not None:
        ss.pop("fd_pending", None)
        pending_note.success(f"{table_name} is now the current data set ({len(df):,} rows, {df.shape[1]} columns).")
except FairDashError as e:
    st.error(f"{e} The current task ({ss.get('fd_table_name')}: s = {ss['fd_spec'].s_column}, "
             f"y = {ss['fd_spec'].y_column}) is unchanged.", icon=":material/warning:")
    task = None
except Exception as e:  # noqa: BLE001
    ui.show_error(e)
    task = None

# --------------------------------------------------------------------------------------------------
# Groups and base rates
# --------------------------------------------------------------------------------------------------
if task is not None:
    st.subheader("Groups and base rates")
    table = task.group_table()
    st.dataframe(table, key="group_table", hide_index=True,
                 column_config={"base rate": st.column_config.NumberColumn(format="%.4f"),
                                "share": st.column_config.NumberColumn(format="%.4f")})
    r = table["base rate"].to_numpy()
    st.caption(f"Base rate = the share of a group with a positive label in the whole table "
               f"({task.label_names[1]}). Group 0 ({task.group_names[0]}) is the protected group. "
               f"{len(task.y):,} rows used, {len(task.features)} features. "
               f"Base rates differ by {abs(r[0] - r[-1]):.3f}: the Target page sets how to close that gap.")
    for w in task.warnings:
        st.warning(w)
    st.page_link("pages/target.py", label="Next: choose the target rate", icon=":material/tune:")
