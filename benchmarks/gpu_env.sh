# Sourced by the GPU checks (gpu_check_*.sh) on a GPU machine of the device tool: $OUT for the results,
# the wheels the GPU image lacks (.whl/, carried with the working tree) on the path, a private fit cache,
# and the machine and versions written to $OUT/machine.txt.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gpu-check}; mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD
fi
export FAIRDASH_CACHE_DIR=/tmp/fairdash-cache
{ nvidia-smi -L; nproc; python3 -c "import sys, torch, gpytorch, sklearn, numpy, fairlearn; print(sys.version.split()[0], 'torch', torch.__version__, 'gpytorch', gpytorch.__version__, 'sklearn', sklearn.__version__, 'numpy', numpy.__version__, 'fairlearn', fairlearn.__version__, 'cuda', torch.cuda.is_available())"; } 2>&1 | tee "$OUT/machine.txt"
