"""Issue 25: the address is the owner's, a share is a snapshot, Forget means forgotten.

A reload (or a second tab) in the same browser returns to the same session under the same token; the
same address opened in another browser gets nothing of it (a one-line refusal that says to ask for a
snapshot link); a snapshot link gives the opener their own session, seeded from the snapshot and never
connected to the owner's later work; Forget deletes the session and its snapshots, and every address
says so. The store: unguessable tokens only, one entry per session whatever the number of reloads,
bounded by memory and age, never forgetting a live session or pushing out a kept one for a newcomer.

AppTest has no browser and so no cookie: ``one_browser`` (conftest) plays the browser's cookie, patched into
``fairdash.app.server.session.browser_cookie`` (the one place that reads it)."""
import gc

import numpy as np
import pandas as pd
import pytest

from fairdash.app.server import session
from fairdash.app.server.session import (
    FORGOTTEN,
    LINK_DELETED,
    LINK_FOREIGN,
    LINK_NOT_KEPT,
    LINK_RESTARTED,
    LINK_UNKNOWN,
    SNAPSHOT_OPENED,
)
from fairdash.app.server.session_store import ENTRY_BYTES, SessionStore

import app_state
from app_pages import address_of, new_app, notes, ok, open_address, train_lr, upload, use

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")



def _snapshot(at) -> str:
    at.button(key="make_snapshot").click().run()
    ok(at)
    link = app_state.session(at).snapshot_link
    return link.split("snapshot=", 1)[1]


def test_the_url_carries_the_session_and_the_target():
    at = new_app()
    url = address_of(at)
    assert SessionStore.valid(url["session"])
    assert url["criterion"] == "dp" and float(url["pr_t"]) == pytest.approx(app_state.pr_t(at))


@pytest.mark.slow
def test_a_reload_returns_to_the_same_session_under_the_same_token(one_browser):
    a = new_app()
    a.selectbox(key="sample_choice").set_value("compas").run()
    train_lr(a, pr_t=0.444)
    assert len(app_state.get(a, "runs")) == 1
    url = address_of(a)
    assert url["pr_t"] == "0.444"

    b = open_address(url)  # F5, or the address opened in a second tab of the same browser
    ok(b)
    assert address_of(b)["session"] == url["session"] and not notes(b)  # the same session, not a copy
    assert app_state.get(b, "table_id") == "sample:compas"
    assert app_state.pr_t(b) == pytest.approx(0.444)
    assert [r.number for r in app_state.get(b, "runs")] == [1]
    train_lr(b, pr_t=0.5)  # a run trained in the second tab is the session's: a third reload sees both
    c = open_address(url)
    assert [r.number for r in app_state.get(c, "runs")] == [1, 2]
    a.run()  # and the first tab follows at its next rerun
    assert [r.number for r in app_state.get(a, "runs")] == [1, 2]

    d = new_app()  # a new session, without the address
    assert app_state.get(d, "table_id") == "sample:adult" and not app_state.get(d, "runs")
    assert address_of(d)["session"] != url["session"]


@pytest.mark.slow
def test_the_owners_address_in_another_browser_gives_nothing_and_says_to_ask_for_a_snapshot(one_browser):
    owner = new_app()
    owner.selectbox(key="sample_choice").set_value("compas").run()
    train_lr(owner, pr_t=0.333)
    url = address_of(owner)

    one_browser.name = "browser-B"  # someone else, with the owner's address
    other = open_address(url)
    ok(other)
    assert notes(other) == [LINK_FOREIGN]
    assert address_of(other)["session"] != url["session"]
    assert app_state.get(other, "table_id") == "sample:adult" and not app_state.get(other, "runs")

    one_browser.name = "browser-A"  # the owner goes on: a new run; the other browser still sees none of it
    train_lr(owner, pr_t=0.5)
    assert [r.number for r in app_state.get(owner, "runs")] == [1, 2]
    other.run()
    assert not app_state.get(other, "runs")
    one_browser.name = "browser-B"
    again = open_address(url)
    assert notes(again) == [LINK_FOREIGN] and not app_state.get(again, "runs")


@pytest.mark.slow
def test_a_snapshot_is_a_frozen_copy_never_connected_to_its_owner(one_browser):
    owner = new_app()
    train_lr(owner, pr_t=0.333)
    snap = _snapshot(owner)
    assert SessionStore.valid(snap) and snap != address_of(owner)["session"]

    one_browser.name = "browser-B"
    copy = open_address({"snapshot": snap})
    ok(copy)
    assert notes(copy) == [SNAPSHOT_OPENED]
    assert "snapshot" not in address_of(copy) and address_of(copy)["session"] != address_of(owner)["session"]
    assert app_state.pr_t(copy) == pytest.approx(0.333) and [r.number for r in app_state.get(copy, "runs")] == [1]
    train_lr(copy, pr_t=0.6)  # the opener's work stays theirs
    assert [r.number for r in app_state.get(copy, "runs")] == [1, 2]

    one_browser.name = "browser-A"
    train_lr(owner, pr_t=0.4)  # the owner's later work never reaches the copy, nor the snapshot
    owner.run()
    assert [r.number for r in app_state.get(owner, "runs")] == [1, 2]
    assert app_state.get(owner, "runs")[1].spec.target.target_rate == pytest.approx(0.4)
    one_browser.name = "browser-B"
    copy.run()
    assert app_state.get(copy, "runs")[1].spec.target.target_rate == pytest.approx(0.6)
    one_browser.name = "browser-C"
    late = open_address({"snapshot": snap})  # opened later: the session as it was when the link was made
    assert [r.number for r in app_state.get(late, "runs")] == [1] and app_state.pr_t(late) == pytest.approx(0.333)


@pytest.mark.slow
def test_forget_deletes_the_session_and_its_snapshots_and_every_address_says_so(one_browser):
    owner = new_app()
    train_lr(owner, pr_t=0.333)
    url, snap = address_of(owner), _snapshot(owner)
    second_tab = open_address(url)
    assert [r.number for r in app_state.get(second_tab, "runs")] == [1]
    one_browser.name = "browser-B"
    theirs = open_address({"snapshot": snap})  # a copy opened before Forget: theirs, and it stays
    one_browser.name = "browser-A"

    owner.button(key="forget_session").click().run()
    ok(owner)
    assert FORGOTTEN in notes(owner) and not app_state.get(owner, "runs")
    assert address_of(owner)["session"] != url["session"]
    second_tab.run()  # the session's other tab: deleted too, and says so
    assert LINK_DELETED in notes(second_tab) and not app_state.get(second_tab, "runs")
    for query in (url, {"session": url["session"]}, {"snapshot": snap}):
        at = open_address(query)
        assert notes(at) == [LINK_DELETED], query
        assert not app_state.get(at, "runs") and app_state.get(at, "table_id") == "sample:adult"
    one_browser.name = "browser-B"
    theirs.run()
    assert [r.number for r in app_state.get(theirs, "runs")] == [1]


@pytest.mark.slow
def test_an_unknown_malformed_or_old_token_starts_a_fresh_session(one_browser):
    store = session._sessions()
    for token, note in ((store.boot + "y" * 22, LINK_UNKNOWN), ("x" * 22, LINK_RESTARTED),
                        ("Zq9" + "x" * 23, LINK_RESTARTED), ("../../etc/passwd", LINK_UNKNOWN)):
        at = open_address({"session": token, "pr_t": "0.9"})
        ok(at)
        assert app_state.get(at, "table_id") == "sample:adult"
        assert address_of(at)["session"] != token and SessionStore.valid(address_of(at)["session"])
        assert notes(at) == [note], token  # says so, in one line
    at = open_address({"session": ""})
    assert address_of(at)["session"] and not notes(at)


@pytest.mark.slow
def test_a_5_mb_upload_survives_four_reloads_with_50_mb_for_sessions(one_browser, monkeypatch):
    monkeypatch.setenv("FAIRDASH_SESSIONS_MB", "50")
    session._sessions.clear()  # (a fresh store with that budget)
    try:
        rng = np.random.default_rng(3)
        n = 60_000
        df = pd.DataFrame({"group": rng.choice(["a", "b"], n), "label": rng.choice(["yes", "no"], n),
                           **{f"x{i}": rng.normal(size=n).round(6) for i in range(8)}})
        raw = df.to_csv(index=False).encode()
        assert 4.5e6 < len(raw) < 6e6
        at = upload(new_app(), "people.csv", raw)
        at.selectbox(key="s_column").set_value("group").run()
        at.selectbox(key="y_column").set_value("label").run()
        use(at)  # answering first where the page asks whether a positive label is favourable
        ok(at)
        table_id = app_state.get(at, "table_id")
        assert table_id.startswith("upload:")
        url = address_of(at)
        for i in range(4):
            at = open_address(url)
            ok(at)
            assert app_state.get(at, "table_id") == table_id, f"reload {i + 1}"
            assert LINK_NOT_KEPT not in notes(at)
        store = session._sessions()
        assert len(store) == 1 and store.nbytes < 50 * 2**20  # one entry, charged once
    finally:
        session._sessions.clear()


# --------------------------------------------------------------------------------------------------
# The store itself
# --------------------------------------------------------------------------------------------------
class _Owner:
    pass


def test_the_store_is_bounded_by_memory_and_answers_only_exact_tokens():
    store = SessionStore(max_bytes=ENTRY_BYTES * 3 + 3 * 100_000 + 50_000)
    tokens = [store.new_token() for _ in range(6)]
    assert len(set(tokens)) == 6 and all(store.valid(t) for t in tokens)
    kept = [store.save(t, {"table": np.zeros(12_500), "i": i}, browser="b1" * 12) for i, t in enumerate(tokens)]
    # the first three fit; the newcomers are not kept, and push nobody out
    assert kept == [True, True, True, False, False, False] and len(store) == 3
    assert [store.open(t, "b1" * 12).state["i"] for t in tokens[:3]] == [0, 1, 2]
    assert store.open(tokens[5], "b1" * 12).kind == "unknown"
    near = tokens[2][:-1] + ("A" if tokens[2][-1] != "A" else "B")
    assert store.open(near, "b1" * 12).kind == "unknown"
    with pytest.raises(ValueError):
        store.save("short", {})
    # shared objects (the bundled samples) are charged to nobody
    shared = np.zeros(1_000_000)
    store.share(shared)
    assert store.save(tokens[3], {"table": shared, "i": 3})


def test_a_session_is_one_entry_whatever_the_number_of_saves():
    store = SessionStore(max_bytes=ENTRY_BYTES + 150_000)
    token = store.new_token()
    table = np.zeros(12_500)  # 100 kB
    for i in range(10):  # ten reloads, each saving the same session
        assert store.save(token, {"table": table, "i": i}, owner=_Owner(), browser="me" * 12)
    assert len(store) == 1 and store.nbytes == ENTRY_BYTES + 100_000 and store.version(token) == 9
    # a save that no longer fits keeps the last state that did
    assert not store.save(token, {"table": np.zeros(50_000), "i": 10}, browser="me" * 12)
    assert store.open(token, "me" * 12).state["i"] == 9


def test_only_the_owners_browser_opens_or_saves_a_session():
    store = SessionStore()
    token = store.new_token()
    assert store.save(token, {"i": 1}, browser="owner-browser-id")
    assert store.open(token, "owner-browser-id").kind == "own"
    assert store.open(token, "someone-else-id").kind == "foreign" and store.open(token, "someone-else-id").state is None
    assert store.open(token, None).kind == "foreign"
    assert not store.save(token, {"i": 2}, browser="someone-else-id")  # cannot write either
    assert store.open(token, "owner-browser-id").state == {"i": 1}


def test_snapshots_copy_the_containers_and_are_deleted_with_their_session():
    store = SessionStore()
    token = store.new_token()
    runs = ["run 1"]
    store.save(token, {"runs": runs, "pr_t": 0.3, "cache": object()}, browser="owner-id")
    snap = store.snapshot(token, ("runs", "pr_t"))
    opened = store.open_snapshot(snap)
    assert opened.kind == "own" and opened.state == {"runs": ["run 1"], "pr_t": 0.3}  # no cache
    opened.state["runs"].append("run 2")
    runs.append("owner's run 2")
    assert store.open_snapshot(snap).state["runs"] == ["run 1"]  # frozen, both ways
    assert store.open(snap, "owner-id").kind == "unknown"  # a snapshot id is no session address
    assert store.open_snapshot(token).kind == "unknown"  # nor the reverse
    gone = store.forget(token)
    assert set(gone) == {token, snap}
    assert store.open(token, "owner-id").kind == "deleted" and store.open_snapshot(snap).kind == "deleted"
    assert not store.save(token, {"i": 1}, browser="owner-id")  # a stale tab cannot bring it back
    assert len(store) == 0


def test_a_token_of_an_earlier_server_process_says_the_server_restarted():
    before, after = SessionStore(), SessionStore()
    token = before.new_token()
    before.save(token, {"i": 1}, browser="b" * 24)
    assert after.open(token, "b" * 24).kind == "restarted" or after.boot == before.boot
    assert after.open("x" * 22, "b" * 24).kind == "restarted"  # the format before boot ids
    assert after.open(after.boot + "q" * 22, "b" * 24).kind == "unknown"


def test_the_store_forgets_by_age_but_never_a_live_session():
    store = SessionStore(max_age_s=0.0)
    t_gone, t_live = store.new_token(), store.new_token()
    owner = _Owner()
    store.save(t_gone, {"i": 0}, browser="b" * 24)
    store.save(t_live, {"i": 1}, owner=owner, browser="b" * 24)
    assert store.open(t_gone, "b" * 24).kind == "unknown"
    assert store.open(t_live, "b" * 24).state == {"i": 1} and store.live(t_live)
    del owner
    gc.collect()
    assert store.open(t_live, "b" * 24).kind == "unknown"  # its browser sessions ended: now it ages out


def test_a_snapshot_restores_the_choices_kept_on_its_pages(one_browser):
    """Issue 36, item 4: what the owner chose on a page is in the snapshot too: the sample list's choice and
    Compare's selection of runs (the first run only, where a first visit shows the newest)."""
    owner = new_app()
    owner.selectbox(key="sample_choice").set_value("compas").run()
    train_lr(owner, pr_t=0.35)
    train_lr(owner, pr_t=0.45)
    owner.switch_page("pages/compare.py").run()
    owner.multiselect(key="compare_runs").set_value([1]).run()
    ok(owner)
    snap = _snapshot(owner)

    one_browser.name = "browser-B"
    copy = open_address({"snapshot": snap})
    ok(copy)
    assert app_state.get(copy, "table_id") == "sample:compas"
    copy.switch_page("pages/data.py").run()
    assert copy.selectbox(key="sample_choice").value == "compas"
    copy.switch_page("pages/compare.py").run()
    ok(copy)
    assert copy.multiselect(key="compare_runs").value == [1]
