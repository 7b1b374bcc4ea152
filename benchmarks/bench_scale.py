"""Scale: time and peak memory of the rates path and of FairLR / FairGP fits at 10^4, 10^5, 10^6 rows.

    python -m benchmarks.bench_scale [--sizes 10000,100000,1000000] [--out benchmarks/results/DATE-scale.md]
                                     [--workdir DIR] [--keep] [--device cpu|cuda]

A synthetic table (Adult-like: 12 columns, numeric and categorical, one with 300 levels, a binary
sensitive attribute and a label that depends on it) is generated here for each size and written as
CSV to a temporary folder (never committed). Every measurement runs in a fresh Python process, so
its peak memory (``ru_maxrss``) is its own:

1. ``rates``: read the CSV (``read_table``) -> ``profile_columns`` -> ``build_task`` -> ``rates_readout``
   (the dashboard's path to the slider), each stage timed; peak RSS of the process.
2. ``prepare``: ``split_task`` + ``prepare_arrays`` (scaling + one-hot), saved as .npy for the fits.
3. ``fairlr-minibatch``: ``FairLR(optimizer="radam", batch_size=1024, max_iter=2)`` (2 epochs).
4. ``fairlr-lbfgs``: ``FairLR()`` defaults (full-batch L-BFGS, gradient accumulated over row chunks).
5. ``fairgp``: ``FairGP(num_inducing=200, max_epochs=2, max_seconds=None)`` (minibatches, 200 inducing
   points; never an n x n matrix).
For the fits the process first loads the prepared arrays; the table reports the fit's own time and
the peak RSS above what the process held just before ``fit`` (the arrays), beside the total.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import ROOT, Recording, dated

NOTES = "<!-- notes: written by hand, kept when the script rewrites the tables above -->"
STAGES = ("rates", "prepare", "fairlr-minibatch", "fairlr-lbfgs", "fairgp")


# --------------------------------------------------------------------------------------------------
# The synthetic table
# --------------------------------------------------------------------------------------------------
def make_table(n: int, seed: int = 0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], n, p=[0.33, 0.67])
    race = rng.choice(["White", "Black", "Asian", "Other"], n, p=[0.8, 0.1, 0.05, 0.05])
    age = rng.integers(17, 90, n)
    hours = np.clip(rng.normal(40, 12, n).round(), 1, 99).astype(int)
    edu_levels = np.array(["Preschool", "HS-grad", "Some-college", "Bachelors", "Masters", "Doctorate",
                           "Assoc-voc", "Assoc-acdm", "11th", "10th", "9th", "Prof-school"])
    edu = rng.integers(0, len(edu_levels), n)
    occ = rng.choice([f"occ-{i}" for i in range(14)], n)
    city = np.array([f"city-{i:03d}" for i in range(300)])[rng.zipf(1.3, n) % 300]
    capital = np.where(rng.random(n) < 0.1, rng.exponential(5000, n).round(), 0.0)
    score = rng.normal(0, 1, n)
    married = rng.choice(["yes", "no"], n)
    logit = (-2.2 + 0.9 * (sex == "Male") + 0.03 * (age - 40) + 0.04 * (hours - 40) + 0.25 * edu
             - 0.4 * (race == "Black") + 0.00005 * capital + 0.5 * score + 0.6 * (married == "yes"))
    y = rng.random(n) < 1 / (1 + np.exp(-logit))
    return pd.DataFrame({
        "age": age, "hours": hours, "education": edu_levels[edu], "occupation": occ, "city": city,
        "capital": capital, "score": score.round(4), "married": married, "race": race, "sex": sex,
        "id": np.arange(n), "income": np.where(y, ">50K", "<=50K"),
    })


SPEC = dict(s_column="sex", y_column="income", s1_values=("Male",), y1_values=(">50K",))


# --------------------------------------------------------------------------------------------------
# Measurements (each in its own process)
# --------------------------------------------------------------------------------------------------
def rss_now_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def measure(stage: str, csv: Path, work: Path, device: str = "cpu") -> dict:
    from fairdash import data
    from fairdash.analysis.rates import rates_readout

    out = {"stage": stage, "rss_after_imports_mb": rss_now_mb()}
    if stage == "rates":
        t = {}
        t0 = time.perf_counter()
        df = data.read_table(csv)
        t["read"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        data.profile_columns(df)
        t["profile"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        task = data.build_task(df, data.TaskSpec(**SPEC))
        t["build_task"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        r = rates_readout(task, target_rate=0.25)
        t["readout"] = time.perf_counter() - t0
        out.update(stages=t, seconds=sum(t.values()), rows=len(task.y), base_rates=r["base_rates"])
    elif stage == "prepare":
        task = data.build_task(data.read_table(csv), data.TaskSpec(**SPEC))
        data.prepare_arrays(task, data.split_task(task.y[:2000], task.s[:2000]))  # imports, outside the timing
        t0 = time.perf_counter()
        a = data.prepare_arrays(task, data.split_task(task, seed=0))
        out["seconds"] = time.perf_counter() - t0
        np.save(work / "X.npy", a.X_train)
        np.save(work / "y.npy", a.y_train)
        np.save(work / "s.npy", a.s_train)
        out["shape"] = list(a.X_train.shape)
    else:
        X, y, s = (np.load(work / f"{k}.npy") for k in ("X", "y", "s"))
        from fairdash.targeting.target_spec import make_target_spec  # lazy: as the models below, in the stage's process

        rate = make_target_spec(target_rate=0.25)
        if stage == "fairgp":
            from fairdash.models.fair_gp import FairGP

            model = FairGP(target=rate, num_inducing=200, max_epochs=2, max_seconds=None, device=device)
        else:
            from fairdash.models.fair_lr import FairLR

            model = (FairLR(target=rate, optimizer="radam", batch_size=1024, max_iter=2, device=device)
                     if stage == "fairlr-minibatch" else FairLR(target=rate, device=device))
        # a tiny fit first: imports and one-time initialisation are not what grows with the rows
        from sklearn.base import clone

        k = min(2000, len(y))
        clone(model).fit(X[:k], y[:k], s[:k])
        before = rss_now_mb()
        t0 = time.perf_counter()
        model.fit(X, y, s)
        out["seconds"] = time.perf_counter() - t0
        out["rss_before_fit_mb"] = before
        out["fit_peak_increase_mb"] = max(0.0, peak_mb() - before)
        out["epochs_or_iterations"] = int(np.ravel(getattr(model, "n_epochs_", getattr(model, "n_iter_", [0])))[0])
        out["matrix_mb"] = X.nbytes / 2**20
    out["peak_rss_mb"] = peak_mb()
    return out


def run_stage(stage: str, csv: Path, work: Path, timeout: int, device: str = "cpu") -> dict:
    proc = subprocess.run([sys.executable, "-m", "benchmarks.bench_scale", "--measure", stage, "--csv", str(csv),
                           "--workdir", str(work), "--device", device],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if proc.returncode != 0:
        return {"stage": stage, "error": (proc.stderr.strip().splitlines() or ["?"])[-1][:300]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------------------
def growth(sizes, values) -> str:
    """The exponent k in value ~ rows^k between each pair of neighbouring sizes (fixed costs weigh on
    the first pair, so the last one says most about big tables)."""
    pts = [(n, v) for n, v in zip(sizes, values) if v and v > 0]
    if len(pts) < 2:
        return "?"
    return " / ".join(f"{np.log(v1 / v0) / np.log(n1 / n0):.2f}" for (n0, v0), (n1, v1) in zip(pts, pts[1:]))


def report(sizes, results, mach: str, total: float) -> str:
    lines = ["# Scale: rates readout, FairLR and FairGP at 10^4 to 10^6 rows", "",
             "Made by `python -m benchmarks.bench_scale` (synthetic Adult-like table generated by the script; "
             "every figure from a fresh process).", "", f"Machine: {mach}.", "",
             f"Whole run: {total:.0f} s.", "",
             "| rows | step | time (s) | peak RSS of the process (MB) | memory above the arrays during fit (MB) | "
             "notes |",
             "|---:|---|---:|---:|---:|---|"]
    for n in sizes:
        for stage in STAGES:
            r = results[n].get(stage, {})
            if "error" in r:
                lines.append(f"| {n:,} | {stage} | - | - | - | failed: {r['error']} |")
                continue
            if not r:
                continue
            note = ""
            if stage == "rates":
                note = ", ".join(f"{k} {v:.2f} s" for k, v in r["stages"].items())
            elif stage == "prepare":
                note = f"training matrix {r['shape'][0]:,} x {r['shape'][1]}"
            else:
                note = (f"{r['epochs_or_iterations']} {'epochs' if stage != 'fairlr-lbfgs' else 'L-BFGS iterations'}, "
                        f"training matrix {r['matrix_mb']:.0f} MB (float64)")
            inc = f"{r['fit_peak_increase_mb']:.0f}" if "fit_peak_increase_mb" in r else ""
            lines.append(f"| {n:,} | {stage} | {r['seconds']:.2f} | {r['peak_rss_mb']:.0f} | {inc} | {note} |")
    pairs = " / ".join(f"{a:,} to {b:,}" for a, b in zip(sizes, sizes[1:]))
    lines += ["", f"How each grows: the exponent k in cost ~ rows^k, for {pairs} rows (1 = linear; "
              "peak RSS includes the interpreter and libraries, about 290 MB, or 450 MB with torch):", "",
              "| step | time k | peak RSS k | fit memory k |", "|---|---:|---:|---:|"]
    for stage in STAGES:
        t = [results[n].get(stage, {}).get("seconds") for n in sizes]
        m = [results[n].get(stage, {}).get("peak_rss_mb") for n in sizes]
        f = [results[n].get(stage, {}).get("fit_peak_increase_mb") for n in sizes]
        lines.append(f"| {stage} | {growth(sizes, t)} | {growth(sizes, m)} | {growth(sizes, f) if any(f) else ''} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000,1000000")
    p.add_argument("--stages", default=",".join(STAGES))
    p.add_argument("--out", default=str(dated("scale.md")), help="markdown (default benchmarks/results/DATE-scale.md)")
    p.add_argument("--device", default="cpu", help="where the fits run (cpu or cuda; default cpu)")
    p.add_argument("--workdir")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--timeout", type=int, default=1800)
    p.add_argument("--measure")
    p.add_argument("--csv")
    p.add_argument("--report-only", help="rewrite --out from a results .json of an earlier run")
    args = p.parse_args(argv)
    if args.report_only:
        saved = json.loads(Path(args.report_only).read_text())
        meta = saved.pop("_meta", {})
        results = {int(k): v for k, v in saved.items()}
        _write(Path(args.out), report(sorted(results), results, meta.get("machine", "?"), meta.get("seconds", 0)))
        return 0
    if args.measure:
        print(json.dumps(measure(args.measure, Path(args.csv), Path(args.workdir), args.device)))
        return 0
    with Recording("bench_scale", vars(args)) as rec:
        return run(args, rec)


def run(args, rec) -> int:
    sizes = [int(x) for x in args.sizes.split(",")]
    stages = [s for s in args.stages.split(",") if s]
    base = Path(args.workdir or tempfile.mkdtemp(prefix="fairdash-scale-"))
    t_all = time.perf_counter()
    mach = (f"{rec.machine_line()}; FAIRDASH_THREADS="
            f"{os.environ.get('FAIRDASH_THREADS', '(unset: 1 torch thread per fit)')}")
    results = rec.results
    try:
        for n in sizes:
            work = base / str(n)
            work.mkdir(parents=True, exist_ok=True)
            csv = work / "table.csv"
            if not csv.exists():
                t0 = time.perf_counter()
                make_table(n).to_csv(csv, index=False)
                print(f"{n:>9,} rows: table written ({csv.stat().st_size / 2**20:.0f} MB, "
                      f"{time.perf_counter() - t0:.1f} s)", file=sys.stderr)
            results[n] = {}
            for stage in stages:
                if stage.startswith("fair") and "prepare" not in results[n] and not (work / "X.npy").exists():
                    results[n]["prepare"] = run_stage("prepare", csv, work, args.timeout, args.device)
                r = run_stage(stage, csv, work, args.timeout, args.device)
                results[n][stage] = r
                print(f"{n:>9,} rows: {stage}: {r.get('seconds', float('nan')):.2f} s, peak "
                      f"{r.get('peak_rss_mb', float('nan')):.0f} MB {r.get('error', '')}", file=sys.stderr)
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(base, ignore_errors=True)
    seconds = time.perf_counter() - t_all
    text = _write(Path(args.out), report(sizes, results, mach, seconds))
    saved = {str(k): v for k, v in results.items()}
    saved["_meta"] = {"machine": mach, "seconds": seconds}
    Path(args.out).with_suffix(".json").write_text(json.dumps(saved, indent=1))
    rec.markdown = text
    rec.outputs += [args.out, str(Path(args.out).with_suffix(".json"))]
    print(text)
    return 0


def _write(out: Path, text: str) -> str:
    if out.exists() and NOTES in out.read_text():  # hand-written notes below the marker are kept
        text += "\n" + NOTES + out.read_text().split(NOTES, 1)[1]
    out.write_text(text)
    return text


if __name__ == "__main__":
    sys.exit(main())
