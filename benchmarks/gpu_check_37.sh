#!/usr/bin/env bash
# The CUDA checks of issue 37's round (the estimator base: one validating fit, keyword-only __init__,
# random_state, the moment that validates), run by hand on a GPU machine with the device tool: the estimator
# tests and the model tests with the device left on "auto" (so: CUDA), then FairLR, FairGP, Agarwal
# (bound 0.01) and Kamiran on Adult sex at PR_t 0.30 through the library, on CUDA and on that machine's CPU.
# No dashboard: the GPU image has no Streamlit.
. "$(dirname "$0")/gpu_env.sh"  # $OUT, the wheels, the fit cache, machine.txt
TESTS=(tests/models/test_cuda.py tests/models/test_estimator_base.py tests/models/test_estimator_examples.py tests/models/test_weighted_lr.py
       tests/models/test_fair_models.py tests/models/test_model_target.py tests/models/test_old_model_params.py tests/targeting/test_decision.py
       tests/models/test_target_reduction.py)
timeout "${TESTS_LIMIT:-200}" python3 -m pytest -p no:cacheprovider -q -rs --timeout 150 "${TESTS[@]}" 2>&1 \
  | tee "$OUT/tests.log" | tail -n 25
timeout "${BENCH_LIMIT:-90}" python3 - <<'PY' 2>&1 | tee "$OUT/timings.txt"
import time
from fairdash.data.samples import paper_task
from fairdash.evaluation.metric_table import POP, column_of
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.experiments import fit_model
task = paper_task("adult-sex")
for device in ("cuda", "cpu"):
    for name, opts in (("fair-lr", None), ("fair-gp", None), ("agarwal", {"difference_bound": 0.01}), ("kamiran", None)):
        t0 = time.perf_counter()
        try:
            m = fit_model(task, name, target=make_target_spec("dp", 0.30), seed=0, device=device, options=opts)
        except Exception as e:  # say what failed and go on to the next model
            print(f"{device} {name}: {type(e).__name__}: {e}")
            continue
        pr = [m.metrics[column_of("pr", POP, g)] for g in (0, 1)]
        print(f"{device} {name}: {time.perf_counter() - t0:.2f} s (fit {m.fit_seconds:.2f} s on {m.device}); population "
              f"PR {pr[0]:.3f} / {pr[1]:.3f}, accuracy {m.metrics[column_of('accuracy', POP)]:.3f}")
PY
