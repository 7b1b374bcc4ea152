#!/usr/bin/env bash
# The CUDA checks of this round (issues 18 and 22), run by hand on a GPU machine with the device tool:
# the library's CUDA-sensitive tests with the device left on "auto" (so: CUDA), the new decision rules and
# the weighted logistic regression (Kamiran, Agarwal's inner learner) included; then FairLR with each decision
# rule and Agarwal at bound 0.01 on Adult sex, timed on CUDA and on that machine's CPU.
. "$(dirname "$0")/gpu_env.sh"  # $OUT, the wheels, the fit cache, machine.txt
timeout "${TESTS_LIMIT:-300}" python3 -m pytest -p no:cacheprovider -q -rs -x --timeout 280 \
  tests/models/test_cuda.py tests/models/test_weighted_lr.py tests/targeting/test_decision.py tests/models/test_fair_models.py tests/work/test_device_and_cache.py \
  2>&1 | tee "$OUT/tests.log" | tail -n 30
timeout "${BENCH_LIMIT:-150}" python3 - <<'PY' 2>&1 | tee "$OUT/timings.txt"
import time
from fairdash import data
from fairdash.experiments import fit_model
from fairdash.target_spec import make_target_spec
task = data.build_task(data.load_sample("adult"), data.TaskSpec("sex", "salary", ("Male",), (">50K",), drop=("fnlwgt",)))
for device in ("cuda", "cpu"):
    for rule in ("threshold", "overall-rate", "group-rates"):
        t0 = time.perf_counter()
        m = fit_model(task, "fair-lr", target=make_target_spec("dp", 0.30, decision=rule), seed=0, device=device)
        print(f"{device} fair-lr {rule}: {time.perf_counter() - t0:.2f} s (fit {m.fit_seconds:.2f} s on {m.device}); "
              f"population PR {m.metrics['pop_pr_0']:.3f} / {m.metrics['pop_pr_1']:.3f}, worst gap "
              f"{m.metrics['pop_worst_gap']:.3f} ({m.metrics['pop_worst_gap_group']}), accuracy {m.metrics['pop_accuracy']:.3f}")
    for name, opts in (("agarwal", {"difference_bound": 0.01}), ("kamiran", None)):
        t0 = time.perf_counter()
        m = fit_model(task, name, target=make_target_spec("dp", 0.30), seed=0, device=device, options=opts)
        print(f"{device} {name}: fit {m.fit_seconds:.2f} s on {m.device}; population PR ratio "
              f"{m.metrics['pop_pr_ratio']:.3f}, accuracy {m.metrics['pop_accuracy']:.3f}")
PY
