"""The cost of the price of deciding without s (issue 34): a sweep's time with the price measured (each blind
fit's training rates and test decisions, the scores that use s fitted once per split, the best with-s rule at the
blind rule's rates, the paired interval) and without it (``run_experiment(price=False)``), on the same fits.

LR and the target reduction, each under ``threshold`` and ``group-rates``, at one PR_t, no fit cache, one process.
Within the run with the price, the time spent measuring who pays (issue 49: the people decided differently, the
features leaned on, the within-group figure; ``fairdash.evaluation.who_pays``) is counted on its own.

    python -m benchmarks.bench_price [--setup adult-sex] [--pr-t 0.30] [--repeats 3]
"""
from __future__ import annotations

import argparse
import os
import time

from .common import Recording


def _time(task, target, seeds, price: bool) -> tuple[float, object]:
    from fairdash.work.experiments import ExperimentPlan, run_experiment

    t0 = time.perf_counter()
    exp = run_experiment(ExperimentPlan(task, ["lr", "target-reduction"], [target.target_rate], seeds, target=target,
                                        decisions=["threshold", "group-rates"], price=price))
    return time.perf_counter() - t0, exp.results


class _Clock:
    """Counts the seconds spent in :func:`fairdash.evaluation.who_pays.measure.who_pays` while installed."""

    def __init__(self):
        self.seconds, self.calls = 0.0, 0

    def __enter__(self):
        from fairdash.evaluation import matched_price

        self._module, self._real = matched_price, matched_price.who_pays

        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return self._real(*a, **k)
            finally:
                self.seconds += time.perf_counter() - t0
                self.calls += 1

        matched_price.who_pays = timed
        return self

    def __exit__(self, *exc):
        self._module.who_pays = self._real


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--setup", default="adult-sex")
    p.add_argument("--pr-t", type=float, default=0.30)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    with Recording("bench_price", options=vars(args), torch_device="cpu") as rec:
        os.environ.setdefault("FAIRDASH_DEVICE", "cpu")
        from fairdash import data
        from fairdash.targeting.target_spec import make_target_spec

        task = data.paper_task(args.setup)
        target = make_target_spec("dp", args.pr_t)
        seeds = list(range(args.repeats))
        _time(task, target, seeds[:1], False)  # imports and first-fit costs out of the way
        without, _ = _time(task, target, seeds, False)
        with _Clock() as clock:
            with_price, res = _time(task, target, seeds, True)
        rec.results = {"setup": args.setup, "pr_t": args.pr_t, "repeats": args.repeats, "fits": int(len(res)),
                       "seconds_without_price": round(without, 2), "seconds_with_price": round(with_price, 2),
                       "added": round(with_price / without - 1, 3),
                       "price": [round(float(v), 5) for v in res.groupby("seed")["price_of_blindness"].first()],
                       "seconds_in_who_pays": round(clock.seconds, 3), "who_pays_calls": clock.calls,
                       "who_pays_share_of_sweep": round(clock.seconds / with_price, 4)}
        rec.markdown = (f"{args.setup} at PR_t {args.pr_t}, {args.repeats} repeats, {len(res)} fits: "
                        f"{without:.1f} s without the price, {with_price:.1f} s with it "
                        f"(+{100 * (with_price / without - 1):.0f}%), of which {clock.seconds:.2f} s measuring who "
                        f"pays ({clock.calls} splits, {100 * clock.seconds / with_price:.1f}% of the sweep). "
                        f"{rec.machine_line()}")
        print(rec.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
