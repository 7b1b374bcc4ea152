#!/usr/bin/env bash
# The CUDA checks, run by hand on a GPU machine (see benchmarks/README.md, "GPU"):
#   1. the model, export, experiment and CLI tests with the device left on "auto" (so: CUDA),
#      including the CUDA-only tests that skip elsewhere;
#   2. FairLR, LR, FairGP, GP on the paper's Adult set-ups, 10 repeats, on CUDA (the Table 1 rows);
#   3. bench_models.py with the models on CUDA, then on that machine's CPU, for the ratios.
# Writes everything under $OUT (default /tmp/gpu-check). Packages missing from the GPU image travel
# as wheels in .whl/ (ignored by git): fairlearn, plotly, openpyxl, et_xmlfile, pytest-timeout.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gpu-check}; mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
export FAIRDASH_CACHE_DIR=/tmp/fairdash-cache FAIRDASH_BENCH_RESULTS="$OUT"  # bench_models's JSON record lands beside its markdown
{ nvidia-smi -L; nproc; python3 -c "import sys, torch, gpytorch, sklearn, numpy; print(sys.version.split()[0], 'torch', torch.__version__, 'gpytorch', gpytorch.__version__, 'sklearn', sklearn.__version__, 'numpy', numpy.__version__, 'cuda', torch.cuda.is_available())"; } 2>&1 | tee "$OUT/machine.txt"
step() { local name=$1 limit=$2; shift 2; echo "== $name (limit ${limit}s)"; local t0=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1; local rc=$?; tail -n 25 "$OUT/$name.log"
  echo "== $name: exit $rc in $((SECONDS - t0)) s" | tee -a "$OUT/summary.txt"; }
step tests "${TESTS_LIMIT:-180}" python3 -m pytest -p no:cacheprovider -q -rs --junitxml="$OUT/tests.xml" \
  tests/work/test_device_and_cache.py tests/models/test_fair_models.py tests/models/test_likelihood.py tests/files/test_export.py \
  tests/work/test_experiments.py tests/cli/test_cli_models.py tests/models/test_cuda.py tests/targeting/test_targets.py tests/evaluation/test_metrics.py
[ -n "${ONLY_TESTS:-}" ] && { tar czf "$OUT/gpu-check.tgz" -C "$OUT" --exclude gpu-check.tgz .; exit; }
for setup in adult-sex adult-race; do
  step "sweep_$setup" "${SWEEP_LIMIT:-100}" python3 -m fairdash sweep --paper "$setup" --models fair-lr,lr,fair-gp,gp --repeats 10 --device cuda --no-cache --out "$OUT/sweep-$setup-cuda.csv"
done
step bench_cuda "${BENCH_LIMIT:-130}" python3 -m benchmarks.bench_models --device cuda --repeats 5 --gp-seeds 2 --out "$OUT/results_models_cuda.md"
step bench_cpu "${CPU_LIMIT:-70}" python3 -m benchmarks.bench_models --device cpu --repeats 5 --gp-seeds 1 --setups adult-sex --out "$OUT/results_models_cpu.md"
cat "$OUT/summary.txt"
# everything in one archive (the GPU tool brings back at most 8 files); the markdown stays beside it
tar czf /tmp/gpu-check.tgz -C "$OUT" . && find "$OUT" -type f ! -name '*.md' ! -name summary.txt -delete && mv /tmp/gpu-check.tgz "$OUT/"
