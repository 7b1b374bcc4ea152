"""Issue 27, item 4: say what is thin. The command line's summary names every group (not only 0 and 1)."""
import numpy as np
import pandas as pd

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

    from fairdash.export import model_file_name

    m = SimpleNamespace(name="fair-lr", target_rate=0.3, seed=0)
    assert model_file_name(m, 1) != model_file_name(m, 2)
    assert model_file_name(m, 2) == "fair-lr_prt0.300_seed0_run2.fairdash"
    assert model_file_name(SimpleNamespace(name="lr", target_rate=None, seed=1)) == "lr_seed1.fairdash"
