"""Proxies, leaks and the guess at s and y (fairdash.analysis.proxies), on tables with known proxies and leaks
and on the bundled samples."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from fairdash import data
from fairdash.analysis import feature_auc, proxies
from fairdash.errors import FairDashError


def made_table(n=20_000, seed=0):
    """s and y at random (y depends on s a little), with a leak of y (y with 2% of values flipped), a
    numeric proxy of s at AUC about 0.8, a categorical proxy, an id column and noise."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.3 + 0.2 * s).astype(int)
    flip = rng.random(n) < 0.02
    df = pd.DataFrame({
        "group": np.where(s == 1, "B", "A"),
        "outcome": y,
        "y_copy": np.where(flip, 1 - y, y),
        "proxy": 1.19 * s + rng.normal(size=n),  # AUC = Phi(1.19 / sqrt 2) = 0.80
        "town": np.where(rng.random(n) < 0.7, np.where(s == 1, "north", "south"),
                         rng.choice(["north", "south", "east"], n)),
        "ident": [f"p{i:06d}" for i in range(n)],
        "noise": rng.normal(size=n),
    })
    return df, s, y


@pytest.fixture(scope="module")
def made():
    return made_table()


def test_adult_check_figure_relationship_first():
    task = data.paper_task("adult-sex")
    top = proxies.proxy_scores(task.X, task.s)
    assert top[0]["column"] == "relationship" and top[0]["score"] == pytest.approx(0.87, abs=0.01)
    assert [set(r) for r in top] == [{"column", "score"}] * len(top) and len(top) == 10
    scores = [r["score"] for r in top]
    assert scores == sorted(scores, reverse=True) and all(0.5 <= v <= 1 for v in scores)
    assert proxies.task_proxies(task, top=3) == top[:3]
    assert len(proxies.proxy_scores(task.X, task.s, top=None)) == task.X.shape[1]


@pytest.mark.parametrize("setup", list(data.PAPER_SETUPS))
def test_no_false_leak_alarm_on_the_bundled_samples(setup):
    """Every column of the table (fnlwgt too) against the standard task's s and y: no leak."""
    task = data.paper_task(setup)
    table = data.load_sample(data.PAPER_SETUPS[setup].sample)
    assert len(table) == len(task.s)  # neither sample has rows with missing values
    assert proxies.find_leaks(table, task.spec.s_column, task.spec.y_column, task.s, task.y) == []
    assert proxies.task_leaks(table, task) == []
    assert proxies.one_hot_groups(table) == {}


def test_a_noisy_copy_of_y_is_a_leak_and_a_proxy_is_not(made):
    df, s, y = made
    leaks = proxies.find_leaks(df, "group", "outcome", s, y)
    assert [(r["column"], r["of"]) for r in leaks] == [("y_copy", "y")]
    assert leaks[0]["score"] == pytest.approx(0.98, abs=0.01)
    table = {r["column"]: r["score"] for r in proxies.proxy_scores(df.drop(columns=["group", "outcome"]), s, top=None)}
    assert table["proxy"] == pytest.approx(0.80, abs=0.015)
    assert table["town"] == pytest.approx(0.885, abs=0.01)  # north/south/east through their group rates
    assert table["ident"] < 0.53  # one value per row: scored out of fold, so it does not memorise
    assert table["noise"] < 0.53
    assert list(table)[:2] == ["town", "proxy"]


def test_leak_of_s_and_features_argument(made):
    df, s, y = made
    df = df.assign(group_code=s)
    leaks = proxies.find_leaks(df, "group", "outcome", s, y)
    assert {(r["column"], r["of"], r["score"]) for r in leaks} >= {("group_code", "s", 1.0)}
    only = proxies.find_leaks(df, "group", "outcome", s, y, features=["proxy", "noise"])
    assert only == []
    leaks = proxies.find_leaks(df, "group", "outcome", None, y, features=["group_code", "y_copy"])
    assert leaks[0]["column"] == "y_copy"
    with pytest.raises(FairDashError, match="not in the table"):
        proxies.find_leaks(df, "group", "outcome", s, y, features=["nope"])
    with pytest.raises(FairDashError, match="aligned"):
        proxies.find_leaks(df, "group", "outcome", s[:-1], y)


def credit_table(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    marriage = rng.choice([1, 2, 3], n, p=[0.45, 0.5, 0.05])
    return pd.DataFrame({
        "ID": np.arange(1, n + 1),
        "LIMIT_BAL": rng.integers(1, 50, n) * 10_000,
        "SEX": rng.choice([1, 2], n),
        "AGE": rng.integers(21, 70, n),
        "PAY_0": rng.integers(-2, 3, n),
        "MARRIAGE_1": (marriage == 1).astype(int),
        "MARRIAGE_2": (marriage == 2).astype(int),
        "MARRIAGE_3": (marriage == 3).astype(int),
        "EDUCATION_grad school": rng.integers(0, 2, n),
        "default payment next month": (rng.random(n) < 0.22).astype(int),
    })


def test_one_hot_groups_and_a_group_holding_y():
    df = credit_table()
    assert proxies.one_hot_groups(df) == {"MARRIAGE_": ["MARRIAGE_1", "MARRIAGE_2", "MARRIAGE_3"]}
    y = df["MARRIAGE_3"].to_numpy()
    s = (df["SEX"] == 2).to_numpy().astype(int)
    leaks = proxies.find_leaks(df, "SEX", "MARRIAGE_3", s, y)
    assert {(r["column"], r["of"], r["score"]) for r in leaks} == {("MARRIAGE_1", "y", 1.0), ("MARRIAGE_2", "y", 1.0)}
    # s in a one-hot group: its siblings are leaks of s
    oh = pd.get_dummies(pd.Series(np.where(s == 1, "F", "M")), prefix="sex").astype(int)
    df2 = pd.concat([df.drop(columns=["SEX"]), oh], axis=1)
    leaks = proxies.find_leaks(df2, "sex_F", "default payment next month", s, df["default payment next month"])
    assert [(r["column"], r["of"], r["score"]) for r in leaks] == [("sex_M", "s", 1.0)]


def test_one_hot_groups_need_exact_row_sums_and_complete_zero_one_columns():
    df = pd.DataFrame({"a_x": [1, 0, 0, 1], "a_y": [0, 1, 0, 0], "a_z": [0, 0, 1, 0],  # a group
                       "b_x": [1, 0, 0, 0], "b_y": [0, 1, 0, 0],  # sums 0 on two rows: not one
                       "c_x": [1.0, 0, np.nan, 0], "c_y": [0, 1, 0, 1],  # a missing value: not one
                       "d-p": [True, False, True, False], "d-q": [False, True, False, True],  # booleans
                       "e_1": [2, 0, 0, 0], "e_2": [0, 1, 1, 1]})  # not 0/1
    assert proxies.one_hot_groups(df) == {"a_": ["a_x", "a_y", "a_z"], "d-": ["d-p", "d-q"]}


def test_missing_values_carry_information():
    rng = np.random.default_rng(3)
    s = rng.integers(0, 2, 5000)
    x = rng.normal(size=5000)
    x[s == 1] = np.nan  # missing exactly for group 1
    cat = pd.Series(np.where(s == 1, None, rng.choice(["a", "b"], 5000)), dtype=object)
    scores = {r["column"]: r["score"] for r in proxies.proxy_scores(pd.DataFrame({"x": x, "c": cat}), s)}
    assert scores == {"x": 1.0, "c": 1.0}


def test_numeric_scores_equal_sklearn_auc(made):
    df, s, _ = made
    a = roc_auc_score(s, df["proxy"])
    assert proxies.feature_scores(df[["proxy"]], s)["proxy"] == pytest.approx(max(a, 1 - a), abs=1e-4)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(-5, 5)), min_size=4, max_size=60))
def test_numeric_score_is_the_rank_auc_and_symmetric(pairs):
    t = np.array([p[0] for p in pairs])
    x = np.array([p[1] for p in pairs], dtype=float)
    if t.min() == t.max():
        with pytest.raises(FairDashError):
            proxies.feature_scores(pd.DataFrame({"x": x}), t)
        return
    a = roc_auc_score(t, x)
    got = ranked_score(x, t.astype(float))
    assert got == pytest.approx(max(a, 1 - a))
    assert got == pytest.approx(ranked_score(x, 1.0 - t))  # the groups' order does not matter
    # few values: also scored as categories, keeping the higher score
    assert proxies.feature_scores(pd.DataFrame({"x": x}), t)["x"] >= round(got, 4)


def ranked_score(x, t):
    """The by-value score alone (without the category score that few-valued columns also get)."""
    R, M, _, _ = feature_auc._numeric_codes(x[None, :])
    return float(feature_auc._rank_strengths(R, M, t[None, :])[0, 0])


def test_more_than_two_groups_one_vs_rest():
    rng = np.random.default_rng(4)
    s = rng.integers(0, 3, 6000)
    X = pd.DataFrame({"exact": np.array(["r", "g", "b"])[s], "part": np.where(s == 2, "x", "y"),
                      "noise": rng.normal(size=6000)})
    scores = {r["column"]: r["score"] for r in proxies.proxy_scores(X, s)}
    assert scores["exact"] == 1.0
    assert scores["part"] == pytest.approx((1.0 + 0.75 + 0.75) / 3, abs=0.01)  # group 2 exactly, 0 and 1 halfway
    assert scores["noise"] < 0.53
    text = proxies.proxy_scores(X, np.array(["r", "g", "b"])[s])  # codes other than integers are coded
    assert {r["column"]: r["score"] for r in text} == scores


def test_large_tables_are_subsampled_deterministically(made):
    df, s, _ = made
    X = df.drop(columns=["group", "outcome"])
    a = proxies.proxy_scores(X, s, max_rows=5000)
    assert a == proxies.proxy_scores(X, s, max_rows=5000)
    full = {r["column"]: r["score"] for r in proxies.proxy_scores(X, s, max_rows=None)}
    assert all(abs(r["score"] - full[r["column"]]) < 0.03 for r in a)


def test_one_group_is_refused():
    with pytest.raises(FairDashError, match="two groups"):
        proxies.proxy_scores(pd.DataFrame({"x": [1, 2, 3]}), [0, 0, 0])


# --------------------------------------------------------------------------------------------------
# guess_roles
# --------------------------------------------------------------------------------------------------
def test_guess_roles_on_the_samples(adult_table, compas_table):
    g = proxies.guess_roles(adult_table)
    assert (g.s_column, g.s1_values, g.y_column, g.y1_values) == ("sex", ("Male",), "salary", (">50K",))
    assert "salary" in g.y_reason and "sex" in g.s_reason
    g = proxies.guess_roles(compas_table, data.profile_columns(compas_table))
    assert (g.s_column, g.y_column, g.y1_values) == ("sex", "two-year-recid", ("1",))
    with pytest.raises(Exception):
        g.s_column = "race"  # frozen


def test_guess_roles_credit_table_picks_the_default_column_not_a_one_hot_member():
    g = proxies.guess_roles(credit_table())
    assert g.y_column == "default payment next month" and g.y1_values == ("1",)
    assert g.s_column == "SEX" and g.s1_values in (("1",), ("2",))
    assert "default" in g.y_reason


def test_guess_roles_without_telling_names():
    rng = np.random.default_rng(5)
    n = 500
    df = pd.DataFrame({"a": rng.normal(size=n), "flag1": rng.integers(0, 2, n), "k": rng.choice(list("pq"), n),
                       "flag2": rng.choice(["no", "yes"], n), "c_1": 0, "c_2": 0})
    df["c_1"] = rng.integers(0, 2, n)
    df["c_2"] = 1 - df["c_1"]
    g = proxies.guess_roles(df)
    assert g.y_column == "flag2" and g.y1_values == ("yes",)  # the last two-valued column outside a one-hot group
    assert g.s_column == "flag1"  # the first two-valued one left
    assert g.s_column != g.y_column


@pytest.mark.parametrize("columns, s, y", [
    ({"Gender": ["f", "m"] * 5, "label": [0, 1, 1, 0, 1] * 2, "target_score": np.arange(10)}, "Gender", "label"),
    ({"race": list("abcab") * 2, "Outcome": list("xyzxy") * 2, "isFraud": [0, 1] * 5}, "race", "isFraud"),
    ({"age": np.arange(20, 30), "AgeGroup": ["young", "old"] * 5, "y": [1, 0] * 5}, "AgeGroup", "y"),
    ({"sex": ["f", "m"] * 5, "gender": ["f", "m", "m", "f", "m"] * 2}, "sex", "gender"),  # never the same column
])
def test_guess_roles_names(columns, s, y):
    g = proxies.guess_roles(pd.DataFrame(columns))
    assert (g.s_column, g.y_column) == (s, y)


def test_guess_roles_numeric_sensitive_attribute_gets_a_threshold():
    df = pd.DataFrame({"age": np.arange(100), "income_class": ["lo", "hi"] * 50})
    g = proxies.guess_roles(df)
    assert g.y_column == "income_class" and g.s_column == "age"
    assert g.s_threshold == pytest.approx(49.5) and g.s1_values == ()


def test_name_words():
    assert proxies.name_words("default payment next month") == ["default", "payment", "next", "month"]
    assert proxies.name_words("two-year-recid") == ["two", "year", "recid"]
    assert proxies.name_words("isFraud") == ["is", "fraud"]
    assert proxies.name_words("PAY_0") == ["pay", "0"]
    assert proxies.name_words("workclass") == ["workclass"]


def test_an_intersection_column_is_a_leak_of_its_part():
    """Stop-and-frisk: with s = race, a 'race-sex' feature gives s away."""
    rng = np.random.default_rng(6)
    n = 4000
    race = rng.choice(["Black", "White", "Hispanic"], n, p=[0.5, 0.2, 0.3])
    sex = rng.choice(["F", "M"], n)
    df = pd.DataFrame({"race": race, "sex": sex, "race-sex": [f"{r}-{x}" for r, x in zip(race, sex)],
                       "frisked": rng.integers(0, 2, n), "age": rng.integers(15, 60, n)})
    s = pd.factorize(df["race"], sort=True)[0]  # every value its own group
    leaks = proxies.find_leaks(df, "race", "frisked", s, df["frisked"].to_numpy())
    assert [(r["column"], r["of"], r["score"]) for r in leaks] == [("race-sex", "s", 1.0)]
    s2 = (df["race"] == "White").to_numpy().astype(int)  # White against the rest
    assert proxies.find_leaks(df, "race", "frisked", s2, None)[0]["column"] == "race-sex"


def test_one_hot_names_with_a_number_only():
    df = pd.DataFrame({"M1": [1, 0, 0, 0], "M2": [0, 1, 1, 0], "M3": [0, 0, 0, 1], "PAY1": [1, 2, 0, 0],
                       "PAY2": [0, 0, 1, 1]})
    assert proxies.one_hot_groups(df) == {"M": ["M1", "M2", "M3"]}


def test_column_types_with_missing_values():
    rng = np.random.default_rng(7)
    n = 4000
    s = rng.integers(0, 2, n)
    X = pd.DataFrame({
        "category": pd.Series(np.where(s == 1, "a", "b")).astype("category"),
        "nullable_int": pd.Series(np.where(rng.random(n) < .1, None, s * 2 + rng.integers(0, 3, n)), dtype="Int64"),
        "nullable_bool": pd.Series(np.where(rng.random(n) < .1, None, s == 1), dtype="boolean"),
        "mixed": pd.Series([1 if v else "x" for v in s], dtype=object),
        "empty": np.nan,
        "spaces": np.where(s == 1, " u", "u "),  # one value once stripped: no information
    })
    got = {r["column"]: r["score"] for r in proxies.proxy_scores(X, s, top=None)}
    assert got["category"] == got["mixed"] == 1.0
    assert got["nullable_bool"] > 0.98 and 0.85 < got["nullable_int"] < 0.95
    assert got["empty"] == 0.5 and got["spaces"] == 0.5


# --------------------------------------------------------------------------------------------------
# Every column at once; relations that are not monotone (issue 19, item 12)
# --------------------------------------------------------------------------------------------------
def test_scoring_all_columns_at_once_equals_scoring_each_alone(made):
    """The scores of a whole table are each column's own (columns share one sort, one count, one
    matrix product: nothing of one column may reach another's score)."""
    df, s, y = made
    rng = np.random.default_rng(8)
    X = df.drop(columns=["group", "outcome"]).assign(
        few=rng.integers(0, 4, len(df)), wide_int=rng.integers(0, 100_000, len(df)),
        holes=np.where(rng.random(len(df)) < 0.2, np.nan, df["proxy"]), empty=np.nan)
    together = feature_auc.scores_against(X, [s, y], None)
    for c in X.columns:
        alone = feature_auc.scores_against(X[[c]], [s, y], None)
        assert [together[0][c], together[1][c]] == [alone[0][c], alone[1][c]], c


def test_a_non_monotone_relation_is_seen_and_monotone_figures_stay():
    rng = np.random.default_rng(9)
    n = 20_000
    x = rng.normal(size=n)
    s = (np.abs(x) > 1).astype(int)  # one value of x cannot split the groups; two can
    X = pd.DataFrame({"x": x, "x_int": np.round(x * 100)})
    scores = proxies.feature_scores(X, s)
    assert scores["x"] >= 0.95 and scores["x_int"] >= 0.95  # was 0.50: ranked by value only
    for shift in (0.3, 1.0, 2.0):  # a monotone relation keeps its ranked AUC: binning does not beat it
        s2 = (x + rng.normal(scale=shift, size=n) > 0.2).astype(int)
        a = roc_auc_score(s2, x)
        assert proxies.feature_scores(X[["x"]], s2)["x"] == pytest.approx(max(a, 1 - a), abs=1e-4)
    df = X.assign(group=s, y=rng.integers(0, 2, n))
    leaks = proxies.find_leaks(df, "group", "y", s, df["y"].to_numpy())
    assert {(r["column"], r["of"]) for r in leaks} == {("x", "s"), ("x_int", "s")}


# --------------------------------------------------------------------------------------------------
# All features together: joint leaks (issue 19, item 11) and s_predictability (issue 18, item 3)
# --------------------------------------------------------------------------------------------------
def _label_table(n=6000, seed=10):
    """y is one value of a three-valued text label; the label comes as drop-first dummies (lab_b, lab_c),
    none of which gives y away alone (AUC 0.75 each), while together they are y."""
    rng = np.random.default_rng(seed)
    lab = rng.choice(["a", "b", "c"], n)
    return pd.DataFrame({"g": rng.choice(["f", "m"], n), "x": rng.normal(size=n),
                         "lab_b": (lab == "b").astype(int), "lab_c": (lab == "c").astype(int),
                         "y": (lab == "a").astype(int)})


def test_drop_first_dummies_of_the_label_are_a_joint_leak():
    df = _label_table()
    task = data.build_task(df, data.TaskSpec("g", "y", ("m",), ("1",)))
    alone = proxies.feature_scores(task.X, task.y)
    assert alone["lab_b"] == pytest.approx(0.75, abs=0.02) and alone["lab_c"] == pytest.approx(0.75, abs=0.02)
    assert proxies.find_leaks(df, "g", "y", task.s, task.y) == []  # no column alone
    leaks = proxies.task_leaks(df, task)
    assert {(r["column"], r["of"]) for r in leaks} == {("lab_b", "y"), ("lab_c", "y")}
    assert all(r["score"] >= 0.99 and sorted(r["with"]) == ["lab_b", "lab_c"] for r in leaks)
    assert "together" in proxies.leak_text(leaks[0]) and "'lab_b'" in proxies.leak_text(leaks[0])
    assert proxies.task_leaks(df, task, joint=False) == []


def test_three_columns_that_together_give_s_away_are_named():
    rng = np.random.default_rng(11)
    n = 8000
    a, b, c = rng.normal(size=(3, n))
    df = pd.DataFrame({"a": a, "b": b, "c": c, "noise": rng.normal(size=n), "town": rng.choice(list("pqr"), n),
                       "s": np.where(a + b + c > 0, "u", "v"), "y": rng.integers(0, 2, n)})
    task = data.build_task(df, data.TaskSpec("s", "y", ("u",), ("1",)))
    assert max(proxies.feature_scores(task.X, task.s).values()) < 0.85
    leaks = proxies.task_leaks(df, task)
    assert {r["column"] for r in leaks} == {"a", "b", "c"} and {r["of"] for r in leaks} == {"s"}
    from fairdash.analysis import separability

    assert separability.s_predictability(task) >= 0.99
    assert separability.separability(task, "y") < 0.6  # y is noise


@pytest.mark.slow
@pytest.mark.parametrize("setup, spec, expected", [
    # measured 0.9342 and 0.6544 (seed-0 training split, at most 10,000 rows stratified by s and y, 5 folds)
    ("adult", data.TaskSpec("sex", "salary", ("Male",), (">50K",), drop=("fnlwgt",)), 0.93),
    ("compas", data.TaskSpec("race", "two-year-recid", ("Caucasian",), ("1",)), 0.65),
])
def test_s_predictability_on_the_samples(setup, spec, expected):
    from fairdash.analysis import separability

    task = data.build_task(data.load_sample(setup), spec)
    got = separability.s_predictability(task)
    assert got == pytest.approx(expected, abs=0.03)
    assert separability.s_predictability(task) == got  # remembered: the same number again
    seen = data.build_task(data.load_sample(setup), spec.__class__(**{**spec.__dict__, "s_as_feature": True}))
    assert separability.s_predictability(seen) == got  # s itself is never one of the features it uses


@pytest.mark.slow
def test_s_predictability_reads_the_whole_training_split(adult_task):
    """Issue 27, item 4: on a 10,000-row subset it was 0.029 low on Adult with race's 5 groups (0.7387
    against 0.7673 on all 36,177 training rows); it now reads every training row."""
    from fairdash.analysis import separability

    blind = [c for c in adult_task.features if c != "sex"]
    assert len(data.split_task(adult_task, seed=0).train) > separability.MAX_ROWS
    assert separability.s_predictability(adult_task) == separability.separability(adult_task, "s", columns=blind,
                                                                                   max_rows=10**9)


def test_s_predictability_with_more_groups_is_the_one_vs_rest_average():
    from fairdash.analysis import separability

    rng = np.random.default_rng(12)
    n = 3000
    g = rng.integers(0, 3, n)
    df = pd.DataFrame({"g": np.array(["p", "q", "r"])[g], "x": g + rng.normal(0, 0.3, n), "noise": rng.normal(size=n),
                       "y": rng.integers(0, 2, n)})
    task = data.build_task(df, data.TaskSpec("g", "y", s_multi=True, y1_values=("1",)))
    assert 0.9 < separability.s_predictability(task) < 1.0


def test_guess_roles_a_sensitive_pair_is_s_not_the_outcome():
    """Two complementary no/yes indicators are taken for the label unless their prefix is named like a sensitive
    attribute (gender_0/gender_1 is who is compared); a named outcome still comes first."""
    rng = np.random.default_rng(7)
    n = 300
    g, r = rng.integers(0, 2, n), rng.integers(0, 2, n)
    df = pd.DataFrame({"score": rng.normal(size=n), "gender_0": 1 - g, "gender_1": g, "hold_0": 1 - r, "hold_1": r})
    guess = proxies.guess_roles(df)
    assert guess.y_column == "hold_1" and guess.s_column.startswith("gender_"), guess
    guess = proxies.guess_roles(df.assign(label=rng.integers(0, 2, n)))
    assert guess.y_column == "label", guess


OUTCOME_NAMES = ["deny", "denied", "released", "approved", "hired", "admitted", "two_year_recid", "outcome", "label",
                 "target", "default", "is_fraud", "loan_status", "accepted", "rejected", "granted", "Decision",
                 "result", "arrested", "repaid", "held", "detained", "y", "class", "churn"]
GROUP_NAMES = ["race", "colour", "color", "skin_colour", "ethnicity", "afam", "nwhite", "black", "white", "gender",
               "sex", "age_group", "nationality", "religion", "disability", "Geschlecht", "sexo", "raza", "minority",
               "hispanic"]
OTHER_NAMES = ["hschool", "citizen", "married", "employed", "self_emp", "single", "uria", "condo", "pbcr", "dmi"]


@settings(max_examples=150, deadline=None)
@given(y=st.sampled_from(OUTCOME_NAMES), s=st.sampled_from(GROUP_NAMES), seed=st.integers(0, 2**16))
def test_guess_roles_finds_the_outcome_and_the_group_in_any_words_and_position(y, s, seed):
    """Issue 47, item 3: a two-valued outcome named as such tables name it (deny, released, hired, ...) and a
    two-valued group (race, colour, afam, nwhite, Geschlecht, ...) among other two-valued columns in any order: y is
    the outcome, s the group, never the other way round. Before, 157 of the 500 pairs of these lists were both
    right (a mortgage table's "deny" was taken for s); now all are."""
    rng = np.random.default_rng(seed)
    n = 200
    cols = {o: rng.integers(0, 2, n) for o in rng.choice(OTHER_NAMES, 4, replace=False)}
    cols.update({"income_k": rng.normal(50, 10, n), "years": rng.integers(0, 40, n), y: rng.integers(0, 2, n),
                 s: rng.integers(0, 2, n)})
    names = list(cols)
    rng.shuffle(names)
    guess = proxies.guess_roles(pd.DataFrame({k: cols[k] for k in names}))
    assert (guess.y_column, guess.s_column) == (y, s), (guess.y_reason, guess.s_reason)


def test_an_outcome_like_column_is_never_s_where_another_is_left():
    df = pd.DataFrame({"approved": [0, 1] * 20, "denied": [1, 0] * 20, "hschool": [0, 0, 1, 1] * 10})
    guess = proxies.guess_roles(df)
    assert guess.y_column == "approved" and guess.s_column == "hschool"
