"""Issue 48, item 3: a rule's cuts and a tie are typed records, not strings and tuples decoded by length; what they
write into a model file is what they wrote before."""
from __future__ import annotations

import pytest

from fairdash.targeting.decision import RULES, Cuts, DecisionRule


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
