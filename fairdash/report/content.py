"""What the report says, as plain data: the task's description, each section's blocks (paragraphs,
definition lists, tables, lists), the plain-language summary. No HTML here: the template renders it
(and escapes every value)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..analysis.rates import describe_t, s_predictability_text
from ..data import SAMPLES, sample_of
from ..data.meaning import ASSUMED, WORDS, disadvantaged_sentence, error_words, label_favourable
from ..evaluation.blindness import price_sentences
from ..evaluation.gaps import ceiling_verdict, landing_verdict, moved_away_summary
from ..evaluation.metric_table import EVAL, EVAL_PREFIX, POP, POP_PREFIX, column_of
from ..evaluation.metrics import confusion_frame, error_rates_frame, format_mean_std, result_notes, summarize
from ..evaluation.who_pays.table import who_pays_frame, who_pays_tables
from ..evaluation.who_pays.words import who_pays_sentences
from ..models.registry import MODELS
from ..targeting.criteria import Criterion
from ..targeting.decision import PAPER_RULE, RULES
from ..targeting.targets import disadvantaged_group
from .blocks import bullets, code, defs, heading, para, table


# --------------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------------
def fmt(v, digits: int = 3, pct: bool = False) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "n/a"
    if not np.isfinite(f):
        return "n/a"
    return f"{100 * f:.1f}%" if pct else f"{f:.{digits}f}"


def cell(r, k) -> str:
    """``mean ± std`` over repeats; the mean alone where there was one run (no spread to show)."""
    text = format_mean_std(r.get(f"{k}_mean", np.nan), r.get(f"{k}_std", np.nan), repeats=r.get("repeats", 1))
    return text.replace("± ", "±\u00a0")


def uses_target(model: str) -> bool:
    info = MODELS.get(str(model))
    return bool(info and info.uses_target_rate)


def _group_name(desc, readout, k) -> str:
    names = desc.get("group_names") or []
    if readout and "groups" in readout and str(k) in readout["groups"]:
        return str(readout["groups"][str(k)])
    return str(names[int(k)]) if int(k) < len(names) else f"group {k}"


# --------------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------------
def describe_task(task, *, dataset: str | None = None, description: str | None = None,
                  positive_meaning: str | None = None, source: str | None = None) -> dict:
    """The ``task_description`` that ``build_report`` takes, from a :class:`fairdash.data.Task`.

    It describes the task's own data. A bundled sample's ``description`` is kept only for a task built
    from that sample (:func:`fairdash.data.sample_of`): an upload, a part of the sample or the sample with
    another label never opens with the sample's words, whatever the caller passed (a session that held
    the sample before an upload passed them)."""

    spec = task.spec
    gt = task.group_table()
    if description and description in {smp.description for smp in SAMPLES.values()}:
        own = sample_of(task)
        description = own.description if own is not None else ""
    return {
        "dataset": dataset or source or "uploaded table",
        "description": description or "",
        "source": source or "",
        "n_rows": int(len(task.y)),
        "n_rows_read": int(task.n_rows_read or len(task.y)),
        "n_dropped_missing_sy": int(task.n_dropped_missing_sy),
        "n_dropped_missing_features": int(task.n_dropped_missing_features),
        "s_column": spec.s_column,
        "y_column": spec.y_column,
        "s1_values": list(spec.s1_values),
        "y1_values": list(spec.y1_values),
        "positive_meaning": positive_meaning or spec.positive_meaning or "",
        "positive_favourable": label_favourable(spec)[0], "positive_favourable_how": label_favourable(spec)[1],
        "error_words": error_words(spec),  # the error rates named in the label's words ("wrongly denied (FPR)")
        "group_names": list(task.group_names),
        "label_names": list(task.label_names),
        "groups": [{"group": str(r["group"]), "rows": int(r["rows"]), "positives": int(r["positives"]),
                    "base_rate": float(r["base rate"]), "share": float(r["share"])} for _, r in gt.iterrows()],
        "features": list(task.features),
        "numeric_features": list(task.numeric_features),
        "categorical_features": list(task.categorical_features),
        "strata_column": spec.strata_column,
        "spec": spec.to_dict(),
        "warnings": list(task.warnings),
        "data_fingerprint": task.fingerprint,
    }


# --------------------------------------------------------------------------------------------------
# Sections 1 to 4
# --------------------------------------------------------------------------------------------------
def data_summary(desc: dict) -> str:
    """The run's own data in one sentence: rows, ``s`` and its groups, ``y`` and what is positive."""
    if "n_rows" not in desc:
        return ""
    groups = desc.get("groups") or []
    parts = [f"{desc['n_rows']:,} rows"]
    if desc.get("s_column") is not None:
        named = [f"{g['group']} ({g['rows']:,} rows)" for g in groups]
        parts.append(f"sensitive attribute s = {desc['s_column']}"
                     + (", groups " + ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else ""))
    if desc.get("y_column") is not None:
        y1 = ", ".join(map(str, desc.get("y1_values") or [])) or (desc.get("label_names") or ["", ""])[-1]
        pos = sum(g["positives"] for g in groups)
        rate = f", {pos / desc['n_rows']:.1%} of rows" if groups and desc["n_rows"] else ""
        parts.append(f"label y = {desc['y_column']} (positive: {y1}{rate})")
    return "This run's data: " + "; ".join(parts) + "."


def section_data(desc: dict) -> dict:
    summary = data_summary(desc)
    blocks = [para(summary)] if summary else []
    blocks += [para(desc["description"])] if desc.get("description") else []
    y1 = ", ".join(map(str, desc.get("y1_values") or [])) or (desc.get("label_names") or ["", ""])[-1]
    fav = desc.get("positive_favourable", True)  # a description without it (older callers): as before
    dropped = int(desc.get("n_dropped_missing_sy", 0) or 0) + int(desc.get("n_dropped_missing_features", 0) or 0)
    feats = desc.get("features") or []
    blocks.append(defs([
        ("Data set", desc.get("dataset")),
        ("File", desc.get("source")),
        ("Rows used", f"{desc['n_rows']:,}" + (f" ({dropped:,} dropped for missing values)" if dropped else "")
         if "n_rows" in desc else None),
        ("Sensitive attribute (s)", desc.get("s_column")),
        ("Label (y)", desc.get("y_column")),
        ("Positive label (y = 1)", y1),
        ("What positive means", desc.get("positive_meaning")),
        ("For the person, a positive label is", None if "positive_favourable" not in desc else
         WORDS[bool(fav)] + ("" if desc.get("positive_favourable_how") == "said"
                             else f" ({desc.get('positive_favourable_how')})")),
        ("Features", f"{len(feats)}: " + ", ".join(map(str, feats)) if feats else None),
        ("Legitimate factor (conditional parity)", desc.get("strata_column")),
    ]))
    groups = desc.get("groups")
    if groups:
        rows = [[g["group"], f"{g['rows']:,}", f"{g['positives']:,}", fmt(g["base_rate"]), fmt(g["share"])]
                for g in groups]
        worst = groups[disadvantaged_group([g["base_rate"] for g in groups], fav)]["group"]
        blocks += [heading("Groups (whole table)"),
                   table(["group", "rows", "positives", "base rate P(y=1|s)", "share P(s)"], rows,
                         num_cols=(1, 2, 3, 4)),
                   para(disadvantaged_sentence(worst, fav, desc.get("positive_favourable_how", ASSUMED))
                        + " The readouts below use the training split, so their rates differ slightly from these.",
                        cls="note")]
    blocks += [para(w, cls="warn") for w in desc.get("warnings") or []]
    return {"title": "1. The data and its groups", "blocks": blocks}


def section_choices(readout: dict | None, criterion: Criterion, results: pd.DataFrame, seeds) -> dict:
    crit = criterion.measured_words
    models = list(dict.fromkeys(results["model"].astype(str))) if "model" in results.columns else []
    labels = [MODELS[m].label if m in MODELS else m for m in models]
    targets = sorted({float(t) for t in results.get("target_rate", pd.Series(dtype=float)).dropna()})
    items = [("Fairness criterion", crit),
             ("Target", readout.get("target_text") if readout else None),
             ("Models", ", ".join(labels)),
             ("Target rates PR_t tried", ", ".join(f"{t:.3f}" for t in targets) or "none (no fair model)"),
             ("Repeats (seeds)", f"{len(seeds)}: {', '.join(map(str, seeds))}" if seeds else None),
             ("Decision rule", decision_text(results))]
    if readout:
        items.append(("Keep-rate delta", fmt(readout.get("delta", 1.0))))
        if "n_train" in readout:
            items.append((f"Split (seed {readout.get('seed', 0)})",
                          f"{readout['n_train']:,} training rows, {readout['n_test']:,} test rows "
                          f"({readout.get('n_test_balanced', 0):,} in the balanced test set)"))
    return {"title": "2. Choices", "blocks": [defs(items)]}


def section_readout(desc: dict, readout: dict | None, results: pd.DataFrame) -> dict:
    title = "3. What the target rate means"
    if not readout:
        return {"title": title, "blocks": [para("No target-rate readout was supplied.", cls="note")]}
    t = readout.get("target_rate")
    pre = readout.get("presets") or {}
    explicit = (readout.get("target") or {}).get("tpr_target") is not None
    what = [(readout["target_text"], True)] if readout.get("target_text") else \
        ["target positive rate ", (f"PR_t = {fmt(t, 4)}", True), " for every group"]
    exact = "" if explicit or t is None else f"PR_t = {fmt(t, 4)}; "
    blocks = [para("Target: ", *what, f" ({exact}presets on the training split: min {fmt(pre.get('min'), 4)}, avg "
                   f"{fmt(pre.get('avg'), 4)}, max {fmt(pre.get('max'), 4)}). The fair models are trained to predict a "
                   "target label ȳ with the target's rates in each group; the table says how ȳ relates to the observed "
                   "label y.")]
    keys = sorted(readout.get("base_rates", {}), key=int)
    rows = []
    for k in keys:
        tr = readout["transition"][k]
        ts = readout["t"].get(k)
        rows.append([f"s={k}: {_group_name(desc, readout, k)}", fmt(readout["group_share"][k]),
                     fmt(readout["base_rates"][k]), fmt(ts) if ts is not None else "∞", fmt(tr["p_ybar1_given_y1"]),
                     fmt(tr["p_ybar1_given_y0"]), fmt(tr["p_y1_given_ybar0"]), fmt(tr["p_y1_given_ybar1"])])
    blocks.append(table(["group", "share", "base rate", "t_s", "P(ȳ=1|y=1)", "P(ȳ=1|y=0)", "P(y=1|ȳ=0)", "P(y=1|ȳ=1)"],
                        rows, num_cols=range(1, 8)))
    flips = readout.get("flips") or {}
    moved = readout.get("labels_moved") or {}
    blocks.append(bullets(describe_t(readout["t"].get(k), f"s={k} ({_group_name(desc, readout, k)})", flips.get(k),
                                     moved.get(k)) for k in keys))
    if explicit:  # the exact accuracy at the targets (Theorem 2 at their implied rates would overstate it)
        blocks.append(para(("Accuracy at these targets:", True), " every classifier that meets the TPR and TNR "
                           "targets in every group is exactly ", (fmt(readout.get("ceiling_at_target"), 4), True),
                           " accurate on the training split (the sum over groups of P(s) (TPR_t PR_b + TNR_t "
                           "(1 - PR_b)))."))
    else:
        blocks.append(para(("Theorem 2 ceiling:", True), f" no classifier with the positive rate PR_t = {fmt(t, 3)} in "
                           "every group can be more than ", (fmt(readout.get("ceiling_at_target"), 4), True),
                           " accurate on the training split."))
    if "s_predictability" in readout:
        auc = readout["s_predictability"]
        s_name = str(desc.get("s_column") or "s")
        blocks.append(para(("What a model that does not see s can do: ", True),
                           s_predictability_text(None if auc is None else float(auc), s_name, len(keys)),
                           " (s_predictability: the cross-validated AUC of a logistic regression predicting s from the "
                           "features on the training split.)"))
    if readout.get("strata"):
        blocks.append(para(("Conditional parity:", True), " the target holds within every stratum; weighted by the "
                           "strata's shares of the training rows the ceiling is ",
                           (fmt(readout.get("strata_ceiling_at_target"), 4), True), "."))
    names = [_group_name(desc, readout, str(k)) for k in sorted((readout.get("groups") or {}), key=int)]
    blocks += _ceiling_blocks(results, None if explicit else t, names or None)
    return {"title": title, "blocks": blocks}


def _ceiling_blocks(results: pd.DataFrame, t, group_names=None) -> list:
    need = {"model", "target_rate", "accuracy", "ceiling_at_measured"}
    if t is None or not need <= set(results.columns):
        return []
    tr = results["target_rate"].astype(float)
    near = results[np.isfinite(tr) & np.isclose(tr, float(t), atol=5e-4)]
    if near.empty:
        return [para("No model in these results was trained at exactly this target, so no measured accuracy is "
                     "shown beside the ceiling.", cls="note")]
    metrics = [m for m in ("accuracy", "ceiling_at_measured", "ceiling_at_target", column_of("worst_gap", POP))
               if m in near.columns]
    s = summarize(near, by=[c for c in ("model", "label") if c in near.columns], metrics=metrics)
    key = "label" if "label" in near.columns else "model"
    rows = [[r.get("label", r["model"]), cell(r, "accuracy"), cell(r, "ceiling_at_measured"),
             cell(r, "ceiling_at_target"),
             ceiling_verdict(r["accuracy_mean"], r["ceiling_at_measured_mean"],
                             landing_verdict(near[near[key] == r[key]], group_names))]
            for _, r in s.iterrows()]
    where = str(near["eval_set"].dropna().iloc[0]) if "eval_set" in near.columns and near["eval_set"].notna().any() \
        else "evaluation"
    return [heading(f"Measured accuracy beside the ceiling ({where} rows)"),
            table(["model", "measured accuracy", "ceiling at its own group rates", "ceiling at PR_t",
                   "reached the target, within the ceiling"],
                  rows, num_cols=(1, 2, 3)),
            para("Both ceilings are computed on the same rows as the accuracy: the first at the positive rates the "
                 "model actually produced, the second at the target. The ceiling at PR_t is what a classifier that "
                 "reaches the target could achieve, so a run that did not reach it (worst gap on the population over "
                 "0.03) is not said to be within it.", cls="note")]


def _results_table(summary: pd.DataFrame, criterion: Criterion, prefix: str) -> dict:
    from ..figures.results_table import n_groups_of, result_columns  # lazy: heavy, defers pandas

    cols = [(prefix + k, h) for k, h in result_columns(criterion, n_groups_of(summary))]
    cols += [(prefix + "worst_gap", "worst gap")]
    cols = [(k, h) for k, h in cols if f"{k}_mean" in summary.columns]
    rows, classes = [], []
    for _, r in summary.iterrows():
        t = r.get("target_rate", np.nan)
        rows.append([r.get("label", r["model"]), fmt(t) if pd.notna(t) else "–"] + [cell(r, k) for k, _ in cols]
                    + [int(r.get("repeats", 1))])
        classes.append("fair" if uses_target(r["model"]) else "")
    worst = worst_groups(summary, prefix)
    if worst is not None:  # the group that misses most, beside the worst gap
        i = [k for k, _ in cols].index(prefix + "worst_gap")
        for row, name in zip(rows, worst):
            row[i + 2] = f"{row[i + 2]} ({name})" if name else row[i + 2]
    return table(["model", "PR_t"] + [h for _, h in cols] + ["runs"], rows, num_cols=range(1, len(cols) + 3),
                 row_classes=classes)


def worst_groups(summary: pd.DataFrame, prefix: str):
    """The name(s) of the group with the worst gap, per summary row (``None`` without gaps)."""
    col = f"{prefix}worst_gap_group_names"
    return list(summary[col].astype(object).fillna("")) if col in summary.columns else None


def decision_text(results: pd.DataFrame) -> str | None:
    """The runs' decision rule(s) in words, saying where a rule decides with s."""

    if "decision" not in results.columns:
        return f"{PAPER_RULE}: " + RULES[PAPER_RULE].explanation
    parts = []
    for rule in dict.fromkeys(results["decision"].astype(str)):
        info = RULES.get(rule)
        parts.append(f"{rule}: {info.explanation}" if info else rule)
    return " ".join(parts)


def with_worst_groups(summary: pd.DataFrame, results: pd.DataFrame, by) -> pd.DataFrame:
    """``summary`` with the worst-gap group names of its rows' repeats (``<prefix>worst_gap_group_names``)."""
    by = [b for b in by if b in results.columns and b in summary.columns]
    out = summary
    for where in (POP, EVAL):
        col = column_of("worst_gap_group", where)
        if col not in results.columns or not by:
            continue
        names = results.groupby(by, dropna=False, sort=False)[col].agg(
            lambda g: "/".join(dict.fromkeys(x for x in map(str, g) if x and x != "nan")))
        out = out.merge(names.rename(col + "_names").reset_index(), on=by, how="left")
    return out


def error_rates_table(summary: pd.DataFrame, group_names, prefix: str = POP_PREFIX,
                      favourable: bool = True, words: dict | None = None) -> dict | None:
    """:func:`fairdash.evaluation.metrics.error_rates_frame` as a report table."""
    frame = error_rates_frame(summary, group_names, prefix, favourable, words)
    if frame is None:
        return None
    return table(list(frame.columns), frame.values.tolist(), num_cols=range(2, frame.shape[1]))


def section_results(summary: pd.DataFrame, criterion: Criterion, group_names, results: pd.DataFrame,
                    s_name: str = "s", favourable: bool = True, words: dict | None = None) -> dict:
    groups_text = ", ".join(f"s={j} is {g}" for j, g in enumerate(map(str, group_names))) or "s=0 and s=1"
    eval_set = criterion.eval_set + " set"
    if "eval_set" in results.columns and results["eval_set"].notna().any():
        e = str(results["eval_set"].dropna().iloc[0])
        eval_set = e if e.endswith("set") else e + " set"
    blocks = [para("Mean ± standard deviation over repeats. PR = positive rate P(ŷ=1|s), TPR = true positive rate; "
                   f"ratios are the smallest group value over the largest (1 is fair). {groups_text}. Models in bold "
                   "are trained towards the target.")]
    if any(c.startswith(POP_PREFIX) for c in summary.columns) and criterion.balanced_eval:
        blocks += [heading("On the population the model will meet (the ordinary test set)"),
                   para("The held-out rows as they come, distributed like the data the model will score. Worst gap = "
                        "the largest |group rate − its target| over the groups, with that group's name: the group that "
                        "misses the target most."),
                   _results_table(summary, criterion, POP_PREFIX),
                   heading(f"On the paper's {eval_set}"),
                   para("The paper's protocol: both groups are cut to the same base rate, so the rates here are lower "
                        "than in the population for the group with the higher base rate, and they sit below PR_t by "
                        "design.")]
    else:
        blocks.append(para(f"Measured on the {eval_set}."))
    blocks.append(_results_table(summary, criterion, ""))
    errors = error_rates_table(summary, group_names, POP_PREFIX, favourable, words)
    if errors is not None:
        blocks += [heading("Error rates per group, on the population"),
                   para("Mean over repeats, with its 95% interval (one repeat: a bootstrap of the test rows, "
                        "stratified by group; several: Nadeau and Bengio's corrected resampled t over the repeats, "
                        "whose training rows overlap). FPR = P(ŷ=1 | y=0): people with a negative label given a "
                        "positive decision; FNR = P(ŷ=0 | y=1): people with a positive label "
                        "given a negative one; precision = P(y=1 | ŷ=1); calibration error: the gap between the "
                        "model's mean score and the share of positive labels in each tenth of [0, 1], weighted by "
                        "rows (0: a score of 0.7 is a 70% chance in that group)."), errors]
        confusion = confusion_frame(results, group_names, POP_PREFIX)
        if confusion is not None:
            blocks += [para("Each group's confusion matrix on the population (the mean count over repeats where there "
                            "are several):"),
                       table(list(confusion.columns), confusion.values.tolist(), num_cols=range(2, 6))]
    blocks += [para(n, cls="warn") for n in result_notes(results)]
    blocks += [para(n, cls="warn") for n in moved_away_summary(results, group_names)]
    blocks += [para(("Price of deciding without s: ", True), n) for n in price_sentences(results, s_name, group_names)]
    blocks += who_pays_blocks(results, s_name, group_names)
    if "decides_with_s" in results.columns and results["decides_with_s"].astype(bool).any():
        who = ", ".join(dict.fromkeys(results.loc[results["decides_with_s"].astype(bool), "label"].astype(str)))
        blocks.append(para(("Decides with s: ", True), f"{who} need every person's group when deciding (one threshold "
                           "per group). The paper's method avoids that, and the law forbids it in some settings.",
                           cls="warn"))
    return {"title": "4. Results against the baselines", "blocks": blocks}


def who_pays_blocks(results: pd.DataFrame, s_name: str, group_names) -> list:
    """Who pays for deciding without s: the paragraph per target rate and the table of people decided differently."""
    tables = who_pays_tables(results)
    if not tables:
        return []
    frame = who_pays_frame(tables, group_names)
    return ([para(("Who pays: ", True), n) for n in who_pays_sentences(results, s_name, group_names)]
            + [table(list(frame.columns), frame.values.tolist(), num_cols=(2, 3, 4, 6))])


def _computed_with(config, versions) -> str | None:
    """The versions and processor the results were computed with, where the run's record says them and
    they differ from the report's own (a report made on another machine, or later)."""
    was = (config or {}).get("computed_with")
    if not isinstance(was, dict) or was == versions:
        return None
    return ", ".join(f"{k} {v}" for k, v in was.items())


def repro_blocks(command, seeds, fingerprint, versions, results, config, created) -> list:
    devices = sorted(set(map(str, results["device"].dropna()))) if "device" in results.columns else []
    blocks = [defs([("Report created", created), ("Seeds", ", ".join(map(str, seeds)) if seeds else None),
                    ("Data fingerprint", fingerprint), ("Trained on", ", ".join(devices) if devices else None),
                    ("Package versions", ", ".join(f"{k} {v}" for k, v in versions.items() if k != "processor")),
                    ("Processor", versions.get("processor")),
                    ("Results computed with", _computed_with(config, versions))])]
    if command:
        blocks += [heading("Command that reproduces these numbers"), code(command)]
    if config:
        blocks += [heading("Configuration (JSON)"), code(json.dumps(config, indent=2, default=str))]
    return blocks


# --------------------------------------------------------------------------------------------------
# Section 6
# --------------------------------------------------------------------------------------------------
def plain_summary(summary: pd.DataFrame, criterion: Criterion, readout: dict | None, desc: dict) -> list[str]:
    """Plain-language sentences about the trade-off, from the summary table (no HTML): on the population
    the model will meet first, with the group that misses its target most, then on the paper's
    evaluation rows, each named."""
    key = criterion.ratio
    what = criterion.ratio_plain
    if summary.empty or f"{key}_mean" not in summary.columns:
        return ["There are no results to summarise."]
    s = summary.copy()
    s["_fair"] = [uses_target(m) for m in s["model"]]
    s["_label"] = s.get("label", s["model"]).astype(str)
    out = []
    eval_set = criterion.eval_set + " set"
    sets = [(POP_PREFIX, "On the population the model will meet (the ordinary test set)")] \
        if column_of(key, POP) + "_mean" in s.columns and criterion.balanced_eval else []
    sets.append(("", f"On the paper's {eval_set}" if sets else f"On the {eval_set} (the population)"))
    for prefix, where in sets:
        out += [f"{where}:"] + _trade_off(s, prefix, key, what)
    t = readout.get("target_rate") if readout else None
    if t is not None and readout.get("ceiling_at_target") is not None:
        out.append(f"Theorem 2 says that a classifier giving every group the positive rate {fmt(t)} cannot be more "
                   f"than {fmt(readout['ceiling_at_target'], pct=True)} accurate on the training data; part of any "
                   "accuracy lost is the price of the target itself, not a weakness of the model.")
    reps = int(s["repeats"].max()) if "repeats" in s.columns else 1
    out.append(f"Each number is an average over {reps} random splits; differences smaller than the ± spreads are "
               "within the noise." if reps > 1 else
               "These numbers come from a single split; repeat with more seeds before drawing firm conclusions.")
    if desc.get("positive_meaning"):
        out.append(f"Remember what a positive prediction means here: {desc['positive_meaning']}.")
    return out


def _trade_off(s: pd.DataFrame, prefix: str, key: str, what: str) -> list[str]:
    """The trade-off sentences on one set of rows (``prefix``: the population's, or empty for the evaluation
    rows)."""
    acc, ratio, worst = f"{prefix}accuracy_mean", f"{prefix}{key}_mean", f"{prefix or EVAL_PREFIX}worst_gap_mean"
    names = f"{prefix or EVAL_PREFIX}worst_gap_group_names"
    if acc not in s.columns or ratio not in s.columns:
        return []
    out = []
    plain = s[~s["_fair"]]
    ref = None
    if "lr" in set(plain["model"]):
        ref = plain[plain["model"] == "lr"].iloc[0]
    elif not plain.empty:
        ref = plain.sort_values(acc, ascending=False).iloc[0]

    def miss(r) -> str:
        if worst not in r or not np.isfinite(r[worst]):
            return ""
        group = r.get(names, "") if isinstance(r.get(names, ""), str) else ""
        return f"; the group furthest from its target{f' ({group})' if group else ''} misses it by {fmt(r[worst])}"

    if ref is not None:
        out.append(f"The reference model {ref['_label']} is right on {fmt(ref[acc], pct=True)} of these rows; its "
                   f"{what} is {fmt(ref[ratio], 2)}{miss(ref)}.")
    for label, g in s[s["_fair"]].groupby("_label", sort=False):
        g = g[g[ratio].notna()]
        if g.empty:
            continue
        best = g.sort_values(ratio, ascending=False).iloc[0]
        sent = (f"{label} at PR_t = {fmt(best['target_rate'])} reaches a ratio of {fmt(best[ratio], 2)} "
                f"with accuracy {fmt(best[acc], pct=True)}")
        if ref is not None and np.isfinite(ref[acc]):
            diff = 100 * (best[acc] - ref[acc])
            sent += (f", {abs(diff):.1f} percentage points {'less' if diff < 0 else 'more'} than {ref['_label']}"
                     if abs(diff) >= 0.05 else f", the same accuracy as {ref['_label']}")
        out.append(sent + miss(best) + ".")
        if len(g) > 1:
            out.append(f"Across the {len(g)} target rates tried, {label}'s ratio ranges from "
                       f"{fmt(g[ratio].min(), 2)} to {fmt(g[ratio].max(), 2)} and its accuracy from "
                       f"{fmt(g[acc].min(), pct=True)} to {fmt(g[acc].max(), pct=True)}: "
                       "the target rate is the dial between the two.")
    fairest = s.sort_values(ratio, ascending=False).iloc[0]
    most_acc = s.sort_values(acc, ascending=False).iloc[0]
    out.append(f"Most accurate: {most_acc['_label']} ({fmt(most_acc[acc], pct=True)}). Fairest by this "
               f"ratio: {fairest['_label']} ({fmt(fairest[ratio], 2)}).")
    return out
