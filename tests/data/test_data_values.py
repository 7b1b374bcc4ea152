"""Values as the user sees them in the file: TRUE/false labels, numbers spelled another way, values with
spaces around them, and group names that list exactly the values each group holds."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairdash import data
from fairdash.cli import main
from fairdash.errors import FairDashError

BOOL_CSV = (b"sexe,ok,x\n" + b"".join(
    f"{s},{ok},{i % 4}\n".encode() for i, (s, ok) in enumerate(
        [("Femme ", "TRUE"), ("Homme", "false"), ("Femme ", "true"), ("Homme", "FALSE"), ("Femme ", "False"),
         ("Homme", "TRUE"), ("Femme ", "false"), ("Homme", "True")] * 3)))


@pytest.fixture
def booleans():
    df = data.read_table(BOOL_CSV, "labels.csv")
    assert pd.api.types.is_bool_dtype(df["ok"])  # pandas reads TRUE/false as booleans
    return df


@pytest.mark.parametrize("typed", ["TRUE", "True", "true", " true ", "1"])
def test_a_boolean_label_accepts_the_files_spelling(booleans, typed):
    task = data.build_task(booleans, data.TaskSpec("sexe", "ok", ("Homme",), (typed,)))
    assert task.y.tolist() == booleans["ok"].astype(int).tolist()
    assert task.label_names == ("not True", "True")


@pytest.mark.parametrize("typed", ["FALSE", "false", "0"])
def test_false_spellings_pick_the_false_rows(booleans, typed):
    task = data.build_task(booleans, data.TaskSpec("sexe", "ok", ("Homme",), (typed,)))
    assert task.y.tolist() == (~booleans["ok"]).astype(int).tolist()
    assert task.label_names == ("not False", "False")


@pytest.mark.parametrize("typed", ["yes", "2", "T", "truth", ""])
def test_values_a_boolean_column_does_not_hold_are_still_refused(booleans, typed):
    with pytest.raises(FairDashError, match="does not occur"):
        data.build_task(booleans, data.TaskSpec("sexe", "ok", ("Homme",), (typed,)))


def test_a_boolean_label_with_missing_values(booleans):
    df = booleans.astype({"ok": object})
    df.loc[0, "ok"] = None
    task = data.build_task(df, data.TaskSpec("sexe", "ok", ("Homme",), ("TRUE",)))
    assert len(task.y) == len(df) - 1 and task.y.tolist() == df["ok"].iloc[1:].astype(int).tolist()


def test_cli_rates_accepts_y1_TRUE(tmp_path, capsys):
    path = tmp_path / "labels.csv"
    path.write_bytes(BOOL_CSV)
    code = main(["rates", "--data", str(path), "--s", "sexe", "--s1", "Homme", "--y", "ok", "--y1", "TRUE", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "does not occur" not in out.err


def test_numbers_spelled_another_way():
    df = pd.DataFrame({"g": ["a", "b"] * 10, "y": [0, 1, 1, 0] * 5, "f": [0.5, 1.0] * 10,
                       "x": [i % 3 for i in range(20)]})
    t1 = data.build_task(df, data.TaskSpec("g", "y", ("a",), ("1",)))
    t2 = data.build_task(df, data.TaskSpec("g", "y", ("a",), ("1.0",)))
    assert t1.y.tolist() == t2.y.tolist() and t2.label_names == ("not 1", "1")
    t3 = data.build_task(df, data.TaskSpec("f", "y", (".5",), ("1",)))
    assert t3.group_names == ("f = 1", "f = 0.5") and t3.s.tolist() == [1, 0] * 10  # with the column (issue 27)
    with pytest.raises(FairDashError, match="does not occur"):
        data.build_task(df, data.TaskSpec("g", "y", ("a",), ("2",)))


def test_text_is_not_matched_loosely():
    df = pd.DataFrame({"g": ["Male", "Female"] * 10, "y": [0, 1, 1, 0] * 5, "x": [i % 3 for i in range(20)]})
    for typed in ("male", "M", "True", "1"):
        with pytest.raises(FairDashError, match="does not occur"):
            data.build_task(df, data.TaskSpec("g", "y", (typed,), ("1",)))


@pytest.mark.parametrize("s1, names", [
    (("Homme",), ("Femme", "Homme")),
    (("Homme ",), ("Femme", "Homme")),  # typed as in the file, with the space: group 0 holds only Femme
    (("Femme ",), ("Homme", "Femme")),
    (("Femme",), ("Homme", "Femme")),
    ((" Femme ", "Homme"), ("(none)", "Femme, Homme")),
])
def test_group_names_list_exactly_the_values_each_group_holds(booleans, s1, names):
    if names[0] == "(none)":
        with pytest.raises(FairDashError, match="group 0"):
            data.build_task(booleans, data.TaskSpec("sexe", "ok", s1, ("True",)))
        return
    task = data.build_task(booleans, data.TaskSpec("sexe", "ok", s1, ("True",)))
    assert task.group_names == names
    held = data.profile._as_text(booleans["sexe"])
    for j, name in enumerate(task.group_names):
        assert set(held[task.s == j]) == set(name.split(", "))


VALUES = st.sampled_from(["a", "b", "c", "Femme", "Homme", "x y"])
PAD = st.sampled_from(["", " ", "  "])


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(VALUES, PAD), min_size=6, max_size=30), st.data())
def test_group_names_partition_the_values(rows, draw):
    """Whatever spaces the file and the typed values carry, each group's name lists exactly the values
    its rows hold (group 0 lists up to three and then '...')."""
    col = [v + p for v, p in rows]
    stripped = sorted({v for v, _ in rows})
    if len(stripped) < 2:
        return
    chosen = draw.draw(st.lists(st.sampled_from(stripped), min_size=1, max_size=len(stripped) - 1, unique=True))
    typed = tuple(v + draw.draw(PAD) for v in chosen)
    n = len(col)
    df = pd.DataFrame({"g": col, "y": [i % 2 for i in range(n)], "x": [i % 3 for i in range(n)]})
    try:
        task = data.build_task(df, data.TaskSpec("g", "y", typed, ("1",)))
    except FairDashError as e:  # a group with labels of one kind only: not about naming
        assert "labels" in str(e) or "has no rows" in str(e)
        return
    held = [set(np.array(col)[task.s == j].tolist()) for j in (0, 1)]
    held = [{v.strip() for v in h} for h in held]
    assert task.group_names[1] == ", ".join(chosen)
    g0 = task.group_names[0].removesuffix(" ...").split(", ")
    assert set(g0) <= held[0] and (len(held[0]) > 3 or set(g0) == held[0])
    assert held[1] == set(chosen)
