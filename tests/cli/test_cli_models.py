"""``train``, ``predict``, ``sweep`` and ``report`` on the command line."""
import json
import subprocess
import sys

import pandas as pd
import pytest

from fairdash import data
from fairdash.cli import main

COMPAS = ["--paper", "compas-race"]


@pytest.mark.slow
def test_train_then_predict(tmp_path, cli):
    model = tmp_path / "m.fairdash"
    code, out, err = cli(["train", *COMPAS, "--model", "fair-lr", "--pr-t", "0.45", "--out", str(model), "--json"])
    assert code == 0, err
    got = json.loads(out)
    # the figures named as the sweep's results file names them (opportunity: judged on the ordinary test set,
    # so the balanced test set's columns are empty and the numbers are the population's)
    for key in ("model", "target_rate", "seed", "bal_accuracy", "pop_accuracy", "pop_pr_0", "pop_pr_1", "pop_tpr_0",
                "pop_tpr_1", "pop_tnr_0", "pop_tnr_1", "pop_pr_ratio", "pop_tpr_ratio", "fit_seconds", "device"):
        assert key in got
    assert got["bal_accuracy"] is None and 0 < got["pop_accuracy"] < 1
    assert not {"accuracy", "pr_0", "tpr_ratio"} & set(got)
    assert got["target_rate"] == 0.45 and got["criterion"] == "eo" and model.exists()
    # score a raw table without the sensitive column, in a fresh process
    raw = tmp_path / "raw.csv"
    pd.read_csv(data.ASSETS / "compas.csv.gz").drop(columns=["race"]).head(200).to_csv(raw, index=False)
    scored = tmp_path / "scored.csv"
    proc = subprocess.run([sys.executable, "-m", "fairdash", "predict", "--model", str(model), "--data", str(raw),
                           "--out", str(scored)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    res = pd.read_csv(scored)
    assert len(res) == 200 and {"probability", "prediction"} <= set(res.columns)
    assert ((res["probability"] > 0.5).astype(int) == res["prediction"]).all()


@pytest.mark.slow
def test_sweep_writes_the_tidy_table_and_a_summary(tmp_path, cli):
    out = tmp_path / "sweep.csv"
    code, text, err = cli(["sweep", "--data", "compas", "--s", "sex", "--s1", "Male", "--y", "two-year-recid",
                           "--y1", "1", "--models", "fair-lr,lr", "--pr-t", "0.3,0.5", "--repeats", "2",
                           "--out", str(out)])
    assert code == 0, err
    res = pd.read_csv(out)
    assert len(res) == 2 * (2 + 1)
    assert "±" in text and "fair-lr" in text
    cfg = json.loads((tmp_path / "sweep.csv.json").read_text())
    assert cfg["models"] == ["fair-lr", "lr"] and cfg["seeds"] == [0, 1]


def test_sweep_eo_paper_defaults(tmp_path, cli):
    out = tmp_path / "eo.csv"
    code, text, err = cli(["sweep", *COMPAS, "--models", "fair-lr,lr", "--repeats", "1", "--out", str(out)])
    assert code == 0, err
    res = pd.read_csv(out)
    fair = res[res.model == "fair-lr"].sort_values("target_rate")
    assert fair["target_rate"].round(2).tolist() == [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    assert (res["eval_set"] == "test").all()
    # TPRs of both groups rise with the target rate
    assert res["bal_tpr_0"].isna().all()  # opportunity is judged on the ordinary test set: the population
    assert (fair["pop_tpr_0"].iloc[-1] > fair["pop_tpr_0"].iloc[0]
            and fair["pop_tpr_1"].iloc[-1] > fair["pop_tpr_1"].iloc[0])


@pytest.mark.parametrize("args, match", [
    (["train", *COMPAS, "--model", "nope", "--out", "x.fairdash"], "Unknown model"),
    (["train", *COMPAS, "--model", "fair-lr", "--pr-t", "1.5", "--out", "x.fairdash"], "between 0 and 1"),
    (["train", *COMPAS, "--model", "fair-lr", "--out", "/no/such/folder/x.fairdash"], "does not exist"),
    (["sweep", *COMPAS, "--models", "fair-lr", "--pr-t", "0.3,abc", "--out", "x.csv"], "list of numbers"),
    (["sweep", *COMPAS, "--models", "fair-lr", "--repeats", "0", "--out", "x.csv"], "at least 1"),
    (["predict", "--model", "missing.fairdash", "--data", "compas", "--out", "x.csv"], "missing.fairdash"),
    (["report", "--results", "missing.csv", "--out", "r.html"], "No such results file"),
])
def test_bad_input_is_one_line_with_exit_2(args, match, cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(args)
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and match in err


def test_train_warns_about_a_leak_of_s_unless_s_is_seen_on_purpose(tmp_path, cli):
    """Issue 19, item 13: a copy of s among the features is warned about, as a leak of y is."""
    import numpy as np

    rng = np.random.default_rng(13)
    n = 1500
    g = rng.choice(["f", "m"], n)
    path = tmp_path / "copy_of_s.csv"
    pd.DataFrame({"g": g, "g_code": (g == "m").astype(int), "x": rng.normal(size=n),
                  "y": rng.integers(0, 2, n)}).to_csv(path, index=False)
    args = ["train", "--data", str(path), "--s", "g", "--s1", "m", "--y", "y", "--y1", "1", "--model", "lr",
            "--out", str(tmp_path / "m.fairdash"), "--no-cache"]
    code, _, err = cli(args)
    assert code == 0, err
    assert "warning: 'g_code' gives s away almost exactly" in err and "--s-as-feature" in err
    code, _, err = cli([*args, "--drop", "g_code", "--s-as-feature"])
    assert code == 0, err
    assert "gives s away" not in err  # the run sees s on purpose


# --------------------------------------------------------------------------------------------------
# issue 19, item 17: predict says what it filled in; --out and closed pipes in one line
# --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def compas_model(tmp_path_factory):
    model = tmp_path_factory.mktemp("model") / "m.fairdash"
    assert main(["train", *COMPAS, "--model", "lr", "--out", str(model)]) == 0
    return model


def test_predict_warns_about_unseen_categories_and_missing_values(compas_model, tmp_path, cli):
    raw = pd.read_csv(data.ASSETS / "compas.csv.gz").drop(columns=["race"]).head(100)
    raw.loc[:6, "age-cat"] = "Over 90"  # never seen in training
    raw.loc[10:12, "priors-count"] = None
    raw.loc[20, "sex"] = None
    path, scored = tmp_path / "raw.csv", tmp_path / "scored.csv"
    raw.to_csv(path, index=False)
    code, out, err = cli(["predict", "--model", str(compas_model), "--data", str(path), "--out", str(scored)])
    assert code == 0, err
    lines = err.splitlines()
    assert all(ln.startswith("warning: ") for ln in lines), lines
    assert any("Column 'age-cat': 7 row(s) hold 1 value(s) never seen in training ('Over 90')" in ln for ln in lines)
    assert any("Column 'priors-count': 3 row(s) have no value; they were scored with the median of training" in ln
               for ln in lines)
    assert any("Column 'sex': 1 row(s) have no value" in ln for ln in lines)
    assert len(pd.read_csv(scored)) == 100


def test_predict_keeps_a_tables_own_probability_and_prediction_columns(compas_model, tmp_path, cli):
    raw = pd.read_csv(data.ASSETS / "compas.csv.gz").drop(columns=["race"]).head(50)
    raw["Probability"] = 0.123
    raw["prediction_2"] = "theirs"
    path, scored = tmp_path / "raw.csv", tmp_path / "scored.csv"
    raw.to_csv(path, index=False)
    code, out, err = cli(["predict", "--model", str(compas_model), "--data", str(path), "--out", str(scored)])
    assert code == 0, err
    assert "written to 'probability_3' and 'prediction_3' instead" in err
    res = pd.read_csv(scored)
    assert (res["Probability"] == 0.123).all() and (res["prediction_2"] == "theirs").all()
    assert ((res["probability_3"] > 0.5).astype(int) == res["prediction_3"]).all()
    assert "probability" not in res.columns


@pytest.mark.slow
@pytest.mark.parametrize("out", ["/sys/fairdash_scores.csv", "/proc/fairdash_scores.csv"])
def test_out_to_a_place_that_cannot_be_written_is_one_clear_line(compas_model, out):
    proc = subprocess.run([sys.executable, "-m", "fairdash", "predict", "--model", str(compas_model),
                           "--data", "compas", "--out", out], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if not ln.startswith("warning: ")]
    assert len(errors) == 1 and errors[0].startswith(f"error: --out {out} cannot be written ("), proc.stderr
    assert "unexpected failure" not in proc.stderr


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly():
    """``rates --json | head``: the reader goes away before the JSON is written."""
    p = subprocess.Popen([sys.executable, "-m", "fairdash", "rates", *COMPAS, "--json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read().decode()
    p.stderr.close()
    assert p.wait(timeout=300) == 141
    assert "BrokenPipeError" not in err and "Broken pipe" not in err and "Exception ignored" not in err, err
