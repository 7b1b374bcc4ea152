"""Time one fit of each of the paper's baselines on a full training split and score it.

Usage (from the repository root):
    python -m benchmarks.bench_baselines                         # adult-sex, seed 0, all baselines
    python -m benchmarks.bench_baselines --setups adult-sex adult-race --out benchmarks/results/DATE-baselines.md
    python -m benchmarks.bench_baselines --skip svm              # the RBF SVM alone takes minutes
    python -m benchmarks.bench_baselines --svm-cache-study 12000 # SVM fit time vs libsvm cache size

Demographic-parity set-ups (adult-*) are scored on the balanced test set (accuracy, PR ratio min/max,
PR_s0/PR_s1); equality-of-opportunity set-ups (compas-*) on the ordinary test set (accuracy, TPR
ratio). Every model is fitted once, in this process, one after another; the machine's load is
recorded beside the times, because other work on the same cores inflates them.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from benchmarks.common import Recording
from fairdash.data import paper_arrays
from fairdash.models.registry import make_model
from fairdash.targeting.target_spec import make_target_spec

DP_MODELS = ("lr-ref", "svm", "kamiran", "agarwal", "zafar-fairness", "zafar-accuracy")
EO_MODELS = ("lr-ref", "agarwal", "zafar-eqopp")


def _lr():
    from sklearn.linear_model import LogisticRegression

    class _LR(LogisticRegression):
        def fit(self, X, y, s=None):
            return super().fit(X, y)

    return _LR(C=1.0, max_iter=1000)


def _build(name: str, criterion: str):
    if name == "lr-ref":
        return _lr()
    return make_model(name, make_target_spec(criterion), seed=0)


def _scores(pred, y, s) -> dict:
    groups = np.unique(s)
    pr = np.array([pred[s == g].mean() for g in groups])
    tpr = np.array([pred[(s == g) & (y == 1)].mean() for g in groups])
    return {
        "acc": float(np.mean(pred == y)),
        "pr_ratio": float(pr.min() / pr.max()) if pr.max() > 0 else float("nan"),
        "pr0_over_pr1": float(pr[0] / pr[1]) if pr[1] > 0 else float("nan"),
        "tpr_ratio": float(tpr.min() / tpr.max()) if tpr.max() > 0 else float("nan"),
        "pr": pr.round(3).tolist(),
        "tpr": tpr.round(3).tolist(),
    }


def _load() -> str:
    try:
        return "%.1f/%.1f/%.1f" % os.getloadavg()
    except OSError:
        return "n/a"


def run_setup(setup: str, models, seed: int = 0) -> list[dict]:
    a = paper_arrays(setup, seed=seed)
    criterion = "dp" if setup.startswith("adult") else "eo"
    if criterion == "dp":
        idx = a.balanced_test
    else:
        idx = np.arange(len(a.y_test))
    Xe, ye, se = a.X_test[idx], a.y_test[idx], a.s_test[idx]
    rows = []
    for name in models:
        model = _build(name, criterion)
        load_before = _load()
        t0 = time.perf_counter()
        model.fit(a.X_train, a.y_train, a.s_train)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        pred = np.asarray(model.predict(Xe)).astype(int)
        pred_s = time.perf_counter() - t0
        row = {"setup": setup, "model": name, "fit_s": fit_s, "predict_s": pred_s, "n_train": len(a.y_train),
               "n_features": a.X_train.shape[1], "n_eval": len(idx), "load": load_before, **_scores(pred, ye, se)}
        extra = []
        for attr in ("n_iter_", "n_oracle_calls_", "n_rounds_", "covariance_", "loss_ratio_", "fnr_covariance_",
                     "converged_"):
            if hasattr(model, attr):
                v = getattr(model, attr)
                v = np.asarray(v).ravel()[0] if np.ndim(v) else v
                extra.append(f"{attr.rstrip('_')}={v:.3g}" if isinstance(v, float) else f"{attr.rstrip('_')}={v}")
        if hasattr(model, "dual_coef_"):
            extra.append(f"n_sv={len(model.dual_coef_)}")
        row["notes"] = ", ".join(extra)
        rows.append(row)
        print(f"{setup:12s} {name:15s} fit {fit_s:8.1f}s  acc {row['acc']:.3f}  PR ratio {row['pr_ratio']:.3f}  "
              f"TPR ratio {row['tpr_ratio']:.3f}  load {load_before}  {row['notes']}", flush=True)
    return rows


def svm_cache_study(n: int, caches=(200, 2000), seed: int = 0) -> list[dict]:
    from sklearn.svm import SVC

    a = paper_arrays("adult-sex", seed=seed)
    idx = np.random.default_rng(seed).choice(len(a.y_train), size=min(n, len(a.y_train)), replace=False)
    X, y = a.X_train[idx], a.y_train[idx]
    out = []
    for cache in caches:
        load_before = _load()
        t0 = time.perf_counter()
        SVC(C=1.0, kernel="rbf", gamma="auto", cache_size=cache).fit(X, y)
        out.append({"n": len(y), "cache_mb": cache, "fit_s": time.perf_counter() - t0, "load": load_before})
        print(f"SVM on {len(y)} rows, cache {cache} MB: {out[-1]['fit_s']:.1f}s (load {load_before})", flush=True)
    return out


def to_markdown(rows, cache_rows) -> str:
    lines = ["| set-up | model | fit (s) | accuracy | PR ratio (min/max) | PR_s0/PR_s1 | TPR ratio | "
             "load 1/5/15 min | notes |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['setup']} | {r['model']} | {r['fit_s']:.1f} | {r['acc']:.3f} | {r['pr_ratio']:.3f} | "
                     f"{r['pr0_over_pr1']:.3f} | {r['tpr_ratio']:.3f} | {r['load']} | {r['notes']} |")
    if cache_rows:
        lines += ["", "| SVM rows | libsvm cache (MB) | fit (s) | load |", "|---|---|---|---|"]
        lines += [f"| {c['n']} | {c['cache_mb']} | {c['fit_s']:.1f} | {c['load']} |" for c in cache_rows]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--setups", nargs="+", default=["adult-sex"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip", nargs="*", default=[], help="model names to leave out, e.g. svm")
    ap.add_argument("--svm-cache-study", type=int, default=0, metavar="N",
                    help="also time SVC on N Adult rows with cache_size 200 and 2000 MB")
    ap.add_argument("--out", type=Path, default=None, help="write a markdown table here")
    args = ap.parse_args(argv)
    with Recording("bench_baselines", vars(args)) as rec:
        print(rec.machine_line(), flush=True)
        rows = []
        for setup in args.setups:
            models = DP_MODELS if setup.startswith("adult") else EO_MODELS
            rows += run_setup(setup, [m for m in models if m not in args.skip], seed=args.seed)
        cache_rows = svm_cache_study(args.svm_cache_study, seed=args.seed) if args.svm_cache_study else []
        md = to_markdown(rows, cache_rows)
        print(md)
        rec.results, rec.markdown = {"fits": rows, "svm_cache": cache_rows}, md
        if args.out:
            args.out.write_text(f"Machine: {rec.machine_line()}\n\n{md}")
            rec.outputs.append(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
