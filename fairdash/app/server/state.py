"""The dashboard session's keys: the one module that names what ``st.session_state`` holds (issue 28, item 4).

Every page, ``app.py`` and the glue modules of ``fairdash.app`` read and write the session through these
names, never through a string of their own (``tests/test_structure.py`` checks it); the tests read them too
(``tests/app_state.py``). A value that holds several parts is a named tuple, so no reader counts positions.
Widget keys that are read back from the session (``key=`` of a widget, then read through :class:`Session`) are
named here as well.

Issue 37, item 2: :class:`Session` is the one way in to the session, a typed attribute per key (``ss.target``,
``ss.runs``, ``del ss.pending``) over a mapping: ``st.session_state`` in the app (:func:`current`), a dict or an
``AppTest``'s ``session_state`` in the tests. No other module touches ``st.session_state``
(``tests/app/test_session_access.py``). The module imports Streamlit only inside :func:`current`."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar, overload

if TYPE_CHECKING:
    import pandas as pd

    from fairdash.analysis.rates import TrainingRates
    from fairdash.data.split import Split
    from fairdash.data.task import Task, TaskSpec
    from fairdash.files.audit import Audit
    from fairdash.targeting.target_spec import TargetSpec
    from fairdash.work.runs import Run

# --------------------------------------------------------------------------------------------------
# The working table and its task (``workspace.set_task``)
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
SIGNIN_LOGGED = "fd_signin_logged"  # the owner id already logged as signed in for this browser session
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
PR_T_BOX = "pr_t_box"  # the number box's key stem (target_state.pr_t_box_key: the stem and the PR_t)

# the Train page
TRAIN_MODELS, DECISION = "train_models", "decision"
EVERY_RULE = "every_rule"  # the Train page's "every model under each rule" checkbox
INCLUDE_OTHER = "include_other_criteria"
REPEATS, TRAIN_MODE, PARALLEL_JOBS = "repeats", "train_mode", "parallel_jobs"
SWEEP_FROM, SWEEP_TO, SWEEP_POINTS = "sweep_from", "sweep_to", "sweep_points"

# the Compare and Export pages
COMPARE_RUNS, COMPARE_TARGET, COMPARE_VIEW = "compare_runs", "compare_target", "compare_view"
COMPARE_TABLE = "compare_table"  # the table (task fingerprint) Compare draws where the chosen runs span several
COMPARE_CALIBRATION = "calibration_model"  # the model Compare's calibration figure is of: (run number, model key)
COMPARE_MODELS, COMPARE_RULES = "compare_models", "compare_rules"  # Compare's filter of the shown rows
COMPARE_SEEN = "fd_compare_seen"  # the newest run number Compare had shown: runs trained since join the kept choice
EXPORT_RUN = "export_run"
AUDIT_RUN = "audit_run"  # the Score new data page (fairdash.app.audit)
EXPORT_MODEL, AUDIT_MODEL = "export_model", "audit_model"  # key stems: the model chosen, one key per run (run_choice)
OPEN_SESSION_FILE = "open_session_file"  # the Data page's "Open a session file" uploader (fairdash.app.session_file)
SESSION_FILE_NOTE = "fd_session_file_note"  # (JobNote, table id): what opening a session file did (DONE) or why
# not (FAILED), and the table the session then held

# --------------------------------------------------------------------------------------------------
# What the session store keeps, and what a snapshot freezes
# --------------------------------------------------------------------------------------------------
SAVED = (TABLE, TABLE_ID, TABLE_NAME, TABLE_DESC, SPEC, TASK, TASK_KEY, RATES, SPLIT0, TARGET, TARGET_ERROR, RUNS,
         RUN, KEPT, COMPARE_SEEN, PENDING, GUESS, PROTECTED, CHOICES_KEPT, WIDGETS_FOR, FIT_CACHE)
# the table, the task, the target and the runs (with the widget values that show them, and the newest run Compare
# had shown when its choice was kept: a run trained after a reload joins that choice); never the session's
# fit cache (its later fits would reach the opener) nor an unconfirmed upload
SNAPSHOT = tuple(k for k in SAVED if k not in (FIT_CACHE, PENDING, GUESS, CHOICES_KEPT, WIDGETS_FOR))


# --------------------------------------------------------------------------------------------------
# Values of several parts
# --------------------------------------------------------------------------------------------------
_K = TypeVar("_K")
_V = TypeVar("_V")


class Keyed(NamedTuple, Generic[_K, _V]):
    """A value cached under the key it was computed for (a task's readout, its split, a candidate task)."""
    key: _K
    value: _V


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


class JobState(StrEnum):
    """Where a training stands (``RUNNING``, waiting in the queue included) and what became of it; what opening a
    session file did (``DONE``) or why not (``FAILED``). A ``StrEnum``: each equals the word it always was."""
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class JobNote(NamedTuple):
    """What became of a training (or of opening a session file): its :class:`JobState` and the sentence to show."""
    kind: JobState
    text: str




# --------------------------------------------------------------------------------------------------
# The typed accessor (issue 37, item 2): the one way in to the session's values
# --------------------------------------------------------------------------------------------------
_T = TypeVar("_T")


def run_choice(key: str, number: int) -> str:
    """The key of a choice that depends on a run (the model of run ``number`` on Export and Score new data): one per
    run, so switching runs never carries one run's choice over to another's list (issue 47: the box read
    "FairLR, PR_t 0.900" of run 9 while run 1's LR downloaded), and a run's own choice is kept."""
    return f"{key}_{int(number)}"


class Slot(Generic[_T]):
    """One key of the session as a typed attribute of :class:`Session`: read (``None``, or the slot's default,
    where the session has none), written, deleted (a missing key is no error)."""

    def __init__(self, key: str, default: Any = None) -> None:
        self.key, self.default = key, default

    @overload
    def __get__(self, obj: None, owner: type) -> Slot[_T]: ...
    @overload
    def __get__(self, obj: Session, owner: type) -> _T: ...

    def __get__(self, obj, owner):
        if obj is None:
            return self
        return obj.widget(self.key, self.default)

    def __set__(self, obj: Session, value: _T) -> None:
        obj.set_widget(self.key, value)

    def __delete__(self, obj: Session) -> None:
        obj.remove(self.key)


class Session:
    """The session's values, typed, over a mapping: ``st.session_state`` in the app (:func:`current`), a dict or
    AppTest's ``session_state`` in the tests. No other module reads or writes the session but through it
    (``tests/app/test_session_access.py``); a widget's key is still the string its ``key=`` is given."""

    # the working table and its task
    table: Slot[pd.DataFrame] = Slot(TABLE)
    table_id: Slot[str] = Slot(TABLE_ID)
    table_name: Slot[str] = Slot(TABLE_NAME)
    table_desc: Slot[str] = Slot(TABLE_DESC)
    spec: Slot[TaskSpec] = Slot(SPEC)
    task: Slot[Task] = Slot(TASK)
    task_key: Slot[Any] = Slot(TASK_KEY)
    rates: Slot[Keyed[Any, TrainingRates]] = Slot(RATES)
    split0: Slot[Keyed[Any, Split]] = Slot(SPLIT0)
    candidate: Slot[Keyed[Any, Task]] = Slot(CANDIDATE)
    protected: Slot[Any] = Slot(PROTECTED)
    pending: Slot[Pending] = Slot(PENDING)
    guess: Slot[Guess] = Slot(GUESS)
    choices_kept: Slot[KeptChoices] = Slot(CHOICES_KEPT)
    widgets_for: Slot[str] = Slot(WIDGETS_FOR)
    upload_read: Slot[UploadRead] = Slot(UPLOAD_READ)
    # the target
    target: Slot[TargetSpec] = Slot(TARGET)
    target_error: Slot[str] = Slot(TARGET_ERROR)
    target_changed: Slot[str] = Slot(TARGET_CHANGED)
    readout_ms: Slot[float] = Slot(READOUT_MS)
    # runs, jobs, exports
    runs: Slot[list[Run]] = Slot(RUNS)
    run: Slot[Run] = Slot(RUN)
    fit_cache: Slot[Any] = Slot(FIT_CACHE)
    report_html: Slot[ReportHtml] = Slot(REPORT_HTML)
    compare_report: Slot[ComparedReport] = Slot(COMPARE_REPORT)
    compare_rows: Slot[Keyed[tuple, pd.DataFrame]] = Slot(COMPARE_ROWS)
    audited: Slot[Keyed[tuple, Audit]] = Slot(AUDITED)
    job_note: Slot[JobNote] = Slot(JOB_NOTE)
    job_outcome: Slot[JobNote] = Slot(JOB_OUTCOME)
    # the session itself
    token: Slot[str] = Slot(TOKEN)
    link_note: Slot[str] = Slot(LINK_NOTE)
    restored: Slot[bool] = Slot(RESTORED)
    version: Slot[int] = Slot(VERSION)
    browser: Slot[str] = Slot(BROWSER)
    live: Slot[Any] = Slot(LIVE)
    not_kept: Slot[bool] = Slot(NOT_KEPT)
    kept: Slot[dict] = Slot(KEPT)
    in_frame: Slot[bool] = Slot(IN_FRAME)
    sidebar: Slot[Any] = Slot(SIDEBAR)
    snapshot_link: Slot[str] = Slot(SNAPSHOT_LINK)
    signin_logged: Slot[str] = Slot(SIGNIN_LOGGED)
    # the Data page's widgets
    s_column: Slot[str] = Slot(S_COLUMN)
    y_column: Slot[str] = Slot(Y_COLUMN)
    s1_values: Slot[list] = Slot(S1_VALUES)
    y1_values: Slot[list] = Slot(Y1_VALUES)
    s_threshold: Slot[float] = Slot(S_THRESHOLD)
    y_threshold: Slot[float] = Slot(Y_THRESHOLD)
    features: Slot[list] = Slot(FEATURES)
    missing: Slot[str] = Slot(MISSING)
    positive_meaning: Slot[str] = Slot(POSITIVE_MEANING)
    positive_is: Slot[str] = Slot(POSITIVE_IS)
    s_mode: Slot[str] = Slot(S_MODE)
    s_with: Slot[list] = Slot(S_WITH)
    group_labels: Slot[str] = Slot(GROUP_LABELS)
    protected_group: Slot[Any] = Slot(PROTECTED_GROUP)
    data_source: Slot[str] = Slot(DATA_SOURCE)
    sample_chosen: Slot[bool] = Slot(SAMPLE_CHOSEN)
    # the Target page's widgets
    criterion: Slot[str] = Slot(CRITERION)
    pr_t_slider: Slot[float] = Slot(PR_T_SLIDER)
    tpr_target: Slot[float] = Slot(TPR_TARGET)
    tnr_target: Slot[float] = Slot(TNR_TARGET)
    delta: Slot[float] = Slot(DELTA)
    strata_rates: Slot[Any] = Slot(STRATA_RATES)
    strata_column: Slot[str] = Slot(STRATA_COLUMN)
    # the Train page's widgets
    train_models: Slot[list] = Slot(TRAIN_MODELS)
    decision: Slot[str] = Slot(DECISION)
    every_rule: Slot[bool] = Slot(EVERY_RULE)
    include_other: Slot[bool] = Slot(INCLUDE_OTHER)
    repeats: Slot[int] = Slot(REPEATS)
    train_mode: Slot[str] = Slot(TRAIN_MODE)
    parallel_jobs: Slot[int] = Slot(PARALLEL_JOBS)
    sweep_from: Slot[float] = Slot(SWEEP_FROM)
    sweep_to: Slot[float] = Slot(SWEEP_TO)
    sweep_points: Slot[int] = Slot(SWEEP_POINTS)
    # the Compare, Export and Score pages' widgets
    compare_runs: Slot[list] = Slot(COMPARE_RUNS)
    compare_target: Slot[float] = Slot(COMPARE_TARGET)
    compare_view: Slot[str] = Slot(COMPARE_VIEW)
    compare_seen: Slot[int] = Slot(COMPARE_SEEN)
    compare_table: Slot[str] = Slot(COMPARE_TABLE)
    compare_calibration: Slot[tuple] = Slot(COMPARE_CALIBRATION)
    compare_models: Slot[list] = Slot(COMPARE_MODELS)
    compare_rules: Slot[list] = Slot(COMPARE_RULES)
    export_run: Slot[int] = Slot(EXPORT_RUN)
    audit_run: Slot[int] = Slot(AUDIT_RUN)
    open_session_file: Slot[Any] = Slot(OPEN_SESSION_FILE)
    session_file_note: Slot[tuple] = Slot(SESSION_FILE_NOTE)

    def __init__(self, mapping: Any) -> None:  # a MutableMapping, or AppTest's session_state (no pop)
        self._mapping = mapping

    def has(self, slot: Slot) -> bool:
        """Whether the session holds ``slot`` (``Session.token``), even as ``None``."""
        return slot.key in self._mapping

    def get(self, slot: Slot[_T], default: _T) -> _T:
        """``slot``'s value, or ``default`` where the session holds none."""
        return self._mapping.get(slot.key, default)

    def setdefault(self, slot: Slot[_T], default: _T) -> _T:
        """``slot``'s value, set to ``default`` first where the session holds none."""
        if slot.key not in self._mapping:
            self._mapping[slot.key] = default
        return self._mapping[slot.key]

    def pop(self, slot: Slot[_T]) -> _T | None:
        """``slot``'s value (``None`` where none), removed from the session."""
        value = self._mapping.get(slot.key)
        self.remove(slot.key)
        return value

    def values(self, keys: Iterable[str]) -> dict[str, Any]:
        """The values the session holds under ``keys`` (the store's and a snapshot's: :data:`SAVED`)."""
        return {k: self._mapping[k] for k in keys if k in self._mapping}

    def put(self, values: Mapping[str, Any]) -> None:
        """Set every key of ``values`` (a stored or opened session's state)."""
        for k, v in values.items():
            self._mapping[k] = v

    def drop(self, keys: Iterable[str]) -> None:
        """Remove ``keys`` where the session holds them."""
        for k in list(keys):
            self.remove(k)

    def remove(self, key: str) -> None:
        """Remove ``key`` where the session holds it."""
        try:
            del self._mapping[key]
        except KeyError:
            pass

    def keys(self) -> list[str]:
        """Every key the session holds now."""
        return list(self._mapping.keys())

    # a role's ("s" or "y") widgets on the Data page
    def role_column(self, role: str) -> Any:
        return self._mapping.get(COLUMN[role])

    def set_role_values(self, role: str, values: list) -> None:
        self._mapping[VALUES[role]] = values

    def set_role_threshold(self, role: str, value: float) -> None:
        self._mapping[THRESHOLD[role]] = value

    def previous_column(self, role: str) -> Any:
        return self._mapping.get(PREVIOUS_COLUMN[role])

    def set_previous_column(self, role: str, column: Any) -> None:
        self._mapping[PREVIOUS_COLUMN[role]] = column

    # a widget the caller names by its key (a key built from a row's name, a module's own key)
    def widget(self, key: str, default: Any = None) -> Any:
        return self._mapping.get(key, default)

    def set_widget(self, key: str, value: Any) -> None:
        self._mapping[key] = value

    def has_widget(self, key: str) -> bool:
        return key in self._mapping


def current() -> Session:
    """The running app's session (``st.session_state``) behind the typed accessor."""
    import streamlit as st  # lazy: this module of names stays importable without Streamlit (tests/app_state.py)
    return Session(st.session_state)

