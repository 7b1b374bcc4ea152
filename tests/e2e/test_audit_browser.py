"""New data audited in the dashboard (issue 36, item 3), in Chromium against the live app: LR trained on the
bundled COMPAS sample; on Score new data, a new table whose ``age`` column drifted far outside the training range
(and with a race never seen in training) is uploaded; the warning names the column, the rates per group are on the
page against the run's target and match the downloaded decisions, and the downloaded decisions are the file
``python -m fairdash predict`` writes for the same table and the model file Export gives."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import expect

from fairdash import data

from test_accessibility import AXE, _audit
from test_trust import COMPAS_TITLE, _load_sample, _set_models, _train, _wait_figures

ROOT = Path(__file__).resolve().parents[2]
N_ROWS, DRIFTED, UNSEEN = 800, 30, 4
RATE = re.compile(r"(Non-Caucasian|Caucasian): positive rate (\d\.\d{3}) \(95% interval \d\.\d{3} to \d\.\d{3}\) "
                  r"against target (\d\.\d{3}) \(([-+]\d\.\d{3})\)")  # each group's rate with its interval


def _new_table(folder: Path) -> Path:
    """Next month's table: 800 rows of the sample, the first 30 with ``age`` 300 years on (training: 18 to 96),
    four with a race the model never saw."""
    df = data.load_sample("compas").sample(N_ROWS, random_state=7).reset_index(drop=True)
    df.loc[:DRIFTED - 1, "age"] = df.loc[:DRIFTED - 1, "age"] + 300
    df.loc[DRIFTED:DRIFTED + UNSEEN - 1, "race"] = "Martian"
    path = folder / "next_month.csv"
    df.to_csv(path, index=False)
    return path


@pytest.mark.timeout(600)
def test_score_new_data_warns_the_drifted_column_rates_groups_and_downloads_predict_s_decisions(
        page, app_url, st_ui, server_log, tmp_path):
    st_ui.open_app(page, app_url)
    _load_sample(page, st_ui, COMPAS_TITLE)
    st_ui.goto_page(page, "Train")
    _set_models(page, st_ui, ["LR"])
    _train(page, st_ui, server_log)

    st_ui.goto_page(page, "Export")
    model_file = st_ui.download(page, "download_model", tmp_path, "model.fairdash")

    st_ui.goto_page(page, "Score new data")
    st_ui.no_exception(page, server_log)
    expect(page.locator(".st-key-audit_run input[role=combobox]")).to_have_value(re.compile(r"^Run 1 \(.*LR · COMPAS"))
    table = _new_table(tmp_path)
    page.locator('.st-key-audit_upload input[type="file"]').set_input_files(str(table))
    page.locator(".st-key-download_decisions button").wait_for(timeout=120_000)
    st_ui.wait_idle(page)
    st_ui.no_exception(page, server_log)
    main = st_ui.main_text(page)
    assert f"Scored {N_ROWS:,} rows" in main, main[:2000]
    # the warning names the drifted column, in one line: its rows out of range with their share and interval, and
    # its shift from training (issue 47, item 8)
    warning = page.locator('[data-testid="stAlertContentWarning"]').filter(has_text="column 'age'")
    expect(warning).to_have_count(1)
    assert re.search(rf"Drift in column 'age': {DRIFTED} of {N_ROWS} rows \([\d.]+%, 95% interval [\d.]+% to "
                     r"[\d.]+%\) lie outside the training range 18 to 96", warning.inner_text()), warning.inner_text()
    assert "Kolmogorov-Smirnov distance" in warning.inner_text()
    assert "Drift against the training rows" in main  # the table of every feature's drift
    assert f"{UNSEEN} row(s) hold 1 value(s) of 'race' never seen in training (first: 'Martian')" in main
    # the rates per group against the run's target: a sentence, the table and the target view
    rates = {g: (float(r), float(t), float(gap)) for g, r, t, gap in RATE.findall(main)}
    assert set(rates) == {"Non-Caucasian", "Caucasian"}, main[-3000:]
    expect(page.locator('[data-testid="stDataFrame"]').last).to_be_visible()
    _wait_figures(page, 2)
    target_text = page.evaluate("() => Array.from(document.querySelectorAll('.st-key-audit_fig_target svg text'))"
                                ".map(e => e.textContent).join(' | ')")
    assert "Non-Caucasian" in target_text and re.search(r"[-+]0\.\d{3}", target_text), target_text
    assert "nan" not in main.lower().replace("non-caucasian", "")
    if AXE.exists():  # the page passes the accessibility audit of every other page (no serious violation)
        assert not _audit(page, "Score new data"), _audit(page, "Score new data")

    # the decisions downloaded are `fairdash predict`'s, and the rates on the page are theirs
    decisions = st_ui.download(page, "download_decisions", tmp_path, "decisions.csv")
    out = tmp_path / "predict.csv"
    subprocess.run([sys.executable, "-m", "fairdash", "predict", "--model", str(model_file), "--data", str(table),
                    "--out", str(out)], cwd=ROOT, check=True, capture_output=True, timeout=300)
    assert decisions.read_bytes() == out.read_bytes()
    got = pd.read_csv(decisions)
    assert len(got) == N_ROWS and set(got["prediction"]) <= {0, 1}
    caucasian = got["race"] == "Caucasian"  # group 1; every other value (the unseen one too) is group 0
    for name, rows in (("Caucasian", caucasian), ("Non-Caucasian", ~caucasian)):
        rate, target, gap = rates[name]
        assert rate == pytest.approx(got.loc[rows, "prediction"].mean(), abs=5e-4)
        assert gap == pytest.approx(rate - target, abs=1.5e-3)
