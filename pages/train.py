"""Train page: choose FairLR / FairGP and baselines (each labelled with the criterion it serves),
repeats, one target or a sweep over a grid of targets (the what-if mode), advanced settings; training
runs in ``st.status`` with a progress bar fed by the experiment runner's callback. Results go into
session state; fitted models go into the process-wide fit cache, so a repeated request is instant."""
from __future__ import annotations

import os
import time

import numpy as np
import streamlit as st

from fairdash import plots, ui
from fairdash.models.registry import MODELS

ss = st.session_state
CRIT_TEXT = {"dp": "demographic parity", "eo": "equality of opportunity"}
NICE = {"num_inducing": "inducing points", "max_epochs": "max epochs", "lr": "learning rate", "C": "C (1 / L2 strength)",
        "tol": "tolerance", "max_seconds": "time limit (s)", "max_iter": "max iterations", "weight_decay": "weight decay",
        "difference_bound": "allowed difference", "ngd_lr": "natural-gradient step", "patience": "patience (epochs)"}

st.title("Train")
ui.ensure_state()
task = ui.current_task()
rates = ui.task_rates()
opts = ui.target_options()
criterion = opts["criterion"]
crit_mode = ss.get("fd_criterion", "dp")
pr_t = float(ss.get("fd_pr_t", rates.presets["avg"]))

st.markdown(f"**Device:** {ui.device_text()} · **Criterion:** {ui.CRITERIA[crit_mode]} · "
            + (f"**Targets:** TPR {opts['tpr_target']:.3f}, TNR {opts['tnr_target']:.3f}" if crit_mode == "eo-targets"
               else f"**PR_t:** {pr_t:.3f}")
            + (f" · **Legitimate factor:** `{task.spec.strata_column}`" if task.spec.strata_column else ""))


def _serves(info) -> str:
    if not info.criteria:
        return "plain model (reference for every criterion)"
    return "serves " + " and ".join(CRIT_TEXT[c] for c in info.criteria)


available, unavailable = [], []
for name, info in MODELS.items():
    ok, why = ui.model_available(name)
    (available if ok else unavailable).append(name if ok else f"{info.label} ({why})")

ui.restore("include_other_criteria", False)
include_other = st.checkbox("Also offer models made for another criterion (they are labelled as such)",
                            key="include_other_criteria")
offered = [m for m in available if include_other or MODELS[m].serves(criterion)]
hidden = [MODELS[m].label for m in available if m not in offered]
ui.restore("train_models", [m for m in ("fair-lr", "lr") if m in offered])
st.multiselect("Models to train", offered, key="train_models",
               format_func=lambda m: f"{MODELS[m].label}: {_serves(MODELS[m])}"
               + ("" if MODELS[m].serves(criterion) else f" (NOT {CRIT_TEXT[criterion]})"),
               help="FairLR and FairGP are the paper's method; the others are the paper's baselines.")
chosen = list(ss["train_models"])
notes = []
if hidden:
    notes.append(f"Not offered for {CRIT_TEXT[criterion]}: {', '.join(hidden)} (made for another criterion).")
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
    ui.restore("repeats", 1)
    repeats = st.number_input("Repeats (random splits; the paper uses 10)", min_value=1, max_value=20, step=1,
                              key="repeats")
with c2:
    ui.restore("train_mode", "single")
    mode = st.radio("What to train", ["single", "sweep"], key="train_mode", horizontal=True,
                    format_func={"single": "The current target", "sweep": "A sweep over targets (what-if)"}.get,
                    disabled=crit_mode == "eo-targets")
if crit_mode == "eo-targets":
    mode = "single"

grid = [pr_t]
if mode == "sweep":
    s1, s2, s3 = st.columns(3)
    ui.restore("sweep_from", round(float(rates.presets["min"]), 3))
    ui.restore("sweep_to", round(float(rates.presets["max"]), 3))
    ui.restore("sweep_points", 5)
    lo = s1.number_input("Sweep from PR_t", 0.001, 0.999, step=0.01, format="%.3f", key="sweep_from")
    hi = s2.number_input("Sweep to PR_t", 0.001, 0.999, step=0.01, format="%.3f", key="sweep_to")
    n = s3.number_input("Number of targets", 2, 25, step=1, key="sweep_points")
    grid = sorted({round(float(t), 3) for t in np.linspace(min(lo, hi), max(lo, hi), int(n))})
    st.caption("Targets: " + ", ".join(f"{t:.3f}" for t in grid)
               + ". The Compare page's slider scrubs through them with no waiting.")

with st.expander("Advanced settings"):
    ui.restore("parallel_jobs", 1)
    n_jobs = st.number_input("Parallel jobs", 1, max(1, os.cpu_count() or 1), step=1, key="parallel_jobs",
                             help="Independent fits (model x target x repeat) run in parallel worker processes.")
    st.caption(f"Keep-rate delta: {opts['delta']:.2f} (set on the Target page).")
    model_opts: dict = {}
    for m in chosen:
        params = ui.model_options(m)
        if not params:
            continue
        st.markdown(f"**{MODELS[m].label}**")
        cols = st.columns(min(4, len(params)))
        values = {}
        for i, (p, default) in enumerate(params.items()):
            key = f"opt_{m}_{p}"
            ui.restore(key, default)
            widget = cols[i % len(cols)]
            if isinstance(default, int):
                v = widget.number_input(f"{NICE.get(p, p)} ({p})" if p in NICE else p, value=None, step=1, key=key)
            else:
                v = widget.number_input(f"{NICE.get(p, p)} ({p})" if p in NICE else p, value=None, format="%g",
                                        key=key)
            values[p] = default if v is None else type(default)(v)
        changed = {p: v for p, v in values.items() if v != params[p]}
        if changed:
            model_opts[m] = changed
if task.spec.strata_column and ss.get("strata_rates") == "slider":
    for m in chosen:
        if MODELS[m].uses_target_rate:
            model_opts.setdefault(m, {})["stratum_target_rates"] = {k: pr_t for k in range(len(task.strata_names))}

config = {
    "task": ss["fd_task_key"], "models": chosen, "targets": None if crit_mode == "eo-targets" else grid,
    "seeds": list(range(int(repeats))), "criterion": criterion, "delta": opts["delta"],
    "tpr_target": opts.get("tpr_target"), "tnr_target": opts.get("tnr_target"), "options": model_opts,
    "include_other": bool(include_other), "mode": mode,
}
n_fair = sum(MODELS[m].uses_target_rate for m in chosen)
n_runs = int(repeats) * (n_fair * len(grid) + (len(chosen) - n_fair))
st.caption(f"{n_runs} fit(s). Fits already made with the same data and settings come from the cache at once.")

if st.button("Train", key="train_button", type="primary", disabled=not chosen):
    from fairdash.experiments import run_experiment

    key = ui.run_key(config)
    last = ss.get("fd_run")
    if last is not None and last.get("key") == key:
        st.success("These results are already here (same data and settings).")
    else:
        t0 = time.perf_counter()
        with st.status(f"Training {n_runs} fit(s) on {ui.device_text()}…", expanded=True) as status:
            bar = st.progress(0.0, text="Starting")

            def progress(fraction: float, message: str) -> None:
                bar.progress(float(min(max(fraction, 0.0), 1.0)), text=message)

            try:
                exp = run_experiment(
                    task, chosen, target_rates=config["targets"] or (None,), seeds=config["seeds"],
                    criterion=criterion, delta=opts["delta"], tpr_target=opts.get("tpr_target"),
                    tnr_target=opts.get("tnr_target"), options=model_opts, cache=ui.fit_cache(), progress=progress,
                    keep_models=True, n_jobs=int(n_jobs), only_serving=not include_other)
            except Exception as e:  # noqa: BLE001 - shown as a message; the session keeps its state
                status.update(label="Training failed", state="error", expanded=True)
                ui.show_error(e, "Training failed: ")
            else:
                res = exp.results
                off = ~res["model"].map(lambda m: MODELS[m].serves(criterion))
                if off.any():  # a model run outside the criterion it was made for says so everywhere
                    res.loc[off, "label"] = [f"{MODELS[m].label} (made for "
                                             + "/".join(CRIT_TEXT[c] for c in MODELS[m].criteria) + ")"
                                             for m in res.loc[off, "model"]]
                ss["fd_run"] = {"key": key, "results": res, "models": exp.models, "skipped": exp.skipped,
                                "config": config, "criterion": criterion, "crit_mode": crit_mode,
                                "task_key": ss["fd_task_key"], "group_names": task.group_names,
                                "seconds": time.perf_counter() - t0}
                ss.pop("compare_target", None)
                cached = int(exp.results["cached"].sum()) if "cached" in exp.results else 0
                status.update(label=f"Trained {len(exp.results)} fit(s) in {time.perf_counter() - t0:.1f} s"
                                    + (f" ({cached} from the cache)" if cached else ""),
                              state="complete", expanded=False)

run = ss.get("fd_run")
if run is not None:
    if run["task_key"] != ss["fd_task_key"]:
        st.warning("These results were trained on a different task than the current one.")
    for m, why in run.get("skipped", []):
        st.info(f"Skipped {m}: {why}.")
    res = run["results"]
    st.subheader("Results (mean ± std over repeats)")
    st.dataframe(plots.results_table(res, run["criterion"]), key="train_results", hide_index=True)
    fair = res[res["target_rate"].notna()]
    if len(fair):
        st.markdown("**Measured accuracy beside the ceiling it must respect** (Theorem 2 at the model's own "
                    "measured group rates, on the same evaluation rows):")
        g = fair.groupby(["label", "target_rate"], sort=False)[["accuracy", "accuracy_bound", "ceiling_at_target"]]
        st.dataframe(g.mean().reset_index().rename(columns={
            "accuracy_bound": "ceiling at measured rates", "ceiling_at_target": "ceiling at target"}),
            key="accuracy_vs_bound", hide_index=True)
    st.page_link("pages/compare.py", label="Compare the models", icon=":material/bar_chart:")
