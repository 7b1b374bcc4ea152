"""Words from the data (issue 20, item 6): the group with the lowest base rate is called the disadvantaged
group, unless the analyst names the protected group on the Data page; the Target page headlines the share
of each group whose labels move (t_s stays in the detail table)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdash.analysis.rates import decisions_words, describe_t
from fairdash.targeting import targets

from app_pages import new_app, ok, sidebar

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")

rate = st.floats(0.01, 0.99)


@given(rate, rate, rate)
@settings(max_examples=200, deadline=None)
def test_moved_labels_is_the_gap_to_the_target_at_delta_one(r0, r1, pr_t):
    r = np.array([r0, r1])
    moved = targets.transition_table(r, np.array([0.5, 0.5]), pr_t).labels_moved.sum(axis=1)
    assert moved == pytest.approx(np.abs(pr_t - r), abs=1e-9)
    assert targets.disadvantaged_group(r) == (0 if r0 <= r1 else 1)


def test_smaller_delta_moves_more_labels():
    r = np.array([0.1, 0.4])
    shares = np.array([0.5, 0.5])
    assert np.all(targets.transition_table(r, shares, 0.25, 0.8).labels_moved.sum(axis=1)
                  > targets.transition_table(r, shares, 0.25).labels_moved.sum(axis=1))


def test_the_readout_says_shares_of_labels_and_decisions():
    up = {"from": 0, "to": 1, "eta_low": 0.3, "eta_high": 0.5}
    text = describe_t(0.1, "s=0 (a), the disadvantaged group", up, {"0_to_1": 0.1, "1_to_0": 0.0})
    text += decisions_words(0.1, 0.2)
    assert text.startswith("For s=0 (a), the disadvantaged group (t_s = 0.100)")
    assert "10.0% of the group's labels move from 0 to 1" in text and "at least 10.0% of the group" in text


def test_the_analyst_names_the_protected_group_and_the_wording_follows():
    at = new_app()  # Adult: Female has the lower base rate
    assert any("Female is the disadvantaged group: it has the lowest base rate." in c.value for c in at.caption)
    assert "group 0: Female, disadvantaged" in sidebar(at)
    at.selectbox(key="protected_group").set_value("Male").run()
    ok(at)
    assert any("Male is the protected group (chosen above)." in c.value for c in at.caption)
    assert "group 1: Male, protected" in sidebar(at)
    at.switch_page("pages/target.py").run()
    ok(at)
    helps = {m.label: m.help for m in at.metric}
    assert "the protected group" in helps["s=1: labels that move"], helps
    assert "disadvantaged" not in helps["s=0: labels that move"], helps
    assert any(m.value.startswith("- For s=1 (Male), the protected group") for m in at.markdown)
    at.switch_page("pages/data.py").run()  # the choice is kept across pages
    assert at.selectbox(key="protected_group").value == "Male"


def test_the_decisions_a_target_changes_are_counted_in_people_and_the_labels_words():
    """Issue 47, item 5: "31 more people denied" beside the share, from the group's training rows."""
    words = decisions_words(0.2, 0.241, 750, ("denied", "approved", "denial rate"))
    assert words == (" A model that meets the target decides at least 4.1% of the group (31 of 750 people in the "
                     "training rows) differently from its labels: 31 more people denied than by the labels (denial "
                     "rate 0.200 to 0.241).")
    fewer = decisions_words(0.5, 0.4, 10, ("released", "held", "release rate"))
    assert ": 1 fewer person released than by the labels (release rate 0.500 to 0.400)." in fewer
    assert "(0 of 1 person in the training rows) differently from its labels (positive rate" in decisions_words(
        0.5, 0.4, 1)
