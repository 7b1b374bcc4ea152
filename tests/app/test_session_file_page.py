"""The session file in the dashboard (issue 35 item 5, through ``streamlit.testing.v1.AppTest``): the Export page
offers "Save this session"; the Data page's "Open a session file" restores, in another session with nothing of
the first, the same table, task, target and runs with the same numbers; an altered file is refused in one line
and changes nothing."""
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairdash.app.server import state
from fairdash.files import session_file as sf

import app_state
from app_pages import new_app, ok, train_lr, upload, use

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")

KEY = state.OPEN_SESSION_FILE


def _saved(at: AppTest) -> bytes:
    """The file "Save this session" downloads for ``at``'s session (the bytes its button makes when pressed)."""
    ss = app_state.session(at)
    return sf.session_bytes(table=ss.table, table_name=ss.table_name, table_description=ss.table_desc, task=ss.task,
                            target=ss.target, runs=ss.runs or [])


def _open(at: AppTest, name: str, raw: bytes) -> AppTest:
    at.switch_page("pages/data.py").run()
    at.file_uploader(key=KEY).set_value((name, raw, "application/octet-stream")).run()
    ok(at)
    return at


@pytest.mark.slow
def test_a_saved_session_opens_in_another_session_with_the_same_table_target_and_runs():
    first = new_app()
    train_lr(first, pr_t=0.3)
    first.switch_page("pages/export.py").run()
    ok(first)
    assert any(getattr(b, "label", None) == "Save this session" for b in first.get("download_button"))
    raw = _saved(first)
    before = app_state.session(first)

    other = new_app()  # a session of its own: as a fresh server after a restart, it holds nothing of the first
    assert app_state.session(other).token != before.token and not app_state.get(other, "runs", [])
    _open(other, "work.fairdash-session", raw)
    assert any("Opened work.fairdash-session" in s.value for s in other.success)
    after = app_state.session(other)
    pd.testing.assert_frame_equal(after.table, before.table)
    assert after.spec == before.spec and after.task.fingerprint == before.task.fingerprint
    assert after.target == before.target and after.target.target_rate == 0.3
    assert [r.title for r in after.runs] == [r.title for r in before.runs]
    for old, new in zip(before.runs, after.runs):
        pd.testing.assert_frame_equal(new.results, old.results)
    assert after.table_id.startswith("upload:")  # whatever the file says, its table is treated as personal data
    other.switch_page("pages/target.py").run()
    ok(other)
    assert app_state.pr_t_slider(other).value == 0.3  # the Target page shows the file's target
    for page in ("pages/compare.py", "pages/export.py", "pages/audit.py"):
        other.switch_page(page).run()
        ok(other)


def test_an_altered_session_file_is_refused_and_changes_nothing():
    at = new_app()
    raw = bytearray(_saved(at))
    raw[len(raw) // 2] ^= 0x01
    table_id = app_state.session(at).table_id
    _open(at, "altered.fairdash-session", bytes(raw))
    errors = [e.value for e in at.error]
    assert any("altered.fairdash-session" in e and "altered" in e and "This session is unchanged." in e
               for e in errors), errors
    assert app_state.session(at).table_id == table_id
    # the sentence stays on the page's next runs (a rerun right after the opening must not take it away unread)...
    at.run()
    at.switch_page("pages/target.py").run()
    at.switch_page("pages/data.py").run()
    ok(at)
    assert [e.value for e in at.error] == errors
    # ... until another table is used
    other = pd.DataFrame({"sex": ["F", "M"] * 20, "label": [0, 1, 1, 0] * 10, "age": [30, 41, 52, 63] * 10})
    upload(at, "other.csv", other)
    use(at)
    assert app_state.session(at).table_id != table_id
    assert not any("altered.fairdash-session" in e.value for e in at.error), [e.value for e in at.error]


def test_a_session_file_opened_in_the_same_rerun_as_a_column_change_opens_without_a_traceback():
    """The browser can send the uploader's file and a changed s column in one rerun: the file's callback replaces the
    session first, then the column's ran on the dropped choices and stopped the page on "The column None is not in
    the table" (a traceback, no word of the file; seen in the browser tests, CI's busy run at 387939e)."""
    first = new_app()
    raw = _saved(first)
    at = new_app()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key=KEY).set_value(("work.fairdash-session", raw, "application/octet-stream"))
    at.selectbox(key=state.S_COLUMN).set_value("race")
    at.run()
    ok(at)
    assert any("Opened work.fairdash-session" in s.value for s in at.success), [s.value for s in at.success]
    assert app_state.session(at).spec == app_state.session(first).spec  # the file's task, not the column picked


def test_a_session_file_whose_results_mean_nothing_is_refused_in_one_line_and_no_page_shows_a_traceback():
    """Issue 46, item 4: a file that passes the archive's checks but whose results member is not results rows (a
    table of plain numbers) was opened "successfully", then Train and Compare raised ``No group keys passed!``."""
    import hostile_files as hf

    first = new_app()
    train_lr(first, pr_t=0.3)
    raw = _saved(first)
    results = next(n for n in hf.members_of(raw) if n.endswith("-results.parquet"))
    crafted = hf.resealed(raw, **{results.replace(".", "__"): hf.parquet_of_plain_numbers()})
    at = new_app()
    _open(at, "odd.fairdash-session", crafted)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "odd.fairdash-session" in errors[0] and "not a FairDash results table" in errors[0]
    assert "\n" not in errors[0].split("This session is unchanged.")[0]
    assert not any("Opened odd.fairdash-session" in s.value for s in at.success)
    for page in ("pages/target.py", "pages/train.py", "pages/compare.py", "pages/export.py", "pages/audit.py"):
        at.switch_page(page).run()
        ok(at)
