"""The long search for an exception a user can reach (issue 47, item 1): the suite's state machine
(``tests/app/test_state_machine.py``: uploads of generated tables, PR_t, random models and rules trained, every
page opened, runs chosen on Compare and switched on Export and Score new data) run for many more sequences and
steps, with a random search, in a pytest process of its own. Records how many sequences, steps and runs it
explored and whether it found a failure (pytest's report says which steps, shrunk).

    python -m benchmarks.bench_state_machine [--examples 30] [--steps 12]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import ROOT, Recording


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--examples", type=int, default=30, help="sequences to try")
    p.add_argument("--steps", type=int, default=12, help="steps a sequence at most")
    args = p.parse_args(argv)
    with Recording("bench_state_machine", options=vars(args), torch_device="cpu") as rec, \
            tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "steps.jsonl"
        env = dict(os.environ, FAIRDASH_STATE_EXAMPLES=str(args.examples), FAIRDASH_STATE_STEPS=str(args.steps),
                   FAIRDASH_STATE_LOG=str(log), FAIRDASH_DEVICE="cpu")
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "tests/app/test_state_machine.py"], cwd=ROOT, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        seqs = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        steps = sum(len([s for s in q["steps"] if not s.startswith("  ")]) for q in seqs)
        runs = sum(q["runs"] for q in seqs)
        rec.results = {"sequences": len(seqs), "steps": steps, "runs_trained": runs, "seconds": round(seconds, 1),
                       "passed": done.returncode == 0, "report_tail": done.stdout[-3000:]}
        rec.markdown = (f"{len(seqs)} sequences, {steps} steps, {runs} runs trained in {seconds:.0f} s: "
                        + ("no exception found" if done.returncode == 0 else "a failure found (see the record)")
                        + f". {rec.machine_line()}")
        print(rec.markdown)
        if done.returncode:
            print(done.stdout[-3000:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
