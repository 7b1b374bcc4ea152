"""Property tests of the target-rate maths (docs/METHOD.md) with hypothesis."""
import itertools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fairdash.errors import FairDashError
from fairdash.targeting import conditional, targets

rate = st.floats(0.001, 0.999, allow_nan=False)
delta_st = st.floats(0.01, 1.0, allow_nan=False)


@given(rate, rate, delta_st)
def test_target_rate_is_reached_exactly(pr_b, pr_t, delta):
    try:
        p = targets.dp_transition_probabilities(pr_b, pr_t, delta)
    except FairDashError:  # this delta cannot reach the target: some probability would not be valid,
        up = pr_t > pr_b  # or the target labels would not follow the observed ones (issue 19, item 6)
        raw = (pr_t - delta * pr_b) / (1 - pr_b) if up else (pr_t - (1 - delta) * (1 - pr_b)) / pr_b
        p1, p0 = (delta, raw) if up else (raw, 1 - delta)
        assert raw < -1e-12 or raw > 1 + 1e-12 or p1 - p0 <= 1e-12
        return
    assert np.all(p >= 0) and np.all(p <= 1)
    assert abs(targets.implied_target_rates(p, pr_b)[0] - pr_t) < 1e-12


@given(rate, rate)
def test_delta_one_is_always_valid(pr_b, pr_t):
    p = targets.dp_transition_probabilities(pr_b, pr_t, 1.0)
    assert np.all((p >= 0) & (p <= 1))
    assert abs(targets.implied_target_rates(p, pr_b)[0] - pr_t) < 1e-12


@given(rate, rate)
def test_closed_form_t_equals_general_formula(pr_b, pr_t):
    p = targets.dp_transition_probabilities(pr_b, pr_t, 1.0)
    general = targets.t_general(p)[0]
    closed = targets.t_closed_form(pr_b, pr_t)
    assert np.isclose(general, closed, rtol=1e-9, atol=1e-12)


@given(rate, rate, delta_st)
def test_d_table_reproduces_base_rate(pr_b, pr_t, delta):
    try:
        p = targets.dp_transition_probabilities(pr_b, pr_t, delta)
    except FairDashError:
        assume(False)
    d = targets.bayes_d(p, pr_b)[0]
    assert np.all((d >= 0) & (d <= 1))
    assert abs(d[0] * (1 - pr_t) + d[1] * pr_t - pr_b) < 1e-12


@given(st.lists(rate, min_size=2, max_size=5), rate)
def test_many_groups_each_reach_the_target(rates, pr_t):
    r = np.array(rates)
    shares = np.full(len(r), 1 / len(r))
    tb = targets.transition_table(r, shares, pr_t)
    assert np.allclose(targets.implied_target_rates(tb.p_ybar1_given_y, r), pr_t, atol=1e-12)
    assert np.allclose((tb.d * np.stack([1 - tb.target_rates, tb.target_rates], 1)).sum(1), r, atol=1e-12)
    assert np.isclose(tb.accuracy_ceiling, 1 - np.sum(shares * np.abs(pr_t - r)))


@given(rate, rate, rate, rate)
def test_eo_targets_give_consistent_d(pr_b0, pr_b1, tpr, tnr):
    r = np.array([pr_b0, pr_b1])
    tb = targets.eo_transition_table(r, [0.4, 0.6], tpr, tnr)
    q = targets.implied_target_rates(tb.p_ybar1_given_y, r)
    assert np.allclose(q, tpr * r + (1 - tnr) * (1 - r))
    assert np.allclose(tb.d[:, 0] * (1 - q) + tb.d[:, 1] * q, r, atol=1e-12)


@st.composite
def small_groups(draw):
    groups = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 6))
        labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
        k = draw(st.integers(0, n))
        groups.append((np.array(labels), k))
    return groups


@settings(max_examples=60, deadline=None)
@given(small_groups())
def test_theorem2_bound_is_the_best_achievable_accuracy(groups):
    """Brute force: over every prediction vector with k_s positives in group s, the best accuracy
    equals 1 - sum_s p_s |k_s/n_s - r_s|."""
    N = sum(len(y) for y, _ in groups)
    best_total = 0
    for y, k in groups:
        best = max(
            sum(int(i in pos) == y[i] for i in range(len(y)))
            for pos in map(set, itertools.combinations(range(len(y)), k))
        )
        best_total += best
    r = np.array([y.mean() for y, _ in groups])
    p = np.array([len(y) / N for y, _ in groups])
    rhat = np.array([k / len(y) for y, k in groups])
    assert np.isclose(best_total / N, targets.accuracy_ceiling(r, p, rhat))


@given(rate, rate, st.floats(0.05, 0.95))
def test_ceiling_curve_matches_pointwise_bound_and_peaks_at_weighted_median(r0, r1, p0):
    r, p = np.array([r0, r1]), np.array([p0, 1 - p0])
    grid, curve = targets.accuracy_ceiling_curve(r, p)
    for g, c in zip(grid[::20], curve[::20]):
        assert np.isclose(c, targets.accuracy_ceiling(r, p, g))
    best = targets.best_target_rate(r, p)
    assert targets.accuracy_ceiling(r, p, best) >= curve.max() - 1e-12


def test_ceiling_peaks_at_max_preset_when_smaller_group_is_disadvantaged():
    r, p = np.array([0.1136, 0.3125]), np.array([0.325, 0.675])
    assert targets.best_target_rate(r, p) == pytest.approx(targets.presets(r)["max"])


def test_identity_table_is_plain_likelihood_table():
    assert np.array_equal(targets.identity_table(3), np.array([[0, 1]] * 3))


@pytest.mark.parametrize("pr_t", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_target_rate_at_or_beyond_0_and_1_is_a_clear_error(pr_t):
    with pytest.raises(FairDashError, match="between 0 and 1"):
        targets.transition_table([0.2, 0.3], [0.5, 0.5], pr_t)


@pytest.mark.parametrize("rates, word", [([0.0, 0.3], "no positive"), ([0.2, 1.0], "only positive")])
def test_group_with_base_rate_0_or_1_is_a_clear_error(rates, word):
    with pytest.raises(FairDashError, match=word):
        targets.transition_table(rates, [0.5, 0.5], 0.2)


def test_group_with_no_rows_is_a_clear_error():
    with pytest.raises(FairDashError, match="no rows"):
        targets.base_rates(np.array([0, 1, 1]), np.array([0, 0, 0]), n_groups=2)


def test_invalid_delta_is_rejected():
    with pytest.raises(FairDashError, match="delta"):
        targets.dp_transition_probabilities(0.3, 0.9, 0.1)
    with pytest.raises(FairDashError, match="delta"):
        targets.dp_transition_probabilities(0.3, 0.4, 0.0)


def test_conditional_tables_reach_each_stratum_target():
    rng = np.random.default_rng(0)
    n = 4000
    s = rng.integers(0, 2, n)
    codes = rng.integers(0, 3, n)
    y = (rng.random(n) < 0.2 + 0.1 * s + 0.15 * codes).astype(int)
    ct = conditional.conditional_transition_tables(y, s, codes)
    assert len(ct.tables) == 3 and not ct.warnings
    for k, tb in enumerate(ct.tables):
        assert np.allclose(targets.implied_target_rates(tb.p_ybar1_given_y, tb.base_rates), tb.target_rates)
        assert tb.target_rates[0] == pytest.approx(targets.presets(tb.base_rates)["avg"])
    d = ct.row_d(s, codes)
    assert d.shape == (n, 2)
    assert np.allclose(d[5], ct.tables[codes[5]].d[s[5]])


def test_conditional_tables_warn_on_tiny_cells():
    s = np.array([0, 0, 1, 1, 0, 1])
    codes = np.array([0, 0, 0, 0, 1, 1])
    y = np.array([0, 1, 0, 1, 1, 0])
    ct = conditional.conditional_transition_tables(y, s, codes, min_cell=5)
    assert any("only" in w for w in ct.warnings)


def test_paper_fix_t_cases_are_not_swapped():
    # PR_t above the base rate: t = (PR_t - PR_b) / (2 (1 - PR_t))
    assert targets.t_closed_form(0.1, 0.3) == pytest.approx(0.2 / 1.4)
    # PR_t below the base rate: t = (PR_b - PR_t) / (2 PR_t)
    assert targets.t_closed_form(0.5, 0.25) == pytest.approx(0.25 / 0.5)


# issue 19, item 6: a keep-rate delta that turns the target labels against the observed ones is refused
@given(rate, rate, delta_st)
def test_every_accepted_parity_target_keeps_the_order_of_the_labels(pr_b, pr_t, delta):
    try:
        p = targets.dp_transition_probabilities(pr_b, pr_t, delta)
    except FairDashError as e:
        assert "\n" not in str(e) and "delta" in str(e)
        return
    assert p[0, 1] > p[0, 0]  # P(ybar=1|y=1) > P(ybar=1|y=0)


@pytest.mark.slow
def test_adult_parity_at_half_with_delta_0_3_is_refused_with_the_reason():
    from fairdash.analysis.rates import rates_readout
    from fairdash.data.samples import paper_task
    from fairdash.targeting.target_spec import make_target_spec

    task = paper_task("adult-sex")
    spec = make_target_spec("dp", 0.5, delta=0.3)
    with pytest.raises(FairDashError, match=r"rank people backwards: use a delta above 0\.500") as e:
        rates_readout(task, spec)
    assert "\n" not in str(e.value) and "P(ybar=1|y=1) = 0.300" in str(e.value)
    # a delta above PR_t keeps the order and is accepted
    out = rates_readout(task, make_target_spec("dp", 0.5, delta=0.6))
    assert all(v["p_ybar1_given_y1"] > v["p_ybar1_given_y0"] for v in out["transition"].values())


# issue 19, item 7: with explicit TPR/TNR targets the readout's ceiling is the exact accuracy at them
@given(st.lists(st.tuples(st.integers(2, 40), st.integers(2, 40)), min_size=2, max_size=4),
       st.floats(0.05, 1.0), st.floats(0.05, 1.0))
def test_explicit_target_ceiling_is_the_accuracy_of_every_classifier_meeting_them(cells, tpr, tnr):
    """Build a classifier that meets the targets (as closely as whole rows allow) on small random data:
    its accuracy is the table's ceiling, computed from the rates it actually reaches."""
    y = np.concatenate([np.r_[np.ones(p), np.zeros(n)] for p, n in cells]).astype(int)
    s = np.concatenate([np.full(p + n, j) for j, (p, n) in enumerate(cells)])
    pred = np.zeros_like(y)
    reached_tpr, reached_tnr = [], []
    for j, (p, n) in enumerate(cells):
        k1, k0 = round(tpr * p), round((1 - tnr) * n)
        pos, neg = np.flatnonzero((s == j) & (y == 1)), np.flatnonzero((s == j) & (y == 0))
        pred[pos[:k1]], pred[neg[:k0]] = 1, 1
        reached_tpr.append(k1 / p)
        reached_tnr.append(1 - k0 / n)
    r, shares = targets.base_rates(y, s), targets.group_shares(s)
    exact = targets.accuracy_at_targets(r, shares, reached_tpr, reached_tnr)
    assert abs(exact - (pred == y).mean()) < 1e-12
    tb = targets.eo_transition_table(r, shares, reached_tpr, reached_tnr)
    assert abs(tb.accuracy_ceiling - (pred == y).mean()) < 1e-12
    assert tb.accuracy_ceiling <= targets.accuracy_ceiling(r, shares, tb.target_rates) + 1e-12


@pytest.mark.parametrize("setup, tpr, tnr, exact", [("adult-sex", 0.9, 0.8, 0.8248), ("compas-race", 0.9, 0.7, 0.7911)])
def test_the_readout_shows_the_accuracy_at_explicit_targets_not_theorem_2(setup, tpr, tnr, exact):
    from fairdash.analysis.rates import rates_readout
    from fairdash.data.samples import paper_task
    from fairdash.targeting.target_spec import make_target_spec

    out = rates_readout(paper_task(setup), make_target_spec("eo", tpr_target=tpr, tnr_target=tnr))
    r = np.array([out["base_rates"][k] for k in ("0", "1")])
    p = np.array([out["group_share"][k] for k in ("0", "1")])
    assert out["ceiling_at_target"] == pytest.approx(float(np.sum(p * (tpr * r + tnr * (1 - r)))), abs=1e-12)
    assert out["ceiling_at_target"] == pytest.approx(exact, abs=5e-5)


def test_the_cli_and_the_report_call_the_explicit_figure_what_it_is(capsys):
    from fairdash.analysis.rates import rates_readout
    from fairdash.cli import main
    from fairdash.data.samples import paper_task
    from fairdash.report.content import section_readout
    from fairdash.targeting.target_spec import make_target_spec

    assert main(["rates", "--paper", "compas-race", "--criterion", "eo", "--tpr-target", "0.9",
                 "--tnr-target", "0.7"]) == 0
    out = capsys.readouterr().out
    assert "Accuracy of every classifier that meets these TPR/TNR targets (training split): 0.791" in out
    assert "Theorem 2 accuracy ceiling" not in out
    readout = rates_readout(paper_task("compas-race"), make_target_spec("eo", tpr_target=0.9, tnr_target=0.7))
    words = str(section_readout({"group_names": ["a", "b"]}, readout, __import__("pandas").DataFrame()))
    assert "Accuracy at these targets:" in words and "Theorem 2 ceiling:" not in words
