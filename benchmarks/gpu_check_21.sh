#!/usr/bin/env bash
# The CUDA checks of issue 21's round (one TargetSpec through the models, scikit-learn's contract, the layout
# split: device, progress, fit_cache), run by hand on a GPU machine with the device tool: the library's
# CUDA-sensitive tests with the device left on "auto" (so: CUDA), then FairLR, FairGP, Agarwal (bound 0.01)
# and Kamiran on Adult sex, timed on CUDA and on that machine's CPU. No dashboard: the GPU image has no Streamlit.
. "$(dirname "$0")/gpu_env.sh"  # $OUT, the wheels, the fit cache, machine.txt
TESTS=(tests/models/test_cuda.py tests/models/test_weighted_lr.py tests/models/test_fair_models.py tests/work/test_device_and_cache.py tests/models/test_model_target.py)
timeout "${TESTS_LIMIT:-150}" python3 -m pytest -p no:cacheprovider -q -rs --timeout 140 "${TESTS[@]}" 2>&1 \
  | tee "$OUT/tests.log" | tail -n 25
timeout "${BENCH_LIMIT:-70}" python3 - <<'PY' 2>&1 | tee "$OUT/timings.txt"
import time
from fairdash import data
from fairdash.experiments import fit_model
from fairdash.target_spec import make_target_spec
task = data.paper_task("adult-sex")
for device in ("cuda", "cpu"):
    for name, opts in (("fair-lr", None), ("fair-gp", {"num_inducing": 100, "max_epochs": 3}), ("agarwal", {"difference_bound": 0.01}), ("kamiran", None)):
        t0 = time.perf_counter()
        try:
            m = fit_model(task, name, target=make_target_spec("dp", 0.30), seed=0, device=device, options=opts)
        except Exception as e:  # a wrong option name for this model: say so and go on
            print(f"{device} {name}: {type(e).__name__}: {e}")
            continue
        print(f"{device} {name}: {time.perf_counter() - t0:.2f} s (fit {m.fit_seconds:.2f} s on {m.device}); population "
              f"PR {m.metrics['pop_pr_0']:.3f} / {m.metrics['pop_pr_1']:.3f}, ratio {m.metrics['pop_pr_ratio']:.3f}, "
              f"accuracy {m.metrics['pop_accuracy']:.3f}")
PY
