"""Model files written before issue 37 item 4 keep loading: their estimators stored ``seed`` (now ``random_state``)
and FairLR's ``target_rate`` alias beside ``target``; both are read as today's parameters."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from fairdash.files.export import load_model
from fairdash.models.core.state import renamed_params

from model_files import rewritten

FILES = Path(__file__).parents[1] / "fixtures" / "model_files"


def _params(path: Path) -> dict:
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("meta.json"))["model"]["state_meta"]["params"]


def test_an_old_files_seed_is_read_as_random_state():
    path = FILES / "f846eb2-fair-lr.fairdash"
    stored = _params(path)
    assert "seed" in stored and "target_rate" in stored  # written before the rename (the fixture is old)
    model = load_model(path).estimator
    assert model.random_state == stored["seed"] and "seed" not in model.get_params()
    seven = load_model(rewritten(path, lambda meta: meta["model"]["state_meta"]["params"].update(seed=7)))
    assert seven.estimator.random_state == 7
    X = np.zeros((2, model.n_features_in_))
    np.testing.assert_array_equal(seven.estimator.predict_proba(X), model.predict_proba(X))


def test_renamed_params_reads_old_names_only():
    assert renamed_params({"seed": 3, "C": 1.0}) == {"random_state": 3, "C": 1.0}
    assert renamed_params({"random_state": 3}) == {"random_state": 3}
