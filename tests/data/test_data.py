"""The data layer on the bundled samples and on malformed input."""
import gzip

import numpy as np
import pandas as pd
import pytest

from fairdash import data
from fairdash.analysis.rates import rates_readout, training_rates
from fairdash.data.preprocess import folded_levels, folded_words
from fairdash.errors import FairDashError


def test_samples_load_by_name(adult_table, compas_table):
    assert adult_table.shape == (45222, 15)
    assert len(compas_table) == 6167 and "two-year-recid" in compas_table
    with pytest.raises(FairDashError, match="Unknown sample"):
        data.load_sample("iris")


@pytest.mark.parametrize("s, s1, expected", [("sex", ("Male",), (0.1136, 0.3125)),
                                              ("race", ("White",), (0.1584, 0.2624))])
def test_adult_base_rates_match_the_check_figures(adult_table, s, s1, expected):
    task = data.build_task(adult_table, data.TaskSpec(s, "salary", s1, (">50K",), drop=("fnlwgt",)))
    rates = training_rates(task, seed=0)
    assert np.allclose(rates.base_rates, expected, atol=0.003)
    assert "fnlwgt" not in task.features and s not in task.features and "salary" not in task.features


def test_compas_base_rates(compas_task):
    r = training_rates(compas_task).base_rates
    assert np.allclose(r, (0.4886, 0.3914), atol=0.005)


def test_split_is_stratified_and_balanced_test_set_is_balanced(adult_task):
    task = adult_task
    split = data.split_task(task, seed=3)
    assert len(split.train) + len(split.test) == len(task.y)
    assert not set(split.train) & set(split.test)
    for part in (split.train, split.test):
        cell = task.s[part] * 2 + task.y[part]
        frac = np.bincount(cell) / len(part)
        whole = np.bincount(task.s * 2 + task.y) / len(task.y)
        assert np.allclose(frac, whole, atol=0.002)
    b = split.balanced_test
    assert set(b) <= set(split.test)
    for yv in (0, 1):
        sizes = [np.sum((task.y[b] == yv) & (task.s[b] == g)) for g in (0, 1)]
        assert sizes[0] == sizes[1]  # P(s=j | y=i) = 1/2
    assert split.n_balanced_dropped == len(split.test) - len(b) > 0
    again = data.split_task(task, seed=3)
    assert np.array_equal(again.balanced_test, b)


@pytest.mark.slow
def test_preprocessing_is_fitted_on_training_rows_only(adult_task):
    task = adult_task
    arrays = data.prepare_arrays(task, data.split_task(task, seed=0))
    num = [i for i, n in enumerate(arrays.feature_names) if n.startswith("num__")]
    assert np.allclose(arrays.X_train[:, num].mean(0), 0, atol=1e-9)
    assert not np.allclose(arrays.X_test[:, num].mean(0), 0, atol=1e-9)
    assert arrays.X_train.shape[1] == arrays.X_test.shape[1] == len(arrays.feature_names)


def test_values_match_as_text():
    df = pd.DataFrame({"g": [1, 2, 1, 2, 1, 2] * 5, "y": [0, 1, 1, 0, 1, 0] * 5, "x": np.arange(30.0)})
    task = data.build_task(df, data.TaskSpec("g", "y", ("2",), ("1",)))
    assert task.group_names == ("g = 1", "g = 2")  # numbers with their column's name (issue 27)
    assert task.s.tolist()[:2] == [0, 1]
    df["y"] = df["y"].astype(float)
    assert data.build_task(df, data.TaskSpec("g", "y", ("2",), ("1",))).y.sum() == 15


def test_threshold_binarises_a_numeric_label():
    df = pd.DataFrame({"g": list("ab") * 20, "score": np.linspace(0, 1, 40), "x": np.arange(40) % 7})
    task = data.build_task(df, data.TaskSpec("g", "score", ("b",), y_threshold=0.5))
    assert task.y.sum() == 20


def test_missing_values_drop_or_impute():
    df = pd.DataFrame({"g": list("ab") * 10, "y": [0, 1, 1, 0] * 5, "x": [1.0, None] + [2.0] * 18,
                       "c": ["u", "v"] * 10})
    df.loc[3, "y"] = None
    dropped = data.build_task(df, data.TaskSpec("g", "y", ("b",), ("1",)))
    assert dropped.n_dropped_missing_sy == 1 and dropped.n_dropped_missing_features == 1
    assert len(dropped.y) == 18
    imputed = data.build_task(df, data.TaskSpec("g", "y", ("b",), ("1",), missing="impute"))
    assert len(imputed.y) == 19 and imputed.X["x"].isna().sum() == 1


def test_profile_flags_id_like_and_constant_columns():
    df = pd.DataFrame({"id": range(50), "k": 1, "g": list("ab") * 25, "y": [0, 1, 1, 0, 1] * 10,
                       "x": np.arange(50) % 5})
    prof = data.profile_columns(df).set_index("column")
    assert "id-like" in prof.at["id", "flags"] and "constant" in prof.at["k", "flags"]
    task = data.build_task(df, data.TaskSpec("g", "y", ("b",), ("1",)))
    assert "id" not in task.features and "k" not in task.features
    assert any("'id'" in w for w in task.warnings)


def test_high_cardinality_categorical_is_capped_and_the_cut_is_said():
    """Issue 45, item 6: a column the one-hot cap cuts is warned about (its 49 most frequent levels kept, one column
    for the rest) and named with how many levels were folded."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"g": rng.choice(["a", "b"], 3000), "y": rng.integers(0, 2, 3000),
                       "city": [f"c{i}" for i in rng.integers(0, 400, 3000)], "x": rng.normal(size=3000)})
    task = data.build_task(df, data.TaskSpec("g", "y", ("b",), ("1",)))
    assert "Column 'city' has 400 distinct values; only its 49 most frequent are encoded, the rest share one " \
           "column." in task.warnings
    arrays = data.prepare_arrays(task, data.split_task(task))
    assert arrays.X_train.shape[1] == 1 + data.MAX_CATEGORIES
    levels, folded = folded_levels(arrays.preprocessor)["city"]
    seen = df.loc[data.split_task(task).train, "city"].nunique()
    assert (levels, folded) == (seen, seen - (data.MAX_CATEGORIES - 1))
    assert folded_words({"city": (levels, folded)}) == f"city ({folded:,} of its {levels:,} levels folded into one)"


def test_a_column_of_50_to_100_levels_is_said_too():
    """The old warning spoke only above 100 levels, so a column of 60 was cut without a word; and the cap's 50
    columns hold one for the rest, so 50 levels already lose one. 49 levels are whole."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"g": rng.choice(["a", "b"], 2000), "y": rng.integers(0, 2, 2000),
                       "city": [f"c{i % 60}" for i in range(2000)], "town": [f"t{i % 50}" for i in range(2000)],
                       "ward": [f"w{i % 49}" for i in range(2000)]})
    task = data.build_task(df, data.TaskSpec("g", "y", ("b",), ("1",)))
    assert [w for w in task.warnings if "distinct values" in w] == [
        "Column 'city' has 60 distinct values; only its 49 most frequent are encoded, the rest share one column.",
        "Column 'town' has 50 distinct values; only its 49 most frequent are encoded, the rest share one column."]
    arrays = data.prepare_arrays(task, data.split_task(task))
    assert set(folded_levels(arrays.preprocessor)) == {"city", "town"}


# ----- reading files ----------------------------------------------------------------------------
def test_reads_csv_tsv_semicolon_gzip_parquet_and_excel(tmp_path):
    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    variants = {
        "t.csv": df.to_csv(index=False).encode(),
        "t.tsv": df.to_csv(index=False, sep="\t").encode(),
        "t.txt": df.to_csv(index=False, sep=";").encode("cp1252"),
        "t.csv.gz": gzip.compress(df.to_csv(index=False).encode()),
    }
    for name, raw in variants.items():
        (tmp_path / name).write_bytes(raw)
        got = data.read_table(tmp_path / name)
        assert got.columns.tolist() == ["a", "b"] and got["b"].tolist() == ["x", "y", "z"], name
    df.to_parquet(tmp_path / "t.parquet")
    assert data.read_table(tmp_path / "t.parquet").shape == (3, 2)
    df.to_excel(tmp_path / "t.xlsx", index=False)
    assert data.read_table((tmp_path / "t.xlsx").read_bytes()).shape == (3, 2)


def test_reads_latin1_text():
    raw = "name;group;y\nJosé;ä;1\nZoë;b;0\n".encode("latin-1")
    df = data.read_table(raw)
    assert df["name"].tolist() == ["José", "Zoë"]


@pytest.mark.parametrize("raw, match", [
    (b"", "empty"),
    (b"   \n\n", "empty"),
    (b"a,b,c\n", "no rows"),
    (bytes(range(256)) * 20, "not a table"),
    (b"just one column\nvalue\n", "column"),
    (b"a,a,b\n1,2,3\n", "duplicate"),
    (gzip.compress(b"", mtime=0)[:-4], "damaged|empty"),
    (b"PK\x03\x04garbage", "damaged"),
])
def test_malformed_files_give_clear_errors(raw, match):
    with pytest.raises(FairDashError, match=match):
        data.read_table(raw, name="upload.csv")


@pytest.mark.parametrize("spec, match", [
    (dict(s_column="nope", y_column="salary", s1_values=("Male",), y1_values=(">50K",)), "not in the table"),
    (dict(s_column="sex", y_column="salary", s1_values=("Males",), y1_values=(">50K",)), "does not occur"),
    (dict(s_column="sex", y_column="sex", s1_values=("Male",), y1_values=("Male",)), "different columns"),
    (dict(s_column="sex", y_column="salary", s1_values=("Male", "Female"), y1_values=(">50K",)), "only one group"),
    (dict(s_column="sex", y_column="salary", s1_values=("Male",), y1_values=(">50K", "<=50K")), "only one value"),
])
def test_bad_choices_give_clear_errors(adult_table, spec, match):
    with pytest.raises(FairDashError, match=match):
        data.build_task(adult_table, data.TaskSpec(**spec))


def test_group_with_no_positives_is_a_clear_error():
    df = pd.DataFrame({"g": ["a"] * 10 + ["b"] * 10, "y": [0] * 10 + [0, 1] * 5, "x": range(20)})
    with pytest.raises(FairDashError, match="no positive"):
        data.build_task(df, data.TaskSpec("g", "y", ("b",), ("1",)))


def test_empty_label_column_is_a_clear_error():
    df = pd.DataFrame({"g": ["a", "b"] * 5, "y": [None] * 10, "x": range(10)})
    with pytest.raises(FairDashError, match="empty"):
        data.build_task(df, data.TaskSpec("g", "y", ("b",), ("1",)))


@pytest.mark.slow
def test_readout_keys_and_values(adult_task):
    task = adult_task
    out = rates_readout(task, target_rate=0.3)
    for key in ("base_rates", "group_share", "target_rate", "presets", "t", "transition", "ceiling_at_target",
                "n_train", "n_test", "n_test_balanced"):
        assert key in out
    assert out["target_rate"] == 0.3
    r0, r1 = out["base_rates"]["0"], out["base_rates"]["1"]
    p0 = out["group_share"]["0"]
    assert out["ceiling_at_target"] == pytest.approx(1 - p0 * abs(0.3 - r0) - (1 - p0) * abs(0.3 - r1))


@pytest.mark.slow
def test_split_arrays_are_remembered_per_live_task_and_seed(monkeypatch):
    import gc

    calls = []
    real = data.prepare_arrays
    monkeypatch.setattr(data.split, "prepare_arrays", lambda task, split: calls.append(split.seed) or real(task, split))
    monkeypatch.setattr(data.split, "_SPLIT_MEMO", {})
    task = data.build_task(data.load_sample("compas"), data.TaskSpec("race", "two-year-recid", ("Caucasian",), ("1",)))
    a0 = data.split_arrays(task, 0)
    assert data.split_arrays(task, 0) is a0 and calls == [0]  # the same request reuses the arrays
    ref = data.split.prepare_arrays(task, data.split_task(task, seed=0))  # counted, as the memo's own calls
    np.testing.assert_array_equal(a0.X_train, ref.X_train)
    np.testing.assert_array_equal(a0.balanced_test, ref.balanced_test)
    assert not a0.X_train.flags.writeable  # shared, so read-only
    for seed in range(1, data.SPLIT_MEMO_SIZE + 1):
        data.split_arrays(task, seed)
    assert len(data.split._SPLIT_MEMO) == data.SPLIT_MEMO_SIZE  # bounded: seed 0, least recently used, went
    data.split_arrays(task, 0)
    assert calls.count(0) == 3
    # an equal but distinct task is not confused with the first, and a task's entries go with it
    other = data.build_task(data.load_sample("compas"), data.TaskSpec("race", "two-year-recid", ("Caucasian",), ("1",)))
    assert data.split_arrays(other, 0) is not data.split_arrays(task, 0)
    del task, a0, ref
    gc.collect()
    assert all(ref() is other for ref, _ in data.split._SPLIT_MEMO.values())
