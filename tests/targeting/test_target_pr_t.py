"""Issue 37, item 2 ("one PR_t"): the TargetSpec is the only holder of PR_t. Beside explicit TPR/TNR targets it
keeps the PR_t the analyst last chose (``chosen_rate``), which the maths, equality, the files and the cache keys
ignore; the Target page's slider, number box and link are drawn from it after every way of setting PR_t."""
from __future__ import annotations

import json
import pickle

import pytest

from fairdash.app.server import state
from fairdash.errors import FairDashError
from fairdash.jsonable import to_jsonable
from fairdash.targeting.target_spec import TargetSpec, make_target_spec

import app_state
from app_pages import address_of, new_app, ok, open_address, pr_t_box

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")
# The TargetSpec keeps the chosen PR_t beside explicit targets, and nothing else sees it
# --------------------------------------------------------------------------------------------------
def test_the_spec_keeps_the_chosen_pr_t_beside_explicit_targets_and_gives_it_back():
    spec = make_target_spec("eo", 0.312)
    assert spec.chosen_rate == 0.312
    explicit = spec.edited(tpr_target=0.9, tnr_target=0.7)
    assert (explicit.target_rate, explicit.preset, explicit.chosen_rate) == (None, None, 0.312)
    assert explicit.edited(tnr_target=0.75).chosen_rate == 0.312  # other edits keep it
    back = explicit.edited(tpr_target=None, tnr_target=None, target_rate=explicit.chosen_rate)
    assert (back.explicit, back.target_rate, back.chosen_rate) == (False, 0.312, 0.312)
    preset = spec.edited(target_rate=None, preset="avg")  # each stratum's own preset keeps it too
    assert (preset.target_rate, preset.chosen_rate) == (None, 0.312)
    assert spec.edited(target_rate=0.4).chosen_rate == 0.4  # a PR_t in force is the one chosen
    assert TargetSpec(target_rate=0.25, preset=None).chosen_rate == 0.25  # built without make_target_spec
    assert explicit.edited(chosen_rate=1.0).chosen_rate is None  # a memory: one outside (0, 1) is dropped
    assert TargetSpec(target_rate=0.0, preset=None).edited(target_rate=0.001).chosen_rate == 0.001  # an old state


def test_the_chosen_pr_t_changes_no_file_no_key_and_no_comparison():
    fresh = make_target_spec("eo", tpr_target=0.9, tnr_target=0.7)
    kept = make_target_spec("eo", 0.312).edited(tpr_target=0.9, tnr_target=0.7)
    assert fresh.chosen_rate is None and kept.chosen_rate == 0.312
    assert kept == fresh and hash(kept) == hash(fresh) and repr(kept) == repr(fresh)
    assert json.dumps(kept.to_dict(), sort_keys=True) == json.dumps(fresh.to_dict(), sort_keys=True)
    assert "chosen_rate" not in kept.to_dict() and "chosen_rate" not in make_target_spec(target_rate=0.3).to_dict()
    assert to_jsonable(kept) == to_jsonable(fresh)  # what the fit cache's keys and the results files hold
    assert TargetSpec.from_dict(kept.to_dict()) == fresh
    with pytest.raises(FairDashError, match="unknown setting"):  # not part of the configuration's format
        TargetSpec.from_dict({**fresh.to_dict(), "chosen_rate": 0.3})
    # the same readout, maths for maths, with or without it
    base, shares = [0.1, 0.3], [0.4, 0.6]
    assert kept.table(base, shares).to_dict() == fresh.table(base, shares).to_dict()
    assert kept.describe() == fresh.describe()


def test_a_spec_pickled_before_the_field_reads_as_one_without_a_chosen_pr_t():
    old = make_target_spec("eo", tpr_target=0.9, tnr_target=0.7)
    object.__delattr__(old, "chosen_rate")  # what an earlier version's pickle holds
    again = pickle.loads(pickle.dumps(old))
    assert again.chosen_rate is None and again == old


# --------------------------------------------------------------------------------------------------
# The Target page: slider, box and link drawn from the spec's PR_t after every way of setting it
# --------------------------------------------------------------------------------------------------
def _assert_shown(at, want: float) -> None:
    """The spec's PR_t is ``want``, and the slider, the number box and the link show it."""
    ok(at)
    assert app_state.pr_t(at) == pytest.approx(want)
    assert app_state.pr_t_slider(at).value == pytest.approx(want)
    assert pr_t_box(at).value == pytest.approx(want)
    assert address_of(at)["pr_t"] == f"{want:.3f}"


@pytest.mark.slow  # (AppTest runs of the dashboard)
def test_slider_box_preset_and_explicit_and_back_all_show_the_specs_pr_t():
    at = new_app()
    at.switch_page("pages/target.py").run()
    _assert_shown(at, app_state.pr_t(at))
    app_state.pr_t_slider(at).set_value(0.301).run()  # slider move
    _assert_shown(at, 0.301)
    app_state.pr_t_slider(at).set_value(0.302).run()
    _assert_shown(at, 0.302)
    pr_t_box(at).set_value(0.25).run()  # box entry: the slider follows the target
    _assert_shown(at, 0.25)
    at.button(key="preset_max").click().run()  # preset
    pmax = app_state.pr_t(at)
    _assert_shown(at, pmax)
    app_state.pr_t_slider(at).set_value(0.333).run()
    at.radio(key="criterion").set_value("eo-targets").run()  # explicit targets: no PR_t in force, one kept
    ok(at)
    spec = app_state.target(at)
    assert (spec.explicit, spec.target_rate, spec.chosen_rate) == (True, None, 0.333)
    assert not at.slider and "pr_t" not in address_of(at)
    at.number_input(key="tnr_target").set_value(0.7).run()
    assert app_state.target(at).chosen_rate == 0.333
    at.radio(key="criterion").set_value("eo").run()  # and back: the spec's PR_t returns
    _assert_shown(at, 0.333)
    at.radio(key="criterion").set_value("eo-targets").run()
    at.radio(key="criterion").set_value("dp").run()
    _assert_shown(at, 0.333)
    assert state.Session(at.session_state).kept.get(state.PR_T_SLIDER) is None  # no kept copy of PR_t


@pytest.mark.slow  # (AppTest runs of the dashboard)
def test_a_box_entry_back_at_an_earlier_pr_t_moves_the_slider_there():
    at = new_app()
    at.switch_page("pages/target.py").run()
    pr_t_box(at).set_value(0.3).run()
    app_state.pr_t_slider(at).set_value(0.305).run()
    pr_t_box(at).set_value(0.3).run()
    _assert_shown(at, 0.3)


@pytest.mark.slow  # (AppTest runs of the dashboard)
def test_a_link_sets_the_pr_t_that_slider_box_and_link_show(one_browser):
    at = new_app()
    at.switch_page("pages/target.py").run()
    app_state.pr_t_slider(at).set_value(0.3).run()
    url = {**address_of(at), "pr_t": "0.412"}  # the address edited at another PR_t
    again = open_address(url)
    again.switch_page("pages/target.py").run()
    _assert_shown(again, 0.412)
    app_state.pr_t_slider(again).set_value(0.413).run()
    _assert_shown(again, 0.413)
