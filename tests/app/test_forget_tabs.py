"""Forget reaches every tab (issue 35, item 2): a tab of a session its owner forgot in another tab says so in
one line on its next run, whatever that run is (a widget change, a page change, a save at the end of a run),
holds nothing of the session afterwards, shows no traceback, and a refused save says why.

Two AppTests on the same address play two tabs of one browser (``one_browser``, conftest: the browser's
cookie). The browser test (tests/e2e/test_forget_tabs_browser.py) covers the Target page's fragment rerun in
Chromium."""
import numpy as np
import pandas as pd
import pytest

from fairdash.app.server import session, state
from fairdash.app.server.session import FORGOTTEN, LINK_DELETED, LINK_NOT_KEPT, NOT_OWNED
from fairdash.app.server.session_store import DELETED, FOREIGN, KEPT, NO_ROOM, SessionStore

import app_state
from app_pages import address_of, new_app, notes, ok, open_address, upload

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")

MARK = "wombat9"
# what a tab holds of its session: none of it may stay once the session is forgotten
SESSION_KEYS = (state.TABLE, state.TABLE_ID, state.TABLE_NAME, state.SPEC, state.TASK, state.RUNS, state.RUN,
                state.PENDING, state.GUESS, state.UPLOAD_READ, state.CANDIDATE, state.FIT_CACHE, state.TARGET)


def _marked_table() -> bytes:
    rng = np.random.default_rng(7)
    n = 600
    df = pd.DataFrame({f"{MARK}_group": rng.choice([f"{MARK}_a", f"{MARK}_b"], n),
                       f"{MARK}_rearrested": rng.choice(["yes", "no"], n),
                       f"{MARK}_x": rng.normal(size=n).round(4), f"{MARK}_y": rng.normal(size=n).round(4)})
    return df.to_csv(index=False).encode()


def _owner_with_upload():
    """The owner's tab on the Target page of a session whose current table is an upload marked ``MARK``."""
    at = upload(new_app(), f"{MARK}.csv", _marked_table())
    at.selectbox(key=state.S_COLUMN).set_value(f"{MARK}_group").run()
    at.selectbox(key=state.Y_COLUMN).set_value(f"{MARK}_rearrested").run()
    at.button(key="confirm_task").click().run()
    ok(at)
    assert app_state.get(at, "table_id").startswith("upload:")
    at.switch_page("pages/target.py").run()
    ok(at)
    return at


def _holds_nothing_of(at, token) -> None:
    """The tab says the owner deleted the session (one note), shows no traceback, is a new session on the
    bundled sample, and its state holds nothing of the forgotten one (no key, no value naming the upload)."""
    ok(at)
    assert LINK_NOT_KEPT not in notes(at) and NOT_OWNED not in notes(at)
    assert app_state.get(at, "token") != token and address_of(at)["session"] != token
    assert app_state.get(at, "table_id") == "sample:adult"
    assert not app_state.get(at, "runs")
    held = app_state.session(at).values(SESSION_KEYS)
    assert MARK not in repr(held.get(state.TABLE_NAME)) and state.PENDING not in held and state.UPLOAD_READ not in held
    assert MARK not in repr(held.get(state.SPEC)) and MARK not in repr(list(held.get(state.TABLE, pd.DataFrame())))
    sidebar = " ".join(str(m.value) for m in at.sidebar.markdown)
    assert MARK not in sidebar, sidebar


@pytest.fixture
def two_tabs(one_browser):
    """The owner's tab (an upload, on the Target page) and a second tab of the same session, opened from its
    address and on the Target page too; then the owner presses Forget."""
    owner = _owner_with_upload()
    url = address_of(owner)
    stale = open_address(url)
    stale.switch_page("pages/target.py").run()
    ok(stale)
    assert app_state.get(stale, "table_id") == app_state.get(owner, "table_id")  # one session, two tabs
    owner.button(key="forget_session").click().run()
    ok(owner)
    assert FORGOTTEN in notes(owner)
    return owner, stale, url["session"]


def test_a_stale_tab_moving_pr_t_says_the_owner_deleted_it_and_holds_nothing(two_tabs):
    _, stale, token = two_tabs
    stale.slider(key=state.PR_T_SLIDER).set_value(0.4).run()
    assert notes(stale) == [LINK_DELETED]  # the one line, and not "no room"
    _holds_nothing_of(stale, token)
    stale.switch_page("pages/data.py").run()  # then Data: a fresh session's page, no duplicate sidebar box
    ok(stale)
    assert app_state.get(stale, "table_id") == "sample:adult" and LINK_NOT_KEPT not in notes(stale)


def test_a_stale_tab_changing_page_says_the_owner_deleted_it_and_holds_nothing(two_tabs):
    _, stale, token = two_tabs
    stale.switch_page("pages/data.py").run()  # its next run is a page change (the sidebar box drawn once)
    assert notes(stale) == [LINK_DELETED]
    _holds_nothing_of(stale, token)


def test_a_save_refused_because_the_session_was_forgotten_says_so(two_tabs, monkeypatch):
    """Forget lands while the stale tab's run is under way (after its start followed the session): the save at
    the run's end is refused as deleted, and the tab drops the session and says why, not "no room"."""
    _, stale, token = two_tabs
    follow = session.follow_session
    monkeypatch.setattr(session, "follow_session", lambda: None)  # the run's start saw the session alive
    stale.slider(key=state.PR_T_SLIDER).set_value(0.4).run()
    monkeypatch.setattr(session, "follow_session", follow)
    assert notes(stale) == [LINK_DELETED]
    _holds_nothing_of(stale, token)


def test_the_store_says_why_a_save_is_refused():
    store = SessionStore(max_bytes=200_000)
    token, other = store.new_token(), store.new_token()
    assert store.keep(token, {"i": 1}, browser="owner-browser-id") == KEPT
    assert store.keep(token, {"i": 2}, browser="someone-else-id") == FOREIGN
    assert store.keep(other, {"big": np.zeros(50_000)}, browser="owner-browser-id") == NO_ROOM
    store.forget(token)
    assert store.deleted(token) and store.keep(token, {"i": 3}, browser="owner-browser-id") == DELETED
    assert (not store.save(token, {"i": 3}, browser="owner-browser-id")
            and store.open(token, "owner-browser-id").kind == "deleted")
