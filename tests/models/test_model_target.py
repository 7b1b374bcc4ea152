"""Issue 21: the TargetSpec flows into the models as one value; the registry says what each model takes from
it; a fit leaves the global random state and the warnings filters as they were."""
import random
import subprocess
import sys

import numpy as np
import pytest
import torch
from sklearn.base import clone

from fairdash.errors import FairDashError
from fairdash.models.core.likelihood import target_params_from_state
from fairdash.models.fair_gp import GP, FairGP
from fairdash.models.fair_lr import LR, FairLR
from fairdash.models.registry import MODELS, make_model
from fairdash.targeting.target_spec import make_target_spec


def synthetic(n=400, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3))
    X[:, 0] += 0.8 * s
    y = (rng.random(n) < 1 / (1 + np.exp(-(1.5 * X[:, 0] - 0.5)))).astype(int)
    return X, y, s


def test_the_target_is_one_frozen_parameter_that_clone_keeps():
    spec = make_target_spec("eo", tpr_target=0.9, tnr_target=0.8)
    m = FairLR(target=spec, C=0.5)
    assert m.get_params()["target"] is spec and clone(m).get_params()["target"] == spec
    for gone in ("criterion", "tpr_target", "tnr_target", "delta", "stratum_target_rates"):
        assert gone not in FairLR().get_params() and gone not in FairGP().get_params()
    for plain in (LR(), GP()):  # the plain models have only their own parameters
        assert not {"target", "target_rate"} & set(plain.get_params())


def test_the_target_is_said_one_way_only():
    """``target`` only (issue 37 item 4: no ``target_rate`` alias); keyword-only, as scikit-learn's."""
    X, y, s = synthetic()
    a = FairLR(target=make_target_spec(target_rate=0.3)).fit(X, y, s)
    b = FairLR(target=make_target_spec(target_rate=0.3)).fit(X, y, s)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert FairLR(target=make_target_spec(target_rate="max")).target_spec() == make_target_spec(target_rate="max")
    assert FairLR().target_spec() == make_target_spec()  # None: demographic parity at the avg preset
    for cls in (FairLR, FairGP):
        with pytest.raises(TypeError):
            cls(target_rate=0.3)
        with pytest.raises(TypeError):
            cls(make_target_spec())
    with pytest.raises(FairDashError, match="'target' parameter of FairLR must be a TargetSpec"):
        FairLR(target={"criterion": "dp"}).fit(X, y, s)


def test_an_old_files_target_rate_becomes_its_target():
    assert target_params_from_state({"target": None, "target_rate": 0.3, "C": 1.0}, FairLR) == {
        "target": make_target_spec(target_rate=0.3), "C": 1.0}
    spec = make_target_spec("eo", 0.3)
    assert target_params_from_state({"target": spec.to_dict(), "target_rate": None}, FairLR) == {"target": spec}


def test_format1_parameters_become_the_spec_they_made():
    old = {"target_rate": 0.3, "criterion": "dp", "tpr_target": None, "tnr_target": None, "delta": 0.9,
           "stratum_target_rates": {"0": 0.25, "1": 0.4}, "C": 1.0}
    params = target_params_from_state(old, FairLR)
    assert params["target"] == make_target_spec("dp", 0.3, 0.9, stratum_target_rates={0: 0.25, 1: 0.4})
    assert "target_rate" not in params and params["C"] == 1.0 and "criterion" not in params
    assert target_params_from_state(old, LR) == {"C": 1.0}  # they did nothing for the plain model


def test_make_model_gives_each_model_what_its_info_declares():
    spec = make_target_spec("eo", 0.4)
    for name, info in MODELS.items():
        params = info.load_class()().get_params()
        assert set(info.shared) <= set(params), name
        assert not {"random_state", "device"} - set(info.shared) & set(params), name  # every shared setting declared
        m = make_model(name, spec, seed=3, device="cpu")
        if info.target_param == "target":
            assert m.target is spec
        elif info.target_param == "criterion":
            assert m.criterion == "eo"
        else:
            assert not {"target", "criterion"} & set(params)
        assert "random_state" not in params or m.random_state == 3
    with pytest.raises(FairDashError, match="no setting 'C_typo'"):
        make_model("lr", C_typo=1)
    with pytest.raises(FairDashError, match="must be a TargetSpec"):
        make_model("agarwal", {"criterion": "eo"})
    with pytest.raises(FairDashError, match="give the target once"):
        make_model("agarwal", spec, criterion="dp")


def test_a_fit_leaves_the_global_random_state_alone():
    X, y, s = synthetic()
    random.seed(5), np.random.seed(5), torch.manual_seed(5)
    before = (random.getstate(), np.random.get_state()[1].copy(), torch.get_rng_state().clone())
    FairLR(optimizer="radam", max_iter=2, random_state=1).fit(X, y, s)
    FairGP(num_inducing=8, max_epochs=1, max_seconds=None, random_state=1).fit(X, y, s)
    after = (random.getstate(), np.random.get_state()[1], torch.get_rng_state())
    assert before[0] == after[0]
    np.testing.assert_array_equal(before[1], after[1])
    assert torch.equal(before[2], after[2])
    # and a fit does not depend on it
    torch.manual_seed(123)
    p1 = FairGP(num_inducing=8, max_epochs=1, max_seconds=None, random_state=1).fit(X, y, s).predict_proba(X)
    torch.manual_seed(456)
    p2 = FairGP(num_inducing=8, max_epochs=1, max_seconds=None, random_state=1).fit(X, y, s).predict_proba(X)
    np.testing.assert_array_equal(p1, p2)


@pytest.mark.slow
def test_importing_fairdash_installs_no_warnings_filter():
    code = ("import warnings, numpy, scipy.special, torch, sklearn, gpytorch; before = list(warnings.filters); "
            "import fairdash.device, fairdash.work.fit_cache, fairdash.progress, fairdash.models.fair_lr, "
            "fairdash.models.fair_gp; "
            "assert warnings.filters == before, [f for f in warnings.filters if f not in before]")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_a_read_only_matrix_trains_without_torch_warning():
    """torch warns about a read-only array once per process, so this runs in a fresh one."""
    code = """
import warnings
import numpy as np
from fairdash.models.fair_gp import FairGP
from fairdash.models.fair_lr import FairLR
rng = np.random.default_rng(0)
X, s = rng.normal(size=(300, 3)), rng.integers(0, 2, 300)
y = (X[:, 0] + s > 0.5).astype(int)
X.flags.writeable = False
import gpytorch  # its own import warns (DeprecationWarning of torch.jit.script): not what is tested
warnings.simplefilter("error", UserWarning)
FairLR().fit(X, y, s).predict(X)
FairGP(num_inducing=8, max_epochs=1, max_seconds=None).fit(X, y, s).predict(X)
"""
    subprocess.run([sys.executable, "-c", code], check=True)


def test_fair_gp_file_holds_the_predictors_full_state_dict(tmp_path):
    from fairdash.models.core.state import STATE_FORMAT, load_state, model_from_state, save_state
    from fairdash.models.fair_gp import PREDICTOR_PREFIX

    X, y, s = synthetic()
    m = FairGP(target=make_target_spec("eo", 0.4), num_inducing=8, max_epochs=2, max_seconds=None).fit(X, y, s)
    state = m.get_state()
    assert state["meta"]["format"] == STATE_FORMAT
    keys = {k[len(PREDICTOR_PREFIX):] for k in state["arrays"] if k.startswith(PREDICTOR_PREFIX)}
    assert keys == set(m._predictor.state_dict())  # every buffer and parameter, restored by load_state_dict
    save_state(tmp_path / "gp", state)
    back = model_from_state(load_state(tmp_path / "gp"))
    assert back.target == make_target_spec("eo", 0.4)
    np.testing.assert_array_equal(back.predict_proba(X), m.predict_proba(X))
