"""Coverage of the 95% intervals FairDash prints (issue 45): many fresh tables from one known process, each run
through the project's own pipeline end to end (``run_experiment`` over R repeats, ``price_table``, ``summarize``),
and how often each printed interval holds the truth, with the binomial uncertainty of that share.

The known process (:func:`known_table`): three groups (shares 0.5, 0.3, 0.2) with their own base rates; ``x1``
acts per group (its slope is +2.0, -1.5 and +0.5: a blind score cannot rank every group at once), ``x2`` acts the
same way in all, and ``proxy`` is a noisy copy of s (s + N(0, 0.8)), through which a rule that does not see s
can still tell the groups apart. ``proxy=False`` leaves the copy out (then a single cut lands on every group's
rate, so LR cut at the overall rate is a blind rule that lands: the cheap ``fixed`` rules of the test).

The truth is the procedure's expected value, estimated without any model of our own: each split's price (or rate)
is measured on test rows its rules never saw, so its expectation over fresh tables is the expected price of the
procedure trained on ``n_train`` rows; the grand mean over every table's splits estimates it (its standard error is
printed beside it, and is small next to the intervals' half-widths).

Three intervals are checked, each at the repeat level and on one split:

- the price of deciding without s (``price_table``): over R repeats Nadeau and Bengio's corrected resampled t (and,
  for the before/after, the plain Student's t over the same splits' prices); on one split its paired bootstrap,
  which covers the test rows' noise only and says so;
- one group's positive rate of the blind rule on the population (``summarize``'s ``pop_pr_<g>_lo/_hi``), the
  smallest group's.

    python -m benchmarks.bench_coverage [--tables 200] [--rows 3000] [--repeats 10] [--rules reduction|fixed]
                                        [--n-jobs 2]
"""
from __future__ import annotations

import argparse
import math
import os
import tempfile
import time

import numpy as np
import pandas as pd

from .common import Recording

SHARES = (0.5, 0.3, 0.2)
INTERCEPT = (-1.0, -0.3, 0.4)  # each group's base rate differs
SLOPE = (2.0, -1.5, 0.5)  # x1 acts per group
SHARED = 0.8  # x2 acts the same way in every group
PROXY_NOISE = 0.8  # proxy = s + N(0, PROXY_NOISE): a noisy copy of s
NAMES = ("a", "b", "c")
RULES = {  # (models, decision rules) of each set of rules
    "reduction": (("lr", "target-reduction"), ("threshold", "group-rates")),
    "fixed": (("lr",), ("overall-rate", "group-rates")),
}


def known_table(n: int, seed: int, *, groups: int = 3, proxy: bool = True) -> pd.DataFrame:
    """``n`` rows of the known process (module docstring): ``x1``, ``x2``, ``proxy`` (where asked), ``grp`` and
    ``y``."""
    rng = np.random.default_rng(seed)
    shares = np.asarray(SHARES[:groups], dtype=float)
    g = rng.choice(groups, size=n, p=shares / shares.sum())
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    logit = np.asarray(INTERCEPT)[g] + np.asarray(SLOPE)[g] * x1 + SHARED * x2
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(int)
    out = {"x1": x1, "x2": x2}
    if proxy:
        out["proxy"] = g + rng.normal(scale=PROXY_NOISE, size=n)
    out.update({"grp": np.asarray(NAMES)[g], "y": y})
    return pd.DataFrame(out)


def table_intervals(df: pd.DataFrame, *, rules: str = "reduction", repeats: int = 10, pr_t: float = 0.30,
                    cache_dir=None) -> dict:
    """One table through the pipeline: for the price, each split's price and paired interval and, over the repeats,
    the mean with its corrected and its plain interval; for the smallest group's positive rate of the priced blind
    rule on the population, each split's rate and bootstrap interval and the mean with its interval over the
    repeats (``summarize``)."""
    from fairdash import data
    from fairdash.evaluation.blindness import PRICE, PRICE_HI, PRICE_LO, price_table
    from fairdash.evaluation.intervals import interval_over_splits
    from fairdash.evaluation.metric_table import POP, column_of
    from fairdash.evaluation.metrics import summarize
    from fairdash.targeting.target_spec import make_target_spec
    from fairdash.work.experiments import ExperimentPlan, run_experiment
    from fairdash.work.fit_cache import FitCache

    models, decisions = RULES[rules]
    task = data.build_task(df, data.TaskSpec("grp", "y", (NAMES[1],), ("1",), s_multi=True))
    with tempfile.TemporaryDirectory() as tmp:
        cache = FitCache(cache_dir or tmp)
        res = run_experiment(ExperimentPlan(task, list(models), [pr_t], list(range(repeats)),
                                            target=make_target_spec("dp", pr_t), decisions=list(decisions),
                                            device="cpu"), cache=cache).results
    table = price_table(res)
    row = table.iloc[0] if len(table) else None
    splits = res.groupby("seed").first()
    prices = splits[PRICE].astype(float)
    out = {"price": float(row["price_of_blindness"]) if row is not None else math.nan,
           "price_lo": float(row["price_lo"]) if row is not None else math.nan,
           "price_hi": float(row["price_hi"]) if row is not None else math.nan,
           "split_price": prices.tolist(), "split_lo": splits[PRICE_LO].astype(float).tolist(),
           "split_hi": splits[PRICE_HI].astype(float).tolist(), "priced_splits": int(prices.notna().sum())}
    out["plain_lo"], out["plain_hi"] = interval_over_splits(prices, within=(-1.0, 1.0), test_to_train=0.0)
    # the smallest group's positive rate, of the blind rule priced on most splits
    g = len(task.group_names) - 1
    label = str(splits.loc[prices.notna(), "blind_rule"].mode().iloc[0]) if prices.notna().any() else None
    rate = column_of("pr", POP, g)
    if label is not None:
        rows = res[res["label"] == label]
        summary = summarize(rows, by=("label",), metrics=[rate]).iloc[0]
        out.update({"rate": float(summary[f"{rate}_mean"]), "rate_lo": float(summary[f"{rate}_lo"]),
                    "rate_hi": float(summary[f"{rate}_hi"]), "split_rate": rows[rate].astype(float).tolist(),
                    "split_rate_lo": rows[rate + "_lo"].astype(float).tolist(),
                    "split_rate_hi": rows[rate + "_hi"].astype(float).tolist()})
    return out


def binomial_interval(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson's interval of a share ``k / n`` (the product's own, ``intervals.wilson_interval``)."""
    from fairdash.evaluation.intervals import wilson_interval

    lo, hi = wilson_interval(k, n, level)
    return float(lo), float(hi)


def coverage(records: list[dict]) -> dict:
    """Each interval's coverage of the estimated truth over the tables: ``{name: (held, tables, share, lo, hi)}``,
    and the truths themselves with their standard errors. Repeat level: one interval a table; one split: the first
    priced split of each table."""
    def mean_se(values):
        v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
        return float(v.mean()), float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else math.nan

    # the truth: the grand mean over every table's splits, through each table's mean (tables are independent)
    price_true, price_se = mean_se([np.nanmean(r["split_price"]) for r in records
                                    if np.isfinite(r["split_price"]).any()])
    rated = [r for r in records if "split_rate" in r]
    rate_true, rate_se = mean_se([np.nanmean(r["split_rate"]) for r in rated]) if rated else (math.nan, math.nan)

    def held(pairs, truth):
        pairs = [(lo, hi) for lo, hi in pairs if np.isfinite(lo) and np.isfinite(hi)]
        k = sum(lo <= truth <= hi for lo, hi in pairs)
        lo, hi = binomial_interval(k, len(pairs))
        return {"held": int(k), "tables": len(pairs), "share": k / len(pairs) if pairs else math.nan,
                "share_lo": lo, "share_hi": hi}

    def first(r, key_lo, key_hi, key):
        for v, lo, hi in zip(r[key], r[key_lo], r[key_hi]):
            if np.isfinite(v):
                return lo, hi
        return math.nan, math.nan

    return {
        "truth": {"price": price_true, "price_se": price_se, "rate": rate_true, "rate_se": rate_se},
        "price, repeats, corrected t": held([(r["price_lo"], r["price_hi"]) for r in records], price_true),
        "price, repeats, plain t (before)": held([(r["plain_lo"], r["plain_hi"]) for r in records], price_true),
        "price, one split, paired bootstrap": held([first(r, "split_lo", "split_hi", "split_price")
                                                    for r in records], price_true),
        "rate, repeats, corrected t": held([(r["rate_lo"], r["rate_hi"]) for r in rated], rate_true),
        "rate, one split, bootstrap": held([first(r, "split_rate_lo", "split_rate_hi", "split_rate") for r in rated],
                                           rate_true),
    }


def one_table(seed: int, args) -> dict:
    import torch

    torch.set_num_threads(1)
    fixed = args.rules == "fixed"  # one cut for all lands only where the features say nothing of s: two groups
    df = known_table(args.rows, 10_000 + seed, groups=2 if fixed else 3, proxy=not fixed)
    return table_intervals(df, rules=args.rules, repeats=args.repeats, pr_t=args.pr_t)


def markdown(cov: dict, args, seconds: float) -> str:
    t = cov["truth"]
    lines = [f"{args.tables} tables of {args.rows} rows, rules `{args.rules}`, {args.repeats} repeats, DP at PR_t "
             f"{args.pr_t}; truth (grand mean over the tables' splits): price {100 * t['price']:.2f} points "
             f"(SE {100 * t['price_se']:.2f}), smallest group's rate {t['rate']:.4f} (SE {t['rate_se']:.4f}); "
             f"{seconds:.0f} s.", "", "| interval | held / tables | coverage | 95% binomial interval |",
             "|---|---|---|---|"]
    for name, c in cov.items():
        if name == "truth":
            continue
        lines.append(f"| {name} | {c['held']} / {c['tables']} | {100 * c['share']:.1f}% | "
                     f"{100 * c['share_lo']:.1f}% to {100 * c['share_hi']:.1f}% |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", type=int, default=200)
    p.add_argument("--rows", type=int, default=3000)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--pr-t", type=float, default=0.30)
    p.add_argument("--rules", choices=sorted(RULES), default="reduction")
    p.add_argument("--n-jobs", type=int, default=os.cpu_count() or 1)
    args = p.parse_args(argv)
    with Recording("bench_coverage", options=vars(args), torch_device="cpu") as rec:
        os.environ.setdefault("FAIRDASH_DEVICE", "cpu")
        from joblib import Parallel, delayed

        t0 = time.perf_counter()
        records = Parallel(n_jobs=args.n_jobs)(delayed(one_table)(k, args) for k in range(args.tables))
        seconds = time.perf_counter() - t0
        cov = coverage(records)
        rec.results = {"coverage": cov, "tables": records}
        rec.markdown = markdown(cov, args, seconds) + f"\n\n{rec.machine_line()}"
        print(rec.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
