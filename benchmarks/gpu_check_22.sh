#!/usr/bin/env bash
# The CUDA checks of issue 22's second round (sparse float64 design, FitMemory), run by hand on a GPU
# machine with the device tool: WeightedLR's tests and the Kamiran/Agarwal tests with the device left on
# "auto" (so: CUDA), then bench_reductions.py at bound 0.01 on CUDA and on that machine's CPU.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gpu-check}; mkdir -p "$OUT"
WHL=${WHL:-.whl}
if [ -d "$WHL" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD
fi
{ nvidia-smi -L; nproc; python3 -c "import sys, torch, sklearn, numpy, fairlearn; print(sys.version.split()[0], 'torch', torch.__version__, 'sklearn', sklearn.__version__, 'numpy', numpy.__version__, 'fairlearn', fairlearn.__version__, 'cuda', torch.cuda.is_available())"; } 2>&1 | tee "$OUT/machine.txt"
python3 - <<'PY' 2>&1 | tee "$OUT/design.txt"
import torch
from fairdash.data import paper_arrays
from fairdash.models.core.weighted_lr import _Design
a = paper_arrays("adult-sex", seed=0)
d = _Design(X=a.X_train, dev=torch.device("cuda"))
print("Adult design on CUDA: sparse", d.sparse, d.X64.layout, d.X64.device)
PY
timeout "${TESTS_LIMIT:-240}" python3 -m pytest -p no:cacheprovider -q -rs -x --timeout 200 \
  tests/models/test_weighted_lr.py tests/models/test_agarwal_progress.py tests/models/test_baselines.py -k "weighted or agarwal or kamiran or memory or sparse or cuda or sklearn or fairlearn" \
  2>&1 | tee "$OUT/tests.log" | tail -n 30
timeout "${BENCH_LIMIT:-120}" python3 -m benchmarks.bench_reductions --bounds 0.01 --repeats 1 --kamiran-repeats 3 2>&1 | tee "$OUT/bench_cuda.txt" | tail -n 14
FAIRDASH_DEVICE=cpu timeout "${BENCH_LIMIT:-120}" python3 -m benchmarks.bench_reductions --bounds 0.01 --repeats 1 --kamiran-repeats 3 2>&1 | tee "$OUT/bench_cpu.txt" | tail -n 14
