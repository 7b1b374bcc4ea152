"""How it works: the method in plain language, with the equations for readers who want them
(``assets/how_it_works.md``; docs/METHOD.md is the full version)."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from fairdash.app.ui import navigation

navigation.ensure_router()
st.title("How it works")
st.markdown((Path(__file__).resolve().parent.parent / "assets" / "how_it_works.md").read_text(encoding="utf-8"))
st.caption("The full method, with the corrections to the paper's typos, is in docs/METHOD.md.")
