"""The paper's RBF SVM on the features EthicML gave it (raw-unit numeric columns) against FairDash's
standardised ones (issue 15, the SVM race row).

    python -m benchmarks.svm_units --setup adult-race --seeds 0 --out benchmarks/results/DATE-svm-units.csv

EthicML's SVM was ``SVC(C=1, kernel="rbf", gamma="auto")`` fitted on EthicML's Adult features: age,
capital gain/loss, education-num and hours per week in their own units, one-hot columns as 0/1.
With ``gamma = 1/n_features`` the raw capital-gain column (dollars) dominates the kernel distance, so
the two feature sets give different models. ``units=raw`` undoes FairDash's scaling with
:func:`fairdash.models.zafar.raw_units`; ``units=scaled`` is what ``fairdash sweep`` fits. Metrics on
the balanced test set (the same split and rows as the sweep). One thread.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pandas as pd  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from benchmarks.common import Recording  # noqa: E402
from fairdash.data import paper_arrays  # noqa: E402
from fairdash.models.zafar import raw_units  # noqa: E402


def run_one(setup: str, seed: int, units: str) -> dict:
    a = paper_arrays(setup, seed)
    Xtr, Xte = a.X_train, a.X_test
    if units == "raw":
        scale, offset = raw_units(a.preprocessor, Xtr.shape[1])
        Xtr, Xte = offset + scale * Xtr, offset + scale * Xte
    t0 = time.perf_counter()
    svc = SVC(C=1.0, kernel="rbf", gamma="auto", cache_size=2000).fit(Xtr, a.y_train)
    seconds = time.perf_counter() - t0
    b = a.balanced_test
    pred, s, y = svc.predict(Xte[b]), a.s_test[b], a.y_test[b]
    pr = [float(pred[s == g].mean()) for g in (0, 1)]
    return {"setup": setup, "seed": seed, "units": units, "pr_0": pr[0], "pr_1": pr[1],
            "pr_ratio": min(pr) / max(pr), "accuracy": float((pred == y).mean()),
            "n_support": int(svc.n_support_.sum()), "fit_seconds": seconds}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--setup", default="adult-race")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--units", default="raw")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    with Recording("svm_units", vars(args)) as rec:
        print(rec.machine_line(), flush=True)
        rows = rec.results["fits"] = []
        rec.outputs.append(args.out)
        for seed in [int(t) for t in args.seeds.split(",")]:
            for units in args.units.split(","):
                r = run_one(args.setup, seed, units)
                rows.append(r)
                print(r, flush=True)
                pd.DataFrame(rows).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
