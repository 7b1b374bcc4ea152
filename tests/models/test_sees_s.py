"""Issue 12: "let the model see s" is an explicit choice of the task, labelled in every result; the
estimators keep the scikit-learn interface (no ``s`` at prediction, no ``random_state`` in predict)."""
import inspect
import json

import numpy as np

from fairdash import data
from fairdash.cli import main
from fairdash.models.baselines import AgarwalReduction
from fairdash.models.fair_lr import FairLR
from fairdash.work.experiments import ExperimentPlan, run_experiment

SPEC = data.TaskSpec("race", "two-year-recid", ("Caucasian",), ("1",))


def test_seeing_s_puts_its_column_among_the_features_and_labels_the_runs():
    table = data.load_sample("compas")
    plain = data.build_task(table, SPEC)
    sees = data.build_task(table, data.TaskSpec(**{**SPEC.__dict__, "s_as_feature": True}))
    assert "race" not in plain.features and "race" in sees.features
    res = run_experiment(ExperimentPlan(sees, ["fair-lr", "lr"], [0.4], [0])).results
    assert set(res["label"]) == {"FairLR (sees s)", "LR (sees s)"} and res["sees_s"].all()
    assert not run_experiment(ExperimentPlan(plain, ["lr"], [None], [0])).results["sees_s"].any()


def test_the_command_line_flag(capsys, tmp_path):
    args = ["train", "--data", "compas", "--s", "race", "--s1", "Caucasian", "--y", "two-year-recid", "--y1", "1",
            "--model", "fair-lr", "--pr-t", "0.4", "--s-as-feature", "--no-cache", "--json",
            "--out", str(tmp_path / "m.fairdash")]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "fair-lr"
    from fairdash.files.export import load_model

    model = load_model(tmp_path / "m.fairdash")
    assert "race" in model.feature_columns  # it needs s to predict, and says so through its columns


def test_predict_takes_only_X():
    for cls in (FairLR, AgarwalReduction):
        assert list(inspect.signature(cls.predict).parameters) == ["self", "X"]
        assert list(inspect.signature(cls.predict_proba).parameters) == ["self", "X"]
    assert "use_s_as_feature" not in FairLR().get_params()
    assert np.isfinite(FairLR().get_params()["C"])
