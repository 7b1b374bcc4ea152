"""ZafarAccuracy as the paper ran it, against the solver on FairDash's scaled features (issue 15).

    python -m benchmarks.zafar_ethicml --setups adult-sex,adult-race --seeds 0-9 \\
        --out benchmarks/results/DATE-zafar-accuracy-ethicml.csv
    python -m benchmarks.zafar_ethicml --setups adult-sex --seeds 0-2 --modes raw-numerical --out /tmp/z.csv

The paper's Table 1 came from EthicML's wrapper of Zafar et al.'s ``train_model`` (``gamma=0.5``),
which received EthicML's Adult features: numeric columns in raw units, one-hot columns as 0/1. Modes:

- ``scaled``: ZafarAccuracy on FairDash's preprocessed ``X`` (numeric columns standardised), as
  ``fairdash sweep`` fits it;
- ``raw``: the same model solved in raw units (``feature_scale``/``feature_offset`` from the fitted
  scaler, :func:`fairdash.models.zafar.raw_units`), analytic gradients;
- ``raw-numerical``: as ``raw`` with finite-difference gradients in the second stage, as the original
  code did (slow: about a minute per fit).

Each row: PR per group, PR ratio (min/max) and accuracy on the balanced test set (METHOD.md's
protocol, the same split and rows as ``fairdash sweep``), plus the ordinary test set's PR ratio and
accuracy, the covariance and loss ratio reached, and the fit time. One thread per process.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402 (after the thread settings)
import pandas as pd  # noqa: E402 (after the thread settings)

from benchmarks.common import Recording  # noqa: E402 (after the thread settings)
from fairdash.data import paper_arrays  # noqa: E402 (after the thread settings)
from fairdash.models.zafar import ZafarAccuracy, raw_units  # noqa: E402 (after the thread settings)

MODES = ("scaled", "raw", "raw-numerical")


def _rates(pred, y, s, idx):
    p, yy, ss = pred[idx], y[idx], s[idx]
    pr = [float(p[ss == g].mean()) for g in np.unique(ss)]
    return pr, float(min(pr) / max(pr)) if max(pr) > 0 else float("nan"), float((p == yy).mean())


def run_one(setup: str, seed: int, mode: str) -> dict:
    a = paper_arrays(setup, seed)
    kw = {}
    if mode.startswith("raw"):
        scale, offset = raw_units(a.preprocessor, a.X_train.shape[1])
        kw = {"feature_scale": scale.tolist(), "feature_offset": offset.tolist(),
              "numerical_gradients": mode == "raw-numerical"}
    t0 = time.perf_counter()
    m = ZafarAccuracy(**kw).fit(a.X_train, a.y_train, a.s_train)
    seconds = time.perf_counter() - t0
    pred = m.predict(a.X_test)
    pr, ratio, acc = _rates(pred, a.y_test, a.s_test, a.balanced_test)
    _, pop_ratio, pop_acc = _rates(pred, a.y_test, a.s_test, np.arange(len(a.y_test)))
    return {"setup": setup, "seed": seed, "mode": mode, "pr_0": pr[0], "pr_1": pr[1], "pr_ratio": ratio,
            "accuracy": acc, "pop_pr_ratio": pop_ratio, "pop_accuracy": pop_acc,
            "covariance": m.covariance_, "loss_ratio": m.loss_ratio_, "n_iter": m.n_iter_,
            "fit_seconds": seconds}


def _seeds(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(t) for t in text.split(",")]


def summary(df: pd.DataFrame) -> str:
    g = df.groupby(["setup", "mode"])
    out = ["| set-up | mode | PR ratio | accuracy | PR_s0 / PR_s1 | ordinary test PR ratio | repeats | mean fit (s) |",
           "|---|---|---|---|---|---|---|---|"]
    for (setup, mode), d in g:
        out.append(f"| {setup} | {mode} | {d.pr_ratio.mean():.2f} ± {d.pr_ratio.std(ddof=1) if len(d) > 1 else 0:.2f} "
                   f"| {d.accuracy.mean():.3f} ± {d.accuracy.std(ddof=1) if len(d) > 1 else 0:.3f} | "
                   f"{(d.pr_0 / d.pr_1).mean():.2f} | {d.pop_pr_ratio.mean():.2f} | {len(d)} | "
                   f"{d.fit_seconds.mean():.1f} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--setups", default="adult-sex,adult-race")
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--modes", default="scaled,raw")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    bad = [m for m in args.modes.split(",") if m not in MODES]
    if bad:
        raise SystemExit(f"unknown mode {bad[0]!r}; known: {', '.join(MODES)}")
    with Recording("zafar_ethicml", vars(args)) as rec:
        print(rec.machine_line(), flush=True)
        rows = rec.results["fits"] = []
        rec.outputs.append(args.out)
        for setup in args.setups.split(","):
            for mode in args.modes.split(","):
                for seed in _seeds(args.seeds):
                    r = run_one(setup, seed, mode)
                    rows.append(r)
                    print(f"{setup} seed {seed} {mode}: PR ratio {r['pr_ratio']:.3f} acc {r['accuracy']:.3f} "
                          f"(PR_s0 {r['pr_0']:.3f}, PR_s1 {r['pr_1']:.3f}) {r['fit_seconds']:.1f} s", flush=True)
                    pd.DataFrame(rows).to_csv(args.out, index=False)
        rec.markdown = summary(pd.DataFrame(rows))
        print(rec.markdown)


if __name__ == "__main__":
    main()
