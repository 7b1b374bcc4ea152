"""A decision per person (issue 34, item 5): a randomised rule draws each row's decision from the row itself
(``targeting.decision.row_draws``: a hash of its features and the seed), so the same person gets the same decision
in any order, batch or file, and scoring one row at a time lands where scoring the table does. Model files
written before keep deciding by position, as they did, and say so."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdash.data import paper_arrays
from fairdash.files.scoring import DRAWN_BY_POSITION
from fairdash.models.core.state import model_from_state
from fairdash.models.target_reduction import TargetReduction
from fairdash.targeting.decision import FittedDecision, row_draws
from fairdash.targeting.target_spec import make_target_spec


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 40), p=st.integers(1, 6), seed=st.integers(0, 2**31), order=st.integers(0, 2**31))
def test_a_row_s_draw_depends_on_the_row_and_the_seed_alone(n, p, seed, order):
    X = np.random.default_rng(order).normal(size=(n, p)).round(2)
    u = row_draws(X, seed)
    perm = np.random.default_rng(order + 1).permutation(n)
    assert np.array_equal(row_draws(X[perm], seed), u[perm])
    assert np.array_equal(np.concatenate([row_draws(X[i:i + 1], seed) for i in range(n)]), u)
    assert ((0 <= u) & (u < 1)).all()
    assert np.array_equal(row_draws(np.where(X == 0, -0.0, X), seed), u)  # -0.0 is 0.0


def test_the_draws_are_uniform_and_change_with_the_seed():
    X = np.random.default_rng(0).normal(size=(20000, 5))
    u = row_draws(X, 0)
    assert abs(u.mean() - 0.5) < 0.01 and abs(np.quantile(u, 0.9) - 0.9) < 0.01
    assert np.mean(row_draws(X, 1) != u) == 1.0


@pytest.fixture(scope="module")
def reduction():
    a = paper_arrays("compas-race", seed=0)
    return a, TargetReduction(target=make_target_spec("dp", 0.401)).fit(a.X_train, a.y_train, a.s_train)


def test_the_blind_route_decides_alike_row_by_row_reversed_and_whole(reduction):
    a, m = reduction
    whole = m.predict(a.X_test)
    assert np.array_equal(m.predict(a.X_test[::-1])[::-1], whole)
    assert np.array_equal(np.concatenate([m.predict(a.X_test[i:i + 1]) for i in range(len(a.X_test))]), whole)
    assert np.array_equal(model_from_state(m.get_state()).predict(a.X_test), whole)
    for g in (0, 1):  # and it still lands: each group's rate within 0.03 of the target on the test rows
        assert abs(whole[a.s_test == g].mean() - 0.401) < 0.03


def test_a_model_file_from_before_keeps_drawing_by_position_and_says_so(reduction):
    from sklearn.utils import check_random_state

    a, m = reduction
    state = m.get_state()
    del state["meta"]["draws"]  # as files written before recorded it
    old = model_from_state(state)
    assert old.row_draws_ is False
    by_position = (old._positive_probs(a.X_test) >= check_random_state(0).rand(len(a.X_test))).astype(int)
    assert np.array_equal(old.predict(a.X_test), by_position)
    legacy = FittedDecision.from_dict({"rule": "overall-rate", "cuts": [0.5], "ties": [[0.5, 0.25]], "seed": 3})
    assert legacy.row_draws is False and FittedDecision.from_dict(
        {**legacy.to_dict(), "draws": "row"}).row_draws is True
    assert "position" in DRAWN_BY_POSITION and "same person" in DRAWN_BY_POSITION


def test_ties_at_a_cut_are_drawn_per_row(reduction):
    a, m = reduction
    scores = m.predict_proba(a.X_test)[:, 1]
    v = float(np.median(scores))
    tie = FittedDecision("overall-rate", (v,), ((v, 0.5),), seed=7)
    whole = tie.decide(m, a.X_test)
    one = np.concatenate([tie.decide(m, a.X_test[i:i + 1]) for i in range(len(a.X_test))])
    assert np.array_equal(whole, one)
