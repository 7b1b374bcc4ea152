"""Speed and accuracy of FairLR / LR / FairGP / GP against scikit-learn, plus the fit cache.

    python -m benchmarks.bench_models [--repeats 5] [--gp-seeds 3] [--setups adult-sex,adult-race]
                                     [--skip-gp] [--device auto|cpu|cuda] [--out benchmarks/results/DATE-models.md]

What it measures (all in one run, so ratios compare like with like):
1. Fit time on the Adult training matrix (adult-sex, seed 0): scikit-learn ``LogisticRegression()``
   (lbfgs, C=1, its default tol) against ``LR()`` and ``FairLR()`` (defaults), interleaved,
   ``--repeats`` times; medians and ratios.
2. FairGP / GP on the paper's set-ups: fit time, balanced-test accuracy and PR ratio per seed.
3. The fit cache: time to answer a cached FairLR request from memory and from disk (fresh cache).
Records the machine (CPU count, load average, device) with the figures. No assertions.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.common import Recording, timed
from fairdash.data import paper_arrays
from fairdash.device import device_description, resolve_device
from fairdash.models.fair_gp import GP, FairGP
from fairdash.models.fair_lr import LR, FairLR
from fairdash.work.fit_cache import FitCache, model_cache_key


def balanced(model, a):
    b = a.balanced_test
    p = model.predict(a.X_test[b])
    s = a.s_test[b]
    rates = [p[s == g].mean() for g in np.unique(s)]
    return float((p == a.y_test[b]).mean()), float(min(rates) / max(rates))


def bench_lr(repeats: int, lines: list, device="auto", results=None):
    from sklearn.linear_model import LogisticRegression

    a = paper_arrays("adult-sex", seed=0)
    X, y, s = a.X_train, a.y_train, a.s_train
    from threadpoolctl import threadpool_limits

    times = {"sklearn": [], "sklearn 1 thread": [], "LR": [], "FairLR": []}
    iters = {}
    for r in range(repeats):
        t, m = timed(lambda: LogisticRegression().fit(X, y))
        times["sklearn"].append(t)
        iters["sklearn"] = int(m.n_iter_[0])
        with threadpool_limits(1):  # sklearn with one BLAS/OpenMP thread, like our fits' torch default
            t, m = timed(lambda: LogisticRegression().fit(X, y))
        times["sklearn 1 thread"].append(t)
        iters["sklearn 1 thread"] = int(m.n_iter_[0])
        t, m = timed(lambda: LR(device=device).fit(X, y, s))
        times["LR"].append(t)
        iters["LR"] = int(m.n_iter_[0])
        t, mf = timed(lambda: FairLR(device=device).fit(X, y, s))
        times["FairLR"].append(t)
        iters["FairLR"] = int(mf.n_iter_[0])
        print(f"  repeat {r}: " + ", ".join(f"{k} {v[-1]:.3f}s" for k, v in times.items()), flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    lines += [
        f"### Logistic regression fit on the Adult training matrix ({X.shape[0]} x {X.shape[1]}), {repeats} "
        "interleaved repeats",
        "",
        "| model | median fit (s) | min (s) | max (s) | iterations | ratio to sklearn (median) |",
        "|---|---|---|---|---|---|",
    ]
    for k in ("sklearn", "sklearn 1 thread", "LR", "FairLR"):
        lines.append(
            f"| {k} | {med[k]:.3f} | {min(times[k]):.3f} | {max(times[k]):.3f} | {iters[k]} | "
            f"{med[k] / med['sklearn']:.2f}x |"
        )
    per_repeat = [f / s for f, s in zip(times["FairLR"], times["sklearn"])]
    per_repeat1 = [f / s for f, s in zip(times["FairLR"], times["sklearn 1 thread"])]
    lines += ["", f"FairLR / sklearn per repeat: {', '.join(f'{r:.2f}' for r in per_repeat)}",
              f"FairLR / sklearn (1 thread) per repeat: {', '.join(f'{r:.2f}' for r in per_repeat1)}", ""]
    if results is not None:
        results["lr"] = {"shape": X.shape, "fit_s": times, "median_fit_s": med, "iterations": iters}
    return a, mf


def bench_cache(a, lines: list, device="auto", results=None):
    X, y, s = a.X_train, a.y_train, a.s_train
    with tempfile.TemporaryDirectory() as d:
        cache = FitCache(d)
        t_key, key = timed(lambda: model_cache_key(FairLR(), X, y, s))
        t_miss, (m, hit) = timed(lambda: cache.get_or_fit(key, FairLR, lambda m: m.fit(X, y, s)))
        assert not hit
        mem = []
        for _ in range(20):
            t, (m2, hit) = timed(lambda: cache.get_or_fit(key, FairLR, lambda m: m.fit(X, y, s)))
            assert hit
            mem.append(t)
        disk = []
        for _ in range(20):
            fresh = FitCache(d)
            t, (m3, hit) = timed(lambda: fresh.get_or_fit(key, FairLR, lambda m: m.fit(X, y, s)))
            assert hit
            disk.append(t)
        same = bool(np.array_equal(m3.predict_proba(a.X_test), m.predict_proba(a.X_test)))
        full = []
        for _ in range(5):
            fresh = FitCache(d)
            t, _ = timed(lambda: fresh.get_or_fit(model_cache_key(FairLR(), X, y, s), FairLR, lambda m: m.fit(X, y, s)))
            full.append(t)
        # read-only arrays: their digests are remembered, so the key costs microseconds after the first
        Xr, yr, sr = (np.array(v) for v in (X, y, s))
        for v in (Xr, yr, sr):
            v.setflags(write=False)
        model_cache_key(FairLR(), Xr, yr, sr)
        frozen = []
        for _ in range(20):
            fresh = FitCache(d)
            t, (m4, hit) = timed(
                lambda: fresh.get_or_fit(model_cache_key(FairLR(), Xr, yr, sr), FairLR, lambda m: m.fit(Xr, yr, sr))
            )
            assert hit
            frozen.append(t)
    # the whole request as the dashboard and the library make it: fit_model on a task, cached model
    from fairdash.data import paper_task
    from fairdash.work.experiments import fit_model

    task = paper_task("adult-sex")
    whole = {}
    with tempfile.TemporaryDirectory() as d:
        for name in ("fair-lr", "fair-gp"):
            fit_model(task, name, cache=FitCache(d), device=device)  # miss: trains and stores
            runs = []
            for _ in range(10):
                t, tm = timed(lambda: fit_model(task, name, cache=FitCache(d), device=device))
                runs.append(t)
            whole[name] = runs
    lines += [
        "### Fit cache (FairLR on Adult)",
        "",
        "| step | time |",
        "|---|---|",
        f"| first request (miss: fit + store) | {t_miss * 1000:.0f} ms |",
        f"| cache key of the request (hash of the 36k x 101 matrix + config) | {t_key * 1000:.1f} ms |",
        f"| hit from memory (median of 20) | {statistics.median(mem) * 1000:.3f} ms |",
        f"| hit from disk, fresh cache (median of 20) | {statistics.median(disk) * 1000:.2f} ms (max "
        f"{max(disk) * 1000:.2f}) |",
        f"| key + hit from disk, fresh cache (median of 5) | {statistics.median(full) * 1000:.1f} ms |",
        f"| key + hit from disk, fresh cache, read-only arrays (median of 20) | {statistics.median(frozen) * 1000:.2f} "
        f"ms (max {max(frozen) * 1000:.2f}) |",
        *[f"| whole cached request: `fit_model(task, {n!r})` again, fresh cache object, test-set metrics included "
          f"(median of 10) | {statistics.median(v) * 1000:.1f} ms (max {max(v) * 1000:.1f}) |"
          for n, v in whole.items()],
        "",
        f"Disk hit predicts identically to the fitted model: {same}.",
        "",
    ]
    if results is not None:
        results["cache"] = {"miss_s": t_miss, "key_s": t_key, "memory_hit_s": mem, "disk_hit_s": disk,
                            "key_and_disk_hit_s": full, "read_only_key_and_disk_hit_s": frozen,
                            "fit_model_cached_s": whole, "disk_hit_predicts_identically": same}


def bench_gp(setups, seeds: int, lines: list, device="auto", results=None):
    paper = {"adult-sex": {"GP": (0.54, 0.900), "FairGP": (0.87, 0.902)},
             "adult-race": {"GP": (0.80, 0.888), "FairGP": (0.86, 0.888)}}
    lines += [
        f"### GP and FairGP (defaults), balanced test set, PR_t avg, seeds 0..{seeds - 1}",
        "",
        "| set-up | model | seed | fit (s) | epochs | stopped by | accuracy | PR ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    summary = []
    for setup in setups:
        res = {"GP": [], "FairGP": []}
        for seed in range(seeds):
            a = paper_arrays(setup, seed=seed)
            for cls in (GP, FairGP):
                t, m = timed(lambda: cls(seed=seed, device=device).fit(a.X_train, a.y_train, a.s_train))
                acc, ratio = balanced(m, a)
                res[cls.__name__].append((t, acc, ratio))
                if results is not None:
                    results.setdefault("gp", []).append({"setup": setup, "model": cls.__name__, "seed": seed,
                                                         "fit_s": t, "epochs": m.n_epochs_,
                                                         "stopped_by": m.stop_reason_, "accuracy": acc,
                                                         "pr_ratio": ratio})
                lines.append(f"| {setup} | {cls.__name__} | {seed} | {t:.1f} | {m.n_epochs_} | {m.stop_reason_} | "
                             f"{acc:.4f} | {ratio:.3f} |")
                print(lines[-1], flush=True)
        for name, rows in res.items():
            r = np.array(rows)
            pr, pa = paper.get(setup, {}).get(name, (float("nan"), float("nan")))
            summary.append(
                f"| {setup} | {name} | {r[:, 0].mean():.1f} | {r[:, 1].mean():.4f} ± {r[:, 1].std():.4f} | "
                f"{r[:, 2].mean():.3f} ± {r[:, 2].std():.3f} | {pa:.3f} | {pr:.2f} |"
            )
    lines += ["", "| set-up | model | mean fit (s) | accuracy | PR ratio | paper accuracy | paper PR ratio |",
              "|---|---|---|---|---|---|---|", *summary, ""]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--gp-seeds", type=int, default=3)
    ap.add_argument("--setups", default="adult-sex,adult-race")
    ap.add_argument("--skip-gp", action="store_true")
    ap.add_argument("--skip-lr", action="store_true", help="skip the LR timing (the cache part still runs)")
    ap.add_argument("--device", default="auto", help="where LR/FairLR/GP/FairGP fit: auto (GPU if present), cpu, cuda")
    ap.add_argument("--out", default=None, help="write the markdown here (default: print only)")
    args = ap.parse_args(argv)

    with Recording("bench_models", vars(args), torch_device=args.device) as rec:
        lines = [f"Machine: {rec.machine_line()}; models fit on: {device_description(args.device)}", ""]
        if resolve_device(args.device).type == "cuda":  # CUDA context and kernels start outside the timings
            rng = np.random.default_rng(0)
            Xw, yw, sw = rng.normal(size=(200, 5)), rng.integers(0, 2, 200), rng.integers(0, 2, 200)
            FairLR(device=args.device).fit(Xw, yw, sw)
            FairGP(device=args.device, max_epochs=1, num_inducing=20).fit(Xw, yw, sw)
        if args.skip_lr:
            a = paper_arrays("adult-sex", seed=0)
        else:
            a, _ = bench_lr(args.repeats, lines, args.device, rec.results)
        bench_cache(a, lines, args.device, rec.results)
        if not args.skip_gp:
            bench_gp([s for s in args.setups.split(",") if s], args.gp_seeds, lines, args.device, rec.results)
        text = rec.markdown = "\n".join(lines)
        print(text)
        if args.out:
            Path(args.out).write_text(text + "\n")
            rec.outputs.append(args.out)


if __name__ == "__main__":
    main()
