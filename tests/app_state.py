"""The dashboard session's state as the tests read and set it (``streamlit.testing.v1.AppTest``): the tests'
short names for the session's keys, which ``fairdash.app.state`` (the one module that owns them) spells, so
no test names a key."""
from __future__ import annotations

from fairdash.app import state

KEYS = {
    "task": state.TASK, "spec": state.SPEC, "task_key": state.TASK_KEY, "table_id": state.TABLE_ID,
    "table_name": state.TABLE_NAME, "table_desc": state.TABLE_DESC, "runs": state.RUNS, "run": state.RUN,
    "token": state.TOKEN, "pending": state.PENDING, "report_html": state.REPORT_HTML, "fit_cache": state.FIT_CACHE,
    "target": state.TARGET,
}


def get(at, name: str, default=None):
    """The session's ``name`` (a key of ``KEYS``), or ``default`` where the session has none."""
    try:
        return at.session_state[KEYS[name]]
    except KeyError:
        return default


def put(at, name: str, value) -> None:
    """Set the session's ``name`` before a run (an old or injected state)."""
    at.session_state[KEYS[name]] = value


def target(at):
    """The session's :class:`~fairdash.target.target_spec.TargetSpec`."""
    return get(at, "target")


def pr_t(at) -> float | None:
    """The target's PR_t (``None`` where it has none)."""
    spec = target(at)
    return None if spec is None else spec.target_rate
