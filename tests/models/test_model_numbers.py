"""Every number unchanged, on any machine: FairLR / FairGP / LR / GP on the bundled Adult and COMPAS samples
predict what two machines' records of the current code say (``tests/fixtures/golden/``, written by
``tests/golden_fits.py``; its README says which machine made each), by the one rule of
``golden_fits.differences``: probabilities within ``SAME_NUMBERS_BOUND`` (1e-6), labels exactly except on a
row whose recorded probability lies within that bound of the cut.

The old solver's records (``tests/fixtures/cross-cpu/``: the fits of commit 851a3a1 on an Intel Xeon, against
``tests/fixtures/golden_predictions.npz``, the same fits on AMD EPYC) show what the rule is for: under the old
solver the two CPUs' fits differed beyond it, so a test pinned to one machine's digits failed on the other.

Model files written by earlier code still load and predict what that code's fits predicted
(``golden_predictions.npz``): prediction is float64 numpy from stored numbers, the same on any machine to
1e-9."""
from pathlib import Path

import numpy as np
import pytest

from fairdash.data import paper_arrays
from fairdash.models.core.state import load_state, model_from_state

import golden_fits as G

pytestmark = pytest.mark.slow

DATA = Path(__file__).parents[1] / "fixtures"
OLD = np.load(DATA / "golden_predictions.npz")  # the fits of commit 0542f69's code (AMD EPYC)
OLD_INTEL = DATA / "cross-cpu" / "intel-xeon-skylakex" / "golden_predictions.npz"  # commit 851a3a1, Intel Xeon
RECORDS = sorted(G.RECORDS.glob("*.npz"))
TOL = 1e-9


@pytest.fixture(scope="module")
def arrays():
    return {s: paper_arrays(s, seed=0) for s in G.SETUPS}


@pytest.fixture(scope="module")
def fitted(arrays):
    """Each golden fit, made once for the module."""
    cache = {}

    def get(setup, name):
        if (setup, name) not in cache:
            cache[setup, name] = G.fit(setup, name, arrays[setup])
        return cache[setup, name]

    return get


def test_two_machines_records_are_kept():
    assert len(RECORDS) >= 2, [r.name for r in RECORDS]
    assert (G.RECORDS / "README.md").is_file()


@pytest.mark.parametrize("record", RECORDS, ids=lambda p: p.stem)
@pytest.mark.parametrize("setup,name", G.fits(), ids=lambda v: v)
def test_predictions_unchanged(fitted, setup, name, record):
    want = G.recorded(G.load(record), f"{setup}.{name}")
    assert G.differences(*fitted(setup, name), *want) == []


def test_the_two_machines_records_agree_by_the_rule():
    first, *others = (G.load(r) for r in RECORDS)
    for other in others:
        for setup, name in G.fits():
            key = f"{setup}.{name}"
            assert G.differences(*G.recorded(other, key), *G.recorded(first, key)) == [], key


@pytest.mark.parametrize("name,change", [("lr", {"C": 0.9}), ("fair-lr", {"C": 0.9}), ("fair-gp", {"lr": 0.045})])
def test_a_small_change_of_a_parameter_fails_the_rule(arrays, name, change):
    """The rule still catches a real change: C from 1.0 to 0.9, or the GP's learning rate from 0.05 to
    0.045, moves probabilities far beyond the bound (benchmarks/results/2026-11-28-convergence.md lists every
    golden fit)."""
    setup = "compas-race"
    got = G.fit(setup, name, arrays[setup], **change)
    problems = G.differences(*got, *G.recorded(G.load(RECORDS[0]), f"{setup}.{name}"))
    assert problems and "probabilities differ" in problems[0], problems


def test_the_old_solver_differed_across_cpus_beyond_the_rule():
    """Commit 851a3a1's LR and FairLR stopped at a gradient of 1e-4, where the order of the sums decided the
    answer: its fits on an Intel Xeon and on AMD EPYC differ beyond the rule (up to 0.021 in probability, 22
    of Adult's 9,045 test labels), which is why the golden tests failed on the other CPU."""
    intel = G.load(OLD_INTEL)
    for key, most in [("adult-sex.lr", 15), ("adult-sex.fair-lr", 22), ("adult-sex.fair-lr-0.3", 20)]:
        proba = intel[key + ".proba"]
        labels = np.unpackbits(intel[key + ".labels"])[: len(proba)]
        old_labels = np.unpackbits(OLD[key + ".labels"])[: len(proba)]
        head = G.differences(proba[:50], labels[:50], OLD[key + ".proba_head"], old_labels[:50])
        assert head and "probabilities differ" in head[0], key
        assert int((labels != old_labels).sum()) == most, key


@pytest.mark.parametrize("name", ["lr", "fair-lr-tpr", "gp", "fair-gp"])
def test_old_model_files_load_and_predict_the_same(name):
    a = paper_arrays("compas-race", seed=0)
    model = model_from_state(load_state(DATA / "old_models" / name))
    key = f"compas-race.{name}"
    p = model.predict_proba(a.X_test)[:, 1]
    labels = model.predict(a.X_test)
    np.testing.assert_array_equal(labels, np.unpackbits(OLD[key + ".labels"])[: len(labels)])
    np.testing.assert_allclose(p[:50], OLD[key + ".proba_head"], rtol=0, atol=TOL)
    np.testing.assert_allclose(p.sum(), OLD[key + ".proba_sum"][0], rtol=1e-12, atol=TOL)


def test_old_conditional_model_file_loads():
    a = paper_arrays("adult-sex", seed=0)
    model = model_from_state(load_state(DATA / "old_models" / "fair-lr-strata"))
    np.testing.assert_allclose(model.predict_proba(a.X_test[:200])[:, 1], OLD["old.fair-lr-strata.proba"],
                               rtol=0, atol=TOL)
