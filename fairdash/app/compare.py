"""The Compare page's blocks below its run choice (Streamlit glue, no rules of its own): the selected
target's readouts, accuracy against fairness beside the target view, the groups a fair model moved away
from their targets, and the results table with its downloads. The numbers come from :mod:`fairdash.figures.plots`.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import streamlit as st

from ..analysis.rates import evaluation_rates, training_rates
from ..data import split_arrays
from ..data.meaning import GENERIC_RATE, error_words, label_favourable, outcome_words
from ..evaluation.blindness import has_both_sides, land_words, price_sentences
from ..evaluation.calibration import reliability
from ..evaluation.gaps import ceiling_table, moved_away_summary
from ..evaluation.metric_table import POP_PREFIX
from ..evaluation.metrics import confusion_frame, error_rates_frame, result_notes, summarize
from ..evaluation.thin import thin_notes
from ..evaluation.who_pays.table import who_pays_frame, who_pays_tables
from ..evaluation.who_pays.words import who_pays_sentences
from ..figures import plots
from ..figures.plot_style import RUN
from ..figures.plots_calibration import calibration_figure
from ..figures.plots_who_pays import within_group_figure
from ..files.results_file import to_file
from ..models.registry import MODELS, model_info
from ..report import report_for_runs
from ..targeting.criteria import Criterion, criterion_info
from ..targeting.decision import positive_scores, rule_info
from ..work.runs import rows_together, side_by_side
from . import tables, target_state
from .server import session, state
from .ui import navigation, text, upload

CHART = {"displayModeBar": False}
VIEWS = {"population": "The population (ordinary test set)", "balanced": "The paper's balanced test set"}


def results_of(runs):
    """The shown runs' results rows together (:func:`fairdash.work.runs.side_by_side`: each row's run as data,
    its label in words, priced together), computed once for a choice of runs (pricing runs of one task together
    fits the rules that use s)."""
    key = tuple((r.number, r.created) for r in runs)
    kept = state.current().compare_rows
    if kept is None or kept.key != key:
        kept = state.Keyed(key, side_by_side(runs))
        state.current().compare_rows = kept
    return kept.value.copy()


def kept_runs(chosen, history, seen: int | None = None) -> list:
    """The chosen run numbers still in the history, with every run newer than ``seen`` (the newest run number the
    page had shown when the choice was made; ``None``: the page was never shown) added: a choice is kept for the
    session, and a run trained since is shown beside it (the newest run where none is left)."""
    numbers = {r.number for r in history}
    newer = [] if seen is None else [r.number for r in history if r.number > seen and r.number not in chosen]
    return [n for n in chosen if n in numbers] + newer or [history[-1].number]


def by_table(runs) -> dict:
    """The runs grouped by the table and task they were trained on (the task's fingerprint: its rows, s, y and
    features), the group of the newest run first: runs of different tables are never drawn on one figure."""
    groups: dict = {}
    for r in sorted(runs, key=lambda r: -r.number):
        groups.setdefault(r.task.fingerprint, []).append(r)
    return {k: sorted(v, key=lambda r: r.number) for k, v in groups.items()}


def table_words(runs) -> str:
    """One table's runs in words, for the choice between tables: "mortgages.csv, s = race, y = deny (runs 3, 4)"."""
    t = runs[0].spec.task
    numbers = ", ".join(str(r.number) for r in runs)
    return (f"{runs[0].data_name}, s = {t.s_column}, y = {t.y_column} "
            f"({'run' if len(runs) == 1 else 'runs'} {numbers})")


def one_table(runs) -> list:
    """The chosen runs of one table: all of them where they share one; else the analyst's choice among the tables
    (kept for the session; the newest run's table at first), with a line saying why the others are not drawn."""
    groups = by_table(runs)
    if len(groups) == 1:
        return runs
    keys = list(groups)
    session.remember(state.COMPARE_TABLE, keys[0])  # the choice is kept for the session, across pages
    if state.current().compare_table not in groups:
        navigation.set_if_changed(state.COMPARE_TABLE, keys[0])
    st.warning(f"The chosen runs were trained on {len(groups)} different tables or tasks. Their groups, rates and "
               "targets are not comparable on one figure, so Compare draws one table's runs at a time.",
               icon=":material/table_view:")
    key = st.radio("Runs of the table", keys, key=state.COMPARE_TABLE, format_func=lambda k: table_words(groups[k]))
    return groups[key]


SEEN = "_offered"  # the kept entry beside a filter's: the values it offered when last drawn


def filtered(results):
    """The shown rows filtered by model and decision rule (issue 47, item 6: 10 to 30 series stay legible), where
    the runs hold more than one of either; each choice kept for the session. ``None`` where the filter leaves no
    row (the page says so)."""
    kinds = (("model", state.COMPARE_MODELS, "Models shown", lambda m: model_info(m).label if m in MODELS else m),
             ("decision", state.COMPARE_RULES, "Decision rules shown", lambda d: rule_info(d).named))
    keep = np.ones(len(results), dtype=bool)
    offered = [(c, key, words, fmt, list(dict.fromkeys(results[c].dropna().astype(str))))
               for c, key, words, fmt in kinds if c in results.columns]
    offered = [o for o in offered if len(o[4]) > 1]
    if not offered:
        return results
    cols = st.columns(len(offered))
    for col, (c, key, words, fmt, values) in zip(cols, offered):
        session.remember(key, values)
        seen = session.kept_value(key + SEEN, values)  # what the filter offered when last drawn: a model or rule
        was = [v for v in state.current().widget(key) if v in values]  # new since joins the choice, shown
        navigation.set_if_changed(key, [v for v in values if v in was or v not in seen] or values)
        chosen = col.multiselect(words, values, key=key, format_func=fmt,
                                 help="Filter the figures and tables below; the choice is kept for the session.")
        session.remember_value(key + SEEN, values)
        keep &= results[c].astype(str).isin(chosen).to_numpy()
    if not keep.any():
        st.info("No result matches this filter: choose at least one model and one rule.")
        return None
    return results[keep]


def one_criterion(runs) -> Criterion | None:
    """The criterion the runs judge, or ``None`` where they judge different ones (they cannot share figures)."""
    criteria = {r.spec.target.criterion for r in runs}  # (their targets hold its name)
    return criterion_info(criteria.pop()) if len(criteria) == 1 else None


def has_balanced_view(criterion: Criterion) -> bool:
    """Whether the paper's balanced test set exists for ``criterion`` (then the page offers both views)."""
    return criterion.balanced_eval


@dataclass(frozen=True)
class Measured:
    """The numbers the figures draw on one view: the summary over repeats, what is shown (the population's
    measurements in place of the evaluation rows' on the population view), where it was measured in words,
    and the figures' subtitle saying so."""
    summary: object
    shown: object
    where: str
    on: str


def measured(results, population: bool) -> Measured:
    summary = summarize(results, by=("model", "label", RUN, "target_rate"))
    return Measured(summary, plots.population_view(summary) if population else summary,
                    plots.measured_on(results, population),
                    "<br><sup>on " + plots.measured_on(results, population, short=True) + "</sup>")


def swept_targets(results) -> list[float]:
    """The targets the shown results were trained at, in order."""
    return sorted(float(t) for t in results["target_rate"].dropna().unique())


def nearest_target(swept) -> float:
    """The swept target the what-if slider starts at: the nearest to the session's PR_t."""
    return min(swept, key=lambda t: abs(t - float(target_state.current_or_default().target_rate or swept[0])))


def same_task(runs) -> bool:
    return all(r.task is runs[0].task for r in runs)


def figures(runs, shown, criterion: Criterion, *, population: bool, highlight, names, on: str) -> tuple:
    """The Compare page's three figures of ``shown``: accuracy against fairness (with the accuracy ceiling where
    the runs share one task, and the training split's beside it on the balanced view), positive rates and
    true positive rates per group."""
    rates = shares = None
    ref = {}
    if same_task(runs):
        first = runs[0]
        rates, shares = evaluation_rates(first.task, criterion, population=population)
        if has_balanced_view(criterion) and not population:
            tr = training_rates(first.task)
            ref = {"reference_rates": tr.base_rates, "reference_shares": tr.group_shares}
    accuracy = plots.accuracy_fairness(shown, criterion, rates=rates, shares=shares, highlight_target=highlight,
                                       title="Accuracy against fairness" + on, **ref)
    pr = plots.pr_scatter(shown, highlight_target=highlight, group_names=names, title="Positive rates per group" + on)
    tpr = plots.tpr_scatter(shown, highlight_target=highlight, group_names=names,
                            title="True positive rates per group" + on)
    return accuracy, pr, tpr


METRICS_PER_ROW = 4  # metrics side by side at most: at 1280 px each then keeps its whole value


def selected_target(shown, results, criterion: Criterion, highlight: float, *, population: bool, where: str) -> None:
    """The selected target and each model's accuracy there (its ratio and worst gap in the help)."""
    key = criterion.ratio
    sel = shown[np.isclose(shown["target_rate"].astype(float), highlight)]
    gaps = plots.worst_gaps(results, population)
    gap_of = {} if gaps is None else {lb: g for lb, t, g in gaps.itertuples(index=False) if np.isclose(t, highlight)}
    items = [("Selected target PR_t", f"{highlight:.3f}", None)]
    for _, r in sel.iterrows():
        ratio = r[f"{key}_mean"]
        items.append((f"{r['label']} accuracy", f"{r['accuracy_mean']:.3f}",
                      f"{key.replace('_', ' ')} " + ("n/a (0/0)" if not np.isfinite(ratio) else
                                                     f"{ratio:.3f} ± {r[f'{key}_std']:.3f}") + f", on {where}"
                      + (f"; worst gap to the target {gap_of[r['label']]}" if r["label"] in gap_of else "")))
    for start in range(0, len(items), METRICS_PER_ROW):  # rows of a few: many runs side by side cut every value
        cols = st.columns(METRICS_PER_ROW)
        for col, (label, value, words) in zip(cols, items[start:start + METRICS_PER_ROW]):
            col.metric(label, value, help=words)


def accuracy_and_target(accuracy_figure, results, criterion: Criterion, *, population: bool, names, highlight, on: str,
                        where: str, same_task: bool) -> None:
    """Accuracy against fairness, then the target view at full width (its rows name group, model and
    rule), each with its caption; results without per-group targets (older runs) get a one-line caption
    instead of the target view."""
    left, right = st.container(), st.container()
    with left:
        st.plotly_chart(accuracy_figure, key="fig_accuracy_fairness", config=CHART)
        if not same_task:
            st.caption("The runs were trained on different tasks, so no single ceiling is drawn.")
        elif population or not criterion.balanced_eval:
            st.caption(f"Accuracy on {where}. The dashed curve is the highest accuracy a classifier can reach at each "
                       "ratio on these rows (Theorem 2, seed-0 split).")
        else:
            st.caption("Accuracy on the balanced test set, as in the paper's parity experiments. There both groups "
                       "have the same base rate, so the dashed ceiling for those rows is 1 at every ratio: parity "
                       "costs nothing there in principle. The dotted curve is the ceiling on data distributed like "
                       "the training split (the Target page's numbers).")
    with right:
        no_view = plots.target_view_note(results)
        if no_view is None:
            st.plotly_chart(plots.target_view(results, criterion, population=population, group_names=names,
                                              highlight_target=highlight, title="Each group's rate against its target"
                                              + on), key="fig_target", config=CHART)
            st.caption("Each point is one model's rate for one group (mean over repeats), its bar the 95% interval, "
                       "the dashed line that group's target; the number beside it is the gap, rate minus target "
                       "(negative: short of it).")
        else:
            st.caption(no_view)
    for note in result_notes(results):
        st.warning(text.literal(note), icon=":material/warning:")


def moved_away(runs) -> None:
    """Every sentence of the shown runs saying a fair model moved a group away from its target. They name
    groups (user text), so they are written as plain text (``st.text``), never as Markdown."""
    moved = [(r, s) for r in runs for s in moved_away_summary(r.results, r.task.group_names)]
    if not moved:
        return
    box = st.container(key="moved_away")
    box.warning("A fair model moved a group away from its target (on the population, against plain LR trained on "
                "the same split):", icon=":material/warning:")
    for r, sentence in moved:
        box.text((f"Run {r.number}: " if len(runs) > 1 else "") + sentence)


def price_of_blindness(runs, results) -> None:
    """The price of deciding without s over the shown runs (``results``, their rows together, when the runs
    share one task; else each run on its own) where a rule deciding with s sits beside blind ones: one
    sentence per target (plain text: it names s, user text) and the frontier figure (accuracy over PR_t of
    every rule that lands on the target, the paper's rule beside)."""
    first = runs[0]
    together = all(r.task is first.task for r in runs)
    for number, res, task in ([(None, results, first.task)] if together else
                              [(r.number, r.results, r.task) for r in runs]):
        s_name = task.spec.s_column
        sentences = price_sentences(res, s_name, task.group_names) if has_both_sides(res) else []
        if not sentences:  # no rule deciding with s, or none of either side landed on the target
            continue
        box = st.container(key=f"price_of_blindness_{number or 0}")
        box.markdown("**The price of deciding without s**" + (f" (run {number})" if number else ""))
        for sentence in sentences:
            box.text(sentence)
        box.plotly_chart(plots.frontier_figure(res, s_name=html.escape(str(s_name))), key=f"fig_frontier_{number or 0}",
                         config=CHART)
        box.caption(f"Each line is one rule that lands on the target ({land_words('mean population rate')}); solid "
                    "lines decide with s, dashed ones without; the black diamonds are the best rule with s placed at "
                    "the blind rule's own rates, the side the price is measured against. The paper's rule (FairLR at "
                    "1/2) is drawn beside them with its worst gap, whether it lands or not. Error bars are 95% "
                    "intervals; the grey lines are plain LR (no target) and the majority class for everyone, for "
                    "scale.")
        who_pays(box, res, task, number or 0)


def who_pays(box, res, task, number: int) -> None:
    """Who pays for deciding without s, below the price: the paragraph per target (plain text), the short table of
    the people decided differently per group, and the within-group figure of one target (chosen where there are
    several)."""
    tables = who_pays_tables(res)
    if not tables:
        return
    s_name = task.spec.s_column
    box.markdown("**Who pays for deciding without s**")
    for sentence in who_pays_sentences(res, s_name, task.group_names, task.spec):
        box.text(sentence)
    box.dataframe(who_pays_frame(tables, task.group_names), hide_index=True, key=f"who_pays_table_{number}")
    at = 0
    if len(tables) > 1:
        at = box.selectbox("Within-group figure at PR_t", range(len(tables)), key=f"who_pays_target_{number}",
                           format_func=lambda i: f"{tables[i][0]:.2f}")
    t, table = tables[at]
    box.plotly_chart(within_group_figure(table, s_name=s_name, group_names=task.group_names,
                                         positive=outcome_words(task.spec)[0]),
                     key=f"fig_within_group_{number}", config=CHART)
    box.caption("Each band holds people of one group whom the rule with s scores alike; solid: people with a high "
                "value of the feature the rule without s leans on most, dashed: the others, dotted: the rule with s. "
                "Where a group's solid and dashed lines part, people of one group with the same score are decided "
                "differently by how much they look like another group (Lipton, Chouldechova and McAuley, 2018).")


REPORT_KEY = state.COMPARE_REPORT  # (the shown runs' numbers, the report's HTML)


def report_of_runs(runs) -> None:
    """A report of the shown runs together (the price of deciding without s among it, where a rule deciding
    with s sits beside a blind one): built on request, then downloaded."""

    shown = tuple(r.number for r in runs)
    if st.button("Build a report of these runs", key="build_compare_report",
                 help="One HTML page of the runs shown here, side by side (the Export page has each run's own)."):
        with text.guard("The report could not be built: "):
            state.current().compare_report = state.ComparedReport(shown, report_for_runs(runs, rows_together(runs)))
    rep = state.current().compare_report
    if rep is not None and rep.shown == shown:
        st.download_button("Download the report of these runs (HTML)", rep.html.encode("utf-8"),
                           f"fairdash_report_runs_{'_'.join(map(str, shown))}.html", "text/html",
                           key="download_compare_report", on_click=upload.log_export, args=("report", len(rep.html)))


def results_table(results, summary, criterion: Criterion, *, population: bool, where: str, runs=()) -> None:
    """The results table (with the worst gap and its group where the results carry it, per-group columns
    headed with the groups' names where the ``runs`` shown share them) and two downloads."""
    names = {tuple(map(str, r.task.group_names)) for r in runs}
    names = names.pop() if len(names) == 1 else None
    st.subheader("Results table")
    worst = plots.worst_gaps(results, population) is not None
    st.caption(f"Measured on {where}." + (" Worst gap: the largest distance of a group's rate from its target (mean "
                                          "over repeats), with that group." if worst else
                                          " Target gap: mean over groups of |rate_s − target_s| on the population (PR; "
                                          "TPR under equality of opportunity)."
                                          if population else ""))
    with st.container(key="compare_results"):  # a key for the browser tests to find this table among the page's
        tables.show_results(plots.results_table(results, criterion, population=population, group_names=names,
                                                rate_name=_rate_name(runs) if names else None), "compare_table")
    c1, c2 = st.columns(2)
    c1.download_button("Download results (CSV, one row per fit)", upload.csv_bytes(to_file(results)),
                       "fairdash_results.csv", "text/csv", key="download_results_csv")
    c2.download_button("Download summary (CSV, mean and std)", upload.csv_bytes(summary), "fairdash_summary.csv",
                       "text/csv", key="download_summary_csv")
    thin_warnings(runs)


def _rate_name(runs) -> str | None:
    """The positive rate in the label's words ("denial rate") where the runs' task names one, else ``None`` ("PR")."""
    rate = outcome_words(runs[0].task.spec)[2] if same_task(runs) else GENERIC_RATE
    return None if rate == GENERIC_RATE else rate


def error_rates(summary, runs, results=None) -> None:
    """Each group's error rates on the population with their 95% intervals, the harmful error first
    (:func:`fairdash.evaluation.metrics.error_rates_frame`), its confusion matrix (``results``' rows) and a
    calibration figure of a chosen fitted model, for runs of one task."""
    if not same_task(runs):
        return
    task = runs[0].task
    frame = error_rates_frame(summary, task.group_names, POP_PREFIX, label_favourable(task.spec)[0],
                              error_words(task.spec))
    if frame is None:
        return
    st.subheader("Error rates per group")
    st.caption("On the population. Mean over repeats with its 95% interval (one repeat: a bootstrap of the test rows, "
               "stratified by group; several: Nadeau and Bengio's corrected resampled t over the repeats, whose "
               "training rows overlap). FPR: people with a negative label given a positive decision; FNR: people "
               "with a positive label given a negative one; precision: the share of "
               "positive decisions that were right; calibration error: how far the model's scores are from the share "
               "of positive labels among the people given them, weighted by rows (0: a score of 0.7 is a 70% chance).")
    st.dataframe(frame, hide_index=True, key="compare_error_rates")
    confusion = None if results is None else confusion_frame(results, task.group_names, POP_PREFIX)
    if confusion is not None:
        st.caption("Each group's confusion matrix on the population (the mean count over repeats where there are "
                   "several).")
        st.dataframe(confusion, hide_index=True, key="compare_confusion")


def calibration(runs, *, population: bool = True, on: str = "") -> None:
    """The calibration figure of one fitted model of the shown runs (chosen in a list), on its split's population
    or the paper's evaluation rows (``population``; ``on``: the figures' subtitle saying which, ``Measured.on``)."""
    keys = {(r.number, k): r for r in runs for k in r.models}
    if not keys:
        return
    words = {(n, k): f"run {n}: {r.model_words(k)}" for (n, k), r in keys.items()}
    first = next((nk for nk, r in keys.items() if nk[1] == r.default_model()), next(iter(keys)))
    session.remember(state.COMPARE_CALIBRATION, first)  # kept for the session, across pages (issue 47, item 6)
    if state.current().compare_calibration not in keys:
        navigation.set_if_changed(state.COMPARE_CALIBRATION, first)
    chosen = st.selectbox("Calibration of", list(words), format_func=words.get, key=state.COMPARE_CALIBRATION)
    run, key = keys[chosen], chosen[1]
    trained = run.models[key]
    arrays = split_arrays(run.task, int(key[2]))
    rows = (np.arange(len(arrays.y_test)) if population or not has_balanced_view(run.spec.target.criterion_info)
            else np.asarray(arrays.balanced_test))
    X, y, s = arrays.X_test[rows], arrays.y_test[rows], arrays.s_test[rows]
    curve = reliability(positive_scores(trained.estimator, X, s), y, s, run.task.n_groups)
    title = "Calibration per group" + on
    st.plotly_chart(calibration_figure(curve, group_names=[html.escape(str(g)) for g in run.task.group_names],
                                       title=title), key="fig_calibration", config=CHART)
    st.caption("Each group's reliability curve on these rows: the model's mean score in each tenth of [0, 1] "
               "against the share of those people with a positive label (bigger markers: more people). On the dotted "
               "diagonal a score means the same chance in every group.")


def thin_warnings(runs) -> None:
    """Where the shown runs' numbers rest on few rows (:func:`fairdash.evaluation.thin.thin_notes`, on each run's first
    split, for every decision rule it ran): one warning per group, naming it and the count. The notes quote
    group names (user text), so they are shown literally."""

    notes: dict = {}  # note -> the numbers of the runs it is true of (runs on one split share their notes)
    for r in runs:
        rules = list(r.spec.decisions) or [r.spec.target.decision_rule.name]
        arrays = split_arrays(r.task, int((r.spec.seeds or (0,))[0]))
        for rule in rules:
            for note in thin_notes(arrays, r.task.group_names, criterion=r.spec.target.criterion_info, rule=rule):
                notes.setdefault(note, []).append(r.number)
    for note, numbers in notes.items():
        numbers = sorted(set(numbers))
        which = "" if len(runs) == 1 else (f"Run {numbers[0]}: " if len(numbers) == 1 else
                                           f"Runs {', '.join(map(str, numbers[:-1]))} and {numbers[-1]}: ")
        st.warning(text.literal(which + note), icon=":material/warning:")


CEILING_HEADERS = {"ceiling_at_measured": "ceiling at its measured rates",
                   "ceiling_at_target": "ceiling at the target"}
CEILING_HELP = {"ceiling at its measured rates": "Theorem 2's ceiling at the rates the model reached: its accuracy "
                                                 "must stay below this.",
                "ceiling at the target": "Theorem 2's ceiling if the model hit the target exactly."}


def run_results(run) -> None:
    """The Train page's results of ``run``: the results table (population first where the criterion has
    both), its warnings (one-class and rule notes, thin groups, groups moved away from their targets), and
    the measured accuracy beside Theorem 2's ceilings, every number with three decimals."""

    res = run.results
    crit = run.spec.target.criterion_info
    pop = crit.balanced_eval  # a population beside the paper's rows
    st.subheader("Results (mean ± std over repeats)")
    st.caption(f"Measured on {plots.POPULATION}; the paper's balanced test set is on the Compare page." if pop
               else "Measured on the ordinary test set (equality of opportunity).")
    tables.show_results(plots.results_table(res, crit, population=pop,
                                            group_names=run.task.group_names), "train_results")
    for note in result_notes(res):
        st.warning(text.literal(note), icon=":material/warning:")
    thin_warnings([run])
    for sentence in moved_away_summary(res, run.task.group_names):
        st.warning(text.literal(sentence), icon=":material/trending_down:")
    fair = res[res["target_rate"].notna() | (res["target"].astype(str) != "")]
    if len(fair):
        where = "population"  # where the landing is judged: the ceiling means something only for a rule that lands
        st.markdown(f"**Measured accuracy beside the ceilings** (Theorem 2, each computed on the same {where} rows as "
                    "the accuracy beside it; compared only for a rule that lands on the target):")
        tab = ceiling_table(fair, group_names=run.task.group_names, prefix=POP_PREFIX).rename(
            columns={"accuracy": f"accuracy ({where})", **CEILING_HEADERS})
        # numbers first
        tab = tab[[c for c in tab.columns if c != "target"] + [c for c in tab.columns if c == "target"]]
        tables.show_numbers(tab, "accuracy_vs_bound", column_config={
            **{c: tables.number_column(help=h) for c, h in CEILING_HELP.items()},
            "label": st.column_config.TextColumn("model", width=tables.RESULTS_WIDTHS["model"], pinned=True)})

