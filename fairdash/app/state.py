"""The dashboard session's keys: the one module that names what ``st.session_state`` holds (issue 28, item 4).

Every page, ``app.py`` and the glue modules of ``fairdash.app`` read and write the session through these
names, never through a string of their own (``tests/test_structure.py`` checks it); the tests read them too
(``tests/app_state.py``). A value that holds several parts is a named tuple, so no reader counts positions.
Widget keys that are read back from the session (``key=`` of a widget, then ``session_state[...]``) are
named here as well. A plain module of names: it imports nothing of Streamlit."""
from __future__ import annotations

from typing import Any, NamedTuple

# --------------------------------------------------------------------------------------------------
# The working table and its task (``ui.set_task``)
# --------------------------------------------------------------------------------------------------
TABLE = "fd_table"  # the working table (a DataFrame)
TABLE_ID = "fd_table_id"  # "sample:<name>" or "upload:<digest>"
TABLE_NAME = "fd_table_name"
TABLE_DESC = "fd_table_desc"  # a sample's description ("" for an upload)
SPEC = "fd_spec"  # the TaskSpec of the current task
TASK = "fd_task"  # the current Task
TASK_KEY = "fd_task_key"  # the key the current task was built under
RATES = "fd_rates"  # Keyed(task key, training-split readout)
SPLIT0 = "fd_split0"  # Keyed(task key, the first seed's split)
CANDIDATE = "fd_candidate"  # Keyed(key, a task built from the Data page's choices before it is confirmed)
PROTECTED = "fd_protected"  # the group the analyst names as protected (or None)
PENDING = "fd_pending"  # Pending: an upload that waits for its columns to be confirmed
GUESS = "fd_guess"  # Guess: the roles guessed for a new table
CHOICES_KEPT = "fd_choices_kept"  # KeptChoices: a pending upload's choices, kept across pages
WIDGETS_FOR = "fd_widgets_for"  # the table id the Data page's choice widgets were filled for
UPLOAD_READ = "_fd_upload_read"  # UploadRead: the last upload read (reading it again costs seconds)

# --------------------------------------------------------------------------------------------------
# The target (``target_state``) and the Target page
# --------------------------------------------------------------------------------------------------
TARGET = "fd_target"  # the TargetSpec
TARGET_ERROR = "fd_target_error"  # the reason the last edit was refused
TARGET_CHANGED = "fd_target_changed"  # what the last task change did to the target (a sentence), shown once
PR_T_BOX_VERSION = "fd_pr_t_box_v"  # bumped to show a new PR_t in the number box (see pr_t_box_key)
READOUT_MS = "fd_readout_ms"  # how long the Target page's readout took (for the e2e timing)

# --------------------------------------------------------------------------------------------------
# Runs, jobs, exports
# --------------------------------------------------------------------------------------------------
RUNS = "fd_runs"  # the session's run history
RUN = "fd_run"  # the latest run
FIT_CACHE = "fd_fit_cache"
REPORT_HTML = "fd_report_html"  # ReportHtml: the Export page's report
COMPARE_REPORT = "fd_compare_report"  # ComparedReport: the Compare page's report
COMPARE_ROWS = "_fd_compare_rows"  # Keyed(the shown runs, their rows priced together): pricing fits models once
AUDITED = "_fd_audited"  # Keyed(the upload, run and model, the Audit): a new table scored once (memory only)
JOB_NOTE = "fd_job_note"  # JobNote of a failed or cancelled job, in the sidebar until dismissed
JOB_OUTCOME = "fd_job_outcome"  # JobNote of the job collected in this script run

# --------------------------------------------------------------------------------------------------
# The session itself (``session``, ``views``)
# --------------------------------------------------------------------------------------------------
TOKEN = "fd_token"  # the session's URL token
LINK_NOTE = "fd_link_note"  # a sentence about the link this session was opened with, shown once
RESTORED = "fd_restored"  # the session was opened from the store
VERSION = "_fd_version"  # the stored version this tab has
BROWSER = "_fd_browser"  # the browser's id (its cookie)
LIVE = "_fd_live"  # the owner object of this tab in the session store
NOT_KEPT = "_fd_not_kept"  # the store had no room for this session
KEPT = "_fd_kept"  # the widgets' kept values (session.remember)
IN_FRAME = "_fd_in_frame"  # the app runs inside a frame
SIDEBAR = "_fd_sidebar"  # the sidebar's slots
SNAPSHOT_LINK = "fd_snapshot_link"  # the last snapshot link made in this tab
# the browser tab's own keys, not the session's: a reset (Forget, or a session forgotten in another tab) keeps
# them and drops everything else, so a run never draws the sidebar's frame twice (its keyed box)
TAB = (BROWSER, IN_FRAME, SIDEBAR)

# --------------------------------------------------------------------------------------------------
# Widget keys read back from the session
# --------------------------------------------------------------------------------------------------
# the Data page's choice widgets (fairdash.app.task_choices)
S_COLUMN, Y_COLUMN = "s_column", "y_column"
S1_VALUES, Y1_VALUES = "s1_values", "y1_values"
S_THRESHOLD, Y_THRESHOLD = "s_threshold", "y_threshold"
FEATURES, MISSING = "features", "missing"
POSITIVE_MEANING, POSITIVE_IS = "positive_meaning", "positive_is"
S_MODE, S_WITH, GROUP_LABELS = "s_mode", "s_with", "group_labels"
PROTECTED_GROUP = "protected_group"
DATA_SOURCE = "data_source"
SAMPLE_CHOSEN = "_fd_sample_chosen"  # the sample list was changed by the user in this run: load the chosen sample
CHOICE_WIDGETS = (S_COLUMN, Y_COLUMN, S1_VALUES, Y1_VALUES, S_THRESHOLD, Y_THRESHOLD, FEATURES, MISSING,
                  POSITIVE_MEANING, POSITIVE_IS, S_MODE, S_WITH, GROUP_LABELS)
# per role ("s" or "y"): its column, its positive values, its threshold, the column it had before
COLUMN = {"s": S_COLUMN, "y": Y_COLUMN}
VALUES = {"s": S1_VALUES, "y": Y1_VALUES}
THRESHOLD = {"s": S_THRESHOLD, "y": Y_THRESHOLD}
PREVIOUS_COLUMN = {"s": "_fd_prev_s", "y": "_fd_prev_y"}

# the Target page
CRITERION = "criterion"  # the mode radio
PR_T_SLIDER, TPR_TARGET, TNR_TARGET, DELTA = "pr_t_slider", "tpr_target", "tnr_target", "delta"
STRATA_RATES = "strata_rates"
STRATA_COLUMN = "strata_column"
PR_T_BOX = "pr_t_box"  # the number box's key stem (see pr_t_box_key)

# the Train page
TRAIN_MODELS, DECISION = "train_models", "decision"
EVERY_RULE = "every_rule"  # the Train page's "every model under each rule" checkbox
INCLUDE_OTHER = "include_other_criteria"
REPEATS, TRAIN_MODE, PARALLEL_JOBS = "repeats", "train_mode", "parallel_jobs"
SWEEP_FROM, SWEEP_TO, SWEEP_POINTS = "sweep_from", "sweep_to", "sweep_points"

# the Compare and Export pages
COMPARE_RUNS, COMPARE_TARGET, COMPARE_VIEW = "compare_runs", "compare_target", "compare_view"
COMPARE_SEEN = "fd_compare_seen"  # the newest run number Compare had shown: runs trained since join the kept choice
EXPORT_RUN, EXPORT_MODEL = "export_run", "export_model"
AUDIT_RUN, AUDIT_MODEL = "audit_run", "audit_model"  # the Score new data page (fairdash.app.audit)
OPEN_SESSION_FILE = "open_session_file"  # the Data page's "Open a session file" uploader (fairdash.app.session_file)
SESSION_FILE_NOTE = "fd_session_file_note"  # JobNote: what opening a session file did ("done") or why not ("failed")

# --------------------------------------------------------------------------------------------------
# What the session store keeps, and what a snapshot freezes
# --------------------------------------------------------------------------------------------------
SAVED = (TABLE, TABLE_ID, TABLE_NAME, TABLE_DESC, SPEC, TASK, TASK_KEY, RATES, SPLIT0, TARGET, TARGET_ERROR, RUNS,
         RUN, KEPT, PENDING, GUESS, PROTECTED, CHOICES_KEPT, WIDGETS_FOR, FIT_CACHE)
# the table, the task, the target and the runs (with the widget values that show them); never the session's
# fit cache (its later fits would reach the opener) nor an unconfirmed upload
SNAPSHOT = tuple(k for k in SAVED if k not in (FIT_CACHE, PENDING, GUESS, CHOICES_KEPT, WIDGETS_FOR))


# --------------------------------------------------------------------------------------------------
# Values of several parts
# --------------------------------------------------------------------------------------------------
class Keyed(NamedTuple):
    """A value cached under the key it was computed for (a task's readout, its split, a candidate task)."""
    key: Any
    value: Any


class Pending(NamedTuple):
    """An upload that waits for its columns to be confirmed."""
    df: Any
    table_id: str
    name: str


class Guess(NamedTuple):
    """The roles guessed for a new table."""
    table_id: str
    roles: Any


class KeptChoices(NamedTuple):
    """A pending upload's choice widgets' values."""
    table_id: str
    values: dict


class UploadRead(NamedTuple):
    """The last upload read: the uploader's file id, the table and its id."""
    file_id: str
    df: Any
    table_id: str


class ReportHtml(NamedTuple):
    """The Export page's report: for which run (its key and number), and its HTML."""
    run_key: Any
    number: int
    html: str


class ComparedReport(NamedTuple):
    """The Compare page's report: the runs' numbers it shows, and its HTML."""
    shown: tuple
    html: str


class JobNote(NamedTuple):
    """What became of a training: ``kind`` ("done", "failed", "cancelled") and the sentence to show."""
    kind: str
    text: str


def pr_t_box_key(ss) -> str:
    """The PR_t number box's widget key: a new key (a new version) shows a PR_t set elsewhere."""
    return f"{PR_T_BOX}_{ss.get(PR_T_BOX_VERSION, 0)}"


def show_new_pr_t(ss) -> None:
    """The number box shows the target's PR_t afresh on the next run (the one place the version moves)."""
    ss[PR_T_BOX_VERSION] = ss.get(PR_T_BOX_VERSION, 0) + 1
