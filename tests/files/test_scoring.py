"""Issue 27, item 1: the scoring contract. A table is compared with the training table column by column
before it is scored (fairdash/files/scoring.py): every difference that could change a decision is refused in one
line (naming the column, the value, how many rows) or scored with one warning line saying the same. Model
files written by earlier FairDash versions score as that version did, or are refused saying which version
wrote them and what to do."""
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from fairdash import data
from fairdash.errors import FairDashError
from fairdash.files.export import load_model, model_bytes
from fairdash.files.scoring import ScoringWarning
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.experiments import fit_model

from model_files import rewritten

FILES = Path(__file__).parents[1] / "fixtures" / "model_files"
TRAIN, SCORE = slice(0, 2000), slice(2000, 2300)


@pytest.fixture(scope="module")
def compas_2000_300():
    """COMPAS's first 2,000 rows to train on and the next 300 to score (two raw tables)."""
    table = data.load_sample("compas")
    return table.iloc[TRAIN].reset_index(drop=True), table.iloc[SCORE].reset_index(drop=True)


@pytest.fixture(scope="module")
def models(compas_2000_300):
    task = data.build_task(compas_2000_300[0], data.paper_setup("compas-race").spec)
    lr = fit_model(task, "lr", device="cpu")
    rates = fit_model(task, "fair-lr", target=make_target_spec("dp", 0.4, decision="group-rates"), device="cpu")
    return {"lr": lr, "lr-file": load_model(model_bytes(lr)), "group-rates": rates,
            "group-rates-file": load_model(model_bytes(rates))}


def _known(score):
    """The scoring rows without categories unseen in training (what a clean table looks like)."""
    return score[score["c-charge-desc"].isin(data.load_sample("compas").iloc[TRAIN]["c-charge-desc"])]


def _quiet(model, table):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ScoringWarning)
        return model.predict_proba(table)[:, 1]


def _refusal(model, table) -> str:
    with pytest.raises(FairDashError) as e:
        model.predict(table)
    assert "\n" not in str(e.value)
    return str(e.value)


def _warning(model, table) -> str:
    with pytest.warns(ScoringWarning) as got:
        model.predict(table)
    lines = [str(w.message) for w in got if issubclass(w.category, ScoringWarning)]
    assert len(lines) == 1 and "\n" not in lines[0], lines
    return lines[0]


# --------------------------------------------------------------------------------------------------
# the comparison, on the trained model and on its file alike
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["lr", "lr-file"])
def test_a_clean_table_scores_without_a_word(models, compas_2000_300, which):
    clean = _known(compas_2000_300[1])
    _quiet(models[which], clean)
    _quiet(models[which], clean.drop(columns=["race", "two-year-recid"]))  # s and y are not needed
    _quiet(models[which], clean.assign(extra="x"))  # an extra column changes nothing


@pytest.mark.parametrize("which", ["lr", "lr-file"])
def test_a_missing_feature_column_is_refused_naming_it(models, compas_2000_300, which):
    msg = _refusal(models[which], compas_2000_300[1].drop(columns=["age"]))
    assert "'age'" in msg and "300" in msg
    msg = _refusal(models[which], compas_2000_300[1].rename(columns={"age": "Age"}))
    assert "'age'" in msg and "'Age'" in msg and "renamed" in msg


@pytest.mark.parametrize("which", ["lr", "lr-file"])
def test_a_number_column_holding_text_is_refused_with_the_first_value_and_count(models, compas_2000_300, which):
    table = _known(compas_2000_300[1]).copy()
    table["priors-count"] = table["priors-count"].astype(object)
    table.iloc[[3, 7], table.columns.get_loc("priors-count")] = ["three", "n/a?"]
    msg = _refusal(models[which], table)
    assert "'priors-count'" in msg and "'three'" in msg and "2 of" in msg
    table = _known(compas_2000_300[1]).copy()
    table["age"] = table["age"].astype(float)
    table.iloc[0, table.columns.get_loc("age")] = np.inf
    assert "infinite" in _refusal(models[which], table)


@pytest.mark.parametrize("which", ["lr", "lr-file"])
def test_numbers_written_as_text_score_as_the_numbers(models, compas_2000_300, which):
    clean = _known(compas_2000_300[1])
    as_text = clean.assign(age=clean["age"].astype(str), **{"priors-count": clean["priors-count"].astype(str)})
    np.testing.assert_array_equal(_quiet(models[which], as_text), _quiet(models[which], clean))


@pytest.mark.parametrize("which", ["lr", "lr-file"])
def test_an_unseen_category_is_scored_with_one_warning_naming_count_and_rows(models, compas_2000_300, which):
    table = _known(compas_2000_300[1]).reset_index(drop=True).copy()
    table.loc[[4, 9], "age-cat"] = "Over 90"
    msg = _warning(models[which], table)
    assert "'age-cat'" in msg and "2 row(s)" in msg and "'Over 90'" in msg and "rows 4, 9" in msg


@pytest.mark.parametrize("which", ["lr", "lr-file"])
def test_missing_values_where_training_had_none_are_said(models, compas_2000_300, which):
    table = _known(compas_2000_300[1]).reset_index(drop=True).copy()
    table.loc[[5], "age"] = np.nan
    msg = _warning(models[which], table)
    assert "'age'" in msg and "1 row(s) have no value" in msg and "training had none" in msg and "row 5" in msg


@pytest.mark.parametrize("which", ["lr", "lr-file"])
def test_a_value_outside_the_training_range_is_said(models, compas_2000_300, which):
    table = _known(compas_2000_300[1]).reset_index(drop=True).copy()
    table.loc[[2], "age"] = 420  # months, not years
    msg = _warning(models[which], table)
    assert "'age'" in msg and "outside the training range" in msg and "420" in msg


@pytest.mark.parametrize("which", ["group-rates", "group-rates-file"])
def test_a_model_that_decides_with_s_checks_the_groups(models, compas_2000_300, which):
    clean = _known(compas_2000_300[1]).reset_index(drop=True)
    assert "'race'" in _refusal(models[which], clean.drop(columns=["race"]))
    blank = clean.copy()
    blank.loc[[1, 3], "race"] = None
    msg = _refusal(models[which], blank)
    assert "2 row(s)" in msg and "'race'" in msg
    unseen = clean.copy()
    unseen.loc[[0, 6], "race"] = "Martian"
    msg = _warning(models[which], unseen)
    assert "'race'" in msg and "'Martian'" in msg and "2 row(s)" in msg and "'Non-Caucasian'" in msg


def test_the_model_file_keeps_the_training_record(models):
    schema = models["lr-file"].metadata["scoring"]
    assert schema == models["lr"].schema
    assert schema["columns"]["age"]["kind"] == "number" and schema["columns"]["sex"]["kind"] == "text"
    assert schema["columns"]["age"]["missing"] == 0 and schema["n_rows"] == 1600
    assert set(schema["s_values"]) == {"Caucasian", "Non-Caucasian"}


def test_the_command_line_refuses_in_one_line_and_warns_once(models, compas_2000_300, tmp_path, capsys):
    from fairdash.cli import main
    from fairdash.files.export import save_model

    model = save_model(models["lr"], tmp_path / "m.fairdash")
    table = compas_2000_300[1].copy()
    table["priors-count"] = table["priors-count"].astype(object)
    table.iloc[:40, table.columns.get_loc("priors-count")] = ["many", "three", "a few", "none"] * 10
    table.to_csv(tmp_path / "bad.csv", index=False)
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--data", str(tmp_path / "bad.csv"),
                 "--out", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'priors-count'" in err[0] and "'many'" in err[0]
    table = _known(compas_2000_300[1]).reset_index(drop=True).copy()
    table.loc[[4], "age-cat"] = "Over 90"
    table.to_csv(tmp_path / "drift.csv", index=False)
    assert main(["predict", "--model", str(model), "--data", str(tmp_path / "drift.csv"),
                 "--out", str(tmp_path / "o.csv")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len([ln for ln in err if "'age-cat'" in ln]) == 1


# --------------------------------------------------------------------------------------------------
# model files written by earlier FairDash versions (tests/fixtures/model_files/README.md)
# --------------------------------------------------------------------------------------------------
OLD = sorted(p.name for p in FILES.glob("*.fairdash"))


def test_there_are_old_files():
    assert len(OLD) >= 9 and all((FILES / p).stat().st_size < 200_000 for p in OLD)


@pytest.mark.parametrize("name", OLD)
def test_an_old_model_file_scores_as_the_version_that_wrote_it(name, compas_2000_300):
    expected = json.loads((FILES / f"{name[:7]}-expected.json").read_text())[name]
    model = load_model(FILES / name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScoringWarning)  # the scoring rows hold charges unseen in training
        # the same arithmetic; the first files' (a908dc0) fit had no precision setting: 1e-16 apart
        np.testing.assert_allclose(model.predict_proba(compas_2000_300[1])[:, 1], expected["probability"],
                                   rtol=0, atol=1e-15)
        np.testing.assert_array_equal(np.asarray(model.predict(compas_2000_300[1])).astype(int), expected["prediction"])


def test_an_old_file_without_a_record_still_compares_names_kinds_and_categories(compas_2000_300):
    model = load_model(FILES / "f846eb2-lr.fairdash")
    assert model.metadata.get("scoring") is None
    assert "'age'" in _refusal(model, compas_2000_300[1].drop(columns=["age"]))
    table = compas_2000_300[1].copy()
    table["age"] = table["age"].astype(object)
    table.iloc[0, table.columns.get_loc("age")] = "old"
    assert "'old'" in _refusal(model, table)


@pytest.mark.parametrize("setting, value", [("use_s_as_feature", True), ("learning_rate_schedule", "cosine")])
def test_a_setting_this_version_no_longer_has_is_refused_saying_who_wrote_the_file(setting, value):
    raw = rewritten(FILES / "f846eb2-fair-lr.fairdash",
                     lambda meta: meta["model"]["state_meta"]["params"].update({setting: value}))
    with pytest.raises(FairDashError) as e:
        load_model(raw)
    msg = str(e.value)
    assert "\n" not in msg and "TypeError" not in msg and f"'{setting}'" in msg
    assert "written by FairDash 0.1.0 on 2026-11-26" in msg and "Train the model again" in msg


@pytest.mark.parametrize("which", ["group-rates-file", "old"])
def test_s_in_another_coding_is_refused(models, compas_2000_300, which):
    model = load_model(FILES / "f846eb2-fair-lr-group-rates.fairdash") if which == "old" else models[which]
    msg = _refusal(model, compas_2000_300[1].assign(race=compas_2000_300[1]["race"].str.upper()))
    assert "'CAUCASIAN'" in msg and "'Caucasian'" in msg and "recode" in msg
    if which == "old":  # the old file's group names give its values of s: an unseen one is said
        table = _known(compas_2000_300[1]).reset_index(drop=True).copy()
        table.loc[[3], "race"] = "Martian"
        assert "'Martian'" in _warning(model, table)


def test_an_empty_table_is_refused_in_one_line(models, compas_2000_300):
    assert "no rows" in _refusal(models["lr"], compas_2000_300[1].iloc[:0])


@pytest.mark.parametrize("column", ["age", "age-cat"])
def test_an_empty_feature_column_is_refused(models, compas_2000_300, column):
    msg = _refusal(models["lr-file"], compas_2000_300[1].assign(**{column: np.nan}))
    assert f"'{column}'" in msg and "empty in all 300 rows" in msg
