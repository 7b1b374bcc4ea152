"""The price of deciding without s where results are shown (issue 26, item 2): the command line's sweep
with models x rules, the report (sentence and frontier figure) and the Compare page (sentence as plain
text and the frontier figure for a sweep)."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from fairdash import cli
from fairdash.evaluation.blindness import has_both_sides

COMPAS = ["--data", "compas", "--s", "race", "--s1", "Caucasian", "--y", "two-year-recid", "--y1", "1"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("price") / "sweep.csv"
    code = cli.main(["sweep", *COMPAS, "--models", "lr,target-reduction", "--pr-t", "0.3,0.401", "--repeats", "1",
                     "--decision", "threshold,group-rates", "--no-cache", "--out", str(out)])
    assert code == 0
    return out


@pytest.mark.slow
def test_sweep_runs_models_times_rules_and_prices_blindness(sweep, capsys):
    res = pd.read_csv(sweep)
    assert set(zip(res["model"], res["decision"])) >= {("lr", "group-rates"), ("target-reduction", "threshold")}
    assert "price_of_blindness" in res.columns and res["price_of_blindness"].notna().any()


@pytest.mark.slow
def test_the_report_has_the_price_sentence_and_the_frontier_figure(sweep, tmp_path):
    out = tmp_path / "report.html"
    assert cli.main(["report", "--results", str(sweep), "--out", str(out)]) == 0
    html = out.read_text()
    assert "Price of deciding without s:" in html and "Deciding without race costs" in html
    assert "Accuracy of the rules that land on the target, with and without race" in html
    # who pays (issue 49): the paragraph per target, the table of people decided differently and the figure
    assert html.count("Who pays for deciding without race at PR_t") == 2 and "people in group Non-Caucasian" in html
    assert "share refused (95% CI)" in html and "Who pays at PR_t 0.40: within each group" in html


def test_a_results_table_without_a_with_s_rule_gets_no_price_column(tmp_path):
    out = tmp_path / "plain.csv"
    assert cli.main(["sweep", *COMPAS, "--models", "lr", "--pr-t", "0.3", "--repeats", "1", "--no-cache",
                     "--out", str(out)]) == 0
    assert "price_of_blindness" not in pd.read_csv(out).columns


@pytest.mark.slow
def test_train_json_carries_the_price(tmp_path, capsys):
    assert cli.main(["train", *COMPAS, "--model", "lr", "--pr-t", "0.401", "--decision", "group-rates",
                     "--no-cache", "--json", "--out", str(tmp_path / "m.fairdash")]) == 0
    got = json.loads(capsys.readouterr().out)
    assert {"price_of_blindness", "pop_with_s_accuracy", "pop_blind_accuracy", "price_sentence"} <= set(got)
    if got["price_sentence"].startswith("Deciding without race costs"):
        assert got["price_of_blindness"] == pytest.approx(got["pop_with_s_accuracy"] - got["pop_blind_accuracy"])
    # the rates both rules were matched on, named in the sentence, and each side's positive rates by group
    matched = [got[f"matched_rate_{g}"] for g in (0, 1)]
    assert all(abs(r - 0.401) <= 0.03 for r in matched)
    assert f"{matched[0]:.3f} (Non-Caucasian) and {matched[1]:.3f} (Caucasian)" in got["price_sentence"]
    assert {"pop_with_s_pr_0", "pop_with_s_pr_1", "pop_blind_pr_0", "pop_blind_pr_1"} <= set(got)
    # who pays (issue 49): per group the shares decided differently with intervals, what the blind rule leans on
    assert {"pop_refused_without_s_0", "pop_accepted_without_s_1_lo", "pop_net_accepted_without_s_1_hi",
            "pop_within_group_gap_0", "leaned_on", "within_group_curve"} <= set(got)
    assert got["who_pays_sentence"].startswith("Who pays for deciding without race at PR_t 0.40 (a positive decision "
                                               "predicts two-year-recid = 1, unfavourable for the person)")
    refused = got["pop_refused_without_s_0"]
    assert 0 < refused < 1 and got["pop_refused_without_s_0_lo"] <= refused <= got["pop_refused_without_s_0_hi"]


@pytest.mark.slow
def test_compare_shows_the_price_sentence_and_the_frontier(sweep, monkeypatch):
    from fairdash.targeting.target_spec import make_target_spec
    from fairdash.work.experiments import ExperimentPlan, run_experiment

    import app_state
    from app_pages import hand_made_run, new_app

    monkeypatch.setenv("FAIRDASH_DEVICE", "cpu")
    at = new_app()
    task = app_state.get(at, "task")
    res = run_experiment(ExperimentPlan(task, ["lr", "target-reduction"], [0.3, 0.35], [0],
                                        target=make_target_spec("dp", 0.3),
                                        decisions=["threshold", "group-rates"])).results
    assert has_both_sides(res)
    hand_made_run(at, res, 0.3)
    texts = [t.value for t in at.text]
    assert any(t.startswith("Deciding without sex") for t in texts), texts
    assert any("fig_frontier" in c.proto.id for c in at.get("plotly_chart"))
    # who pays (issue 49): the paragraph as plain text, the table of people decided differently, the figure
    who = [t for t in texts if t.startswith("Who pays for deciding without sex at PR_t 0.30")]
    assert len(who) == 1 and "people in group Female" in who[0] and "the rule leans most on" in who[0], texts
    assert "nan" not in who[0].lower()
    assert any("share refused (95% CI)" in d.value.columns for d in at.dataframe)
    assert any("fig_within_group" in c.proto.id for c in at.get("plotly_chart"))
    assert at.selectbox(key="who_pays_target_0").options == ["0.30", "0.35"]  # two targets: the figure's is chosen


@pytest.mark.slow
def test_the_sweeps_configuration_keeps_every_rule(sweep):
    from fairdash.files.run_spec import RunSpec

    config = json.loads(open(str(sweep) + ".json").read())
    assert config["decisions"] == ["threshold", "group-rates"]
    spec = RunSpec.from_dict(config)
    assert spec.decisions == ("threshold", "group-rates")
    assert "--decision threshold,group-rates" in spec.cli_command()
