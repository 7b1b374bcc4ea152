"""Issue 46, item 4 and issue 48, item 4: an error no guard caught, in a page or in a widget's callback, is one line
on the page and a trace in the server's log (``text.script_error``, Streamlit's ``on_script_error`` of the
``st.App`` that app.py serves). AppTest runs a script, not the ``st.App``, so here the handler is called where
Streamlit calls it (in the script run, for a callback's error too) and app.py is checked to hand it over."""
import ast
import logging
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def _raising_callback_script():
    import streamlit as st

    from fairdash.app.ui import text

    def boom():
        raise ValueError("a callback's own failure\n  File \"/srv/fairdash/secret_path.py\", line 3")

    try:  # what Streamlit does with an error in a callback: hands it to on_script_error, in the script run
        if st.button("Go", key="go", on_click=None):
            boom()
    except ValueError as exc:
        st.session_state["handled"] = text.script_error(exc)


def test_a_callbacks_error_is_one_line_and_its_trace_goes_to_the_log(caplog):
    at = AppTest.from_function(_raising_callback_script).run()
    with caplog.at_level(logging.ERROR, logger="fairdash.app"):
        at.button(key="go").click().run()
    assert not at.exception
    assert at.session_state["handled"] is True
    [error] = [e.value for e in at.error]
    assert error.startswith("Something unexpected went wrong (ValueError: a callback") and "\n" not in error
    assert "secret" not in error and "File" not in error  # the trace's lines stay in the log
    assert any(r.exc_info and "secret_path" in str(r.exc_info[1]) for r in caplog.records)


def test_app_py_hands_the_handler_and_the_upload_guard_to_st_app():
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "App"]
    assert len(calls) == 1
    keywords = {k.arg: ast.unparse(k.value) for k in calls[0].keywords}
    assert keywords == {"middleware": "upload_guard.middleware()", "on_script_error": "app_text.script_error"}
