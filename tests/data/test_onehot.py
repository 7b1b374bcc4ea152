"""Issue 36, item 2: one-hot groups made whole. Indicator columns that hold one category per row (Race_White,
Race_Black, ...; an outcome as PF_0/PF_1) are offered as one column named by their prefix: a multi-group s on the
command line (--s Race), the label, or a feature; the default features leave out the indicators of s and y (they give
them away), and the leak check still lists them when they are chosen as features."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from fairdash import data
from fairdash.analysis import proxies
from fairdash.data.onehot import NONE, indicator_sets, whole_column

RACES = ("White", "Black", "Asian", "Hispanic", "Other")


@pytest.fixture(scope="module")
def law(tmp_path_factory):
    rng = np.random.default_rng(1)
    n = 1500
    race = rng.choice(RACES, n, p=[.5, .2, .1, .15, .05])
    lsat, gpa = rng.normal(35, 5, n).round(1), rng.normal(3.2, .4, n).round(2)
    logit = 0.2 * (lsat - 35) + 1.5 * (gpa - 3.2) + np.where(race == "White", 0.5, -0.3)
    pf = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    df = pd.DataFrame({"LSAT": lsat, "UGPA": gpa, **{f"Race_{r}": (race == r).astype(int) for r in RACES},
                       "PF_0": 1 - pf, "PF_1": pf})
    path = tmp_path_factory.mktemp("onehot") / "law.csv"
    df.to_csv(path, index=False)
    return path, race, pf


def test_indicator_columns_are_read_as_one_whole_column_with_a_note(law):
    path, race, pf = law
    df = data.read_table(path)
    assert list(df["Race"]) == list(race) and list(df["PF"].astype(int)) == list(pf)
    notes = df.attrs["read_notes"]
    assert any("offered together as column 'Race'" in n and "(5)" in n for n in notes)
    assert indicator_sets(df) == {"Race": [f"Race_{r}" for r in RACES], "PF": ["PF_0", "PF_1"]}


def test_race_is_one_multi_group_s_and_its_indicators_leave_the_default_features(law):
    path, race, _ = law
    task = data.build_task(data.read_table(path), data.TaskSpec("Race", "PF", (), ("1",), s_multi=True))
    assert task.n_groups == 5 and sorted(task.group_names) == sorted(RACES)
    assert task.features == ("LSAT", "UGPA")
    assert any("'Race_Asian', 'Race_Black'" in w and "which is s: they give it away" in w for w in task.warnings)
    # chosen as features on purpose, the leak check still names them
    table = data.read_table(path)
    chosen = data.build_task(table, data.TaskSpec("Race", "PF", (), ("1",), s_multi=True,
                                                  features=("LSAT", "UGPA", *[f"Race_{r}" for r in RACES])))
    leaks, _ = proxies.task_leaks_and_proxies(table, chosen)
    assert {leak["column"] for leak in leaks if leak["of"] == "s"} >= {"Race_Asian", "Race_Black"}, leaks


@pytest.mark.slow
def test_the_command_line_takes_the_prefix_as_s(law):
    path, _, _ = law
    out = subprocess.run([sys.executable, "-m", "fairdash", "rates", "--data", str(path), "--s", "Race", "--s-multi",
                          "--y", "PF", "--y1", "1", "--json"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and "offered together as column 'Race'" in out.stderr
    assert len(__import__("json").loads(out.stdout)["base_rates"]) == 5


def test_rows_with_no_indicator_are_none_and_overlapping_flags_are_no_set():
    df = pd.DataFrame({"g_a": [1, 0, 0, 0], "g_b": [0, 1, 0, 1], "is_x": [1, 1, 0, 0], "is_y": [1, 0, 1, 0]})
    assert indicator_sets(df) == {"g": ["g_a", "g_b"]}  # is_x and is_y are both 1 on row 0: two flags, not a category
    assert list(whole_column(df, "g", ["g_a", "g_b"])) == ["a", "b", NONE, "b"]


def _law_like(n=400, seed=3, pair=("PF_0", "PF_1")):
    """A law-school-like table: 5 Race_* and 2 Sex_* indicator columns, the outcome as a complementary pair, and
    numeric features whose names say nothing (LSAT, UGPA, ZFYA)."""
    rng = np.random.default_rng(seed)
    race, sex, pf = rng.choice(RACES, n), rng.choice(["Female", "Male"], n), rng.integers(0, 2, n)
    return pd.DataFrame({"LSAT": rng.normal(36, 5, n).round(1), "UGPA": rng.normal(3.2, .4, n).round(2),
                         **{f"Race_{r}": (race == r).astype(int) for r in RACES},
                         **{f"Sex_{s}": (sex == s).astype(int) for s in ("Female", "Male")},
                         pair[0]: 1 - pf, pair[1]: pf, "ZFYA": rng.normal(0, 1, n).round(2)})


def test_binary_pairs_are_complementary_no_yes_indicators():
    df = _law_like()
    assert data.onehot.binary_pairs(df) == {"PF": ("PF_0", "PF_1")}  # Sex_Female/Sex_Male: levels are not no/yes
    flipped = df.rename(columns={"PF_0": "passed_yes", "PF_1": "passed_no"})
    assert data.onehot.binary_pairs(flipped) == {"passed": ("passed_no", "passed_yes")}
    df.loc[0, ["PF_0", "PF_1"]] = 0  # a row with neither: not complements
    assert data.onehot.binary_pairs(df) == {}


def test_the_upload_guess_takes_the_whole_group_for_s_and_the_pair_for_y(tmp_path):
    raw = _law_like()
    path = tmp_path / "law.csv"
    raw.to_csv(path, index=False)
    table = data.read_table(path)  # as the upload reads it: with the whole columns Race, Sex and PF
    g = proxies.guess_roles(table, data.profile_columns(table))
    assert g.s_column in ("Race", "Sex") and g.y_column == "PF" and g.y1_values == ("1",), g
    assert "indicator columns" in g.s_reason and "'PF_1'" in g.y_reason, g
    # the table without its whole columns: an indicator of a sensitive set, and the pair's yes column
    g = proxies.guess_roles(raw)
    assert g.s_column.startswith(("Race_", "Sex_")) and (g.y_column, g.y1_values) == ("PF_1", ("1",)), g
    # any prefix, any no/yes levels: the rule is not about these names
    other = _law_like(pair=("bar=no", "bar=yes")).drop(columns=["Sex_Female", "Sex_Male"])
    other = other.rename(columns=lambda c: c.replace("Race_", "ethnicity."))
    g = proxies.guess_roles(data.onehot.add_whole_columns(other)[0])
    assert (g.s_column, g.y_column, g.y1_values) == ("ethnicity", "bar", ("yes",)), g
