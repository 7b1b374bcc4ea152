"""Issue 13: a reload or a shared link returns to the same task, target and run history; a session
without the link sees none of it. The store itself: bounded, unguessable tokens only."""
import pytest
from streamlit.testing.v1 import AppTest

from fairdash.session_store import SessionStore
from test_app import APP, TIMEOUT, _always_run_the_frame, _cpu, _new_app, _ok  # noqa: F401 (autouse fixtures)


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
    assert url["criterion"] == "dp" and float(url["pr_t"]) == pytest.approx(at.session_state["fd_pr_t"])


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
    assert len(a.session_state["fd_runs"]) == 1
    url = _url(a)
    assert url["pr_t"] == "0.444"

    b = _open(url)  # F5, or the link opened in a new tab
    _ok(b)
    assert b.session_state["fd_table_id"] == "sample:compas"
    assert b.session_state["fd_pr_t"] == pytest.approx(0.444)
    assert [r.number for r in b.session_state["fd_runs"]] == [1]
    b.switch_page("pages/compare.py").run()
    _ok(b)
    assert not any("Nothing trained yet" in i.value for i in b.info)

    c = _new_app()  # another session, without the link
    assert c.session_state["fd_table_id"] == "sample:adult"
    assert not c.session_state.get("fd_runs")
    assert _url(c)["session"] != url["session"]


def test_an_unknown_or_malformed_token_starts_a_fresh_session():
    for token in ("x" * 22, "../../etc/passwd", ""):
        at = _open({"session": token, "pr_t": "0.9"})
        _ok(at)
        assert at.session_state["fd_table_id"] == "sample:adult"
        assert _url(at)["session"] != token


def test_the_store_is_bounded_and_answers_only_exact_tokens():
    store = SessionStore(max_sessions=3)
    tokens = [store.new_token() for _ in range(5)]
    assert len(set(tokens)) == 5 and all(store.valid(t) for t in tokens)
    for i, t in enumerate(tokens):
        store.save(t, {"i": i})
    assert len(store) == 3 and store.load(tokens[0]) is None and store.load(tokens[4]) == {"i": 4}
    assert store.load(tokens[4][:-1] + ("A" if tokens[4][-1] != "A" else "B")) is None
    with pytest.raises(ValueError):
        store.save("short", {})
    old = SessionStore(max_age_s=0.0)
    old.save(tokens[0], {})
    assert old.load(tokens[0]) is None
