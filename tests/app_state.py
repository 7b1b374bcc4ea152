"""The dashboard session's state as the tests read and set it (``streamlit.testing.v1.AppTest``): the one
place in the tests that knows the session's keys, so no test names them."""
from __future__ import annotations

from fairdash.app import target_state

KEYS = {
    "task": "fd_task", "spec": "fd_spec", "task_key": "fd_task_key", "table_id": "fd_table_id",
    "table_name": "fd_table_name", "table_desc": "fd_table_desc", "runs": "fd_runs", "run": "fd_run",
    "token": "fd_token", "pending": "fd_pending", "report_html": "fd_report_html", "fit_cache": "fd_fit_cache",
    "target": target_state.KEY,
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
