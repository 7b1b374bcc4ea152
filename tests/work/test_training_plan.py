"""Issue 28, item 3: the job plan lives in the library. The Train page shows ``plan_training(spec).n_fits``;
``train_run`` runs ``experiments.plan_fits`` itself: the count shown is the number of fits run. The sweep's
grid, what is sweepable, which rules and models are offered and which model is offered for download are
library functions, not page code."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairdash.data import TaskSpec, build_task
from fairdash.files.run_spec import RunSpec
from fairdash.targeting.criteria import DP, EO
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work import runs
from fairdash.work.fit_cache import FitCache


@pytest.fixture(scope="module")
def small_task():
    rng = np.random.default_rng(3)
    n = 400
    table = pd.DataFrame({"s": rng.integers(0, 2, n), "x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    table["y"] = ((table["x1"] + 0.5 * table["s"] + rng.normal(scale=0.5, size=n)) > 0.3).astype(int)
    return build_task(table, TaskSpec(s_column="s", y_column="y", s1_values=("1",), y1_values=("1",)))


@pytest.mark.parametrize("models, grid, seeds, decision, only_serving", [
    (("fair-lr", "lr"), (None,), (0,), "threshold", True),
    (("fair-lr", "lr"), (0.3, 0.45), (0, 1), "threshold", True),  # lr trains once per seed
    (("fair-lr", "lr"), (0.3, 0.45), (0,), "group-rates", True),  # lr's decisions depend on the target
    (("fair-lr", "lr", "zafar-eqopp"), (0.35,), (0,), "threshold", True),  # zafar-eqopp is skipped for dp
])
def test_the_count_shown_is_the_number_of_fits_run(small_task, models, grid, seeds, decision, only_serving):
    spec = RunSpec(data="test", task=small_task.spec, target=make_target_spec("dp", 0.4, decision=decision),
                   models=models, target_rates=grid, seeds=seeds)
    plan = runs.plan_training(spec, only_serving=only_serving)
    run = runs.train_run(small_task, spec, data_name="t", only_serving=only_serving, cache=FitCache(directory=False))
    assert plan.n_fits == len(run.results) > 0
    assert [(f.model, f.seed) for f in plan.fits] == list(zip(run.results["model"], run.results["seed"]))
    assert [m for m, _ in plan.skipped] == [m for m, _ in run.skipped]


def test_the_sweep_grid_and_what_may_be_swept():
    assert runs.sweep_grid(0.5, 0.1, 5) == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert runs.sweep_grid(0.3, 0.3, 4) == [0.3]
    assert runs.sweepable(make_target_spec("dp", 0.3))
    assert not runs.sweepable(make_target_spec("eo", tpr_target=0.8, tnr_target=0.8))
    assert not runs.sweepable(None)


def test_the_offered_rules_and_models(small_task):
    assert "group-rates" in runs.offered_rules(small_task, DP)
    assert runs.offered_models(["fair-lr", "lr", "zafar-eqopp"], DP) == ["fair-lr", "lr"]
    assert runs.offered_models(["fair-lr", "zafar-eqopp"], DP, include_other=True) == ["fair-lr", "zafar-eqopp"]


def test_the_model_offered_for_download(small_task):
    spec = RunSpec(data="test", task=small_task.spec, target=make_target_spec("dp", 0.4), models=("lr", "fair-lr"),
                   target_rates=(0.3, 0.45), seeds=(0, 1))
    run = runs.train_run(small_task, spec, data_name="t", cache=FitCache(directory=False))
    assert run.default_model(0.44)[:3] == ("fair-lr", 0.45, 0)  # the paper's method, nearest PR_t, first repeat
    assert run.default_model(0.3)[:3] == ("fair-lr", 0.3, 0)
    key = run.default_model(None)
    assert run.model_words(key).startswith("FairLR, PR_t ") and run.model_words(key).endswith(", repeat 0")
    lr = next(k for k in run.models if k[0] == "lr")
    assert run.model_words(lr) == "LR, repeat 0"  # a model without a PR_t says none


# Issue 28, item 3: the Train page's defaults, words, request and "why not" are the library's (fairdash.app.train_form)
def test_the_train_form_builds_the_request_the_page_trains(small_task):
    from fairdash.app import train_form as form

    target = make_target_spec("dp", 0.4)
    spec = form.run_spec(small_task, target, ["fair-lr", "lr"], form.sweep_grid(0.5, 0.3, 3), 2, {"lr": {"C": 2.0}},
                         data="test")
    assert spec == RunSpec(data="test", task=small_task.spec, target=target, models=("fair-lr", "lr"),
                           target_rates=(0.3, 0.4, 0.5), seeds=(0, 1), options={"lr": {"C": 2.0}},
                           group_names=small_task.group_names)
    assert form.n_fits(spec, include_other=False) == runs.plan_training(spec).n_fits
    assert form.run_spec(small_task, None, ["lr"], form.SINGLE, 1, {}, data="test") is None
    assert form.n_fits(None, include_other=False) == 0
    assert form.DEFAULTS.sweep_range({"min": 0.24123, "max": 0.3117}) == (0.241, 0.312)
    assert form.DEFAULTS.models == runs.DEFAULT_MODELS and form.DEFAULTS.repeats == 1


def test_why_train_is_unavailable_in_order():
    from fairdash.app import train_form as form

    target = make_target_spec("dp", 0.4)
    assert form.why_not(object(), object(), [], None).startswith("a training is running")
    assert form.why_not(None, object(), [], None).startswith("a new upload waits")
    assert form.why_not(None, None, [], target) == "choose at least one model"
    assert form.why_not(None, None, ["lr"], None) == "the target is not valid"
    assert form.why_not(None, None, ["lr"], target) is None


def test_the_words_about_models_and_rules(small_task):
    from fairdash.app import train_form as form
    from fairdash.models.registry import MODELS

    assert MODELS["lr"].serves_words() == "plain model (reference for every criterion)"
    assert MODELS["kamiran"].choice_words(DP) == "Kamiran & Calders: serves demographic parity"
    assert MODELS["kamiran"].choice_words(EO).endswith("(NOT equality of opportunity)")
    choices = form.ModelChoices(DP, ("fair-lr", "lr", "zafar-eqopp"), ("GP (not installed yet (ImportError))",),
                                ("fair-lr", "lr"), ("ZafarEqOpp",))
    assert choices.default() == ["fair-lr", "lr"] and choices.keep(["zafar-eqopp", "lr"]) == ["lr"]
    assert choices.note() == ("Not offered for demographic parity: ZafarEqOpp (made for another criterion). "
                              "Not available yet: GP (not installed yet (ImportError)).")
    assert choices.lines()[1] == ("- **LR** (`lr`, plain model (reference for every criterion)): "
                                  + MODELS["lr"].description)
    rules = form.offered_rules(small_task, DP)
    assert form.first_rule("group-rates", rules) == "group-rates" and form.first_rule("nonesuch", rules) == "threshold"
    assert not form.rule_caption("threshold", rules).endswith("one threshold per stratum and group.)")
    assert form.rule_caption("threshold", ["threshold", "overall-rate"]).endswith(
        "('one cut per group, set to each group's target (decides with s)' is not offered with a legitimate factor: "
        "it would need one threshold per stratum and group.)")
