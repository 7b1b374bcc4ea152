"""Writes the golden numbers ``tests/work/test_numbers_unchanged.py`` compares against: one CLI sweep (COMPAS,
s = race, four models, two targets, two repeats) and the traces of its report's figures. Run by hand
from the repository root, with the code whose numbers are the reference:

    FAIRDASH_DEVICE=cpu python tests/golden_numbers.py tests/data

Issue 47 (item 8) added the calibration errors' 95% intervals by hand (``bal_cal_error_<g>_lo``/``_hi`` and their
``pop_`` twins: from a run of the sweep, inserted where the run puts them; every other field of the record kept
byte for byte, and the run's own values of every other column equal to them; their bounds are smooth in the scores
but for bin edges, which the margin covers). Issue 45 added one column to the record by hand (``folded_levels``:
the charge description's levels the one-hot cap folds, from a run of the sweep; every other value unchanged,
checked equal). It was last run when issue 34 added
each group's row counts to the results (``n_<g>``, ``n_pos_<g>`` and their ``pop_`` twins; every other column's
value unchanged, checked to 1e-9), after issue 38's fits that converge changed the numbers (the record's machine:
Intel Xeon; ``tests/fixtures/golden/README.md``). ``run`` also measures how close any decision of the sweep came to
being decided the other way: the smallest distance of a score to its cut over every decision the sweep made
(``margin``). Where that is larger than ``SAME_NUMBERS_BOUND``, no decision can differ between machines, so every
rate, and every number made of rates, is compared exactly. The margin also counts how close any score came to an
edge of the calibration's bins (``evaluation.calibration.BINS``): then no row changes bins, and a calibration error
(made of scores) moves by at most the bound."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

SWEEP = ["sweep", "--data", "compas", "--s", "race", "--s1", "Caucasian", "--y", "two-year-recid", "--y1", "1",
         "--models", "fair-lr,lr,fair-gp,kamiran", "--pr-t", "0.3,0.5", "--repeats", "2", "--no-cache"]


def figure_traces(figures) -> list:
    """Each figure's title and its traces' names and x/y values (plain JSON)."""
    out = []
    for title, fig, _caption in figures:
        traces = []
        for tr in fig.data:
            def values(v):
                return None if v is None else [None if x is None else
                                               (float(x) if isinstance(x, (int, float)) else str(x))
                                               for x in list(v)]
            traces.append({"name": str(tr.name), "x": values(getattr(tr, "x", None)),
                           "y": values(getattr(tr, "y", None))})
        out.append({"title": str(title), "traces": traces})
    return out


def run(out_dir: Path, main, build_module) -> tuple[Path, list, float]:
    """Run the sweep and the report with ``main`` (the CLI) recording ``build_module.make_figures``'s output
    and the sweep's ``margin`` (see the module's notes)."""
    from fairdash.evaluation.calibration import BINS
    from fairdash.targeting.decision import FittedDecision, rule_info

    csv = out_dir / "golden_sweep.csv"
    margins = []
    decide = FittedDecision.decide

    def measuring(self, estimator, X, s=None):
        assert not rule_info(self.rule).aims_at_target, "the golden sweep decides by the paper's rule (1/2)"
        p = np.asarray(estimator.predict_proba(X))[:, 1]
        margins.append(float(np.abs(p - 0.5).min()))
        # the calibration's bins: a score as close to a bin's edge could fall in the next bin on another machine
        margins.append(float(np.abs(p * BINS - np.rint(p * BINS)).min() / BINS))
        return decide(self, estimator, X, s)

    FittedDecision.decide = measuring
    try:
        code = main([*SWEEP, "--out", str(csv)])
    finally:
        FittedDecision.decide = decide
    assert code == 0, code
    assert margins, "the sweep made no decision through FittedDecision.decide"
    recorded = []
    real = build_module.make_figures

    def recording(*args, **kwargs):
        figs = real(*args, **kwargs)
        recorded.extend(figs)
        return figs

    build_module.make_figures = recording
    try:
        code = main(["report", "--results", str(csv), "--out", str(out_dir / "report.html")])
    finally:
        build_module.make_figures = real
    assert code == 0, code
    return csv, figure_traces(recorded), min(margins)


if __name__ == "__main__":
    out = Path(sys.argv[1])
    from fairdash.cli import main
    from fairdash.report import build

    _, traces, margin = run(out, main, build)
    print("margin: the closest score to a cut was", margin)
    (out / "golden_report_figures.json").write_text(json.dumps(traces, indent=1, sort_keys=True) + "\n")
    (out / "report.html").unlink()
    (out / "golden_sweep.csv.json").unlink()  # the run's configuration: the command in SWEEP says it
    print("wrote", out / "golden_sweep.csv", out / "golden_report_figures.json")
