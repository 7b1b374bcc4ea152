"""Writes the golden numbers ``tests/test_numbers_unchanged.py`` compares against: one CLI sweep (COMPAS,
s = race, four models, two targets, two repeats) and the traces of its report's figures. Run by hand
from the repository root, with the code whose numbers are the reference:

    FAIRDASH_DEVICE=cpu python tests/golden_numbers.py tests/data

It was run on commit 0542f69 (before issue 21's rework) to record tests/data/golden_sweep.csv and
tests/data/golden_report_figures.json."""
from __future__ import annotations

import json
import sys
from pathlib import Path

SWEEP = ["sweep", "--data", "compas", "--s", "race", "--s1", "Caucasian", "--y", "two-year-recid", "--y1", "1",
         "--models", "fair-lr,lr,fair-gp,kamiran", "--pr-t", "0.3,0.5", "--repeats", "2", "--no-cache"]


def figure_traces(figures) -> list:
    """Each figure's title and its traces' names and x/y values (plain JSON)."""
    out = []
    for title, fig, _caption in figures:
        traces = []
        for tr in fig.data:
            def values(v):
                return None if v is None else [None if x is None else (float(x) if isinstance(x, (int, float)) else str(x))
                                               for x in list(v)]
            traces.append({"name": str(tr.name), "x": values(getattr(tr, "x", None)), "y": values(getattr(tr, "y", None))})
        out.append({"title": str(title), "traces": traces})
    return out


def run(out_dir: Path, main, build_module) -> tuple[Path, list]:
    """Run the sweep and the report with ``main`` (the CLI) recording ``build_module.make_figures``'s output."""
    csv = out_dir / "golden_sweep.csv"
    code = main([*SWEEP, "--out", str(csv)])
    assert code == 0, code
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
    return csv, figure_traces(recorded)


if __name__ == "__main__":
    out = Path(sys.argv[1])
    from fairdash.cli import main
    from fairdash.report import build

    _, traces = run(out, main, build)
    (out / "golden_report_figures.json").write_text(json.dumps(traces, indent=1, sort_keys=True) + "\n")
    (out / "report.html").unlink()
    print("wrote", out / "golden_sweep.csv", out / "golden_report_figures.json")
