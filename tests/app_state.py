"""The dashboard session's state as the tests read and set it (``streamlit.testing.v1.AppTest``): the tests'
short names for the session's keys, which ``fairdash.app.server.state`` (the one module that owns them) spells, so
no test names a key."""
from __future__ import annotations

from fairdash.app.server import state

NAMES = ("task", "spec", "task_key", "table_id", "table_name", "table_desc", "runs", "run", "token", "pending",
         "report_html", "fit_cache", "target")  # the typed attributes of state.Session the tests read and set


def session(at) -> state.Session:
    """The session of an ``AppTest`` behind the app's own typed accessor."""
    return state.Session(at.session_state)


def get(at, name: str, default=None):
    """The session's ``name`` (one of ``NAMES``), or ``default`` where the session has none."""
    assert name in NAMES, name
    return session(at).get(getattr(state.Session, name), default)


def has(at, name: str) -> bool:
    """Whether the session holds ``name`` (one of ``NAMES``), even as ``None``."""
    assert name in NAMES, name
    return session(at).has(getattr(state.Session, name))


def put(at, name: str, value) -> None:
    """Set the session's ``name`` before a run (an old or injected state)."""
    assert name in NAMES, name
    setattr(session(at), name, value)


def target(at):
    """The session's :class:`~fairdash.targeting.target_spec.TargetSpec`."""
    return session(at).target


def pr_t(at) -> float | None:
    """The target's PR_t (``None`` where it has none)."""
    spec = target(at)
    return None if spec is None else spec.target_rate


def pr_t_slider(at):
    """The Target page's PR_t slider (drawn from the target's PR_t: ``target_state.slider_from_target``)."""
    return at.slider(key=state.PR_T_SLIDER)
