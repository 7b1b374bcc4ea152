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
