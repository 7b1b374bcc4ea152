"""FairDash: the Streamlit dashboard. Run with ``streamlit run app.py``.

This file is the frame around every page: page set-up, navigation over ``pages/`` and a sidebar that
always shows the current task. Pages are thin: widgets and session state, calling into ``fairdash``.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # `streamlit run app.py` from anywhere finds the package
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from fairdash import ui  # noqa: E402

st.set_page_config(page_title="FairDash: tune fairness with a target rate", page_icon="⚖️", layout="wide",
                   initial_sidebar_state="expanded")

PAGES = [
    st.Page("pages/data.py", title="Data", icon=":material/table_view:", url_path="data", default=True),
    st.Page("pages/target.py", title="Target", icon=":material/tune:", url_path="target"),
    st.Page("pages/train.py", title="Train", icon=":material/model_training:", url_path="train"),
    st.Page("pages/compare.py", title="Compare", icon=":material/bar_chart:", url_path="compare"),
    st.Page("pages/export.py", title="Export", icon=":material/download:", url_path="export"),
    st.Page("pages/how_it_works.py", title="How it works", icon=":material/menu_book:", url_path="how_it_works"),
]
page = st.navigation(PAGES, position="sidebar")

css = ROOT / "assets" / "style.css"
if css.exists():
    st.markdown(f"<style>{css.read_text()}</style>", unsafe_allow_html=True)

with st.sidebar:
    st.markdown("### :material/balance: FairDash")
    st.caption("Fairness by choosing the positive rate you want (Tuning Fairness by Balancing Target Labels).")

ui.sidebar_frame()
with ui.guard("Could not load the default data: "):
    ui.ensure_state()

# The page runs first so that its changes (a new task, a new target) show in the sidebar at once, and
# the page's content is not kept waiting for the sidebar.
try:
    page.run()
finally:
    ui.sidebar_summary()
    ui.keep_widgets()
    ui.save_session()
