"""No number the command line and the report show changes unnoticed, on any machine. A CLI sweep (COMPAS,
s = race, FairLR, LR, FairGP and Kamiran & Calders at PR_t 0.3 and 0.5, two repeats) and the traces of its
report's figures are compared with the golden files ``tests/fixtures/golden_sweep.csv`` and
``tests/fixtures/golden_report_figures.json``, written by ``tests/golden_numbers.py``.

Every number in them is made of decisions (rates, accuracies, gaps, ratios, ceilings at measured rates).
Two machines' fits agree within ``SAME_NUMBERS_BOUND`` (``tests/models/test_model_numbers.py``), so a decision can
differ between them only where a score lies within that bound of its cut. The sweep's ``margin`` (how close
any of its scores came to a cut) is checked to be larger: then no decision differs, and every number is
compared to 1e-9 (the float sums of identical decisions). Fit times, devices and clock times are not
compared."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from fairdash._version import SAME_NUMBERS_BOUND

import golden_numbers

pytestmark = pytest.mark.slow

DATA = Path(__file__).parents[1] / "fixtures"
TOL = 1e-9
NOT_COMPARED = {"fit_seconds", "fitted_at", "device"}
# made of scores, not decisions: equal across machines within the bound (no score lies within it of a bin edge)
FROM_SCORES = ("cal_error",)


@pytest.fixture(scope="module")
def now(tmp_path_factory, monkeypatch_module):
    from fairdash.cli import main
    from fairdash.report import build

    monkeypatch_module.setenv("FAIRDASH_DEVICE", "cpu")
    out = tmp_path_factory.mktemp("numbers")
    csv, traces, margin = golden_numbers.run(out, main, build)
    return pd.read_csv(csv), traces, margin


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def _close(a, b, tol) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return abs(float(a) - float(b)) <= tol
    except (TypeError, ValueError):
        return str(a) == str(b)


def test_no_decision_of_the_sweep_lies_within_the_bound_of_its_cut(now):
    _, _, margin = now
    assert margin > SAME_NUMBERS_BOUND, (
        f"a score lies {margin:.2g} from its cut: another machine may decide that row the other way, so the "
        "sweep cannot be compared exactly")


def test_the_sweep_csv_is_unchanged(now):
    got, _, _ = now
    want = pd.read_csv(DATA / "golden_sweep.csv")
    assert list(got.columns) == list(want.columns)
    assert got.shape == want.shape
    key = ["model", "target_rate", "seed"]
    got, want = got.sort_values(key).reset_index(drop=True), want.sort_values(key).reset_index(drop=True)
    differ = []
    for i in range(len(want)):
        for c in want.columns:
            if c in NOT_COMPARED:
                continue
            a, b = got.loc[i, c], want.loc[i, c]
            if pd.isna(a) and pd.isna(b):
                continue
            if not _close(a, b, SAME_NUMBERS_BOUND if any(f in c for f in FROM_SCORES) else TOL):
                differ.append(f"{want.loc[i, 'model']} PR_t {want.loc[i, 'target_rate']} seed {want.loc[i, 'seed']}: "
                              f"{c} {a!r} != {b!r}")
    assert not differ, differ[:20]


def test_the_report_figures_are_unchanged(now):
    _, got, _ = now
    want = json.loads((DATA / "golden_report_figures.json").read_text())
    assert [f["title"] for f in got] == [f["title"] for f in want]
    differ = []
    for fg, fw in zip(got, want):
        assert [t["name"] for t in fg["traces"]] == [t["name"] for t in fw["traces"]], fg["title"]
        for tg, tw in zip(fg["traces"], fw["traces"]):
            for axis in ("x", "y"):
                a, b = tg[axis], tw[axis]
                if a is None or b is None:
                    assert a == b, (fg["title"], tg["name"], axis)
                    continue
                assert len(a) == len(b), (fg["title"], tg["name"], axis)
                bad = [(p, q) for p, q in zip(a, b) if not (p is None and q is None) and not _close(p, q, TOL)]
                if bad:
                    differ.append(f"{fg['title']} / {tg['name']} / {axis}: {bad[:3]}")
    assert not differ, differ[:20]
