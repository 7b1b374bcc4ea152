"""The golden fits: FairLR / FairGP / LR / GP on the bundled Adult and COMPAS samples, built as
``tests/models/test_model_numbers.py`` compares them, and the one rule by which a fit is compared with a machine's
record of it (``differences``). Recording, from the repository root, with the code whose numbers are the
reference::

    FAIRDASH_DEVICE=cpu python tests/golden_fits.py tests/fixtures/golden/NAME.npz

A record holds, for every fit ``<setup>.<model>``, every test row's probability (``.proba``) and label
(``.labels``). ``tests/fixtures/golden/README.md`` says which machine made each record and how.

The rule: every probability within ``fairdash._version.SAME_NUMBERS_BOUND`` of the record (the bound within which
FairDash's fits agree across CPUs and row orders, measured in benchmarks/results/2026-11-28-convergence.md), and
every label equal, except on a row whose recorded probability lies within that bound of the cut (1/2), where another
machine's rounding may put it on either side."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from fairdash._version import SAME_NUMBERS_BOUND
from fairdash.data import paper_arrays
from fairdash.models.fair_gp import GP, FairGP
from fairdash.models.fair_lr import LR, FairLR
from fairdash.targeting.target_spec import make_target_spec

GP_FAST = dict(num_inducing=32, batch_size=512, max_epochs=3, max_seconds=None, lr=0.05)
SETUPS = ("adult-sex", "compas-race")
MODELS = ("lr", "fair-lr", "fair-lr-0.3", "gp", "fair-gp", "fair-lr-tpr")
RECORDS = Path(__file__).parent / "fixtures" / "golden"
CUT = 0.5


def criterion_of(setup: str) -> str:
    return "dp" if setup.startswith("adult") else "eo"


def fits() -> list[tuple[str, str]]:
    """Every ``(setup, model)`` recorded (explicit TPR/TNR targets belong to equality of opportunity: COMPAS)."""
    return [(s, m) for s in SETUPS for m in MODELS if not (m == "fair-lr-tpr" and criterion_of(s) != "eo")]


def build(name: str, criterion: str, **change):
    """A golden model, with ``change`` (a deliberate change of a parameter, e.g. ``C=0.9``) applied."""
    if name == "lr":
        return LR(device="cpu", **change)
    if name == "gp":
        return GP(device="cpu", **{**GP_FAST, **change})
    if name == "fair-lr":
        return FairLR(target=make_target_spec(criterion), device="cpu", **change)
    if name == "fair-lr-0.3":
        return FairLR(target=make_target_spec(criterion, 0.3), device="cpu", **change)
    if name == "fair-lr-tpr":
        return FairLR(target=make_target_spec("eo", tpr_target=0.9, tnr_target=0.8), device="cpu", **change)
    if name == "fair-gp":
        return FairGP(target=make_target_spec(criterion), device="cpu", **{**GP_FAST, **change})
    raise KeyError(name)


def training_rows(name: str, n: int):
    """The rows a golden model trains on: all, or for the GPs a fixed sample of 2,000."""
    if name in ("gp", "fair-gp"):
        return np.sort(np.random.default_rng(0).choice(n, 2000, replace=False))
    return slice(None)


def fit(setup: str, name: str, arrays=None, **change) -> tuple[np.ndarray, np.ndarray]:
    """``(probabilities, labels)`` of the golden fit on the test rows of seed 0's split."""
    a = arrays if arrays is not None else paper_arrays(setup, seed=0)
    rows = training_rows(name, a.X_train.shape[0])
    model = build(name, criterion_of(setup), **change).fit(a.X_train[rows], a.y_train[rows], a.s_train[rows])
    return model.predict_proba(a.X_test)[:, 1], np.asarray(model.predict(a.X_test))


def load(path: Path) -> dict:
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def recorded(record: dict, key: str) -> tuple[np.ndarray, np.ndarray]:
    proba = record[key + ".proba"]
    return proba, np.unpackbits(record[key + ".labels"])[: len(proba)]


def differences(proba, labels, want_proba, want_labels, bound: float = SAME_NUMBERS_BOUND) -> list[str]:
    """What differs between a fit and a record beyond what another machine may change: probabilities
    further apart than ``bound``; labels that differ on a row whose recorded probability is further than
    ``bound`` from the cut. Empty when the fit reproduces the record."""
    proba, want_proba = np.asarray(proba, dtype=np.float64), np.asarray(want_proba, dtype=np.float64)
    out = []
    if proba.shape != want_proba.shape:
        return [f"{proba.shape[0]} test rows, the record has {want_proba.shape[0]}"]
    gap = np.abs(proba - want_proba)
    if gap.max() > bound:
        out.append(f"{int((gap > bound).sum())} probabilities differ by more than {bound:g} "
                   f"(largest {gap.max():.3g}, row {int(gap.argmax())})")
    firm = np.abs(want_proba - CUT) > bound
    flipped = np.flatnonzero(firm & (np.asarray(labels) != np.asarray(want_labels)))
    if flipped.size:
        out.append(f"{flipped.size} labels differ on rows further than {bound:g} from the cut "
                   f"(rows {flipped[:5].tolist()})")
    return out


def record_all(path: Path) -> None:
    out = {}
    arrays = {s: paper_arrays(s, seed=0) for s in SETUPS}
    for setup, name in fits():
        proba, labels = fit(setup, name, arrays[setup])
        key = f"{setup}.{name}"
        out[key + ".proba"] = proba
        out[key + ".labels"] = np.packbits(labels.astype(np.uint8))
        print(key, "rows near the cut:", int((np.abs(proba - CUT) <= SAME_NUMBERS_BOUND).sum()), flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **out)
    print("wrote", path)


if __name__ == "__main__":
    record_all(Path(sys.argv[1]))
