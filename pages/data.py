"""Data page: choose a bundled sample or upload a table, then say which column is the sensitive
attribute ``s`` (and which of its values form group 1), which is the label ``y`` (and which values are
positive), which columns are features and how to treat missing values. Thin: calls fairdash.data."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from fairdash import data, proxies, ui
from fairdash.errors import FairDashError

ss = st.session_state
SOURCES = ["Bundled sample", "Upload a file"]
S_MODES = {"two": "Two groups: the chosen values against the rest", "each": "Every value its own group",
           "cross": "Intersection with another column (e.g. race × sex)"}

st.title("Data")
st.caption("Load a table, then say which column is the sensitive attribute and which is the label. "
           "Everything else follows from these choices.")

ui.ensure_state()

# --------------------------------------------------------------------------------------------------
# Source: a bundled sample or an upload
# --------------------------------------------------------------------------------------------------
current_id = ss.get("fd_table_id", "")
ui.restore("data_source", SOURCES[1] if current_id.startswith("upload:") or ss.get("fd_pending") else SOURCES[0])
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


def _is_threshold_column(col: str) -> bool:
    row = prof.set_index("column").loc[col]
    return row["kind"] == "numeric" and int(row["distinct"]) > 10


def _reset_widgets_for_table():
    """New working table: every choice widget takes the current spec (same table) or a guess."""
    known = table_id == ss.get("fd_table_id")
    if known:
        spec = ss["fd_spec"]
        ss.pop("fd_guess", None)
    else:  # a suggestion, shown as such and committed only when the user confirms it
        g = proxies.guess_roles(df, prof)
        spec = data.TaskSpec(g.s_column, g.y_column, g.s1_values, g.y1_values, y_threshold=g.y_threshold,
                             s_threshold=g.s_threshold)
        ss["fd_guess"] = (table_id, g)
    for k in ("s_column", "y_column", "s1_values", "y1_values", "s_threshold", "y_threshold", "features",
              "missing", "positive_meaning", "s_mode", "s_with", "group_labels"):
        ss.pop(k, None)
    ss["s_column"], ss["y_column"] = spec.s_column, spec.y_column
    ss["s_mode"] = "cross" if spec.s_with else ("each" if spec.s_multi else "two")
    if spec.s_with:
        ss["s_with"] = spec.s_with
    ss["group_labels"] = ", ".join(spec.group_labels)
    _fill_values("s", spec)
    _fill_values("y", spec)
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
    else:  # the user picked another column: its values are a fresh guess, visible in the widget
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
    ui.restore("s_mode", "two")
    s_mode = st.radio("Groups", list(S_MODES), key="s_mode", format_func=S_MODES.get,
                      help="Two groups as in the paper, every value of s its own group, or every combination of s "
                           "and a second column (intersectional groups).")
    if s_mode == "cross":
        others = [c for c in columns if c not in (s_col, ss.get("y_column")) and 1 < df[c].nunique() <= 30]
        st.selectbox(f"Cross {s_col} with", others, key="s_with",
                     help="Every combination of the two columns' values is its own group; neither is a feature.")
    elif s_mode == "two" and _is_threshold_column(s_col):
        st.number_input(f"Group 1 = rows where {s_col} is above", key="s_threshold")
    elif s_mode == "two":
        st.multiselect(f"Values of {s_col} that form group 1", data.column_values(df, s_col), key="s1_values",
                       help="Group 1 is usually the advantaged group; every other value forms group 0, the "
                            "protected group.")
    st.text_input("Names for the groups (optional, comma-separated, in group order)", key="group_labels",
                  placeholder="e.g. female, male for a column coded 0/1",
                  help="Shown instead of the column's values in every readout, figure and report.")
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
if len(feature_choices) > 30:  # many (e.g. one-hot) columns: whole groups in or out with one click
    groups = ui.column_groups(df, table_id, feature_choices)

    def _set_group(cols, on):
        have = set(ss.get("features", []))
        have = have | set(cols) if on else have - set(cols)
        ss["features"] = [c for c in feature_choices if c in have]

    with st.expander(f"Column groups ({len(groups)} groups of columns sharing a name prefix)"):
        chosen_now = set(ss.get("features", []))
        for prefix, cols in groups.items():
            c1, c2, c3 = st.columns([3, 1, 1], vertical_alignment="center")
            c1.markdown(f"`{prefix}`: {sum(c in chosen_now for c in cols)} of {len(cols)} columns chosen")
            c2.button("Select all", key=f"group_on_{prefix}", on_click=_set_group, args=(cols, True))
            c3.button("Leave out", key=f"group_off_{prefix}", on_click=_set_group, args=(cols, False))
left_out = data.left_out_by_default(prof, exclude=(s_col, y_col, *ss.get("features", [])))
for column, why in left_out.items():  # id-like: one distinct value per row; constant; empty
    st.warning(data.left_out_note(column, why) + " Add it above if it should be a feature.", icon=":material/badge:")
st.radio("Rows with a missing feature value", ["drop", "impute"], key="missing", horizontal=True,
         format_func=lambda m: {"drop": "Drop those rows", "impute": "Fill in (median / 'missing' category)"}[m])

# --------------------------------------------------------------------------------------------------
# Apply: a valid choice becomes the current task; an upload's first choices only when confirmed; an
# invalid one shows why and changes nothing
# --------------------------------------------------------------------------------------------------
s_mode = ss.get("s_mode", "two")
two = s_mode == "two"
spec = data.TaskSpec(
    s_column=s_col, y_column=y_col,
    s1_values=tuple(ss.get("s1_values", [])) if two and not _is_threshold_column(s_col) else (),
    y1_values=() if _is_threshold_column(y_col) else tuple(ss.get("y1_values", [])),
    s_threshold=float(ss["s_threshold"]) if two and _is_threshold_column(s_col) else None,
    y_threshold=float(ss["y_threshold"]) if _is_threshold_column(y_col) else None,
    s_multi=s_mode == "each", s_with=ss.get("s_with") if s_mode == "cross" else None,
    group_labels=tuple(g.strip() for g in str(ss.get("group_labels", "")).split(",") if g.strip()),
    features=tuple(ss.get("features", [])), missing=ss.get("missing", "drop"),
    strata_column=ss["fd_spec"].strata_column if table_id == ss.get("fd_table_id") else None,
    positive_meaning=ss.get("positive_meaning", ""),
)
task = None
try:
    if pending is None:
        task = ui.set_task(df, table_id, table_name, spec)
    else:
        task = ui.candidate_task(df, table_id, spec)
except FairDashError as e:
    st.error(f"{e} The current task ({ss.get('fd_table_name')}: s = {ss['fd_spec'].s_column}, "
             f"y = {ss['fd_spec'].y_column}) is unchanged.", icon=":material/warning:")
except Exception as e:  # noqa: BLE001
    ui.show_error(e)

# --------------------------------------------------------------------------------------------------
# Leaks and proxies of the chosen task
# --------------------------------------------------------------------------------------------------
def _drop(columns_to_drop):
    ss["features"] = [c for c in ss.get("features", []) if c not in set(columns_to_drop)]


if task is not None:
    leaks, proxy = ui.leaks_and_proxies(df, table_id, task)
    if leaks:
        st.subheader("Leaks")
        st.error(f"{len(leaks)} feature(s) give s or y away almost exactly. A model that sees a leak of y learns the "
                 "leak instead of the task (accuracy near 1, meaningless); a leak of s lets it use s directly.",
                 icon=":material/warning:")
        for leak in leaks:
            c1, c2 = st.columns([4, 1], vertical_alignment="center")
            c1.markdown(f"- `{leak['column']}` gives **{leak['of']}** away (score {leak['score']:.3f})")
            c2.button("Drop it", key=f"drop_leak_{leak['column']}", on_click=_drop, args=([leak["column"]],))
        st.button("Drop every leak", key="drop_all_leaks", on_click=_drop, args=([x["column"] for x in leaks],))
    with st.expander("Proxies: how well each feature alone predicts s", expanded=False):
        st.dataframe(proxy, key="proxy_table", hide_index=True,
                     column_config={"score": st.column_config.NumberColumn(format="%.3f")})
        st.caption("Score = the feature's single-feature AUC for telling the groups apart (0.5: not at all; 1: "
                   "exactly). A model that does not see s moves a group's rate only through such features, so weak "
                   "proxies are why a target can stay out of reach; a score of 0.95 or more is listed as a leak.")

# --------------------------------------------------------------------------------------------------
# Confirm an upload
# --------------------------------------------------------------------------------------------------
if pending is not None:
    guess = ss.get("fd_guess")
    if guess is not None and guess[0] == table_id:
        g = guess[1]
        pending_note.info(f"New table **{table_name}**: {len(df):,} rows, {df.shape[1]} columns. Suggested from the "
                          f"column names and values (check them): s = {g.s_reason} y = {g.y_reason} Nothing is used "
                          f"until you confirm; until then the current task ({ss.get('fd_table_name')}) stays.")
    if task is not None and st.button(f"Use {table_name} with these choices", key="confirm_task", type="primary"):
        try:
            ui.set_task(df, table_id, table_name, spec, task=task)
        except FairDashError as e:
            st.error(str(e), icon=":material/warning:")
        else:
            ss.pop("fd_pending", None)
            ss.pop("fd_guess", None)
            st.success(f"{table_name} is now the current data set ({len(df):,} rows, {df.shape[1]} columns).")
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
    st.caption(f"Base rate = the share of a group with a positive label in the whole table "
               f"({task.label_names[1]}). Group 0 ({task.group_names[0]}) is the protected group. "
               f"{len(task.y):,} rows used, {len(task.features)} features. "
               f"Base rates differ by up to {r.max() - r.min():.3f}: the Target page sets how to close that gap.")
    for w in task.warnings:
        st.warning(w)
    if pending is None:
        st.page_link("pages/target.py", label="Next: choose the target rate", icon=":material/tune:")
