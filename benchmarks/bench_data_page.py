"""How long the Data page and ``rates --json`` take on wide tables (issue 20, item 8).

Builds two synthetic tables of the shapes seen in the field (12,000 x 148, like a stop-and-frisk table,
and 171,000 x 143, like a health-claims table): numeric columns, one-hot 0/1 groups, text categories,
a text s (race) and a 0/1 y, with a few leaks (a noisy copy of y, a recoding of s, drop-first dummies
that give y away together) and proxies of s. Then times, on the server side (no browser):

* ``upload``: from the uploaded bytes to the guesses and the leak/proxy readout, the steps the Data page
  runs for a new upload: read, profile, guess s and y, default features, the candidate task and its
  split, the leak and proxy scores (and the joint check);
* ``drop every leak``: the task rebuilt without the leaks, split, and its leaks and proxies again;
* ``scores``: the proxy and leak scores alone (``task_leaks`` + ``task_proxies``);
* ``rates --json``: the command line in a fresh process, wall clock (imports included).

Run by hand, from the repository root::

    python -m benchmarks.bench_data_page            # both shapes, timings
    python -m benchmarks.bench_data_page --profile  # also the top of cProfile per step
    python -m benchmarks.bench_data_page --shapes 12000x148
    # before/after: an export of the older code (git archive <commit> fairdash | tar -x -C /tmp/old), run
    # from its folder so that its fairdash is the one imported (the benchmarks come from this checkout)
    (cd /tmp/old && PYTHONPATH=$OLDPWD python -m benchmarks.bench_data_page); python -m benchmarks.bench_data_page

Results: ``benchmarks/results/2026-11-26-data-page.md``.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd

from benchmarks.common import Recording
from fairdash import data
from fairdash.analysis import proxies
from fairdash.analysis.rates import training_rates


def synthetic_table(n: int, n_cols: int, seed: int = 0) -> pd.DataFrame:
    """``n`` rows, ``n_cols`` columns: race (s, 4 values), frisked (y, 0/1), and the rest a mix of
    numerics (40%), one-hot 0/1 groups of 4 (30%) and text categories (the rest), including
    ``frisk_check`` (y with 2% flipped: a leak of y), ``race_code`` (s recoded: a leak of s), ``disposition_*``
    (drop-first dummies of a three-valued text label that is y: together they give y away), and proxies
    of s (``precinct``, ``height``)."""
    rng = np.random.default_rng(seed)
    race = rng.choice(["Black", "White", "Hispanic", "Asian"], n, p=[0.5, 0.2, 0.25, 0.05])
    white = race == "White"
    z = rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(z - 0.5 + 0.6 * white)))).astype(int)
    cols: dict[str, object] = {"race": race, "frisked": y}
    cols["frisk_check"] = np.where(rng.random(n) < 0.02, 1 - y, y)
    cols["race_code"] = pd.factorize(race, sort=True)[0] + 1
    detail = np.where(y == 1, "arrest", rng.choice(["none", "warning"], n))  # y = (detail == arrest)
    cols["disposition_none"] = (detail == "none").astype(int)  # drop-first: disposition_arrest left out,
    cols["disposition_warning"] = (detail == "warning").astype(int)  # so no column alone gives y away
    cols["precinct"] = np.where(rng.random(n) < 0.6, np.where(white, "P" + rng.integers(1, 10, n).astype(str),
                                                                "P" + rng.integers(10, 40, n).astype(str)),
                                "P" + rng.integers(1, 40, n).astype(str))
    cols["height"] = np.round(170 + 5 * white + rng.normal(0, 8, n))
    cols["signal"] = np.round(z + rng.normal(0, 1, n), 3)
    left = n_cols - len(cols)
    n_num, n_hot = int(0.4 * left), int(0.3 * left) // 4
    for i in range(n_num):
        v = np.round(rng.normal(size=n), 3) if i % 3 else rng.integers(0, 90, n).astype(float)
        if i % 7 == 0:
            v = np.where(rng.random(n) < 0.05, np.nan, v)
        cols[f"num_{i}"] = v
    for i in range(n_hot):
        level = rng.integers(0, 4, n)
        for j in range(4):
            cols[f"hot{i}_{'abcd'[j]}"] = (level == j).astype(int)
    i = 0
    while len(cols) < n_cols:
        k = (2, 3, 5, 12, 30)[i % 5]
        cols[f"cat_{i}"] = np.array([f"v{j}" for j in range(k)])[rng.integers(0, k, n)]
        i += 1
    return pd.DataFrame(cols)


CPU: dict[str, float] = {}  # seconds of CPU per step, beside the wall-clock seconds


def timed(fn, prof: cProfile.Profile | None = None, name: str = ""):
    """``(fn(), wall seconds)``; the process's CPU seconds go to ``CPU[name]``. On a busy shared machine
    the wall clock counts the time spent waiting for a core; the CPU time is close to what an idle
    machine would take (every step here runs on one thread: BLAS is held to one in the joint check)."""
    t, c = time.perf_counter(), time.process_time()
    if prof is not None:
        prof.enable()
    out = fn()
    if prof is not None:
        prof.disable()
    CPU[name] = time.process_time() - c
    return out, time.perf_counter() - t


def upload_steps(raw: bytes, name: str, prof=None) -> tuple[dict, dict]:
    """The Data page's server work for a new upload, step by step: ``(seconds per step, state)``."""
    t: dict[str, float] = {}
    df, t["read"] = timed(lambda: data.read_table(raw, name), prof, "read")
    pr, t["profile"] = timed(lambda: data.profile_columns(df), prof, "profile")
    g, t["guess"] = timed(lambda: proxies.guess_roles(df, pr), prof, "guess")
    feats, t["default features"] = timed(lambda: data.default_features(df, pr, g.s_column, g.y_column), prof,
                                         "default features")
    spec = data.TaskSpec(g.s_column, g.y_column, g.s1_values, g.y1_values, y_threshold=g.y_threshold,
                         s_threshold=g.s_threshold, features=tuple(feats))
    task, t["build task"] = timed(lambda: data.build_task(df, spec), prof, "build task")
    split, t["split"] = timed(lambda: data.split_task(task, seed=0), prof, "split")
    _, t["training rates"] = timed(lambda: training_rates(task, split), prof, "training rates")
    (leaks, _), t["leaks + proxies"] = timed(lambda: leaks_and_proxies(df, task), prof, "leaks + proxies")
    return t, {"df": df, "spec": spec, "task": task, "leaks": leaks, "guess": g}


def leaks_and_proxies(df, task):
    """What the Data page computes for a task: one pass since issue 20 (with the joint check), two before."""
    if hasattr(proxies, "task_leaks_and_proxies"):
        return proxies.task_leaks_and_proxies(df, task)
    return proxies.task_leaks(df, task), proxies.task_proxies(task)


def drop_every_leak(state: dict, prof=None) -> dict:
    t: dict[str, float] = {}
    drop = {x["column"] for x in state["leaks"]}
    spec = data.TaskSpec(**{**state["spec"].__dict__, "features": tuple(c for c in state["spec"].features
                                                                        if c not in drop)})
    task, t["build task"] = timed(lambda: data.build_task(state["df"], spec), prof, "build task")
    split, t["split"] = timed(lambda: data.split_task(task, seed=0), prof, "split")
    _, t["training rates"] = timed(lambda: training_rates(task, split), prof, "training rates")
    _, t["leaks + proxies"] = timed(lambda: leaks_and_proxies(state["df"], task), prof, "leaks + proxies")
    return t


def cli_rates(path: str, state: dict) -> float:
    g = state["guess"]
    cmd = [sys.executable, "-m", "fairdash", "rates", "--data", path, "--s", g.s_column, "--y", g.y_column, "--json"]
    cmd += [a for v in g.s1_values for a in ("--s1", v)] + [a for v in g.y1_values for a in ("--y1", v)]
    import resource

    t, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(data.__file__))})
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU["cli"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return time.perf_counter() - t


def show(title: str, t: dict) -> dict:
    cpu = {k: CPU[k] for k in t}
    print(f"  {title}: {sum(t.values()):.2f} s wall, {sum(cpu.values()):.2f} s CPU  (CPU: "
          + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items()) + ")")
    return {"wall_s": t, "cpu_s": cpu}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="12000x148,171000x143")
    ap.add_argument("--profile", action="store_true", help="print cProfile's top functions per shape")
    ap.add_argument("--no-cli", action="store_true", help="skip the command-line timing")
    args = ap.parse_args(argv)
    import sklearn.linear_model  # noqa: F401 - a running server has it imported; the CLI timing includes imports
    import sklearn.model_selection  # noqa: F401

    with Recording("bench_data_page", vars(args)) as rec:
        print(f"fairdash from {os.path.dirname(data.__file__)}; {rec.machine_line()}")
        rec.results["fairdash_from"] = os.path.dirname(data.__file__)
        for shape in args.shapes.split(","):
            n, k = map(int, shape.split("x"))
            df = synthetic_table(n, k)
            buf = io.BytesIO()
            df.to_csv(buf, index=False)
            raw = buf.getvalue()
            print(f"{n:,} x {k} ({len(raw) / 1e6:.1f} MB CSV)")
            got = rec.results[shape] = {"csv_mb": round(len(raw) / 1e6, 2)}
            prof = cProfile.Profile() if args.profile else None
            t, state = upload_steps(raw, "table.csv", prof)
            got["upload to guesses"] = show("upload to guesses", t)
            print(f"    guessed s = {state['guess'].s_column}, y = {state['guess'].y_column}; leaks: "
                  + ", ".join(f"{x['column']} ({x['of']})" for x in state["leaks"]))
            got["leaks"] = [x["column"] for x in state["leaks"]]
            got["drop every leak"] = show("drop every leak", drop_every_leak(state, prof))
            if not args.no_cli:
                with tempfile.TemporaryDirectory() as tmp:
                    path = os.path.join(tmp, "table.csv")
                    with open(path, "wb") as f:
                        f.write(raw)
                    wall = cli_rates(path, state)
                    print(f"  rates --json (fresh process): {wall:.2f} s wall, {CPU['cli']:.2f} s CPU")
                    got["rates --json"] = {"wall_s": wall, "cpu_s": CPU["cli"]}
            if prof is not None:
                s = io.StringIO()
                pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(25)
                print(s.getvalue())
            got["load_after"] = os.getloadavg()
            print(f"  load average now: {os.getloadavg()}")


if __name__ == "__main__":
    main()
