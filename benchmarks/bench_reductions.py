"""Agarwal et al.'s reduction and Kamiran & Calders' reweighing: the old inner learner against the new.

Old: scikit-learn's ``LogisticRegression(C=1, max_iter=1000)`` (lbfgs, tol 1e-4), as ``_make_lr`` in
fairdash/models/baselines.py built it before issue 22; the benchmark builds it itself and swaps it in for the run. New:
``fairdash.models.core.weighted_lr.WeightedLR`` (FairDash's L-BFGS solver), what the models use now.

Data: Adult, s = sex, seed 0 split, the dashboard's preprocessing (``paper_arrays("adult-sex")``: no
``fnlwgt``, numeric columns scaled, categories one-hot). Scored on the population: the ordinary test set
(accuracy; PR ratio = min over max of the two groups' positive rates).

Old and new run interleaved in one process (old, new, old, new, ...), so a busy machine slows both
alike; the load average is recorded before and after every fit. Agarwal is fitted at each bound in
``--bounds`` (0.1 and 0.01 by default), Kamiran with its usual weights.

``--table1``: Table 1's Kamiran and Agarwal rows instead (``fairdash.work.experiments.run_experiment`` as
``fairdash sweep --paper adult-sex|adult-race`` runs them: demographic parity, the paper's bound 0.1,
seeds 0..repeats-1, scored on the balanced test set, no fit cache), with the inner learner(s) named by
``--inner``; one CSV per set-up and inner learner in ``--csv-dir`` and a before/after table.

Usage (from the repository root):
    python benchmarks/bench_reductions.py                       # 1 repeat of each Agarwal fit, 3 of Kamiran
    python benchmarks/bench_reductions.py --repeats 2 --kamiran-repeats 5 --out /tmp/reductions.md
    python benchmarks/bench_reductions.py --table1 --repeats 10 --inner old --csv-dir /tmp/t1
    python benchmarks/bench_reductions.py --table1 --repeats 10 --inner new --csv-dir /tmp/t1
    python benchmarks/bench_reductions.py --table1-summary --csv-dir /tmp/t1   # the before/after table
"""
from __future__ import annotations

import argparse
import contextlib
import os
import time
from pathlib import Path

import numpy as np

from benchmarks.common import Recording
from fairdash.data import paper_arrays
from fairdash.models.baselines import AgarwalReduction, KamiranReweighing
from fairdash.models.core import mixture
from fairdash.targeting.target_spec import make_target_spec


def _sklearn_lr(*, C: float, device=None):
    """The inner learner before issue 22 (``_make_lr`` in fairdash/models/baselines.py then; ``mixture.inner_lr``
    now)."""
    from sklearn.linear_model import LogisticRegression

    class SklearnLR(LogisticRegression):
        """scikit-learn's, plus the ``device_`` the models now read from their inner learner."""

        def fit(self, X, y, sample_weight=None):
            super().fit(X, y, sample_weight=sample_weight)
            self.device_ = "scikit-learn (host CPU)"
            return self

    return SklearnLR(C=C, max_iter=1000, random_state=0)


@contextlib.contextmanager
def inner_learner(which: str):
    """Run the models with the ``old`` (scikit-learn) or ``new`` (WeightedLR) inner learner."""
    if which == "new":
        yield
        return
    saved = mixture.inner_lr
    mixture.inner_lr = _sklearn_lr
    try:
        yield
    finally:
        mixture.inner_lr = saved


def _load() -> str:
    return "%.1f" % os.getloadavg()[0]


def _population(pred, y, s) -> tuple[float, float, list]:
    pr = np.array([pred[s == g].mean() for g in np.unique(s)])
    return float(pr.min() / pr.max()), float(np.mean(pred == y)), pr.round(3).tolist()


def fit_one(kind: str, which: str, a, bound=None) -> dict:
    fits = [0]

    def count(fraction, message=""):
        if "best-response fit" in message:
            fits[0] += 1

    if kind == "agarwal":
        model = AgarwalReduction(difference_bound=bound, random_state=0, progress=count)
    else:
        model = KamiranReweighing(random_state=0)
    load_before = _load()
    with inner_learner(which):
        t0, c0 = time.perf_counter(), time.process_time()
        model.fit(a.X_train, a.y_train, a.s_train)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    pred = model.predict(a.X_test)
    ratio, acc, pr = _population(pred, a.y_test, a.s_test)
    row = {"model": kind, "bound": bound, "inner": which, "seconds": seconds, "cpu": cpu, "pr_ratio": ratio,
           "accuracy": acc, "pr": pr, "load": f"{load_before} -> {_load()}", "pred": pred}
    if kind == "agarwal":
        row.update(fits=fits[0], iterations=model.last_iter_ + 1)
    return row


def warm_up(a) -> None:
    """One small fit with each inner learner first, so that neither timed fit pays for imports (torch's
    takes seconds) or first-call set-up."""
    idx = np.arange(0, len(a.y_train), 20)
    for which in ("old", "new"):
        with inner_learner(which):
            AgarwalReduction(max_iter=2).fit(a.X_train[idx], a.y_train[idx], a.s_train[idx])
            KamiranReweighing().fit(a.X_train[idx], a.y_train[idx], a.s_train[idx])


def run(bounds, repeats: int, kamiran_repeats: int) -> list[dict]:
    a = paper_arrays("adult-sex", seed=0)
    warm_up(a)
    rows = []
    for r in range(repeats):
        for bound in bounds:
            for which in ("old", "new") if r % 2 == 0 else ("new", "old"):
                row = fit_one("agarwal", which, a, bound)
                rows.append(row)
                print(_line(row), flush=True)
    for r in range(kamiran_repeats):
        for which in ("old", "new") if r % 2 == 0 else ("new", "old"):
            row = fit_one("kamiran", which, a)
            rows.append(row)
            print(_line(row), flush=True)
    return rows


def _line(row) -> str:
    extra = f", {row['fits']} fits, {row['iterations']} iterations" if "fits" in row else ""
    return (f"{row['model']} bound={row['bound']} {row['inner']}: {row['seconds']:.2f} s "
            f"(CPU {row['cpu']:.2f} s), PR ratio "
            f"{row['pr_ratio']:.3f} {row['pr']}, accuracy {row['accuracy']:.4f}{extra}, load {row['load']}")


def summary(rows) -> str:
    out = ["| model | bound | inner learner | fit time (s, each run) | median (s) | new / old | "
           "CPU time (s, each run) | new / old CPU | PR ratio (population) | accuracy (population) | "
           "best-response fits | load (1-min, before -> after) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    keys = []
    for r in rows:
        k = (r["model"], r["bound"])
        if k not in keys:
            keys.append(k)
    for model, bound in keys:
        med, cpu = {}, {}
        for which in ("old", "new"):
            sel = [r for r in rows if (r["model"], r["bound"], r["inner"]) == (model, bound, which)]
            med[which] = float(np.median([r["seconds"] for r in sel]))
            cpu[which] = float(np.median([r["cpu"] for r in sel]))
        for which in ("old", "new"):
            sel = [r for r in rows if (r["model"], r["bound"], r["inner"]) == (model, bound, which)]
            last = sel[-1]
            label = "scikit-learn LogisticRegression" if which == "old" else "WeightedLR"
            ratio = "" if which == "old" else f"**{med['new'] / med['old']:.3f}x**"
            cpu_ratio = "" if which == "old" else f"{cpu['new'] / cpu['old']:.3f}x"
            cpus = ", ".join(f"{r['cpu']:.2f}" for r in sel)
            fits = ", ".join(str(r.get("fits", "")) for r in sel) if model == "agarwal" else "1 each"
            times = ", ".join(f"{r['seconds']:.2f}" for r in sel)
            out.append(
                f"| {model} | {'' if bound is None else bound} | {label} | "
                f"{times} | {med[which]:.2f} | {ratio} | {cpus} | {cpu_ratio} | "
                f"{last['pr_ratio']:.3f} ({last['pr'][0]:.3f} / {last['pr'][1]:.3f}) | {last['accuracy']:.4f} | "
                f"{fits} | {'; '.join(r['load'] for r in sel)} |")
        old = [r for r in rows if (r["model"], r["bound"], r["inner"]) == (model, bound, "old")][-1]
        new = [r for r in rows if (r["model"], r["bound"], r["inner"]) == (model, bound, "new")][-1]
        out.append(f"| | | old and new predict alike on | {np.mean(old['pred'] == new['pred']):.4f} of the "
                   f"test rows | | | | | | | | |")
    return "\n".join(out)


TABLE1_SETUPS = ("adult-sex", "adult-race")
TABLE1_MODELS = ("kamiran", "agarwal")


def table1(repeats: int, inner: str, csv_dir: Path, setups=TABLE1_SETUPS) -> None:
    """Table 1's Kamiran and Agarwal rows on one inner learner, one CSV per set-up (as the sweep writes)."""
    from fairdash.data import paper_task
    from fairdash.work.experiments import ExperimentPlan, run_experiment

    csv_dir.mkdir(parents=True, exist_ok=True)
    for setup in setups:
        load_before, t0 = _load(), time.perf_counter()
        with inner_learner(inner):
            exp = run_experiment(ExperimentPlan(paper_task(setup), list(TABLE1_MODELS), seeds=range(repeats),
                                                target=make_target_spec("dp")))
        df = exp.results.assign(inner=inner, load=f"{load_before} -> {_load()}")
        out = csv_dir / f"{setup}-{inner}.csv"
        df.to_csv(out, index=False)
        print(f"{setup} {inner}: {time.perf_counter() - t0:.0f} s, load {load_before} -> {_load()}, {out}",
              flush=True)


def table1_summary(csv_dir: Path) -> str:
    """Before (old inner learner) and after (new), mean ± std over repeats, from ``table1``'s CSVs."""
    import pandas as pd

    from fairdash.evaluation.metrics import format_mean_std, summarize

    out = ["| model | attribute | inner learner | PR ratio | accuracy | repeats | mean fit (s) | load (1-min) |",
           "|---|---|---|---|---|---|---|---|"]
    diffs = []
    for setup in TABLE1_SETUPS:
        means = {}
        for inner in ("old", "new"):
            path = csv_dir / f"{setup}-{inner}.csv"
            if not path.exists():
                continue
            df = pd.read_csv(path)
            s = summarize(df, by=("model",), metrics=["pr_ratio", "accuracy", "fit_seconds"]).set_index("model")
            for m in TABLE1_MODELS:
                if m not in s.index:
                    continue
                r = s.loc[m]
                means[(m, inner)] = (r.pr_ratio_mean, r.accuracy_mean)
                label = "scikit-learn LogisticRegression" if inner == "old" else "WeightedLR"
                out.append(f"| {m} | {setup.split('-')[1]} | {label} | "
                           f"{format_mean_std(r.pr_ratio_mean, r.pr_ratio_std)} | "
                           f"{format_mean_std(r.accuracy_mean, r.accuracy_std)} | {int(r.repeats)} | "
                           f"{r.fit_seconds_mean:.2f} | {df['load'].iloc[0]} |")
        for m in TABLE1_MODELS:
            if (m, "old") in means and (m, "new") in means:
                (p0, a0), (p1, a1) = means[(m, "old")], means[(m, "new")]
                diffs.append(f"- {m}, {setup}: PR ratio {p1 - p0:+.4f}, accuracy {a1 - a0:+.4f} (new minus old)")
    return "\n".join(out + [""] + diffs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bounds", type=float, nargs="+", default=[0.1, 0.01])
    ap.add_argument("--repeats", type=int, default=1, help="Agarwal fits per bound and inner learner")
    ap.add_argument("--kamiran-repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, help="also write the markdown summary here")
    ap.add_argument("--table1", action="store_true", help="Table 1's Kamiran and Agarwal rows (--repeats seeds)")
    ap.add_argument("--table1-summary", action="store_true", help="the before/after table from --csv-dir")
    ap.add_argument("--inner", choices=["old", "new", "both"], default="both")
    ap.add_argument("--csv-dir", type=Path, default=Path(__file__).parent / "results" / "2026-11-26-table1-reductions",
                    help="Table 1 CSVs (default: the recorded ones, benchmarks/results/2026-11-26-table1-reductions)")
    args = ap.parse_args(argv)
    with Recording("bench_reductions", vars(args)) as rec:
        threads = os.environ.get("FAIRDASH_THREADS", "unset (1 torch thread)")
        machine = f"{rec.machine_line()}; FAIRDASH_THREADS={threads}"
        if args.table1:
            print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine}", flush=True)
            warm_up(paper_arrays("adult-sex", seed=0))
            for inner in ("old", "new") if args.inner == "both" else (args.inner,):
                table1(args.repeats, inner, args.csv_dir)
        if args.table1 or args.table1_summary:
            rec.markdown = table1_summary(args.csv_dir)
            print(rec.markdown)
            return 0
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        rows = run(args.bounds, args.repeats, args.kamiran_repeats)
        text = (f"Run {started}; {machine}; load average (1/5/15 min) at the end "
                f"{'%.1f/%.1f/%.1f' % os.getloadavg()}.\n\n{summary(rows)}\n")
        print()
        print(text)
        rec.results, rec.markdown = {"rows": rows}, text
        if args.out:
            args.out.write_text(text)
            rec.outputs.append(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
