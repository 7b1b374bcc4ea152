#!/usr/bin/env bash
# The CUDA checks, one script for every round, run by hand on a lent GPU machine (benchmarks/README.md, "GPU").
# Sized for about 8 minutes on one GPU with the default limits (seconds): tests 180, sweep 100, same numbers 60,
# scale 150.
#
#   bash benchmarks/gpu_check.sh [--steps tests,sweep,same-numbers,scale] [--setup adult-sex] [--repeats 10]
#                                [--rows 1000000] [--tests "FILE ..."] [--out DIR] [--help]
#
# Steps (default all four, in this order):
#   tests         the CUDA-sensitive tests with the device left on "auto" (so: CUDA), the CUDA-only ones included
#   sweep         one Table 1 sweep on CUDA: FairLR, LR, FairGP, GP on --setup, --repeats seeds
#   same-numbers  LR, FairLR and FairGP on Adult sex fitted on CUDA and on this machine's CPU: the largest
#                 difference of a test probability and the labels that differ, beside SAME_NUMBERS_BOUND
#                 (which binds CPUs to each other), and the precision the GPs trained in on this GPU
#   scale         FairGP at --rows rows on CUDA (benchmarks.bench_scale --stages prepare,fairgp --device cuda)
# Limits: TESTS_LIMIT, SWEEP_LIMIT, SAME_LIMIT, SCALE_LIMIT (seconds) in the environment.
# Writes under --out (default $OUT, else /tmp/gpu-check): machine.txt, one log per step, summary.txt, and
# gpu-check.tgz with everything. Packages missing from the GPU image travel as wheels in .whl/ (ignored by git).
# Replaces the numbered gpu_check_18/21/22/37.sh (their results: benchmarks/results/*-gpu-h100-*.md).
set -u
usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
STEPS=tests,sweep,same-numbers,scale SETUP=adult-sex REPEATS=10 ROWS=1000000 OUT=${OUT:-/tmp/gpu-check}
TESTS="tests/models/test_cuda.py tests/work/test_device_and_cache.py tests/models/test_fair_models.py
  tests/models/test_weighted_lr.py tests/models/test_likelihood.py tests/targeting/test_decision.py
  tests/models/test_estimator_base.py tests/files/test_export.py tests/work/test_experiments.py"
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --steps) STEPS=$2; shift 2 ;;
    --setup) SETUP=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --rows) ROWS=$2; shift 2 ;;
    --tests) TESTS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "gpu_check.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
export PYTHONUNBUFFERED=1 FAIRDASH_CACHE_DIR=/tmp/fairdash-cache FAIRDASH_BENCH_RESULTS="$OUT"
mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD
fi
{ nvidia-smi -L; nproc; python3 -c "import sys, torch, sklearn, numpy; print(sys.version.split()[0], 'torch',
torch.__version__, 'sklearn', sklearn.__version__, 'numpy', numpy.__version__, 'cuda', torch.cuda.is_available())"
} 2>&1 | tee "$OUT/machine.txt"
step() { local name=$1 limit=$2; shift 2; echo "== $name (limit ${limit}s)"; local t0=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1; local rc=$?; tail -n 25 "$OUT/$name.log"
  echo "== $name: exit $rc in $((SECONDS - t0)) s" | tee -a "$OUT/summary.txt"; }
want() { case ",$STEPS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

# shellcheck disable=SC2086  # TESTS is a list of paths
want tests && step tests "${TESTS_LIMIT:-180}" python3 -m pytest -p no:cacheprovider -q -rs \
  --junitxml="$OUT/tests.xml" $TESTS
want sweep && step "sweep_$SETUP" "${SWEEP_LIMIT:-100}" python3 -m fairdash sweep --paper "$SETUP" \
  --models fair-lr,lr,fair-gp,gp --repeats "$REPEATS" --device cuda --no-cache --out "$OUT/sweep-$SETUP-cuda.csv"
want same-numbers && step same_numbers "${SAME_LIMIT:-60}" python3 - <<'PY'
import time

import numpy as np

from fairdash._version import SAME_NUMBERS_BOUND
from fairdash.data.samples import paper_arrays
from fairdash.device import training_dtype
from fairdash.models.fair_gp import GP, FairGP
from fairdash.models.fair_lr import LR, FairLR
from fairdash.targeting.target_spec import make_target_spec

a = paper_arrays("adult-sex", seed=0)
makers = {"LR": lambda d: LR(device=d), "FairLR": lambda d: FairLR(target=make_target_spec("dp", 0.3), device=d),
          "GP": lambda d: GP(num_inducing=100, max_epochs=3, device=d),
          "FairGP": lambda d: FairGP(target=make_target_spec("dp", 0.3), num_inducing=100, max_epochs=3, device=d)}
import torch

cap = torch.cuda.get_device_capability(0)
print(f"same numbers, Adult sex seed 0, CUDA against CPU (SAME_NUMBERS_BOUND {SAME_NUMBERS_BOUND:g}); compute "
      f"capability {cap[0]}.{cap[1]}: the GPs train in {training_dtype(torch.device('cuda:0'))} on this GPU")
for name, make in makers.items():
    p, t = {}, {}
    for d in ("cuda", "cpu"):
        t0 = time.perf_counter()
        p[d] = make(d).fit(a.X_train, a.y_train, a.s_train).predict_proba(a.X_test)[:, 1]
        t[d] = time.perf_counter() - t0
    diff = float(np.abs(p["cuda"] - p["cpu"]).max())
    flips = int(((p["cuda"] >= 0.5) != (p["cpu"] >= 0.5)).sum())
    print(f"{name}: max |p_cuda - p_cpu| {diff:.2e} ({'within' if diff <= SAME_NUMBERS_BOUND else 'beyond'} "
          f"the bound), labels differing {flips} of {len(p['cpu'])}; fit {t['cuda']:.2f} s CUDA, {t['cpu']:.2f} s CPU")
PY
want scale && step "scale_$ROWS" "${SCALE_LIMIT:-150}" python3 -m benchmarks.bench_scale --sizes "$ROWS" \
  --stages prepare,fairgp --device cuda --timeout "${SCALE_LIMIT:-150}" --out "$OUT/scale-$ROWS-cuda.md"
cat "$OUT/summary.txt" 2>/dev/null
# everything in one archive (the GPU tool brings back a few files); the markdown stays beside it
tar czf /tmp/gpu-check.tgz -C "$OUT" . && mv /tmp/gpu-check.tgz "$OUT/"
