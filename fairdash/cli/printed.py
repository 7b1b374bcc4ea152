"""What ``train`` and ``sweep`` print in words: a trained model's measurements on each set with their intervals,
its gaps to the target, how much of a miss is sampling noise, its warnings and price (``print_trained``); a sweep's
table of means over the repeats with their intervals (``print_sweep``) and its warnings and notes
(``print_sweep_notes``). The commands themselves are :mod:`fairdash.cli.model_commands`.
"""
from __future__ import annotations

import numpy as np

from ..data import split_arrays
from ..evaluation.blindness import price_sentences
from ..evaluation.gaps import NO_TARGET, moved_away_summary, sampling_noise_sentence
from ..evaluation.metric_table import EVAL, POP, POP_PREFIX, TRAIN, column_of, groups_in, measured_on_rows
from ..evaluation.metrics import (
    below_majority_notes,
    format_mean_std,
    one_class_reason,
    result_notes,
    rule_notes,
    summarize,
)
from ..evaluation.who_pays.words import who_pays_sentences
from ..targeting.criteria import Criterion
from ..targeting.decision import rule_info
from .options import label_line


def printed_metrics(group_names) -> list[tuple[str, str]]:
    """``train``'s summary lines, ``(metric key, what it is)``: accuracy, each group's rates measured on both sets
    (PR, TPR, TNR and the error rates FPR, FNR, precision: the table's per-group metrics measured from decisions,
    every group named), and the ratios."""
    rates = [m for m in measured_on_rows() if m.per_group and POP in m.where]
    per_group = [(m.column(EVAL, g), f"{m.label} of {name}") for m in rates for g, name in enumerate(group_names)]
    return [("accuracy", ""), *per_group, ("pr_ratio", ""), ("tpr_ratio", "")]


def print_trained(args, task, spec, exp, trained, out, moved, landing, price) -> None:
    """``train``'s report in words: what was trained for which target and how it decides, where it was saved, what
    it measured, then its gaps, landing, warnings and price."""
    row, m = exp.results.iloc[0], trained.metrics
    if trained.target is not None:
        target = trained.target.describe(trained.target_rate)
    elif spec.decision_rule.aims_at_target:  # a plain model whose decisions are cut at the target all the same
        target = f"a plain model, trained without a target; its decisions are cut to reach {spec.describe()}"
    else:
        target = "no target (plain model)"
    print(f"{row['label']} trained on the training split (seed {args.seed}; {target})")
    print(f"Decision rule: {spec.decision_rule.name}: {spec.decision_rule.explanation}")
    print(label_line(task))
    print(f"Saved to {out}  ({trained.fit_seconds:.2f} s on {trained.device})")
    _print_measured(m, task.group_names)
    if m.get("too_good"):
        print(f"warning: {result_notes(exp.results.iloc[:1])[-1]}")
    for line in gap_lines(m, task.group_names, spec.criterion_info):
        print(line)
    if landing[0] != NO_TARGET:
        print(f"On the target (population, 95% intervals): {landing[1]}")
    noise = _noise_line(task, args.seed, m, spec.criterion_info)
    if noise:
        print(noise)
    for sentence in moved:
        print(f"warning: {sentence}")
    for note in rule_notes(exp.results.iloc[:1]) + below_majority_notes(exp.results.iloc[:1]):
        print(f"warning: {note}")
    if price.get("price_sentence"):
        print(f"Price of deciding without s: {price['price_sentence']}")
    if price.get("who_pays_sentence"):
        print(price["who_pays_sentence"])


def _print_measured(m: dict, group_names) -> None:
    """A trained model's measurements on the paper's evaluation rows and, where those are not the population
    already, on the population: each metric with its interval, a one-class note, the conditional ratio, the
    ceiling."""
    for title, pre, n in ((f"the {m['eval_set']} set (the paper's protocol)", "", m["n_eval"]),
                          ("the population (the ordinary test set, as the model will meet it)", POP_PREFIX,
                           m["n_pop"])):
        if pre and m["eval_set"] == "test":
            break  # the evaluation rows are the population already
        print(f"Evaluated on {title}, {n} rows:")
        for k, words in printed_metrics(group_names):
            if pre + k in m:
                value, bounds = m.get(pre + k), (m.get(pre + k + "_lo"), m.get(pre + k + "_hi"))
                shown = bounds[0] is not None and value is not None and np.isfinite(value)  # no interval of n/a
                print(f"  {k:<12} {_fmt(value)}" + (f"  {words}" if words else "")
                      + (f" (95%: {_interval(*bounds)})" if shown else ""))
        if m.get(pre + "one_class"):
            print(f"  note: the model {m[pre + 'one_class']}; {one_class_reason(m[pre + 'one_class'])}")
        if pre + "cond_pr_ratio" in m and np.isfinite(m[pre + "cond_pr_ratio"]):
            print(f"  conditional PR ratio (worst stratum) {_fmt(m[pre + 'cond_pr_ratio'])}, share-weighted mean "
                  f"over strata {_fmt(m.get(pre + 'cond_pr_ratio_mean', float('nan')))}")
        print(f"  Theorem 2 ceiling at the measured group rates: {_fmt(m.get(pre + 'ceiling_at_measured'))}")


def _interval(lo, hi) -> str:
    """A 95% interval in words: ``0.296 to 0.363``; ``n/a`` where no draw could measure it."""
    if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
        return "n/a"
    return f"{lo:.3f} to {hi:.3f}"


def _fmt(v):
    return "n/a" if v is None or not np.isfinite(v) else f"{v:.4f}"


def gap_lines(m: dict, group_names, criterion: Criterion) -> list[str]:
    """Each group's signed gap to its target on the population and the worst one, in words."""

    own = criterion.rate
    rate = own.upper()
    worst, worst_group = column_of("worst_gap", POP), column_of("worst_gap_group", POP)
    groups = list(range(groups_in(m, "target", TRAIN)))
    if not groups or not np.isfinite(m.get(worst, np.nan)):
        return []
    parts = [f"{group_names[g] if g < len(group_names) else g}: {rate} {_fmt(m.get(column_of(own, POP, g)))} "
             f"against target {_fmt(m[column_of('target', TRAIN, g)])} ({m[column_of('gap', POP, g)]:+.4f})"
             for g in sorted(groups)]
    lines = ["Gap to the target on the population, per group: " + "; ".join(parts)]
    if all(column_of("tnr_gap", POP, g) in m for g in groups):  # explicit TPR/TNR: a per-group cut meets the TPR only
        lines.append("TNR beside it (explicit TNR target; not what a per-group cut meets): " + "; ".join(
            f"{group_names[g] if g < len(group_names) else g}: TNR {_fmt(m.get(column_of('tnr', POP, g)))} "
            f"({m[column_of('tnr_gap', POP, g)]:+.4f})" for g in sorted(groups)))
    return lines + [f"Worst gap{' over TPR and TNR' if len(lines) > 1 else ''}: {_fmt(m[worst])} "
                    f"({m[worst_group]})"]


def _noise_line(task, seed: int, m: dict, criterion: Criterion) -> str:
    """How much of a split's miss is sampling noise (:func:`fairdash.evaluation.gaps.sampling_noise_sentence`)."""

    groups = list(range(groups_in(m, "target", TRAIN)))
    if not groups:
        return ""
    a = split_arrays(task, seed)
    rows = criterion.rows(a.y_test)
    return sampling_noise_sentence([m[column_of("target", TRAIN, g)] for g in groups], a.s_test, task.group_names,
                                   rows)


def print_sweep(exp, spec, models, decisions, repeats: int) -> None:
    """``sweep``'s table: each model (and rule) at each target, mean ± std over the repeats on both sets, the worst
    gap with its group; then the 95% intervals."""
    criterion = spec.criterion_info
    key = criterion.ratio
    worst = column_of("worst_gap", POP)
    shown = ["accuracy", key, column_of("accuracy", POP), column_of(key, POP), worst, "fit_seconds"]
    by = ("model", "decision", "target_rate") if len(decisions) > 1 else ("model", "target_rate")
    summary = summarize(exp.results, by=by, metrics=shown)
    where = criterion.eval_set + " set"
    rules = (", ".join(rule_info(d).named for d in decisions) + " (each model under each rule)" if len(decisions) > 1
             else spec.decision_rule.named)
    print(f"{repeats} repeat(s). Paper's protocol: the {where}; population: the ordinary test set. "
          f"Decision rule: {rules}. Worst gap: the largest |population rate - target| over the groups, and its group.")
    width = max([16] + [len(f"{m}/{d}") + 1 for m in models for d in decisions if len(decisions) > 1])
    print(f"{'model':<{width}}{'PR_t':>7}{'accuracy':>16}{key:>16}{'pop accuracy':>16}{'pop ' + key:>16}"
          f"{'worst gap':>24}{'fit s':>8}")
    worst_groups = {(m, None if not np.isfinite(t) else round(t, 9)): "/".join(dict.fromkeys(map(str, g)))
                    for (m, t), g in exp.results.groupby(["model", "target_rate"], dropna=False)[
                        column_of("worst_gap_group", POP)]}
    for _, r in summary.iterrows():
        name = f"{r['model']}/{r['decision']}" if len(decisions) > 1 else r["model"]
        t = "" if not np.isfinite(r["target_rate"]) else f"{r['target_rate']:.3f}"
        cells = [format_mean_std(r[m + "_mean"], r[m + "_std"], repeats=repeats) for m in shown[:4]]
        group_key = (r["model"], None if not np.isfinite(r["target_rate"]) else round(r["target_rate"], 9))
        gap = ("" if not np.isfinite(r[worst + "_mean"]) else
               f"{r[worst + '_mean']:.3f} ({worst_groups.get(group_key, '')})"[:23])
        print(f"{name:<{width}}{t:>7}" + "".join(f"{c:>16}" for c in cells) + f"{gap:>24}{r['fit_seconds_mean']:>8.2f}")
    how = ("Nadeau and Bengio's corrected resampled t over the repeats" if repeats > 1
           else "a bootstrap of the test rows, stratified by group")
    print(f"95% intervals ({how}):")
    for _, r in summary.iterrows():
        name = f"{r['model']}/{r['decision']}" if len(decisions) > 1 else r["model"]
        t = "" if not np.isfinite(r["target_rate"]) else f" at PR_t {r['target_rate']:.3f}"
        said = [f"{m.replace('_', ' ')} {_interval(r.get(m + '_lo'), r.get(m + '_hi'))}" for m in shown
                if np.isfinite(r.get(m + "_lo", float("nan")))]
        if said:
            print(f"  {name}{t}: " + "; ".join(said))


def print_sweep_notes(exp, task) -> None:
    """``sweep``'s warnings and notes: who moved away, the price of deciding without s, rules that did not reach
    their targets, rows below the majority class, one-class models, results too good to be true."""
    for sentence in moved_away_summary(exp.results, task.group_names):
        print(f"warning: {sentence}")
    for sentence in price_sentences(exp.results, task.spec.s_column, task.group_names):
        print(f"Price of deciding without s: {sentence}")
    for sentence in who_pays_sentences(exp.results, task.spec.s_column, task.group_names, task.spec):
        print(sentence)
    for note in rule_notes(exp.results) + below_majority_notes(exp.results):
        print(f"warning: {note}")
    pop_one = column_of("one_class", POP)
    one = exp.results[exp.results["one_class"].astype(bool) | exp.results[pop_one].astype(bool)]
    for _, r in one.drop_duplicates(["model", "one_class", pop_one]).iterrows():
        print(f"note: {r['label']} (seed {r['seed']}) {r['one_class'] or r[pop_one]}: "
              f"{one_class_reason(r['one_class'] or r[pop_one])}.")
    if "too_good" in exp.results.columns and exp.results["too_good"].astype(bool).any():
        for note in result_notes(exp.results[exp.results["too_good"].astype(bool)]):
            print(f"warning: {note}")
