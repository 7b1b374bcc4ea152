"""Turn sweep results into the paper's tables, side by side with the paper's figures.

    python -m fairdash sweep --paper adult-sex --models all --out runs/adult-sex.csv   # (and adult-race)
    python -m benchmarks.paper_tables runs/adult-sex.csv runs/adult-race.csv [runs/compas-race.csv ...]

Prints Markdown: Table 1 (Adult, demographic parity, balanced test set; PR ratio min/max and accuracy,
mean ± std over repeats) beside the paper's numbers with a flag where we differ by more than two of our
standard deviations (or the paper's, whichever is larger), per-model fit time totals, and the COMPAS
equality-of-opportunity series (TPR per group over PR_t).
"""
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from benchmarks.common import Recording
from fairdash.evaluation.metrics import format_mean_std, summarize

PAPER_TABLE1 = {  # model: (race PR ratio, sd, race accuracy, sd, sex PR ratio, sd, sex accuracy, sd)
    "gp": (0.80, 0.07, 0.888, 0.007, 0.54, 0.05, 0.900, 0.006),
    "lr": (0.83, 0.06, 0.884, 0.007, 0.52, 0.03, 0.898, 0.003),
    "svm": (0.89, 0.06, 0.899, 0.004, 0.49, 0.05, 0.913, 0.004),
    "fair-gp": (0.86, 0.07, 0.888, 0.006, 0.87, 0.09, 0.902, 0.007),
    "fair-lr": (0.90, 0.06, 0.874, 0.009, 0.93, 0.04, 0.886, 0.012),
    "zafar-accuracy": (0.67, 0.17, 0.808, 0.016, 0.77, 0.08, 0.853, 0.017),
    "zafar-fairness": (0.81, 0.06, 0.879, 0.009, 0.74, 0.11, 0.897, 0.004),
    "kamiran": (0.87, 0.07, 0.882, 0.007, 0.96, 0.03, 0.900, 0.004),
    "agarwal": (0.86, 0.08, 0.883, 0.008, 0.65, 0.04, 0.900, 0.004),
}
ORDER = list(PAPER_TABLE1)


def _flag(mean, std, paper, paper_sd) -> str:
    return " **(>2σ)**" if abs(mean - paper) > 2 * max(std, paper_sd) else ""


def table1(frames: dict[str, pd.DataFrame]) -> str:
    rows = ["| model | attribute | PR ratio (ours) | PR ratio (paper) | accuracy (ours) | accuracy (paper) | repeats | "
            "mean fit (s) |",
            "|---|---|---|---|---|---|---|---|"]
    for attr, off in (("sex", 4), ("race", 0)):
        df = frames.get(attr)
        if df is None:
            continue
        s = summarize(df, by=("model",), metrics=["pr_ratio", "accuracy", "fit_seconds"]).set_index("model")
        for m in ORDER:
            if m not in s.index:
                continue
            r = s.loc[m]
            p = PAPER_TABLE1[m]
            rows.append(
                f"| {m} | {attr} | {format_mean_std(r.pr_ratio_mean, r.pr_ratio_std, 2)}"
                f"{_flag(r.pr_ratio_mean, r.pr_ratio_std, p[off], p[off + 1])} | {p[off]:.2f} ± {p[off + 1]:.2f} | "
                f"{format_mean_std(r.accuracy_mean, r.accuracy_std)}"
                f"{_flag(r.accuracy_mean, r.accuracy_std, p[off + 2], p[off + 3])}"
                f" | {p[off + 2]:.3f} ± {p[off + 3]:.3f} | {int(r.repeats)} | {r.fit_seconds_mean:.1f} |")
    return "\n".join(rows)


def fit_time_split(frames: dict[str, pd.DataFrame]) -> str:
    df = pd.concat(frames.values())
    tot = df.groupby("model")["fit_seconds"].agg(["sum", "count", "mean"]).sort_values("sum", ascending=False)
    rows = ["| model | fits | total fit time (s) | mean per fit (s) | share |", "|---|---|---|---|---|"]
    for m, r in tot.iterrows():
        rows.append(f"| {m} | {int(r['count'])} | {r['sum']:.0f} | {r['mean']:.1f} | "
                    f"{r['sum'] / tot['sum'].sum():.0%} |")
    return "\n".join(rows)


def eo_series(df: pd.DataFrame) -> str:
    s = summarize(df, metrics=["tpr_0", "tpr_1", "tpr_ratio", "accuracy"])
    rows = ["| model | PR_t | TPR_s0 | TPR_s1 | TPR ratio | accuracy |", "|---|---|---|---|---|---|"]
    for _, r in s.sort_values(["model", "target_rate"]).iterrows():
        t = "" if not np.isfinite(r.target_rate) else f"{r.target_rate:.1f}"
        rows.append(f"| {r.model} | {t} | {format_mean_std(r.tpr_0_mean, r.tpr_0_std)} | "
                    f"{format_mean_std(r.tpr_1_mean, r.tpr_1_std)} | "
                    f"{format_mean_std(r.tpr_ratio_mean, r.tpr_ratio_std)} | "
                    f"{format_mean_std(r.accuracy_mean, r.accuracy_std)} |")
    return "\n".join(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+", help="sweep CSVs (python -m fairdash sweep --paper ... --out FILE)")
    paths = ap.parse_args(argv).csv
    with Recording("paper_tables", {"inputs": [str(p) for p in paths]}) as rec:
        rec.markdown = tables(paths)
        print(rec.markdown)


def tables(paths) -> str:
    frames, eo = {}, {}
    for p in paths:
        df = pd.read_csv(p)
        name = str(p)
        if (df["criterion"] == "eo").all():
            eo[name] = df
        else:
            attr = "race" if "race" in name else "sex"
            frames[attr] = pd.concat([frames[attr], df]) if attr in frames else df
    out = []
    if frames:
        out += ["## Table 1 (Adult, demographic parity, balanced test set)\n", table1(frames),
                "\n### Fit time per model\n", fit_time_split(frames)]
    for name, df in eo.items():
        out += [f"\n## Equality of opportunity: {name}\n", eo_series(df)]
    return "\n".join(out)


if __name__ == "__main__":
    main()
