"""Issue 28: adding a decision rule touches one module. A rule added to ``fairdash.targeting.decision.RULES`` alone
(here for the length of a test, with ``monkeypatch``) is offered by the Train page's plan, accepted by the
command line, written into and read back from a run's configuration and a model file, run by the
experiments (a plain model decided per target, as any rule that aims at the target), and explained in the
report: nothing else names it. Real data: the bundled COMPAS sample (s = race), seed 0."""
from __future__ import annotations

import json

import numpy as np
import pytest

from fairdash.cli import main
from fairdash.data import split_arrays
from fairdash.files.export import model_from_bytes, save_model
from fairdash.files.run_spec import RunSpec
from fairdash.report.content import decision_text
from fairdash.targeting import decision
from fairdash.targeting.criteria import DP
from fairdash.targeting.decision import DecisionRule, choosable, rule_info
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work import runs
from fairdash.work.experiments import ExperimentPlan, fit_model, plan_fits, run_experiment

COMPAS_RACE = ["--data", "compas", "--s", "race", "--s1", "Caucasian", "--y", "two-year-recid", "--y1", "1"]
NEW = DecisionRule("one-cut-for-all", "one cut for everyone (a rule added in one module)",
                   "A rule registered by this test: one threshold for everyone at the overall target rate.",
                   needs_s=False, cuts="overall")


@pytest.fixture
def new_rule(monkeypatch):
    monkeypatch.setitem(decision.RULES, NEW.name, NEW)
    return NEW.name


def test_the_new_rule_is_offered_and_described_everywhere(new_rule, compas_task):
    assert new_rule in choosable() and new_rule in runs.offered_rules(compas_task, DP)
    spec = make_target_spec("dp", 0.4, decision=new_rule)
    assert spec.decision_rule is NEW and "decided by one-cut-for-all" in spec.describe(0.4)
    run = RunSpec(data="compas", task=compas_task.spec, target=spec, models=("lr",), target_rates=(0.3, 0.4))
    back = RunSpec.from_dict(json.loads(json.dumps(run.to_dict())))
    assert back.target.decision == new_rule and f"--decision {new_rule}" in back.cli_command()
    # a plain model is decided per target under a rule that aims at the target: two fits, not one
    assert len(plan_fits(["lr"], spec, [0.3, 0.4], [0])) == 2
    assert runs.plan_training(run).n_fits == 2


def test_the_new_rule_decides_as_its_cutting_says(new_rule, compas_task, tmp_path):
    """Its cutting is the overall one, so its decisions are exactly ``overall-rate``'s; a model file keeps it."""
    new = fit_model(compas_task, "lr", target=make_target_spec("dp", 0.4, decision=new_rule), seed=0)
    old = fit_model(compas_task, "lr", target=make_target_spec("dp", 0.4, decision="overall-rate"), seed=0)
    assert new.decision.rule == new_rule and new.decision.cuts == old.decision.cuts
    X = split_arrays(compas_task, 0).X_test
    assert np.array_equal(new.decision.decide(new.estimator, X), old.decision.decide(old.estimator, X))
    path = save_model(new, tmp_path / "new.fairdash")
    # load_model parses in a reading process, which imports the rules from the code (where a rule added in its module
    # is); this test's rule lives in this process only (monkeypatch), so the file is read here by the same reader
    assert model_from_bytes(path.read_bytes(), path.name).decision == new.decision
    res = run_experiment(ExperimentPlan(compas_task, ["lr"], [0.3, 0.4], [0],
                                        target=make_target_spec("dp", 0.4, decision=new_rule),
                                        only_serving=False)).results
    assert list(res["decision"]) == [new_rule, new_rule] and not res["decides_with_s"].any()
    assert res["pop_gap_0"].notna().all()  # decided per target, so each row has its gaps
    assert NEW.explanation in decision_text(res)


def test_the_command_line_accepts_the_new_rule(new_rule, capsys, tmp_path):
    code = main(["train", *COMPAS_RACE, "--pr-t", "0.4", "--model", "lr", "--decision", new_rule, "--json",
                 "--out", str(tmp_path / "m.fairdash")])
    out = capsys.readouterr()
    assert code == 0, out.err
    got = json.loads(out.out)
    assert got["decision"]["rule"] == new_rule and got["decides_with_s"] is False
    assert rule_info(new_rule).label_suffix == f" [{new_rule}]"
