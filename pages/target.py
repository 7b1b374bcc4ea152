"""Target page: the target positive rate PR_t (slider, number box, presets), the criterion, an optional
legitimate factor (conditional parity), and live readouts of what the target implies on the training
split: base rates, t_s with a sentence each, transition probabilities and Theorem 2's ceiling.

The slider, number box, presets and readouts live in one ``st.fragment``: a slider move reruns only
them, and the work per move is one tiny table (``fairdash.analysis.rates.target_table``) and one figure."""
from __future__ import annotations

import time

import streamlit as st

from fairdash.app import target_state, views
from fairdash.app.server import session, state
from fairdash.app.ui import navigation, text, workspace
from fairdash.errors import FairDashError

ss = state.current()
PR_T_MIN, PR_T_MAX = target_state.PR_T_MIN, target_state.PR_T_MAX

st.title("Target")
st.caption("Instead of a fairness threshold, choose the positive rate you want every group to have. "
           "The readouts show what that choice implies before anything is trained.")

workspace.ensure_state()
task = workspace.current_task()
try:
    rates = workspace.task_rates()
except FairDashError as e:
    st.error(text.literal(e), icon=":material/warning:")
    text.end_page()
presets = target_state.presets(rates)
names = task.group_names

# --------------------------------------------------------------------------------------------------
# Criterion, legitimate factor, delta (a change here reruns the page)
# --------------------------------------------------------------------------------------------------
navigation.restore(state.CRITERION, target_state.mode_of(target_state.current_or_default()))
st.radio("Fairness criterion", list(target_state.MODES), format_func=target_state.MODES.get, key=state.CRITERION,
         on_change=lambda: target_state.set_mode(ss.criterion))
mode = ss.criterion  # a criterion, or opportunity by explicit targets
if mode in target_state.MODE_NOTES:
    st.caption(target_state.MODE_NOTES[mode])

c_left, c_right = st.columns(2)
with c_left:
    if target_state.mode_criterion(mode).supports_strata:
        candidates = target_state.strata_choices(ss.table, task)
        current = task.spec.strata_column or "(none)"
        navigation.restore(state.STRATA_COLUMN, current if current in candidates else "(none)")
        strata = st.selectbox("Legitimate factor (conditional parity)", candidates, key=state.STRATA_COLUMN,
                              help="Require equal positive rates only within each value of this column (for "
                                   "example the education level): P(ybar=1 | l, s) is the same for every s.")
        if (strata if strata != "(none)" else None) != task.spec.strata_column:
            with text.guard():
                workspace.set_strata(None if strata == "(none)" else strata)
                st.rerun()
    else:
        if task.spec.strata_column:
            with text.guard():
                workspace.set_strata(None)
                st.rerun()
with c_right:
    if mode != target_state.EXPLICIT_MODE:  # explicit TPR/TNR targets set every transition probability: no delta
        with st.expander("Advanced: keep-rate delta"):
            session.remember(target_state.DELTA_WIDGET, float(target_state.current_or_default().delta))
            st.number_input("Keep-rate delta", min_value=0.01, max_value=1.0, step=0.01, key=target_state.DELTA_WIDGET,
                            on_change=lambda: target_state.edit(delta=float(ss.delta)),
                            help="1 (the paper's choice) keeps every label the target does not need to change. "
                                 "Smaller values also flip some labels the other way; too small a value cannot "
                                 "reach the target and is refused.")

task = ss.task
views.target_changes()
rates = workspace.task_rates()
conditional = target_state.mode_criterion(mode).supports_strata and task.spec.strata_column is not None
views.s_predictability_note(task)  # what a model that does not see s can do (once per task)


# --------------------------------------------------------------------------------------------------
# The live part
# --------------------------------------------------------------------------------------------------
def _box_key() -> str:
    return target_state.pr_t_box_key()  # drawn from the target's PR_t: a new PR_t is a new box showing it


# No callback writes a widget's state: the callbacks edit the target, and the slider and the box are drawn from it
# (target_state.slider_from_target, pr_t_box_key), so key presses that arrive while a rerun is in flight are never
# overwritten by a value the rerun sends back.
def _from_slider():
    box = ss.widget(_box_key())
    if box is not None and target_state.round_rate(box) != _pr_t():
        return  # the box was typed in during this same run: the typed value wins (_from_input sets it)
    target_state.set_rate(ss.pr_t_slider)


def _from_input(key: str):
    # Only the box on screen counts: a box from an earlier run (its value reaching the server after
    # the slider moved on) is not the user's edit and must not pull the slider back.
    if key != _box_key():
        return
    v = ss.widget(key)
    if v is None or target_state.round_rate(v) == _pr_t():
        return
    target_state.set_rate(v)


def _pr_t() -> float | None:
    """The target's PR_t (``None`` where it has none)."""
    rate = target_state.current_or_default().target_rate
    return None if rate is None else target_state.round_rate(rate)


def _readouts() -> None:
    """The readouts of the session's target, or the reason it is not valid (then none is drawn; inside the fragment,
    so it returns rather than ending the page)."""
    try:
        spec = workspace.target_spec()
    except FairDashError as e:
        st.error(text.literal(e), icon=":material/warning:")
        return
    views.target_readouts(spec, rates, names)


@st.fragment
def live_target() -> None:
    workspace.ensure_state()  # a slider move follows the session too: forgotten in another tab, the page starts afresh
    t0 = time.perf_counter()
    try:
        _live_target()
    finally:
        # FairDash's own server-side work for this readout (widgets, table, figure), for benchmarks/
        ms = (time.perf_counter() - t0) * 1000.0
        ss.readout_ms = ms
        views.sidebar_target()
        with st.container(key="readout_timing"):
            st.caption(f"Readouts computed in {ms:.1f} ms on the server.")


def _explicit() -> None:
    target_state.set_explicit(ss.tpr_target, ss.tnr_target)


def _live_target() -> None:
    if mode == target_state.EXPLICIT_MODE:
        tpr_t, tnr_t = target_state.explicit_targets()
        session.remember(target_state.TPR_WIDGET, tpr_t)
        session.remember(target_state.TNR_WIDGET, tnr_t)
        c1, c2 = st.columns(2)
        c1.number_input("Target true positive rate TPR_t", 0.0, 1.0, step=0.01, key=target_state.TPR_WIDGET,
                        on_change=_explicit,
                        help="The share of each group's true positives kept positive in the target labels. "
                             "1 (the default) keeps every positive, so both groups' TPRs move together; "
                             "lower TNR_t to add positives (see benchmarks/results/2026-11-26-compas.md).")
        c2.number_input("Target true negative rate TNR_t", 0.0, 1.0, step=0.01, key=target_state.TNR_WIDGET,
                        on_change=_explicit)
        st.caption("TPR_t + TNR_t must be more than 1: otherwise the target labels no longer follow the observed ones.")
        _readouts()
        return

    if conditional:
        navigation.restore(state.STRATA_RATES, target_state.strata_mode_of(target_state.current_or_default()))
        strata_mode = st.radio("Target in each stratum", list(target_state.STRATA_MODES), key=state.STRATA_RATES,
                               horizontal=True, format_func=target_state.STRATA_MODES.get,
                               on_change=lambda: target_state.set_strata_mode(ss.strata_rates))
        if strata_mode == "own":
            st.caption("Each stratum aims at the average of its own groups' base rates, so the PR_t slider does not "
                       "apply here; choose \"The slider's PR_t in every stratum\" to set one rate for all strata.")
            _readouts()
            return

    pr_t = _pr_t()
    if pr_t is None or pr_t != target_state.clip_rate(pr_t):  # none yet, or an old state at 0 or 1
        pr_t = target_state.clip_rate(presets["avg"] if pr_t is None else pr_t)
        target_state.set_rate(pr_t)
    target_state.slider_from_target()
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    c1.slider("Target positive rate PR_t", PR_T_MIN, PR_T_MAX, step=0.001, format="%.3f", key=state.PR_T_SLIDER,
              on_change=_from_slider,
              help="The share of every group the fair model should label positive.")
    with c2.container(key="pr_t_input"):  # stable key for browser tests; the widget key changes
        st.number_input("PR_t (exact value)", PR_T_MIN, PR_T_MAX, value=pr_t, step=0.001, format="%.3f",
                        key=_box_key(), on_change=_from_input, args=(_box_key(),))
    st.caption(f"PR_t lies strictly between 0 and 1 ({PR_T_MIN:.3f} to {PR_T_MAX:.3f} here): at 0 or 1 every "
               "prediction would be the same class, so there would be nothing to learn.")
    b = st.columns(4)
    b[0].button("Min preset", key="preset_min", on_click=target_state.set_rate, args=(presets["min"],),
                help=f"The lower base rate: {presets['min']:.3f}", width="stretch")
    b[1].button("Avg preset", key="preset_avg", on_click=target_state.set_rate, args=(presets["avg"],),
                help=f"The mean of the groups' base rates (the paper's default): {presets['avg']:.3f}",
                width="stretch")
    b[2].button("Max preset", key="preset_max", on_click=target_state.set_rate, args=(presets["max"],),
                help=f"The higher base rate: {presets['max']:.3f}", width="stretch")
    b[3].caption(f"min {presets['min']:.3f} · avg {presets['avg']:.3f} · max {presets['max']:.3f}")
    _readouts()


live_target()
st.page_link("pages/train.py", label="Next: train a fair model at this target", icon=":material/model_training:")
