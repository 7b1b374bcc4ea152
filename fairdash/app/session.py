"""The dashboard session's memory: its state kept on the server under an unguessable token (with the
token and the target in the page's URL, so a reload or a shared link returns to it), the run history,
and widget values kept across page switches. A UI-helper module: it imports Streamlit."""
from __future__ import annotations

import os

import streamlit as st

SAVED = ("fd_table", "fd_table_id", "fd_table_name", "fd_table_desc", "fd_spec", "fd_task", "fd_task_key", "fd_rates",
         "fd_split0", "fd_target", "fd_target_error", "fd_runs", "fd_run", "_fd_kept", "fd_pending", "fd_guess", "fd_protected",
         "fd_choices_kept", "fd_widgets_for")


@st.cache_resource(show_spinner=False)
def _sessions():
    from .session_store import SessionStore

    mb = os.environ.get("FAIRDASH_SESSIONS_MB", "")
    return SessionStore(max_bytes=int(float(mb) * 2**20)) if mb.strip() else SessionStore()


class _Live:
    """A marker kept in a browser session's state: while it exists, the session is live and the store
    never forgets its saved state."""


LINK_UNKNOWN = ("This link is unknown or has expired (a session is kept for a day after its last use): "
                "a new session has started.")
LINK_COPIED = "Opened from a link: this is your own copy, and your changes do not change the session you opened."
LINK_NOT_KEPT = ("The server has no room left to keep this session for its link: it works in this tab, but a "
                 "reload or the link will not bring it back.")


FORGOTTEN = ("This session is forgotten: its table, runs and cached fits are deleted from the server, and its old "
             "link opens nothing.")


def new_token() -> str:
    return _sessions().new_token()


def forget_saved(token) -> None:
    """Delete what the store keeps under ``token`` (this session's own state; copies others opened are theirs)."""
    _sessions().forget(token)


def share(*objects) -> None:
    """Objects every session may hold (a bundled sample's table and task): not charged to any session."""
    _sessions().share(*objects)


def restore_session() -> bool:
    """A new browser session (first open, a reload, a shared link): a copy, under a new token, of the state
    saved under the URL's ``session`` token if there is one. The link's own
    session is never written by the opener; an unknown or expired token says so (``link_note``) and is
    replaced in the URL by the new session's token at the end of the run. Returns whether a saved session
    was copied (then the caller applies the target the URL names over the saved one)."""
    ss = st.session_state
    qp = st.query_params
    token = qp.get("session")
    forked = _sessions().fork(token) if token else None
    if forked is None:
        ss["fd_token"] = _sessions().new_token()
        if token:
            ss["fd_link_note"] = LINK_UNKNOWN
        return False
    new_token, state = forked
    ss.update(state)
    ss["fd_token"] = new_token
    ss["fd_copied_from"] = token  # a training still running there belongs to this copy too (jobs)
    ss["fd_restored"] = True
    ss["fd_link_note"] = LINK_COPIED
    return True


def link_note() -> str | None:
    """What happened to the link this session was opened with (once), or ``None``."""
    return st.session_state.pop("fd_link_note", None)


def save_session(link: dict) -> None:
    """Keep this session's state under its token and put the token and ``link`` (the target's query
    parameters) in the URL."""
    ss = st.session_state
    token = ss.get("fd_token")
    if not token:
        return
    owner = ss.setdefault("_fd_live", _Live())
    kept = _sessions().save(token, {k: ss[k] for k in SAVED if k in ss}, owner=owner)
    if not kept and not ss.get("_fd_not_kept"):
        st.warning(LINK_NOT_KEPT, icon=":material/warning:")  # (not a toast: it has no accessible name)
    ss["_fd_not_kept"] = not kept
    want = {"session": token, **link}
    if any(st.query_params.get(k) != v for k, v in want.items()):
        st.query_params.update(want)


def remember(key: str, default) -> None:
    """Like :func:`restore`, but the widget comes back with the value the user last gave it in this
    session (Streamlit forgets a widget's state when its page is left); :func:`keep_widgets`, called
    at the end of every run, keeps those values."""
    ss = st.session_state
    kept = ss.setdefault("_fd_kept", {})
    if key not in ss:
        ss[key] = kept.get(key, default)
    kept.setdefault(key, ss[key])


def kept_value(key: str, default):
    """A remembered widget's value: its state if drawn in this run, else the value it last had."""
    ss = st.session_state
    if key in ss:
        return ss[key]
    return (ss.get("_fd_kept") or {}).get(key, default)


def remember_value(key: str, value) -> None:
    """Set the value a remembered widget comes back with (its own state, if any, is left to the caller)."""
    st.session_state.setdefault("_fd_kept", {})[key] = value


def keep_widgets() -> None:
    """Keep the current values of the widgets registered with :func:`remember` (see there)."""
    ss = st.session_state
    kept = ss.get("_fd_kept") or {}
    for key in list(kept):
        if key in ss:
            kept[key] = ss[key]


def runs() -> list:
    """This session's run history (oldest first); each a :class:`fairdash.runs.Run`."""
    return st.session_state.setdefault("fd_runs", [])


def add_run(run) -> None:
    history = runs()
    run.number = (history[-1].number + 1) if history else 1
    same = [r.number for r in history if r.summary_parts() == run.summary_parts()]
    run.same_as = same[-1] if same else 0
    history.append(run)
    st.session_state["fd_run"] = run
