"""Issue 48, item 3: a rule's cuts and a tie are typed records, not strings and tuples decoded by length; what they
write into a model file is what they wrote before."""
from __future__ import annotations

import numpy as np
import pytest

from fairdash.errors import FairDashError
from fairdash.targeting.criteria import DP, EO, pr_ratio_ceiling, tpr_ratio_ceiling
from fairdash.targeting.decision import RULES, Cuts, DecisionRule, FittedDecision, Tie, cut_with_ties


def test_a_rules_cuts_are_an_enum_that_equals_its_old_word():
    assert {r.name: r.cuts for r in RULES.values()} == {
        "threshold": Cuts.NONE, "overall-rate": Cuts.OVERALL, "group-rates": Cuts.PER_GROUP,
        "post-processing": Cuts.NONE}
    assert all(isinstance(r.cuts, Cuts) for r in RULES.values())
    assert [c.value for c in Cuts] == ["none", "overall", "per-group"] and Cuts.OVERALL == "overall"
    worded = DecisionRule("by-word", "w", "e", needs_s=False, cuts="per-group")  # a rule written with the word
    assert worded.cuts is Cuts.PER_GROUP and worded.cuts_per_group and worded.aims_at_target
    assert f"{worded.cuts}" == "per-group"
    with pytest.raises(ValueError):
        DecisionRule("bad", "w", "e", needs_s=False, cuts="everywhere")


def test_a_tie_is_a_record_written_as_the_numbers_it_was():
    no_tie, plain, salted_tie = Tie.read([]), Tie.read([0.25, 0.5]), Tie.read([0.25, 0.5, 3.0])
    assert no_tie is None and Tie.read(()) is None and Tie.read(None) is None
    assert (plain.value, plain.share, plain.salt) == (0.25, 0.5, 0) and salted_tie.salt == 3
    assert plain.to_list() == [0.25, 0.5] and salted_tie.to_list() == [0.25, 0.5, 3.0]
    old = {"rule": "group-rates", "cuts": [0.25, 0.7, 0.1], "ties": [[0.25, 0.5], [], [0.1, 0.75, 2.0]], "seed": 9,
           "draws": "row"}
    d = FittedDecision.from_dict(old)
    assert d.ties == (Tie(0.25, 0.5), None, Tie(0.1, 0.75, 2)) and d.to_dict() == old
    # a decision made with plain tuples (as older code made them) is the same decision
    assert FittedDecision("group-rates", d.cuts, ((0.25, 0.5), (), (0.1, 0.75, 2.0)), 9) == d
    for bad in ([0.25], [0.25, 0.5, 1.0, 2.0]):
        with pytest.raises(FairDashError, match="ties are malformed"):
            FittedDecision.from_dict({**old, "ties": [bad, [], []]})
    with pytest.raises(FairDashError, match="ties are malformed"):
        FittedDecision.from_dict({**old, "ties": [[0.25, 0.5]]})  # one tie for three cuts


def test_cut_with_ties_gives_a_tie_or_none():
    cut, tie = cut_with_ties(np.array([0.1, 0.2, 0.3, 0.4]), 0.5)
    assert tie is None and 0.2 < cut < 0.3
    cut, tie = cut_with_ties(np.array([0.1, 0.5, 0.5, 0.5, 0.5, 0.9]), 0.5)
    assert isinstance(tie, Tie) and cut == tie.value == 0.5 and tie.share == 0.5 and tie.salt == 0


def test_what_depends_on_a_criterions_rate_is_its_field():
    """The five branches on ``self.rate == "pr"`` became fields: each criterion says its words and its ceiling."""
    assert (DP.other_rate, EO.other_rate) == (EO.rate, DP.rate)
    assert (DP.rate_name, EO.rate_name) == ("positive rate", "true positive rate")
    assert "demographic parity" in DP.ratio_words and "equal opportunity" in EO.ratio_words
    assert DP.ceiling_name == "accuracy ceiling (Theorem 2)" and "TPR ratio" in EO.ceiling_name
    rates, shares = [0.2, 0.5], [0.4, 0.6]
    for crit, ceiling in ((DP, pr_ratio_ceiling), (EO, tpr_ratio_ceiling)):
        got, want = crit.ratio_ceiling(rates, shares, 11), ceiling(rates, shares, 11)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
