"""Issue 27, item 4: say what is thin. The command line's summary names every group (not only 0 and 1); a
group whose threshold or measured rates rest on few rows is named with its count; two runs' model files
download under two names."""
import numpy as np
import pandas as pd
import pytest

from fairdash.cli import main


def _three_groups(path, n=900, seed=3):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    x = rng.normal(size=n) + 0.5 * g
    df = pd.DataFrame({"g": np.array(["p", "q", "r"])[g], "x": x, "z": rng.normal(size=n),
                       "y": (x + rng.normal(size=n) > 0.5).astype(int)})
    df.to_csv(path, index=False)
    return path


def test_train_prints_every_group(tmp_path, capsys):
    table = _three_groups(tmp_path / "three.csv")
    code = main(["train", "--data", str(table), "--s", "g", "--s-multi", "--y", "y", "--y1", "1", "--model", "lr",
                 "--out", str(tmp_path / "m.fairdash")])
    out = capsys.readouterr().out
    assert code == 0
    for g, name in enumerate("pqr"):
        for r in ("PR", "TPR", "TNR"):
            assert f"{r.lower()}_{g}" in out and f"{r} of {name}" in out


def test_two_runs_download_their_model_files_under_two_names():
    from types import SimpleNamespace

    from fairdash.files.export import model_file_name

    m = SimpleNamespace(name="fair-lr", target_rate=0.3, seed=0)
    assert model_file_name(m, 1) != model_file_name(m, 2)
    assert model_file_name(m, 2) == "fair-lr_prt0.300_seed0_run2.fairdash"
    assert model_file_name(SimpleNamespace(name="lr", target_rate=None, seed=1)) == "lr_seed1.fairdash"


def _small_group(path, n=900, small=12, seed=5):
    """Two large groups and one of ``small`` rows (both labels in each)."""
    rng = np.random.default_rng(seed)
    g = np.r_[rng.integers(0, 2, n - small), np.full(small, 2)]
    x = rng.normal(size=n) + 0.5 * (g == 1)
    y = (x + rng.normal(size=n) > 0.3).astype(int)
    y[-small:] = np.arange(small) % 2
    pd.DataFrame({"g": np.array(["p", "q", "tiny"])[g], "x": x, "z": rng.normal(size=n), "y": y}).to_csv(
        path, index=False)
    return path


def test_a_group_on_few_rows_is_named_with_its_counts(tmp_path, capsys):
    table = _small_group(tmp_path / "small.csv")
    code = main(["train", "--data", str(table), "--s", "g", "--s-multi", "--y", "y", "--y1", "1", "--model", "lr",
                 "--decision", "group-rates", "--pr-t", "0.4", "--out", str(tmp_path / "m.fairdash")])
    err = capsys.readouterr().err
    assert code == 0, err
    cut = [ln for ln in err.splitlines() if "threshold of group 'tiny'" in ln]
    assert len(cut) == 1 and "training row(s)" in cut[0]
    bal = [ln for ln in err.splitlines() if "balanced test set" in ln]
    assert len(bal) == 1 and "'tiny' 2" in bal[0] and "'p' 2" in bal[0], bal  # it collapses to 2 rows a group
    assert not any("group 'p'" in ln or "group 'q'" in ln for ln in err.splitlines())


def test_groups_whose_values_are_numbers_carry_their_columns_name():
    from fairdash import data
    from fairdash.data.task import group_codes

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"race": rng.integers(0, 3, 400), "sex": rng.integers(1, 3, 400), "x": rng.normal(size=400),
                       "y": rng.integers(0, 2, 400)})
    multi = data.TaskSpec("race", "y", s_multi=True, y1_values=("1",))
    assert data.build_task(df, multi).group_names == ("race = 0", "race = 1", "race = 2")
    assert data.build_task(df, data.TaskSpec("race", "y", ("1",), ("1",))).group_names == ("race = 0, 2", "race = 1")
    crossed = data.build_task(df, data.TaskSpec("race", "y", y1_values=("1",), s_with="sex"))
    assert crossed.group_names[0] == "race = 0 × sex = 1"
    assert (group_codes(df, crossed.spec, crossed.group_names) == crossed.s).all()
    # a model file written before keeps its bare names ("1"), and a new table still finds its groups
    assert (group_codes(df, multi, ("0", "1", "2")) == data.build_task(df, multi).s).all()
    words = data.build_task(df.assign(race=np.array(["a", "b", "c"])[df["race"]]), multi).group_names
    assert words == ("a", "b", "c")  # text values keep their own words


@pytest.mark.slow
def test_train_header_says_a_plain_models_decisions_are_cut_at_the_target(tmp_path, capsys):
    """Issue 27 (words): LR with a group-rates rule was headed "no target (plain model)"."""
    code = main(["train", "--paper", "compas-race", "--model", "lr", "--decision", "group-rates", "--pr-t", "0.3",
                 "--out", str(tmp_path / "m.fairdash")])
    head = capsys.readouterr().out.splitlines()[0]
    assert code == 0 and "no target (plain model)" not in head
    assert "cut to reach" in head and "PR_t = 0.300" in head and "group-rates" in head
