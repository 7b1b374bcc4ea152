import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdash.evaluation.metrics import format_mean_std, group_metrics, min_over_max, summarize


def test_group_metrics_by_hand():
    y = np.array([1, 1, 0, 0, 1, 0, 0, 0])
    p = np.array([1, 0, 0, 1, 1, 1, 0, 0])
    s = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    m = group_metrics(y, p, s)
    assert m["pr_0"] == 0.5 and m["pr_1"] == 0.5
    assert m["tpr_0"] == 0.5 and m["tpr_1"] == 1.0
    assert m["tnr_0"] == 0.5 and m["tnr_1"] == pytest.approx(2 / 3)
    assert m["accuracy"] == 5 / 8
    assert m["pr_ratio"] == 1.0 and m["tpr_ratio"] == 0.5 and m["tpr_diff"] == 0.5
    assert m["pr_ratio_01"] == 1.0
    # the error rates: group 0 has 2 negatives (one flagged) and 2 positives (one missed); group 1 has 3
    # negatives (one flagged), 1 positive (found); precision: the right share of each group's positive decisions
    assert m["fpr_0"] == 0.5 and m["fnr_0"] == 0.5 and m["precision_0"] == 0.5
    assert m["fpr_1"] == pytest.approx(1 / 3) and m["fnr_1"] == 0.0 and m["precision_1"] == 0.5
    assert m["fpr_diff"] == pytest.approx(0.5 - 1 / 3) and m["fnr_diff"] == 0.5 and m["precision_diff"] == 0.0
    none = group_metrics(y, np.zeros(8, int), s)  # no positive decision: precision undefined, never 0
    assert np.isnan(none["precision_0"]) and np.isnan(none["precision_diff"]) and none["fnr_0"] == 1.0


@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 2)), min_size=1, max_size=60))
def test_ratios_are_at_most_one(rows):
    y, p, s = map(np.array, zip(*rows))
    m = group_metrics(y, p, s, n_groups=3)
    for key in ("pr_ratio", "tpr_ratio", "tnr_ratio"):
        assert np.isnan(m[key]) or 0 <= m[key] <= 1
    assert 0 <= m["accuracy"] <= 1


def test_min_over_max_edge_cases():
    assert np.isnan(min_over_max([0, 0]))  # 0/0 is not parity (issue 11, bug 9)
    assert np.isnan(min_over_max([0.3]))
    assert min_over_max([0.2, float("nan"), 0.4]) == 0.5


def test_summarize_mean_and_std():
    df = pd.DataFrame({"model": ["a", "a", "b"], "target_rate": [0.2, 0.2, np.nan], "accuracy": [0.8, 0.9, 0.7],
                       "pr_ratio": [0.5, 0.7, 1.0]})
    out = summarize(df).set_index("model")
    assert out.at["a", "accuracy_mean"] == pytest.approx(0.85)
    assert out.at["a", "accuracy_std"] == pytest.approx(np.std([0.8, 0.9], ddof=1))
    assert out.at["b", "accuracy_std"] == 0 and out.at["b", "repeats"] == 1
    assert format_mean_std(0.8745, 0.0091) == "0.875 ± 0.009"
    assert format_mean_std(float("nan"), 0.1) == "n/a"


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=2, max_value=4))
def test_group_metrics_equal_fairlearns_metric_frame(seed, n_groups):
    """Issue 14: the hand-written (fast) group_metrics gives fairlearn's MetricFrame numbers."""
    from fairlearn.metrics import MetricFrame, false_negative_rate, false_positive_rate, selection_rate
    from sklearn.metrics import accuracy_score, precision_score, recall_score

    rng = np.random.default_rng(seed)
    n = 400
    s = rng.integers(0, n_groups, n)
    s[:n_groups] = np.arange(n_groups)  # every group present
    y = rng.integers(0, 2, n)
    y[: 2 * n_groups] = np.repeat([0, 1], n_groups)  # both labels in every group
    s[: 2 * n_groups] = np.tile(np.arange(n_groups), 2)
    pred = rng.integers(0, 2, n)
    ours = group_metrics(y, pred, s, n_groups)
    mf = MetricFrame(metrics={"pr": selection_rate, "tpr": recall_score, "acc": accuracy_score,
                              "tnr": lambda a, b: recall_score(a, b, pos_label=0),
                              "fpr": false_positive_rate, "fnr": false_negative_rate,
                              "precision": lambda a, b: precision_score(a, b, zero_division=np.nan)},
                     y_true=y, y_pred=pred, sensitive_features=s)
    for j in range(n_groups):
        for m in ("pr", "tpr", "tnr", "acc", "fpr", "fnr", "precision"):
            assert ours[f"{m}_{j}"] == pytest.approx(mf.by_group.loc[j, m], abs=1e-12, nan_ok=True)
    for m in ("pr", "tpr", "tnr"):
        assert ours[f"{m}_ratio"] == pytest.approx(mf.ratio(method="between_groups")[m], abs=1e-12)
        assert ours[f"{m}_diff"] == pytest.approx(mf.difference(method="between_groups")[m], abs=1e-12)
    for m in ("fpr", "fnr", "precision"):
        assert ours[f"{m}_diff"] == pytest.approx(mf.difference(method="between_groups")[m], abs=1e-12, nan_ok=True)
    assert ours["accuracy"] == pytest.approx(mf.overall["acc"], abs=1e-12)
