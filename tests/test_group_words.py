"""Words from the data (issue 20, item 6): the group with the lowest base rate is called the disadvantaged
group, unless the analyst names the protected group on the Data page; the Target page headlines the share
of each group whose labels move (t_s stays in the detail table)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fairdash import targets
from fairdash.rates import describe_moves
from test_app import _always_run_the_frame, _cpu, _new_app, _ok, _sidebar  # noqa: F401 (autouse fixtures)

rate = st.floats(0.01, 0.99)


@given(rate, rate, rate)
@settings(max_examples=200, deadline=None)
def test_moved_labels_is_the_gap_to_the_target_at_delta_one(r0, r1, pr_t):
    r = np.array([r0, r1])
    p = targets.dp_transition_probabilities(r, pr_t)
    assert targets.moved_labels(p, r) == pytest.approx(np.abs(pr_t - r), abs=1e-9)
    assert targets.disadvantaged_group(r) == (0 if r0 <= r1 else 1)


def test_smaller_delta_moves_more_labels():
    r = np.array([0.1, 0.4])
    assert np.all(targets.moved_labels(targets.dp_transition_probabilities(r, 0.25, 0.8), r)
                  > targets.moved_labels(targets.dp_transition_probabilities(r, 0.25), r))


def test_describe_moves_says_shares_not_t():
    up = {"from": 0, "to": 1, "eta_low": 0.3, "eta_high": 0.5}
    text = describe_moves("s=0 (a)", 0.1, 0.1, 0.2, up, "the disadvantaged group")
    assert text.startswith("For s=0 (a), the disadvantaged group: 10.0% of its labels move from 0 to 1")
    assert "at least 10.0% of the group" in text and "t_s" not in text
    assert "no labels and no decisions move" in describe_moves("g", 0.0, 0.2, 0.2, {"from": None, "to": None,
                                                                                   "eta_low": .5, "eta_high": .5})


def test_the_analyst_names_the_protected_group_and_the_wording_follows():
    at = _new_app()  # Adult: Female has the lower base rate
    assert any("Female is the disadvantaged group: it has the lowest base rate." in c.value for c in at.caption)
    assert "group 0: Female, disadvantaged" in _sidebar(at)
    at.selectbox(key="protected_group").set_value("Male").run()
    _ok(at)
    assert any("Male is the protected group (chosen above)." in c.value for c in at.caption)
    assert "group 1: Male, protected" in _sidebar(at)
    at.switch_page("pages/target.py").run()
    _ok(at)
    helps = {m.label: m.help for m in at.metric}
    assert "the protected group" in helps["s=1: labels that move"], helps
    assert "disadvantaged" not in helps["s=0: labels that move"], helps
    assert any(m.value.startswith("- For s=1 (Male), the protected group:") for m in at.markdown)
    at.switch_page("pages/data.py").run()  # the choice is kept across pages
    assert at.selectbox(key="protected_group").value == "Male"
