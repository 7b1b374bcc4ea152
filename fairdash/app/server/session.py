"""The dashboard session's memory: its state kept on the server under an unguessable token that belongs to
the browser that made it (the token and the target are in the page's URL, so a reload returns to the same
session), snapshots to share it, the run history, and widget values kept across page switches. A UI-helper
module: it imports Streamlit.

Who owns an address is told by a random id the browser keeps in a cookie (``fairdash_browser``, set by the
page itself, read through ``st.context.cookies``): the same browser (a reload, another tab) returns to the
same session; another browser with the same address gets nothing of it and is told to ask for a snapshot
link (:mod:`fairdash.app.server.session_store` keeps only a hash of the id)."""
from __future__ import annotations

import json
import secrets

import streamlit as st

from ...events import log_event
from ...settings import env_number
from . import signin, state
from .session_store import DEFAULT_MAX_BYTES, DELETED, FOREIGN, KEPT, SessionStore

SAVED = state.SAVED  # what the session store keeps
SNAPSHOT = state.SNAPSHOT
COOKIE = "fairdash_browser"


@st.cache_resource(show_spinner=False)
def _sessions():
    mb = env_number("FAIRDASH_SESSIONS_MB", DEFAULT_MAX_BYTES / 2**20, minimum=1)
    store = SessionStore(max_bytes=int(mb * 2**20))
    log_event("server_start", bytes=store.max_bytes)  # (the first session of this server process)
    return store


class _Live:
    """A marker kept in a browser session's state: while it exists, the session is live and the store
    never forgets its saved state."""


LINK_UNKNOWN = ("This link is unknown or has expired (a session is kept for a day after its last use): "
                "a new session has started.")
LINK_FOREIGN = ("This address belongs to a session in another browser and opens only there: ask its owner for a "
                "snapshot link (Share a snapshot, in their sidebar). A new session has started.")
LINK_DELETED = ("Its owner deleted this session and its snapshot links (Forget this session): nothing of it is left "
                "on the server. A new session has started.")
LINK_RESTARTED = ("The server restarted since this address was made, and sessions live in its memory only, so that "
                  "session is gone. A new session has started.")
SNAPSHOT_OPENED = ("Opened a snapshot: this is your own session, a copy of the shared one as it was when the link was "
                   "made. The owner's later work never reaches it, and yours never reaches them.")
LINK_NOT_KEPT = ("The server has no room left to keep this session for its link: it works in this tab, but a "
                 "reload or the link will not bring it back.")
NOT_OWNED = ("This session belongs to another browser now, so the server does not keep this tab's changes: a "
             "reload or the link will not bring them back.")
NOTES = {"unknown": LINK_UNKNOWN, "foreign": LINK_FOREIGN, "deleted": LINK_DELETED, "restarted": LINK_RESTARTED}


FORGOTTEN = ("This session is forgotten: its table, runs, cached fits and snapshot links are deleted from the "
             "server, and its old address opens nothing.")


def new_token() -> str:
    return _sessions().new_token()


def forget_saved(token) -> list:
    """Delete the session ``token`` and every snapshot made from it (copies others opened are theirs)."""
    return _sessions().forget(token) if token else []


def share(*objects) -> None:
    """Objects every session may hold (a bundled sample's table and task): not charged to any session."""
    _sessions().share(*objects)


# --------------------------------------------------------------------------------------------------
# The browser's id
# --------------------------------------------------------------------------------------------------
def browser_cookie() -> str | None:
    """The browser's id from its cookie, as sent when this browser session connected (``None`` when it has
    none yet, or where there is no browser: AppTest)."""
    try:
        value = st.context.cookies.get(COOKIE)
    except Exception:  # noqa: BLE001 - no client context (a bare script run)
        return None
    return value if isinstance(value, str) and 20 <= len(value) <= 100 and value.isascii() else None


def browser_id() -> str:
    """This browser's id: its cookie's, or a new one that :func:`keep_browser_id` gives the browser. With sign-in on
    (:mod:`.signin`) the signed-in user's one-way id instead: the session belongs to the user, not to a
    cookie."""
    if (owner := signin.owner_id()) is not None:
        return owner
    ss = state.current()
    if not ss.has(state.Session.browser):
        ss.browser = browser_cookie() or secrets.token_urlsafe(32)
    return ss.browser


def keep_browser_id() -> None:
    """Give the browser its id as a cookie where it has none yet (a first visit), so that a reload is
    known as the same browser. The script sets it only while the browser has no such cookie, so two tabs
    opened at once keep the first one's. Drawn in a hidden container (style.css)."""
    if browser_cookie() is not None:
        return
    value = json.dumps(browser_id())  # [A-Za-z0-9_-] only: safe inside the script
    script = (f"<script>if (!document.cookie.split('; ').some(c => c.startsWith('{COOKIE}='))) "
              f"document.cookie = '{COOKIE}=' + {value} + '; path=/; max-age=31536000; SameSite=Strict';</script>")
    with st.container(key="fd_browser_id", height=1, border=False):
        st.html(script, unsafe_allow_javascript=True)


# --------------------------------------------------------------------------------------------------
# Opening an address, keeping the session
# --------------------------------------------------------------------------------------------------
def _start_new(note: str | None) -> None:
    ss = state.current()
    ss.token = _sessions().new_token()
    if note:
        ss.link_note = note


def open_session() -> bool:
    """A new browser session (first open, a reload, a second tab, a snapshot link): returns to the session
    the URL's ``session`` token names when this browser owns it, or starts a session of its own from the
    snapshot a ``snapshot`` link names; anything else starts a new session with a one-line note of why
    (``link_note``). Returns whether a saved state was taken (then the caller applies the target the URL
    names over the saved one)."""
    ss = state.current()
    qp = st.query_params
    snap, token = qp.get("snapshot"), qp.get("session")
    store = _sessions()
    if snap:
        opened = store.open_snapshot(snap)
        if "snapshot" in qp:
            del qp["snapshot"]
        if opened.kind != "own":
            _start_new(NOTES.get(opened.kind, LINK_UNKNOWN))
            return False
        ss.put(opened.state)
        _start_new(SNAPSHOT_OPENED)
        log_event("snapshot_opened", session=ss.token)
        return True
    if not token:
        _start_new(None)
        return False
    opened = store.open(token, browser_id())
    if opened.kind != "own":
        _start_new(NOTES.get(opened.kind, LINK_UNKNOWN))
        if opened.kind in ("foreign", "deleted"):
            log_event("refusal", session=token, reason=f"address_{opened.kind}")
        return False
    ss.put(opened.state)
    ss.token = token
    ss.version = opened.version
    ss.restored = True
    return True


def reset(note: str) -> None:
    """Drop everything of this tab's session from its state (table, task, target, runs, upload, widget values,
    notes) and start a new session with ``note``; only the tab's own keys stay (``state.TAB``: its browser,
    its frame, the sidebar's slots already drawn in this run)."""
    ss = state.current()
    ss.drop(k for k in ss.keys() if k not in state.TAB)
    _start_new(note)


def _forgotten_elsewhere() -> None:
    """The owner deleted this tab's session from another tab: drop it here too, and draw the whole page afresh
    (a full rerun, also from a fragment's or a callback's run, so nothing drawn from the old state stays),
    where :func:`link_note` says so in one line."""
    log_event("refusal", session=state.current().token, reason="address_deleted", kind="stale_tab")
    reset(LINK_DELETED)
    st.rerun(scope="app")


def follow_session() -> None:
    """Every later run of a browser session, fragment reruns included: when another tab of the same session
    saved since this one last did, take its state (the session is one, whatever the number of tabs); when the
    owner deleted it from another tab, start afresh with a note (:func:`_forgotten_elsewhere`: the run stops
    there and the page is drawn again)."""
    ss = state.current()
    token = ss.token
    if not token:
        return
    store = _sessions()
    if store.deleted(token):
        _forgotten_elsewhere()
    version = store.version(token)
    if version is not None and version > ss.get(state.Session.version, version):
        opened = store.open(token, browser_id())
        if opened.kind == "own":
            ss.put(opened.state)
            ss.version = opened.version


def link_note() -> str | None:
    """What happened to the address this session was opened with (once), or ``None``."""
    return state.current().pop(state.Session.link_note)


def _keep(token: str) -> str:
    """Save this browser session's state under ``token`` (its session); what the store answered
    (``session_store.KEPT``, or why not)."""
    ss = state.current()
    store = _sessions()
    answer = store.keep(token, ss.values(SAVED), owner=ss.setdefault(state.Session.live, _Live()),
                        browser=browser_id())
    if answer == KEPT:
        ss.version = store.version(token)
    return answer


def save_session(link: dict) -> None:
    """Keep this session's state under its token and put the token and ``link`` (the target's query
    parameters; one whose value is ``None`` leaves the URL) in the URL. A refused save says why, once: the
    session was deleted from another tab (this tab drops it too and starts afresh), it belongs to another
    browser, or the server has no room."""
    ss = state.current()
    token = ss.token
    if not token:
        return
    answer = _keep(token)
    if answer == DELETED:
        _forgotten_elsewhere()
    kept = answer == KEPT
    if not kept and not ss.not_kept:
        st.warning(NOT_OWNED if answer == FOREIGN else LINK_NOT_KEPT,
                   icon=":material/warning:")  # (not a toast: it has no accessible name)
    ss.not_kept = not kept
    for k in [k for k, v in link.items() if v is None and k in st.query_params]:  # (``None``: not in the URL)
        del st.query_params[k]
    want = {"session": token, **{k: v for k, v in link.items() if v is not None}}
    if any(st.query_params.get(k) != v for k, v in want.items()):
        st.query_params.update(want)


def make_snapshot() -> str | None:
    """Freeze this session as it is now under a snapshot id (the share link's); ``None`` when the server
    could not keep it (no room)."""
    ss = state.current()
    token = ss.token
    if not token:
        return None
    if _keep(token) == DELETED:  # (the snapshot freezes the session as it is now, this run's changes included)
        _forgotten_elsewhere()  # forgotten in another tab: nothing to share, and this tab says so
    snap = _sessions().snapshot(token, SNAPSHOT)
    if snap is not None:
        log_event("snapshot", session=token)
    return snap


def remember(key: str, default) -> None:
    """Like :func:`restore`, but the widget comes back with the value the user last gave it in this
    session (Streamlit forgets a widget's state when its page is left); :func:`keep_widgets`, called
    at the end of every run, keeps those values."""
    ss = state.current()
    kept = ss.setdefault(state.Session.kept, {})
    if not ss.has_widget(key):
        ss.set_widget(key, kept.get(key, default))
    kept.setdefault(key, ss.widget(key))


def kept_value(key: str, default):
    """A remembered widget's value: its state if drawn in this run, else the value it last had."""
    ss = state.current()
    if ss.has_widget(key):
        return ss.widget(key)
    return (ss.kept or {}).get(key, default)


def remember_value(key: str, value) -> None:
    """Set the value a remembered widget comes back with (its own state, if any, is left to the caller)."""
    state.current().setdefault(state.Session.kept, {})[key] = value


def keep_widgets() -> None:
    """Keep the current values of the widgets registered with :func:`remember` (see there)."""
    ss = state.current()
    kept = ss.kept or {}
    for key in list(kept):
        if ss.has_widget(key):
            kept[key] = ss.widget(key)


def runs() -> list:
    """This session's run history (oldest first); each a :class:`fairdash.work.runs.Run`."""
    return state.current().setdefault(state.Session.runs, [])


def add_run(run) -> None:
    history = runs()
    run.number = (history[-1].number + 1) if history else 1
    same = [r.number for r in history if r.summary_parts() == run.summary_parts()]
    run.same_as = same[-1] if same else 0
    history.append(run)
    state.current().run = run
