"""Fits that converge (issue 38): do FairDash's fits give the same numbers whatever the order of the sums?

1. LR and FairLR on Adult and COMPAS (seed 0's split), fitted on the training rows in the file's order and
   in ``--orders`` shuffled orders: the largest difference of a test row's probability from the file-order
   fit, the most test labels flipped, and the median fit time; with the solver before issue 38 (one
   unpreconditioned L-BFGS round on the float32 matrix to a gradient of 1e-4, as commit 851a3a1 fitted) and
   with the current one (``solver.solve_logistic``, ``tol=1e-9``).
2. WeightedLR (Kamiran & Calders' weights, and the same weights times 1,000, as the reductions' best
   responses can weigh) the same way, before (its last round also stopping on a change of the objective
   below 1e-12, ``tol=1e-7``) and now.
3. scikit-learn's ``LogisticRegression`` on the same Adult matrix (one thread, FairLR's budget), asked for
   the same answer: its fit time and its distance from the exact optimum (FairLR in float64 to ``tol=1e-12``)
   at ``tol`` 1e-4 (its default), 1e-8 (lbfgs) and newton-cholesky at 1e-8, beside FairLR's and LR's.
4. FairGP on COMPAS and Adult (default settings, whole training split): fit time in float32 and in float64
   (``device.training_dtype``), and the largest probability difference between this process and a child
   process whose kernels are held to AVX2 (``MKL_ENABLE_INSTRUCTIONS=AVX2 ATEN_CPU_CAPABILITY=avx2
   OPENBLAS_CORETYPE=Haswell``: the sums of a CPU of another vector width).

    python -m benchmarks.bench_convergence [--orders 5] [--skip-gp]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from .common import ROOT, Recording

AVX2 = {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "ATEN_CPU_CAPABILITY": "avx2", "OPENBLAS_CORETYPE": "Haswell"}


def _old_logistic_fit():
    """The 851a3a1 fit of FairLR and LR: ``lbfgs_logistic`` on the float32 matrix from zero, no
    preconditioner, to a gradient of 1e-4 (``FairLR._fit_lbfgs`` then)."""
    import torch

    from fairdash.models.core.solver import lbfgs_logistic, place_matrix

    def fit(self, X, w0, w1, dev, report):
        Xt = place_matrix(X, torch.float32, dev)
        return lbfgs_logistic(Xt, w0, w1, C=self.C, tol=1e-4, max_iter=1000, chunk_rows=self.batch_size,
                              report=report)
    return fit


class _Solver:
    """``with _Solver("before"):`` runs the fits of part 1 and 2 as before issue 38."""

    def __init__(self, which: str):
        self.which = which

    def __enter__(self):
        from fairdash.models.core import solver, weighted_lr
        from fairdash.models.fair_lr import _LogisticFit

        self.saved = (_LogisticFit._fit_lbfgs, weighted_lr.lbfgs_logistic)
        if self.which == "before":
            _LogisticFit._fit_lbfgs = _old_logistic_fit()

            def unsettled(*args, **kw):
                kw["settle"] = False
                return solver.lbfgs_logistic(*args, **kw)
            weighted_lr.lbfgs_logistic = unsettled
        return self

    def __exit__(self, *exc):
        from fairdash.models.core import weighted_lr
        from fairdash.models.fair_lr import _LogisticFit

        _LogisticFit._fit_lbfgs, weighted_lr.lbfgs_logistic = self.saved
        return False


def _spread(fit_one, n: int, orders: int) -> dict:
    """Fit on the file's order and ``orders`` shuffled orders: the largest probability difference from the
    file-order fit, the most labels flipped, the median fit time of the shuffled fits."""
    probas, times = [], []
    for k in range(orders + 1):
        perm = np.arange(n) if k == 0 else np.random.default_rng(k).permutation(n)
        t = time.perf_counter()
        probas.append(fit_one(perm))
        times.append(time.perf_counter() - t)
    P = np.array(probas)
    return {"max_proba_diff": float(np.abs(P - P[0]).max()),
            "max_label_flips": int(max(((p > 0.5) != (P[0] > 0.5)).sum() for p in P)),
            "median_fit_s": float(np.median(times[1:]))}


def part_logistic(orders: int) -> dict:
    from fairdash.data import paper_arrays
    from fairdash.models.core.weighted_lr import WeightedLR
    from fairdash.models.fair_lr import LR, FairLR
    from fairdash.targeting.target_spec import make_target_spec

    out = {}
    for setup in ("adult-sex", "compas-race"):
        a = paper_arrays(setup, seed=0)
        crit = "dp" if setup.startswith("adult") else "eo"
        s, y = a.s_train, a.y_train
        kamiran = np.empty(len(y))
        for g in np.unique(s):
            for v in (0, 1):
                m = (s == g) & (y == v)
                kamiran[m] = (s == g).mean() * (y == v).mean() / m.mean()
        models = {
            "LR": lambda: LR(device="cpu"),
            "FairLR": lambda: FairLR(target=make_target_spec(crit), device="cpu"),
            "FairLR PR_t 0.3": lambda: FairLR(target=make_target_spec(crit, 0.3), device="cpu"),
        }
        for which in ("before", "now"):
            with _Solver(which):
                for name, make in models.items():
                    def one(perm, make=make):
                        return make().fit(a.X_train[perm], y[perm], s[perm]).predict_proba(a.X_test)[:, 1]
                    out[f"{setup} | {name} | {which}"] = _spread(one, len(y), orders)
                for scale in (1.0, 1000.0):
                    def one(perm, scale=scale):
                        return WeightedLR(device="cpu", tol=1e-7 if which == "before" else 1e-9).fit(
                            a.X_train[perm], y[perm], sample_weight=kamiran[perm] * scale).predict_proba(a.X_test)[:, 1]
                    out[f"{setup} | WeightedLR, Kamiran weights x{scale:g} | {which}"] = _spread(one, len(y), orders)
            print(f"{setup} {which} done", flush=True)
    return out


def part_sklearn(repeats: int = 3) -> dict:
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    from fairdash.data import paper_arrays
    from fairdash.models.fair_lr import LR

    a = paper_arrays("adult-sex", seed=0)
    exact = LR(device="cpu", precision="double", tol=1e-12).fit(a.X_train, a.y_train).predict_proba(a.X_test)[:, 1]
    runs = {
        "FairDash LR (tol 1e-9, default)": lambda: LR(device="cpu"),
        "scikit-learn lbfgs tol 1e-4 (its default)": lambda: LogisticRegression(max_iter=10_000),
        "scikit-learn lbfgs tol 1e-8": lambda: LogisticRegression(max_iter=10_000, tol=1e-8),
        "scikit-learn newton-cholesky tol 1e-8": lambda: LogisticRegression(solver="newton-cholesky", tol=1e-8,
                                                                             max_iter=1000),
    }
    out = {}
    for name, make in runs.items():
        times = []
        for _ in range(repeats):
            with threadpool_limits(1), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                m = make().fit(a.X_train, a.y_train)
                times.append(time.perf_counter() - t)
        p = m.predict_proba(a.X_test)[:, 1]
        out[name] = {"median_fit_s": float(np.median(times)), "max_diff_from_exact": float(np.abs(p - exact).max()),
                     "labels_off_exact": int(((p > 0.5) != (exact > 0.5)).sum())}
    return out


def _gp_child(path: str, dtype: str) -> None:
    """In a child process: FairGP's test probabilities on COMPAS and Adult (PR_t 0.3), and fit times."""
    import torch

    from fairdash.data import paper_arrays
    from fairdash.models import fair_gp
    from fairdash.models.fair_gp import FairGP
    from fairdash.targeting.target_spec import make_target_spec

    fair_gp.training_dtype = lambda dev: torch.float32 if dtype == "float32" else torch.float64
    out, times = {}, {}
    for setup in ("compas-race", "adult-sex"):
        a = paper_arrays(setup, seed=0)
        t = time.perf_counter()
        m = FairGP(target=make_target_spec("dp", 0.3), device="cpu").fit(a.X_train, a.y_train, a.s_train)
        times[setup] = time.perf_counter() - t
        out[setup] = m.predict_proba(a.X_test)[:, 1]
    np.savez(path, **out)
    Path(path + ".json").write_text(json.dumps(times))


def part_gp() -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for dtype in ("float32", "float64"):
            got = {}
            for kernels, env in (("native", {}), ("avx2", AVX2)):
                path = str(Path(tmp) / f"{dtype}-{kernels}.npz")
                subprocess.run([sys.executable, "-m", "benchmarks.bench_convergence", "--gp-child", path, dtype],
                               cwd=ROOT, env={**os.environ, **env, "FAIRDASH_DEVICE": "cpu"}, check=True)
                got[kernels] = (np.load(path), json.loads(Path(path + ".json").read_text()))
            for setup in ("compas-race", "adult-sex"):
                pa, pb = got["native"][0][setup], got["avx2"][0][setup]
                out[f"{setup} | FairGP {dtype}"] = {
                    "fit_s": got["native"][1][setup], "fit_s_avx2": got["avx2"][1][setup],
                    "max_proba_diff_avx2": float(np.abs(pa - pb).max()),
                    "label_flips_avx2": int(((pa > 0.5) != (pb > 0.5)).sum())}
    return out


def markdown(results: dict, line: str) -> str:
    rows = [f"Machine: {line}", "", "| fit | solver | largest probability difference | most labels flipped | "
            "median fit (s) |", "|---|---|---|---|---|"]
    for key, r in results.get("orders", {}).items():
        setup, name, which = key.split(" | ")
        rows.append(f"| {setup} {name} | {which} | {r['max_proba_diff']:.2g} | {r['max_label_flips']} | "
                    f"{r['median_fit_s']:.3f} |")
    if "sklearn" in results:
        rows += ["", "| Adult, one thread | median fit (s) | largest distance from the exact optimum | labels off it |",
                 "|---|---|---|---|"]
        rows += [f"| {k} | {r['median_fit_s']:.3f} | {r['max_diff_from_exact']:.2g} | {r['labels_off_exact']} |"
                 for k, r in results["sklearn"].items()]
    if "gp" in results:
        rows += ["", "| FairGP, PR_t 0.3 | fit (s) | fit with AVX2 kernels (s) | largest probability difference "
                 "| labels flipped |", "|---|---|---|---|---|"]
        rows += [f"| {k.replace(' | ', ' ')} | {r['fit_s']:.1f} | {r['fit_s_avx2']:.1f} | "
                 f"{r['max_proba_diff_avx2']:.2g} | {r['label_flips_avx2']} |" for k, r in results["gp"].items()]
    return "\n".join(rows) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orders", type=int, default=5, help="shuffled orders per fit (default 5)")
    ap.add_argument("--skip-gp", action="store_true", help="leave out part 4 (FairGP, about 2 minutes)")
    ap.add_argument("--gp-child", nargs=2, metavar=("PATH", "DTYPE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.gp_child:
        _gp_child(*args.gp_child)
        return 0
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    with Recording("bench_convergence", options=vars(args), torch_device="cpu") as rec:
        os.environ.setdefault("FAIRDASH_DEVICE", "cpu")
        rec.results["orders"] = part_logistic(args.orders)
        rec.results["sklearn"] = part_sklearn()
        if not args.skip_gp:
            rec.results["gp"] = part_gp()
        rec.markdown = markdown(rec.results, rec.machine_line())
        print(rec.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
