"""The same numbers on any machine (issue 38): fits that converge, so that the order of the sums (another
CPU's vector width, another BLAS kernel, the rows shuffled) moves no probability by more than
``SAME_NUMBERS_BOUND``; a fit that stops at its iteration cap is recorded as such; a run's record says what
it was computed with. A fit on shuffled rows is how a test tries another machine without one: it changes the
order of every sum the solver makes. (``tests/models/test_model_numbers.py`` compares with two machines' records;
``benchmarks/results/2026-11-28-convergence.md`` has the figures.)"""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdash._version import SAME_NUMBERS_BOUND, software_versions
from fairdash.cli import main
from fairdash.data import paper_arrays
from fairdash.device import float64_is_fast, training_dtype
from fairdash.models.core.weighted_lr import WeightedLR
from fairdash.models.fair_lr import LR, FairLR
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.experiments import ExperimentPlan, run_experiment

import golden_fits as G

COMPAS = paper_arrays("compas-race", seed=0)


def _kamiran_weights(y, s, scale):
    w = np.empty(len(y))
    for g in np.unique(s):
        for v in (0, 1):
            m = (s == g) & (y == v)
            w[m] = (s == g).mean() * (y == v).mean() / m.mean() * scale
    return w


MAKERS = {
    "lr": lambda a, rows: LR(device="cpu").fit(a.X_train[rows], a.y_train[rows]),
    "fair-lr": lambda a, rows: FairLR(target=make_target_spec("eo"), device="cpu").fit(a.X_train[rows], a.y_train[rows],
                                                                                a.s_train[rows]),
    "fair-lr-0.3": lambda a, rows: FairLR(target=make_target_spec("dp", 0.3), device="cpu").fit(
        a.X_train[rows], a.y_train[rows], a.s_train[rows]),
    "weighted-lr-x1000": lambda a, rows: WeightedLR(device="cpu").fit(
        a.X_train[rows], a.y_train[rows], sample_weight=_kamiran_weights(a.y_train, a.s_train, 1000.0)[rows]),
}
FILE_ORDER = {}


def _file_order(name):
    if name not in FILE_ORDER:
        model = MAKERS[name](COMPAS, np.arange(len(COMPAS.y_train)))
        FILE_ORDER[name] = model.predict_proba(COMPAS.X_test)[:, 1], np.asarray(model.predict(COMPAS.X_test))
    return FILE_ORDER[name]


@pytest.mark.parametrize("name", sorted(MAKERS))
@settings(max_examples=3, deadline=None)
@given(order=st.integers(0, 2**32 - 1))
def test_rows_in_another_order_give_the_same_fit(name, order):
    rows = np.random.default_rng(order).permutation(len(COMPAS.y_train))
    model = MAKERS[name](COMPAS, rows)
    got = model.predict_proba(COMPAS.X_test)[:, 1], np.asarray(model.predict(COMPAS.X_test))
    assert G.differences(*got, *_file_order(name)) == []


def test_the_gps_train_in_float64_on_the_cpu_and_on_gpus_whose_float64_is_fast():
    import torch

    assert training_dtype(torch.device("cpu")) == torch.float64
    # datacenter GPUs run float64 at half the float32 rate; consumer and workstation cards at 1/32 or 1/64
    assert [float64_is_fast(c) for c in ((6, 0), (7, 0), (8, 0), (9, 0), (10, 0))] == [True] * 5  # P100 ... B200
    assert [float64_is_fast(c) for c in ((6, 1), (7, 5), (8, 6), (8, 9), (12, 0))] == [False] * 5  # GTX ... RTX 50
    if torch.cuda.is_available():  # (the CUDA machine's own answer; CI has none)
        fast = float64_is_fast(torch.cuda.get_device_capability(0))
        assert training_dtype(torch.device("cuda:0")) == (torch.float64 if fast else torch.float32)


def test_a_fit_stopped_at_its_iteration_cap_is_recorded(compas_task):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exp = run_experiment(ExperimentPlan(compas_task, ["fair-lr", "lr"], target=make_target_spec("dp", 0.4),
                                            options={"fair-lr": {"max_iter": 3}}))
    by_model = exp.results.set_index("model")["converged"]
    assert by_model["fair-lr"] == False and by_model["lr"] == True  # noqa: E712 (numpy bools)
    assert any("stopped after" in str(w.message) and "before reaching tol" in str(w.message) for w in caught)


def test_a_runs_configuration_says_what_it_was_computed_with(tmp_path, capsys):
    out = tmp_path / "r.csv"
    code = main(["sweep", "--data", "compas", "--s", "race", "--s1", "Caucasian", "--y", "two-year-recid",
                 "--y1", "1", "--models", "lr", "--pr-t", "0.4", "--no-cache", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    record = json.loads((tmp_path / "r.csv.json").read_text())
    assert record["computed_with"] == software_versions()
    assert record["computed_with"]["processor"] and record["computed_with"]["numpy"] == np.__version__
    code = main(["report", "--results", str(out), "--out", str(tmp_path / "r.html")])
    assert code == 0
    html = (tmp_path / "r.html").read_text()
    assert "Processor" in html and software_versions()["processor"] in html


def test_the_bound_is_what_the_readme_states():
    readme = (G.RECORDS.parents[2] / "README.md").read_text()
    assert f"every probability within {SAME_NUMBERS_BOUND:.0e}".replace("e-0", "e-") in readme.replace("**", "")
