"""Issue 11 ("One target, one meaning"): one regression test (or more) per numbered bug, plus property
tests of the one function that builds a target (``make_target_spec``) and a check that target
resolution has one home. Real data (the bundled Adult and COMPAS samples, small generated tables),
the CLI through ``fairdash.cli.main`` and the dashboard through ``streamlit.testing.v1.AppTest``."""
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from fairdash import data
from fairdash.analysis.rates import describe_t, rates_readout
from fairdash.cli import main
from fairdash.errors import FairDashError
from fairdash.evaluation import metrics
from fairdash.files.run_spec import RunSpec
from fairdash.targeting import targets
from fairdash.targeting.target_spec import TargetSpec, make_target_spec
from fairdash.work.experiments import ExperimentPlan, fit_model, run_experiment
from fairdash.work.fit_cache import FitCache

import app_state

# the app as tests/app/test_app.py runs it (autouse fixtures included)
from app_pages import CEILING, errors, frame, metric, new_app, ok, upload

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")

ROOT = Path(__file__).resolve().parents[2]
COMPAS_RACE = ["--data", "compas", "--s", "race", "--s1", "Caucasian", "--y", "two-year-recid", "--y1", "1"]


# --------------------------------------------------------------------------------------------------
# Helpers (the CLI as tests/cli/test_cli_rates.py runs it; the app as tests/app/test_app.py runs it)
# --------------------------------------------------------------------------------------------------
def _error_lines(err: str) -> list[str]:
    """The ``error: ...`` lines of standard error (data warnings such as COMPAS's many-category column
    are ``warning: ...`` lines and are not the error)."""
    return [line for line in err.splitlines() if not line.startswith("warning: ")]


def _has_widget(at: AppTest, kind: str, key: str) -> bool:
    return any(w.key == key for w in getattr(at, kind))


def _plotly_traces(at: AppTest, key_part: str = "ceiling_curve") -> list[dict]:
    """The traces of the plotly chart whose element id mentions ``key_part`` (the figure JSON the
    browser receives)."""
    charts = at.get("plotly_chart")
    specs = [json.loads(c.proto.spec) for c in charts if key_part in (c.proto.id or "")]
    if not specs:
        specs = [json.loads(c.proto.spec) for c in charts]
    assert specs, "no plotly chart on the page"
    return specs[0]["data"]


@pytest.fixture(scope="module")
def compas_race_by_sex():
    return data.build_task(data.load_sample("compas"),
                           data.TaskSpec("race", "two-year-recid", ("Caucasian",), ("1",), strata_column="sex"))


# --------------------------------------------------------------------------------------------------
# 1. Strata use PR_t
# --------------------------------------------------------------------------------------------------
def test_strata_with_different_pr_t_train_different_models(tmp_path, cli):
    got = {}
    for p in ("0.2", "0.6"):
        code, out, err = cli(["train", *COMPAS_RACE, "--strata", "sex", "--model", "fair-lr", "--pr-t", p,
                              "--json", "--no-cache", "--out", str(tmp_path / f"m{p}.fairdash")])
        assert code == 0, err
        got[p] = json.loads(out)
        assert got[p]["target"]["target_rate"] == pytest.approx(float(p))
        assert got[p]["target"]["strata_column"] == "sex"
    lo, hi = got["0.2"], got["0.6"]
    # before the fix both gave pr_0 0.364, pr_1 0.217; a higher target predicts more positives in both groups
    assert (lo["bal_pr_0"], lo["bal_pr_1"]) != (hi["bal_pr_0"], hi["bal_pr_1"])  # named as the results file names them
    assert lo["bal_pr_0"] < hi["bal_pr_0"] and lo["bal_pr_1"] < hi["bal_pr_1"]


@pytest.mark.slow
def test_dashboard_strata_own_mode_hides_the_slider_and_slider_mode_moves_the_ceiling():
    at = new_app()
    at.switch_page("pages/target.py").run()
    at.selectbox(key="strata_column").set_value("education").run()
    ok(at)
    assert app_state.get(at, "spec").strata_column == "education"
    # "own": each stratum's own average; no PR_t slider, and a sentence saying why
    assert at.radio(key="strata_rates").value == "own"
    assert not _has_widget(at, "slider", "pr_t_slider")
    assert any("does not apply" in c.value and "PR_t" in c.value for c in at.caption)
    own = metric(at, CEILING)
    # "slider": the slider's PR_t in every stratum, and moving it moves the ceiling
    at.radio(key="strata_rates").set_value("slider").run()
    ok(at)
    assert _has_widget(at, "slider", "pr_t_slider")
    app_state.pr_t_slider(at).set_value(0.213).run()
    ok(at)
    low = metric(at, CEILING)
    assert np.allclose(frame(at, "stratum")["target P(ybar=1)"], 0.213)
    app_state.pr_t_slider(at).set_value(0.513).run()
    ok(at)
    high = metric(at, CEILING)
    assert np.allclose(frame(at, "stratum")["target P(ybar=1)"], 0.513)
    assert low != high
    # the number shown is the readout's share-weighted ceiling at that PR_t
    task = app_state.get(at, "task")
    want = rates_readout(task, make_target_spec(target_rate=0.513, strata_column="education"))
    assert high == f"{want['strata_ceiling_at_target']:.4f}"
    assert not errors(at) and own


# --------------------------------------------------------------------------------------------------
# 2. rates shows strata
# --------------------------------------------------------------------------------------------------
def test_rates_json_with_strata_has_a_per_stratum_readout(cli, compas_task):
    code, out, err = cli(["rates", *COMPAS_RACE, "--strata", "sex", "--json"])
    assert code == 0, err
    got = json.loads(out)
    assert set(got["strata"]) == {"Female", "Male"}
    for st_ in got["strata"].values():
        assert set(st_) >= {"base_rates", "group_share", "target_rates", "t", "transition", "flips",
                            "ceiling_at_target", "rows"}
        assert set(st_["rows"]) == {"0", "1"} and all(v > 0 for v in st_["rows"].values())
        # each stratum's own avg preset: one target for both groups, the mean of the stratum's base rates
        tr = st_["target_rates"]
        assert tr["0"] == pytest.approx(tr["1"])
        assert tr["0"] == pytest.approx(np.mean(list(st_["base_rates"].values())))
    # the stratum base rates are those of the training split's (stratum, group) cells
    plain = rates_readout(compas_task)
    n = {k: sum(st_["rows"][k] for st_ in got["strata"].values()) for k in ("0", "1")}
    assert sum(n.values()) == got["n_train"]
    for k in ("0", "1"):
        pooled = sum(st_["base_rates"][k] * st_["rows"][k] for st_ in got["strata"].values()) / n[k]
        assert pooled == pytest.approx(got["base_rates"][k], abs=1e-12)
    # top-level keys keep their meaning: the unconditional base rates and shares of the training split
    for key in ("base_rates", "group_share", "presets", "n_train", "n_test", "n_test_balanced"):
        assert got[key] == pytest.approx(plain[key])
    assert "strata" not in plain
    assert got["strata_ceiling_at_target"] == pytest.approx(
        sum(st_["ceiling_at_target"] * sum(st_["rows"].values()) for st_ in got["strata"].values()) / got["n_train"])


# --------------------------------------------------------------------------------------------------
# 3. A single explicit target
# --------------------------------------------------------------------------------------------------
def test_a_single_tpr_target_fills_tnr_with_the_one_default_everywhere(cli, compas_task):
    """A missing TNR_t is METHOD's default 0.8 (issue 19, item 10: it was 1 on the command line)."""
    code, out, err = cli(["rates", *COMPAS_RACE, "--criterion", "eo", "--tpr-target", "0.9", "--json"])
    assert code == 0, err
    got = json.loads(out)
    assert got["criterion"] == "eo" and got["target_rate"] is None
    for k in ("0", "1"):
        assert got["transition"][k]["p_ybar1_given_y1"] == pytest.approx(0.9, abs=1e-12)
        assert got["transition"][k]["p_ybar1_given_y0"] == pytest.approx(0.2, abs=1e-12)
    assert "TPR_t = 0.900, TNR_t = 0.800" in got["target_text"]
    # the trained row: no PR_t recorded, the target in words
    spec = make_target_spec("eo", tpr_target=0.9)
    exp = run_experiment(ExperimentPlan(compas_task, ["fair-lr"], target=spec, keep_models=True))
    row = exp.results.iloc[0]
    assert np.isnan(row["target_rate"])
    assert "TPR_t = 0.900, TNR_t = 0.800" in row["target"]
    (model,) = exp.models.values()
    np.testing.assert_allclose(model.transition_table.p_ybar1_given_y, [[0.2, 0.9], [0.2, 0.9]], atol=1e-12)


@pytest.mark.slow
def test_the_missing_explicit_target_has_one_default_in_spec_cli_help_dashboard_and_method(capsys):
    from fairdash.targeting.target_spec import DEFAULT_TNR_TARGET, DEFAULT_TPR_TARGET

    assert (DEFAULT_TPR_TARGET, DEFAULT_TNR_TARGET) == (1.0, 0.8)
    assert "**Default: `TPR_t = 1`, `TNR_t = 0.8`**" in (Path(__file__).parents[2] / "docs" / "METHOD.md").read_text()
    spec = make_target_spec("eo", tnr_target=0.7)
    assert (spec.tpr_target, spec.tnr_target) == (1.0, 0.7)
    spec = make_target_spec("eo", tpr_target=0.95)
    assert (spec.tpr_target, spec.tnr_target) == (0.95, 0.8)
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["rates", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "default 1 when --tnr-target is given" in help_text
    assert "default 0.8 when --tpr-target is given" in help_text
    at = new_app()
    at.switch_page("pages/target.py").run()
    at.radio(key="criterion").set_value("eo-targets").run()
    assert not at.exception
    assert (app_state.target(at).tpr_target, app_state.target(at).tnr_target) == \
        (DEFAULT_TPR_TARGET, DEFAULT_TNR_TARGET)
    assert at.number_input(key="tnr_target").value == DEFAULT_TNR_TARGET
    assert at.number_input(key="tpr_target").value == DEFAULT_TPR_TARGET


@pytest.mark.parametrize("extra, match", [
    (["--tpr-target", "0.9"], "equality of opportunity"),
    (["--criterion", "eo", "--tpr-target", "0.9", "--pr-t", "0.3"], "does not apply"),
    (["--criterion", "eo", "--tnr-target", "0.8", "--pr-t", "min"], "does not apply"),
])
def test_explicit_targets_refused_with_one_line(extra, match, cli):
    code, out, err = cli(["rates", *COMPAS_RACE, *extra])
    assert code == 2
    lines = _error_lines(err)
    assert len(lines) == 1 and lines[0].startswith("error: ") and match in lines[0], err
    assert "Traceback" not in err


# --------------------------------------------------------------------------------------------------
# 4. Theorem 1's flipped region is one-sided
# --------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_flips_on_adult_sex_at_0213(cli, adult_task):
    got = rates_readout(adult_task, make_target_spec(target_rate=0.213))["flips"]
    assert (got["0"]["from"], got["0"]["to"]) == (0, 1)
    assert got["0"]["eta_low"] == pytest.approx(0.437, abs=1e-3) and got["0"]["eta_high"] == 0.5
    assert (got["1"]["from"], got["1"]["to"]) == (1, 0)
    assert got["1"]["eta_low"] == 0.5 and got["1"]["eta_high"] == pytest.approx(0.734, abs=1e-3)
    # the CLI prints the same
    code, out, err = cli(["rates", "--data", "adult", "--s", "sex", "--s1", "Male", "--y", "salary", "--y1", ">50K",
                          "--drop", "fnlwgt", "--pr-t", "0.213", "--json"])
    assert code == 0, err
    assert json.loads(out)["flips"] == got


_ETA = np.random.default_rng(0).random(200_000)


@settings(max_examples=60, deadline=None)
@given(pr_b=st.floats(0.02, 0.98), pr_t=st.floats(0.02, 0.98))
def test_flipped_region_matches_the_bayes_decisions(pr_b, pr_t):
    """With eta ~ U(0, 1), the Bayes decision for ybar (P(ybar=1 | eta) = b + m eta > 1/2) differs from
    the one for y (eta > 1/2) on exactly the interval flip_regions gives, on one side of 1/2."""
    assume(abs(pr_b - pr_t) > 1e-6)
    p = targets.dp_transition_probabilities(pr_b, pr_t)
    b, m = p[0, 0], p[0, 1] - p[0, 0]
    (flip,) = targets.flip_regions(p)
    for_ybar = b + m * _ETA > 0.5
    for_y = _ETA > 0.5
    differ = for_ybar != for_y
    lo, hi = flip["eta_low"], flip["eta_high"]
    assert differ.mean() == pytest.approx(hi - lo, abs=0.01)
    # one-sided: every disagreement lies in the interval, in the stated direction
    assert np.all((_ETA[differ] >= lo - 1e-9) & (_ETA[differ] <= hi + 1e-9))
    inside = (_ETA > lo + 1e-9) & (_ETA < hi - 1e-9)
    assert np.all(differ[inside])
    if flip["from"] == 0:
        assert pr_t > pr_b and hi == 0.5 and np.all(for_ybar[differ])
    else:
        assert pr_t < pr_b and lo == 0.5 and not np.any(for_ybar[differ])
    # t_s is the interval's length where the interval is not clipped at 0 or 1
    t = float(targets.t_general(p)[0])
    if 0.0 < lo and hi < 1.0:
        assert hi - lo == pytest.approx(t, abs=1e-9)


def test_flipped_mass_of_the_methods_example_is_one_sided():
    p = targets.dp_transition_probabilities(0.33, 0.416)
    b, m = p[0, 0], p[0, 1] - p[0, 0]
    mass = float(((b + m * _ETA > 0.5) != (_ETA > 0.5)).mean())
    t = float(targets.t_general(p)[0])
    assert mass == pytest.approx(0.0736, abs=0.003)  # METHOD.md: t_s = 0.0736 of the group (decisions)
    assert abs(mass - 2 * t) > 0.05  # not the paper's two-sided |eta - 1/2| < t_s (0.147)
    (flip,) = targets.flip_regions(p)
    assert flip["eta_high"] - flip["eta_low"] == pytest.approx(mass, abs=0.005)


def test_min_preset_sentence_says_what_it_means(adult_task):
    out = rates_readout(adult_task, make_target_spec(target_rate="min"))
    texts = {k: describe_t(out["t"][k], f"s={k}", out["flips"][k]) for k in ("0", "1")}
    assert out["flips"]["1"]["eta_high"] == 1.0
    assert "everyone the data would call positive" in texts["1"]
    assert "no labels are changed" in texts["0"]
    for text in texts.values():
        assert "between 0.000 and 1.000" not in text and "and 1.000" not in text
    # and the reverse case: a group whose interval reaches 0
    text = describe_t(0.9, "g", {"from": 0, "to": 1, "eta_low": 0.0, "eta_high": 0.5})
    assert "everyone the data would call negative" in text and "0.000" not in text


def test_target_page_min_preset_sentence():
    at = new_app()
    at.switch_page("pages/target.py").run()
    at.button(key="preset_min").click().run()
    ok(at)
    text = " ".join(m.value for m in at.markdown)
    assert "everyone the data would call positive" in text
    assert "between 0.000 and 1.000" not in text and "between 1/2 and 1.000" not in text


# --------------------------------------------------------------------------------------------------
# 5. Ceilings that agree
# --------------------------------------------------------------------------------------------------
def test_explicit_targets_ceiling_is_the_readouts_and_the_curve_marks_no_pr_t():
    at = new_app()
    at.switch_page("pages/target.py").run()
    ok(at)
    assert any(str(tr.get("name", "")).startswith("PR_t") for tr in _plotly_traces(at))  # dp: one PR_t, marked
    at.radio(key="criterion").set_value("eo-targets").run()
    ok(at)
    assert not errors(at)
    task = app_state.get(at, "task")
    spec = app_state.target(at)
    assert spec == make_target_spec("eo", tpr_target=1.0, tnr_target=0.8)
    assert (spec.tpr_target, spec.tnr_target) == (1.0, 0.8)  # the documented default
    assert metric(at, CEILING) == f"{rates_readout(task, spec)['ceiling_at_target']:.4f}"
    names = [str(tr.get("name", "")) for tr in _plotly_traces(at)]
    assert not any(n.startswith("PR_t") for n in names), names
    # a different TNR_t moves the ceiling with it
    at.number_input(key="tnr_target").set_value(0.7).run()
    ok(at)
    spec = make_target_spec("eo", tpr_target=1.0, tnr_target=0.7)
    assert metric(at, CEILING) == f"{rates_readout(task, spec)['ceiling_at_target']:.4f}"


@pytest.mark.parametrize("spec", [make_target_spec("eo", tpr_target=1.0, tnr_target=0.8),
                                  make_target_spec("dp", 0.45)], ids=["eo-targets", "dp"])
def test_measured_accuracy_respects_the_ceiling_on_the_same_rows(spec, compas_task):
    res = run_experiment(ExperimentPlan(compas_task, ["fair-lr", "lr"], seeds=(0, 1), target=spec)).results
    assert len(res) == 4
    assert np.all(res["accuracy"] <= res["ceiling_at_measured"] + 1e-9)
    assert np.all(res["pop_accuracy"] <= res["pop_ceiling_at_measured"] + 1e-9)
    # each ceiling is Theorem 2 at the measured rates on the rows it sits beside
    from fairdash.data import split_task

    for _, row in res.iterrows():
        split = split_task(compas_task, seed=int(row["seed"]))
        idx = split.balanced_test if spec.criterion == "dp" else split.test
        r = targets.base_rates(compas_task.y[idx], compas_task.s[idx], 2)
        p = targets.group_shares(compas_task.s[idx], 2)
        want = targets.accuracy_ceiling(r, p, [row["pr_0"], row["pr_1"]])
        assert row["ceiling_at_measured"] == pytest.approx(want, abs=1e-12)
        assert row["n_eval"] == len(idx)


# --------------------------------------------------------------------------------------------------
# 6. make_target_spec: every refusal a FairDashError, a valid spec round-trips
# --------------------------------------------------------------------------------------------------
_anything = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3),
                      st.sampled_from(["min", "avg", "max", "AVG ", "0.3", "x", "", "nan"]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(criterion=st.one_of(st.none(), st.sampled_from(["dp", "eo", "EO", "x", ""])), target_rate=_anything,
       delta=st.one_of(st.floats(-1, 2), st.just(1.0)), tpr=_anything, tnr=_anything,
       strata=st.sampled_from([None, "", "sex"]), preset=st.sampled_from([None, "min", "avg", "max", "median"]))
def test_make_target_spec_refuses_only_with_a_message_and_round_trips(criterion, target_rate, delta, tpr, tnr,
                                                                       strata, preset):
    try:
        spec = make_target_spec(criterion, target_rate, delta, tpr, tnr, strata_column=strata, preset=preset)
    except FairDashError as e:
        assert str(e).strip()
        return
    assert isinstance(spec, TargetSpec)
    d = spec.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert TargetSpec.from_dict(json.loads(json.dumps(d))) == spec
    if spec.explicit:
        assert spec.criterion == "eo" and spec.target_rate is None and spec.tpr_target + spec.tnr_target > 1
        assert spec.strata_column is None and spec.delta == 1.0
    elif spec.target_rate is not None:
        assert 0 < spec.target_rate < 1
    else:
        assert spec.preset in targets.PRESETS


@given(rate=st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0), st.just(float("nan"))))
def test_pr_t_outside_the_open_interval_is_refused(rate):
    with pytest.raises(FairDashError, match="."):
        make_target_spec("dp", rate)


@given(tpr=st.floats(0, 1), tnr=st.floats(0, 1))
def test_tpr_plus_tnr_at_most_one_is_refused(tpr, tnr):
    assume(tpr + tnr <= 1.0)
    with pytest.raises(FairDashError, match="more than 1"):
        make_target_spec("eo", tpr_target=tpr, tnr_target=tnr)


@given(rate=st.floats(0.001, 0.999), delta=st.floats(0.01, 1.0), strata=st.sampled_from([None, "sex"]),
       crit=st.sampled_from(["dp", "eo"]))
def test_valid_rate_specs_round_trip(rate, delta, strata, crit):
    assume(not (strata and crit == "eo"))
    spec = make_target_spec(crit, rate, delta, strata_column=strata, stratum_target_rates={0: 0.4} if strata else None)
    assert TargetSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    assert spec.with_rate(spec.target_rate) == spec


# --------------------------------------------------------------------------------------------------
# 7. Runs keep where they came from; model files keep when they were fitted
# --------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_run_keeps_its_data_and_task_after_other_data_is_loaded(adult_1000_csv):
    from fairdash.report import build_report_from_sweep

    at = upload(new_app(), "adult_small.csv", adult_1000_csv)
    if _has_widget(at, "button", "confirm_task"):  # an upload's guessed choices are confirmed by a click
        at.button(key="confirm_task").click().run()
        ok(at)
    assert app_state.get(at, "table_name") == "adult_small.csv"
    assert (app_state.get(at, "spec").s_column, app_state.get(at, "spec").y_column) == ("sex", "salary")
    at.switch_page("pages/train.py").run()
    at.multiselect(key="train_models").set_value(["fair-lr"]).run()
    at.button(key="train_button").click().run(timeout=400)
    ok(at)
    assert not errors(at)
    trained_task = app_state.get(at, "task")
    # now load another data set
    at.switch_page("pages/data.py").run()
    at.radio(key="data_source").set_value(at.radio(key="data_source").options[0]).run()
    at.selectbox(key="sample_choice").set_value("compas").run()
    ok(at)
    assert app_state.get(at, "table_id") == "sample:compas"
    at.switch_page("pages/export.py").run()
    ok(at)
    assert not errors(at)
    assert any("adult_small.csv" in c.value for c in at.caption)
    run_ = app_state.get(at, "run")
    assert run_.task is trained_task
    cfg = run_.spec.to_dict()
    assert cfg["data"] == "adult_small.csv"
    assert (cfg["task"]["s_column"], cfg["task"]["y_column"]) == ("sex", "salary")
    assert cfg["task"]["s1_values"] == ["Male"] and cfg["task"]["y1_values"] == [">50K"]
    assert cfg["target"]["criterion"] == "dp" and cfg["models"] == ["fair-lr"]
    text = json.dumps(cfg)
    assert RunSpec.from_dict(json.loads(text)).to_dict() == cfg
    # the report builds from the dashboard's configuration (the upload is not on disk: a note says so)
    html = build_report_from_sweep(run_.results, json.loads(text))
    assert "<html" in html.lower() and "adult_small.csv" in html
    # and from the same configuration naming a readable sample
    cfg_sample = dict(json.loads(text), data="adult")
    html = build_report_from_sweep(run_.results, cfg_sample)
    assert "could not be read again" not in html


@pytest.mark.parametrize("config", [{"data": "adult", "task": "abc123"}, {"data": "adult"}, "abc123",
                                    {"data": "adult", "task": {"s_column": "sex"}, "target": "dp"}])
def test_a_configuration_without_a_task_is_a_message(config):
    results = pd.DataFrame({"model": ["lr"], "label": ["LR"], "target_rate": [np.nan], "accuracy": [0.8]})
    with pytest.raises(FairDashError):
        from fairdash.report import build_report_from_sweep

        build_report_from_sweep(results, config)


def test_model_file_and_cache_keep_the_original_fit(tmp_path, compas_task):
    from fairdash.files.export import load_model, model_bytes

    cache = FitCache(tmp_path / "cache")
    spec = make_target_spec("dp", 0.4)
    first = fit_model(compas_task, "fair-lr", target=spec, cache=cache)
    assert first.fitted_at and first.fit_seconds > 0
    loaded = load_model(model_bytes(first))
    assert loaded.fitted_at == first.fitted_at
    again = fit_model(compas_task, "fair-lr", target=spec, cache=FitCache(tmp_path / "cache"))
    assert again.fit_seconds == first.fit_seconds and again.fitted_at == first.fitted_at
    assert load_model(model_bytes(again)).fitted_at == first.fitted_at
    # the results rows say it came from the cache, with the original time
    res = run_experiment(ExperimentPlan(compas_task, ["fair-lr"], target=spec),
                         cache=FitCache(tmp_path / "cache")).results
    assert bool(res["cached"].iloc[0])
    assert res["fit_seconds"].iloc[0] == first.fit_seconds and res["fitted_at"].iloc[0] == first.fitted_at


# --------------------------------------------------------------------------------------------------
# 8. Conditional parity measured
# --------------------------------------------------------------------------------------------------
def test_strata_runs_report_the_conditional_ratio(compas_race_by_sex):
    from fairdash.data import split_arrays

    task = compas_race_by_sex
    assert "sex" in task.features  # the legitimate factor stays a feature
    spec = make_target_spec("dp", 0.45, strata_column="sex")
    exp = run_experiment(ExperimentPlan(task, ["fair-lr"], target=spec, keep_models=True))
    row = exp.results.iloc[0]
    assert np.isfinite(row["cond_pr_ratio"]) and np.isfinite(row["pop_cond_pr_ratio"])
    (model,) = exp.models.values()
    arrays = split_arrays(task, 0)
    for key, idx in (("cond_pr_ratio", arrays.balanced_test), ("pop_cond_pr_ratio", np.arange(len(arrays.y_test)))):
        pred = np.asarray(model.estimator.predict(arrays.X_test[idx])).astype(int)
        s, strata = arrays.s_test[idx], arrays.strata_test[idx]
        # by hand: per stratum min/max of the groups' positive rates; the ratio shown is the worst stratum's,
        # the share-weighted mean is kept beside it under its own name (issue 18)
        ratios, weights = [], []
        for k in np.unique(strata):
            rates = [pred[(strata == k) & (s == j)].mean() for j in (0, 1)]
            ratios.append(min(rates) / max(rates))
            weights.append(int((strata == k).sum()))
        assert row[key] == pytest.approx(min(ratios), abs=1e-12)
        assert row[key + "_mean"] == pytest.approx(np.average(ratios, weights=weights), abs=1e-12)
        assert (row[key], row[key + "_mean"]) == pytest.approx(metrics.conditional_ratio(pred, s, strata, 2), abs=1e-12)
    dropped = data.build_task(data.load_sample("compas"), data.TaskSpec(
        "race", "two-year-recid", ("Caucasian",), ("1",), strata_column="sex", drop=("sex",)))
    assert "sex" not in dropped.features


# --------------------------------------------------------------------------------------------------
# 9. One class for everyone is not parity
# --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def noise_table(tmp_path_factory) -> Path:
    rng = np.random.default_rng(0)
    n = 2000
    df = pd.DataFrame({"f1": rng.normal(size=n), "f2": rng.normal(size=n), "f3": rng.choice(list("abc"), n),
                       "grp": rng.choice(["a", "b"], n), "label": (rng.random(n) < 0.1).astype(int)})
    path = tmp_path_factory.mktemp("noise") / "noise.csv"
    df.to_csv(path, index=False)
    return path


NOISE = ["--s", "grp", "--s1", "b", "--y", "label", "--y1", "1"]


def test_one_class_for_everyone_is_not_parity(noise_table, tmp_path, cli):
    assert np.isnan(metrics.min_over_max([0, 0]))
    assert np.isnan(metrics.min_over_max([0.0, 0.0, 0.0]))
    task = data.build_task(pd.read_csv(noise_table), data.TaskSpec("grp", "label", ("b",), ("1",)))
    res = run_experiment(ExperimentPlan(task, ["fair-lr", "lr"], target=make_target_spec())).results
    for _, row in res.iterrows():
        assert row["pr_0"] == 0 and row["pr_1"] == 0
        assert np.isnan(row["pr_ratio"]) and np.isnan(row["tpr_ratio"]) and np.isnan(row["pop_pr_ratio"])
        assert row["one_class"] == f"predicts 0 for everyone ({row['n_eval']} rows)"
    assert any("predicts 0 for everyone" in n for n in metrics.one_class_notes(res))
    code, out, err = cli(["train", "--data", str(noise_table), *NOISE, "--model", "fair-lr", "--no-cache",
                          "--out", str(tmp_path / "m.fairdash")])
    assert code == 0, err
    assert re.search(r"^\s*pr_ratio\s+n/a$", out, re.M), out
    assert "1.0000" not in [line.split()[-1] for line in out.splitlines() if line.strip().startswith("pr_ratio")]
    assert re.search(r"^\s*note: .*predicts 0 for everyone", out, re.M), out


# --------------------------------------------------------------------------------------------------
# 10. The multi-group avg preset is the mean
# --------------------------------------------------------------------------------------------------
@given(rates=st.lists(st.floats(0.01, 0.99), min_size=2, max_size=6))
def test_avg_preset_is_the_mean_of_the_group_base_rates(rates):
    p = targets.presets(rates)
    assert p["avg"] == pytest.approx(float(np.mean(rates)), abs=1e-12)
    assert p["min"] == min(rates) and p["max"] == max(rates)


def test_avg_preset_three_groups():
    assert targets.presets([0.1, 0.2, 0.58])["avg"] == pytest.approx(np.mean([0.1, 0.2, 0.58]), abs=1e-12)
    assert targets.presets([0.1, 0.2, 0.58])["avg"] != pytest.approx(0.34)  # not (min + max) / 2
    rng = np.random.default_rng(1)
    n = 3000
    grp = rng.choice(["a", "b", "c"], n)
    base = {"a": 0.1, "b": 0.2, "c": 0.58}
    df = pd.DataFrame({"x": rng.normal(size=n), "grp": grp,
                       "label": (rng.random(n) < np.vectorize(base.get)(grp)).astype(int)})
    task = data.build_task(df, data.TaskSpec("grp", "label", (), ("1",), s_multi=True))
    assert task.n_groups == 3
    out = rates_readout(task)
    r = list(out["base_rates"].values())
    assert out["presets"]["avg"] == pytest.approx(np.mean(r), abs=1e-12)
    assert out["presets"]["avg"] != pytest.approx((min(r) + max(r)) / 2, abs=1e-3)
    assert out["target_rate"] == pytest.approx(np.mean(r), abs=1e-12)


# --------------------------------------------------------------------------------------------------
# Target resolution has one home
# --------------------------------------------------------------------------------------------------
def test_only_target_spec_resolves_presets():
    """``presets(...)[name]`` (turning a preset name into a PR_t) appears only in fairdash/targeting/target_spec.py
    and in fairdash/targeting/conditional.py (the per-stratum maths)."""
    allowed = {ROOT / "fairdash" / "targeting" / "target_spec.py", ROOT / "fairdash" / "targeting" / "conditional.py"}
    files = [*(ROOT / "fairdash").rglob("*.py"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py"]
    pattern = re.compile(r"presets\([^()]*\)\s*\[")
    offenders = [f"{f.relative_to(ROOT)}:{i}" for f in files if f not in allowed
                 for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not offenders, offenders
    # the check finds what it looks for
    assert pattern.search((ROOT / "fairdash" / "targeting" / "target_spec.py").read_text(encoding="utf-8"))


@pytest.mark.parametrize("rate", ["avg", "min", 0.3])
def test_a_pr_t_with_explicit_targets_is_refused_even_as_the_default_preset_name(rate):
    """A PR_t given with explicit TPR/TNR targets is refused, the avg preset's name included (it is
    also the default, which must not make it pass silently)."""
    with pytest.raises(FairDashError, match="does not apply"):
        make_target_spec("eo", rate, tpr_target=0.9)


# --------------------------------------------------------------------------------------------------
# issue 19, item 18: the band is where decisions change; the transition moves |PR_t - PR_b^s| of labels
# --------------------------------------------------------------------------------------------------
def test_methods_worked_example_is_0_0736_and_0_147():
    p = targets.dp_transition_probabilities(0.33, 0.416)
    t = float(targets.t_general(p)[0])
    assert round(t, 4) == 0.0736 and round(2 * t, 3) == 0.147
    method = (Path(__file__).parents[2] / "docs" / "METHOD.md").read_text()
    assert "0.0736" in method and "0.147" in method
    assert "0.076" not in method and "0.149" not in method


@given(pr_b=st.floats(0.02, 0.98), pr_t=st.floats(0.02, 0.98))
@settings(max_examples=60, deadline=None)
def test_the_transition_moves_the_gap_between_target_and_base_rate_at_every_eta(pr_b, pr_t):
    """Simulated: a group with eta ~ Beta, labels y ~ Bernoulli(eta), target labels drawn from the
    transition. The share of labels that change is |PR_t - PR_b| (delta = 1), and changes happen outside
    the decision band too."""
    tb = targets.transition_table([pr_b, 0.5], [0.5, 0.5], pr_t)
    moved = tb.labels_moved[0]
    assert moved.sum() == pytest.approx(abs(pr_t - pr_b), abs=1e-12)
    assert min(moved) == 0.0
    rng = np.random.default_rng(0)
    n = 200_000
    a = 2.0
    eta = rng.beta(a * pr_b / (1 - pr_b), a, size=n)  # mean pr_b
    y = rng.random(n) < eta
    p = tb.p_ybar1_given_y[0]
    ybar = rng.random(n) < np.where(y, p[1], p[0])
    changed = ybar != y
    assert changed.mean() == pytest.approx(abs(pr_t - pr_b), abs=0.01)
    flip = targets.flip_regions(tb.p_ybar1_given_y)[0]
    outside = (eta < flip["eta_low"]) | (eta > flip["eta_high"])
    if abs(pr_t - pr_b) > 0.05 and outside.mean() > 0.2:
        assert changed[outside].mean() > 0.0  # "nobody else's label changes" was wrong


@pytest.mark.slow
def test_the_readout_words_say_what_moves_and_no_longer_that_nobody_else_changes(adult_task, cli):
    out = rates_readout(adult_task, make_target_spec(target_rate=0.2))
    for k in ("0", "1"):
        moved = out["labels_moved"][k]
        assert moved["0_to_1"] + moved["1_to_0"] == pytest.approx(abs(0.2 - out["base_rates"][k]), abs=1e-12)
        text = describe_t(out["t"][k], f"s={k}", out["flips"][k], moved)
        assert "Nobody else" not in text and "decision changes" in text
        assert f"{abs(0.2 - out['base_rates'][k]):.1%} of the group's labels move from" in text
    code, printed, _ = cli(["rates", "--paper", "adult-sex", "--pr-t", "0.2"])
    assert code == 0 and "Nobody else" not in printed and "of the group's labels move from 0 to 1" in printed
    for doc in ("docs/METHOD.md", "assets/how_it_works.md", "pages/target.py", "fairdash/analysis/rates.py"):
        text = (Path(__file__).parents[2] / doc).read_text().lower()
        assert "nobody else's label" not in text and "nobody on the\nother side of one half is relabelled" not in text
