"""Hand-made results tables like run_experiment's, for the figure and page tests."""
import numpy as np
import pandas as pd


# --------------------------------------------------------------------------------------------------
# The target view (issue 18, item 6)
# --------------------------------------------------------------------------------------------------
def target_results(seeds=(0,), moved_away="", group_count=2) -> pd.DataFrame:
    """Hand-made results rows with the per-group target columns: FairLR at PR_t 0.30 (population 0.158 /
    0.259, balanced 0.158 / 0.158, the issue's Adult numbers) and plain LR without a target."""
    rows = []
    for seed in seeds:
        d = 0.01 * seed
        fair = {"model": "fair-lr", "label": "FairLR", "target_rate": 0.3, "seed": seed, "accuracy": 0.82,
                "pr_0": 0.158, "pr_1": 0.158, "pop_pr_0": 0.158 + d, "pop_pr_1": 0.259,
                "tpr_0": 0.5, "tpr_1": 0.6, "pop_tpr_0": 0.52, "pop_tpr_1": 0.61, "moved_away": moved_away,
                "pop_worst_gap": 0.142 - d, "pop_worst_gap_group": "Female", "bal_worst_gap": 0.142,
                "bal_worst_gap_group": "Female", "decision": "threshold", "decides_with_s": False}
        plain = {"model": "lr", "label": "LR", "target_rate": np.nan, "seed": seed, "accuracy": 0.85,
                 "pr_0": 0.1, "pr_1": 0.25, "pop_pr_0": 0.08, "pop_pr_1": 0.31, "tpr_0": 0.45, "tpr_1": 0.62,
                 "pop_tpr_0": 0.44, "pop_tpr_1": 0.63, "moved_away": "", "pop_worst_gap": np.nan,
                 "pop_worst_gap_group": "", "bal_worst_gap": np.nan, "bal_worst_gap_group": "",
                 "decision": "threshold", "decides_with_s": False}
        for r, t in ((fair, 0.3), (plain, np.nan)):
            for g in range(group_count):
                r.setdefault(f"pr_{g}", 0.2)
                r.setdefault(f"pop_pr_{g}", 0.2)
                r[f"target_{g}"] = t
                r[f"pop_gap_{g}"] = r[f"pop_pr_{g}"] - t
                r[f"bal_gap_{g}"] = r[f"pr_{g}"] - t
                r[f"pop_moved_{g}"] = ""
        rows += [fair, plain]
    df = pd.DataFrame(rows)
    for p in ("", "pop_"):
        df[f"{p}pr_ratio"] = df[f"{p}pr_0"] / df[f"{p}pr_1"]
        df[f"{p}tpr_ratio"] = df[f"{p}tpr_0"] / df[f"{p}tpr_1"]
    return df


def results_table(targets_=(0.15, 0.2, 0.25), seeds=(0, 1, 2)) -> pd.DataFrame:
    """A tidy results table like run_experiment's: FairLR at several targets, LR once per seed."""
    rng = np.random.default_rng(0)
    rows = []
    for seed in seeds:
        for t in targets_:
            rows.append({"model": "fair-lr", "label": "FairLR", "criterion": "dp", "target_rate": t, "seed": seed,
                         "accuracy": 0.85 - 0.1 * abs(t - 0.2) + rng.normal(0, 0.005),
                         "pr_0": t - 0.01 + rng.normal(0, 0.01), "pr_1": t + 0.01 + rng.normal(0, 0.01),
                         "tpr_0": 0.6 + rng.normal(0, 0.02), "tpr_1": 0.65 + rng.normal(0, 0.02)})
        rows.append({"model": "lr", "label": "LR", "criterion": "dp", "target_rate": np.nan, "seed": seed,
                     "accuracy": 0.86 + rng.normal(0, 0.005), "pr_0": 0.08, "pr_1": 0.2,
                     "tpr_0": 0.5, "tpr_1": 0.65})
    df = pd.DataFrame(rows)
    df["pr_ratio"] = np.minimum(df.pr_0, df.pr_1) / np.maximum(df.pr_0, df.pr_1)
    df["tpr_ratio"] = np.minimum(df.tpr_0, df.tpr_1) / np.maximum(df.tpr_0, df.tpr_1)
    return df
