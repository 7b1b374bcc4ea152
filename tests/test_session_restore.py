"""Issue 13: a reload or a shared link returns to the same task, target and run history; a session
without the link sees none of it. Issue 20: opening a link gives the opener a copy under a new token,
so the owner's session is never changed by someone else; an unknown link says so. The store itself:
unguessable tokens only, bounded by memory and age, never forgetting a live session or pushing out a
kept one for a newcomer."""
import gc

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fairdash.app.session_store import ENTRY_BYTES, SessionStore
from fairdash.app.session import LINK_COPIED, LINK_UNKNOWN
from test_app import APP, TIMEOUT, _always_run_the_frame, _cpu, _new_app, _ok  # noqa: F401 (autouse fixtures)
import app_state


def _open(query: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def _url(at: AppTest) -> dict:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def test_the_url_carries_the_session_and_the_target():
    at = _new_app()
    url = _url(at)
    assert SessionStore.valid(url["session"])
    assert url["criterion"] == "dp" and float(url["pr_t"]) == pytest.approx(app_state.pr_t(at))


def test_a_reload_returns_to_the_same_task_target_and_runs():
    a = _new_app()
    a.selectbox(key="sample_choice").set_value("compas").run()
    a.button(key="load_sample_button").click().run()
    a.switch_page("pages/target.py").run()
    a.slider(key="pr_t_slider").set_value(0.444).run()
    a.switch_page("pages/train.py").run()
    a.multiselect(key="train_models").set_value(["lr"]).run()
    a.button(key="train_button").click().run(timeout=300)
    _ok(a)
    assert len(app_state.get(a, "runs")) == 1
    url = _url(a)
    assert url["pr_t"] == "0.444"

    b = _open(url)  # F5, or the link opened in a new tab
    _ok(b)
    assert app_state.get(b, "table_id") == "sample:compas"
    assert app_state.pr_t(b) == pytest.approx(0.444)
    assert [r.number for r in app_state.get(b, "runs")] == [1]
    b.switch_page("pages/compare.py").run()
    _ok(b)
    assert not any("Nothing trained yet" in i.value for i in b.info)

    c = _new_app()  # another session, without the link
    assert app_state.get(c, "table_id") == "sample:adult"
    assert not app_state.get(c, "runs")
    assert _url(c)["session"] != url["session"]


def test_an_unknown_or_malformed_token_starts_a_fresh_session():
    for token in ("x" * 22, "../../etc/passwd"):
        at = _open({"session": token, "pr_t": "0.9"})
        _ok(at)
        assert app_state.get(at, "table_id") == "sample:adult"
        assert _url(at)["session"] != token and SessionStore.valid(_url(at)["session"])
        assert [w.value for w in at.warning] == [LINK_UNKNOWN]  # says so, in one line
    at = _open({"session": ""})
    assert _url(at)["session"] and not at.warning


def test_opening_a_link_gives_a_copy_and_never_changes_the_owners_session():
    a = _new_app()
    a.switch_page("pages/target.py").run()
    a.slider(key="pr_t_slider").set_value(0.333).run()
    a.switch_page("pages/train.py").run()
    a.multiselect(key="train_models").set_value(["lr"]).run()
    a.button(key="train_button").click().run(timeout=300)
    _ok(a)
    owner = _url(a)["session"]

    b = _open(_url(a))  # the link, opened by someone else
    _ok(b)
    assert _url(b)["session"] != owner and app_state.pr_t(b) == pytest.approx(0.333)
    assert [i.value for i in b.info if i.value == LINK_COPIED]
    b.switch_page("pages/target.py").run()
    b.slider(key="pr_t_slider").set_value(0.6).run()
    b.switch_page("pages/train.py").run()
    b.multiselect(key="train_models").set_value(["lr"]).run()
    b.button(key="train_button").click().run(timeout=300)
    _ok(b)
    assert [r.number for r in app_state.get(b, "runs")] == [1, 2]

    assert [r.number for r in app_state.get(a, "runs")] == [1]  # the owner's live session
    c = _open({"session": owner})  # and what the owner's link holds
    assert app_state.pr_t(c) == pytest.approx(0.333)
    assert [r.number for r in app_state.get(c, "runs")] == [1]


class _Owner:
    pass


def test_the_store_is_bounded_by_memory_and_answers_only_exact_tokens():
    store = SessionStore(max_bytes=ENTRY_BYTES * 3 + 3 * 100_000 + 50_000)
    tokens = [store.new_token() for _ in range(6)]
    assert len(set(tokens)) == 6 and all(store.valid(t) for t in tokens)
    kept = [store.save(t, {"table": np.zeros(12_500), "i": i}) for i, t in enumerate(tokens)]  # 100 kB each
    # the first three fit; the newcomers are not kept, and push nobody out
    assert kept == [True, True, True, False, False, False] and len(store) == 3
    assert [store.load(t)["i"] for t in tokens[:3]] == [0, 1, 2] and store.load(tokens[5]) is None
    assert store.load(tokens[2][:-1] + ("A" if tokens[2][-1] != "A" else "B")) is None
    with pytest.raises(ValueError):
        store.save("short", {})
    # shared objects (the bundled samples) are charged to nobody
    shared = np.zeros(1_000_000)
    store.share(shared)
    assert store.save(tokens[3], {"table": shared, "i": 3})


def test_the_store_forgets_by_age_but_never_a_live_session():
    store = SessionStore(max_age_s=0.0)
    t_gone, t_live = store.new_token(), store.new_token()
    owner = _Owner()
    store.save(t_gone, {"i": 0})
    store.save(t_live, {"i": 1}, owner=owner)
    assert store.load(t_gone) is None
    assert store.load(t_live) == {"i": 1} and store.live(t_live)
    del owner
    gc.collect()
    assert store.load(t_live) is None  # its browser session ended: now it ages out


def test_a_fork_copies_the_containers():
    store = SessionStore()
    token = store.new_token()
    runs = ["run 1"]
    store.save(token, {"runs": runs, "pr_t": 0.3})
    new, state = store.fork(token)
    assert new != token and store.valid(new) and state == {"runs": ["run 1"], "pr_t": 0.3}
    state["runs"].append("run 2")
    assert store.load(token)["runs"] == ["run 1"] and store.fork("x" * 22) is None
