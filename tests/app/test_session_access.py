"""Issue 37, item 2: one typed session. ``fairdash/app/server/state.py`` owns the session's keys and the one way in to
them (``state.Session``, ``state.current()``); no page, no ``app.py`` and no other glue module touches
``st.session_state`` itself."""
from __future__ import annotations

import ast
from pathlib import Path

from fairdash.app.server import state

ROOT = Path(__file__).resolve().parents[2]
OWNER = ROOT / "fairdash" / "app" / "server" / "state.py"


def _raw_accesses(path: Path) -> list[str]:
    """Every place a file reaches the session state itself: ``st.session_state`` (read, written, passed on),
    ``from streamlit import session_state``, ``getattr(st, "session_state")``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "session_state":
            found.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and any(a.name == "session_state" for a in node.names):
            found.append(node.lineno)
        elif isinstance(node, ast.Constant) and node.value == "session_state":
            found.append(node.lineno)
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    return [f"{name}:{line}" for line in found]


def _app_files() -> list[Path]:
    return [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "fairdash" / "app").rglob("*.py"))]


def test_no_raw_session_state_access_outside_the_owning_module():
    found = [hit for p in _app_files() if p != OWNER for hit in _raw_accesses(p)]
    assert not found, found


def test_the_raw_access_check_sees_what_it_should(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('import streamlit as st\nfrom streamlit import session_state\nss = st.session_state\n'
                      'st.session_state["a"] = 1\ngetattr(st, "session_state")\nstate.current().token\n')
    assert len(_raw_accesses(sample)) == 4
    assert _raw_accesses(OWNER), "the owning module is where the session state is reached"


def test_the_accessor_reads_writes_and_deletes_over_any_mapping():
    held: dict = {}
    ss = state.Session(held)
    assert ss.target is None and not ss.has(state.Session.token)
    ss.token = "t"
    assert held == {state.TOKEN: "t"} and ss.has(state.Session.token)
    assert ss.values(state.SAVED) == {} and ss.values([state.TOKEN]) == {state.TOKEN: "t"}
    del ss.token
    del ss.token  # a missing key is no error
    assert held == {} and ss.get(state.Session.table_name, "?") == "?"
    assert ss.setdefault(state.Session.runs, []) == [] and held[state.RUNS] == []


KEY_STEMS = {"PR_T_BOX", "EXPORT_MODEL", "AUDIT_MODEL"}  # a key per PR_t (target_state.pr_t_box_key) or per run
# (state.run_choice), not a key of their own


def test_every_key_has_its_typed_attribute():
    slots = {v.key for v in vars(state.Session).values() if isinstance(v, state.Slot)}
    keys = {v for n, v in vars(state).items() if n.isupper() and isinstance(v, str) and n not in KEY_STEMS}
    assert keys <= slots, sorted(keys - slots)
    assert state.run_choice(state.EXPORT_MODEL, 9) == "export_model_9" not in slots
