"""Target page: the target positive rate PR_t (slider, number box, presets), the criterion, an optional
legitimate factor (conditional parity), and live readouts of what the target implies on the training
split: base rates, t_s with a sentence each, transition probabilities and Theorem 2's ceiling.

The slider, number box, presets and readouts live in one ``st.fragment``: a slider move reruns only
them, and the work per move is one tiny table (``fairdash.rates.target_table``) and one figure."""
from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from fairdash import plots, ui
from fairdash.errors import FairDashError
from fairdash.rates import describe_t

ss = st.session_state
CEILING_LABEL = "Accuracy ceiling (Theorem 2, training split)"
PR_T_MIN, PR_T_MAX = 0.001, 0.999  # the slider never reaches 0 or 1 (no target there: one class for everyone)

st.title("Target")
st.caption("Instead of a fairness threshold, choose the positive rate you want every group to have. "
           "The readouts show what that choice implies before anything is trained.")

ui.ensure_state()
task = ui.current_task()
try:
    rates = ui.task_rates()
except FairDashError as e:
    st.error(str(e), icon=":material/warning:")
    st.stop()
presets = {k: round(float(v), 3) for k, v in rates.presets.items()}
names = task.group_names

# --------------------------------------------------------------------------------------------------
# Criterion, legitimate factor, delta (a change here reruns the page)
# --------------------------------------------------------------------------------------------------
ui.restore("criterion", ss.get("fd_criterion", "dp"))
st.radio("Fairness criterion", list(ui.CRITERIA), format_func=ui.CRITERIA.get, key="criterion",
         on_change=lambda: ss.update(fd_criterion=ss["criterion"]))
criterion = ss["fd_criterion"] = ss["criterion"]
if criterion == "eo":
    st.caption("Trained exactly as for demographic parity with one PR_t; judged by the groups' true positive "
               "rates on the ordinary test set. When PR_t is at least both base rates, every positive keeps its "
               "label, which is why the TPRs move together.")
elif criterion == "eo-targets":
    st.caption("Set the true positive and true negative rates the target labels should have in every group.")

c_left, c_right = st.columns(2)
with c_left:
    if criterion == "dp":
        table_df = ss["fd_table"]
        candidates = ["(none)"] + [c for c in task.X.columns.tolist() + [c for c in table_df.columns
                                                                        if c not in task.X.columns]
                                   if c not in (task.spec.s_column, task.spec.y_column)
                                   and 1 < table_df[c].nunique() <= 30]
        candidates = list(dict.fromkeys(candidates))
        current = task.spec.strata_column or "(none)"
        ui.restore("strata_column", current if current in candidates else "(none)")
        strata = st.selectbox("Legitimate factor (conditional parity)", candidates, key="strata_column",
                              help="Require equal positive rates only within each value of this column (for "
                                   "example the education level): P(ybar=1 | l, s) is the same for every s.")
        if (strata if strata != "(none)" else None) != task.spec.strata_column:
            with ui.guard():
                ui.set_strata(None if strata == "(none)" else strata)
                st.rerun()
    else:
        if task.spec.strata_column:
            with ui.guard():
                ui.set_strata(None)
                st.rerun()
with c_right:
    with st.expander("Advanced: keep-rate delta"):
        ui.restore("delta", float(ss.get("fd_delta", 1.0)))
        st.number_input("Keep-rate delta", min_value=0.01, max_value=1.0, step=0.01, key="delta",
                        on_change=lambda: ss.update(fd_delta=float(ss["delta"])),
                        help="1 (the paper's choice) keeps every label the target does not need to change. "
                             "Smaller values also flip some labels the other way; too small a value cannot "
                             "reach the target and is refused.")
        ss["fd_delta"] = float(ss["delta"])

task = ss["fd_task"]
rates = ui.task_rates()
conditional = criterion == "dp" and task.spec.strata_column is not None


# --------------------------------------------------------------------------------------------------
# The live part
# --------------------------------------------------------------------------------------------------
def _box_key() -> str:
    return f"pr_t_box_{ss.get('fd_pr_t_box_v', 0)}"


def _renew_box() -> None:
    """The number box is drawn afresh (a new widget showing fd_pr_t) instead of having its state
    written: a written widget state is stale in the browser's next request, and Streamlit would take
    that stale value for a user edit."""
    ss["fd_pr_t_box_v"] = ss.get("fd_pr_t_box_v", 0) + 1


def _set_pr_t(value: float) -> None:
    """A preset: PR_t, the slider and the number box take the value."""
    v = round(float(value), 3)
    ss["fd_pr_t"] = ss["pr_t_slider"] = v
    _renew_box()


# The slider's callback writes no widget state at all, so key presses that arrive while a rerun is in
# flight are never overwritten by a value the rerun sends back.
def _from_slider():
    ss["fd_pr_t"] = round(float(ss["pr_t_slider"]), 3)
    _renew_box()


def _from_input(key: str):
    # Only the box on screen counts: a box from an earlier run (its value reaching the server after
    # the slider moved on) is not the user's edit and must not pull the slider back.
    if key != _box_key():
        return
    v = ss.get(key)
    if v is None or round(float(v), 3) == ss.get("fd_pr_t"):
        return
    ss["fd_pr_t"] = ss["pr_t_slider"] = round(float(v), 3)


def _rates_table(tb) -> pd.DataFrame:
    g = range(tb.n_groups)
    return pd.DataFrame({
        "group": [f"s={j}: {names[j]}" for j in g],
        "share": tb.group_shares, "base rate PR_b": tb.base_rates, "target P(ybar=1)": tb.target_rates,
        "P(ybar=1 | y=1)": tb.p_ybar1_given_y[:, 1], "P(ybar=1 | y=0)": tb.p_ybar1_given_y[:, 0],
        "P(y=1 | ybar=1)": tb.d[:, 1], "P(y=1 | ybar=0)": tb.d[:, 0],
        "t_s": [float(t) for t in tb.t],
    })


def _readouts(out: dict, tb, marked: float | None) -> None:
    """The readout ``out`` (``rates_readout``'s dict) with its table ``tb``; ``marked`` is the PR_t the
    ceiling curve marks (``None`` where the target is not one PR_t for every group)."""
    shown = tb.n_groups if tb.n_groups <= 4 else 0  # with many groups, t_s is read from the table below
    with st.container(key="ceiling_readout"):
        cols = st.columns([2] + [1] * max(shown, 2))
        cols[0].metric(CEILING_LABEL, f"{tb.accuracy_ceiling:.4f}",
                       help="No classifier with the target's positive rates can be more accurate than this on the "
                            "training split (Theorem 2: 1 - sum_s P(s) |target rate_s - PR_b^s|).")
        for j in range(shown):
            t = float(tb.t[j])
            cols[1 + j].metric(f"t_{j}", "∞" if t == float("inf") else f"{t:.4f}",
                               help=f"Theorem 1's t_s for group {j} ({names[j]}).")
    for j in range(tb.n_groups):
        t = float(tb.t[j])
        st.markdown("- " + describe_t(t if t != float("inf") else None, f"s={j} ({names[j]})", out["flips"][str(j)]))
    st.dataframe(_rates_table(tb), key="transition_table", hide_index=True,
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in _rates_table(tb).columns if c != "group"})
    st.caption("Rates of the training split (seed 0, 80%), the same numbers as `python -m fairdash rates`. "
               "P(ybar=1 | y) is how likely a row's target label is positive given its observed label; "
               "P(y=1 | ybar) is the reverse, which the fair likelihood uses.")
    st.plotly_chart(plots.ceiling_curve_figure(rates.base_rates, rates.group_shares, marked, names),
                    key="ceiling_curve", config={"displayModeBar": False})
    if marked is None:
        st.caption("The curve is the ceiling when every group gets the same PR_t. Explicit TPR/TNR targets give each "
                    "group its own rate (the table's target column), so they are not a point on the curve; their "
                    f"ceiling is the number above ({tb.accuracy_ceiling:.4f}).")


def _conditional_readouts(out: dict) -> None:
    with st.container(key="ceiling_readout"):
        st.metric(CEILING_LABEL, f"{out['strata_accuracy_bound']:.4f}",
                  help="Theorem 2 in every stratum at its own target, weighted by the stratum's share of the "
                       "training rows.")
    rows = []
    for stratum, sd in out["strata"].items():
        for j in range(len(names)):
            k = str(j)
            rows.append({"stratum": stratum, "group": f"s={j}: {names[j]}", "rows": sd["rows"][k],
                         "base rate": sd["base_rates"][k], "target P(ybar=1)": sd["target_rates"][k],
                         "t_s": sd["t"][k], "P(ybar=1 | y=1)": sd["transition"][k]["p_ybar1_given_y1"],
                         "P(ybar=1 | y=0)": sd["transition"][k]["p_ybar1_given_y0"],
                         "ceiling in stratum": sd["accuracy_bound"]})
    st.dataframe(pd.DataFrame(rows), key="strata_table", hide_index=True)
    st.caption("Per stratum of the training split: the target holds within each stratum, so each row's target "
               "label comes from its own (stratum, group) cell.")
    if out["strata_warnings"]:
        with st.expander(f"{len(out['strata_warnings'])} warning(s) about small or one-sided cells"):
            for w in out["strata_warnings"]:
                st.warning(w)


def _spec():
    """The session's target, or the reason it is not valid (then nothing below is drawn)."""
    try:
        return ui.target_spec()
    except FairDashError as e:
        st.error(str(e), icon=":material/warning:")
        st.stop()


def _show(spec) -> None:
    """Every readout of ``spec``, or the reason it is not a valid target."""
    try:
        out = ui.readout(spec)
        tb = ui.current_table(spec)
    except FairDashError as e:
        st.error(str(e), icon=":material/warning:")
        return
    st.markdown(f"**Target:** {out['target_text']}")
    if spec.conditional:
        _conditional_readouts(out)
        return
    _readouts(out, tb, None if spec.explicit else out["target_rate"])


@st.fragment
def live_target() -> None:
    t0 = time.perf_counter()
    try:
        _live_target()
    finally:
        # FairDash's own server-side work for this readout (widgets, table, figure), for benchmarks/
        ms = (time.perf_counter() - t0) * 1000.0
        ss["fd_readout_ms"] = ms
        ui.sidebar_target()
        with st.container(key="readout_timing"):
            st.caption(f"Readouts computed in {ms:.1f} ms on the server.")


def _live_target() -> None:
    if criterion == "eo-targets":
        ui.restore("tpr_target", float(ss.get("fd_tpr_target", 1.0)))
        ui.restore("tnr_target", float(ss.get("fd_tnr_target", 0.8)))
        c1, c2 = st.columns(2)
        c1.number_input("Target true positive rate TPR_t", 0.0, 1.0, step=0.01, key="tpr_target",
                        on_change=lambda: ss.update(fd_tpr_target=float(ss["tpr_target"])),
                        help="The share of each group's true positives kept positive in the target labels. "
                             "1 (the default) keeps every positive, so both groups' TPRs move together; "
                             "lower TNR_t to add positives (see benchmarks/README.md, COMPAS).")
        c2.number_input("Target true negative rate TNR_t", 0.0, 1.0, step=0.01, key="tnr_target",
                        on_change=lambda: ss.update(fd_tnr_target=float(ss["tnr_target"])))
        ss["fd_tpr_target"], ss["fd_tnr_target"] = float(ss["tpr_target"]), float(ss["tnr_target"])
        st.caption("TPR_t + TNR_t must be more than 1: otherwise the target labels no longer follow the observed ones.")
        _show(_spec())
        return

    if conditional:
        ui.restore("strata_rates", ss.get("fd_strata_mode", "own"))
        mode = st.radio("Target in each stratum", list(ui.STRATA_MODES), key="strata_rates", horizontal=True,
                        format_func=ui.STRATA_MODES.get,
                        on_change=lambda: ss.update(fd_strata_mode=ss["strata_rates"]))
        ss["fd_strata_mode"] = mode
        if mode == "own":
            st.caption("Each stratum aims at the average of its own groups' base rates, so the PR_t slider does not "
                       "apply here; choose \"The slider's PR_t in every stratum\" to set one rate for all strata.")
            _show(_spec())
            return

    pr_t = min(max(float(ss.get("fd_pr_t", presets["avg"])), PR_T_MIN), PR_T_MAX)
    ss["fd_pr_t"] = pr_t
    ui.restore("pr_t_slider", pr_t)
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    c1.slider("Target positive rate PR_t", PR_T_MIN, PR_T_MAX, step=0.001, format="%.3f", key="pr_t_slider",
              on_change=_from_slider,
              help="The share of every group the fair model should label positive.")
    with c2.container(key="pr_t_input"):  # stable key for browser tests; the widget key changes
        st.number_input("PR_t (exact value)", PR_T_MIN, PR_T_MAX, value=pr_t, step=0.001, format="%.3f",
                        key=_box_key(), on_change=_from_input, args=(_box_key(),))
    st.caption(f"PR_t lies strictly between 0 and 1 ({PR_T_MIN:.3f} to {PR_T_MAX:.3f} here): at 0 or 1 every "
               "prediction would be the same class, so there would be nothing to learn.")
    b = st.columns(4)
    b[0].button("Min preset", key="preset_min", on_click=_set_pr_t, args=(presets["min"],),
                help=f"The lower base rate: {presets['min']:.3f}", width="stretch")
    b[1].button("Avg preset", key="preset_avg", on_click=_set_pr_t, args=(presets["avg"],),
                help=f"The mean of the groups' base rates (the paper's default): {presets['avg']:.3f}",
                width="stretch")
    b[2].button("Max preset", key="preset_max", on_click=_set_pr_t, args=(presets["max"],),
                help=f"The higher base rate: {presets['max']:.3f}", width="stretch")
    b[3].caption(f"min {presets['min']:.3f} · avg {presets['avg']:.3f} · max {presets['max']:.3f}")
    _show(_spec())


live_target()
st.page_link("pages/train.py", label="Next: train a fair model at this target", icon=":material/model_training:")
