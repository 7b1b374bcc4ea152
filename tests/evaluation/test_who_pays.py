"""Who pays for deciding without s (issue 49): the people the two sides of the price decide differently, with
intervals tested by their coverage on known answers; the feature the blind rule leans on, found on a table where s
is carried by one named proxy; nothing named where no feature carries s; and the paragraph, the table and the
figure where the price is."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairdash import data
from fairdash.evaluation.intervals import paired_difference_interval, wilson_interval
from fairdash.evaluation.who_pays.measure import decided_differently, leaned_on, s_strengths, within_group
from fairdash.evaluation.who_pays.table import LEANED, who_pays_frame, who_pays_tables
from fairdash.evaluation.who_pays.words import who_pays_sentences
from fairdash.figures.plots_who_pays import within_group_figure
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.experiments import ExperimentPlan, run_experiment


# ---- the intervals: properties, and coverage on known answers --------------------------------------------
@given(st.integers(0, 400), st.integers(1, 400))
def test_wilson_holds_the_share_and_stays_in_zero_one(k, n):
    k = min(k, n)
    lo, hi = (float(v) for v in wilson_interval(k, n))
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    assert (k == 0) == (lo == 0.0) and (k == n) == (hi == 1.0)
    assert hi > lo  # never a point, even at a count of 0


@given(st.lists(st.integers(0, 300), min_size=4, max_size=4).filter(lambda c: sum(c) > 0))
def test_the_paired_interval_holds_the_difference_and_turns_round_with_the_rules(cells):
    a, b, c, d = cells
    n = sum(cells)
    lo, hi = paired_difference_interval(a, b, c, d)
    assert -1.0 <= lo <= (b - c) / n + 1e-12 and (b - c) / n - 1e-12 <= hi <= 1.0
    lo2, hi2 = paired_difference_interval(a, c, b, d)  # the two rules swapped
    assert (lo2, hi2) == pytest.approx((-hi, -lo))


@pytest.mark.parametrize("cells", [(0.30, 0.01, 0.02, 0.67), (0.20, 0.05, 0.10, 0.65), (0.45, 0.005, 0.005, 0.54),
                                   (0.10, 0.00, 0.03, 0.87)])
def test_the_paired_interval_covers_the_known_difference(cells):
    """Draw 600 tables of 300 rows from known cell shares: the 95% interval of the net change holds the true
    difference on at least 93% of them, the share refused (Wilson) too."""
    rng = np.random.default_rng(7)
    true_net, true_refused = cells[1] - cells[2], cells[2]
    net_hits = refused_hits = 0
    for counts in rng.multinomial(300, cells, size=600):
        lo, hi = paired_difference_interval(*counts)
        net_hits += lo <= true_net <= hi
        wlo, whi = wilson_interval(counts[2], 300)
        refused_hits += wlo <= true_refused <= whi
    assert net_hits / 600 >= 0.93 and refused_hits / 600 >= 0.93, (net_hits, refused_hits)


def test_the_people_decided_differently_are_counted_per_group():
    s = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    with_s = np.array([1, 1, 0, 0, 1, 0, 0, 0, 1, 1])
    blind = np.array([1, 0, 1, 1, 1, 0, 0, 1, 1, 0])
    g0, g1 = decided_differently(with_s, blind, s, 2)
    assert (g0.n, g0.with_s_accepts, g0.refused_without, g0.accepted_without) == (4, 2, 1, 2)
    assert (g1.n, g1.with_s_accepts, g1.refused_without, g1.accepted_without) == (6, 3, 1, 1)
    assert g0.net_share == pytest.approx(0.25) and g1.net_share == 0.0
    assert g0.refused_ci[0] <= 0.25 <= g0.refused_ci[1] and g1.net_ci[0] < 0 < g1.net_ci[1]


# ---- the feature leaned on: known answers on the arrays --------------------------------------------------
def _rows(n=4000, seed=0, proxy=True):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    z = (np.where(rng.random(n) < 0.85, s, 1 - s) if proxy else rng.integers(0, 2, n)).astype(float)
    x, w = rng.normal(size=n), rng.normal(size=n)
    score_with = 1 / (1 + np.exp(-(1.5 * x + 0.8 * w)))  # the rule with s: its own score, cut per group
    return s, z, x, w, score_with


def test_a_rule_that_finds_s_through_one_proxy_is_said_to_lean_on_it():
    s, z, x, w, score = _rows()
    pred_with = (score > np.where(s == 1, 0.62, 0.45)).astype(int)  # per-group cuts
    pred_blind = (1.5 * x + 0.8 * w - 0.9 * z > -0.1).astype(int)  # no s: it lowers the bar for z = 0 instead
    X = np.column_stack([x, w, z, 1 - z])
    names = [("x", "x"), ("w", "w"), ("zone", "zone = north"), ("zone", "zone = south")]
    leans = leaned_on(X, names, score, s, pred_blind, 2)
    assert leans[0].column == "zone" and leans[0].clear and leans[0].s_auc > 0.8
    assert [x.column for x in leans].count("zone") == 1  # a column's levels are one feature
    assert leans[0].feature == "zone = north" and leans[0].auc < 0.5  # people in the north are accepted less often
    within = within_group("zone = north", z, np.zeros_like(s), s, score, pred_with, pred_blind, 2)
    assert all(ci[1] < 0 for ci in within.ci)  # in each group, the north is accepted less at the same score


def test_where_no_feature_carries_s_none_is_said_to_stand_in_for_it():
    s, z, x, w, score = _rows(proxy=False)
    rng = np.random.default_rng(1)
    pred_blind = (score + rng.normal(0, 0.05, s.size) > 0.5).astype(int)  # differs from the rule with s by noise
    X = np.column_stack([x, w, z])
    leans = leaned_on(X, [("x", "x"), ("w", "w"), ("zone", "zone")], score, s, pred_blind, 2)
    assert all(x.s_auc < 0.56 for x in leans) and all(x.carries_s < 0.02 for x in leans)
    assert s_strengths(np.column_stack([s, z]), s, 2)[0] == 1.0


# ---- end to end: the known-answer table through a sweep ---------------------------------------------------
def _table(n, seed, proxy):
    """With ``proxy``: the groups differ in x (a rule on x alone gives group b more positives than group a), and zone
    is s for 90% of the rows. Without: no feature depends on s (x, w, v and zone drawn alike in both groups) and only
    the label does, so a rule on the features alone gives both groups the same rate."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    zone = np.where(rng.random(n) < 0.9, s, 1 - s) if proxy else rng.integers(0, 2, n)
    x, w, v = rng.normal(size=(3, n))
    x = x + (0.9 * s if proxy else 0.0)
    y = (rng.random(n) < 1 / (1 + np.exp(-(1.5 * x + 0.8 * w - 1.2 + (0.0 if proxy else 1.2 * s))))).astype(int)
    return pd.DataFrame({"group": np.where(s == 1, "b", "a"), "zone": np.where(zone == 1, "north", "south"),
                         "x": x, "w": w, "v": v, "y": y})


def _sweep(proxy: bool, seeds=(0, 1, 2)):
    task = data.build_task(_table(6000, 3, proxy), data.TaskSpec("group", "y", ("b",), ("1",)))
    plan = ExperimentPlan(task, ["lr", "target-reduction"], [0.4], list(seeds), target=make_target_spec("dp", 0.4),
                          decisions=["threshold", "group-rates"])
    return task, run_experiment(plan).results


@pytest.fixture(scope="module")
def proxy_sweep():
    return _sweep(True)


@pytest.mark.slow
def test_the_proxy_is_named_first_on_every_split_with_the_people_decided_differently(proxy_sweep):
    task, res = proxy_sweep
    (t, table), = who_pays_tables(res)
    assert table["column"] == "zone" and table["first_on"] == 3 and table["clear"] and table["s_auc"] > 0.8
    assert all(r["refused"] > 0 and r["accepted"] > 0 for r in table["groups"])
    text, = who_pays_sentences(res, "group", task.group_names, task.spec)
    assert "Without group, the rule leans most on zone = " in text and "named first on 3 of 3 splits" in text
    assert "nan" not in text.lower() and "people in group a" in text and "people in group b" in text
    frame = who_pays_frame([(t, table)], task.group_names)
    assert list(frame["group"]) == ["a", "b"] and frame.notna().all().all()
    fig = within_group_figure(table, s_name="<b>group</b>", group_names=["<i>a</i>", "b"])
    assert len(fig.data) == 6 and all("<i>" not in tr.name and "<b>" not in tr.name for tr in fig.data)


@pytest.mark.slow
def test_where_x_says_nothing_of_s_the_words_say_so():
    task, res = _sweep(False, seeds=(0,))
    (t, table), = who_pays_tables(res)
    for r in table["groups"]:
        assert r["refused_without_s"][0] < 0.06 and r["accepted_without_s"][0] < 0.06  # few decided differently
        assert r["net_accepted_without_s"][1] <= 0 <= r["net_accepted_without_s"][2]
    text, = who_pays_sentences(res, "group", task.group_names)
    assert "The table cannot tell which feature the rule without group finds group through" in text
    assert "the interval holding zero" in text


def test_a_results_table_from_before_who_pays_gets_no_paragraph(proxy_sweep):
    task, res = proxy_sweep
    old = res.drop(columns=[c for c in res.columns if "without_s" in c or "within_group" in c or c == LEANED])
    assert who_pays_sentences(old, "group", task.group_names) == [] and who_pays_tables(old) == []
