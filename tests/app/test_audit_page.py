"""The Score new data page (issue 36, item 3) through streamlit.testing.v1.AppTest: with no run it says what to do;
with a run of the session, an uploaded table with a drifted column is scored, the warning names the column, the
rates per group are shown against the run's target (never NaN), and the decisions offered for download are the
file `fairdash predict` writes; a missing column, an empty file and a table over the upload budget are one-line
errors, never a traceback; nothing of the upload is kept in what the session store saves."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairdash import data
from fairdash.app.server import state
from fairdash.files.export import save_model
from fairdash.files.run_spec import RunSpec
from fairdash.targeting.target_spec import TargetSpec
from fairdash.work.runs import train_run

import app_state
from app_pages import APP, TIMEOUT

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")

ROOT = Path(__file__).resolve().parents[2]
PAGE = "pages/audit.py"


@pytest.fixture(scope="module")
def compas_run():
    """FairLR on the paper's COMPAS set-up (s = race, y = two-year-recid) at PR_t 0.4, trained once."""
    task = data.paper_task("compas-race")
    spec = RunSpec(data="compas", task=task.spec, target=TargetSpec(criterion="dp", target_rate=0.4),
                   models=("fair-lr",), target_rates=(0.4,), seeds=(0,), group_names=task.group_names)
    run = train_run(task, spec, data_name="COMPAS")
    run.number = 1
    return run


def _drifted() -> pd.DataFrame:
    df = data.load_sample("compas").sample(400, random_state=2).reset_index(drop=True)
    df.loc[:24, "age"] = df.loc[:24, "age"] + 300
    return df


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _shown(markdown: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")


def _page_with_run(run) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    app_state.put(at, "runs", [run])
    app_state.put(at, "run", run)
    at.switch_page(PAGE).run()
    _ok(at)
    return at


def _upload(at: AppTest, name: str, payload: bytes) -> AppTest:
    at.file_uploader(key="audit_upload").set_value((name, payload, "text/csv")).run()
    _ok(at)
    return at


def _everything_shown(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success") for e in at.get(kind)]
    frames = [d.value.to_string() for d in at.dataframe]
    return _shown(" ".join(map(str, parts))) + " ".join(frames)


def test_without_a_run_the_page_says_to_train_first():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page(PAGE).run()
    _ok(at)
    assert at.title[0].value == "Score new data"
    assert any("Nothing trained yet" in i.value for i in at.info)
    assert not at.error


@pytest.mark.slow
def test_a_drifted_table_is_warned_by_column_rated_per_group_and_its_decisions_are_predict_s(compas_run, tmp_path):
    at = _page_with_run(compas_run)
    assert not at.error and any("Upload a table" in i.value for i in at.info)
    table = tmp_path / "next_month.csv"
    _drifted().to_csv(table, index=False)
    _upload(at, table.name, table.read_bytes())
    assert not at.error, [e.value for e in at.error]
    warnings = [_shown(w.value) for w in at.warning]
    age = [w for w in warnings if "'age'" in w]  # one line a column: its drift, with the far rows (issue 47, item 8)
    assert len(age) == 1 and age[0].startswith("Drift in column 'age': 25 of 400 rows"), warnings
    assert "outside the training range" in age[0] and "other units?" in age[0]
    drift = next(d.value for d in at.dataframe if "shift from training" in d.value.columns)
    assert drift.set_index("feature").loc["age", "drifted"] == "yes" and "out of range (95% interval)" in drift
    # the rates per group, against the run's target, as a sentence and a table; never NaN
    text = _everything_shown(at)
    assert "Non-Caucasian: positive rate" in text and "against target 0.400" in text
    rates = next(d.value for d in at.dataframe if "positive rate" in d.value.columns)
    assert list(rates["group"]) == ["Non-Caucasian", "Caucasian"] and rates["rows"].sum() == 400
    assert {"TPR", "FPR", "FNR", "accuracy"} <= set(rates.columns)
    assert "nan" not in text.lower().replace("non-caucasian", "")
    charts = [c.proto.id for c in at.get("plotly_chart")]
    assert any("audit_fig_target" in c for c in charts) and any("audit_fig_pr" in c for c in charts), charts
    assert [d for d in at.get("download_button") if d.proto.label == "Download the decisions (CSV)"]
    # the file offered is the one `fairdash predict` writes for this table and the run's model file
    offered = app_state.session(at).audited.value
    model = save_model(next(iter(compas_run.models.values())), tmp_path / "model.fairdash")
    subprocess.run([sys.executable, "-m", "fairdash", "predict", "--model", str(model), "--data", str(table),
                    "--out", str(tmp_path / "out.csv")], cwd=ROOT, check=True, capture_output=True)
    from fairdash.files.audit import decisions_csv

    assert decisions_csv(offered.scored) == (tmp_path / "out.csv").read_text(encoding="utf-8")
    # nothing of the upload is in what the session store keeps
    assert state.AUDITED not in state.SAVED and state.UPLOAD_READ not in state.SAVED


@pytest.mark.parametrize("payload, words", [
    (lambda: _drifted().drop(columns=["priors-count"]).to_csv(index=False).encode(), "lacks column 'priors-count'"),
    (lambda: b"", ""),
    (lambda: _drifted().head(0).to_csv(index=False).encode(), ""),
])
def test_a_missing_column_or_an_empty_file_is_one_line(compas_run, payload, words):
    at = _upload(_page_with_run(compas_run), "bad.csv", payload())
    errors = [_shown(e.value) for e in at.error]
    assert len(errors) == 1 and "\n" not in errors[0] and "Traceback" not in errors[0], errors
    assert words in errors[0]
    assert not at.get("download_button")


def test_the_upload_budget_of_the_data_page_applies(compas_run, monkeypatch):
    payload, at = _drifted().to_csv(index=False).encode(), _page_with_run(compas_run)
    monkeypatch.setenv("FAIRDASH_TABLE_MB", "0.001")  # (after the app has its default sample and the test its table)
    at = _upload(at, "big.csv", payload)
    errors = [_shown(e.value) for e in at.error]
    assert len(errors) == 1 and "FAIRDASH_TABLE_MB" in errors[0], errors


def test_user_text_is_shown_as_text(compas_run):
    df = _drifted()
    df.loc[:4, "c-charge-desc"] = "**bold** [link](http://x.example) <b>tag</b>"
    at = _upload(_page_with_run(compas_run), "markup.csv", df.to_csv(index=False).encode())
    raw = [w.value for w in at.warning if "c-charge-desc" in w.value]
    assert raw and all("\\*\\*bold\\*\\*" in w and "\\<b\\>" in w for w in raw), raw


def test_the_upload_stays_in_memory_and_forget_deletes_it(compas_run):
    """Nothing derived from the upload reaches the disk (the fit cache's folder is unchanged) or the session store's
    saved state; "Forget this session" deletes it with the rest."""
    import hashlib

    from fairdash.app.server.session import _sessions
    from fairdash.work.fit_cache import default_cache_dir

    def files() -> dict:
        root = default_cache_dir()
        return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()} \
            if root.exists() else {}

    payload = _drifted().to_csv(index=False).encode()
    at = _page_with_run(compas_run)
    before = files()
    _upload(at, "private.csv", payload)
    assert app_state.session(at).audited.value.scored.decisions.shape[0] == 400
    assert files() == before
    saved = _sessions().load(app_state.get(at, "token")) or {}
    assert saved and not {state.AUDITED, state.UPLOAD_READ} & set(saved)
    assert not any(isinstance(v, pd.DataFrame) and len(v) == 400 for v in saved.values())
    at.button(key="forget_session").click().run()
    _ok(at)
    assert app_state.session(at).audited is None and app_state.session(at).upload_read is None
