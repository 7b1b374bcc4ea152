"""Words from the label's meaning (issue 47, item 5): the error rates are named by what a positive decision is for
the person, from the analyst's words for it or the label's own: "application denied" -> wrongly denied (FPR) and
wrongly approved (FNR), a ``released`` label -> wrongly released and wrongly held; generic words only where neither
names an outcome, and then by whether a positive is favourable."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairdash.data import TaskSpec
from fairdash.data.meaning import error_words, outcome_words


@pytest.mark.parametrize("column, values, meaning, fpr, fnr, rate", [
    ("y", ("1",), "application denied (unfavourable)", "wrongly denied (FPR)", "wrongly approved (FNR)", "denial rate"),
    ("deny", ("yes",), "", "wrongly denied (FPR)", "wrongly approved (FNR)", "denial rate"),
    ("released", ("Yes",), "", "wrongly released (FPR)", "wrongly held (FNR)", "release rate"),
    ("outcome", ("1",), "released before trial (favourable)", "wrongly released (FPR)", "wrongly held (FNR)",
     "release rate"),
    ("two-year-recid", ("1",), "", "wrongly flagged as reoffending (FPR)", "wrongly cleared (FNR)", "recidivism rate"),
    ("hired", ("1",), "", "wrongly hired (FPR)", "wrongly not hired (FNR)", "hiring rate"),
    ("loan_status", ("Approved",), "", "wrongly approved (FPR)", "wrongly denied (FNR)", "approval rate"),
    ("salary", (">50K",), "", "wrongly selected (FPR)", "wrongly passed over (FNR)", "positive rate"),
])
def test_error_rates_are_named_by_the_label_s_meaning(column, values, meaning, fpr, fnr, rate):
    spec = TaskSpec("race", column, ("b",), values, positive_meaning=meaning)
    assert error_words(spec) == {"fpr": fpr, "fnr": fnr}
    assert outcome_words(spec)[2] == rate


def test_without_an_outcome_the_generic_words_follow_whether_a_positive_is_favourable():
    good, bad = (TaskSpec("race", "y", ("b",), ("1",), positive_favourable=f) for f in (True, False))
    assert error_words(good) == {"fpr": "wrongly selected (FPR)", "fnr": "wrongly passed over (FNR)"}
    assert error_words(bad) == {"fpr": "wrongly flagged (FPR)", "fnr": "wrongly cleared (FNR)"}
    assert error_words(favourable=False) == error_words(bad)  # a results file alone: by the favourable flag


@given(st.sampled_from(["denied", "approved", "released", "hired", "admitted", "accepted"]),
       st.sampled_from(["", "the ", "application "]), st.sampled_from(["", " (favourable)", " in 2020"]))
def test_the_outcome_is_found_wherever_it_sits_in_the_words(outcome, before, after):
    spec = TaskSpec("race", "y", ("b",), ("1",), positive_meaning=f"{before}{outcome}{after}")
    assert outcome_words(spec)[0] == outcome
    assert error_words(spec)["fpr"] == f"wrongly {outcome} (FPR)"
    negated = TaskSpec("race", "y", ("b",), ("1",), positive_meaning=f"not {outcome}")
    assert outcome_words(negated)[0] != outcome  # "not released" is not a release
