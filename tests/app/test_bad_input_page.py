"""Issue 7: every file of the bad-input corpus through the dashboard's Data page (AppTest).

The same files and expectations as ``test_bad_input.py`` (the command line and the library): a file
that must be refused shows its clear message in an error box, never an exception, and the previous
valid task (the Adult sample) stays; a file that is usable after a repair becomes the task and shows
its warning.
"""
import re

import pytest

import app_state
from app_pages import errors, new_app, ok, use
from bad_corpus import BAD, CASES

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")

ADULT = "sample:adult"


ACCEPTED = (".csv", ".tsv", ".txt", ".gz", ".parquet", ".pq", ".xlsx", ".xls")  # the uploader's types


def _upload(name: str):
    # the browser's file picker only offers accepted extensions; junk reaches us renamed, e.g. ".csv"
    shown = name if name.endswith(ACCEPTED) else name + ".csv"
    at = new_app()
    at.radio(key="data_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value((shown, (BAD / name).read_bytes(), "application/octet-stream")).run()
    ok(at)
    return at


def _matches(pattern: str, texts) -> bool:
    return any(re.search(pattern, t) for t in texts)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_file_through_the_data_page(name):
    s1, code, pattern = CASES[name]
    at = _upload(name)
    if code == 2 and _matches(pattern, errors(at)):  # refused as soon as it is read
        assert app_state.get(at, "table_id") == ADULT
        return
    # the table was read: make the same choices as the command line (s = sex, group 1 = s1; y = label, yes)
    at.selectbox(key="s_column").set_value("sex").run()
    ok(at)
    at.multiselect(key="s1_values").set_value([s1]).run()
    ok(at)
    at.selectbox(key="y_column").set_value("label").run()
    ok(at)
    at.multiselect(key="y1_values").set_value(["yes"]).run()
    ok(at)
    if code == 2:
        assert _matches(pattern, errors(at)), errors(at)
        assert any("is unchanged" in e for e in errors(at))
        spec = app_state.get(at, "spec")  # the previous valid task is kept, not the refused choice
        assert (spec.s_column, spec.s1_values, spec.y_column, spec.y1_values) != ("sex", (s1,), "label", ("yes",))
    else:
        assert not errors(at), errors(at)
        assert app_state.get(at, "table_id") == ADULT  # an upload is used only once confirmed
        use(at)  # answering first where the page asks whether a positive label is favourable
        ok(at)
        assert app_state.get(at, "table_id") != ADULT
        if pattern:
            assert _matches(pattern, [w.value for w in at.warning]), [w.value for w in at.warning]
        at.switch_page("pages/target.py").run()  # and the readouts work on it
        ok(at)
        assert not errors(at), errors(at)
