"""New data audited with a run's model (issue 36, item 3; fairdash/files/audit.py), on the bundled COMPAS sample:
the decisions are those `fairdash predict` writes for the same table and model file (the same CSV, byte for
byte), the rates per group are recomputed here from the decisions, a drifted column is warned by its name, and
a group never seen, a missing column and an empty table each get one line."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairdash import data
from fairdash.errors import FairDashError
from fairdash.evaluation.calibration import calibration_errors
from fairdash.evaluation.intervals import wilson_interval
from fairdash.files import audit
from fairdash.files.export import load_model, model_bytes, save_model
from fairdash.files.run_spec import RunSpec
from fairdash.targeting.criteria import DP, criterion_info
from fairdash.targeting.target_spec import TargetSpec
from fairdash.work.runs import train_run

ROOT = Path(__file__).resolve().parents[2]
N_ROWS = 600
SHIFT = 300  # years added to the drifted rows' age: far outside the training range 18 to 96


@pytest.fixture(scope="module")
def run():
    """FairLR and LR on the paper's COMPAS set-up (s = race, y = two-year-recid), PR_t 0.4, one seed."""
    task = data.paper_task("compas-race")
    spec = RunSpec(data="compas", task=task.spec, target=TargetSpec(criterion="dp", target_rate=0.4),
                   models=("fair-lr", "lr"), target_rates=(0.4,), seeds=(0,), group_names=task.group_names)
    return train_run(task, spec, data_name="COMPAS")


def _model(run, name: str):
    return next(m for k, m in run.models.items() if k[0] == name)


def _targets(model) -> list:
    return [model.metrics.get(f"target_{j}") for j in range(len(model.group_names))]


@pytest.fixture(scope="module")
def drifted(tmp_path_factory) -> Path:
    """600 rows of the sample with 40 ages shifted far out of range and 5 rows of a race never seen."""
    df = data.load_sample("compas").sample(N_ROWS, random_state=1).reset_index(drop=True)
    df.loc[:39, "age"] = df.loc[:39, "age"] + SHIFT
    df.loc[40:44, "race"] = "Martian"
    path = tmp_path_factory.mktemp("audit") / "drifted.csv"
    df.to_csv(path, index=False)
    return path


def _predict(model_file: Path, table: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fairdash", "predict", "--model", str(model_file),
                           "--data", str(table), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, check=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["fair-lr", "lr"])
def test_decisions_are_the_cli_predict_file_byte_for_byte(run, drifted, tmp_path, name):
    model = _model(run, name)
    result = audit.audit_table(model, data.read_table(drifted), _targets(model), DP)
    model_file = save_model(model, tmp_path / "model.fairdash")
    done = _predict(model_file, drifted, tmp_path / "out.csv")
    written = (tmp_path / "out.csv").read_text(encoding="utf-8")
    assert audit.decisions_csv(result.scored) == written
    cli = pd.read_csv(tmp_path / "out.csv")
    assert len(cli) == N_ROWS and np.array_equal(cli["prediction"].to_numpy(), result.scored.decided)
    # the warnings are the lines `predict` prints, in its order
    printed = [line[len("warning: "):] for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert printed == result.scored.notes
    # and the model file, loaded, decides the same as the trained model in the session
    loaded = audit.score_table(load_model(model_bytes(model)), data.read_table(drifted))
    assert np.array_equal(loaded.decided, result.scored.decided)


def test_the_drifted_column_is_warned_by_name_and_the_unseen_group_in_one_line(run, drifted):
    model = _model(run, "fair-lr")
    result = audit.audit_table(model, data.read_table(drifted), _targets(model), DP)
    age = [n for n in result.scored.notes if "'age'" in n]  # one line a column (issue 47, item 8): its drift
    assert len(age) == 1 and age[0].startswith("Drift in column 'age': 40 of "), result.scored.notes
    assert "lie outside the training range 18 to 96" in age[0] and "other units?" in age[0]
    assert result.scored.drift.set_index("feature").loc["age", "drifted"]
    unseen = [n for n in result.notes if "'Martian'" in n]
    assert len(unseen) == 1 and "5 row(s)" in unseen[0] and "never seen in training" in unseen[0], result.notes
    assert "\n" not in unseen[0]


def test_rates_per_group_are_recomputed_from_the_decisions(run, drifted):
    model = _model(run, "fair-lr")
    table = data.read_table(drifted)
    result = audit.audit_table(model, table, _targets(model), DP)
    p = result.scored.decided
    s = (table["race"] == "Caucasian").to_numpy().astype(int)  # group 1: Caucasian; the rest (Martian too) group 0
    y = (table["two-year-recid"] == 1).to_numpy().astype(int)
    rates = result.rates.set_index("group")
    assert list(rates.index) == list(model.group_names) == ["Non-Caucasian", "Caucasian"]
    for j, name in enumerate(model.group_names):
        g = s == j
        r = rates.loc[name]
        assert r["rows"] == g.sum() and r["positive decisions"] == p[g].sum()
        assert r["positive rate"] == pytest.approx(p[g].mean())
        assert r["target"] == pytest.approx(0.4)
        assert r["gap to target"] == pytest.approx(p[g].mean() - 0.4)
        assert r["TPR"] == pytest.approx(p[g & (y == 1)].mean())
        assert r["FPR"] == pytest.approx(p[g & (y == 0)].mean())
        assert r["FNR"] == pytest.approx(1 - p[g & (y == 1)].mean())
        assert r["accuracy"] == pytest.approx((p[g] == y[g]).mean())
        # each rate with its 95% interval (issue 47, item 8): Wilson's, from the group's counts
        lo, hi = (float(v) for v in wilson_interval(p[g].sum(), g.sum()))
        assert (r["positive rate lo"], r["positive rate hi"]) == pytest.approx((lo, hi))
        assert r["gap to target lo"] == pytest.approx(lo - 0.4) and r["TPR lo"] <= r["TPR"] <= r["TPR hi"]
        # the calibration error of the model's scores in the group, with its 95% interval (evaluation.calibration)
        scores = result.scored.decisions[result.scored.probability].to_numpy()
        own = calibration_errors(scores[g], y[g], np.zeros(g.sum(), int), 1)["cal_error_0"]
        assert r["calibration error"] == pytest.approx(own)
        assert 0 <= r["calibration error lo"] <= r["calibration error"] <= r["calibration error hi"] <= 1
    assert result.labelled
    shown = audit.shown_rates(result.rates).set_index("group")
    assert shown.loc["Caucasian", "positive rate"].count(" to ") == 1 and "lo" not in " ".join(shown.columns)
    assert shown.loc["Caucasian", "calibration error"].count(" to ") == 1
    assert sum(rates["rows"]) == N_ROWS


def test_a_table_without_labels_or_s_says_what_it_cannot_show(run, drifted):
    model = _model(run, "fair-lr")
    table = data.read_table(drifted)
    result = audit.audit_table(model, table.drop(columns=["two-year-recid"]), _targets(model), DP)
    assert "TPR" not in result.rates.columns and not result.labelled
    assert any("no column 'two-year-recid'" in n for n in result.notes)
    blind = audit.audit_table(model, table.drop(columns=["race"]), _targets(model), DP)
    assert blind.rates is None and len(blind.scored.decided) == N_ROWS  # scored all the same
    assert blind.notes == ["The table has no column 'race' (the sensitive attribute), so its decisions cannot be "
                           "split by group; they can still be downloaded."]


def test_an_empty_group_and_missing_labels_read_n_a_never_nan(run):
    model = _model(run, "fair-lr")
    df = data.load_sample("compas").head(50).copy()
    df["race"] = "Caucasian"  # no row of Non-Caucasian
    df.loc[:9, "two-year-recid"] = np.nan
    result = audit.audit_table(model, df, _targets(model), DP)
    shown = audit.shown_rates(result.rates)
    non = shown.set_index("group").loc["Non-Caucasian"]
    assert non["rows"] == 0 and non["positive rate"] == "n/a" and non["TPR"] == "n/a"
    assert not shown.isna().any().any() and "nan" not in shown.to_string().lower()
    assert any("10 row(s) have no usable label" in n for n in result.notes)
    assert "n/a" in audit.rates_sentence(result.rates, DP)


@pytest.mark.parametrize("change, words", [
    (lambda df: df.drop(columns=["priors-count"]), "lacks column 'priors-count'"),
    (lambda df: df.head(0), "no rows to score"),
    (lambda df: df.assign(age="old"), "Column 'age' held numbers in training"),
])
def test_refusals_are_one_line(run, change, words):
    model = _model(run, "lr")
    with pytest.raises(FairDashError) as e:
        audit.audit_table(model, change(data.load_sample("compas").head(30)), _targets(model), DP)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_output_columns_avoid_the_table_s_own():
    assert audit.output_columns(["a", "b"]) == ("probability", "prediction")
    assert audit.output_columns(["a", " Prediction "]) == ("probability_2", "prediction_2")
    assert audit.output_columns(["probability", "probability_2"]) == ("probability_3", "prediction_3")


def test_several_groups_a_group_never_seen_is_left_out_with_a_sentence():
    from fairdash.data.task import TaskSpec

    spec = TaskSpec(s_column="race", y_column="y", s_multi=True)
    df = pd.DataFrame({"race": ["a", "b", "c", "zz", None], "y": [1, 0, 1, 0, 1]})
    codes, notes = audit.row_groups(df, spec, ("a", "b", "c"))
    assert codes.tolist() == [0, 1, 2, audit.NOT_PLACED, audit.NOT_PLACED]
    assert len(notes) == 2 and "'zz'" in notes[1] and "a group the model never saw" in notes[1]
    labels, note = audit.row_labels(df, TaskSpec(s_column="race", y_column="y", y1_values=("1",)))
    assert labels.tolist() == [1, 0, 1, 0, 1] and note == ""


@pytest.fixture(scope="module")
def three_groups():
    """LR on 3,000 Adult rows with every race its own group (three kept), trained for parity and for opportunity."""
    from fairdash.data.task import TaskSpec
    from fairdash.targeting.target_spec import make_target_spec

    adult = data.load_sample("adult").sample(3000, random_state=0)
    adult = adult[adult["race"].isin(["White", "Black", "Asian-Pac-Islander"])].reset_index(drop=True)
    task = data.build_task(adult, TaskSpec(s_column="race", y_column="salary", y1_values=(">50K",), s_multi=True))
    out = {}
    for criterion in ("dp", "eo"):
        spec = RunSpec(data="adult", task=task.spec, target=make_target_spec(criterion, 0.3), models=("lr",),
                       target_rates=(0.3,), seeds=(0,), group_names=task.group_names)
        out[criterion] = next(iter(train_run(task, spec, data_name="adult").models.values()))
    return out


@pytest.mark.parametrize("criterion", ["dp", "eo"])
def test_several_groups_and_opportunity_measure_the_criterion_s_rate(three_groups, criterion):
    model = three_groups[criterion]
    new = data.load_sample("adult").sample(500, random_state=5).reset_index(drop=True)
    result = audit.audit_table(model, new, _targets(model), criterion_info(criterion))
    placed = new["race"].isin(model.group_names)
    assert [n for n in result.notes if "a group the model never saw" in n] == [
        f"{int((~placed).sum())} row(s) hold {new.loc[~placed, 'race'].nunique()} value(s) of 'race' never seen in "
        f"training (first: {new.loc[~placed, 'race'].value_counts().index[0]!r}): a group the model never saw, left "
        "out of the rates per group."]
    rates = result.rates.set_index("group")
    assert rates["rows"].sum() == placed.sum()
    p, y = result.scored.decided, (new["salary"] == ">50K").to_numpy()
    for j, name in enumerate(model.group_names):
        g = (new["race"] == name).to_numpy()
        own = p[g & y].mean() if criterion == "eo" else p[g].mean()  # the criterion's rate: TPR or PR
        assert rates.loc[name, "gap to target"] == pytest.approx(own - model.metrics[f"target_{j}"])
    sentence = audit.rates_sentence(result.rates, criterion_info(criterion))
    assert ("true positive rate" in sentence) == (criterion == "eo")
    unlabelled = audit.audit_table(model, new.drop(columns=["salary"]), _targets(model), criterion_info(criterion))
    gaps = audit.shown_rates(unlabelled.rates)["gap to target"]
    assert (gaps == "n/a").all() == (criterion == "eo")  # a TPR target needs labels


def test_a_model_that_decides_with_s_says_an_unseen_value_once_and_refuses_a_table_without_s():
    task = data.paper_task("compas-race")
    spec = RunSpec(data="compas", task=task.spec,
                   target=TargetSpec(criterion="dp", target_rate=0.4, decision="group-rates"),
                   models=("lr",), target_rates=(0.4,), seeds=(0,), group_names=task.group_names)
    model = next(iter(train_run(task, spec, data_name="COMPAS").models.values()))
    assert model.decides_with_s
    new = data.load_sample("compas").head(300).copy()
    new.loc[:4, "race"] = "Martian"
    result = audit.audit_table(model, new, _targets(model), DP)
    said = [n for n in result.scored.notes + result.notes if "Martian" in n]
    assert len(said) == 1 and said[0].startswith("Column 'race' (s): 5 row(s)"), said
    with pytest.raises(FairDashError, match="This model decides with s: the table needs the sensitive attribute"):
        audit.audit_table(model, new.drop(columns=["race"]), _targets(model), DP)
