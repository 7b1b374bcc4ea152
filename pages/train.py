"""Train page: choose FairLR / FairGP and baselines (each labelled with the criterion it serves),
repeats, the current target or a sweep over a grid of targets (the what-if mode), advanced settings.
Training runs in the background (``fairdash.app.jobs``), so it goes on while the analyst uses other pages; the
sidebar shows its progress and a Cancel button on every page. Each finished run is added to the
session's run history (the Compare page shows any set of them); fitted models go into the fit cache, so
a repeated request is instant. The page's settings are kept for the session."""
from __future__ import annotations

import os

import numpy as np
import streamlit as st

from fairdash.app import compare, jobs, target_state, ui, views
from fairdash.target.decision import CHOOSABLE, RULES, choosable
from fairdash.errors import FairDashError
from fairdash.target.target_spec import criterion_info
from fairdash.models.registry import MODELS
from fairdash.files.run_spec import RunSpec

ss = st.session_state

st.title("Train")
ui.ensure_state()
task = ui.current_task()
rates = ui.task_rates()
try:
    target = ui.target_spec()
    target_error = None
except FairDashError as e:
    target, target_error = None, str(e)
criterion = (target or target_state.current_or_default()).criterion

st.markdown(f"**Device:** {ui.device_text()} · **Target:** "
            + (ui.literal(target.describe(target.rate_for(rates.base_rates))) if target is not None else "not valid"))
if target_error:
    st.error("The target set on the Target page is not valid: " + ui.literal(target_error) + " Change it there before "
             "training.", icon=":material/warning:")
    st.page_link("pages/target.py", label="Go to Target", icon=":material/tune:")


def _serves(info) -> str:
    if not info.criteria:
        return "plain model (reference for every criterion)"
    return "serves " + " and ".join(criterion_info(c).words for c in info.criteria)


available, unavailable = [], []
for name, info in MODELS.items():
    ok, why = ui.model_available(name)
    (available if ok else unavailable).append(name if ok else f"{info.label} ({why})")

ui.remember("include_other_criteria", False)
include_other = st.checkbox("Also offer models made for another criterion (they are labelled as such)",
                            key="include_other_criteria")
offered = [m for m in available if include_other or MODELS[m].serves(criterion)]
hidden = [MODELS[m].label for m in available if m not in offered]
ui.remember("train_models", [m for m in ("fair-lr", "lr") if m in offered])
ss["train_models"] = [m for m in ss["train_models"] if m in offered]
st.multiselect("Models to train", offered, key="train_models",
               format_func=lambda m: f"{MODELS[m].label}: {_serves(MODELS[m])}"
               + ("" if MODELS[m].serves(criterion) else f" (NOT {criterion_info(criterion).words})"),
               help="FairLR and FairGP are the paper's method; the others are the paper's baselines.")
chosen = list(ss["train_models"])
notes = []
if hidden:
    notes.append(f"Not offered for {criterion_info(criterion).words}: {', '.join(hidden)} (made for another criterion).")
if unavailable:
    notes.append(f"Not available yet: {', '.join(unavailable)}.")
if notes:
    st.caption(" ".join(notes))
with st.expander("What each model is"):
    for m in available:
        info = MODELS[m]
        st.markdown(f"- **{info.label}** (`{m}`, {_serves(info)}): {info.description}")

c1, c2 = st.columns(2)
with c1:
    ui.remember("repeats", 1)
    repeats = st.number_input("Repeats (random splits; the paper uses 10)", min_value=1, max_value=20, step=1,
                              key="repeats")
sweepable = target is not None and not target.explicit and not (target.conditional and target.target_rate is None)
with c2:
    ui.remember("train_mode", "single")
    mode = st.radio("What to train", ["single", "sweep"], key="train_mode", horizontal=True,
                    format_func={"single": "The current target", "sweep": "A sweep over targets (what-if)"}.get,
                    disabled=not sweepable,
                    help=None if sweepable else "A sweep moves one PR_t; this target is not one PR_t.")
if not sweepable:
    mode = "single"

strata = task.spec.strata_column and criterion_info(criterion).supports_strata
rules = list(choosable(bool(strata)))  # the rules that combine with a legitimate factor (decision.py)
decision = target_state.current_or_default().decision
ui.restore("decision", decision if decision in rules else "threshold")
st.radio("How scores become decisions", rules, key="decision", horizontal=True,
         format_func=lambda r: RULES[r].words, on_change=lambda: target_state.edit(decision=ss["decision"]),
         help="The target sets the rate of the target labels; a model that does not see s, cut at 1/2, can land far "
              "from it. " + " ".join(f"{r}: {RULES[r].explanation}" for r in CHOOSABLE))
if ss["decision"] != decision and target is not None:  # the widget kept another rule than the target's
    target_state.edit(decision=ss["decision"])
    target = ui.target_spec()
st.caption(RULES[ss["decision"]].explanation + ("" if len(rules) == len(CHOOSABLE) else
           " (One cut per group is not offered with a legitimate factor: it would need one per stratum and group.)"))

grid: list = [None]
if mode == "sweep":
    s1, s2, s3 = st.columns(3)
    ui.remember("sweep_from", round(float(rates.presets["min"]), 3))
    ui.remember("sweep_to", round(float(rates.presets["max"]), 3))
    ui.remember("sweep_points", 5)
    lo = s1.number_input("Sweep from PR_t", target_state.PR_T_MIN, target_state.PR_T_MAX, step=0.01, format="%.3f", key="sweep_from")
    hi = s2.number_input("Sweep to PR_t", target_state.PR_T_MIN, target_state.PR_T_MAX, step=0.01, format="%.3f", key="sweep_to")
    n = s3.number_input("Number of targets", 2, 25, step=1, key="sweep_points")
    grid = sorted({round(float(t), 3) for t in np.linspace(min(lo, hi), max(lo, hi), int(n))})
    st.caption("Targets: " + ", ".join(f"{t:.3f}" for t in grid)
               + ". The Compare page's slider scrubs through them with no waiting.")

with st.expander("Advanced settings"):
    ui.remember("parallel_jobs", 1)
    n_jobs = st.number_input("Parallel jobs", 1, max(1, os.cpu_count() or 1), step=1, key="parallel_jobs",
                             help="Independent fits (model x target x repeat) run in parallel worker processes.")
    st.caption(f"Keep-rate delta: {target.delta if target is not None else 1.0:.2f} (set on the Target page).")
    views.s_as_feature_option(task)
    model_opts = views.model_option_inputs(chosen)

n_fair = sum(MODELS[m].uses_target_rate or ss["decision"] != "threshold" for m in chosen)
n_runs = int(repeats) * (n_fair * len(grid) + (len(chosen) - n_fair))
st.caption(f"{n_runs} fit(s). Fits already made with the same data and settings come from the cache at once.")

pending = ss.get("fd_pending")
job = jobs.current()
why_not = ("a training is running (its progress and a Cancel button are in the sidebar)" if job is not None
           else "a new upload waits for you to confirm its columns on the Data page" if pending is not None
           else "choose at least one model" if not chosen else "the target is not valid" if target is None else None)
if why_not:
    st.caption(f"Train is unavailable: {why_not}.")
leak_columns = views.leak_warnings(task)  # leaks of y, and of s unless the run sees s on purpose
if st.button("Train", key="train_button", type="primary", disabled=why_not is not None):
    from fairdash.work.runs import run_key

    spec = RunSpec(data=ui.data_source(), task=task.spec, target=target, models=tuple(chosen),
                   target_rates=tuple(grid), seeds=tuple(range(int(repeats))), options=model_opts,
                   group_names=task.group_names)
    last = ss.get("fd_run")
    if last is not None and last.key == run_key(task, spec):
        st.success("These results are already here (same data and settings).")
    else:
        job = None
        with ui.guard("Training was not started: "):  # (the server's memory guard)
            job = jobs.start_training(task, spec, title=f"Training {n_runs} fit(s) on {ui.device_text()}",
                                         data_name=str(ss.get("fd_table_name", "?")), leaks=leak_columns,
                                         data_description=str(ss.get("fd_table_desc") or ""),
                                         only_serving=not include_other, cache=ui.fit_cache(), n_jobs=int(n_jobs))
        if job is not None and jobs.outcome() is None:  # (not already collected: tests may wait for the job)
            st.rerun()  # every part of the app (the sidebar's progress box, this button) sees the job
if job is not None and job.running:
    st.status(f"{job.title}: you can use other pages meanwhile; the progress and a Cancel button are in the "
              "sidebar.", state="running")
elif jobs.outcome() is not None:  # the training that ended just now (in this script run)
    kind, text = jobs.outcome()
    with st.status("Training failed" if kind == "failed" else text, state="complete" if kind == "done" else "error"):
        if kind == "failed":  # (the sidebar shows it too, on every page, until dismissed)
            st.error(ui.literal(text), icon=":material/warning:")

run = ss.get("fd_run")
if run is not None:
    if run.task is not task:
        st.info(ui.literal(f"Showing {run.title}: trained on {run.data_name}, which is not the current task."))
    for m, why in run.skipped:
        st.info(ui.literal(f"Skipped {m}: {why}."))
    compare.run_results(run)
    st.page_link("pages/compare.py", label="Compare the models", icon=":material/bar_chart:")
