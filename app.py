"""FairDash: the Streamlit dashboard. Run with ``streamlit run app.py``.

This file is the frame around every page: page set-up, navigation over ``pages/`` and a sidebar that
always shows the current task (:func:`main`, run for each script run). Pages are thin: widgets and session
state, calling into ``fairdash``. ``streamlit run`` also finds :data:`app` here, the ``st.App`` it serves: this
script behind FairDash's guard on Streamlit's upload endpoint (:mod:`fairdash.app.server.upload_guard`).
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # `streamlit run app.py` from anywhere finds the package
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402


def main() -> None:
    """One script run: the frame and the page."""
    st.set_page_config(page_title="FairDash: tune fairness with a target rate", page_icon="⚖️", layout="wide",
                       initial_sidebar_state="expanded")
    views.refuse_insecure_server()  # XSRF, CORS, the upload cap, however they were set (or FAIRDASH_ALLOW_INSECURE=1)
    views.warm_processes()  # the fork server that reads uploads and runs trainings, started once in the background
    # with [auth] secrets set up: nothing below runs until the user has signed in
    signin.require_sign_in(navigation.navigation)

    navigation.in_frame()
    page = navigation.navigation()

    css = ROOT / "assets" / "style.css"
    if css.exists():
        st.markdown(f"<style>{css.read_text()}</style>", unsafe_allow_html=True)

    with st.sidebar:
        st.markdown("### :material/balance: FairDash")
        st.caption("Fairness by choosing the positive rate you want (Tuning Fairness by Balancing Target Labels).")
        signin.sign_out_button()  # only while signed in

    job_slot = st.sidebar.container()  # a training's progress, on every page, above the task box
    views.sidebar_frame()
    with text.guard("Could not load the default data: "):
        workspace.ensure_state()
    with st.sidebar:
        session.keep_browser_id()  # a first visit: the browser keeps its id at once, so a reload is known as its own
    with text.guard("Could not add the finished training: "):
        jobs.collect()  # a training that ended since the last run joins the history, whatever the page
    with job_slot:
        jobs.sidebar_job()

    # The sidebar is filled before the page (a page that stops early keeps it) and again after it, so that
    # the page's changes (a new task, a new target) show at once.
    views.sidebar_summary()
    try:
        page.run()
    except text.PageEnded:
        pass  # the page had nothing more to draw (text.end_page: not st.stop, which would skip what follows)
    finally:
        views.sidebar_summary()
        session.keep_widgets()
        navigation.save_session()


if __name__ == "__main__":  # a script run (Streamlit runs this file as __main__ for each session's run)
    from fairdash.app import views  # noqa: E402
    from fairdash.app.server import jobs, session, signin  # noqa: E402
    from fairdash.app.ui import navigation, text, workspace  # noqa: E402

    main()
else:  # imported by `streamlit run app.py` to serve it: the same script behind the upload endpoint's guard
    from fairdash.app.server import upload_guard  # noqa: E402
    from fairdash.app.ui import text as app_text  # noqa: E402

    # an error no guard caught, in a page or a widget's callback: one line on the page, the trace in the log
    app = st.App(__file__, middleware=upload_guard.middleware(), on_script_error=app_text.script_error)
